"""Benchmark: in-memory tensors to Arrow and back, data in a typed field or in ``raw_data``.

``--rows`` (50,000) FLOAT ``[3, 4]`` tensors are built twice: with ``helper.make_tensor``
(the data in ``float_data``, as onnx's helper stores it) and with ``numpy_helper.from_array``
(the data in ``raw_data``).  Measured in one process, the sides taken in turns for
``--rounds`` (5) rounds, each figure the median with its min and max:

* ``to_arrow``: ``onnx_arrow.to_arrow(messages)`` against what a user writes without it, a
  ``numpy_helper.to_array`` loop, ``np.stack`` and ``pa.FixedShapeTensorArray``;
* exact ``to_arrow``: ``to_arrow(messages, exact=True)`` against the same loop;
* exact ``from_arrow``: ``from_arrow`` of the exact column (every message back byte for byte,
  checked) against ``helper.make_tensor`` per row of the stacked array (typed) or
  ``numpy_helper.from_array`` per row (raw_data).

Then serialized tensors, each read from its bytes (``--blobs`` (20,000) of each form, the
same rounds in turns): ``decode_value(blob, "tensor")`` (what ``read_pb`` decodes with:
protobuf's parser for small tensors whose data is in a typed field, in the bytes protobuf
writes, the wire codec for the rest) and ``decode_tensor_fast(blob, canonical=True)``
(what import decodes a tensor file with first) against ``TensorProto.FromString`` and
``numpy_helper.to_array``, on FLOAT ``[3, 4]`` in ``float_data``, INT64 ``[3, 4]`` in
``int64_data``, INT32 ``[3, 4]`` in ``int32_data`` and DOUBLE ``[3, 4]`` in
``double_data``, and on one FLOAT ``[4M]`` tensor in ``float_data`` (a view of its bytes,
read ``--rounds`` times); the values are checked equal.

Then exact ``from_arrow`` of every family of dtypes whose elements sit in a typed field
(``--family-rows`` (20,000) ``[3, 4]`` tensors of each, made by ``helper.make_tensor(name,
dtype, dims, vals)`` from the rows of one numpy array; the same rounds in turns): FLOAT and
COMPLEX64 in ``float_data``, DOUBLE and COMPLEX128 in ``double_data``, INT32, INT8/UINT8,
INT16/UINT16 and BOOL, FLOAT16, BFLOAT16, FLOAT8E4M3FN and INT4/UINT4 in ``int32_data``,
INT64 in ``int64_data``, UINT32 and UINT64 in ``uint64_data``, STRING in ``string_data``.
``from_arrow`` of the exact column (every message back byte for byte, checked) against
``helper.make_tensor`` per row of the same numpy array, and, for context, against
``numpy_helper.from_array`` per row (which writes ``raw_data``, so other messages).

Ratios are onnx-arrow over the baseline of the same round; nothing is asserted about time.

Run::

    python benchmarks/bench_typed.py [--rows 50000] [--blobs 20000] [--family-rows 20000] \
        [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa

import onnx_arrow


def _time(f: Callable[[], Any]) -> float:
    start = time.perf_counter()
    f()
    return time.perf_counter() - start


def main() -> int:
    from onnx import TensorProto, helper, numpy_helper

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--blobs", type=int, default=20_000)
    parser.add_argument("--family-rows", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print(f"load: {_uptime()}")
    rng = np.random.default_rng(0)
    data = rng.standard_normal((args.rows, 3, 4)).astype(np.float32)
    forms = {
        "float_data": [helper.make_tensor("", TensorProto.FLOAT, [3, 4], a) for a in data],
        "raw_data": [numpy_helper.from_array(a) for a in data],
    }
    makers = {
        "float_data": lambda a: helper.make_tensor("", TensorProto.FLOAT, [3, 4], a),
        "raw_data": numpy_helper.from_array,
    }
    status = 0
    print(f"{args.rows} FLOAT [3, 4] tensors, {args.rounds} rounds in turns;", end=" ")
    print("seconds median [min-max]")
    print(f"{'measure':<34} {'baseline':>24} {'onnx-arrow':>24} {'ratio':>16}")
    for form, messages in forms.items():
        exact = onnx_arrow.to_arrow(messages, exact=True)
        back = onnx_arrow.from_arrow(exact)
        if [m.SerializeToString() for m in back] != [m.SerializeToString() for m in messages]:
            print(f"{form}: from_arrow did not give the messages back byte for byte")
            status = 1
        stacked = np.stack([numpy_helper.to_array(m) for m in messages])
        make = makers[form]

        def loop(messages: list[Any] = messages) -> Any:
            arrays = [numpy_helper.to_array(m) for m in messages]
            return pa.FixedShapeTensorArray.from_numpy_ndarray(np.stack(arrays))

        pairs: dict[str, tuple[Callable[[], Any], Callable[[], Any]]] = {
            f"to_arrow, {form}": (loop, lambda m=messages: onnx_arrow.to_arrow(m)),
            f"to_arrow exact, {form}": (
                loop,
                lambda m=messages: onnx_arrow.to_arrow(m, exact=True),
            ),
            f"from_arrow exact, {form}": (
                lambda s=stacked, f=make: [f(a) for a in s],
                lambda e=exact: onnx_arrow.from_arrow(e),
            ),
        }
        for measure, (baseline, ours) in pairs.items():
            times: dict[str, list[float]] = {"baseline": [], "ours": []}
            ratios = []
            for _ in range(args.rounds):
                b, o = _time(baseline), _time(ours)
                times["baseline"].append(b)
                times["ours"].append(o)
                ratios.append(o / b)
            cells = [
                f"{statistics.median(t):.3f} [{min(t):.3f}-{max(t):.3f}]" for t in times.values()
            ]
            ratio = f"{statistics.median(ratios):.2f}x [{min(ratios):.2f}-{max(ratios):.2f}]"
            print(f"{measure:<34} {cells[0]:>24} {cells[1]:>24} {ratio:>16}")
    status |= serialized(args.blobs, args.rounds)
    return status | families(args.family_rows, args.rounds)


def _row(measure: str, baseline: Callable[[], Any], ours: Callable[[], Any], rounds: int) -> None:
    times: dict[str, list[float]] = {"baseline": [], "ours": []}
    ratios = []
    for _ in range(rounds):
        b, o = _time(baseline), _time(ours)
        times["baseline"].append(b)
        times["ours"].append(o)
        ratios.append(o / b)
    cells = [f"{statistics.median(t):.4f} [{min(t):.4f}-{max(t):.4f}]" for t in times.values()]
    ratio = f"{statistics.median(ratios):.2f}x [{min(ratios):.2f}-{max(ratios):.2f}]"
    print(f"{measure:<40} {cells[0]:>24} {cells[1]:>24} {ratio:>16}")


def serialized(count: int, rounds: int) -> int:
    """Serialized tensors read from their bytes: ``decode_value`` against upb and
    ``numpy_helper``; 1 if any value differs."""
    from onnx import TensorProto, helper, numpy_helper

    from onnx_arrow.core.containers import decode_value
    from onnx_arrow.core.direct import decode_tensor_fast

    rng = np.random.default_rng(1)
    forms = {
        "float_data": (TensorProto.FLOAT, lambda: rng.standard_normal(12).astype(np.float32)),
        "int64_data": (TensorProto.INT64, lambda: rng.integers(-1000, 1000, 12)),
        "int32_data": (TensorProto.INT32, lambda: rng.integers(-1000, 1000, 12)),
        "double_data": (TensorProto.DOUBLE, lambda: rng.standard_normal(12)),
    }
    status = 0
    print(f"serialized tensors, {count} of each form, {rounds} rounds in turns")
    for form, (dtype, values) in forms.items():
        blobs = [
            helper.make_tensor("x", dtype, [3, 4], values()).SerializeToString()
            for _ in range(count)
        ]

        def baseline(blobs: list[bytes] = blobs) -> list[Any]:
            return [numpy_helper.to_array(TensorProto.FromString(b)) for b in blobs]

        def ours(blobs: list[bytes] = blobs) -> list[Any]:
            return [decode_value(b, "tensor", where="x")[0].codes for b in blobs]

        def imported(blobs: list[bytes] = blobs) -> list[Any]:
            return [decode_tensor_fast(b, canonical=True).codes for b in blobs]  # type: ignore[union-attr]

        for side in (ours, imported):
            if any(
                a.reshape(-1).tobytes() != b.tobytes()
                for a, b in zip(baseline(), side(), strict=True)
            ):
                print(f"{form}: the values differ")
                status = 1
        _row(f"decode_value [3, 4] {form}", baseline, ours, rounds)
        _row(f"import's decoder [3, 4] {form}", baseline, imported, rounds)
    large = helper.make_tensor(
        "x", TensorProto.FLOAT, [4 << 20], np.ones(4 << 20, np.float32)
    ).SerializeToString()
    _row(
        "decode_value [4M] float_data",
        lambda: numpy_helper.to_array(TensorProto.FromString(large)),
        lambda: decode_value(large, "tensor", where="x")[0].codes,
        rounds,
    )
    return status


def _family_arrays(rows: int) -> dict[str, tuple[int, np.ndarray[Any, Any]]]:
    """Per family of typed-field dtypes: the ONNX data type and ``rows`` ``[3, 4]`` values."""
    import ml_dtypes
    from onnx import TensorProto

    rng = np.random.default_rng(2)
    normal = rng.standard_normal((rows, 3, 4))

    def ints(low: int, high: int, dtype: Any) -> np.ndarray[Any, Any]:
        drawn = np.uint64 if high > 1 << 63 else np.int64
        return rng.integers(low, high, (rows, 3, 4), dtype=drawn).astype(dtype)

    words = np.array([b"", b"a", b"onnx", b"tensor", "\u00e9t\u00e9".encode()], dtype=object)
    return {
        "FLOAT float_data": (TensorProto.FLOAT, normal.astype(np.float32)),
        "COMPLEX64 float_data": (
            TensorProto.COMPLEX64,
            (normal + 1j * normal[:, ::-1]).astype(np.complex64),
        ),
        "DOUBLE double_data": (TensorProto.DOUBLE, normal),
        "COMPLEX128 double_data": (TensorProto.COMPLEX128, normal + 1j * normal[:, ::-1]),
        "INT32 int32_data": (TensorProto.INT32, ints(-(1 << 31), 1 << 31, np.int32)),
        "INT8 int32_data": (TensorProto.INT8, ints(-128, 128, np.int8)),
        "UINT8 int32_data": (TensorProto.UINT8, ints(0, 256, np.uint8)),
        "INT16 int32_data": (TensorProto.INT16, ints(-(1 << 15), 1 << 15, np.int16)),
        "UINT16 int32_data": (TensorProto.UINT16, ints(0, 1 << 16, np.uint16)),
        "BOOL int32_data": (TensorProto.BOOL, ints(0, 2, bool)),
        "FLOAT16 int32_data": (TensorProto.FLOAT16, normal.astype(np.float16)),
        "BFLOAT16 int32_data": (TensorProto.BFLOAT16, normal.astype(ml_dtypes.bfloat16)),
        "FLOAT8E4M3FN int32_data": (
            TensorProto.FLOAT8E4M3FN,
            normal.astype(ml_dtypes.float8_e4m3fn),
        ),
        "INT4 int32_data": (TensorProto.INT4, ints(-8, 8, ml_dtypes.int4)),
        "UINT4 int32_data": (TensorProto.UINT4, ints(0, 16, ml_dtypes.uint4)),
        "INT64 int64_data": (TensorProto.INT64, ints(-(1 << 63), 1 << 63, np.int64)),
        "UINT32 uint64_data": (TensorProto.UINT32, ints(0, 1 << 32, np.uint32)),
        "UINT64 uint64_data": (TensorProto.UINT64, ints(0, 1 << 64, np.uint64)),
        "STRING string_data": (TensorProto.STRING, rng.choice(words, (rows, 3, 4))),
    }


def families(rows: int, rounds: int) -> int:
    """Exact ``from_arrow`` of each family of typed-field dtypes against
    ``helper.make_tensor`` (and ``numpy_helper.from_array``); 1 if any message differs."""
    from onnx import helper, numpy_helper

    status = 0
    print(f"exact from_arrow, {rows} [3, 4] tensors of each dtype, {rounds} rounds in turns")
    head = f"{'dtype, field':<26} {'make_tensor':>22} {'from_array':>22} {'onnx-arrow':>22}"
    print(f"{head} {'/ make_tensor':>16} {'/ from_array':>16}")
    for family, (dtype, values) in _family_arrays(rows).items():
        made = [helper.make_tensor("t", dtype, [3, 4], v) for v in values]
        exact = onnx_arrow.to_arrow(made, exact=True)
        back = onnx_arrow.from_arrow(exact)
        if [m.SerializeToString() for m in back] != [m.SerializeToString() for m in made]:
            print(f"{family}: from_arrow did not give the messages back byte for byte")
            status = 1
        sides: dict[str, Callable[[], Any]] = {
            "make_tensor": lambda d=dtype, v=values: [
                helper.make_tensor("t", d, [3, 4], a) for a in v
            ],
            "from_array": lambda v=values: [numpy_helper.from_array(a, "t") for a in v],
            "ours": lambda e=exact: onnx_arrow.from_arrow(e),
        }
        times: dict[str, list[float]] = {side: [] for side in sides}
        for _ in range(rounds):
            for side, f in sides.items():
                times[side].append(_time(f))
        cells = [f"{statistics.median(t):.3f} [{min(t):.3f}-{max(t):.3f}]" for t in times.values()]
        ratios = []
        for base in ("make_tensor", "from_array"):
            r = [o / b for o, b in zip(times["ours"], times[base], strict=True)]
            ratios.append(f"{statistics.median(r):.2f}x [{min(r):.2f}-{max(r):.2f}]")
        row = f"{family:<26} {cells[0]:>22} {cells[1]:>22} {cells[2]:>22}"
        print(f"{row} {ratios[0]:>16} {ratios[1]:>16}")
    return status


def _uptime() -> str:
    import subprocess

    return subprocess.run(["uptime"], check=False, capture_output=True, text=True).stdout.strip()


if __name__ == "__main__":
    sys.exit(main())
