"""Benchmark: the cost of portable tables' per-row digests, side by side, on the node suite.

Every value of the installed onnx's node test suite (inputs and outputs of every data set,
as the corpus writes them) goes into one table, a column per declared type (``to_arrow``
of the values declared alike).  The two sides, taken in turns for ``--rounds`` (5) rounds:

* baseline: ``to_portable(table)`` (no digests);
* onnx-arrow: ``to_portable(table, digest=True)`` (a BLAKE2b-128 of each row's value as
  one serialized message, in a digest column beside each typed column).

For each side: writing (``to_portable`` and ``pq.write_table`` into memory, zstd), reading
(``pq.read_table`` and ``from_portable``, which checks every digest), both together, and
the Parquet file's size; the full round trip through ``from_arrow`` of every column is
timed too, since that is what a user of the values does.  A time is the median of the
rounds; a ratio is digest over no digest of the same round (median, min, max).  The load
average is printed before and after: the machine may be shared.  Nothing is asserted.

Run::

    python benchmarks/bench_digest.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import time
import warnings
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

import onnx_arrow


def node_suite_tables() -> list[pa.Table]:
    """The node suite's values, one single-column table per declared type."""
    from onnx.backend.test.loader import load_node_model_tests

    from onnx_arrow.core.model import value_message

    groups: dict[bytes, tuple[Any, list[Any]]] = defaultdict(lambda: (None, []))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = load_node_model_tests()
    for case in cases:
        graph = case.model.graph
        for inputs, outputs in case.data_sets:
            for values, infos in ((inputs, graph.input), (outputs, graph.output)):
                for value, info in zip(values, infos, strict=False):
                    key = info.type.SerializeToString()
                    declared, messages = groups[key]
                    messages.append(value_message(value, info.name, info.type))
                    groups[key] = (info.type, messages)
    tables = []
    for declared, messages in groups.values():
        tables.append(pa.table({"v": onnx_arrow.to_arrow(messages, declared)}))
    return tables


def _time(f: Callable[[], Any]) -> float:
    start = time.perf_counter()
    f()
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    tables = node_suite_tables()
    rows = sum(t.num_rows for t in tables)
    print(f"node suite: {rows} values in {len(tables)} columns (one per declared type)")
    print(f"load average before: {os.getloadavg()[0]:.2f} (1 min), {os.cpu_count()} cores")

    files: dict[bool, list[bytes]] = {}

    def write(digest: bool) -> None:
        out = []
        for t in tables:
            sink = io.BytesIO()
            pq.write_table(onnx_arrow.to_portable(t, digest=digest), sink, compression="zstd")
            out.append(sink.getvalue())
        files[digest] = out

    def read(digest: bool) -> None:
        for blob in files[digest]:
            onnx_arrow.from_portable(pq.read_table(pa.BufferReader(blob)))

    def messages(digest: bool) -> None:
        for blob in files[digest]:
            back = onnx_arrow.from_portable(pq.read_table(pa.BufferReader(blob)))
            onnx_arrow.from_arrow(back["v"])

    times: dict[tuple[str, bool], list[float]] = defaultdict(list)
    for _ in range(args.rounds):
        for digest in (False, True):  # the sides in turns
            times["write", digest].append(_time(lambda d=digest: write(d)))
            times["read", digest].append(_time(lambda d=digest: read(d)))
            times["read + from_arrow", digest].append(_time(lambda d=digest: messages(d)))
    print(f"load average after: {os.getloadavg()[0]:.2f} (1 min)\n")

    print(f"{'measure':<34} {'no digest':>11} {'digest':>11} {'ratio (min..max)':>22}")
    for measure in ("write", "read", "read + from_arrow"):
        base, ours = times[measure, False], times[measure, True]
        ratios = [o / b for o, b in zip(ours, base, strict=True)]
        print(
            f"{measure:<34} {statistics.median(base):>9.3f} s {statistics.median(ours):>9.3f} s "
            f"{statistics.median(ratios):>8.2f}x ({min(ratios):.2f}..{max(ratios):.2f})"
        )
    base_rt = [w + r for w, r in zip(times["write", False], times["read", False], strict=True)]
    ours_rt = [w + r for w, r in zip(times["write", True], times["read", True], strict=True)]
    ratios = [o / b for o, b in zip(ours_rt, base_rt, strict=True)]
    print(
        f"{'write + read':<34} {statistics.median(base_rt):>9.3f} s "
        f"{statistics.median(ours_rt):>9.3f} s {statistics.median(ratios):>8.2f}x "
        f"({min(ratios):.2f}..{max(ratios):.2f})"
    )
    size = {d: sum(len(b) for b in files[d]) for d in (False, True)}
    print(
        f"{'Parquet size (zstd)':<34} {size[False] / 2**20:>7.2f} MiB "
        f"{size[True] / 2**20:>7.2f} MiB {size[True] / size[False]:>8.3f}x"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
