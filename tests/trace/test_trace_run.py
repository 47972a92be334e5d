"""Tracing a case on two backends: the planted divergence is found at exactly the first
node that makes it, chunks change nothing but memory, and what cannot be traced says so."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pyarrow.compute as pc
import pytest
from onnx import ModelProto
from trace_helpers import Perturbed

from onnx_arrow.compare import reference_backend
from onnx_arrow.corpus import FolderSource, Store, export_store, write_store
from onnx_arrow.errors import CompareError, CorpusError, TraceError
from onnx_arrow.trace import plan_trace, read_trace, trace

LAYER_NORM = "node/test_layer_normalization_4d_axis1_expanded"
LAYER_NORM_18 = "node/test_layer_normalization_default_axis_expanded_ver18"


def first_float_node(path: Path, op_type: str) -> int:
    """The position of the first ``op_type`` node with a float output, by the rows of the
    reference side of a trace."""
    rows, _ = read_trace(path, ["side", "position", "op_type", "dtype"])
    rows = rows.filter(pc.equal(rows.column("side"), "against"))
    found = [
        p
        for p, o, d in zip(
            *(rows.column(c).to_pylist() for c in ("position", "op_type", "dtype")), strict=True
        )
        if o == op_type and d in ("FLOAT", "DOUBLE", "FLOAT16")
    ]
    return min(found)


@pytest.mark.parametrize(
    ("case", "op_type"),
    [
        (LAYER_NORM, "ReduceMean"),
        (LAYER_NORM, "Sub"),
        (LAYER_NORM, "Sqrt"),
        (LAYER_NORM, "Reciprocal"),
        (LAYER_NORM, "Mul"),
        (LAYER_NORM_18, "Add"),
        (LAYER_NORM_18, "Div"),
        (LAYER_NORM_18, "Cast"),
    ],
)
def test_trace_names_exactly_the_first_perturbed_node(
    store: Store, tmp_path: Path, case: str, op_type: str
) -> None:
    out = tmp_path / "t.parquet"
    found = trace(store, case, Perturbed(op_type), out, max_ulp=0, chunk=7)
    expected = first_float_node(out, op_type)
    verdict = found.verdict
    assert verdict.found
    assert (verdict.position, verdict.op_type) == (expected, op_type)
    plan = plan_trace(store.model(case))
    assert verdict.node == plan.nodes[expected].name
    assert all(not v.diverges for v in verdict.inputs)
    assert any(v.diverges and v.max_ulp == 3 for v in verdict.outputs)
    # a divergence it does not explain is another op_type node's own, or follows one
    rows, _ = read_trace(out, ["value", "diverges"])
    diverging = {
        v
        for v, d in zip(*(rows.column(c).to_pylist() for c in rows.column_names), strict=True)
        if d
    }
    for name in verdict.unexplained:
        node = plan.nodes[plan.producer[name]]
        assert node.op_type == op_type or diverging & set(node.inputs)
    assert found.metadata["verdict"] == verdict.to_json()
    assert found.metadata["rule"] == "ulp"


def test_within_the_tolerance_a_few_ulps_are_no_divergence(store: Store, tmp_path: Path) -> None:
    found = trace(store, LAYER_NORM, Perturbed("Sqrt"), tmp_path / "t.parquet")
    assert not found.verdict.found
    assert found.metadata["rule"] == "tolerance"
    rows, _ = read_trace(tmp_path / "t.parquet", ["max_ulp", "status"])
    assert max(rows.column("max_ulp").to_pylist(), key=lambda u: u or 0) >= 3
    assert set(rows.column("status").to_pylist()) == {"match"}


def test_a_big_planted_error_is_found_under_the_tolerance(store: Store, tmp_path: Path) -> None:
    found = trace(store, LAYER_NORM, Perturbed("Sqrt", ulps=200_000), tmp_path / "t.parquet")
    assert found.verdict.op_type == "Sqrt"
    assert found.metadata["rule"] == "tolerance"


def test_chunks_change_memory_not_the_trace(store: Store, tmp_path: Path) -> None:
    one = trace(store, LAYER_NORM, Perturbed("Sqrt"), tmp_path / "a.parquet", chunk=1, max_ulp=0)
    all_ = trace(
        store, LAYER_NORM, Perturbed("Sqrt"), tmp_path / "b.parquet", chunk=1000, max_ulp=0
    )
    assert one.metadata["chunks"] == one.metadata["values"] > all_.metadata["chunks"] == 1
    assert one.verdict == all_.verdict
    a, _ = read_trace(tmp_path / "a.parquet")
    b, _ = read_trace(tmp_path / "b.parquet")
    assert a.equals(b)


def test_rows_hold_every_value_on_both_sides(store: Store, tmp_path: Path) -> None:
    out = tmp_path / "t.parquet"
    found = trace(store, LAYER_NORM, "reference", out)
    assert not found.verdict.found
    assert found.verdict.lines() == ["no value diverges"]
    rows, meta = read_trace(out)
    plan = plan_trace(store.model(LAYER_NORM))
    assert rows.num_rows == 2 * len(plan.values) == 2 * meta["values"]
    assert rows.column("value").to_pylist()[::2] == plan.values
    assert rows.column("side").to_pylist()[:2] == ["backend", "against"]
    positions = rows.column("position").to_pylist()
    assert positions == sorted(positions)
    assert meta["against"]["name"] == "reference"


def test_nodes_holding_graphs_are_traced_as_the_model_has_them(
    store: Store, tmp_path: Path
) -> None:
    for case in ("node/test_if", "node/test_loop11", "node/test_scan9_sum"):
        found = trace(store, case, reference_backend, tmp_path / "t.parquet")
        op = store.model(case).graph.node[0].op_type
        assert len(found.metadata["untraced"]) == 1
        assert found.metadata["untraced"][0].startswith(f"{op} ")
        assert "values made inside its bodies" in found.metadata["untraced"][0]
        assert not found.verdict.found
        (tmp_path / "t.parquet").unlink()


def test_a_sequence_is_compared_and_kept_without_data(store: Store, tmp_path: Path) -> None:
    out = tmp_path / "t.parquet"
    found = trace(store, "node/test_if_seq", "reference", out)
    assert not found.verdict.found
    rows, _ = read_trace(out, ["kind", "dtype", "status", "data_float"])
    assert rows.column("kind").to_pylist() == ["sequence", "sequence"]
    assert rows.column("dtype").to_pylist() == [None, None]
    assert rows.column("status").to_pylist() == ["match", "match"]
    assert rows.column("data_float").null_count == 2


def only_graph_outputs(model: ModelProto, inputs: dict[str, Any]) -> list[Any]:
    """A backend that runs a model's first output only, whatever else it declares."""
    return [reference_backend(model, inputs)[0]]


def refuses_intermediates(model: ModelProto, inputs: dict[str, Any]) -> list[Any]:
    """A backend that runs a model's own outputs only (those of the layer norm case)."""
    names = [o.name for o in model.graph.output]
    if not set(names) <= {"Y", "Mean", "InvStdDev"}:
        raise RuntimeError(f"outputs {names} are not the model's")
    return reference_backend(model, inputs)


class RefusesOp:
    """A backend that cannot give the values of ``op_type`` nodes as outputs."""

    def __init__(self, op_type: str) -> None:
        self.op_type = op_type

    def __call__(self, model: ModelProto, inputs: dict[str, Any]) -> list[Any]:
        made = {o for n in model.graph.node if n.op_type == self.op_type for o in n.output}
        asked = [o.name for o in model.graph.output if o.name in made]
        if asked:
            raise RuntimeError(f"no kernel gives {asked[0]!r} as an output")
        return reference_backend(model, inputs)


def never_runs(model: ModelProto, inputs: dict[str, Any]) -> list[Any]:
    raise NotImplementedError("no kernel for this model")


def test_a_backend_that_cannot_run_intermediates_gets_a_clear_error(
    store: Store, tmp_path: Path
) -> None:
    out = tmp_path / "t.parquet"
    plan = plan_trace(store.model(LAYER_NORM))
    with pytest.raises(TraceError, match="cannot give value") as info:
        trace(store, LAYER_NORM, refuses_intermediates, out)
    first = plan.nodes[0]
    assert f"{first.outputs[0]!r} (output 0 of node #0 {first.name} ({first.op_type})" in str(
        info.value
    )
    assert "are not the model's" in str(info.value)
    assert "smaller --chunk" not in str(info.value)
    assert not out.exists()
    with pytest.raises(TraceError, match="gave 1 values for the"):
        trace(store, LAYER_NORM, only_graph_outputs, out)
    assert not out.exists()


def test_the_value_a_backend_cannot_give_is_named_with_its_node(
    store: Store, tmp_path: Path
) -> None:
    plan = plan_trace(store.model(LAYER_NORM))
    sqrt = next(n for n in plan.nodes if n.op_type == "Sqrt")
    with pytest.raises(TraceError) as info:
        trace(store, LAYER_NORM, RefusesOp("Sqrt"), tmp_path / "t.parquet", chunk=1000)
    said = str(info.value)
    assert f"cannot give value {sqrt.outputs[0]!r} (output 0 of node #{sqrt.position}" in said
    assert said.endswith(f"RuntimeError: no kernel gives {sqrt.outputs[0]!r} as an output")
    assert "its type as shape inference finds it" in said
    with pytest.raises(TraceError, match="cannot run the case's model, even with its own"):
        trace(store, LAYER_NORM, never_runs, tmp_path / "t.parquet")


def at_most_four(model: ModelProto, inputs: dict[str, Any]) -> list[Any]:
    """A backend that gives at most four outputs a run."""
    if len(model.graph.output) > 4:
        raise MemoryError(f"{len(model.graph.output)} outputs do not fit")
    return reference_backend(model, inputs)


def test_a_chunk_too_big_together_is_said_so(store: Store, tmp_path: Path) -> None:
    with pytest.raises(TraceError) as info:
        trace(store, LAYER_NORM, at_most_four, tmp_path / "t.parquet", chunk=1000)
    said = str(info.value)
    assert "gives each half of" in said
    assert "but not all of them at once: MemoryError:" in said
    assert said.endswith("outputs do not fit; try a smaller --chunk")
    assert not trace(store, LAYER_NORM, at_most_four, tmp_path / "t.parquet", chunk=4).verdict.found


def test_what_cannot_be_traced_is_refused(store: Store, tmp_path: Path) -> None:
    out = tmp_path / "t.parquet"
    with pytest.raises(CompareError, match="data set 7"):
        trace(store, LAYER_NORM, "reference", out, data_set=7)
    with pytest.raises(CorpusError, match="no case 'node/test_nothing'"):
        trace(store, "node/test_nothing", "reference", out)
    with pytest.raises(CompareError, match="chunk"):
        trace(store, LAYER_NORM, "reference", out, chunk=0)
    with pytest.raises(CompareError, match="rtol"):
        trace(store, LAYER_NORM, "reference", out, rtol=float("nan"))


@pytest.mark.slow
def test_a_planted_divergence_in_a_light_model(store: Store, tmp_path: Path) -> None:
    out = tmp_path / "t.parquet"
    found = trace(store, "light/light_squeezenet", Perturbed("Relu"), out, max_ulp=0)
    relu = first_float_node(out, "Relu")
    # 3 ULPs from each Relu on, absorbed by the reference's Softmax-9 (1.0 for every
    # element on both sides: it normalizes over the last axis, of 1 element, not over the
    # 1000 the opset-9 axis 1 takes in): no divergence reaches the checked output, and the
    # first of those apart is the first Relu
    assert not found.verdict.found
    assert found.verdict.checked == ["softmaxout_1"]
    assert found.verdict.first_apart is not None
    assert found.verdict.first_apart.startswith(f"#{relu} ")
    assert found.verdict.first_apart.endswith("(Relu)")


@pytest.mark.slow
def test_the_reference_against_onnxruntime_on_a_light_model(store: Store, tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime")
    out = tmp_path / "t.parquet"
    found = trace(store, "light/light_squeezenet", "onnxruntime", out)
    rows, meta = read_trace(out, ["status", "max_ulp", "dtype"])
    assert meta["backend"]["name"] == "onnxruntime"
    assert rows.num_rows == 2 * meta["values"]
    # the Softmax whose input agrees and whose output diverges; onnx's Dropout-9 gives its
    # mask as bool, onnxruntime as the input's type (the spec's T), but nothing the case
    # checks reads it: listed apart
    assert (found.verdict.op_type, found.verdict.outputs[0].status) == ("Softmax", "mismatch")
    assert all(not v.diverges for v in found.verdict.inputs)
    assert found.verdict.unchecked == ["r62"]
    assert found.verdict.first_apart is not None
    assert found.verdict.first_apart.endswith("(Dropout)")
    ulps = [u for u in rows.column("max_ulp").to_pylist() if u is not None]
    assert max(ulps) > 0  # the two runtimes' floats differ, within the tolerance
    assert np.isfinite(meta["seconds"])


def test_the_ulp_floor_is_compare_s_checked_and_recorded(store: Store, tmp_path: Path) -> None:
    out = tmp_path / "t.parquet"
    found = trace(store, LAYER_NORM, Perturbed("Sqrt"), out, max_ulp=0, ulp_floor=1e-30)
    assert found.metadata["ulp_floor"] == 1e-30
    assert found.verdict.op_type == "Sqrt"  # the floor lets only values near an expected 0 by
    with pytest.raises(CompareError, match="ulp_floor"):
        trace(store, LAYER_NORM, Perturbed("Sqrt"), out, max_ulp=0, ulp_floor=-1.0)


def test_two_nodes_writing_one_value_are_named_not_traced(store: Store, tmp_path: Path) -> None:
    # the layer norm case of the node suite, its Sqrt made to write the value of its Sub
    export_store(store, tmp_path / "all")
    folder = tmp_path / "cases" / "twice"
    shutil.copytree(tmp_path / "all" / LAYER_NORM, folder)
    model = onnx.load(folder / "model.onnx")
    sub = next(n for n in model.graph.node if n.op_type == "Sub")
    sqrt = next(n for n in model.graph.node if n.op_type == "Sqrt")
    sqrt.output[0] = sub.output[0]
    (folder / "model.onnx").write_bytes(model.SerializeToString())
    write_store(FolderSource(tmp_path / "cases"), tmp_path / "s.parquet")
    out = tmp_path / "t.parquet"
    with pytest.raises(CompareError) as info:
        trace(tmp_path / "s.parquet", "twice", "reference", out)
    at = list(model.graph.node).index
    assert str(info.value) == (
        f"value {sub.output[0]!r} is written by two nodes, node (Sub, #{at(sub)} of the "
        f"graph's nodes) and node (Sqrt, #{at(sqrt)} of the graph's nodes): a model writes "
        "each value once (SSA), so the trace could not say whose value it holds; rename "
        "one of them"
    )
    assert not out.exists()
