"""Every benchmark behind one command: ``discus bench [NAME ...]`` or ``python -m bench.run``.

Each benchmark module has ``main(argv) -> int`` and prints its own table with ratios against
the reference figures in ``shared/data/README.md`` measured on this kind of machine.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

BENCHES = {
    "connect4": "bench.connect4",
    "othello": "bench.othello",
    "perft": "bench.perft",
    "storage": "bench.storage",
    "load": "bench.load",
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the named benchmarks (all when none is named); extra ``--`` args go to each."""
    args = list(sys.argv[1:] if argv is None else argv)
    extra: list[str] = []
    if "--" in args:
        cut = args.index("--")
        args, extra = args[:cut], args[cut + 1 :]
    unknown = [name for name in args if name not in BENCHES]
    if unknown:
        print(f"unknown benchmark(s) {', '.join(unknown)}; known: {', '.join(BENCHES)}")
        return 2
    status = 0
    for name in args or list(BENCHES):
        print(f"\n### {name}", flush=True)
        status |= importlib.import_module(BENCHES[name]).main(extra)
    return status


if __name__ == "__main__":
    sys.exit(main())
