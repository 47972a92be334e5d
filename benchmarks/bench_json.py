"""Benchmark: JSON metadata read through ``load_json`` (size, encoding and depth checked,
errors located) against ``json.loads`` alone.

Three texts onnx-arrow reads: the store metadata of the node suite's store (written once,
from the cached suite), the extension metadata of a bfloat16 tensor column, and a
synthetic metadata of 5,000 records (a list of objects holding lists, about 0.5 MiB).
Measured in one process, the two sides taken in turns for ``--rounds`` (15) rounds of
``--calls`` calls each; each figure is the median per call, and the ratio is
``load_json`` over ``json.loads`` of the same round.  Nothing is asserted about time.

Run::

    python benchmarks/bench_json.py [--rounds 15] [--calls 200]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _per_call(f: Callable[[], Any], calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        f()
    return (time.perf_counter() - start) / calls


def _texts() -> dict[str, bytes]:
    import ml_dtypes
    import numpy as np
    import pyarrow.parquet as pq
    from onnx import numpy_helper

    import onnx_arrow
    from onnx_arrow.corpus import NodeSuiteSource, write_store
    from onnx_arrow.corpus.format import METADATA_KEY

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "node.parquet"
        write_store(NodeSuiteSource(), path)
        store = pq.read_schema(path).metadata[METADATA_KEY.encode()]
    column = onnx_arrow.to_arrow([numpy_helper.from_array(np.ones(3, ml_dtypes.bfloat16))])
    records = [
        {"name": f"case_{i}", "shape": [i % 7, 3, 4], "tags": ["a", "b"], "n": i}
        for i in range(5000)
    ]
    return {
        "store metadata": bytes(store),
        "extension metadata": column.type.__arrow_ext_serialize__(),
        "5,000 records": json.dumps({"version": 1, "records": records}).encode(),
    }


def main() -> int:
    from onnx_arrow.core._json import load_json

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    print(f"load: {os.getloadavg()[0]:.2f} (1 min), {os.cpu_count()} cores")
    print(f"{'text':>20} {'bytes':>8} {'json.loads':>12} {'load_json':>12} {'ratio':>7}")
    for name, raw in _texts().items():
        calls = max(1, args.calls * 4096 // max(len(raw), 4096))
        plain, checked, ratios = [], [], []
        for _ in range(args.rounds):
            a = _per_call(lambda raw=raw: json.loads(raw.decode("utf-8")), calls)
            b = _per_call(
                lambda raw=raw: load_json(raw, what="m", where=None, error=ValueError), calls
            )
            plain.append(a)
            checked.append(b)
            ratios.append(b / a)
        print(
            f"{name:>20} {len(raw):>8} {statistics.median(plain) * 1e6:>10.1f}us "
            f"{statistics.median(checked) * 1e6:>10.1f}us {statistics.median(ratios):>6.2f}x"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
