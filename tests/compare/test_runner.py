"""CommandRunner: a command per data set through files, with real commands (Python scripts,
POSIX tools and, where installed, Node.js with onnxruntime-node)."""

from __future__ import annotations

import os
import pickle
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from compare_helpers import cli
from onnx import TensorProto, helper

from onnx_arrow import compare
from onnx_arrow.compare import CommandRunner, CompareError, RunnerError
from onnx_arrow.compare.backends import describe_backend
from onnx_arrow.corpus import NodeSuiteSource, Store, write_store
from onnx_arrow.errors import BackendTimeoutError

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "runners" / "onnxruntime-node"
PY = sys.executable

#: A runner of onnx's reference evaluator through files: MODEL INPUTS OUTPUTS.
REFERENCE_RUNNER = """\
import pathlib, sys
import onnx
import numpy as np
from onnx import numpy_helper
from onnx.reference import ReferenceEvaluator
from onnx_arrow.core.model import graph_values, value_message

READ = {
    "tensor_type": (onnx.TensorProto, numpy_helper.to_array),
    "sequence_type": (onnx.SequenceProto, numpy_helper.to_list),
    "map_type": (onnx.MapProto, numpy_helper.to_dict),
    "optional_type": (onnx.OptionalProto, numpy_helper.to_optional),
}

def as_str(v):
    if isinstance(v, np.ndarray) and v.dtype == object:
        return np.array([x.decode() if isinstance(x, bytes) else x for x in v.flat],
                        dtype=object).reshape(v.shape)
    return [as_str(x) for x in v] if isinstance(v, list) else v

model = onnx.load(sys.argv[1])
inputs, outputs = pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
feed = {}
for k, info in enumerate(graph_values(model, "input")):
    path = inputs / f"input_{k}.pb"
    if path.exists():
        cls, read = READ[info.type.WhichOneof("value")]
        feed[info.name] = as_str(read(cls.FromString(path.read_bytes())))
values = ReferenceEvaluator(model).run(None, feed)
for k, (info, value) in enumerate(zip(graph_values(model, "output"), values)):
    message = value_message(value, info.name, info.type)
    (outputs / f"output_{k}.pb").write_bytes(message.SerializeToString())
"""


def _abs_model(ir_version: int | None = None) -> Any:
    graph = helper.make_graph(
        [helper.make_node("Abs", ["x"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    if ir_version is not None:
        model.ir_version = ir_version
    return model


X = np.array([-1.0, 2.0, -3.0], np.float32)


def script(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The folder the runner's temporary folders go to, to see that they are removed."""
    import tempfile

    folder = tmp_path / "scratch"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def _processes_with(marker: str) -> list[int]:
    """Processes given ``marker`` as an argument of its own (zombies aside): the commands
    a test runs, not onnx-arrow's processes, whose --runner argument names it inside."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().decode().split("\0")
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if marker in argv and stat[stat.rindex(")") + 2] != "Z":
            found.append(int(entry.name))
    return found


# --- the command template --------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "says"),
    [
        ("", "the command is empty"),
        ("run {model} '{inputs}", "does not split into words"),
        ("run {model} {inputz}", "names {inputz}; the placeholders are {model}, {inputs}"),
        ("run {model!r}", "names {model!r}"),
        ("run {model:>9}", "names {model:>9}"),
        ("run {} {model}", "names {}"),
        ("run {model} }", "a brace that opens or closes nothing"),
        ("run {inputs} {outputs}", "names neither {model} nor {case}"),
    ],
)
def test_a_bad_command_is_refused_up_front(command: str, says: str) -> None:
    with pytest.raises(CompareError) as info:
        CommandRunner(command)
    assert says in str(info.value)


@pytest.mark.parametrize("timeout", [0, -1.0, float("inf"), float("nan"), "5"])
def test_a_bad_timeout_is_refused(timeout: Any) -> None:
    with pytest.raises(CompareError, match="number of seconds above 0"):
        CommandRunner("run {model}", timeout=timeout)


def test_placeholders_literal_braces_and_relative_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "run.js").write_text("")
    runner = CommandRunner("node tools/run.js --model={model} '{{x}}' {case} ./tools/go")
    assert runner.placeholders == ("model", "case")
    # an existing relative path is made absolute (the command runs in a temporary
    # folder); a program given with a '/' too, a name looked up on PATH is left alone
    assert runner.words[:2] == ["node", str(tmp_path / "tools" / "run.js")]
    assert runner.words[2:4] == ["--model={model}", "{{x}}"]
    assert runner.words[-1] == "./tools/go"  # does not exist: left as given
    assert CommandRunner("./tools/x {model}").words[0] == str(tmp_path / "tools" / "x")


def test_a_runner_pickles_and_says_what_it_runs() -> None:
    runner = CommandRunner(f"{PY} run.py {{model}}", timeout=3)
    again = pickle.loads(pickle.dumps(runner))
    assert again == runner
    assert hash(again) == hash(runner)
    assert again != CommandRunner(f"{PY} run.py {{model}}")
    assert describe_backend(runner) == {"name": "runner", "runs": f"{PY} run.py '{{model}}'"}
    assert "timeout=3" in repr(runner)


# --- one data set ----------------------------------------------------------------------


def test_the_classic_layout_is_written_and_the_outputs_read_as_declared(
    tmp_path: Path, scratch: Path
) -> None:
    # a command given {case} only writes its outputs beside the inputs
    body = (
        "import pathlib, shutil, sys\n"
        "case = pathlib.Path(sys.argv[1])\n"
        "assert (case / 'model.onnx').is_file(), 'no model'\n"
        "data = case / 'test_data_set_0'\n"
        "assert sorted(p.name for p in data.iterdir()) == ['input_0.pb'], 'layout'\n"
        "assert pathlib.Path.cwd().parent == case.parent.parent, 'cwd'\n"
        "shutil.copy(data / 'input_0.pb', data / 'output_0.pb')\n"
    )
    copy = script(tmp_path, "copy.py", body)
    out = CommandRunner(f"{PY} {copy} {{case}}")(_abs_model(), {"x": X})
    assert len(out) == 1
    assert out[0].dtype == np.float32
    np.testing.assert_array_equal(out[0], X)
    assert list(scratch.iterdir()) == []  # the temporary folder is gone


def test_an_output_of_no_declared_type_is_read_as_a_tensor(tmp_path: Path, scratch: Path) -> None:
    model = _abs_model()
    model.graph.output[0].ClearField("type")
    body = "import shutil, sys; shutil.copy(sys.argv[1] + '/input_0.pb', sys.argv[2])"
    command = (
        f"{PY} {script(tmp_path, 'copy.py', body)} {{inputs}} {{outputs}}/output_0.pb {{model}}"
    )
    np.testing.assert_array_equal(CommandRunner(command)(model, {"x": X})[0], X)


def test_the_reference_evaluator_through_files_reports_as_in_process(
    tmp_path: Path, store: Store
) -> None:
    runner = CommandRunner(f"{PY} {script(tmp_path, 'ref.py', REFERENCE_RUNNER)} "
                           "{model} {inputs} {outputs}")  # fmt: skip
    cases = [
        "node/test_abs",
        "node/test_cast_FLOAT_to_BFLOAT16",
        "node/test_sequence_insert_at_back",
        "node/test_optional_get_element_sequence",
        "node/test_string_concat",
        "node/test_scatter_without_axis",
    ]
    through_files = compare.compare(store, runner, cases=cases).to_pandas()
    in_process = compare.compare(store, compare.reference_backend, cases=cases).to_pandas()
    columns = ["case", "index", "status", "dtype_actual", "shape_actual", "max_abs_error"]
    assert through_files[columns].equals(in_process[columns])
    assert set(through_files["status"]) == {"match", "error"}
    error = through_files.loc[through_files["status"] == "error", "error"].item()
    # the command's failure, with the end of its stderr: the evaluator's own words
    assert error.startswith("RunnerError: the command exited with status 1; its stderr ends:")
    assert "Scatter" in error
    assert through_files.attrs["onnx_arrow"]["backend"] == describe_backend(runner)


@pytest.mark.parametrize(
    ("body", "error", "says"),
    [
        (
            "import sys; sys.stderr.write('first\\n' + 'boom\\n' * 30); sys.exit(3)",
            RunnerError,
            "the command exited with status 3; its stderr ends:\n" + "\n".join(["boom"] * 20),
        ),
        ("import os, signal; os.kill(os.getpid(), signal.SIGKILL)", RunnerError, "SIGKILL"),
        ("pass", RunnerError, "status 0 but output_0.pb (y) is missing; its stderr is empty"),
        (
            "import pathlib, sys; (pathlib.Path(sys.argv[2]) / 'output_0.pb')"
            ".write_bytes(b'\\xff\\xff\\xff')",
            RunnerError,
            "output_0.pb (y) does not decode as the model declares it, tensor(float) (",
        ),
        (
            "import os, sys; os.symlink('/etc/hostname', os.path.join(sys.argv[2], 'output_0.pb'))",
            RunnerError,
            "output_0.pb (y): cannot open (Too many levels of symbolic links); write each",
        ),
    ],
    ids=["exit-status", "signal", "missing", "undecodable", "symlink"],
)
def test_a_failed_command_is_the_data_sets_error_with_its_stderr(
    tmp_path: Path, scratch: Path, body: str, error: type[Exception], says: str
) -> None:
    command = f"{PY} {script(tmp_path, 'fail.py', body)} {{model}} {{outputs}}"
    with pytest.raises(error) as info:
        CommandRunner(command)(_abs_model(), {"x": X})
    assert says in str(info.value)
    assert "first" not in str(info.value)  # the tail only
    assert list(scratch.iterdir()) == []


def test_a_program_that_does_not_exist(scratch: Path) -> None:
    with pytest.raises(RunnerError, match="cannot start 'no-such-runner-here'"):
        CommandRunner("no-such-runner-here {model}")(_abs_model(), {"x": X})


def test_an_input_the_model_does_not_declare_is_refused(scratch: Path) -> None:
    with pytest.raises(CompareError, match="input 'z' is not an input the model declares"):
        CommandRunner("true {model}")(_abs_model(), {"z": X})


def test_a_timeout_kills_the_command_and_what_it_started(tmp_path: Path, scratch: Path) -> None:
    marker = f"onnx-arrow-runner-test-{os.getpid()}-timeout"
    body = (
        "import subprocess, sys, time\n"
        f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)', '{marker}'])\n"
        "sys.stderr.write('started\\n'); sys.stderr.flush()\n"
        "time.sleep(60)\n"
    )
    command = f"{PY} {script(tmp_path, 'slow.py', body)} {{model}} {marker}"
    start = time.monotonic()
    with pytest.raises(BackendTimeoutError, match="ran longer than 1 s") as info:
        CommandRunner(command, timeout=1)(_abs_model(), {"x": X})
    assert time.monotonic() - start < 30
    assert "started" in str(info.value)
    assert _processes_with(marker) == []
    assert list(scratch.iterdir()) == []


def test_compares_deadline_kills_a_runner_without_a_timeout_of_its_own(
    tmp_path: Path, store: Store, scratch: Path
) -> None:
    marker = f"onnx-arrow-runner-test-{os.getpid()}-deadline"
    body = "import sys, time; sys.stderr.write('waiting\\n'); sys.stderr.flush(); time.sleep(60)"
    command = f"{PY} {script(tmp_path, 'wait.py', body)} {{model}} {marker}"
    df = compare.compare(
        store, CommandRunner(command), cases=["node/test_abs"], timeout=1
    ).to_pandas()
    assert df["status"].tolist() == ["error"]
    error = df["error"].item()
    assert error.startswith("BackendTimeoutError: the backend ran longer than 1 s; the command")
    assert error.endswith("its stderr ends:\nwaiting")
    assert _processes_with(marker) == []
    assert list(scratch.iterdir()) == []


def test_what_the_command_leaves_running_is_killed(tmp_path: Path, scratch: Path) -> None:
    marker = f"onnx-arrow-runner-test-{os.getpid()}-leftover"
    body = (
        "import shutil, subprocess, sys\n"
        f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)', '{marker}'])\n"
        "shutil.copy(sys.argv[1] + '/input_0.pb', sys.argv[2] + '/output_0.pb')\n"
    )
    command = f"{PY} {script(tmp_path, 'bg.py', body)} {{inputs}} {{outputs}} {{model}}"
    CommandRunner(command)(_abs_model(), {"x": X})
    deadline = time.monotonic() + 5
    while _processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _processes_with(marker) == []


#: A runner of Identity, fast: the input file copied as the output file.
COPY = "cp {inputs}/input_0.pb {case}/test_data_set_0/output_0.pb"


def test_the_runner_runs_on_worker_processes(store: Store) -> None:
    cases = ["node/test_abs", "node/test_identity_opt"]
    here = compare.compare(store, CommandRunner(COPY), cases=cases).to_pandas()
    there = compare.compare(store, CommandRunner(COPY), cases=cases, jobs=2, timeout=60).to_pandas()
    columns = ["case", "status", "max_abs_error"]
    assert here[columns].equals(there[columns])
    assert here["status"].tolist() == ["mismatch", "match"]  # abs(x) is not x


# --- the command line ------------------------------------------------------------------


def test_compare_and_run_take_a_runner(tmp_path: Path, store: Store) -> None:
    runner = COPY
    case = ["--case", "test_identity_opt"]
    code, out, _ = cli("compare", str(store.path), *case, "--runner", runner)
    assert code == 0
    assert "match           1" in out
    actual = tmp_path / "actual.parquet"
    code, out, _ = cli("run", str(store.path), str(actual), *case, "--runner", runner)
    assert code == 0
    assert f"runner {runner}" in out
    code, out, _ = cli("compare", str(store.path), "--actual", str(actual), *case)
    assert code == 0
    assert "match           1" in out


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--runner", "run {model} {inputz}"], "--runner: the command 'run {model} {inputz}'"),
        (["--runner", "run {model}", "--backend", "reference"], "not allowed with argument"),
        (["--runner", "run {model}", "--actual", "a.parquet"], "not allowed with argument"),
        (["--runner", "run {model}", "--backend-logs"], "--backend-logs applies to --backend"),
        (["--runner", "run {model}", "--providers", "CPUExecutionProvider"], "apply to --backend"),
    ],
)
def test_a_bad_runner_option_is_a_usage_error(store: Store, args: list[str], says: str) -> None:
    code, _, err = cli("compare", str(store.path), *args)
    assert code == 2
    assert says in err


def _interrupted(
    tmp_path: Path, store: Store, name: str, commands: int, *args: str
) -> tuple[Path, str]:
    """``compare --runner`` (a command that sleeps) of ``store`` with ``args``, in a new
    session, interrupted as a terminal's Ctrl-C does once its ``commands`` commands run:
    its temporary folder and the marker its commands carry, once it exited with 130."""
    marker = f"onnx-arrow-runner-test-{os.getpid()}-{name}"
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch), "PYTHONPATH": str(ROOT)}
    command = f"{PY} -c 'import time; time.sleep(60)' {{model}} {marker}"
    process = subprocess.Popen(
        [PY, "-m", "onnx_arrow", "compare", str(store.path), *args, "--runner", command],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while len(_processes_with(marker)) < commands and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(_processes_with(marker)) == commands, "the commands did not start"
        os.killpg(process.pid, signal.SIGINT)  # a terminal's Ctrl-C: the foreground group
        _, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 130, err
    return scratch, marker


def test_ctrl_c_kills_the_command_and_removes_its_folder(tmp_path: Path, store: Store) -> None:
    scratch, marker = _interrupted(tmp_path, store, "ctrl-c", 1, "--case", "test_abs")
    assert _processes_with(marker) == []
    assert list(scratch.iterdir()) == []


def _run_once(scratch: Path) -> None:
    """A runner called once in a new process whose temporary folder is ``scratch``."""
    code = (
        "from onnx import TensorProto, helper\n"
        "from onnx_arrow.compare import CommandRunner, RunnerError\n"
        "g = helper.make_graph([], 'g', [], [helper.make_tensor_value_info("
        "'y', TensorProto.FLOAT, [1])])\n"
        "try:\n"
        "    CommandRunner('true {model}')(helper.make_model(g), {})\n"
        "except RunnerError as exc:\n"
        "    assert 'output_0.pb (y) is missing' in str(exc), exc\n"
    )
    env = {**os.environ, "TMPDIR": str(scratch), "PYTHONPATH": str(ROOT)}
    subprocess.run([PY, "-c", code], env=env, check=True, timeout=120)


def test_folders_of_processes_killed_outright_are_removed_by_the_next(tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    ended = subprocess.Popen(["true"])
    ended.wait()
    left = scratch / f"onnx-arrow-runner-{ended.pid}-abc"  # its process is gone
    (left / "case" / "test_data_set_0").mkdir(parents=True)
    (left / "case" / "model.onnx").write_bytes(b"")
    running = scratch / f"onnx-arrow-runner-{os.getpid()}-abc"  # this one runs
    running.mkdir()
    other = scratch / "onnx-arrow-runner-notes"
    other.mkdir()
    _run_once(scratch)
    assert sorted(p.name for p in scratch.iterdir()) == sorted([running.name, other.name])


def test_ctrl_c_of_jobs_2_leaves_no_command_running(tmp_path: Path, store: Store) -> None:
    scratch, marker = _interrupted(
        tmp_path, store, "jobs", 2, "--case", "test_abs", "--case", "test_add", "--jobs", "2"
    )
    deadline = time.monotonic() + 5  # the kernel kills them as their workers die
    while _processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _processes_with(marker) == []
    # the workers were killed outright, in their data sets' folders: the next run removes them
    _run_once(scratch)
    assert list(scratch.iterdir()) == []


# --- onnxruntime-node, the example runner ----------------------------------------------


@pytest.fixture(scope="module")
def node_runner() -> CommandRunner:
    if shutil.which("node") is None:
        pytest.skip("node is not installed (Debian's nodejs; .ci/run installs it)")
    if not (EXAMPLE / "node_modules" / "onnxruntime-node").is_dir():
        pytest.skip(
            f"onnxruntime-node is not installed: npm install --ignore-scripts in {EXAMPLE} "
            "(.ci/run does it)"
        )
    return CommandRunner(f"node {EXAMPLE / 'run.js'} {{model}} {{inputs}} {{outputs}}")


@pytest.fixture(scope="module")
def node_store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    wanted = {
        "node/test_abs",
        "node/test_add_uint8",
        "node/test_attention_4d_fp16",  # float16 in and out
        "node/test_string_concat",
        "node/test_argmax_default_axis_example",  # int64 output
        "node/test_sequence_insert_at_back",  # a sequence: not in onnxruntime-node
        "node/test_bitshift_right_uint8",  # IR 14, opset 28: past onnxruntime-node 1.30
    }
    cases = [c for c in NodeSuiteSource() if c.name in wanted]
    assert len(cases) == len(wanted)
    path = tmp_path_factory.mktemp("node") / "node.parquet"
    write_store(cases, path)
    return Store(path)


def test_onnxruntime_node_agrees_with_onnxruntime(
    node_runner: CommandRunner, node_store: Store
) -> None:
    pytest.importorskip("onnxruntime")
    runner = compare.compare(node_store, node_runner).to_pandas()
    ort = compare.compare(node_store, compare.onnxruntime_backend).to_pandas()
    by_case = dict(zip(runner["case"], runner["status"], strict=True))
    assert by_case == {
        "node/test_abs": "match",
        "node/test_add_uint8": "match",
        "node/test_argmax_default_axis_example": "match",
        "node/test_attention_4d_fp16": "match",
        "node/test_string_concat": "match",
        "node/test_sequence_insert_at_back": "error",
        "node/test_bitshift_right_uint8": "error",
    }
    # where the runner passes, so does onnxruntime in this process, output by output
    assert (ort.loc[runner["status"] == "match", "status"] == "match").all()
    errors = dict(zip(runner["case"], runner["error"], strict=True))
    assert "onnxruntime-node takes tensors only" in errors["node/test_sequence_insert_at_back"]
    assert "Unsupported model IR version: 14" in errors["node/test_bitshift_right_uint8"]
    assert "reads models up to IR 13" in errors["node/test_bitshift_right_uint8"]


def test_onnxruntime_node_reports_an_element_type_it_does_not_take(
    node_runner: CommandRunner, scratch: Path
) -> None:
    graph = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.BFLOAT16, [2])],
        [helper.make_tensor_value_info("y", TensorProto.BFLOAT16, [2])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    import ml_dtypes

    with pytest.raises(RunnerError, match="onnxruntime-node takes no BFLOAT16 tensors"):
        node_runner(model, {"x": np.ones(2, ml_dtypes.bfloat16)})


def test_onnxruntime_node_through_the_command_line(
    node_runner: CommandRunner, node_store: Store
) -> None:
    command = f"node {EXAMPLE / 'run.js'} {{model}} {{inputs}} {{outputs}}"
    code, out, _ = cli("compare", str(node_store.path), "--case", "test_abs", "--runner", command)
    assert code == 0
    assert "match           1" in out
