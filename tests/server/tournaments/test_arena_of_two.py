"""An arena of two keeps playing: two players who just met, with nobody else free, are paired
again once both have waited ``Settings.arena_rematch_seconds``; meanwhile each one's row says
why it waits and for how long."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from people import CHEAP_HASHER, MANY_SIGN_UPS, sign_up
from wsclient import Client

from server.app import Settings, running
from tests.server.tournaments.test_tournament_desk import make_arena, paired, play, room_state

REMATCH_SECONDS = 1.0
"""The test server's wait before a rematch (30 s by default)."""


async def next_pairing(client: Client, rooms: set[str]) -> dict[str, Any]:
    """The next ``tournament`` push showing a game under way in a room not in ``rooms``."""
    while True:
        message = await client.expect("tournament", timeout=30)
        if any(g["room"] not in rooms for g in message["games"]):
            return message


@pytest.mark.slow
async def test_two_players_alone_in_an_arena_are_paired_again_and_told_why_they_wait(
) -> None:
    settings = Settings(arena_rematch_seconds=REMATCH_SECONDS, sign_in=MANY_SIGN_UPS)
    async with running(settings=settings) as server:
        server.app.accounts.hasher = CHEAP_HASHER
        ann = await Client.open(server.url, "Ann")
        bob = await Client.open(server.url, "Bob")
        clients = {c.player_id: c for c in (ann, bob)}
        await sign_up(ann, "Ann")
        await sign_up(bob, "Bob")  # tournaments take accounts and bots, not guests
        tid = await make_arena(ann)
        await ann.send(type="join_tournament", tournament=tid)
        await ann.expect("tournament")
        await bob.send(type="join_tournament", tournament=tid)
        rooms: set[str] = set()
        loop = asyncio.get_running_loop()
        started = loop.time()
        message = await next_pairing(bob, rooms)
        for game in range(3):
            first, second, room = await paired(clients, message)
            rooms.add(room)
            for client in (first, second):
                await room_state(client, room)
            await play(first, second, room)  # the first to move wins
            # Between the games: the row says the two wait for each other, and how long.
            while True:
                pushed = await ann.expect("tournament", timeout=30)
                if pushed["you"]["games"] == game + 1 and not pushed["you"]["playing"]:
                    break
            assert pushed["you"]["waiting"] == "rematch"
            assert 0 <= pushed["you"]["rematch_in"] <= REMATCH_SECONDS
            message = await next_pairing(ann, rooms)
        assert len(rooms) == 3 and loop.time() - started < 60
        for client in (ann, bob):
            await client.close()
