"""An actual value kept as a ``.pb`` of the declared type, or why it is not."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
from compare_helpers import stated_store
from onnx import ModelProto

from onnx_arrow import compare as cmp


def test_an_actual_value_that_cannot_be_kept_says_so(tmp_path: Path) -> None:
    path = stated_store(tmp_path, None)

    def a_sequence(model: ModelProto, inputs: dict[str, Any]) -> list[Any]:
        return [[object()]]  # where the model declares a tensor: nothing numpy_helper takes

    (row,) = cmp.compare(path, a_sequence).itertuples()
    assert row.status == "shape_mismatch"
    assert pd.isna(row.actual)
    assert "the actual value is not kept: the output cannot be serialized as declared" in (
        row.detail
    )
