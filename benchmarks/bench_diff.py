"""Benchmark: onnx-arrow diff of two stores against reading both stores once.

One run measures, and prints side by side:

1. two stores of the built-in default corpus (the one-file store and a dataset store of
   ``--part-cases 500``, so every path is ``identical``): the baseline reads both whole
   (``pyarrow.parquet.read_table`` of every file), onnx-arrow ``diff(old, new)`` compares
   them.  Times are the best of ``--repeat`` runs, the two sides taking turns.
2. with ``--old DATA`` (the ``onnx/backend/test/data`` folder of an older onnx wheel,
   unpacked): that corpus against the installed onnx's default corpus, the counts per
   status and the largest ULP drifts, and the time (the old folder's import included).

Run::

    python benchmarks/bench_diff.py [--repeat 3] [--old old-onnx/onnx/backend/test/data]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq

from onnx_arrow.corpus import Store, default_source, write_dataset, write_store
from onnx_arrow.diff import DEFAULT_CORPUS, diff


def read_both(a: Store, b: Store) -> int:
    return sum(pq.read_table(p).num_rows for store in (a, b) for p in store.parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--old", metavar="DATA", help="an older onnx wheel's test data folder")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-diff-") as tmp:
        one, many = Path(tmp) / "one.parquet", Path(tmp) / "many"
        cases = list(default_source())
        write_store(cases, one)
        write_dataset(cases, many, part_cases=500)
        a, b = Store(one), Store(many)
        best = {"read both stores": float("inf"), "diff": float("inf")}
        statuses = {}
        for _ in range(args.repeat):
            start = time.perf_counter()
            read_both(a, b)
            best["read both stores"] = min(best["read both stores"], time.perf_counter() - start)
            start = time.perf_counter()
            report = diff(a, b).to_pandas()
            best["diff"] = min(best["diff"], time.perf_counter() - start)
            statuses = report["status"].value_counts().to_dict()
        base = best["read both stores"]
        print(f"two stores of the default corpus ({len(report)} paths: {statuses})")
        print(f"  read both stores   {base:8.3f} s   1.00x")
        print(f"  diff               {best['diff']:8.3f} s   {best['diff'] / base:.2f}x")
    if args.old is not None:
        start = time.perf_counter()
        report = diff(args.old, DEFAULT_CORPUS).to_pandas()
        took = time.perf_counter() - start
        print(f"\n{args.old} against the default corpus: {took:.2f} s (both imported)")
        print(report["status"].value_counts().to_string())
        drifts = report[report["status"] == "float-drift"].nlargest(5, "max_ulp")
        print(drifts[["path", "max_ulp"]].to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
