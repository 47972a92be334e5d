"""What a report as an Arrow table costs over the DataFrame a report was: the rows of a
node-suite compare (repeated to ``--rows``) made into the DataFrame as before
(``report_frame``), against the report as now (its table with its provenance, then its
DataFrame with ``to_pandas()``, against making the DataFrame), and a join of two reports
against ``pd.concat`` of their DataFrames.

Each round times both sides, in turns; the table gives the medians of the rounds.

Usage::

    python benchmarks/bench_reports.py [--rows 20000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
from _report import Row, print_table

from onnx_arrow import compare
from onnx_arrow.compare.report import report_frame, report_table
from onnx_arrow.corpus import NodeSuiteSource, Store, write_store
from onnx_arrow.reports import Report, concat_reports


def _timed(fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "node.parquet"
        write_store(NodeSuiteSource(), path)
        made = compare.compare(Store(path), cases=["test_a*"], keep_actual="all")
    one = made.to_pandas()
    records = one.astype(object).where(one.notna(), None).to_dict("records")
    rows = (records * (args.rows // len(records) + 1))[: args.rows]
    provenance = made.provenance
    report = Report.of(report_table(rows), provenance)
    frame = report_frame(rows)
    pd.testing.assert_frame_equal(report.to_pandas(), frame)
    sides: dict[str, Callable[[], Any]] = {
        "frame": lambda: report_frame(rows),
        "report": lambda: Report.of(report_table(rows), provenance),
        "to_pandas": report.to_pandas,
        "concat": lambda: pd.concat([frame, frame], ignore_index=True),
        "join": lambda: concat_reports([report, report]),
    }
    timings: dict[str, list[float]] = {k: [] for k in sides}
    for k in range(args.rounds):
        order = list(sides) if k % 2 == 0 else list(reversed(sides))  # in turns
        for what in order:
            timings[what].append(_timed(sides[what]))
    for what, times in timings.items():
        print(
            f"{what}: median {statistics.median(times):.4f} s "
            f"(min {min(times):.4f}, max {max(times):.4f}, {args.rounds} rounds)"
        )
    print(f"\nload average {os.getloadavg()[0]:.2f} (1 min)\n")
    median = {k: statistics.median(v) for k, v in timings.items()}
    print_table(
        [
            Row(f"a report of {args.rows:,} rows made", median["frame"], median["report"], "s"),
            Row("its DataFrame (to_pandas)", median["frame"], median["to_pandas"], "s"),
            Row("two of them joined", median["concat"], median["join"], "s"),
        ]
    )
    print(
        "\nbaseline: the DataFrame as compare made it before (report_frame), and pd.concat "
        "of two (which drops both provenances); ours: the Arrow table with its provenance "
        "(built through that DataFrame), its to_pandas(), and concat_reports of two (which "
        "keeps both)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
