"""Benchmark: ``write_store`` of folder corpora under two source trees of onnx-arrow (a
change to the store writer against the code before it), side by side in one run.

Each round writes every corpus once under each tree, the trees' order alternating from
round to round; each write is a fresh interpreter with the tree first on ``PYTHONPATH``,
timed around ``write_store`` alone (the interpreter's start and imports left out).
Printed per corpus: the median time under each tree, the median of each round's ratio
(second tree over first) with its range, and the stores' sizes; the machine's load
(``uptime``) before and after.  The corpora are folders of test cases, such as those
``bench_store_writer.py --keep DIR`` leaves (node, relu, large, repeated).

Run::

    python benchmarks/bench_store_write_trees.py BEFORE_TREE AFTER_TREE CORPUS... [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

#: One write, timed in a fresh interpreter: the corpus and the store in; seconds and bytes out.
_TIMED = """
import os, sys, time
from onnx_arrow.corpus import FolderSource, write_store

source, out = sys.argv[1], sys.argv[2]
start = time.perf_counter()
write_store(FolderSource(source), out)
print(time.perf_counter() - start, os.path.getsize(out))
"""


def _write(tree: Path, corpus: Path, out: Path) -> tuple[float, int]:
    out.unlink(missing_ok=True)
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(
        [sys.executable, "-c", _TIMED, str(corpus), str(out)],
        cwd=out.parent,  # python -c puts its folder first on the path, before the tree
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    seconds, size = done.stdout.split()
    return float(seconds), int(size)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("corpora", type=Path, nargs="+")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    trees = {"before": args.before, "after": args.after}
    print("load before:", os.popen("uptime").read().strip())
    with tempfile.TemporaryDirectory() as work:
        out = Path(work) / "store.parquet"
        for corpus in args.corpora:
            times: dict[str, list[float]] = {name: [] for name in trees}
            sizes: dict[str, int] = {}
            ratios = []
            for round_ in range(args.rounds):
                order = list(trees) if round_ % 2 == 0 else list(trees)[::-1]
                for name in order:
                    seconds, sizes[name] = _write(trees[name], corpus, out)
                    times[name].append(seconds)
                ratios.append(times["after"][-1] / times["before"][-1])
            print(
                f"{corpus.name:10s} before {statistics.median(times['before']):.2f} s  "
                f"after {statistics.median(times['after']):.2f} s  after/before "
                f"{statistics.median(ratios):.3f}x [{min(ratios):.2f}-{max(ratios):.2f}]  "
                f"size {sizes['after'] / sizes['before']:.3f}x "
                f"({sizes['after']} / {sizes['before']} B)"
            )
    print("load after:", os.popen("uptime").read().strip())


if __name__ == "__main__":
    main()
