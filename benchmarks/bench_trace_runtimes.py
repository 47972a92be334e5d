"""Benchmark: where onnx's reference evaluator and onnxruntime part ways, model by model:
a trace of every ``light/`` and ``real/`` model of the default corpus, the reference
evaluator (A) against onnxruntime (B), each value compared with the case's tolerance.

For each case it prints the values traced, the seconds the trace took, the first
divergent node (position, name, op type) with the status and largest ULP distance of its
worst output, how many values diverge and how many of them that node explains, and the
largest ULP distance of any float value.  A ``real/`` case of the wheel holds a
``data.json`` naming a download (no model): it is listed as such, never fetched.

Run (long: the reference evaluator runs each model once per chunk)::

    python benchmarks/bench_trace_runtimes.py [--chunk 512] [--case 'light/*' --case 'real/*']
        [--backend reference] [--against onnxruntime] [--max-ulp N]
"""

from __future__ import annotations

import argparse
import time

from _report import workdir


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", action="append")
    parser.add_argument("--chunk", type=int, default=512)
    parser.add_argument("--backend", default="reference")
    parser.add_argument("--against", default="onnxruntime")
    parser.add_argument("--max-ulp", type=int)
    parser.add_argument("--keep", help="work in this folder and leave it")
    args = parser.parse_args()
    from onnx_arrow.corpus import Store, default_source, write_store
    from onnx_arrow.errors import OnnxArrowError
    from onnx_arrow.trace import read_trace, trace

    patterns = args.case or ["light/*", "real/*"]
    with workdir(args.keep, "bench_trace_") as folder:
        write_store(default_source(cases=patterns), folder / "corpus.parquet")
        store = Store(folder / "corpus.parquet")
        print(f"{args.backend} (A) against {args.against} (B), chunks of {args.chunk}")
        head = (
            f"{'case':<28} {'values':>6} {'s':>6}  {'first divergent node':<34} "
            f"{'status':<15} {'ULP':>10} {'diverge':>7} {'explains':>8} {'max ULP':>10}"
        )
        print(head)
        for case in store.cases():
            if "model" not in store.read_case(case, ["role"]).column("role").to_pylist():
                print(f"{case:<28} {'':>6} {'':>6}  no model: its data.json names a download")
                continue
            start = time.perf_counter()
            try:
                found = trace(
                    store, case, args.backend, folder / "t.parquet", against=args.against,
                    chunk=args.chunk, max_ulp=args.max_ulp,
                )  # fmt: skip
            except OnnxArrowError as exc:
                print(f"{case:<28} cannot be traced: {exc}")
                continue
            seconds = time.perf_counter() - start
            rows, meta = read_trace(folder / "t.parquet", ["side", "max_ulp"])
            ulps = [u for u in rows.column("max_ulp").to_pylist() if u is not None]
            v = found.verdict
            if v.position is None:
                node, status, ulp = "none", "", ""
            else:
                worst = next((o for o in v.outputs if o.diverges), v.outputs[0])
                node = f"#{v.position} {v.node} ({v.op_type})"
                status, ulp = worst.status, "" if worst.max_ulp is None else str(worst.max_ulp)
            print(
                f"{case:<28} {meta['values']:>6} {seconds:>6.1f}  {node:<34} {status:<15} "
                f"{ulp:>10} {v.diverging:>7} {len(v.explains):>8} {max(ulps, default=0):>10}"
            )
            (folder / "t.parquet").unlink()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
