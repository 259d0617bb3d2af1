"""Who may make and enter tournaments, and how many one account or one address may have.

Why: one account made 300 twelve-hour arenas in 4.6 s and buried the lobby's list, and guests
who never moved kept being paired with the one real player. As on lichess, tournaments are
for accounts and bots: guests watch (and are told how to sign up); people make them, bots
only play in them. What one maker may have open is bounded twice: per account, counted in
the store (``created_by``), so every node and a restart count alike; and per address, in
memory on this node as the other limits per source are (``server.web.sources``), so a new
account from the same address buys nothing. docs/SECURITY.md lists both numbers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from server import errors
from server.storage.store import Store, TournamentRecord, TournamentStatus

PER_ACCOUNT = 5
"""Upcoming or running tournaments one account may have made (those finished do not count)."""
PER_ADDRESS = 10
"""Upcoming or running tournaments made from one address (two accounts of a household at
their limit each), counted on each node."""
LIVE: tuple[TournamentStatus, ...] = ("upcoming", "running")

GUEST_ENTRY = ("guests may watch tournaments but not play in them: sign up (it is free) or "
               "sign in to join")


class Makers:
    """The door tournaments are made and entered through: who, and how many."""

    def __init__(self, store: Store, live: Callable[[str], bool],
                 per_account: int = PER_ACCOUNT, per_address: int = PER_ADDRESS) -> None:
        self.store = store
        self.live = live
        """Whether a tournament made here is still upcoming or running (the desk's records)."""
        self.per_account = per_account
        self.per_address = per_address
        self.made_from: dict[str, list[str]] = {}
        """Address -> the tournaments made from it here that may still be live."""
        self.making = asyncio.Lock()
        """One creation at a time on this node: the count and the new row go together, so a
        burst of creations cannot all pass the same count."""

    async def check_entrant(self, player_id: str) -> None:
        """``forbidden`` (``reason`` ``guest``) unless ``player_id`` is an account or a bot.
        A guest that never played has no row; on a cluster its row says ``guest``."""
        stored = await self.store.load_player(player_id)
        if stored is None or stored.kind not in ("account", "bot"):
            raise errors.Forbidden(GUEST_ENTRY, reason="guest")

    async def check_maker(self, player_id: str, source: str) -> None:
        """Refuse, before anything is made: a guest (``forbidden``, ``reason`` ``guest``), a
        bot (``reason`` ``bot``), an account or address at its limit
        (``too_many_tournaments``, ``detail.limit`` ``per_account`` or ``per_address``,
        ``detail.allowed``). Call under ``making``, and ``made`` after the tournament is."""
        stored = await self.store.load_player(player_id)
        if stored is None or stored.kind == "guest":
            raise errors.Forbidden("sign up (it is free) or sign in to make a tournament",
                                   reason="guest")
        if stored.kind != "account":
            raise errors.Forbidden("bots play in tournaments but do not make them",
                                   reason="bot")
        mine = await self.store.count_tournaments_made(player_id, LIVE)
        if mine >= self.per_account:
            raise errors.TooManyTournaments(
                f"you have {mine} tournaments upcoming or running, the most one account may "
                f"have; make another once one has ended", limit="per_account",
                allowed=self.per_account)
        here = self.made_from[source] = [t for t in self.made_from.get(source, [])
                                         if self.live(t)]
        if len(here) >= self.per_address:
            raise errors.TooManyTournaments(
                f"{len(here)} tournaments made from your address are upcoming or running, "
                f"the most one address may have; make another once one has ended",
                limit="per_address", allowed=self.per_address)

    def made(self, source: str, tournament_id: str) -> None:
        """``tournament_id`` was made from ``source``: it counts until it ends."""
        self.made_from.setdefault(source, []).append(tournament_id)


async def check_entry(store: Store, record: TournamentRecord, player_id: str,
                      rating: float) -> None:
    """Refuse a newcomer whom the arena ``record``'s entry conditions keep out
    (``entry_refused``), naming the one that failed. ``rating`` is the one the arena seeds by
    (1500 for one never rated)."""
    if record.min_rating is not None and rating < record.min_rating:
        raise errors.EntryRefused(
            f"this arena is for players rated {record.min_rating} or more in "
            f"{record.game}; you are rated {round(rating)}", condition="min_rating",
            required=record.min_rating, yours=round(rating))
    if record.max_rating is not None and rating > record.max_rating:
        raise errors.EntryRefused(
            f"this arena is for players rated {record.max_rating} or less in "
            f"{record.game}; you are rated {round(rating)}", condition="max_rating",
            required=record.max_rating, yours=round(rating))
    if record.min_games:
        played = next((r.games for r in await store.ratings_of(player_id)
                       if r.game == record.game), 0)
        if played < record.min_games:
            raise errors.EntryRefused(
                f"this arena is for players with {record.min_games} rated games of "
                f"{record.game} or more; you have played {played}",
                condition="min_games", required=record.min_games, yours=played)
