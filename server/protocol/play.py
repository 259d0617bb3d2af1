"""Rooms and the games played in them (``server.play``): opening, joining, watching and
leaving a room, moves, resigning, draws, take-backs and rematches, and the room's state, moves,
events and results as the room sends them.

Moves travel as text in the game's notation (Connect Four ``"1"``..``"7"``, Othello ``"f5"``
or ``"pass"``) together with ``ply``: the number of moves already played in the position the
move applies to. A move whose ply is not the room's current ply is refused (``stale_ply``)
rather than played, so a repeated or out-of-date move can never be misplayed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Literal

from pydantic import Field

from server.protocol.common import PlayerView, RoomId, Seat, _ClientMessage, _Message

__all__ = [
    "ListRooms", "AiOpponent", "FriendOpponent", "OpenOpponent", "Opponent", "CreateRoom",
    "JoinRoom", "Spectate", "Move", "Resign", "OfferRematch", "AcceptRematch", "Claim",
    "TakeBack", "OfferDraw", "AnswerDraw", "Leave", "RoomCommand", "ROOM_COMMANDS",
    "SeatRating", "SeatView", "Result", "TimeControlView", "ClockView", "RoomStatus",
    "Position", "RoomView", "RoomSummary", "RoomState", "MoveMade", "RoomEventKind",
    "RoomEvent", "AiThought", "AiThinking", "AiWaiting", "GameOver", "Rooms", "board_text",
]


# --- client -> server -----------------------------------------------------------------------------


class ListRooms(_ClientMessage):
    """Ask for the rooms waiting for an opponent (``open`` rooms); answered by ``rooms``."""

    type: Literal["list_rooms"] = "list_rooms"


class AiOpponent(_Message):
    """Play the computer at one of the levels ``welcome.games[].levels`` lists."""

    kind: Literal["ai"] = "ai"
    level: str = Field(max_length=40)
    evaluation: bool = Field(
        default=False, description="Show the engine's evaluation while it plays (the score "
        "and a proven result in `ai_thinking` and `move_made.thought`). Only for a casual "
        "(unrated) game: `forbidden` for a player whose games are rated (an account or a "
        "bot); a rated game never shows it.")


class FriendOpponent(_Message):
    """A person who joins with the room id (shared as a link); the room is not listed."""

    kind: Literal["friend"] = "friend"


class OpenOpponent(_Message):
    """Anybody: the room is listed by ``list_rooms`` until someone joins."""

    kind: Literal["open"] = "open"


Opponent = Annotated[AiOpponent | FriendOpponent | OpenOpponent, Field(discriminator="kind")]


class CreateRoom(_ClientMessage):
    """Open a room and sit in it; answered by ``room_state``. Against the AI the game starts at
    once (and the AI moves first if it holds seat 0)."""

    type: Literal["create_room"] = "create_room"
    game: str = Field(max_length=40, description="A game name from `welcome.games`.")
    opponent: Opponent
    seat: Seat | None = Field(
        default=0, description="The creator's seat: 0 moves first, 1 second, null = random."
    )
    time_control: str | None = Field(
        default=None, max_length=16,
        description="A name from `welcome.time_controls` (`\"3+2\"`: 3 minutes each, 2 s "
        "added per move); null (the default): untimed. Against the AI only the person's "
        "side has a clock.")


class JoinRoom(_ClientMessage):
    """Take the free seat of a room (by id/invite code); everyone gets ``room_event`` joined
    and the joiner gets ``room_state``."""

    type: Literal["join_room"] = "join_room"
    room: RoomId


class Spectate(_ClientMessage):
    """Watch a room without a seat; answered by ``room_state``, then its events."""

    type: Literal["spectate"] = "spectate"
    room: RoomId


class Move(_ClientMessage):
    """Play ``move`` at ``ply`` (the room's current ``ply``). Answered, once the move is
    stored, by ``move_made`` to everyone in the room (the mover included)."""

    type: Literal["move"] = "move"
    room: RoomId
    ply: int = Field(ge=0, description="Moves already played; must equal the room's ply.")
    move: str = Field(max_length=8, description="Connect Four '1'..'7'; Othello 'f5' or 'pass'.")


class Resign(_ClientMessage):
    """Give up the game in progress; everyone gets ``game_over``."""

    type: Literal["resign"] = "resign"
    room: RoomId


class OfferRematch(_ClientMessage):
    """After the game: propose another with colours swapped. Against the AI the rematch starts
    at once; otherwise the other seat gets ``room_event`` rematch_offered."""

    type: Literal["offer_rematch"] = "offer_rematch"
    room: RoomId


class AcceptRematch(_ClientMessage):
    """Accept the other seat's standing offer; everyone gets a fresh ``room_state``."""

    type: Literal["accept_rematch"] = "accept_rematch"
    room: RoomId


class Claim(_ClientMessage):
    """Claim the win when the opponent has been disconnected longer than the grace period."""

    type: Literal["claim"] = "claim"
    room: RoomId


class TakeBack(_ClientMessage):
    """Against the computer: take back your last move, and its reply if it has moved.
    Everyone in the room gets ``room_state`` again, then ``room_event`` took_back."""

    type: Literal["take_back"] = "take_back"
    room: RoomId


class OfferDraw(_ClientMessage):
    """Between people: offer a draw. The other seat gets ``room_event`` draw_offered and
    answers with ``answer_draw``; its next move declines it. If the other seat's offer is
    standing, this accepts it."""

    type: Literal["offer_draw"] = "offer_draw"
    room: RoomId


class AnswerDraw(_ClientMessage):
    """Accept (the game ends drawn, reason ``agreed``) or decline (``room_event``
    draw_declined) the other seat's draw offer."""

    type: Literal["answer_draw"] = "answer_draw"
    room: RoomId
    accept: bool


class Leave(_ClientMessage):
    """Leave a room. A seated player leaving an unfinished game loses it (reason ``left``)."""

    type: Literal["leave"] = "leave"
    room: RoomId


RoomCommand = (JoinRoom | Spectate | Move | Resign | OfferRematch | AcceptRematch | Claim
               | Leave | TakeBack | OfferDraw | AnswerDraw)
"""The commands that act on one room (``room`` names it): run by the server that runs it."""

ROOM_COMMANDS = (JoinRoom, Spectate, Move, Resign, OfferRematch, AcceptRematch, Claim, Leave,
                 TakeBack, OfferDraw, AnswerDraw)


# --- views ----------------------------------------------------------------------------------------


class SeatRating(_Message):
    """A seated player's rating in the room's game, as shown beside the name: rounded to a
    whole number; ``provisional`` when too little is known (pages show it as ``1662?``)."""

    rating: int
    provisional: bool = Field(
        description="A player: rd is above 110. An AI level: never calibrated (guessed).")


class SeatView(_Message):
    """Who sits in one seat. ``kind`` is ``human``, ``ai``, or ``empty`` (waiting for a join)."""

    seat: Seat
    colour: str = Field(description="The game's name for this side: 'Red', 'Black', ...")
    kind: Literal["human", "ai", "empty"]
    player: PlayerView | None = None
    level: str | None = Field(default=None, description="The AI level, for an AI seat.")
    connected: bool = Field(description="False while a human is away (AI seats: always true).")
    rating: SeatRating | None = Field(
        default=None,
        description="The seated account's or bot's rating in this game, or the AI level's; "
        "null for guests, admins and empty seats. As of when the player sat down or the "
        "game started (a rematch shows the ratings the last game left).")


class Result(_Message):
    """How a game ended. ``winner`` is a seat or null for a draw. ``score`` is the rules'
    final score from seat 0's side (Connect Four: Pons' convention; Othello: disc difference)
    when the game was played to the end, else null."""

    winner: Seat | None
    score: int | None = None
    reason: Literal["end", "resigned", "left", "abandoned", "aborted", "agreed",
                    "timeout"] = Field(
        description="end: played out; resigned; left: a player left; abandoned: claimed "
        "after the opponent's grace period ran out (or everyone was away that long); "
        "aborted: ended by leaving, abandoning or running out of time before both sides "
        "had moved, or (timed, two people) by a side not making its first move in its "
        "first-move time, with no winner and not scored; agreed: a draw both players "
        "agreed to; "
        "timeout: the loser's clock ran out."
    )


class TimeControlView(_Message):
    """A time control a room may be made with."""

    name: str = Field(description="What `create_room.time_control` names it by: '3+2'.")
    initial_ms: int = Field(description="Each clock at the start, in milliseconds.")
    increment_ms: int = Field(description="Added to a clock after each of its side's moves.")


class ClockView(_Message):
    """Both clocks of a timed game as the server measured them when it sent the message.

    A client shows ``remaining_ms`` and counts the ``running`` seat's clock down from the
    moment it *received* the message (its own clock, so a skewed client clock does not
    matter); the server alone decides when a flag falls.
    """

    control: TimeControlView
    remaining_ms: list[int | None] = Field(
        description="Each seat's time left in milliseconds, seat 0 first; null for a seat "
        "without a clock (the AI).")
    running: Seat | None = Field(
        description="The seat whose clock runs now; null when none does (the game is over "
        "or waits for a second player, or the AI is to move).")


RoomStatus = Literal["waiting", "active", "finished"]


class Position(_Message):
    """The position after the last move: everything needed to draw the board and move."""

    ply: int = Field(description="Moves played so far; the next move must carry this ply.")
    position: str = Field(description="The game's position text (as the shared data writes it).")
    cells: list[Literal[0, 1] | None] = Field(
        description="Owner seat or null of every cell, row by row from the top as seen."
    )
    to_move: Seat | None = Field(description="Seat to move; null when the game is over.")
    legal_moves: list[str] = Field(description="Moves for the side to move, in notation.")
    last_move: str | None = None
    placed: int | None = Field(
        default=None, description="The cell the last move put a disc on (null: start, pass)."
    )
    flipped: list[int] = Field(
        default_factory=list, description="The cells the last move turned over (Othello)."
    )
    winning: list[int] = Field(
        default_factory=list,
        description="The cells of the four in a row that won (Connect Four); empty otherwise.",
    )


class RoomView(_Message):
    """The full state of a room; ``room_state`` carries it."""

    id: RoomId
    game: str
    rows: int
    cols: int
    opponent: Literal["ai", "friend", "open"]
    seats: list[SeatView] = Field(description="Always two, seat 0 first.")
    spectators: int
    status: RoomStatus
    moves: list[str] = Field(description="Every move so far, in notation, from the start.")
    boards: list[str] = Field(
        description="The board before any move and after each ply (`len(moves) + 1` of "
        "them), as `board_text` writes cells: '-' empty, 'X' seat 0, 'O' seat 1."
    )
    position: Position
    result: Result | None = None
    ai_thinking: bool = Field(description="True while the AI is searching its move.")
    rematch_offered_by: Seat | None = None
    draw_offered_by: Seat | None = Field(
        default=None, description="The seat whose draw offer stands (games between people).")
    round: int = Field(description="1 for the first game in this room, +1 per rematch.")
    clock: ClockView | None = Field(
        default=None, description="The clocks of a timed game; null when untimed.")
    berserk_allowed: bool = Field(
        default=False, description="An arena's game whose arena allows `berserk`.")
    berserk: list[Seat] = Field(
        default_factory=list, description="The seats that went berserk in this game.")


class RoomSummary(_Message):
    id: RoomId
    game: str
    seats: list[SeatView]
    status: RoomStatus
    ply: int
    spectators: int
    time_control: str | None = Field(default=None, description="Null: untimed.")


# --- server -> client -----------------------------------------------------------------------------


class RoomState(_Message):
    """The full room. Sent on create, join, spectate, (re)connect and rematch; everything
    after it for that room is an incremental event, in order."""

    type: Literal["room_state"] = "room_state"
    room: RoomView
    you: Seat | None = Field(description="Your seat, or null when you are watching.")


class MoveMade(_Message):
    """A move was accepted and stored. ``ply`` is the ply the move was played at."""

    type: Literal["move_made"] = "move_made"
    room: RoomId
    ply: int
    move: str
    seat: Seat
    position: Position = Field(description="The position after the move.")
    status: RoomStatus
    thought: AiThought | None = Field(
        default=None, description="For a move the AI searched: its search's last iteration "
        "(what the page shows as what the AI saw). Null for people's moves and for quick "
        "moves played without a search.")
    clock: ClockView | None = Field(
        default=None, description="A timed game's clocks after the move (its time spent "
        "and the increment added; the other seat's clock now running); null when untimed.")
    forced: bool = Field(
        default=False, description="True for an Othello pass the server played for the "
        "seat because it had no other legal move (for people, bots and the AI alike, at "
        "once and costing no time); false for every move a player or the AI chose.")


RoomEventKind = Literal[
    "joined",
    "left",
    "disconnected",
    "reconnected",
    "spectator_joined",
    "spectator_left",
    "rematch_offered",
    "took_back",
    "draw_offered",
    "draw_declined",
    "berserk",
]


class RoomEvent(_Message):
    """Something about the people in a room changed; ``seats`` is the new seating."""

    type: Literal["room_event"] = "room_event"
    room: RoomId
    event: RoomEventKind
    seat: Seat | None = Field(default=None, description="The seat concerned, if any.")
    seats: list[SeatView]
    spectators: int
    grace_seconds: float | None = Field(
        default=None, description="For `disconnected`: seconds before the seat may be claimed."
    )
    clock: ClockView | None = Field(
        default=None, description="For `joined` in a timed room: the clocks, the first "
        "mover's now running; for `berserk`: the clocks with `seat`'s halved; null "
        "otherwise.")


class AiThought(_Message):
    """What the AI's search saw: one finished iteration; with a move, its last iteration, the
    score of the move played (a level may play below its best) and the whole search's nodes.
    ``score`` is from the AI's side (positive: it thinks it is ahead): in Othello in discs (an
    estimate of the final disc difference; the difference itself when ``exact``); in Connect
    Four in the evaluation's points, or Pons' score when ``exact``."""

    depth: int
    score: int | None = Field(description="Null when the search did not score the move played "
                              "(a move the level's rails forced), and always unless the room "
                              "shows the engine's evaluation (`AiOpponent.evaluation`).")
    nodes: int
    seconds: float
    exact: bool = False
    win_in: int | None = Field(
        default=None,
        description="A result the search proved, in moves: N > 0, the AI wins with its Nth "
        "move from now; N < 0, its opponent wins with its -Nth move. Null when nothing is "
        "proven or the game gives no length (Othello, draws).",
    )
    book: bool = Field(
        default=False, description="The move came from the opening book (the Othello expert's "
        "first plies, Connect Four's book positions): no search ran, `nodes` is 0 and `depth` "
        "is the book's; a page shows it as a book move, not as a search.")
    cached: bool = Field(
        default=False, description="The move came from the position cache: an earlier "
        "search's answer, `depth` and `score` that search's; no search ran now (`nodes` 0), "
        "and a page says so rather than showing 0 nodes.")


class AiThinking(AiThought):
    """Progress of a search for the move at ``ply`` that runs longer than about 0.2 s: its
    latest finished iteration, at most about five a second. A quicker search sends none; the
    move's ``move_made.thought`` carries the last iteration either way."""

    type: Literal["ai_thinking"] = "ai_thinking"
    room: RoomId
    ply: int


class AiWaiting(_Message):
    """The AI's move at ``ply`` waits for a free engine: the server's AI is busy (more moves
    asked than engines to search them). Sent once the move has waited about a second, then
    at most every 5 s while its place changes; ``position`` 0 once an engine took it (its
    search is under way).
    Never sent for a move an engine takes at once."""

    type: Literal["ai_waiting"] = "ai_waiting"
    room: RoomId
    ply: int
    position: int = Field(description="1: the next move an engine takes; 0: an engine took "
                          "this one.")
    queued: int = Field(description="AI moves waiting in all (0 once an engine took it).")
    wait_seconds: float = Field(
        description="Estimated seconds until an engine takes it, from recent searches.")


class GameOver(_Message):
    type: Literal["game_over"] = "game_over"
    room: RoomId
    result: Result
    clock: ClockView | None = Field(
        default=None, description="A timed game's clocks as it ended (none running); null "
        "when untimed.")


class Rooms(_Message):
    """Answer to ``list_rooms``: open rooms waiting for a second player, newest first."""

    type: Literal["rooms"] = "rooms"
    rooms: list[RoomSummary]


def board_text(cells: Sequence[int | None]) -> str:
    """Cells (owner seat or None, row by row from the top) as one character each: '-' empty,
    'X' seat 0, 'O' seat 1 -- how ``boards`` travel (Othello: 64 characters a ply)."""
    return "".join([_MARKS[c] for c in cells])


_MARKS = {None: "-", 0: "X", 1: "O"}
