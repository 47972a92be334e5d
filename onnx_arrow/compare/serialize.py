"""An actual output value as a ``.pb`` file of the type the model declares, as onnx's
test-data writer writes it: what a report keeps of an actual value and what ``run``
writes to its store."""

from __future__ import annotations

from typing import Any

import numpy as np
from onnx import ModelProto, TypeProto

from onnx_arrow.core.model import declared_type, value_message

__all__ = ["serialized"]


def serialized(model: ModelProto | None, k: int, value: Any, name: str | None) -> bytes | str:
    """Actual output ``k`` of ``model`` as a ``.pb`` of the type the model declares (named
    ``name``), serialized as onnx's test-data writer does, or why it cannot be (a str).

    The declared type decides the kind of message.  Where the model declares none, an
    ndarray is written as the ``TensorProto`` it is (onnx's runner reads such a file as
    one, and so does import); any other value is not kept (its kind is not guessed from
    its Python type)."""
    type_proto = declared_type(model, "output", k)
    if type_proto is None or type_proto.WhichOneof("value") is None:
        if model is None or k >= len(model.graph.output):
            return f"the model declares no type for output {k}"
        if not isinstance(value, np.ndarray):
            return f"the model declares no type for output {k}, and it is no ndarray"
        type_proto = TypeProto()
        type_proto.tensor_type.SetInParent()  # a tensor of the array's own element type
    try:
        return bytes(value_message(value, name or "", type_proto).SerializeToString())
    except Exception as exc:  # a value not of the declared form, or one numpy_helper refuses
        return f"the output cannot be serialized as declared: {type(exc).__name__}: {exc}"
