"""The server's shape, held as tests: every client message has exactly one handler; no module
of ``server/`` imports itself back through others (type-only imports included); the packages
import each other only downwards, in the order ``PACKAGES`` declares; desks get ports, never
the app."""

from __future__ import annotations

import ast
import typing
from pathlib import Path

import pytest

from server import protocol as p
from server.app import running

SERVER = Path(__file__).resolve().parents[2] / "server"


def test_the_protocols_client_messages_are_exactly_the_union_the_server_parses() -> None:
    union = typing.get_args(typing.get_args(p.ClientMessage)[0])
    assert set(union) == set(p.CLIENT_MESSAGES)
    assert len(p.CLIENT_MESSAGES) == len(set(p.CLIENT_MESSAGES))


async def test_every_client_message_but_hello_has_exactly_one_handler() -> None:
    async with running() as server:
        table = server.app.gateway.handlers
    assert set(table) == set(p.CLIENT_MESSAGES) - {p.Hello}


def _modules() -> dict[str, Path]:
    named = {".".join(path.relative_to(SERVER.parent).with_suffix("").parts): path
             for path in SERVER.rglob("*.py")}
    return {name.removesuffix(".__init__"): path for name, path in named.items()}


def _imports(path: Path) -> set[str]:
    """Every ``server.*`` module ``path`` imports, wherever the import stands (under
    ``if TYPE_CHECKING:`` or inside a function too). ``from server import errors`` imports
    the module ``server.errors``; ``from server.storage.store import Store`` the module
    ``server.storage.store``."""
    modules = _modules()
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("server"))
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(
                "server"):
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                found.add(sub if sub in modules else node.module)
    return found


def _module_graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: {m for m in _imports(path) if m in modules and m != name}
            for name, path in modules.items()}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)) is not None:
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)) is not None:
            return found
    return None


def test_no_module_of_the_server_imports_itself_back() -> None:
    graph = {name: deps - {"server"} for name, deps in _module_graph().items()
             if name != "server"}
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


PACKAGES = ["protocol", "connections", "storage", "engines", "play", "chat", "reviews",
            "people", "bots", "admin", "challenges", "ladder", "ratings", "tournaments",
            "cluster", "web"]
"""The server's packages, lowest first: a module of one may import modules of the packages
before it, never after. ``protocol`` is every message; ``connections`` who is on the line and
the outbox every desk writes through; ``storage`` every table and cache; ``engines`` the AI
pool; ``play`` rooms and their runner; then the domains built on play; ``cluster`` wires
several nodes (it places rooms and tournaments, so it stands above them); ``web`` is the edge."""

SHELL = {"server", "server.app", "server.parts", "server.serve", "server.cli", "server.routes"}
"""The composition root, the parts it builds and its entry points: they wire every package, and
none imports them."""

BASE = {"server.errors", "server.settings", "server.metrics", "server.gc_policy",
        "server.turns"}
"""Modules at the top of ``server/`` that every package may import; they import only pure
modules (``Settings`` gathers the pure rules' published limits)."""


def _pure(graph: dict[str, set[str]]) -> set[str]:
    """Pure modules import nothing of the server but errors and the protocol: rules (clocks,
    Glicko-2, limits, tournament pairings) any package may use without depending on another
    package's state, and without any chance of a circle."""
    return {name for name, deps in graph.items()
            if all(dep in {"server", "server.errors"} or _package(dep) == "protocol"
                   for dep in deps)}


def _package(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and parts[1] in PACKAGES) else None


def _out_of_order(graph: dict[str, set[str]]) -> list[str]:
    pure = _pure(graph)
    found = []
    for name, deps in sorted(graph.items()):
        mine = _package(name)
        for dep in sorted(deps - {"server"}):
            theirs = _package(dep)
            if dep in SHELL:
                if name not in SHELL:
                    found.append(f"{name} -> {dep} (the shell)")
            elif name in BASE:
                if dep not in pure:
                    found.append(f"{name} -> {dep} (a base module imports only pure ones)")
            elif mine is None or dep in pure or dep in BASE or theirs == mine:
                continue
            elif theirs is None or PACKAGES.index(theirs) > PACKAGES.index(mine):
                found.append(f"{name} -> {dep}")
    return found


def test_every_package_of_the_server_is_declared_in_order() -> None:
    on_disk = {path.parent.name for path in SERVER.glob("*/__init__.py")}
    assert on_disk == set(PACKAGES)
    top = {path.stem for path in SERVER.glob("*.py")}
    assert {f"server.{name}" for name in top} | {"server"} == SHELL | BASE | {"server.__init__"}


def test_the_packages_import_only_downwards() -> None:
    assert _out_of_order(_module_graph()) == []


def test_the_order_check_finds_an_upward_import() -> None:
    graph = {"server.play.rooms": {"server.tournaments.desk"}, "server.tournaments.desk": {
        "server.play.rooms", "server.storage.sql"}, "server.storage.sql": set(),
        "server.settings": {"server.play.rooms"}, "server.play.clocks": {"server.protocol"},
        "server.chat.desk": {"server.play.clocks", "server.app"}}
    assert _out_of_order(graph) == [
        "server.chat.desk -> server.app (the shell)",
        "server.play.rooms -> server.tournaments.desk",
        "server.settings -> server.play.rooms (a base module imports only pure ones)"]


DESKS = {"admin.desk", "bots.desk", "challenges.desk", "reviews.history_desk", "people.accounts",
         "ratings.desk", "reviews.desk", "admin.stats", "tournaments.desk", "ladder.desk",
         "chat.desk"}


@pytest.mark.parametrize("desk", sorted(DESKS))
def test_no_desk_imports_the_app_or_another_desk(desk: str) -> None:
    imported = {m.removeprefix("server.") for m in
                _imports(SERVER.joinpath(*desk.split(".")).with_suffix(".py"))}
    assert not imported & ({"app", "routes", "play.runner", "web.gateway", "cluster.node"}
                           | (DESKS - {desk}))


def _sizes() -> tuple[dict[str, int], dict[str, int]]:
    modules, classes = {}, {}
    for path in SERVER.rglob("*.py"):
        text = path.read_text()
        name = str(path.relative_to(SERVER.parent))
        modules[name] = text.count("\n")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef) and node.end_lineno is not None:
                classes[f"{name}:{node.name}"] = node.end_lineno - node.lineno + 1
    return modules, classes


def test_no_module_is_over_800_lines_and_no_class_over_400() -> None:
    """A file past what one person reads at once is a concept still missing."""
    modules, classes = _sizes()
    assert {name: n for name, n in modules.items() if n > 800} == {}
    assert {name: n for name, n in classes.items() if n > 400} == {}
    assert modules["server/app.py"] <= 250


def test_the_top_of_the_server_stays_small_and_the_page_in_modules() -> None:
    assert len(list(SERVER.glob("*.py"))) <= 12
    scripts = {path.name: path.read_text().count("\n")
               for path in (SERVER / "web" / "static").glob("*.js")}
    assert {name: n for name, n in scripts.items() if n > 600} == {}
