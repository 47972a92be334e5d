"""The cost of choosing cases by name: ``compare(store, cases=[every name])`` over the node
suite, ``select_cases`` against the floor of reading the store's names and keeping those in
a set of the names asked for.

Each round times both, in turns; the table gives the medians of the rounds (min and max
beside), so a name looked up costs about what a set look-up does, whatever the number of
names (before, every pattern was matched against every name: 7 s for 1,884 names).

Usage::

    python benchmarks/bench_select_cases.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _report import Row, print_table

from onnx_arrow import compare
from onnx_arrow.corpus import NodeSuiteSource, Store, write_store


def _floor(store: Store, names: list[str]) -> list[str]:
    wanted = set(names)
    return [n for n in store.cases() if n in wanted or n.split("/", 1)[-1] in wanted]


def _timed(fn: Callable[[], list[str]]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "node.parquet"
        write_store(NodeSuiteSource(), path)
        store = Store(path)
        rows = []
        for label, names in (
            ("whole names", store.cases()),
            ("test names (no kind folder)", [n.split("/", 1)[-1] for n in store.cases()]),
        ):
            assert compare.select_cases(store, names) == _floor(store, names)
            ours, floor = [], []
            for _ in range(args.rounds):
                floor.append(_timed(lambda names=names: _floor(store, names)))
                ours.append(_timed(lambda names=names: compare.select_cases(store, names)))
            for what, times in (("floor", floor), ("select_cases", ours)):
                print(
                    f"{label}, {what}: median {statistics.median(times):.4f} s "
                    f"(min {min(times):.4f}, max {max(times):.4f}, {args.rounds} rounds)"
                )
            measure = f"select_cases of {len(names):,} {label}"
            rows.append(Row(measure, statistics.median(floor), statistics.median(ours), "s"))
        print()
        print_table(rows)
        print(
            "\nthe floor only keeps the names in a set; select_cases also looks each test "
            "name up (node/test_abs by test_abs) and refuses a name that finds no case"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
