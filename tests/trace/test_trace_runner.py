"""Tracing a runtime through files (``trace --runner``): the outputs declared without a
type are named to the runner ({untyped}), the value a runner cannot write is named with
its node and cause, and a planted bug is found where it was planted."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import onnx
import pytest
from compare_helpers import cli
from onnx import TensorProto, helper

from onnx_arrow.compare import CommandRunner
from onnx_arrow.corpus import Store
from onnx_arrow.errors import RunnerError, TraceError
from onnx_arrow.trace import plan_trace, read_trace, read_trace_metadata, read_value, trace

ROOT = Path(__file__).resolve().parents[2]
NODE_EXAMPLE = ROOT / "examples" / "runners" / "onnxruntime-node"
#: onnxruntime through files, writing each output by its declared type (and those
#: {untyped} lists as computed); ``--leaky-relu`` plants a bug.
ORT_RUNNER = f"{sys.executable} {Path(__file__).parent / 'runners' / 'ort_runner.py'}"
SQUEEZENET = "light/light_squeezenet"


def untyped_output_model() -> onnx.ModelProto:
    """x -> Abs -> y (declared) and Neg -> z (declared by name alone)."""
    graph = helper.make_graph(
        [helper.make_node("Abs", ["x"], ["y"]), helper.make_node("Neg", ["x"], ["z"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2]), onnx.ValueInfoProto(name="z")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


def test_untyped_names_the_outputs_declared_without_a_type(tmp_path: Path) -> None:
    import numpy as np

    # the command shows the file on its stderr, which the error quotes
    runner = CommandRunner("sh -c 'cat \"$0\" >&2; exit 3' {untyped} {model}")
    with pytest.raises(RunnerError, match=r"exited with status 3; its stderr ends:\n1$"):
        runner(untyped_output_model(), {"x": np.array([1, -2], np.float32)})


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--runner", "run {model} {untypd}"], "--runner: the command 'run {model} {untypd}'"),
        (["--runner", "run {model}", "--backend", "reference"], "not allowed with argument"),
        (["--backend", "reference", "--timeout", "5"], "--timeout applies to --runner"),
        (["--runner", "run {model}", "--timeout", "-1"], "--timeout -1.0 is not a number"),
        (["--runner", "run {model}", "--runtime", "tract 0.21"], "spell it NAME==VERSION"),
    ],
)
def test_a_bad_runner_option_is_a_usage_error(tmp_path: Path, args: list[str], says: str) -> None:
    code, _, err = cli("trace", str(tmp_path / "s.parquet"), "--case", "c", *args)
    assert code == 2
    assert says in err


def test_the_runtime_given_is_recorded_and_said(store: Store, tmp_path: Path) -> None:
    out, case = tmp_path / "t.parquet", "node/test_gemm_default_scalar_bias"
    found = trace(store, case, "reference", out, runtime="tract==0.21.13")
    assert found.metadata["backend"]["runtime"] == "tract"
    assert found.metadata["backend"]["runtime_version"] == "0.21.13"
    assert read_trace_metadata(out)["backend"]["runtime_given"] is True
    code, said, err = cli(
        "trace", str(store.path), "--case", case, "--backend", "reference",
        "--runtime", "tract==0.21.13", "--out", str(tmp_path / "c.parquet"),
    )  # fmt: skip
    assert code == 0, err
    assert "runtime tract==0.21.13" in said


# --- real models through real runners (slow: a runtime's process per run) -------------


@pytest.fixture(scope="module")
def light(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("runner") / "light.parquet"
    code, _, err = cli(
        "import", "--case", SQUEEZENET, "--case", "light/light_inception_v1", str(path)
    )
    assert code == 0, err
    return path


@pytest.mark.slow
def test_a_runner_told_nothing_fails_on_the_untyped_value_and_is_told_which(
    light: Path, tmp_path: Path
) -> None:
    pytest.importorskip("onnxruntime")
    plan = plan_trace(Store(light).model(SQUEEZENET))
    (untyped,) = [v for v in plan.values if plan.types.get(v) is None]
    node = plan.nodes[plan.producer[untyped]]
    runner = CommandRunner(f"{ORT_RUNNER} {{model}} {{inputs}} {{outputs}}")
    with pytest.raises(TraceError) as info:
        trace(light, SQUEEZENET, runner, tmp_path / "t.parquet")
    said = str(info.value)
    assert said.startswith(
        f"backend runner cannot give value {untyped!r} (output 1 of node #{node.position} "
        f"{node.name} (Dropout), exposed as a graph output with no type"
    )
    assert "through {untyped}" in said
    assert f"NotRepresentableError: {untyped}: no type is declared" in said
    assert "smaller --chunk" not in said
    assert not (tmp_path / "t.parquet").exists()


@pytest.mark.slow
def test_trace_through_a_runner_names_the_node_whose_divergence_is_checked(
    light: Path, tmp_path: Path
) -> None:
    pytest.importorskip("onnxruntime")
    out = tmp_path / "t.parquet"
    runner = f"{ORT_RUNNER} {{model}} {{inputs}} {{outputs}} {{untyped}}"
    code, text, err = cli(
        "trace", str(light), "--case", SQUEEZENET, "--runner", runner, "--out", str(out)
    )
    assert code == 1, err
    assert "traced    106 values of 105 nodes, in 2 chunks" in text
    # the Softmax, whose input agrees and whose output diverges, not the Dropout mask
    # (bool from onnx, float from onnxruntime) that nothing the case checks reads
    assert "first divergent node: #104 n65 (Softmax)" in text
    assert "diverging apart, reaching no output the case checks: 1 value: r62" in text
    assert "  the first made by node #100 n61 (Dropout)" in text
    rows, meta = read_trace(out, ["value", "side", "dtype"])
    assert meta["backend"]["name"] == "runner"
    assert meta["verdict"]["checked"] == ["softmaxout_1"]
    # the untyped mask written as onnxruntime computed it
    mask = dict(
        zip(
            rows.column("value").to_pylist()[::2],
            rows.column("dtype").to_pylist()[::2],
            strict=True,
        )
    )
    assert mask["r62"] == "FLOAT"
    # the same verdict as onnxruntime in this process
    found = trace(light, SQUEEZENET, "onnxruntime", tmp_path / "ort.parquet")
    assert (found.verdict.position, found.verdict.op_type) == (104, "Softmax")
    assert found.verdict.unchecked == ["r62"]


@pytest.mark.slow
def test_a_planted_bug_in_a_runner_is_found_where_planted(light: Path, tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime")
    out = tmp_path / "t.parquet"
    case = "light/light_inception_v1"
    leaky = CommandRunner(f"{ORT_RUNNER} {{model}} {{inputs}} {{outputs}} {{untyped}} --leaky-relu")
    found = trace(light, case, leaky, out, against="onnxruntime")
    plan = plan_trace(Store(light).model(case))
    # the first Relu whose input holds a negative element, by onnxruntime's values
    planted = next(
        n
        for n in plan.nodes
        if n.op_type == "Relu" and (read_value(out, n.inputs[0], "against") < 0).any()
    )
    verdict = found.verdict
    # the leak grows to 7e20 in the last Gemm, and the Softmax after it saturates as
    # onnxruntime's does: the output the case checks agrees, so the divergence is apart
    assert not verdict.found
    assert verdict.first_apart == f"#{planted.position} {planted.name} (Relu)"
    assert verdict.unchecked[0] == planted.outputs[0]
    diverging = {plan.producer[v] for v in verdict.unchecked}
    assert min(diverging) == planted.position


@pytest.mark.slow
def test_the_onnxruntime_node_runner_traces_as_onnxruntime_does(
    light: Path, tmp_path: Path
) -> None:
    if shutil.which("node") is None:
        pytest.skip("node is not installed (Debian's nodejs; .ci/run installs it)")
    if not (NODE_EXAMPLE / "node_modules" / "onnxruntime-node").is_dir():
        pytest.skip(f"onnxruntime-node is not installed: npm ci --ignore-scripts in {NODE_EXAMPLE}")
    runner = CommandRunner(f"node {NODE_EXAMPLE / 'run.js'} {{model}} {{inputs}} {{outputs}}")
    found = trace(light, SQUEEZENET, runner, tmp_path / "t.parquet")
    assert (found.verdict.position, found.verdict.op_type) == (104, "Softmax")
    assert found.verdict.unchecked == ["r62"]
