"""Arena tournaments without sockets: pairing, scoring, streaks, berserk, pauses and the end."""

from __future__ import annotations

import random

import pytest

from server import errors
from server.tournaments.arena import Arena, Entrant, Pairing, Standing, Status

START, END = 100.0, 1900.0


def entrant(name: str, rating: float = 1500.0) -> Entrant:
    return Entrant(name, name.title(), rating)


def arena(*names: str, berserk: bool = True) -> Arena:
    made = Arena("t1", START, END, berserk_allowed=berserk)
    for k, name in enumerate(names):
        made.join(entrant(name), START + k)
    return made


def play(made: Arena, one: str, other: str, winner: str | None, now: float = START + 10
         ) -> Pairing:
    """Pair exactly ``one`` and ``other`` (they must be the only free pair) and finish the
    game with ``winner`` (a name, or None for a draw)."""
    pairs = made.pair(now)
    assert len(pairs) == 1 and {pairs[0].first, pairs[0].second} == {one, other}, pairs
    game = pairs[0]
    seat = None if winner is None else (0 if game.first == winner else 1)
    made.finish(game.game_id, seat, now + 1)
    return game


def row(made: Arena, name: str) -> Standing:
    return next(s for s in made.standings() if s.id == name)


def test_a_win_scores_two_a_draw_one_a_loss_nothing() -> None:
    made = arena("ann", "bob", "cy")
    made.pause("cy")
    play(made, "ann", "bob", "ann")
    made.join(entrant("cy"), START + 20)
    made.pause("bob")
    play(made, "ann", "cy", None, START + 30)
    assert (row(made, "ann").score, row(made, "bob").score, row(made, "cy").score) == (3, 0, 1)
    assert row(made, "ann").sheet == (2, 1)


def test_after_two_wins_in_a_row_each_win_scores_double_until_a_non_win() -> None:
    made = arena("ann")
    results = ["ann", "ann", "ann", "ann", None, "ann", "ann", "ann", "x", "ann"]
    for k, result in enumerate(results):
        foe = f"foe{k}"  # each opponent once: who just met may not meet again at once
        made.join(entrant(foe), START + 10 * k)
        play(made, "ann", foe, foe if result == "x" else result, START + 10 * k + 1)
        made.pause(foe)
    assert row(made, "ann").sheet == (2, 2, 4, 4, 1, 2, 2, 4, 0, 2)
    assert row(made, "ann").score == 23
    assert not row(made, "ann").on_fire


def test_a_berserk_win_earns_one_bonus_point_a_berserk_loss_nothing() -> None:
    made = arena("ann", "bob")
    game = made.pair(START + 1)[0]
    made.berserk("ann", game.game_id)
    made.berserk("bob", game.game_id)
    made.finish(game.game_id, 0 if game.first == "ann" else 1, START + 2)
    assert (row(made, "ann").score, row(made, "bob").score) == (3, 0)


def test_berserk_is_refused_where_not_allowed_or_by_someone_not_in_the_game() -> None:
    made = arena("ann", "bob", "cy", berserk=False)
    game = made.pair(START + 1)[0]
    with pytest.raises(errors.CannotBerserk):
        made.berserk(game.first, game.game_id)
    allowed = arena("ann", "bob", "cy")
    game = allowed.pair(START + 1)[0]
    outsider = ({"ann", "bob", "cy"} - {game.first, game.second}).pop()
    with pytest.raises(errors.NotEntered):
        allowed.berserk(outsider, game.game_id)
    with pytest.raises(errors.NotEntered):
        allowed.berserk(game.first, "nope")
    assert allowed.games[game.game_id].berserk == set()


def test_a_free_player_is_paired_as_soon_as_another_is_free() -> None:
    made = arena("ann")
    assert made.pair(START) == []
    made.join(entrant("bob"), START + 5)
    assert len(made.pair(START + 5)) == 1
    assert made.free_players() == []


def test_nobody_is_paired_before_the_start() -> None:
    made = arena("ann", "bob")
    assert made.pair(START - 1) == []
    assert len(made.pair(START)) == 1


def test_the_same_two_never_meet_twice_running_and_wait_for_a_third() -> None:
    made = arena("ann", "bob")
    play(made, "ann", "bob", None)
    assert made.pair(START + 20) == []
    made.join(entrant("cy"), START + 21)
    (game,) = made.pair(START + 21)
    assert "cy" in (game.first, game.second)


def test_two_who_just_met_and_wait_alone_meet_again_once_both_waited_the_rematch_time(
) -> None:
    made = arena("ann", "bob")
    game = play(made, "ann", "bob", "ann")  # both free again at START + 11
    freed = START + 11
    assert made.waiting("ann", freed) == ("rematch", made.rematch_after)
    assert made.rematch_due() == freed + made.rematch_after
    assert made.pair(freed + made.rematch_after - 0.1) == []
    (again,) = made.pair(freed + made.rematch_after)
    assert {again.first, again.second} == {"ann", "bob"}
    assert again.first == game.second  # the seats turn round as for any pairing
    assert made.waiting("ann", freed + made.rematch_after) is None  # playing
    assert made.rematch_due() is None


def test_a_third_player_coming_free_before_the_rematch_time_is_preferred() -> None:
    made = arena("ann", "bob")
    play(made, "ann", "bob", None)
    later = START + 11 + made.rematch_after / 2
    made.join(entrant("cy"), later)
    (game,) = made.pair(later)
    assert "cy" in (game.first, game.second)
    left = ({"ann", "bob"} - {game.first, game.second}).pop()
    assert made.waiting(left, later) == ("opponent", None)  # nobody else free
    assert made.rematch_due() is None


def test_free_players_meet_the_closest_in_score() -> None:
    made = Arena("t1", START, END)
    for name, rating in [("a", 2000), ("b", 1990), ("c", 1500), ("d", 1490)]:
        made.join(entrant(name, rating), START)
    made.pause("c")
    made.pause("d")
    play(made, "a", "b", "b")  # b has 2 points
    made.pause("a")
    made.pause("b")
    for name, rating in [("c", 1500), ("d", 1490)]:
        made.join(entrant(name, rating), START + 20)
    play(made, "c", "d", "d", START + 30)  # d has 2 points too
    made.join(entrant("a", 2000), START + 40)
    made.join(entrant("b", 1990), START + 40)
    made.join(entrant("e", 1200), START + 40)
    pairs = {frozenset((g.first, g.second)) for g in made.pair(START + 40)}
    assert frozenset(("b", "d")) in pairs  # 2 meets 2, though a and c are closer in rating


def test_the_leader_does_not_take_the_only_partner_closer_in_score_to_another() -> None:
    made = arena("ann", "bob")
    play(made, "ann", "bob", "ann")  # ann 2, bob 0; they may not meet again at once
    made.join(entrant("cy"), START + 20)
    (game,) = made.pair(START + 20)
    assert {game.first, game.second} == {"bob", "cy"}  # 0 meets 0; ann waits


def test_a_big_pool_is_paired_greedily_by_the_same_measures() -> None:
    made = Arena("t1", START, END)
    for k in range(20):
        made.join(entrant(f"p{k:02}", 2000 - 10 * k), START)
    pairs = [(g.first, g.second) for g in made.pair(START)]
    assert sorted(frozenset(pair) for pair in pairs) == sorted(
        frozenset((f"p{2 * k:02}", f"p{2 * k + 1:02}")) for k in range(10))


def test_free_players_of_equal_score_meet_the_closest_in_rating() -> None:
    made = Arena("t1", START, END)
    for name, rating in [("a", 2000), ("b", 1200), ("c", 1990), ("d", 1210)]:
        made.join(entrant(name, rating), START)
    pairs = {frozenset((g.first, g.second)) for g in made.pair(START)}
    assert pairs == {frozenset(("a", "c")), frozenset(("b", "d"))}


def test_the_one_who_moved_first_last_time_moves_second_next() -> None:
    made = arena("ann", "bob", "cy")
    made.pause("cy")
    first = play(made, "ann", "bob", None)
    made.join(entrant("cy"), START + 20)
    made.pause(first.second)
    (nxt,) = made.pair(START + 21)
    assert nxt.second == first.first and nxt.first == "cy"


def test_among_equal_scores_a_player_meets_one_whose_seat_it_balances() -> None:
    made = Arena("t1", START, END)
    # a and b have each moved first once, c second once; all three have drawn.
    for k, (one, other, rating) in enumerate([("a", "d", 1500), ("b", "e", 1500),
                                              ("c", "b0", 1400)]):
        made.join(entrant(one, rating), START + 10 * k)
        made.join(entrant(other), START + 10 * k)
        game = play(made, one, other, None, START + 10 * k + 1)
        assert (game.first == one) == (one != "c")
        made.pause(one)
        made.pause(other)
    for name, rating in [("a", 1500), ("b", 1500), ("c", 1400)]:
        made.join(entrant(name, rating), START + 50)
    (game,) = made.pair(START + 50)
    # b is a's equal in rating, but both are due to move second: a meets c, who moves first.
    assert (game.first, game.second) == ("c", "a")


def test_paused_and_withdrawn_players_are_not_paired_and_keep_their_score() -> None:
    made = arena("ann", "bob", "cy")
    made.pause("cy")
    play(made, "ann", "bob", "ann")
    made.withdraw("ann")
    made.join(entrant("dee"), START + 20)
    (game,) = made.pair(START + 20)
    assert {game.first, game.second} == {"bob", "dee"}
    assert row(made, "ann").score == 2 and row(made, "ann").status is Status.WITHDRAWN
    assert row(made, "cy").status is Status.PAUSED
    made.join(entrant("cy"), START + 30)
    made.join(entrant("ann"), START + 30)
    (again,) = made.pair(START + 30)
    assert {again.first, again.second} == {"ann", "cy"}
    assert row(made, "ann").score == 2


def test_pausing_during_a_game_plays_it_out_and_then_pairs_no_more() -> None:
    made = arena("ann", "bob", "cy")
    game = made.pair(START + 1)[0]
    made.pause(game.first)
    made.finish(game.game_id, 0, START + 5)
    assert row(made, game.first).score == 2
    assert game.first not in made.free_players()


def test_games_started_before_the_end_finish_and_count_but_nobody_joins_or_pairs_after() -> None:
    made = arena("ann", "bob", "cy", "dee")
    games = made.pair(END - 1)
    made.finish(games[0].game_id, 0, END + 30)
    assert row(made, games[0].first).score == 2
    assert made.pair(END + 30) == []
    with pytest.raises(errors.TournamentClosed):
        made.join(entrant("eve"), END)
    assert "eve" not in made.players


def test_bad_finishes_are_refused_and_change_nothing() -> None:
    made = arena("ann", "bob")
    game = made.pair(START + 1)[0]
    with pytest.raises(errors.NotEntered):
        made.finish("t1-99", 0, START + 2)
    with pytest.raises(errors.BadMessage):
        made.finish(game.game_id, 2, START + 2)
    assert not made.games[game.game_id].finished
    made.finish(game.game_id, 1, START + 2)
    with pytest.raises(errors.NotEntered):
        made.finish(game.game_id, 0, START + 3)
    assert row(made, game.second).score == 2 and row(made, game.first).score == 0


def test_an_aborted_game_scores_nothing_and_frees_its_players() -> None:
    made = arena("ann", "bob", "cy")
    game = made.pair(START + 1)[0]
    made.cancel(game.game_id, START + 2)
    assert all(s.games == 0 and s.score == 0 for s in made.standings())
    assert {game.first, game.second} <= set(made.free_players()) | {
        p for g in made.under_way() for p in g.players()}
    with pytest.raises(errors.NotEntered):
        made.cancel(game.game_id, START + 3)


def test_commands_from_players_not_entered_are_refused() -> None:
    made = arena("ann")
    with pytest.raises(errors.NotEntered):
        made.pause("bob")
    with pytest.raises(errors.NotEntered):
        made.withdraw("bob")
    assert list(made.players) == ["ann"]


def test_an_arena_must_end_after_it_starts() -> None:
    with pytest.raises(errors.BadMessage):
        Arena("t1", START, START)


def _points_by_rule(results: list[float], berserked: list[bool]) -> list[int]:
    """The arena's scoring, restated: 2/1/0, double after two wins in a row, +1 berserk."""
    out, run = [], 0
    for result, bers in zip(results, berserked, strict=True):
        if result == 1:
            out.append((4 if run >= 2 else 2) + (1 if bers else 0))
            run += 1
        else:
            out.append(1 if result == 0.5 else 0)
            run = 0
    return out


@pytest.mark.parametrize("seed", range(25))
def test_random_arenas_keep_every_pairing_and_scoring_rule(seed: int) -> None:
    rng = random.Random(seed)
    count = rng.randint(3, 30)
    # Rematches never come due here, so "never twice running" holds throughout; they have
    # tests of their own below.
    made = Arena(f"t{seed}", START, END, rematch_after=float("inf"))
    names = [f"p{k}" for k in range(count)]
    for name in names:
        made.join(entrant(name, rng.uniform(1000, 2200)), START)
    history: dict[str, list[tuple[str, int]]] = {n: [] for n in names}  # (opponent, seat)
    results: dict[str, list[float]] = {n: [] for n in names}
    berserked: dict[str, list[bool]] = {n: [] for n in names}
    now = START
    for _ in range(400):
        now += rng.uniform(0, 5)
        for game in made.pair(now):
            for seat, me, foe in ((0, game.first, game.second), (1, game.second, game.first)):
                assert not history[me] or history[me][-1][0] != foe, "met twice running"
                history[me].append((foe, seat))
            for one in (game.first, game.second):
                if rng.random() < 0.2:
                    made.berserk(one, game.game_id)
        # Paired at once: no two free players remain who could meet.
        free = made.free_players()
        for a in free:
            for b in free:
                if a < b:
                    assert made.players[a].last_opponent == b or made.players[b].last_opponent == a
        busy = {g.first for g in made.under_way()} | {g.second for g in made.under_way()}
        assert len(busy) == 2 * len(made.under_way()), "a player in two games at once"
        event = rng.random()
        if made.under_way() and event < 0.05:
            made.cancel(rng.choice(made.under_way()).game_id, now)  # aborted: no score
        elif made.under_way() and event < 0.7:
            ended = rng.choice(made.under_way())
            winner = rng.choice([0, 1, None])
            made.finish(ended.game_id, winner, now)
            for seat, one in enumerate(ended.players()):
                results[one].append(0.5 if winner is None else float(winner == seat))
                berserked[one].append(one in ended.berserk)
        elif event < 0.8:
            made.pause(rng.choice(names))
        elif event < 0.85:
            made.withdraw(rng.choice(names))
        else:
            who = rng.choice(names)
            made.join(made.players[who].entrant, now)
    for name in names:
        player = made.players[name]
        assert list(player.sheet) == _points_by_rule(results[name], berserked[name])
        assert player.score == sum(player.sheet)
        seats = [seat for _, seat in history[name]]
        # Balanced as far as free players allow (two both due the same seat may be all
        # there is): never more than three games apart.
        assert abs(seats.count(0) - seats.count(1)) <= 3, seats
    ranks = made.standings()
    assert [s.score for s in ranks] == sorted((s.score for s in ranks), reverse=True)
    restored = Arena.restored(made.id, START, END, True,
                              [(p.entrant, p.status) for p in made.players.values()],
                              made.games.values())
    assert restored.standings() == ranks
    assert {p: (q.last_opponent, q.firsts, q.seconds, q.playing)
            for p, q in restored.players.items()} == {
        p: (q.last_opponent, q.firsts, q.seconds, q.playing) for p, q in made.players.items()}
    assert sorted(restored.free_players()) == sorted(made.free_players())
