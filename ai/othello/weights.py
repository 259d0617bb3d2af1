"""Every tunable of the Othello engine, in one place.

Evaluation weights are in internal units where one disc is worth ``DISC``; each term has three
values, for the opening (up to 20 discs), the middle game (21-44) and the late game (45+),
because mobility matters early and discs, corners and stability late.
"""

from __future__ import annotations

DISC = 16
"""Internal score units per disc; reported midgame scores are divided by it (disc-like units)."""
WIN = 10_000
"""Base score of a finished game won: above any evaluation (see ``WIN_PER_EMPTY``)."""
WIN_PER_EMPTY = 65
"""Added to a won game's score per square still empty at its end, on top of the final disc
difference (1..64, so less than this): a quicker win (fewer discs played) always scores
higher, and a slower loss less low. It depends on the final position only, never on the path,
so table entries stay true; the disc difference is recovered as the remainder."""
INF = 30_000
"""Larger than any score (and it fits the transposition table's 16-bit score field)."""

PHASE_DISCS = (20, 44)
"""Disc counts at which the opening ends and the late game starts."""

MOBILITY = (10, 9, 7)
"""Per legal move more than the opponent has."""
FRONTIER = (-6, -5, -3)
"""Per own disc next to an empty square (fewer is better: it gives the opponent moves)."""
CORNER = (140, 130, 110)
"""Per corner held."""
X_SQUARE = (-70, -60, -35)
"""Per disc on b2/g2/b7/g7 while the corner beside it is empty."""
C_SQUARE = (-25, -20, -10)
"""Per disc on a2/b1 (and the like) while the corner beside it is empty."""
STABLE = (30, 30, 24)
"""Per edge disc anchored to an own corner (cannot be flipped any more)."""
DISCS = (0, 1, 4)
"""Per disc more than the opponent (worthless early, decisive late)."""
PARITY = (0, 4, 12)
"""Bonus when the side to move will also make the last move (odd number of empties)."""

EVALUATIONS = ("patterns", "classic")
"""The midgame evaluations: the learned pattern tables (``patterns``, weights fitted by
``ai.othello.train``) and the hand-made terms above (``classic``, kept for comparison)."""
EVALUATION = "patterns"
"""The evaluation every search uses unless told otherwise."""

# Search tunables.
AUTO_SOLVE_EMPTIES = 14
"""A non-exact search with this many empties or fewer (and no depth limit below them) ends
with an exact solve when time allows (within the hard deadline): 14 empties take a few tens
of milliseconds, so the engine plays the last 14 moves perfectly."""
CLOCK_SOLVE_EMPTIES = 24
"""A search bounded by its clock alone (no depth) may solve exactly from this many empties
down, when the expected solve fits the time left (``SOLVE_SECONDS``): a perfect move beats
a few more midgame plies. With the expert's 4 s hard time (about 3.7 s left after its
ordering iterations) the estimate lets the exact solve start from 22 empties down and the
win/loss/draw solve at 23; a 24-empty solve (FFO #45-#46: 96M-544M nodes, 23-118 s on a
busy 2-core machine) does not fit, so 24 only matters for longer clocks."""
SOLVE_SECONDS = (0.15, 3.2)
"""Expected exact-solve seconds at 20 empties, and the factor per extra empty: medians of
solves of positions from engine play on a 2-core machine (20 empties 0.2 s, 22 empties
2.1 s; the slowest of them took about twice the median), scaled by the newer solver's median
time against the one they were measured with: 0.72 at 20 empties, 0.76 at 22, 0.43 at 24
(``python -m bench.othello_endgame --played 20,22,24 --count 3``, one run, a busy machine)."""
SOLVE_TIME_SHARE = 0.75
"""A clock-bounded solve starts when its expected time is at most this share of the time
left before the hard deadline; if it runs over, the deadline ends it and the midgame answer
stands."""
HARD_TIME_MARGIN = (0.05, 0.05)
"""Seconds, and a share of the hard time, by which a search stops its kernels before its
hard time: the time a stopped kernel takes to notice (it polls every few thousand nodes), a
busy machine's delay in waking the timer thread, and the work after the last iteration (its
principal variation, the level's choice) must end within the hard time. On a two-core
machine under a load of 12 a niced search ended up to 0.18 s past a 4 s hard time without a
margin, and 0.07 s past a 0.4 s one with 0.04 s of margin. Cheap: what the deadline cuts off
is an unfinished iteration, thrown away anyway."""
WLD_SOLVE_SHARE = 0.3
"""The win/loss/draw solve's time as a share of the exact solve's (measured on FFO #40-#59,
``python -m bench.othello --wld``): where the clock leaves too little time for the exact
solve but enough for this, the engine proves the outcome and plays a move that keeps it."""
PROBCUT_T = 1.5
"""Multi-ProbCut's confidence: a selective search cuts a node when its shallow search clears
the window by this many of the fit's standard deviations (``ai.othello.probcut``). Larger is
safer and slower. Measured by ``python -m bench.othello_mpc`` on 24 positions of 26-46
empties (nodes to finish the depth as a share of the full-width search's; best moves that
differ from its at that depth): at depth 10, t 1.0 0.06 and 4/24, 1.5 0.09 and 3/24, 2.0 0.14
and 2/24, 2.5 0.20 and 1/24; at depth 12, 0.02 8/24, 0.03 5/24, 0.06 4/24, 0.10 3/24. 1.5
keeps most of the saving with few changed moves, as Logistello's and Edax's midgames do. At
0.5 s a move it reaches depth 16 where the full-width search reaches 11 (mean of 8
positions), and it beat the full-width search 99-48 with 9 draws over 156 games from random
openings with both colours (Elo +118, 95% +74..+166; ``--time 0.5``, seeds 1 and 2). Those
figures predate the selective shallow searches and the rows beyond the fit; since then, on
FFO #40-#79 (``python -m bench.othello_depth``, summed loss at about equal nodes) t 1.0 and
2.0 came out no better than 1.5: 1.0 loses 56 at depth 18 with 34M nodes, 2.0 56 at depth
14 with 35M and 44 at 16 with 95M, 1.5 48 at 18 with 110M (about 53 at 35M)."""
ORDER_SORT_DEPTH = 3
"""Midgame nodes with at least this depth left sort moves by the opponent's replies."""
MID_EVAL_SORT = 3
"""Midgame nodes with at least this depth left order their moves by the evaluation after
each move, weighed against the opponent's replies (``MID_EVAL_MOBILITY``), instead of by the
killers and history. With ``MID_SEARCH_SORT`` this took 16 positions of 30-48 empties to
selective depth 16 in 34.0M nodes instead of 49.1M, and 17 s instead of 24 s (one run each,
a throwaway script on ``engine.search``; the same best move in 15 of 16). From 4 plies
instead (and a mobility weight of 8): 35.9M against 35.1M."""
MID_SEARCH_SORT = 9
"""Midgame nodes with at least this depth left order by a one-ply search after each move
instead of by its evaluation: from 7 plies 38.4M nodes, from 11 39.9M, from 9 34.0M (same
set); a deeper ordering search (one more ply every 3 or 4 plies) cost more than it saved."""
MID_EVAL_MOBILITY = 4
"""In those nodes, the weight of the fewest-replies key (4 per opponent reply, corner
replies twice, plus potential replies) against the score after the move (``DISC`` a disc):
4 gave 34.0M nodes and 8 35.1M; with the search from 7 plies, 8 gave 39.7M, 16 43.0M and
32 44.5M."""
END_SHALLOW = 6
"""Endgame nodes with this many empties or fewer skip move generation, sorting and the table."""
END_FIRST = 6
"""Shallow endgame nodes with at least this many empties search the move leaving the opponent
fewest replies first (then parity order, no sorting)."""
END_SORT = 7
"""Endgame nodes with at least this many empties sort moves fastest-first."""
END_EVAL_SORT = 12
"""Endgame nodes with at least this many empties order their moves by the evaluation of the
position after each move too (``END_EVAL_MOBILITY``). With ``END_SEARCH_SORT`` this took
FFO #40-#49's exact solves from 8.7G nodes to 2.5G and from 594 to 233 CPU seconds
(``python -m bench.othello_endgame --ffo 40-49``, against the solver ordering by replies
alone, in one run on a busy 2-core machine). Tried on #40-#44: from 14 instead of 12 about
7% more nodes; the weight 8 or 32 instead of 16 about 10% more."""
END_EVAL_MOBILITY = 16
"""In those nodes, the weight of the fastest-first key (4 per opponent reply) against the
evaluation after the move (``DISC`` per disc)."""
END_SEARCH_SORT = 14
"""Endgame nodes with at least this many empties order by a one-ply search from the position
after each move (a two-ply search from the node) instead of its evaluation: on FFO #40-#44
23% fewer nodes than the evaluation alone (16 instead of 14: the same); a two-ply search from
18 empties up cost 25% more nodes."""
END_TT = 9
"""Endgame nodes with at least this many empties use the transposition table (FFO #40-#44:
10 costs 8% more nodes; 8 saves 6% of the nodes but no time)."""
END_ETC = 10
"""Endgame nodes with at least this many empties look up every child in the table first
(enhanced transposition cutoff) before searching any (13 instead: the same within noise on
FFO #40-#44)."""
TT_BITS = 21
"""Each table (midgame, endgame) has 2**TT_BITS entries of 16 bytes."""
