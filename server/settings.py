"""The server's knobs and published limits, named in one place (``Settings``).

Every part of the server is handed the one ``Settings`` the composition root (``server.app``)
was given; tests make their own with quicker clocks or tighter limits.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ai.review import ANALYSIS_SOLVE_SECONDS
from server import protocol as p
from server.bots.limits import (
    DEFAULT_BOT_LIMITS,
    DEFAULT_REGISTRATION_LIMITS,
    BotLimits,
    RegistrationLimits,
)
from server.people.sign_in_limits import DEFAULT_SIGN_IN_LIMITS, SignInLimits
from server.play.clocks import FIRST_MOVE_SECONDS, TIME_CONTROLS, TimeControl
from server.web.sources import DEFAULT_SOURCE_LIMITS, SourceLimits

STATIC_DIR = Path(__file__).resolve().parent / "web" / "static"

RECONNECT_REASON = "this server is stopping; reconnect"
"""The reason of the 1012 (service restart) close a cluster node sends its clients when it
stops: another node runs their rooms, and the page and the reference bot reconnect at once."""

MIN_AI_MOVE_SECONDS = 0.45
"""``discus serve``'s ``Settings.min_ai_move_seconds``: a little longer than the page's
drop and flip animations."""

SHUTDOWN_SECONDS = 10.0
"""How long shutdown waits for AI moves and room sweeps already under way to be stored."""

FLAG_MARGIN_SECONDS = 0.005
"""A flag timer wakes this long after the clock's deadline, so the check finds it run out."""


@dataclass(frozen=True)
class AnalysisLimits:
    """How much engine time reviews and analyses may hold (``Settings.analyses``, kept by
    ``server.reviews.desk``). Each costs engine time and a page trying moves needs only its latest
    answer, so past these a request is refused at once. Those let in wait for an engine lane,
    served fairly across addresses (``server.reviews.fair_share``)."""

    per_player: int = 1
    """Analyses (and, apart, reviews) one player may have in flight (``rate_limited``,
    ``detail.limit`` ``analyses_per_player``)."""
    per_source: int = 2
    """Reviews and analyses in flight from one address (``rate_limited``,
    ``analyses_per_source``)."""
    at_once: int = 4
    """Reviews and analyses in flight on this server: the share of engine time they may
    ever ask for (``busy``, ``analyses``); a live game's move always goes first besides."""
    lanes: int = 2
    """Reviews and analyses computed at once (on idle AI workers, the rest in this node's own
    low-priority processes); one address holds at most half of them, so another's request
    starts at once."""


DEFAULT_ANALYSIS_LIMITS = AnalysisLimits()


@dataclass(frozen=True)
class IdleProving:
    """Idle AI workers proving the positions people reach (``server.engines.idle_proving``):
    ``Settings.idle_proving``. Off by default (tests turn it on where they test it);
    ``discus serve`` turns it on unless ``--no-idle-proving``."""

    enabled: bool = False
    pause_seconds: float = 30.0
    """Seconds between two rounds (each counts the games that ended since the last, then
    proves at most ``batch`` positions while the pool stays idle)."""
    games: int = 1000
    """The last stored games of each game to end whose positions are counted."""
    batch: int = 40
    """Positions handed to a worker in one background task, most visited first."""
    seconds: float = 60.0
    """Most one position's first proof may take; a position past it is tried again later with
    a larger budget (``server.engines.idle_proving.ProvingPlan``), a few times at most. Longer than
    a review's (``ai.review.C4_SOLVE_SECONDS``): the idle workers are there to prove what a
    review gives up on."""


@dataclass(frozen=True)
class Settings:
    """Published limits (``welcome.limits``) and server knobs, named in one place."""

    max_message_bytes: int = 4096
    messages_per_second: float = 20.0
    burst: int = 40
    flood_strikes: int = 20
    """Refused (rate-limited) messages allowed within ``flood_window_seconds``; one more
    closes the connection with 1008. Accepted messages in between do not forgive them, so a
    client that keeps sending faster than the rate is closed, not throttled forever."""
    flood_window_seconds: float = 10.0
    hello_seconds: float = 20.0
    """A connection that has not said hello this long after opening gets ``hello_required``
    and is closed with 1008."""
    grace_seconds: float = 60.0
    max_rooms: int = 10
    sweep_seconds: float = 5.0
    """How often rooms everyone left are closed."""
    max_buffered_bytes: int = 1 << 20
    """A client that reads nothing while this much waits for it is disconnected."""
    thinking_interval: float = 0.1
    """At most one ``ai_thinking`` per room in this many seconds (fast levels finish many
    iterations in a millisecond; people need only see that the AI is working)."""
    max_challenges: int = 10
    """Challenges one player may have waiting for an answer."""
    bots: BotLimits = DEFAULT_BOT_LIMITS
    """The limits of bot accounts (``welcome.limits.bot`` on a bot's connection)."""
    bot_registration: bool = False
    """Whether a connection may make a bot account for itself with ``register_bot``
    (``discus serve --bot-registration``). Off, bot accounts come from admins only."""
    bot_registration_limits: RegistrationLimits = DEFAULT_REGISTRATION_LIMITS
    """Bounds on ``register_bot`` (``welcome.limits.bot_registration`` while it is on)."""
    sign_in: SignInLimits = DEFAULT_SIGN_IN_LIMITS
    """Password guesses, sign-ups, admin logins and hashes allowed
    (``server.people.sign_in_limits``)."""
    max_connections: int = 20_000
    """Open websocket connections past which new ones are shed (``server.engines.overload``)."""
    shed_lag_seconds: float = 0.5
    """New connections are shed for 2 s after the event loop runs this late."""
    min_ai_move_seconds: float = 0.0
    """The AI's move is shown no sooner than this after the person's (``discus serve``:
    ``MIN_AI_MOVE_SECONDS``): a quick level answers in milliseconds, and a reply landing in
    the same frame as one's own move is not seen to happen."""
    analysis_seconds: float = ANALYSIS_SOLVE_SECONDS
    """Most the analysis board spends proving one Connect Four move (on a low-priority
    worker); a move past it is shown without a value."""
    analyses: AnalysisLimits = DEFAULT_ANALYSIS_LIMITS
    """Reviews and analyses in flight per player, per address and in all
    (``server.reviews.desk.AnalysisLimits``)."""
    idle_proving: IdleProving = IdleProving()
    """Whether and how idle AI workers extend the proven positions (``IdleProving``)."""
    time_controls: Mapping[str, TimeControl] = field(default_factory=lambda: dict(TIME_CONTROLS))
    """The time controls rooms may be made with, by name (``server.play.clocks``); tests add a
    quick one here rather than through the protocol."""
    first_move_seconds: float = FIRST_MOVE_SECONDS
    """How long each side of a timed game between two people has for its first move; past
    it the game is aborted (``game_over`` reason ``aborted``, nobody rated). Untimed games
    and games against the AI have none. 0: no such limit (docs/SECURITY.md)."""
    arena_rematch_seconds: float = 30.0
    """How long two arena players who just met wait, alone free, before they are paired
    again (``server.tournaments.arena.REMATCH_AFTER_SECONDS``)."""
    standings_push_seconds: float = 0.5
    """At most one arena standings push per player in this many seconds: the events in
    between are coalesced into the next push (0: a push on every event)."""
    tournament_watchers: int = 1000
    """Connections on one node that may watch one tournament's standings live without
    playing in it (``server.tournaments.watchers``); more still get answers, not pushes."""
    schedule_lead_seconds: float = 3600.0
    """How far ahead an admin's arena schedule makes its arenas: each arena starting
    within this many seconds exists (listed as upcoming)."""
    store_retry_seconds: tuple[float, ...] = (0.1, 0.5, 2.0)
    """Pauses before each new attempt to store an AI move the store refused; when the last
    attempt fails too, the move is not played and the room is told (the sweeper asks the AI
    again later)."""

    chat_max_chars: int = 300
    """Longest chat line, in characters once trimmed (``bad_message`` past it)."""
    chat_lines: int = 5
    """Chat lines one player may send within ``chat_window_seconds`` (``rate_limited``)."""
    chat_window_seconds: float = 10.0
    chat_lines_per_source: int = 15
    """Chat lines one address may send within ``chat_window_seconds``, whoever says them
    (``rate_limited``, ``detail.limit`` ``chat_lines_per_source``): fifty guests from one
    address get three of their own lines' worth, not fifty."""
    chat_after_game_seconds: float = 120.0
    """How long a finished game's players may go on talking in its chat; nobody who did not
    play in it may write once it ended (``chat_closed``)."""
    chat_guests_in_lobby: bool = False
    """Whether guests may write in the lobby chat (they may always read it, and write in
    their games' chat); off, only accounts and bots may (``not_signed_in``)."""
    chat_history: int = 100
    """Lines ``get_chat`` returns at most (the newest)."""
    lobby_chat_kept: int = 500
    """Lobby chat lines the store keeps (the oldest go); a game's lines are kept with it."""
    lobby_chat_days: float = 7.0
    """Lobby chat lines older than this are deleted (by the sweep, ``ChatDesk.sweep``)."""
    game_chat_days: float = 30.0
    """A game's chat lines older than this are deleted (the game and its moves stay)."""
    sources: SourceLimits = DEFAULT_SOURCE_LIMITS
    """What one client address may hold and do (``server.web.sources``; docs/SECURITY.md)."""
    trusted_proxies: tuple[str, ...] = ()
    """Addresses or CIDR networks of load balancers whose connections start with a PROXY
    protocol v2 header naming the real client (``server.web.proxy``; ``discus serve
    --trusted-proxy``). Empty: every peer is a client."""
    allowed_origins: tuple[str, ...] = ()
    """Web origins (``https://example.org``) whose pages may open a websocket besides the
    server's own (an ``Origin`` whose host is the request's ``Host``). Clients that send no
    ``Origin`` (bots, scripts) are let in."""
    guest_token_days: float = 90.0
    """A guest's resume token unused this long no longer resumes; each ``hello`` with it
    gets a fresh one (sliding). 0: never expires."""
    session_days: float = 90.0
    """An account's session unused this long has ended (sign in again); each ``hello`` with
    it counts as a use (sliding). 0: never expires."""

    ladder_time_control: str = "3+2"
    """The engine ladder's one clock (a name in ``time_controls``)."""
    ladder_pace_seconds: float = 10.0
    """How often the ladder starts games among its free entrants."""
    ladder_levels: dict[str, tuple[str, ...]] | None = None
    """The AI levels each game's ladder has entered by default, by game: entered when the
    ladder is made, or found with no level ever entered, so a bot's first games rate it (a
    rating needs a level of calibrated strength on the ladder). None: each game's weakest
    level alone. One level is the default because two or more also play each other, round
    after round, whenever no bot is free: engine time an idle server would spend for
    nothing. Admins change a running ladder's levels (``discus ladder levels``, the admin
    page); a level an admin took off stays off."""

    def limits(self) -> p.ServerLimits:
        return p.ServerLimits(
            max_message_bytes=self.max_message_bytes,
            messages_per_second=self.messages_per_second,
            burst=self.burst,
            grace_seconds=self.grace_seconds,
            max_rooms=self.max_rooms,
            max_challenges=self.max_challenges,
            chat=p.ChatLimits(max_chars=self.chat_max_chars, lines=self.chat_lines,
                              window_seconds=self.chat_window_seconds,
                              guests_in_lobby=self.chat_guests_in_lobby,
                              lines_per_source=self.chat_lines_per_source,
                              after_game_seconds=self.chat_after_game_seconds),
        )


