"""The repro of a divergence: the node a trace found, alone in a model of its own (its
attributes and bodies, what it reads as graph inputs, the initializers it reads kept, the
model's opset imports and local functions), with the values it read and those the
reference side (B) made, as a classic case folder (``model.onnx``,
``test_data_set_0/input_K.pb`` and ``output_K.pb``): ``onnx-arrow import`` then
``compare --backend A`` reproduces the divergence, and any runtime takes the folder as a
file test.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from onnx import ModelProto, TypeProto, ValueInfoProto, helper

from onnx_arrow.compare.backends import Backend
from onnx_arrow.core.model import dtype_of_numpy, value_message
from onnx_arrow.corpus.tree import write_tree
from onnx_arrow.errors import CompareError, TraceError
from onnx_arrow.trace.exposed import run_model
from onnx_arrow.trace.plan import TracePlan

__all__ = ["check_repro_folder", "node_model", "write_repro"]


def check_repro_folder(folder: str | os.PathLike[str]) -> None:
    """Refuse, before any work, a repro folder that exists and is not an empty folder.

    Raises
    ------
    CompareError
        Saying which.
    """
    path = Path(folder)
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise CompareError(
            "the repro folder exists and is not an empty folder; choose a new or empty one",
            where=str(path),
        )


@dataclass(frozen=True)
class _File:
    path: str
    data: bytes


def node_model(plan: TracePlan, position: int, values: dict[str, Any]) -> ModelProto:
    """Node ``position`` of ``plan`` as a model of its own: what it reads and is not an
    initializer as graph inputs, typed by ``values`` (the values it reads and makes)."""
    source = plan.model
    node = plan.nodes[position]
    initializers = {t.name: t for t in source.graph.initializer}
    inputs = [_info(n, values[n], plan) for n in node.inputs if n not in initializers]
    outputs = [_info(n, values[n], plan) for n in node.outputs]
    graph = helper.make_graph(
        [node.node],
        f"{node.name}_repro",
        inputs,
        outputs,
        initializer=[initializers[n] for n in node.inputs if n in initializers],
    )
    return helper.make_model(
        graph,
        opset_imports=list(source.opset_import),
        producer_name="onnx-arrow trace",
        ir_version=source.ir_version,
        functions=list(source.functions),
    )


def _info(name: str, value: Any, plan: TracePlan) -> ValueInfoProto:
    info = ValueInfoProto(name=name)
    info.type.CopyFrom(_type_of(name, value, plan))
    return info


def _type_of(name: str, value: Any, plan: TracePlan) -> TypeProto:
    """A tensor's type from its value; any other kind's from shape inference."""
    if isinstance(value, np.ndarray | np.generic):
        array = np.asarray(value)
        return helper.make_tensor_type_proto(dtype_of_numpy(array.dtype).onnx, array.shape)
    found = plan.types.get(name)
    if found is None:
        raise TraceError(
            f"value {name!r} is a {type(value).__name__} whose type shape inference does not "
            "find: its repro cannot declare it; declare it in the model (value_info)"
        )
    return found


def write_repro(
    folder: str | os.PathLike[str],
    plan: TracePlan,
    position: int,
    feed: dict[str, Any],
    against: Backend,
    against_name: str,
) -> Path:
    """Write node ``position`` of ``plan`` as a case folder ``folder``: its inputs as
    ``against`` gives them on ``feed`` (the values the two sides agree on), its outputs
    as ``against`` makes them.

    Raises
    ------
    TraceError
        If ``against`` cannot run the model with those values as outputs, or one cannot
        be declared.
    CorpusError
        If ``folder`` exists and is not an empty folder.
    FileWriteError
        If it cannot be written.
    """
    node = plan.nodes[position]
    made = [n for n in node.inputs if n in plan.producer]
    wanted = [*made, *node.outputs]
    got = run_model(
        against, against_name, plan.chunk_model(wanted), feed, f"the values of node {node.name}"
    )
    values = dict(zip(wanted, got, strict=True))
    source_inits = {t.name for t in plan.model.graph.initializer}
    for name in node.inputs:
        if name not in values and name not in source_inits:
            values[name] = feed[name]
    model = node_model(plan, position, values)
    files = [_File("model.onnx", model.SerializeToString())]
    for io, infos in (("input", model.graph.input), ("output", model.graph.output)):
        for k, info in enumerate(infos):
            message = value_message(values[info.name], info.name, info.type)
            files.append(_File(f"test_data_set_0/{io}_{k}.pb", message.SerializeToString()))
    Path(folder).parent.mkdir(parents=True, exist_ok=True)
    write_tree(files, folder, where=os.fspath(folder))
    return Path(folder)
