"""The verdict: the first node whose outputs diverge while its inputs agree, what it
explains (divergences that follow from its own) and what it does not."""

from __future__ import annotations

from onnx import TensorProto, helper

from onnx_arrow.trace import ValueSummary, Verdict, find_verdict, plan_trace


def chain_plan():
    """x -> a (Abs) -> b (Neg) -> c (Relu); x -> d (Exp) -> e (Log); c + e -> f (Add)."""
    nodes = [
        helper.make_node("Abs", ["x"], ["a"], name="abs"),
        helper.make_node("Neg", ["a"], ["b"], name="neg"),
        helper.make_node("Relu", ["b"], ["c"], name="relu"),
        helper.make_node("Exp", ["x"], ["d"], name="exp"),
        helper.make_node("Log", ["d"], ["e"], name="log"),
        helper.make_node("Add", ["c", "e"], ["f"], name="add"),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("f", TensorProto.FLOAT, [2])],
    )
    return plan_trace(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]))


def summaries(diverging: set[str]) -> dict[str, ValueSummary]:
    return {
        v: ValueSummary(v, "mismatch" if v in diverging else "match", v in diverging, max_ulp=3)
        for v in "abcdef"
    }


def test_no_divergence() -> None:
    verdict = find_verdict(chain_plan(), summaries(set()))
    assert not verdict.found
    assert verdict.lines() == ["no value diverges"]


def test_the_first_node_whose_inputs_agree_and_what_it_explains() -> None:
    verdict = find_verdict(chain_plan(), summaries({"b", "c", "d", "f"}))
    assert (verdict.position, verdict.node, verdict.op_type) == (1, "neg", "Neg")
    assert [v.name for v in verdict.inputs] == ["a"]
    assert [v.name for v in verdict.outputs] == ["b"]
    assert verdict.explains == ["c", "f"]
    assert verdict.unexplained == []
    assert verdict.unchecked == ["d"]  # Exp diverges on its own, and Log agrees again
    assert verdict.diverging == 4
    assert verdict.lines()[0] == "first divergent node: #1 neg (Neg)"
    assert Verdict.from_json(verdict.to_json()) == verdict


def test_a_fed_input_always_agrees() -> None:
    verdict = find_verdict(chain_plan(), summaries({"a", "b", "c", "f"}))
    assert verdict.node == "abs"
    assert verdict.inputs == [ValueSummary("x", "match", False, fed=True)]
    assert "fed (the same on both sides)" in verdict.lines()[1]


def test_a_divergence_at_the_last_node_explains_nothing() -> None:
    plan = chain_plan()
    found = summaries({"f"})
    verdict = find_verdict(plan, found)
    assert verdict.node == "add"
    assert verdict.explains == []


def test_a_divergence_on_its_own_path_to_the_output_is_not_explained() -> None:
    verdict = find_verdict(chain_plan(), summaries({"b", "c", "d", "e", "f"}))
    assert verdict.node == "neg"
    assert verdict.explains == ["c", "f"]
    assert verdict.unexplained == ["d", "e"]
    assert verdict.unchecked == []


def test_the_first_divergence_that_reaches_no_checked_output_is_listed_apart() -> None:
    # Abs diverges first, but Neg agrees again: the node is Log, whose divergence reaches f
    verdict = find_verdict(chain_plan(), summaries({"a", "e", "f"}))
    assert (verdict.node, verdict.explains, verdict.unchecked) == ("log", ["f"], ["a"])
    assert verdict.checked == ["f"]
    assert verdict.lines()[-2:] == [
        "diverging apart, reaching no output the case checks: 1 value: a",
        "  the first made by node #0 abs (Abs)",
    ]
    assert Verdict.from_json(verdict.to_json()) == verdict


def test_no_divergence_reaching_a_checked_output_names_no_node() -> None:
    verdict = find_verdict(chain_plan(), summaries({"a", "d"}))
    assert not verdict.found
    assert verdict.unchecked == ["a", "d"]
    assert verdict.lines() == [
        "no divergence reaches an output the case checks (f)",
        "diverging apart, reaching no output the case checks: 2 values: a, d",
        "  the first made by node #0 abs (Abs)",
    ]
    # an output the case does not check is not one a divergence must reach
    assert not find_verdict(chain_plan(), summaries({"a", "b", "c", "f"}), checked=[]).found
