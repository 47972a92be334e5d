"""Every tensor of the node test suite round-trips byte for byte."""

from __future__ import annotations

import itertools
from collections import Counter

from onnx import TensorProto

import onnx_arrow


def test_node_suite_has_the_expected_size(node_values):
    tensors = [v for v in node_values if v.type.HasField("tensor_type")]
    dtypes = Counter(TensorProto.FromString(v.serialized).data_type for v in tensors)
    assert len({v.case for v in node_values}) > 1800
    assert len(tensors) > 6000
    assert len(dtypes) >= 24


def test_every_node_tensor_round_trips_alone(node_values):
    failures = []
    for v in node_values:
        if not v.type.HasField("tensor_type"):
            continue
        message = TensorProto.FromString(v.serialized)
        for declared in (None, v.type):
            back = onnx_arrow.from_arrow(onnx_arrow.to_arrow([message], declared, exact=True))[0]
            if back.SerializeToString() != v.serialized:
                failures.append((v.case, v.io, v.index, declared is not None))
    assert failures == []


def test_node_tensor_columns_round_trip(node_values):
    """One column per case input/output (any kind), all data sets as rows, typed by the model."""
    from onnx_arrow.core.kinds import message_class
    from onnx_arrow.core.types import kind_of_type

    key = lambda v: (v.case, v.io, v.index)  # noqa: E731
    columns = 0
    for _, group in itertools.groupby(sorted(node_values, key=key), key=key):
        values = list(group)
        cls = message_class(kind_of_type(values[0].type).name)
        messages = [cls.FromString(v.serialized) for v in values]
        array = onnx_arrow.to_arrow(messages, values[0].type, exact=True)
        back = [m.SerializeToString() for m in onnx_arrow.from_arrow(array)]
        assert back == [v.serialized for v in values], values[0].case
        columns += 1
    assert columns > 4000


def test_every_node_sequence_and_optional_round_trips(node_values):
    from onnx_arrow.core.kinds import message_class
    from onnx_arrow.core.types import kind_of_type

    containers = [v for v in node_values if not v.type.HasField("tensor_type")]
    assert len(containers) >= 57
    assert any(v.case == "test_loop16_seq_none" for v in containers)
    failures = []
    for v in containers:
        message = message_class(kind_of_type(v.type).name).FromString(v.serialized)
        for declared in (None, v.type):
            back = onnx_arrow.from_arrow(onnx_arrow.to_arrow([message], declared, exact=True))[0]
            if back.SerializeToString() != v.serialized:
                failures.append((v.case, v.io, v.index, declared is not None))
    assert failures == []
