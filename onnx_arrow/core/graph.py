"""What an ONNX model declares: its fed inputs and outputs, their types, its operators and opsets.

Pure readers of ``onnx.ModelProto`` and ``onnx.TypeProto``, shared by the corpus, the
comparison, the pandas catalog, the Jupyter views and the command line, so that all read
a model alike: which graph values test data feeds (:func:`graph_values`), the type declared
at a slot (:func:`declared_type`), a type in ONNX's notation (:func:`onnx_type_string`,
:func:`declared_type_text`), the operators (:func:`op_types`) and the opsets
(:func:`opsets`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from onnx_arrow.core.dtypes import DTYPES

if TYPE_CHECKING:
    from onnx import ModelProto, TypeProto, ValueInfoProto

__all__ = [
    "declared_type",
    "declared_type_text",
    "graph_values",
    "onnx_type_string",
    "op_types",
    "opsets",
]


def graph_values(model: ModelProto, io: str) -> list[ValueInfoProto]:
    """The graph values test data feeds or expects: for ``"input"`` the graph inputs that
    are not initializers (older models list their weights among the inputs; onnx's test
    runner feeds ``input_K.pb`` to the K-th of the others), for ``"output"`` the outputs."""
    if io != "input":
        return list(model.graph.output)
    weights = {t.name for t in model.graph.initializer}
    weights |= {t.values.name for t in model.graph.sparse_initializer}
    return [v for v in model.graph.input if v.name not in weights]


def declared_type(model: ModelProto | None, io: str, index: int) -> TypeProto | None:
    """The type the model declares for its ``io`` number ``index`` (see
    :func:`graph_values`), if it has one."""
    if model is None:
        return None
    values = graph_values(model, io)
    if index >= len(values) or not values[index].HasField("type"):
        return None
    return values[index].type


def op_types(model: ModelProto) -> tuple[str, ...]:
    """The sorted distinct ``op_type`` of the nodes of the model's main graph."""
    return tuple(sorted({node.op_type for node in model.graph.node}))


def opsets(model: ModelProto) -> str:
    """The opsets a model imports, ``ai.onnx 21, ai.onnx.ml 3``; ``(none)`` if none."""
    text = ", ".join(f"{o.domain or 'ai.onnx'} {o.version}" for o in model.opset_import)
    return text or "(none)"


# --- types in words ----------------------------------------------------------------------


def onnx_type_string(type_proto: TypeProto) -> str:
    """ONNX's own notation of a value type: ``seq(tensor(float))``, ``map(int64,tensor(float))``."""
    which = type_proto.WhichOneof("value")
    if which == "tensor_type":
        return f"tensor({_elem_name(type_proto.tensor_type.elem_type)})"
    if which == "sparse_tensor_type":
        return f"sparse_tensor({_elem_name(type_proto.sparse_tensor_type.elem_type)})"
    if which == "sequence_type":
        return f"seq({onnx_type_string(type_proto.sequence_type.elem_type)})"
    if which == "optional_type":
        return f"optional({onnx_type_string(type_proto.optional_type.elem_type)})"
    if which == "map_type":
        key = _elem_name(type_proto.map_type.key_type)
        return f"map({key},{onnx_type_string(type_proto.map_type.value_type)})"
    return "undefined"


def declared_type_text(type_proto: TypeProto) -> str:
    """:func:`onnx_type_string` with the declared dims: ``tensor(float) [N, 3]``."""
    text = onnx_type_string(type_proto)
    if type_proto.WhichOneof("value") == "tensor_type":
        tensor = type_proto.tensor_type
        if tensor.HasField("shape"):
            dims = [
                str(d.dim_value) if d.HasField("dim_value") else d.dim_param or "?"
                for d in tensor.shape.dim
            ]
            text += f" [{', '.join(dims)}]"
        else:
            text += " (any shape)"
    return text


def _elem_name(elem_type: int) -> str:
    row = DTYPES.get(elem_type)
    return row.name.lower() if row is not None else f"undefined({elem_type})"
