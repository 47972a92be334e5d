"""Benchmark: one case of a store read against ``onnx.numpy_helper`` on its ``.pb`` files.

The corpora (``bench_throughput.py``'s, made here):

* ``relu``: 60 cases of a ReLU, one float32 ``[1, 3, 224, 224]`` input of noise and its
  output (72 MB of files, a row group of four cases at the default ``row_group_bytes``);
* ``mixed``: cases of one float32 ``[1, 3, 224, 224]`` input and output of noise, smooth
  waves and ReLU activations in turn, every case different, ``--mixed-gb`` of files (0.5 by
  default; smaller is allowed, the row groups still hold four cases).

Each is imported with ``write_store`` (default options).  Then, per round, for a few cases
spread over the store (the same cases in every round), the sides in turns:

* ``numpy_helper``: each ``.pb`` file of the case read from disk (``Path.read_bytes``),
  parsed as a ``TensorProto`` and turned into an ndarray, as a user would;
* ``open``: ``store.case(name).data_sets()`` with the store opened once before the
  rounds (its last row groups forgotten before each call, so every call reads the file);
* ``fresh``: ``Store(path).case(name).data_sets()``: the store opened for the case, as a
  Jupyter case view or an engine loop that opens per case meets it.  In this process
  (with onnx_arrow imported), not a fresh process: the cost measured is the store's
  opening and reading, not the interpreter's start-up, which ``bench_throughput.py``
  measures on its own;
* ``data column`` (a floor, not a side a user runs): the row group that holds the case,
  its ``data_float`` column alone, read by pyarrow on one thread, no more: what any reader
  of a Parquet store through pyarrow pays before it has a value.

Every side's arrays are checked equal to numpy_helper's once.  A time is the sum over the
cases of one round; printed: each side's median with its min and max over the rounds, and
the ratios ``open / numpy_helper`` and ``fresh / numpy_helper`` of the same round (median,
min, max), and ``data column / numpy_helper``, ``open / data column`` (what the store adds
to the floor) and ``fresh / open`` (what opening the store costs); each in wall time and
in this process's CPU time (``time.process_time``, all its threads: what the machine's
other load does not change).  The files are read once before the rounds (page cache
warm).  The machine may be shared: compare ratios, not
lone times.

Run::

    python benchmarks/bench_case_read.py [--mixed-gb 0.5] [--rounds 15] [--cases 6]
        [--keep DIR] [--corpora relu mixed]
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
from _report import workdir
from bench_throughput import large_corpus, relu_corpus, warm


def _stats(xs: list[float]) -> dict[str, float]:
    return {"median": statistics.median(xs), "min": min(xs), "max": max(xs)}


def _ratios(times: dict[str, list[float]], a: str, b: str) -> dict[str, float]:
    return _stats([x / y for x, y in zip(times[a], times[b], strict=True)])


def _flat(data_sets: list[dict[str, dict[str, Any]]]) -> list[np.ndarray]:
    return [v for d in data_sets for io in ("outputs", "inputs") for v in d[io].values()]


def measure(src: Path, store_path: Path, rounds: int, count: int) -> dict[str, Any]:
    """The three sides over ``count`` cases of the store, ``rounds`` rounds in turns."""
    from onnx import TensorProto, numpy_helper

    from onnx_arrow.corpus import Store

    store = Store(store_path)
    cases = store.cases()
    picked = [cases[i] for i in np.linspace(0, len(cases) - 1, count).astype(int)]
    pbs = {c: sorted((src / c).rglob("*.pb")) for c in picked}

    def helper() -> None:
        for case in picked:
            [numpy_helper.to_array(TensorProto.FromString(p.read_bytes())) for p in pbs[case]]

    def opened() -> None:
        for case in picked:
            store._last_read = None  # every call reads the file (page cache warm)
            store.case(case).data_sets()

    def fresh() -> None:
        for case in picked:
            Store(store_path).case(case).data_sets()

    parquet = pq.ParquetFile(store_path)
    group_of = {  # the row group holding each case (it may hold others)
        name: i
        for i in range(parquet.num_row_groups)
        for name in set(parquet.read_row_group(i, columns=["test_case"])["test_case"].to_pylist())
    }

    def column() -> None:
        for case in picked:
            parquet.read_row_group(group_of[case], columns=["data_float"], use_threads=False)

    for case in picked:  # every side gives numpy_helper's arrays
        want = sorted(
            (numpy_helper.to_array(TensorProto.FromString(p.read_bytes())) for p in pbs[case]),
            key=lambda a: a.tobytes(),
        )
        for got in (store.case(case).data_sets(), Store(store_path).case(case).data_sets()):
            have = sorted(_flat(got), key=lambda a: a.tobytes())
            if len(have) != len(want) or not all(
                np.array_equal(a, b) for a, b in zip(have, want, strict=True)
            ):
                raise RuntimeError(f"the store's {case!r} differs from its .pb files")
    warm(src)
    warm(store_path)
    sides: dict[str, Callable[[], None]] = {
        "numpy_helper": helper,
        "open": opened,
        "fresh": fresh,
        "data column": column,
    }
    times: dict[str, list[float]] = {k: [] for k in sides}
    cpu: dict[str, list[float]] = {k: [] for k in sides}
    for _ in range(rounds):
        for label, fn in sides.items():
            gc.collect()
            start, used = time.perf_counter(), time.process_time()
            fn()
            times[label].append(time.perf_counter() - start)
            cpu[label].append(time.process_time() - used)
    pairs = (
        ("open", "numpy_helper"),
        ("fresh", "numpy_helper"),
        ("data column", "numpy_helper"),
        ("open", "data column"),
        ("fresh", "open"),
    )
    return {
        "store": str(store_path),
        "store_bytes": store_path.stat().st_size,
        "row_groups": store.num_row_groups,
        "cases": len(cases),
        "cases_read": len(picked),
        "rounds": rounds,
        **{f"{k} s": _stats(v) for k, v in times.items()},
        **{f"{a} / {b}": _ratios(times, a, b) for a, b in pairs},
        **{f"{k} cpu s": _stats(v) for k, v in cpu.items()},
        **{f"{a} / {b} (cpu)": _ratios(cpu, a, b) for a, b in pairs},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mixed-gb", type=float, default=0.5)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--cases", type=int, default=6)
    parser.add_argument("--corpora", nargs="+", default=["relu", "mixed"])
    parser.add_argument("--keep", default=None, help="work folder, kept (corpora reused)")
    args = parser.parse_args(argv)
    from onnx_arrow.corpus import FolderSource, write_store

    with workdir(args.keep, "bench-case-read-") as work:
        for name in args.corpora:
            if name == "relu":
                src = relu_corpus(work / "relu")
            else:
                src = large_corpus(work / f"mixed-{args.mixed_gb}", args.mixed_gb)
            store_path = work / f"{name}-{time.time_ns()}.parquet"
            start = time.perf_counter()
            write_store(FolderSource(src), store_path)
            took = time.perf_counter() - start
            result = measure(src, store_path, args.rounds, args.cases)
            store_path.unlink()
            print(json.dumps({"corpus": name, "import s": took, **result}, indent=1))
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
