"""Elements and previews as text: short numbers, cut strings, a bounded preview."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest

from onnx_arrow.jupyter.formats import MAX_STRING, PREVIEW_ELEMENTS, element_text, preview_text


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (True, "True"),
        (np.bool_(False), "False"),
        (1 + 2j, "(1+2j)"),
        (np.complex64(1), "(1+0j)"),
        (7, "7"),
        (np.int8(-3), "-3"),
        (np.uint64(2**64 - 1), str(2**64 - 1)),
        (0.1, "0.1"),
        (np.float32(0.1), "0.1"),  # the float32's shortest repr, not 0.10000000149
        (np.float16(1.5), "1.5"),
        (float("nan"), "nan"),
        (float("-inf"), "-inf"),
        ("ab", "'ab'"),
        (b"\x00x", "b'\\x00x'"),
    ],
)
def test_element_text(value: Any, shown: str) -> None:
    assert element_text(value) == shown


def test_long_strings_and_bytes_are_cut() -> None:
    assert element_text("é" * (MAX_STRING + 1)) == repr("é" * MAX_STRING) + "..."
    assert element_text(b"x" * (MAX_STRING + 5)) == repr(b"x" * MAX_STRING) + "..."
    assert element_text("y" * MAX_STRING) == repr("y" * MAX_STRING)


def test_preview_holds_the_first_elements_in_order_and_says_how_many() -> None:
    shown = preview_text(np.arange(PREVIEW_ELEMENTS + 4).reshape(4, -1))
    expected = ", ".join(str(i) for i in range(PREVIEW_ELEMENTS))
    assert shown == f"[{expected}, ... ({PREVIEW_ELEMENTS + 4} elements)]"
    assert preview_text(np.arange(6.0).reshape(2, 3)) == "[0, 1, 2, 3, 4, 5]"
    assert preview_text(np.arange(5), 2) == "[0, 1, ... (5 elements)]"
    assert preview_text(np.zeros(0)) == "[]"


def test_preview_of_exotic_dtypes_and_strings() -> None:
    assert preview_text(np.array([1.5, np.nan], dtype=ml_dtypes.bfloat16)) == "[1.5, nan]"
    assert preview_text(np.array([1, -3], dtype=ml_dtypes.int4)) == "[1, -3]"
    assert preview_text(np.array(["ab", "c"], dtype=object)) == "['ab', 'c']"
    cut = preview_text(np.array([b"x" * (MAX_STRING + 5)], dtype=object))
    assert cut == "[" + repr(b"x" * MAX_STRING) + "...]"
