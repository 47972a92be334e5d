"""Rows of the store: the data columns' numbers, for every dtype of the table."""

from __future__ import annotations

import pytest

from onnx_arrow.corpus.format import DATA_COLUMNS, SCHEMA
from onnx_arrow.corpus.rows import _flat_values


@pytest.mark.parametrize("name", sorted(DATA_COLUMNS))
def test_no_tensors_give_the_data_columns_own_element_type(name: str) -> None:
    item_type = SCHEMA.field(name).type.value_type
    values = _flat_values([], DATA_COLUMNS[name], item_type)
    assert (values.type, len(values)) == (item_type, 0)
