"""Benchmark: the peak memory of a trace, its values exposed a chunk at a time, against the
same trace with every value exposed at once (what a tool that marks every tensor as an
output holds).

The model is the largest of the default corpus (``light/light_densenet121``: 1,746 nodes,
every one of its values traced), run on onnxruntime against onnxruntime (a runtime that
frees what it is not asked to give, so what the trace holds is what is measured; with the
reference evaluator on one side, that side holds every value while it runs whatever is
asked).  Each side runs in a fresh subprocess: it imports, traces a small case once (so
imports and first-call setup are not counted), resets its high-water mark
(``/proc/self/clear_refs``), then traces the model into a trace store and reports
``VmHWM`` minus ``VmRSS`` before the trace.  Baseline: ``chunk`` = every value (one chunk);
onnx-arrow: ``--chunk`` values (default 64).  The two traces are checked to hold the same
values, node by node (exit status 1 if not); how many rows' data differ, and how many are
judged otherwise, is printed: an optimizing runtime fuses nodes whose intermediate values
are not asked for, so what it computes depends on the values exposed with it.  Linux
only.

Run::

    python benchmarks/bench_trace_memory.py [--case light/light_densenet121] [--chunk 64]
        [--backend onnxruntime] [--against onnxruntime]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from _report import Row, print_table, workdir

_CHILD = r"""
import json, sys, time
sys.path.insert(0, {here!r})
from _report import reset_peak, status_kib
from onnx_arrow.corpus import Store, default_source, write_store
from onnx_arrow.trace import trace

folder, case, chunk, backend, against = {args!r}
store = Store(folder + "/corpus.parquet")
trace(store, "light/light_squeezenet", backend, folder + "/warm.parquet", against=against)
reset_peak()
before = status_kib("VmRSS")
start = time.perf_counter()
found = trace(store, case, backend, folder + f"/trace_{{chunk}}.parquet", against=against,
              chunk=chunk)
seconds = time.perf_counter() - start
print(json.dumps({{"peak": (status_kib("VmHWM") - before) * 1024, "seconds": seconds,
                  "values": found.metadata["values"], "chunks": found.metadata["chunks"]}}))
"""


def _measure(folder: Path, case: str, chunk: int, backend: str, against: str) -> dict[str, float]:
    code = _CHILD.format(
        here=str(Path(__file__).parent), args=(str(folder), case, chunk, backend, against)
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the measuring subprocess failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", default="light/light_densenet121")
    parser.add_argument("--chunk", type=int, default=64)
    parser.add_argument("--backend", default="onnxruntime")
    parser.add_argument("--against", default="onnxruntime")
    parser.add_argument("--keep", help="work in this folder and leave it")
    args = parser.parse_args()
    from onnx_arrow.corpus import default_source, write_store
    from onnx_arrow.trace import plan_trace, read_trace

    with workdir(args.keep, "bench_trace_") as folder:
        cases = [args.case, "light/light_squeezenet"]
        write_store(default_source(cases=cases), folder / "corpus.parquet")
        from onnx_arrow.corpus import Store

        values = len(plan_trace(Store(folder / "corpus.parquet").model(args.case)).values)
        at_once = _measure(folder, args.case, values, args.backend, args.against)
        chunked = _measure(folder, args.case, args.chunk, args.backend, args.against)
        a, _ = read_trace(folder / f"trace_{values}.parquet")
        b, _ = read_trace(folder / f"trace_{args.chunk}.parquet")
        data = [c for c in a.column_names if c.startswith("data_")]
        rows = ["side", "position", "node", "op_type", "value", "kind", "dtype", "shape"]
        same = a.select(rows).equals(b.select(rows))
        judged = sum(
            x != y
            for x, y in zip(
                a.column("status").to_pylist(), b.column("status").to_pylist(), strict=True
            )
        )
        moved = sum(
            x != y
            for c in data
            for x, y in zip(a.column(c).to_pylist(), b.column(c).to_pylist(), strict=True)
        )
        print(f"{args.case}: {values} values, {args.backend} against {args.against}")
        print(f"every value at once: 1 chunk, {at_once['seconds']:.1f} s")
        print(f"chunked: {chunked['chunks']} chunks of {args.chunk}, {chunked['seconds']:.1f} s")
        print(f"the two traces hold the same values, node by node: {same}")
        print(
            f"rows whose data differ between the two (a runtime that fuses nodes computes "
            f"some values otherwise when others are exposed with them): {moved} of "
            f"{a.num_rows}; rows judged otherwise: {judged}"
        )
        print_table(
            [
                Row(
                    f"peak memory, {args.chunk} values at a time",
                    at_once["peak"],
                    chunked["peak"],
                    "B",
                    bar=1.0,
                    strict=True,
                )
            ]
        )
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
