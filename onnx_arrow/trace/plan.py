"""What a trace exposes of a model: its nodes in topological order, the values they make
(each a graph output of the model's main graph), the chunks those are exposed in, and
what stays inside a node (the bodies of If, Loop and Scan, and of local functions).

A node's values are its outputs, exposed by adding them as outputs of the main graph:
:meth:`TracePlan.chunk_model` gives the model with one chunk of them as its only outputs,
so a backend holds (and gives) one chunk at a time.  Each output is declared with the
element type ``onnx.shape_inference`` finds for it, without its shape (a backend checks
the shape it makes against the one declared, and inference is not always right about
shapes); a value whose type inference does not find is declared by its name alone, its
type left to the backend (``onnx.reference`` and onnxruntime take that).

A node holding graphs (If, Loop, Scan) is one node of the trace: its outputs are traced,
the values made inside its bodies are not (they exist once per iteration, or for one
branch).  A call of a local function is one node too, its body's values untraced.  The
values read from the enclosing scope by a body are inputs of the node that holds it.
"""

from __future__ import annotations

import copy
import heapq
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import onnx
from onnx import GraphProto, ModelProto, NodeProto, TypeProto, ValueInfoProto

from onnx_arrow.errors import CompareError

__all__ = ["TracePlan", "TracedNode", "plan_trace"]


@dataclass(frozen=True)
class TracedNode:
    """One node of the main graph, at ``position`` in topological order."""

    position: int
    node: NodeProto = field(repr=False)
    #: Every value the node reads: its inputs, then those its bodies read from outside.
    inputs: tuple[str, ...]
    #: Its outputs (an absent optional output, ``""``, is not listed).
    outputs: tuple[str, ...]

    @property
    def name(self) -> str:
        """The node's name, else ``OpType#position``."""
        return self.node.name or f"{self.op_type}#{self.position}"

    @property
    def op_type(self) -> str:
        """The node's op type (``domain::OpType`` outside the default domain)."""
        domain = self.node.domain
        return self.node.op_type if domain in ("", "ai.onnx") else f"{domain}::{self.node.op_type}"


@dataclass
class TracePlan:
    """The nodes of a model in topological order and the values a trace exposes."""

    model: ModelProto = field(repr=False)
    nodes: list[TracedNode]
    #: The element type inference found for each value (None where it found none).
    types: dict[str, TypeProto | None] = field(repr=False)
    #: What is not traced, one sentence each: bodies of If / Loop / Scan, local functions.
    untraced: list[str]
    #: The node making each traced value.
    producer: dict[str, int] = field(repr=False)
    #: The graph's inputs and initializers: fed, the same on both sides.
    fed: frozenset[str] = field(repr=False)

    @property
    def values(self) -> list[str]:
        """Every traced value, node by node in topological order."""
        return [v for n in self.nodes for v in n.outputs]

    def chunks(self, size: int) -> Iterator[list[str]]:
        """The traced values, ``size`` at a time (a node's outputs never split)."""
        if size < 1:
            raise CompareError(f"chunk is {size}; expected a number of values of 1 or more")
        chunk: list[str] = []
        for node in self.nodes:
            if chunk and len(chunk) + len(node.outputs) > size:
                yield chunk
                chunk = []
            chunk.extend(node.outputs)
        if chunk:
            yield chunk

    def output_info(self, name: str) -> ValueInfoProto:
        """How value ``name`` is declared as a graph output: its element type as inference
        found it, without its shape, else its name alone."""
        found = self.types.get(name)
        info = ValueInfoProto(name=name)
        if found is not None:
            info.type.CopyFrom(_without_shape(found))
        return info

    def chunk_model(self, names: Sequence[str]) -> ModelProto:
        """The model with ``names`` as its only outputs (the caller's model is unchanged)."""
        model = ModelProto()
        model.CopyFrom(self.model)
        del model.graph.output[:]
        model.graph.output.extend(self.output_info(n) for n in names)
        return model


def plan_trace(model: ModelProto) -> TracePlan:
    """The plan of a trace of ``model``: its nodes sorted, its values typed.

    Raises
    ------
    CompareError
        If the main graph's nodes do not form a graph (a node reads a value nothing
        makes, or the nodes read each other in a circle), or a value is written twice
        (by two nodes, twice by one node, or by a node and as a graph input or
        initializer): a model's values are each written once.
    """
    graph = model.graph
    fed = {i.name for i in graph.input} | {t.name for t in graph.initializer}
    fed |= {t.values.name for t in graph.sparse_initializer}
    local = {(f.domain, f.name) for f in model.functions}
    untraced: list[str] = []
    raw: list[tuple[NodeProto, tuple[str, ...], tuple[str, ...]]] = []
    for node in graph.node:
        inputs = list(dict.fromkeys(i for i in node.input if i))
        inner = 0
        for attribute in node.attribute:
            for body in _graphs_of(attribute):
                inner += _made_inside(body)
                inputs.extend(n for n in _outer_reads(body) if n not in inputs)
        outputs = tuple(o for o in node.output if o)
        label = node.name or node.op_type
        if inner:
            untraced.append(
                f"{node.op_type} {label!r}: the {inner} values made inside its "
                "bodies (traced as the node's outputs only)"
            )
        if (node.domain, node.op_type) in local:
            untraced.append(
                f"{node.op_type} {label!r}: the values inside the local function "
                f"{node.domain}::{node.op_type} (traced as the call's outputs only)"
            )
        raw.append((node, tuple(inputs), outputs))
    _check_one_writer(raw, fed)
    order = _topological(raw, fed)
    nodes = [TracedNode(k, raw[i][0], raw[i][1], raw[i][2]) for k, i in enumerate(order)]
    producer = {v: n.position for n in nodes for v in n.outputs}
    return TracePlan(model, nodes, _inferred_types(model), untraced, producer, frozenset(fed))


def _check_one_writer(
    raw: list[tuple[NodeProto, tuple[str, ...], tuple[str, ...]]], fed: set[str]
) -> None:
    """Refuse a value of the main graph written more than once, naming it and both
    writers (a trace would compare one writer's value under the other's name)."""
    writer: dict[str, int] = {}
    for k, (node, _, outputs) in enumerate(raw):
        for name in outputs:
            first = writer.setdefault(name, k)
            if name in fed:
                what = "is fed (a graph input or initializer) and is written by"
                by = _node_label(node, k)
            elif first != k:
                what, by = "is written by two nodes,", f"{_node_label(raw[first][0], first)} and"
                by += f" {_node_label(node, k)}"
            elif outputs.count(name) > 1:
                what, by = "is written twice by", _node_label(node, k)
            else:
                continue
            raise CompareError(
                f"value {name!r} {what} {by}: a model writes each value once (SSA), so "
                "the trace could not say whose value it holds; rename one of them"
            )


def _node_label(node: NodeProto, k: int) -> str:
    """``node 'conv1' (Conv, #3 of the graph's nodes)``."""
    named = f"{node.name!r} " if node.name else ""
    return f"node {named}({node.op_type}, #{k} of the graph's nodes)"


def _graphs_of(attribute: onnx.AttributeProto) -> list[GraphProto]:
    if attribute.type == onnx.AttributeProto.GRAPH:
        return [attribute.g]
    if attribute.type == onnx.AttributeProto.GRAPHS:
        return list(attribute.graphs)
    return []


def _made_inside(body: GraphProto) -> int:
    """How many values the nodes of ``body`` (and of its own bodies) make."""
    count = 0
    for node in body.node:
        count += sum(1 for o in node.output if o)
        for attribute in node.attribute:
            count += sum(_made_inside(g) for g in _graphs_of(attribute))
    return count


def _outer_reads(body: GraphProto) -> list[str]:
    """The names ``body`` reads that it does not define: values of the enclosing scope."""
    defined = {i.name for i in body.input} | {t.name for t in body.initializer}
    defined |= {t.values.name for t in body.sparse_initializer}
    reads: list[str] = []
    for node in body.node:
        wanted = [i for i in node.input if i]
        for attribute in node.attribute:
            for inner in _graphs_of(attribute):
                wanted.extend(_outer_reads(inner))
        reads.extend(n for n in wanted if n not in defined and n not in reads)
        defined.update(o for o in node.output if o)
    reads.extend(o.name for o in body.output if o.name not in defined and o.name not in reads)
    return reads


def _topological(
    raw: list[tuple[NodeProto, tuple[str, ...], tuple[str, ...]]], fed: set[str]
) -> list[int]:
    """The nodes' indices in topological order, the graph's own order kept among ready
    nodes (a graph in order stays as it is)."""
    producer = {v: i for i, (_, _, outputs) in enumerate(raw) for v in outputs}
    waiting = [0] * len(raw)
    readers: dict[int, list[int]] = {}
    for i, (node, inputs, _) in enumerate(raw):
        for name in inputs:
            if name in producer:
                waiting[i] += 1
                readers.setdefault(producer[name], []).append(i)
            elif name not in fed:
                raise CompareError(
                    f"node {node.name or node.op_type!r} ({node.op_type}) reads {name!r}, "
                    "which no node makes and the graph neither takes nor holds"
                )
    ready = [i for i, w in enumerate(waiting) if w == 0]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        i = heapq.heappop(ready)
        order.append(i)
        for reader in readers.get(i, ()):
            waiting[reader] -= 1
            if waiting[reader] == 0:
                heapq.heappush(ready, reader)
    if len(order) != len(raw):
        stuck = next(raw[i][0] for i, w in enumerate(waiting) if w)
        raise CompareError(
            f"the nodes read each other in a circle (node {stuck.name or stuck.op_type!r} "
            "among them): a model's graph has no order to trace"
        )
    return order


def _inferred_types(model: ModelProto) -> dict[str, TypeProto | None]:
    """The type shape inference finds for each value of the main graph (None: none)."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=False)
    except Exception:  # inference is help, not a requirement: the backend types the rest
        inferred = model
    graph = inferred.graph
    types: dict[str, TypeProto | None] = {}
    for info in [*graph.value_info, *graph.output]:
        if info.HasField("type") and _elem_known(info.type):
            types[info.name] = info.type
    return types


def _elem_known(t: TypeProto) -> bool:
    which = t.WhichOneof("value")
    if which in ("tensor_type", "sparse_tensor_type"):
        return bool(getattr(t, which).elem_type)
    if which == "sequence_type":
        return _elem_known(t.sequence_type.elem_type)
    if which == "optional_type":
        return _elem_known(t.optional_type.elem_type)
    if which == "map_type":
        return _elem_known(t.map_type.value_type)
    return False


def _without_shape(t: TypeProto) -> TypeProto:
    out = copy.deepcopy(t)
    which = out.WhichOneof("value")
    if which in ("tensor_type", "sparse_tensor_type"):
        getattr(out, which).ClearField("shape")
    elif which == "sequence_type":
        out.sequence_type.elem_type.CopyFrom(_without_shape(out.sequence_type.elem_type))
    elif which == "optional_type":
        out.optional_type.elem_type.CopyFrom(_without_shape(out.optional_type.elem_type))
    elif which == "map_type":
        out.map_type.value_type.CopyFrom(_without_shape(out.map_type.value_type))
    return out
