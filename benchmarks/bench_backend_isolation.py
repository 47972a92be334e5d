"""Benchmark: what running a backend in a worker process costs ``compare``.

``onnx-arrow compare`` of the node suite the installed onnx builds, with onnx's reference
evaluator (``--backend reference``), run as a user runs it (a fresh ``python -m
onnx_arrow`` process each time, start-up included): in the command's process
(``--in-process``, the baseline) against the default, one worker process forked once and
reused for every case.  Rounds run in turns (baseline, worker, baseline, ...), so that
the machine's load falls on both alike; printed: the median and range of the wall time
of each side, and the ratio of the medians.  Both reports are written and checked equal
(statuses, errors aside from the worker's own words); a difference makes the exit status 1.

Run::

    python benchmarks/bench_backend_isolation.py [--rounds 3] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
from _report import Row, print_table, workdir

ROOT = Path(__file__).resolve().parents[1]


def _onnx_arrow(*args: str) -> tuple[float, int]:
    """``onnx-arrow ARGS`` in a fresh process: its wall time and exit status."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "onnx_arrow", *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"onnx-arrow {' '.join(args)} failed ({done.returncode}):\n{done.stderr}")
    return seconds, done.returncode


def _statuses(path: Path) -> list[tuple[str, int, str]]:
    table = pq.read_table(path, columns=["case", "index", "status"])
    return sorted(zip(*(table[c].to_pylist() for c in table.column_names), strict=True))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="runs of each side (default 3)")
    parser.add_argument("--keep", metavar="DIR", help="work in DIR and keep the store there")
    args = parser.parse_args()
    with workdir(args.keep, "bench-isolation-") as work:
        store = work / "node.parquet"
        if not store.exists():
            _onnx_arrow("import", "--case", "node/*", str(store))
        sides = {"in the process (--in-process)": ["--in-process"], "in a worker process": []}
        times: dict[str, list[float]] = {name: [] for name in sides}
        for r in range(args.rounds):
            for name, extra in sides.items():
                out = work / f"report-{len(extra)}.parquet"
                command = ["compare", str(store), "--backend", "reference", "--show", "0"]
                seconds, _ = _onnx_arrow(*command, *extra, "--out", str(out), "--force")
                times[name].append(seconds)
                print(f"round {r + 1}: {name}: {seconds:.2f} s", flush=True)
        same = _statuses(work / "report-1.parquet") == _statuses(work / "report-0.parquet")
    base, ours = (times[name] for name in sides)
    print()
    for name, values in times.items():
        print(
            f"{name:<32} median {statistics.median(values):7.2f} s  "
            f"range {min(values):.2f} - {max(values):.2f} s  ({len(values)} rounds)"
        )
    print()
    rows = [
        Row(
            "compare node suite, reference (median wall)",
            statistics.median(base),
            statistics.median(ours),
            "s",
        )
    ]
    print_table(rows)
    print(f"\nthe two reports' statuses are {'the same' if same else 'DIFFERENT'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
