"""An arena tournament, sans-I/O: players come and go until the end, and each free player is
paired as soon as another is free.

The caller (a desk) owns the clock, the rooms and the store. It calls ``join``, ``pause``,
``withdraw``, ``berserk`` and ``finish`` as things happen, then ``pair(now)``, which returns
the games to start now; it starts each in a room and reports its end with ``finish``. Call
``pair`` after every command that may free a player (a join, a rejoin, a finished game):
pairing is then immediate, and when several players are free at once the pairing is the
closest in score, then in rating.

Rules, in the words of lichess's arena and issue 25:

- a win scores 2, a draw 1, a loss 0; after two wins in a row each further win scores double
  (4) until a game that is not a win (the "streak"; a draw then scores its usual 1);
- a player who berserks (before the game's first move; the caller halves that player's
  clock) earns 1 bonus point for winning that game;
- never the same opponent twice running, for either of the two, while anyone else may come
  free: with only those two free, both wait for someone else, but once both have waited
  ``rematch_after`` seconds (``REMATCH_AFTER_SECONDS`` unless the caller says otherwise) with
  nobody else free, they are paired again, so an arena of two keeps playing;
- seats balanced: the one who has moved first less often moves first, then the one who
  moved second last time;
- paused and withdrawn players are not paired; a game under way when its player pauses,
  withdraws or the arena ends is played out and counts;
- a player whose game is aborted because it never made its move (a no-show) is paused at
  once, and withdrawn at its ``NO_SHOWS_WITHDRAW``-th: it is paired again only once it
  comes back (``join``), so an idle entrant cannot waste the others' time game after game;
- after ``ends_at`` nobody is paired and nobody may join, but ``finish`` still takes the
  games started before the end.

The state is a value of its entrants and their games, so ``Arena.restored`` rebuilds it
from what the store kept.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal

from server import errors
from server.tournaments import Entrant

WIN_POINTS = 2
DRAW_POINTS = 1
STREAK_AFTER = 2
"""Wins in a row after which each win scores double, until a game that is not a win."""
BERSERK_BONUS = 1
NO_SHOWS_WITHDRAW = 2
"""Games aborted because the player never moved after which it is withdrawn, not paused."""
REMATCH_AFTER_SECONDS = 30.0
"""How long two free players who just met wait, with nobody else free, before the arena
pairs them again. Long enough for a third player to come free from a game ending about the
same time (or to join after the first pairing) and be preferred; short against a game of a
few minutes, so an arena of two (a quiet hour) plays on rather than sitting idle."""
EXACT_POOL = 8
"""Free pools up to this size are paired by exhaustive search (at most 764 matchings);
larger ones greedily. Players are paired as they free up, so pools are mostly tiny."""


class Status(StrEnum):
    ACTIVE = "active"
    PAUSED = "paused"
    WITHDRAWN = "withdrawn"


NO_SHOW = "no_show"
"""Why the arena paused or withdrew a player: it never moved in a game that was then
aborted (else the player did it itself)."""


@dataclass(frozen=True)
class Pairing:
    """A game to start: ``first`` holds seat 0 (moves first), ``second`` seat 1."""

    game_id: str
    first: str
    second: str


@dataclass(frozen=True)
class Scored:
    """What one finished game gave a player: its ``points`` (streak and berserk included),
    ``result`` (1 win, 0.5 draw, 0 loss) and whether the player is on a streak after it."""

    player: str
    result: float
    points: int
    on_fire: bool


@dataclass
class ArenaGame:
    game_id: str
    first: str
    second: str
    started_at: float
    berserk: set[str] = field(default_factory=set)
    winner: int | None = None
    """The winning seat (0 or 1), or None for a draw; meaningful once ``finished``."""
    finished: bool = False
    finished_at: float | None = None
    cancelled: bool = False
    """Aborted before both had moved: it ended without a result and scores nothing."""
    seq: int = 0
    """Its place in the order the arena's games were paired (from 0)."""
    stored_as: str | None = None
    """The id of the stored game its room plays, once the caller has started it."""

    def seat_of(self, player: str) -> int:
        return 0 if player == self.first else 1

    def players(self) -> tuple[str, str]:
        return (self.first, self.second)


@dataclass
class ArenaPlayer:
    entrant: Entrant
    status: Status = Status.ACTIVE
    score: int = 0
    sheet: list[int] = field(default_factory=list)
    """Points of each finished game, in the order they finished."""
    wins: int = 0
    draws: int = 0
    losses: int = 0
    wins_in_a_row: int = 0
    firsts: int = 0
    seconds: int = 0
    last_seat: int | None = None
    last_opponent: str | None = None
    playing: str | None = None
    """The game id this player is in, while it is under way."""
    no_shows: int = 0
    """Its games aborted because it never moved (``cancel``'s ``absent``)."""
    benched: str | None = None
    """``NO_SHOW`` while the arena, not the player, has paused or withdrawn it."""

    @property
    def on_fire(self) -> bool:
        return self.wins_in_a_row >= STREAK_AFTER

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses


@dataclass(frozen=True)
class Standing:
    rank: int
    id: str
    name: str
    rating: float
    score: int
    games: int
    wins: int
    draws: int
    losses: int
    sheet: tuple[int, ...]
    on_fire: bool
    status: Status
    playing: bool
    benched: str | None = None
    no_shows: int = 0


@dataclass
class Arena:
    """One arena from ``starts_at`` to ``ends_at`` (seconds on the caller's clock).
    ``berserk_allowed`` lets players halve their own clock for a bonus point on a win."""

    id: str
    starts_at: float
    ends_at: float
    berserk_allowed: bool = True
    players: dict[str, ArenaPlayer] = field(default_factory=dict)
    games: dict[str, ArenaGame] = field(default_factory=dict)
    _free_since: dict[str, float] = field(default_factory=dict)
    """Active players not in a game, with when they became free (first come, first paired
    among equals)."""
    _game_count: int = 0
    rematch_after: float = REMATCH_AFTER_SECONDS
    """Seconds two players who just met, alone free, wait before meeting again."""

    def __post_init__(self) -> None:
        if self.ends_at <= self.starts_at:
            raise errors.BadMessage("an arena must end after it starts", field="minutes")

    # --- commands --------------------------------------------------------------------------

    def is_over(self, now: float) -> bool:
        return now >= self.ends_at

    def join(self, entrant: Entrant, now: float) -> None:
        """Enter ``entrant``, or bring back a paused or withdrawn player (whose score stands).
        Joining twice is harmless. ``TournamentClosed`` once the arena is over."""
        if self.is_over(now):
            raise errors.TournamentClosed("the arena is over", reason="over")
        known = self.players.get(entrant.id)
        if known is None:
            known = self.players[entrant.id] = ArenaPlayer(entrant)
        known.status = Status.ACTIVE
        known.benched = None
        if known.playing is None:
            self._free_since.setdefault(entrant.id, now)

    def pause(self, player_id: str) -> None:
        """Stop pairing ``player_id`` until it joins again; a game under way is played out."""
        entered = self._entered(player_id)
        entered.status, entered.benched = Status.PAUSED, None
        self._free_since.pop(player_id, None)

    def withdraw(self, player_id: str) -> None:
        """Leave the arena: never paired again unless it joins again; the score stands in
        the standings and a game under way is played out."""
        entered = self._entered(player_id)
        entered.status, entered.benched = Status.WITHDRAWN, None
        self._free_since.pop(player_id, None)

    def berserk(self, player_id: str, game_id: str) -> None:
        """``player_id`` halves its own clock in ``game_id`` for a bonus point on a win. The
        caller must check the game has no move yet and halve the clock. Berserking twice
        is harmless."""
        if not self.berserk_allowed:
            raise errors.CannotBerserk("this arena does not allow berserk",
                                       reason="not_allowed")
        game = self.games.get(game_id)
        if game is None or player_id not in game.players() or game.finished:
            raise errors.NotEntered("you are not playing that game of this arena")
        game.berserk.add(player_id)

    def pair(self, now: float) -> list[Pairing]:
        """The games to start now, among the free active players, never two who just met.
        Up to ``EXACT_POOL`` free players: as many games as can be made, and among those the
        pairing closest in score overall, then with the fewest seat clashes (both due to
        move first, or both second), then closest in rating. A larger pool (the start of a
        big arena) is paired greedily: each in turn, best score first, meets the free
        player it is closest to by the same measures. Nobody is paired before
        ``starts_at`` or after ``ends_at``."""
        if now < self.starts_at or self.is_over(now):
            return []
        free = sorted(self._free_since, key=lambda pid: (
            -self.players[pid].score, -self.players[pid].entrant.rating,
            self._free_since[pid], pid))
        if len(free) <= EXACT_POOL:
            pairs = self._best_pairs(tuple(free))[1]
        else:
            pairs = self._greedy_pairs(free)
        paired = {pid for pair in pairs for pid in pair}
        pairs += self._rematches([pid for pid in free if pid not in paired], now)
        return [self._start(one, other, now) for one, other in pairs]

    def _rematches(self, left: list[str], now: float) -> list[tuple[str, str]]:
        """Among the players left unpaired (none of them fits another but one it just met),
        those who just met each other and have both waited ``rematch_after``: paired
        again, first free first."""
        pairs: list[tuple[str, str]] = []
        left = sorted(left, key=lambda pid: (self._free_since[pid], pid))
        while left:
            one = left.pop(0)
            for k, other in enumerate(left):
                if self._rematch_at(one, other) <= now:
                    pairs.append((one, left.pop(k)))
                    break
        return pairs

    def _rematch_at(self, one: str, other: str) -> float:
        """When two free players may meet again: at once if they did not just meet, else
        once both have waited ``rematch_after``."""
        if self._cost(one, other) is not None:
            return float("-inf")
        return max(self._free_since[one], self._free_since[other]) + self.rematch_after

    def rematch_due(self) -> float | None:
        """The earliest time two free players who just met are due to be paired again
        (``pair`` pairs them then, if nobody else came free meanwhile): the caller calls
        ``pair`` again at that time. None when no such two are free."""
        free = sorted(self._free_since)
        times = [self._rematch_at(a, b) for i, a in enumerate(free) for b in free[i + 1:]
                 if self._cost(a, b) is None]
        return min(times) if times else None

    def waiting(self, player_id: str, now: float
                ) -> tuple[Literal["opponent", "rematch"], float | None] | None:
        """Why a free player waits in a running arena: ``("rematch", seconds)`` when the
        only other free player is the one it just met (paired again in that many seconds
        unless someone else comes free first), ``("opponent", None)`` when nobody else is
        free. None when it is not waiting (playing, paused, withdrawn, or the arena is not
        running)."""
        if player_id not in self._free_since or now < self.starts_at or self.is_over(now):
            return None
        others = [pid for pid in self._free_since if pid != player_id]
        if others and all(self._cost(player_id, o) is None for o in others):
            at = min(self._rematch_at(player_id, o) for o in others)
            return "rematch", max(0.0, at - now)
        return "opponent", None

    def _cost(self, one: str, other: str) -> tuple[int, int, float] | None:
        """How far apart two free players are (score, seat clash, rating); None when they
        just met."""
        me, them = self.players[one], self.players[other]
        if me.last_opponent == other or them.last_opponent == one:
            return None
        return (abs(me.score - them.score), _clash(me, them),
                abs(me.entrant.rating - them.entrant.rating))

    def _best_pairs(self, free: tuple[str, ...]
                    ) -> tuple[tuple[int, int, int, float], list[tuple[str, str]]]:
        """The best pairing of a small pool by exhaustive search: key (minus the games made,
        then the summed costs), and the pairs."""
        if len(free) < 2:
            return (0, 0, 0, 0.0), []
        one, rest = free[0], free[1:]
        best: tuple[tuple[int, int, int, float], list[tuple[str, str]]] | None = None
        for k, other in enumerate(rest):  # ties go to the first in order: ``one`` and its
            cost = self._cost(one, other)  # nearest by the pool's order
            if cost is None:
                continue
            key, pairs = self._best_pairs(rest[:k] + rest[k + 1:])
            total = (key[0] - 1, key[1] + cost[0], key[2] + cost[1], key[3] + cost[2])
            if best is None or total < best[0]:
                best = (total, [(one, other), *pairs])
        waits = self._best_pairs(rest)  # or ``one`` waits for the next one free
        return waits if best is None or waits[0] < best[0] else best

    def _greedy_pairs(self, free: list[str]) -> list[tuple[str, str]]:
        pairs: list[tuple[str, str]] = []
        while len(free) >= 2:
            one = free.pop(0)
            best: tuple[int, int, float, int] | None = None
            choice = -1
            for k, other in enumerate(free):
                cost = self._cost(one, other)
                if cost is not None and (best is None or (*cost, k) < best):
                    best, choice = (*cost, k), k
            if choice >= 0:  # else nobody fits: this player waits for the next one free
                pairs.append((one, free.pop(choice)))
        return pairs

    def finish(self, game_id: str, winner: int | None, now: float) -> list[Scored]:
        """Score a game that ended at ``now`` (``winner`` the winning seat, None a draw) and
        free its players. Games started before the end count after the end too.
        ``NotEntered`` for a game this arena did not start or already scored."""
        game = self.games.get(game_id)
        if game is None or game.finished:
            raise errors.NotEntered(f"the arena has no game {game_id!r} under way")
        if winner not in (0, 1, None):
            raise errors.BadMessage("a game's winner is seat 0, seat 1 or nobody",
                                    field="winner")
        game.finished, game.winner, game.finished_at = True, winner, now
        scored = [self._score(game, seat) for seat in (0, 1)]
        self._free(game, now)
        return scored

    def _free(self, game: ArenaGame, now: float) -> None:
        for player_id in game.players():
            player = self.players[player_id]
            if player.playing == game.game_id:
                player.playing = None
                if player.status is Status.ACTIVE:
                    self._free_since[player_id] = now

    def cancel(self, game_id: str, now: float, absent: str | None = None) -> None:
        """A game aborted before it was played: it scores nothing and frees its players.
        ``absent``: the player of the game who never made its move (a no-show), who is
        paused, or withdrawn at its ``NO_SHOWS_WITHDRAW``-th, until it joins again.
        ``NotEntered`` for a game not under way, or an ``absent`` not in it."""
        game = self.games.get(game_id)
        if game is None or game.finished:
            raise errors.NotEntered(f"the arena has no game {game_id!r} under way")
        if absent is not None and absent not in game.players():
            raise errors.NotEntered(f"{absent!r} does not play the arena's game {game_id!r}")
        game.finished, game.cancelled, game.finished_at = True, True, now
        self._free(game, now)
        if absent is not None:
            player = self.players[absent]
            player.no_shows += 1
            gone = player.no_shows >= NO_SHOWS_WITHDRAW or player.status is Status.WITHDRAWN
            player.status = Status.WITHDRAWN if gone else Status.PAUSED
            player.benched = NO_SHOW
            self._free_since.pop(absent, None)

    # --- views -----------------------------------------------------------------------------

    def standings(self, limit: int | None = None) -> list[Standing]:
        """Every player who joined (or the first ``limit``), best first: score, then fewer
        games (the same score in fewer games), then rating, then id. Paused and withdrawn
        players keep their rank."""
        return [self.standing(p.entrant.id, k + 1)
                for k, p in enumerate(self.ranked()[:limit])]

    def ranked(self) -> list[ArenaPlayer]:
        """The players in the standings' order: the cheap part of ``standings``, for a
        caller that shows a few rows of a big arena (a row is dearer than its sort key)."""
        return sorted(self.players.values(), key=lambda p: (
            -p.score, p.games, -p.entrant.rating, p.entrant.id))

    def standing(self, player_id: str, rank: int) -> Standing:
        """``player_id``'s row, at ``rank`` (from ``ranked``)."""
        p = self.players[player_id]
        return Standing(rank=rank, id=p.entrant.id, name=p.entrant.name,
                        rating=p.entrant.rating, score=p.score, games=p.games, wins=p.wins,
                        draws=p.draws, losses=p.losses, sheet=tuple(p.sheet),
                        on_fire=p.on_fire, status=p.status, playing=p.playing is not None,
                        benched=p.benched, no_shows=p.no_shows)

    def under_way(self) -> list[ArenaGame]:
        return [g for g in self.games.values() if not g.finished]

    def free_players(self) -> list[str]:
        return list(self._free_since)

    @classmethod
    def restored(cls, id: str, starts_at: float, ends_at: float, berserk_allowed: bool,
                 entrants: Iterable[tuple[Entrant, Status]],
                 games: Iterable[ArenaGame]) -> Arena:
        """The arena as it stood, from its entrants (with their status) and its games in the
        order they started, finished or not: replaying them (finished ones in the order
        they finished) gives the same scores, streaks, seats and last opponents as the arena
        that played them."""
        arena = cls(id, starts_at, ends_at, berserk_allowed)
        for entrant, status in entrants:
            arena.players[entrant.id] = ArenaPlayer(entrant, status=status)
        ordered = list(games)
        for game in ordered:
            arena._begin(ArenaGame(game.game_id, game.first, game.second, game.started_at,
                                   set(game.berserk), stored_as=game.stored_as))
        for game in sorted((g for g in ordered if g.finished),
                           key=lambda g: g.finished_at or 0.0):
            ended_at = game.finished_at or game.started_at
            if game.cancelled:
                arena.cancel(game.game_id, ended_at)
            else:
                arena.finish(game.game_id, game.winner, ended_at)
        arena._free_since = {pid: arena._free_since.get(pid, starts_at)
                             for pid, p in arena.players.items()
                             if p.status is Status.ACTIVE and p.playing is None}
        return arena

    # --- inside ----------------------------------------------------------------------------

    def _entered(self, player_id: str) -> ArenaPlayer:
        found = self.players.get(player_id)
        if found is None:
            raise errors.NotEntered("you are not entered in this arena")
        return found

    def _start(self, a: str, b: str, now: float) -> Pairing:
        pa, pb = self.players[a], self.players[b]
        a_first = (pa.firsts - pa.seconds, pa.last_seat == 0, a) < (
            pb.firsts - pb.seconds, pb.last_seat == 0, b)
        first, second = (a, b) if a_first else (b, a)
        self._game_count += 1
        game = ArenaGame(f"{self.id}-{self._game_count}", first, second, now)
        self._begin(game)
        return Pairing(game.game_id, first, second)

    def _begin(self, game: ArenaGame) -> None:
        game.seq = len(self.games)
        self.games[game.game_id] = game
        self._game_count = max(self._game_count, len(self.games))
        for seat, player_id in enumerate(game.players()):
            player = self.players[player_id]
            player.playing = game.game_id
            player.last_opponent = game.players()[1 - seat]
            player.last_seat = seat
            if seat == 0:
                player.firsts += 1
            else:
                player.seconds += 1
            self._free_since.pop(player_id, None)

    def _score(self, game: ArenaGame, seat: int) -> Scored:
        player = self.players[game.players()[seat]]
        if game.winner is None:
            result, points = 0.5, DRAW_POINTS
            player.draws += 1
            player.wins_in_a_row = 0
        elif game.winner == seat:
            result = 1.0
            points = WIN_POINTS * (2 if player.on_fire else 1)
            if player.entrant.id in game.berserk:
                points += BERSERK_BONUS
            player.wins += 1
            player.wins_in_a_row += 1
        else:
            result, points = 0.0, 0
            player.losses += 1
            player.wins_in_a_row = 0
        player.score += points
        player.sheet.append(points)
        return Scored(player.entrant.id, result, points, player.on_fire)


def _clash(a: ArenaPlayer, b: ArenaPlayer) -> int:
    """1 when both players are due the same seat (both moved first more often than second,
    or both less often): one of them would drift further off balance."""
    da, db = a.firsts - a.seconds, b.firsts - b.seconds
    return int(da * db > 0)
