"""``bench.load`` on an old commit and on this tree, in one run, like for like.

``python -m bench.before_after --base REV [--clients 10000] [--seconds 30] [--store sqlite]
[--rounds 1] [other bench.load options]`` checks ``REV`` out beside this tree (``git worktree
add`` in a temporary directory outside the repository, removed afterwards), compiles or loads
each tree's engines (``discus warm-up``, so no numba compile falls in a measurement), then
runs the same load against the old code's server and this tree's (``--rounds`` times,
alternating which goes first; the table shows each figure's median) and, unless
``--no-floor``, once against the websockets floor (``bench.floor``) answering with the frames
this tree's server sent, at its pace (and with ``--store sqlite`` or ``postgres`` once more
against the floor with the duties, ``bench.floor --duties``). It prints moves/s, ack p50/p99
and server CPU per client move for both, the ratios new/old and each against the floor.

Like for like: the clients, the measurement and the floor are this tree's code for both;
each server is started by its own tree's ``bench.load --serve`` child from its own checkout
(working directory and ``PYTHONPATH`` the tree), because that child is the glue to the
server's internals of its commit; with ``--via-cli`` each is started as its tree's
``discus serve`` instead (``python -m server.cli serve``: no internals, the CLI's settings).
Each run gets a scratch database of its own.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.load import (
    Server,
    _run,
    cli_server,
    parser,
    print_against_floor,
    raise_fd_limit,
    run_floors,
    scratch_database,
    server_child,
)

ROOT = Path(__file__).resolve().parents[1]
FIGURES = ("held_to_end", "connect_seconds", "hello_p50_ms", "hello_p99_ms", "create_p50_ms",
           "create_p99_ms", "server_cpu_ms_per_connect", "client_moves_per_s", "ack_p50_ms",
           "ack_p99_ms", "server_cpu_ms_per_client_move", "frames_per_client_move",
           "received_bytes_per_client_move", "errors")


def _git(*argv: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *argv], check=True, capture_output=True,
                          text=True).stdout.strip()


def _environment(tree: Path) -> dict[str, str]:
    """This process's environment with ``tree`` first on the import path."""
    return dict(os.environ, PYTHONPATH=str(tree))


def _prepare(tree: Path) -> None:
    """Check that ``server`` and ``bench`` import from ``tree``, then warm its engines."""
    where = subprocess.run(
        [sys.executable, "-c", "import bench, server; print(server.__file__); "
         "print(bench.__file__)"],
        cwd=tree, env=_environment(tree), check=True, capture_output=True, text=True,
    ).stdout.split()
    for path in where:
        if not Path(path).resolve().is_relative_to(tree.resolve()):
            raise RuntimeError(f"{path} is imported from outside {tree}")
    print(f"warming the engines in {tree}", flush=True)
    warm = subprocess.run([sys.executable, "-m", "server.cli", "warm-up"], cwd=tree,
                          env=_environment(tree), capture_output=True, text=True)
    said = (warm.stdout or warm.stderr).strip().splitlines()
    print(said[-1] if said else f"discus warm-up exited with {warm.returncode}", flush=True)
    # A commit without `discus warm-up` still starts: its child waits for its workers
    # (their compile included) before it says READY, before anything is measured.


def _once(args: argparse.Namespace, tree: Path, name: str) -> dict[str, Any]:
    workers = max(1, args.workers or os.cpu_count() or 1)
    with tempfile.TemporaryDirectory() as scratch:
        url, drop = scratch_database(args.store, scratch)
        if args.via_cli:
            server = cli_server(args, url, scratch, cwd=str(tree), env=_environment(tree))
            server.name = f"{name} (discus serve)"
        else:
            server = Server(server_child(args, workers, url, None), cwd=str(tree),
                            env=_environment(tree), name=name)
        try:
            code = _run(args, url, server=server)
        finally:
            if drop is not None:
                asyncio.run(drop())
    if code:
        raise RuntimeError(f"the {name} run failed")
    report: dict[str, Any] = args.report
    return report


def _median(reports: list[dict[str, Any]], key: str) -> float:
    return float(statistics.median(r[key] for r in reports))


def _table(base: str, old: list[dict[str, Any]], new: list[dict[str, Any]],
           floor: dict[str, Any] | None, duties: dict[str, Any] | None = None) -> None:
    rounds = len(old)
    print(f"\n== {base} (old) against this tree (new)"
          + (f", medians of {rounds} rounds" if rounds > 1 else ""))
    print(f"{'':<34} {'old':>10} {'new':>10} {'new/old':>8}")
    for key in FIGURES:
        a, b = _median(old, key), _median(new, key)
        ratio = f"{b / a:.2f}" if a else "-"
        print(f"{key:<34} {a:>10g} {b:>10g} {ratio:>8}")
    if floor is not None:
        cpu = floor["server_cpu_ms_per_client_move"]
        print(f"{'websockets floor cpu ms per move':<34} {cpu:>10g}")
        for name, reports in (("old", old), ("new", new)):
            times = _median(reports, "server_cpu_ms_per_client_move") / cpu if cpu else 0
            print(f"{name}: server CPU per client move = {times:.1f} × the websockets floor")
        if duties is not None:
            least = duties["server_cpu_ms_per_client_move"]
            print(f"{'floor with duties cpu ms per move':<34} {least:>10g}"
                  + (f" ({least / cpu:.1f} × the websockets floor)" if cpu else ""))
    cpu_ratio = (_median(new, "server_cpu_ms_per_client_move")
                 / max(1e-9, _median(old, "server_cpu_ms_per_client_move")))
    print(f"server CPU per client move new/old = {cpu_ratio:.2f} "
          f"({'no worse' if cpu_ratio <= 1.0 else 'WORSE'}: the aim is ≤ 1.0)")


def main(argv: Sequence[str] | None = None) -> int:
    options = parser()
    options.prog = "python -m bench.before_after"
    options.description = __doc__
    options.add_argument("--base", required=True, help="the old commit (any git revision)")
    options.add_argument("--rounds", type=int, default=1,
                         help="runs of each side, alternating which goes first")
    args = options.parse_args(argv)
    if args.nodes or args.serve or args.profile:
        options.error("--nodes, --serve and --profile are bench.load's own")
    if args.via_cli and args.store == "memory":
        options.error("discus serve stores every game: --via-cli takes --store sqlite or "
                      "postgres")
    limit = raise_fd_limit(2 * args.clients + 256)
    if limit < args.clients + 64:
        print(f"open-file limit {limit} is too low for {args.clients} clients")
        return 2
    commit = _git("rev-parse", "--verify", f"{args.base}^{{commit}}")
    label = f"{args.base} = {commit[:10]}"
    folder = Path(tempfile.mkdtemp(prefix="discus-before-"))
    old_tree = folder / "tree"
    _git("worktree", "add", "--detach", str(old_tree), commit)
    try:
        for tree in (old_tree, ROOT):
            _prepare(tree)
        old: list[dict[str, Any]] = []
        new: list[dict[str, Any]] = []
        script = None
        for round_ in range(args.rounds):
            sides = [("old", old_tree, old), ("new", ROOT, new)]
            for name, tree, reports in sides if round_ % 2 == 0 else sides[::-1]:
                print(f"\n== {name} server: {label if name == 'old' else 'this tree'}"
                      f" (round {round_ + 1} of {args.rounds})", flush=True)
                reports.append(_once(args, tree, f"{name} server"))
                if name == "new":
                    script = args.script
        floor = duties = None
        if not args.no_floor:
            print("\n== the websockets floor, answering with the new server's frames",
                  flush=True)
            args.script = script
            with tempfile.TemporaryDirectory() as scratch:
                floors = run_floors(args, scratch)
            if floors is None:
                return 1
            floor, duties = floors
            print_against_floor(new[-1], floor, duties)
        _table(label, old, new, floor, duties)
    finally:
        removed = subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                                  str(old_tree)], capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)
        if removed.returncode:  # forget the checkout whose directory is now gone
            subprocess.run(["git", "-C", str(ROOT), "worktree", "prune"], capture_output=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
