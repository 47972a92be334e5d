"""One actual value against its expected value: tolerances, NaNs, shapes, dtypes,
containers, strings, integers and the worst element."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from onnx import TensorProto, helper
from store_helpers import one_data_set_case

from onnx_arrow import compare as cmp
from onnx_arrow.compare import similarity
from onnx_arrow.core.dtypes import DTYPES, ArrowKind, DType
from onnx_arrow.corpus import Case, CorpusFile, Store, write_store


def _tiny_store(path: Path, expected: np.ndarray[Any, Any], name: str = "node/test_tiny") -> Store:
    """A one-case store: Identity of a float tensor, with the given expected output."""
    x = np.asarray(expected)
    graph = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    files = [
        *one_data_set_case(name, model, x, x).files,
        CorpusFile("real/thing/data.json", b"{}"),
    ]
    real = Case("real/thing", "real", [files.pop()], None)
    write_store([Case(name, "node", files, files[0].path), real], path)
    return Store(path)


def test_tolerance_nan_shape_dtype(tmp_path: Path) -> None:
    x = np.array([1.0, 2.0, np.nan, 100.0], np.float32)
    tiny = _tiny_store(tmp_path / "t.parquet", x)

    def giving(value: Any) -> cmp.Backend:
        return lambda model, inputs: [value]

    def row(value: Any, **kw: Any) -> Any:
        df = cmp.compare(tiny, giving(value), cases=["node/*"], **kw).to_pandas()
        return df.iloc[0]

    assert row(x).status == "match"
    # within rtol (1e-3 * 100 = 0.1), beyond it
    near = row(x + np.float32(0.05))
    assert near.status == "mismatch"  # 1 and 2 are moved beyond 1e-3 * |e|
    assert near.n_beyond_tolerance == 2
    assert row(x + np.float32(0.05), rtol=0.1).status == "match"
    off = row(np.array([1.0, 2.5, np.nan, 100.0], np.float32))
    assert (off.status, off.max_abs_error, off.n_beyond_tolerance) == ("mismatch", 0.5, 1)
    assert off.max_rel_error == pytest.approx(0.25)
    nan = row(np.array([np.nan, 2.0, np.nan, 100.0], np.float32))
    assert (nan.status, nan.nan_expected, nan.nan_actual) == ("nan_mismatch", 1, 2)
    assert nan.max_abs_error == 0.0
    shape = row(x.reshape(2, 2))
    assert (shape.status, shape.shape_expected, shape.shape_actual) == (
        "shape_mismatch",
        (4,),
        (2, 2),
    )
    dtype = row(x.astype(np.float64))
    assert (dtype.status, dtype.dtype_expected, dtype.dtype_actual) == (
        "dtype_mismatch",
        "FLOAT",
        "DOUBLE",
    )
    assert row([x]).status == "shape_mismatch"
    assert row(None).status == "shape_mismatch"
    # the case without a model is skipped, once
    df = cmp.compare(tiny, giving(x)).to_pandas()
    assert df.status.tolist() == ["match", "skipped"]
    assert df.case.tolist() == ["node/test_tiny", "real/thing"]


def test_containers_strings_ints_compared() -> None:
    def diff(e: Any, a: Any) -> tuple[str, int]:
        d = similarity.compare_value(e, a, 1e-3, 1e-7)
        return d.status, d.beyond

    f = np.array([1.0, 2.0], np.float32)
    assert diff([f, f], [f, f]) == ("match", 0)
    assert diff([f, f], [f]) == ("shape_mismatch", 0)
    assert diff([f, f], [f, f + 1]) == ("mismatch", 2)
    assert diff(None, None) == ("match", 0)
    assert diff({1: f}, {np.int64(1): f}) == ("match", 0)
    assert diff({1: f}, {2: f})[0] == "shape_mismatch"
    strings = np.array([b"a", b"b"], dtype=object)
    assert diff(strings, np.array(["a", "b"], dtype=object)) == ("match", 0)
    assert diff(strings, np.array(["a", "c"], dtype=object)) == ("mismatch", 1)
    ints = np.array([1, 2], np.int64)
    assert diff(ints, ints) == ("match", 0)
    assert diff(np.array([1000000, 2], np.int64), np.array([1000001, 2], np.int64)) == (
        "mismatch",
        1,
    )  # exact, though within rtol
    import ml_dtypes

    b = np.array([1.0, 3.0], ml_dtypes.bfloat16)
    assert diff(b, b) == ("match", 0)
    assert diff(b, np.array([1.0, 3.03125], ml_dtypes.bfloat16)) == ("match", 0)  # 2 ULPs
    e4 = np.array([1.0, 2.0], ml_dtypes.float8_e4m3fn)
    assert diff(e4, np.array([1.0, 2.5], ml_dtypes.float8_e4m3fn)) == ("mismatch", 1)


@pytest.mark.parametrize("row", list(DTYPES.values()), ids=lambda r: r.name)
def test_dtypes_are_compared_by_their_onnx_row(row: DType) -> None:
    dtype = row.numpy
    # what the ml_dtypes names say: int4 / int2 exact, bfloat16 / float8 / 6 / 4 as float32
    exact = dtype.kind in "biu" or (dtype.kind == "V" and dtype.name.startswith(("int", "uint")))
    decoded = dtype.kind == "V" and dtype.name.startswith(
        ("bfloat16", "float8", "float4", "float6")
    )
    assert similarity._exact(dtype) == exact
    if row.arrow_kind in (ArrowKind.BINARY, ArrowKind.COMPLEX):
        return
    codes = np.arange(1 << min(row.bits, 8), dtype=np.uint8)
    values = codes.view(dtype) if dtype.itemsize == 1 else codes.astype(dtype)
    via = values.astype(np.float32) if decoded else values
    assert _same_bits(similarity._as_number(values), via.astype(np.float64))
    if dtype.kind in "fV" and not exact:
        # 2**-7 apart: within the rtol onnx's runner gives bfloat16 (2**-6), and only it
        e = np.ones(1, np.float32).astype(dtype)
        a = np.full(1, 1 + 2**-7, np.float32).astype(dtype)
        if a[0] != e[0]:
            status = similarity.compare_value(e, a, 0.0, 0.0).status
            assert status == ("match" if dtype.name == "bfloat16" else "mismatch")


def _same_bits(a: np.ndarray[Any, Any], b: np.ndarray[Any, Any]) -> bool:
    return a.dtype == b.dtype and a.tobytes() == b.tobytes()


def test_worst_elements_in_containers_nans_integers_strings_and_bfloat16() -> None:
    seq = similarity.compare_value(
        [np.zeros(2, np.float32), np.array([1.0, 2.0], np.float32)],
        [np.zeros(2, np.float32), np.array([1.0, 3.0], np.float32)],
        1e-3,
        1e-7,
    )
    assert seq.worst is not None
    assert seq.worst[1:] == ("[1][1]", "2.0", "3.0")
    nan = similarity.compare_value(
        np.array([1.0, 5.0, 1.0]), np.array([1.0, 9.0, np.nan]), 1e-3, 1e-7
    )
    assert nan.status == "nan_mismatch"
    assert nan.worst is not None
    assert nan.worst[1:] == ("[2]", "1.0", "nan")
    ints = similarity.compare_value(
        np.array([2**62, 7], np.int64), np.array([2**62 + 1, 9], np.int64), 1e-3, 1e-7
    )
    assert ints.worst is not None
    assert ints.worst[1:] == ("[1]", "7", "9")
    text = similarity.compare_value(
        np.array([b"a", b"b"], object), np.array(["a", "c"], object), 0, 0
    )
    assert text.worst is not None
    assert text.worst[1:] == ("[1]", "b'b'", "'c'")
    import ml_dtypes

    bf16 = np.array([1.0, 2.0], ml_dtypes.bfloat16)
    diff = similarity.compare_value(bf16, bf16, 1e-3, 1e-7)
    assert diff.rtol == 2.0**-6
