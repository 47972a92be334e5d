"""The onnxruntime-node runner (a command per data set, through files) against onnxruntime
in this process, case by case, on the node suite.

``compare`` runs the same node cases twice: with ``--runner`` on the example of
``examples/runners/onnxruntime-node`` (Node.js and onnxruntime-node, ``npm install`` in
that folder) and with ``--backend onnxruntime`` (Python's onnxruntime).  This prints the
agreement of the two reports output by output (the runner's status against
onnxruntime's, with counts), the outputs they disagree on grouped by why (the runner's
error, in a few words), and the wall time of each per data set, side by side (the
runner's protocol: the files written, a process started, its outputs read), and of the
protocol alone (``cp`` as the command).

Usage::

    python benchmarks/runner_vs_onnxruntime.py                      # the whole node suite
    python benchmarks/runner_vs_onnxruntime.py --cases 'test_ab*' --work /tmp/runner

The whole node suite takes some minutes: a Node.js process a data set.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd
from _report import Row, print_table, workdir

from onnx_arrow import compare
from onnx_arrow.corpus import NodeSuiteSource, Store, write_store

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "runners" / "onnxruntime-node"
COMMAND = f"node {EXAMPLE / 'run.js'} {{model}} {{inputs}} {{outputs}}"

#: The runner protocol without a runtime: input 0 copied as output 0 (the outputs are
#: wrong; only the time counts).
PROTOCOL_ONLY = "cp {inputs}/input_0.pb {case}/test_data_set_0/output_0.pb"

#: Why the runner fails where onnxruntime does not, in a few words: the first pattern that
#: finds its error.
REASONS = (
    (r"IR version", "a model of IR 14: onnxruntime-node 1.30 reads up to IR 13"),
    (r"opset|Opset", "an opset onnxruntime-node 1.30 does not know (27, 28)"),
    (r"takes no (\w+) tensors", "an element type onnxruntime-node does not take: {0}"),
    (r"Tensor.type is not supported: (\w+)", "an element type onnxruntime-node does not take: {0}"),
    (r"not a tensor|Non tensor|takes tensors only", "a sequence, map or optional value"),
    (r"Could not find an implementation", "a kernel onnxruntime-node 1.30 lacks"),
    (r"not a registered function/op", "an operator onnxruntime-node 1.30 lacks"),
    (r"Unrecognized attribute", "an attribute added after onnxruntime-node 1.30"),
    (r"status 0 but", "an output file missing or undecodable"),
)


def reason(row: Any) -> str:
    """Why the two differ on an output, in a few words."""
    if row.status_runner != "error":
        if row.status_onnxruntime == "error":
            return "onnxruntime errs, the runner does not: " + _first(row.error_onnxruntime)
        return f"both ran: {row.status_runner} against {row.status_onnxruntime}"
    text = row.error_runner or ""
    for pattern, words in REASONS:
        found = re.search(pattern, text)
        if found:
            return words.format(*found.groups())
    return "other: " + _first(text)


def _first(text: str | None) -> str:
    line = (text or "").strip().splitlines()[-1] if (text or "").strip() else ""
    return line[:110]


def agreement(runner: pd.DataFrame, ort: pd.DataFrame) -> pd.DataFrame:
    """One row per output of either report: both statuses and errors side by side."""
    key = ["case", "data_set", "index"]
    cols = [*key, "status", "error", "max_abs_error"]
    both = runner[cols].merge(ort[cols], on=key, how="outer", suffixes=("_runner", "_onnxruntime"))
    for side in ("runner", "onnxruntime"):
        both[f"status_{side}"] = both[f"status_{side}"].fillna("(absent)")
    return both


def _timed(fn: Any, *args: Any, **kwargs: Any) -> tuple[Any, float]:
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", action="append", help="glob of node cases (default: all)")
    parser.add_argument("--work", help="keep the store and reports in this folder")
    parser.add_argument("--runner", default=COMMAND, help="the runner's command")
    args = parser.parse_args(argv)
    if shutil.which("node") is None or not (EXAMPLE / "node_modules").is_dir():
        print(f"needs node and `npm install` in {EXAMPLE}", file=sys.stderr)
        return 1
    with workdir(args.work, "runner-bench-") as work:
        path = work / "node.parquet"
        if not path.exists():
            write_store(NodeSuiteSource(), path)
        store = Store(path)
        cases = args.cases or ["node/*"]
        ort, ort_s = _timed(
            compare.compare, store, compare.onnxruntime_backend, cases=cases, keep_actual="none"
        )
        runner, runner_s = _timed(
            compare.compare,
            store,
            compare.CommandRunner(args.runner),
            cases=cases,
            keep_actual="none",
        )
        # the protocol alone: the files written and read, a process started (cp, no runtime)
        _, protocol_s = _timed(
            compare.compare,
            store,
            compare.CommandRunner(PROTOCOL_ONLY),
            cases=cases,
            keep_actual="none",
        )
        compare.write_report(ort, work / "onnxruntime.parquet") if args.work else None
        compare.write_report(runner, work / "runner.parquet") if args.work else None
    both = agreement(runner, ort)
    data_sets = len(ort[ort["status"] != "skipped"].groupby(["case", "data_set"]))
    print(f"node cases: {ort['case'].nunique()}, data sets run: {data_sets}, outputs: {len(both)}")
    print(f"runner: {args.runner}\n")
    print("outputs by status: the runner (rows) against onnxruntime in this process (columns)")
    table = pd.crosstab(both["status_runner"], both["status_onnxruntime"], margins=True)
    print(table.to_string(), "\n")
    same = int((both["status_runner"] == both["status_onnxruntime"]).sum())
    print(f"same status: {same} of {len(both)} outputs")
    cases = both.groupby("case").apply(
        lambda g: bool((g["status_runner"] == g["status_onnxruntime"]).all()),
        include_groups=False,
    )
    print(f"cases whose every output has the same status: {int(cases.sum())} of {len(cases)}")
    ran = both[(both["status_runner"] != "error") & (both["status_onnxruntime"] != "error")]
    equal = ran["max_abs_error_runner"].fillna(-1) == ran["max_abs_error_onnxruntime"].fillna(-1)
    print(f"outputs both compared: {len(ran)}, of the same max_abs_error: {int(equal.sum())}\n")
    differ = both[both["status_runner"] != both["status_onnxruntime"]].copy()
    if len(differ):
        differ["reason"] = [reason(r) for r in differ.itertuples()]
        counts = differ.groupby("reason").agg(outputs=("case", "size"), cases=("case", "nunique"))
        print("where they differ, by why:")
        print(counts.sort_values("outputs", ascending=False).to_string(), "\n")
    print("wall time per data set (one run each)")
    print_table(
        [
            Row("onnxruntime in process -> runner (files+node)", ort_s / data_sets,
                runner_s / data_sets, "s"),
            Row("onnxruntime in process -> files+cp, no runtime", ort_s / data_sets,
                protocol_s / data_sets, "s"),
            Row("every case run, in all", ort_s, runner_s, "s"),
        ]
    )  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
