"""Benchmark: the cost of portable tables' checks of their bits, side by side, on the node suite.

Every value of the installed onnx's node test suite (inputs and outputs of every data set,
as the corpus writes them) goes into one table, a column per declared type (``to_arrow``
of the values declared alike).  Three sides, taken in turns for ``--rounds`` (5) rounds:

* no check: ``to_portable(table)`` with the search for floats left out (the function that
  finds them replaced, here only, by one that finds none): a portable table as written
  before float digests;
* the default: ``to_portable(table)`` (a float digest column beside each typed column that
  holds a NaN or a negative zero: the BLAKE2b-128 of the place and bits of each such float
  of a row, null on rows without one);
* the full digest: ``to_portable(table, digest=True)`` (a BLAKE2b-128 of each row's value as
  one serialized message, in a digest column beside each typed column).

For each side: writing (``to_portable`` and ``pq.write_table`` into memory, zstd), reading
(``pq.read_table`` and ``from_portable``, which checks every digest), both together, and
the Parquet file's size; the full round trip through ``from_arrow`` of every column is
timed too, since that is what a user of the values does.  A time is the median of the
rounds; a ratio is a side over no check in the same round (median, min, max).  The sides
take turns column by column (in a rotated order), so that a shared machine's load falls on
them alike.  The load
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
from onnx_arrow.core import storage
from onnx_arrow.core.value_digests import FLOAT_DIGEST_COLUMN_SUFFIX

#: The three sides, the baseline first.
SIDES = ("no check", "default (float digest)", "full digest")


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
    with_floats = sum(
        1
        for t in tables
        if "v" + FLOAT_DIGEST_COLUMN_SUFFIX in onnx_arrow.to_portable(t).column_names
    )
    print(f"columns with a NaN or a negative zero (a float digest column): {with_floats}")
    print(f"load average before: {os.getloadavg()[0]:.2f} (1 min), {os.cpu_count()} cores")

    files: dict[str, list[bytes]] = {side: [b""] * len(tables) for side in SIDES}

    def portable(t: pa.Table, side: str) -> pa.Table:
        if side == "full digest":
            return onnx_arrow.to_portable(t, digest=True)
        if side == "default (float digest)":
            return onnx_arrow.to_portable(t)
        # no check: to_portable as it was before float digests, their search left out
        found = storage.float_digests_of
        storage.float_digests_of = lambda column: None
        try:
            return onnx_arrow.to_portable(t)
        finally:
            storage.float_digests_of = found

    def write(k: int, side: str) -> None:
        sink = io.BytesIO()
        pq.write_table(portable(tables[k], side), sink, compression="zstd")
        files[side][k] = sink.getvalue()

    def read(k: int, side: str) -> None:
        onnx_arrow.from_portable(pq.read_table(pa.BufferReader(files[side][k])))

    def messages(k: int, side: str) -> None:
        back = onnx_arrow.from_portable(pq.read_table(pa.BufferReader(files[side][k])))
        onnx_arrow.from_arrow(back["v"])

    # The sides in turns column by column (their order rotated from column to column), so
    # that the load of a shared machine falls on the three alike; a round's time of a side
    # is the sum over the columns.
    times: dict[tuple[str, str], list[float]] = defaultdict(list)
    steps = {"write": write, "read": read, "read + from_arrow": messages}
    for _ in range(args.rounds):
        for measure, step in steps.items():
            spent = dict.fromkeys(SIDES, 0.0)
            for k in range(len(tables)):
                for j in range(len(SIDES)):
                    side = SIDES[(k + j) % len(SIDES)]
                    spent[side] += _time(lambda k=k, s=side, f=step: f(k, s))
            for side in SIDES:
                times[measure, side].append(spent[side])
    for side in SIDES:
        times["write + read", side] = [
            w + r for w, r in zip(times["write", side], times["read", side], strict=True)
        ]
    print(f"load average after: {os.getloadavg()[0]:.2f} (1 min)\n")

    base = SIDES[0]
    print(f"{'measure':<20}" + "".join(f"{side:>36}" for side in SIDES))
    for measure in ("write", "read", "read + from_arrow", "write + read"):
        cells = []
        for side in SIDES:
            ours = times[measure, side]
            ratios = [o / b for o, b in zip(ours, times[measure, base], strict=True)]
            cells.append(
                f"{statistics.median(ours):.3f} s {statistics.median(ratios):.2f}x "
                f"({min(ratios):.2f}..{max(ratios):.2f})"
            )
        print(f"{measure:<20}" + "".join(f"{c:>36}" for c in cells))
    size = {side: sum(len(b) for b in files[side]) for side in SIDES}
    print(
        f"{'Parquet size (zstd)':<20}"
        + "".join(f"{f'{size[s]:,} B {size[s] / size[base]:.4f}x':>36}" for s in SIDES)
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
