"""An actual output value as a ``.pb`` file of the type the model declares, as onnx's
test-data writer writes it: what a report keeps of an actual value and what ``run``
writes to its store."""

from __future__ import annotations

from typing import Any

import numpy as np
from onnx import ModelProto, OptionalProto, SequenceProto, TypeProto, numpy_helper

from onnx_arrow.core.model import declared_type

__all__ = ["serialized"]


def serialized(model: ModelProto | None, k: int, value: Any, name: str | None) -> bytes | str:
    """Actual output ``k`` of ``model`` as a ``.pb`` of the type the model declares (named
    ``name``), serialized as onnx's test-data writer does, or why it cannot be (a str)."""
    type_proto = None if model is None else declared_type(model, "output", k)
    try:
        return bytes(_serialize(value, name or "", type_proto).SerializeToString())
    except Exception as exc:  # whatever numpy_helper raises on a value it cannot take
        return f"the output cannot be serialized as declared: {type(exc).__name__}: {exc}"


def _serialize(value: Any, name: str, type_proto: TypeProto | None) -> Any:
    which = None if type_proto is None else type_proto.WhichOneof("value")
    if which == "map_type" or (which is None and isinstance(value, dict)):
        return numpy_helper.from_dict(value, name)
    if which == "sequence_type" or (which is None and isinstance(value, list)):
        assert type_proto is None or which == "sequence_type"
        elem = None if type_proto is None else _container_dtype(type_proto.sequence_type.elem_type)
        return numpy_helper.from_list(list(value), name, elem)
    if which == "optional_type":
        assert type_proto is not None
        elem = _container_dtype(type_proto.optional_type.elem_type)
        return numpy_helper.from_optional(
            value if value is None or isinstance(value, list | dict) else np.asarray(value),
            name,
            elem,
        )
    return numpy_helper.from_array(np.asarray(value), name)


def _container_dtype(elem: TypeProto) -> int | None:
    """The ``SequenceProto`` / ``OptionalProto`` element type a declared type needs."""
    return {
        "tensor_type": SequenceProto.TENSOR,
        "sequence_type": SequenceProto.SEQUENCE,
        "map_type": SequenceProto.MAP,
        "optional_type": OptionalProto.OPTIONAL,
    }.get(elem.WhichOneof("value") or "")
