"""The HTTP side of the server's one port: the page and its files, stored games as files,
the health checks a load balancer asks (``/healthz``: the event loop answers;
``/readyz``: it takes new players) and ``/metrics`` for Prometheus. Everything but ``/ws`` is
answered here, before any websocket handshake; ``/ws`` itself is refused (403) to a page of
another web origin than the server's own or ``Settings.allowed_origins``. Every answer carries
``SECURITY_HEADERS``: the page runs only its own scripts and styles and is never framed.
"""

from __future__ import annotations

import asyncio
import mimetypes
import time
from collections.abc import Awaitable, Callable, Iterable
from http import HTTPStatus
from pathlib import Path
from urllib.parse import urlsplit

from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from server import errors
from server import protocol as p
from server.engines.overload import LoadGauge
from server.metrics import CONTENT_TYPE as METRICS_TYPE
from server.reviews import history

SECURITY_HEADERS = (
    ("Content-Security-Policy",
     "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
     "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
     "frame-ancestors 'none'"),
    ("Referrer-Policy", "no-referrer"),
    ("X-Frame-Options", "DENY"),
    ("X-Content-Type-Options", "nosniff"),
)
"""Sent with every HTTP answer: scripts, styles and connections from the server itself only
(the pages have no inline script or style), never in a frame, no referrer to other sites."""


def static_files(root: Path) -> dict[str, tuple[bytes, str]]:
    """Every file under ``root`` by URL path, read once: nothing else can ever be served."""
    files: dict[str, tuple[bytes, str]] = {}
    if not root.is_dir():
        return files
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.name.startswith("."):
            kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
            if kind.startswith("text/") or kind in ("application/javascript", "image/svg+xml"):
                kind += "; charset=utf-8"
            files["/" + path.relative_to(root).as_posix()] = (path.read_bytes(), kind)
    if "/index.html" in files:
        files["/"] = files["/index.html"]
    if "/admin.html" in files:
        files["/admin"] = files["/admin.html"]
    if "/favicon.svg" in files:  # what browsers ask for when a page names no icon
        files["/favicon.ico"] = files["/favicon.svg"]
    return files


class HttpSide:
    """Answers plain HTTP requests for one server; the files are read once at start."""

    def __init__(self, static_dir: Path, replay: Callable[[str], Awaitable[p.GameReplay]],
                 gauge: LoadGauge, stopping: asyncio.Event,
                 allowed_origins: Iterable[str] = (),
                 metrics: Callable[[], bytes] = lambda: b"",
                 tournament_games: Callable[[str], Awaitable[str]] | None = None) -> None:
        self.files = static_files(static_dir)
        self.replay = replay
        self.gauge = gauge
        self.stopping = stopping
        self.allowed_origins = {origin.rstrip("/").lower() for origin in allowed_origins}
        self.metrics = metrics
        self.tournament_games = tournament_games

    async def respond(self, connection: ServerConnection, request: Request) -> Response | None:
        """Everything ``answer`` answers, with ``SECURITY_HEADERS``; None lets ``/ws``
        through to the websocket handshake."""
        answered = self.answer(connection, request)
        response = await answered if isinstance(answered, Awaitable) else answered
        if response is not None:
            for name, value in SECURITY_HEADERS:
                if name not in response.headers:
                    response.headers[name] = value
        return response

    def answer(
        self, connection: ServerConnection, request: Request
    ) -> Response | Awaitable[Response] | None:
        """Serve the page and its files, the exports of stored games (``/games/<id>.txt``,
        ``.ggf``), ``/healthz``, ``/readyz`` and ``/metrics``; let ``/ws`` through to the
        websocket handshake when its ``Origin`` (if any) is allowed."""
        path = request.path.split("?", 1)[0]
        if path == "/ws":
            origin = request.headers.get("Origin")
            if origin is None or self._allowed(origin, request.headers.get("Host")):
                return None
            return connection.respond(HTTPStatus.FORBIDDEN,
                                      "pages of other sites may not connect here\n")
        if path == "/metrics":
            body = self.metrics()
            return Response(HTTPStatus.OK.value, HTTPStatus.OK.phrase, Headers([
                ("Content-Type", METRICS_TYPE), ("Content-Length", str(len(body))),
                ("Cache-Control", "no-cache")]), body)
        if path == "/healthz":  # for a container's healthcheck: the event loop answers
            return connection.respond(HTTPStatus.OK, "ok\n")
        if path == "/readyz":  # for a load balancer: 503 while new players are shed
            if self.stopping.is_set():
                return connection.respond(HTTPStatus.SERVICE_UNAVAILABLE, "draining\n")
            busy = self.gauge.busy(time.monotonic())
            if busy is not None:
                return connection.respond(HTTPStatus.SERVICE_UNAVAILABLE, f"busy: {busy}\n")
            warming = self.gauge.warming
            return connection.respond(HTTPStatus.OK, "ready\n" if warming is None
                                      else f"ready ({warming})\n")
        if path.startswith("/games/"):
            return self._download(connection, path.removeprefix("/games/"))
        if path.startswith("/tournaments/") and path.endswith("/games.txt"):
            return self._tournament_download(
                connection, path.removeprefix("/tournaments/").removesuffix("/games.txt"))
        if path == "/admin/":  # the page's files are relative to /admin, not /admin/
            response = connection.respond(HTTPStatus.MOVED_PERMANENTLY, "Moved to /admin\n")
            response.headers["Location"] = "/admin"
            return response
        found = self.files.get(path)
        if found is None:
            return connection.respond(HTTPStatus.NOT_FOUND, "Not found\n")
        body, kind = found
        headers = Headers([
            ("Content-Type", kind),
            ("Content-Length", str(len(body))),
            ("Cache-Control", "no-cache"),
            ("X-Content-Type-Options", "nosniff"),
        ])
        return Response(HTTPStatus.OK.value, HTTPStatus.OK.phrase, headers, body)

    def _allowed(self, origin: str, host: str | None) -> bool:
        """The server's own origin (its host is the request's ``Host``, whatever the scheme:
        TLS may end at a proxy) or one of ``allowed_origins``."""
        if origin.rstrip("/").lower() in self.allowed_origins:
            return True
        netloc = urlsplit(origin).netloc.lower()
        return bool(netloc) and host is not None and netloc == host.strip().lower()

    async def _tournament_download(self, connection: ServerConnection,
                                   tournament_id: str) -> Response:
        """All of a tournament's finished games in one file (``HistoryDesk.tournament_games``)."""
        if self.tournament_games is None or not tournament_id or "/" in tournament_id:
            return connection.respond(HTTPStatus.NOT_FOUND, "Not found\n")
        try:
            text = await self.tournament_games(tournament_id)
        except errors.UnknownTournament as exc:
            return connection.respond(HTTPStatus.NOT_FOUND, f"{exc.message}\n")
        return _attachment(text, history.CONTENT_TYPES["txt"],
                           f"discus-{tournament_id}-games.txt")

    async def _download(self, connection: ServerConnection, name: str) -> Response:
        """A stored game as a file: ``<id>.txt`` (move text) or ``<id>.ggf`` (Othello)."""
        game_id, _, ext = name.rpartition(".")
        if not game_id or ext not in history.CONTENT_TYPES:
            return connection.respond(HTTPStatus.NOT_FOUND, "Not found\n")
        try:
            replayed = await self.replay(game_id)
        except errors.UnknownGameId as exc:
            return connection.respond(HTTPStatus.NOT_FOUND, f"{exc.message}\n")
        text = history.download(replayed, ext)
        if text is None:
            return connection.respond(HTTPStatus.NOT_FOUND,
                                      f"a {replayed.game} game has no .{ext} export\n")
        return _attachment(text, history.CONTENT_TYPES[ext], f"discus-{game_id}.{ext}")


def _attachment(text: str, content_type: str, filename: str) -> Response:
    """A text download the browser saves as ``filename``."""
    body = text.encode("utf-8")
    headers = Headers([
        ("Content-Type", content_type),
        ("Content-Length", str(len(body))),
        ("Content-Disposition", f'attachment; filename="{filename}"'),
        ("Cache-Control", "no-cache"),
        ("X-Content-Type-Options", "nosniff"),
    ])
    return Response(HTTPStatus.OK.value, HTTPStatus.OK.phrase, headers, body)
