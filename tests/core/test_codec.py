"""The element codec: exact both ways for every code of every dtype, on the dtype table only."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from onnx_arrow.core import codec
from onnx_arrow.core.dtypes import DTYPES, ArrowKind, DType
from onnx_arrow.errors import NotRepresentableError

WHOLE = [r for r in DTYPES.values() if r.arrow_kind is not ArrowKind.BINARY]


def every_code(row: DType) -> np.ndarray:
    """Every code of a dtype of at most 16 bits (every bit pattern, BOOL's 0 and 1 only),
    else a spread of them."""
    if row.arrow_kind is ArrowKind.BOOL8:
        return np.array([0, 1], np.uint8).view(row.numpy)
    if row.numpy.itemsize <= 2 and row.arrow_kind is not ArrowKind.COMPLEX:
        width = np.uint8 if row.numpy.itemsize == 1 else np.uint16
        patterns = np.arange(1 << (8 * row.numpy.itemsize), dtype=width)
        if row.bits < 8:
            patterns = patterns[patterns < (1 << row.bits)]
        return patterns.view(row.numpy)
    raw = np.random.default_rng(row.onnx).integers(0, 256, 64 * row.numpy.itemsize, np.uint8)
    return raw.view(row.numpy)


@pytest.mark.parametrize("row", WHOLE, ids=[r.name for r in WHOLE])
def test_storage_gives_every_code_back(row: DType) -> None:
    codes = every_code(row)
    storage = codec.codes_to_storage(codes, row)
    assert storage.dtype == row.arrow_storage
    back = codec.storage_to_codes(storage, row)
    assert back.dtype == row.numpy
    assert back.view(np.uint8).tobytes() == codes.view(np.uint8).tobytes()


def test_the_codec_needs_the_dtype_table_only() -> None:
    tree = ast.parse(Path(codec.__file__).read_text(encoding="utf-8"))
    own = {
        node.module
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("onnx_arrow")
    }
    assert own == {"onnx_arrow.core.dtypes", "onnx_arrow.errors"}


def test_strings_decode_in_one_pass_and_name_the_bad_element() -> None:
    codes = np.array([b"ok", "caf\u00e9".encode(), b"\xff"], dtype=object)
    assert codec.decode_strings(codes[:2]).tolist() == ["ok", "caf\u00e9"]
    with pytest.raises(NotRepresentableError, match=r"STRING element 2 .* strings='bytes'"):
        codec.decode_strings(codes, where="row 0")


def test_a_bool8_byte_other_than_0_and_1_is_the_true_it_stands_for() -> None:
    row = DTYPES[9]
    storage = np.array([0, 1, 2, 7, -1], np.int8)
    assert codec.storage_to_codes(storage, row).view(np.uint8).tolist() == [0, 1, 1, 1, 1]
    assert codec.storage_to_codes(storage[:2], row).base is not None  # 0 and 1: a view


def _ml_dtypes_tables(row: DType) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A minifloat's tables as ml_dtypes widens its codes (a NaN with a mantissa keeping
    it as its payload): what the store's float32 columns were written with."""
    import ml_dtypes

    codes = np.arange(1 << row.bits, dtype=np.uint8)
    bits = codes.view(row.numpy).astype(np.float32).view(np.uint32).copy()
    nmant = int(ml_dtypes.finfo(row.numpy).nmant)
    mantissa = (codes & ((1 << nmant) - 1)).astype(np.uint32)
    payload = np.isnan(bits.view(np.float32)) & (mantissa != 0)
    bits[payload] = (
        (bits[payload] & np.uint32(0x80000000))
        | np.uint32(0x7F800000)
        | (mantissa[payload] << np.uint32(23 - nmant))
    )
    order = np.argsort(bits, kind="stable")
    return bits, bits[order], codes[order]


@pytest.mark.parametrize(
    "row", [r for r in DTYPES.values() if r.arrow_kind is ArrowKind.MINIFLOAT], ids=str
)
def test_minifloat_codes_decode_as_ml_dtypes_widens_them(row: DType) -> None:
    """Every code of every minifloat, decoded from its fields without ml_dtypes, is the
    float32 ml_dtypes gives (NaN payloads kept), so stores read and write as before."""
    ours, theirs = codec._minifloat_tables(row.onnx), _ml_dtypes_tables(row)
    for a, b in zip(ours, theirs, strict=True):
        assert a.dtype == b.dtype
        assert np.array_equal(a, b)


@pytest.mark.parametrize(
    "row", [r for r in DTYPES.values() if r.arrow_kind is ArrowKind.SUBBYTE_INT], ids=str
)
def test_sub_byte_integer_ranges_are_ml_dtypes_own(row: DType) -> None:
    import ml_dtypes

    info = ml_dtypes.iinfo(row.numpy)
    assert codec._value_range(row.onnx) == (int(info.min), int(info.max))


def test_every_minifloat_row_has_its_fields_and_they_fill_its_bits() -> None:
    """The code fields of each minifloat (codec._MINIFLOATS) cover exactly the dtype
    table's minifloat rows, a sign bit (but for the unsigned), exponent and mantissa
    filling each row's bits."""
    rows = {r.name: r for r in DTYPES.values() if r.arrow_kind is ArrowKind.MINIFLOAT}
    assert set(codec._MINIFLOATS) == set(rows)
    for name, (exp_bits, man_bits, _, special) in codec._MINIFLOATS.items():
        assert (special != "unsigned") + exp_bits + man_bits == rows[name].bits, name
