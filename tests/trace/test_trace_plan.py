"""The plan of a trace: nodes in topological order, chunks that never split a node, the
values read from inside bodies, what is not traced, and outputs typed by inference."""

from __future__ import annotations

import pytest
from onnx import TensorProto, helper

from onnx_arrow.errors import CompareError
from onnx_arrow.trace import plan_trace

X = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])


def model_of(nodes: list, outputs: list[str], **kw: object) -> object:
    graph = helper.make_graph(
        nodes,
        "g",
        [X],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], **kw)


def test_nodes_out_of_order_are_sorted_the_graph_order_kept_among_ready_ones() -> None:
    nodes = [
        helper.make_node("Neg", ["b"], ["c"], name="third"),
        helper.make_node("Abs", ["x"], ["a"], name="first"),
        helper.make_node("Relu", ["a"], ["b"], name="second"),
        helper.make_node("Split", ["x"], ["s0", "s1"], name="split", num_outputs=2),
    ]
    plan = plan_trace(model_of(nodes, ["c"]))
    assert [n.name for n in plan.nodes] == ["first", "second", "third", "split"]
    assert plan.values == ["a", "b", "c", "s0", "s1"]
    assert plan.producer["s1"] == 3
    assert list(plan.chunks(2)) == [["a", "b"], ["c"], ["s0", "s1"]]
    assert list(plan.chunks(1)) == [["a"], ["b"], ["c"], ["s0", "s1"]]
    with pytest.raises(CompareError, match="chunk is 0"):
        next(plan.chunks(0))


def test_a_chunk_model_declares_the_inferred_element_type_without_shape() -> None:
    nodes = [helper.make_node("Abs", ["x"], ["a"]), helper.make_node("Shape", ["a"], ["s"])]
    plan = plan_trace(model_of(nodes, ["a"]))
    chunk = plan.chunk_model(["a", "s"])
    assert [o.name for o in chunk.graph.output] == ["a", "s"]
    assert [o.type.tensor_type.elem_type for o in chunk.graph.output] == [
        TensorProto.FLOAT,
        TensorProto.INT64,
    ]
    assert not any(o.type.tensor_type.HasField("shape") for o in chunk.graph.output)
    assert [o.name for o in plan.model.graph.output] == ["a"]  # the model itself unchanged


def test_a_value_inference_cannot_type_is_declared_by_name() -> None:
    nodes = [helper.make_node("Custom", ["x"], ["c"], domain="my.domain")]
    model = model_of(nodes, [])
    model.opset_import.append(helper.make_opsetid("my.domain", 1))
    plan = plan_trace(model)
    info = plan.output_info("c")
    assert info.name == "c"
    assert not info.HasField("type")


def test_bodies_are_not_traced_and_their_outer_reads_are_inputs() -> None:
    then = helper.make_graph(
        [helper.make_node("Add", ["a", "x"], ["t"])],
        "then",
        [],
        [helper.make_tensor_value_info("t", TensorProto.FLOAT, [2])],
    )
    other = helper.make_graph(
        [helper.make_node("Identity", ["a"], ["e"])],
        "else",
        [],
        [helper.make_tensor_value_info("e", TensorProto.FLOAT, [2])],
    )
    cond = helper.make_tensor_value_info("cond", TensorProto.BOOL, [])
    nodes = [
        helper.make_node("Abs", ["x"], ["a"]),
        helper.make_node("If", ["cond"], ["y"], name="branch", then_branch=then, else_branch=other),
    ]
    graph = helper.make_graph(
        nodes, "g", [X, cond], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])]
    )
    plan = plan_trace(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]))
    assert plan.nodes[1].inputs == ("cond", "a", "x")
    assert plan.values == ["a", "y"]
    assert plan.untraced == [
        "If 'branch': the 2 values made inside its bodies (traced as the node's outputs only)"
    ]


def test_a_call_of_a_local_function_is_one_node() -> None:
    body = helper.make_function(
        "local", "Twice", ["i"], ["o"], [helper.make_node("Add", ["i", "i"], ["o"])],
        [helper.make_opsetid("", 21)],
    )  # fmt: skip
    nodes = [helper.make_node("Twice", ["x"], ["y"], domain="local", name="call")]
    model = model_of(nodes, ["y"], functions=[body])
    model.opset_import.append(helper.make_opsetid("local", 1))
    plan = plan_trace(model)
    assert plan.values == ["y"]
    assert plan.untraced == [
        "Twice 'call': the values inside the local function local::Twice (traced as the "
        "call's outputs only)"
    ]


def test_a_graph_that_is_not_one_is_refused() -> None:
    with pytest.raises(CompareError, match="reads 'nowhere', which no node makes"):
        plan_trace(model_of([helper.make_node("Abs", ["nowhere"], ["a"])], ["a"]))
    circle = [helper.make_node("Abs", ["b"], ["a"]), helper.make_node("Neg", ["a"], ["b"])]
    with pytest.raises(CompareError, match="in a circle"):
        plan_trace(model_of(circle, ["a"]))


def test_a_value_written_twice_is_refused_with_both_writers() -> None:
    twice = [
        helper.make_node("Abs", ["x"], ["a"], name="abs"),
        helper.make_node("Neg", ["x"], ["a"]),
    ]
    with pytest.raises(CompareError, match=r"'a' is written by two nodes, node 'abs' \(Abs, #0"):
        plan_trace(model_of(twice, ["a"]))
    with pytest.raises(CompareError, match=r"'x' is fed \(a graph input or initializer\)"):
        plan_trace(model_of([helper.make_node("Abs", ["x"], ["x"])], ["x"]))
    with pytest.raises(CompareError, match=r"'a' is written twice by node \(Split, #0"):
        plan_trace(model_of([helper.make_node("Split", ["x"], ["a", "a"], num_outputs=2)], ["a"]))
