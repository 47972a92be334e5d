"""``onnx-arrow compare`` run as a process, as users run it: what it prints of the outputs
that fail (the worst element, an error's cause), and errors grouped by cause."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import run_cli
from onnx import TensorProto, helper, numpy_helper

#: A runner that gives each input back as the output: Abs of [-1, 2] is [-1, 2], a mismatch.
IDENTITY = (
    "import shutil, sys; shutil.copy(sys.argv[1] + '/input_0.pb', sys.argv[2] + '/output_0.pb')"
)
#: A runner whose runtime lacks the operator: a traceback, its cause on the last line.
LACKS = """\
def kernel(op):
    raise NotImplementedError(f"no kernel for {op!r}")

kernel("Gradient")
"""
#: A runner whose stderr holds what a terminal would act on.
CONTROLS = """\
import sys
sys.stderr.write("ValueError: bad \\x1b[31mred\\x1b[0m\\x07 value\\n")
sys.exit(1)
"""


@pytest.fixture
def cases(corpus: Path, tmp_path: Path) -> Path:
    """The store of node/test_tiny and three copies: four cases of Abs."""
    for n in range(3):
        shutil.copytree(corpus / "node" / "test_tiny", corpus / "node" / f"test_tiny_{n}")
    store = tmp_path / "corpus.parquet"
    assert run_cli("import", str(corpus), str(store)).returncode == 0
    return store


def _runner(tmp_path: Path, text: str) -> str:
    path = tmp_path / "runner.py"
    path.write_text(text)
    return f"{sys.executable} {path} {{inputs}} {{outputs}} {{model}}"


def _section(out: str, title: str) -> list[str]:
    """The indented lines under the line starting with ``title``."""
    lines = out.splitlines()
    start = next(k for k, line in enumerate(lines) if line.startswith(title))
    section = []
    for line in lines[start + 1 :]:
        if not line.startswith("  "):
            break
        section.append(line.strip())
    return section


def test_compare_prints_the_first_failing_outputs_with_the_worst_element(
    cases: Path, tmp_path: Path
) -> None:
    done = run_cli("compare", str(cases), "--runner", _runner(tmp_path, IDENTITY))
    assert done.returncode == 1
    lines = _section(done.stdout, "failing outputs")
    assert done.stdout.index("  mismatch        4") < done.stdout.index("failing outputs")
    assert len(lines) == 4
    assert lines[0].startswith("node/test_tiny  data set 0  output 0 (y)  mismatch  at [0]: ")
    assert "expected 1.0, actual -1.0, " in lines[0]
    assert lines[0].endswith(" ULP; 1 of 2 elements beyond")
    assert [line.split()[0] for line in lines] == [
        "node/test_tiny", "node/test_tiny_0", "node/test_tiny_1", "node/test_tiny_2"
    ]  # fmt: skip
    shown = run_cli("compare", str(cases), "--runner", _runner(tmp_path, IDENTITY), "--show", "3")
    lines = _section(shown.stdout, "failing outputs (the first 3 of 4)")
    assert len(lines) == 4
    assert lines[-1] == "and 1 more (--out FILE for all)"
    report = tmp_path / "report.parquet"
    kept = run_cli(
        "compare", str(cases), "--runner", _runner(tmp_path, IDENTITY), "--show", "1",
        "--out", str(report),
    )  # fmt: skip
    assert _section(kept.stdout, "failing outputs")[-1] == f"and 3 more ({report} for all)"
    none = run_cli("compare", str(cases), "--runner", _runner(tmp_path, IDENTITY), "--show", "0")
    assert none.returncode == 1
    assert "failing outputs" not in none.stdout
    assert "errors by cause" not in none.stdout  # a mismatch is no error


def test_an_errors_cause_is_the_last_exception_line_of_the_runners_stderr(
    cases: Path, tmp_path: Path
) -> None:
    done = run_cli("compare", str(cases), "--runner", _runner(tmp_path, LACKS))
    assert done.returncode == 1
    lines = _section(done.stdout, "failing outputs")
    assert lines[0] == (
        "node/test_tiny  data set 0  output 0 (y)  error  "
        "NotImplementedError: no kernel for 'Gradient'"
    )
    assert "Traceback" not in done.stdout
    causes = _section(done.stdout, "errors by cause")
    assert causes == [
        "4 outputs of 4 cases: NotImplementedError: no kernel for …  e.g. node/test_tiny"
    ]


def test_a_runner_that_does_not_start_says_so_in_the_printed_failures(cases: Path) -> None:
    done = run_cli("compare", str(cases), "--case", "test_tiny", "--runner", "pyhton {model}")
    assert done.returncode == 1
    (line,) = _section(done.stdout, "failing outputs")
    assert line.startswith("node/test_tiny  data set 0  output 0 (y)  error  ")
    assert line.endswith(
        "RunnerError: cannot start 'pyhton': No such file or directory; give the program as "
        "a path or a name on PATH"
    )


def test_control_characters_of_the_data_never_reach_the_terminal(
    cases: Path, tmp_path: Path
) -> None:
    done = run_cli("compare", str(cases), "--runner", _runner(tmp_path, CONTROLS))
    assert done.returncode == 1
    lines = _section(done.stdout, "failing outputs")
    assert lines[0].endswith("error  ValueError: bad [31mred[0m value")
    assert not any(c in done.stdout for c in "\x1b\x07")


def test_control_characters_of_names_in_the_models_never_reach_the_terminal(
    tmp_path: Path,
) -> None:
    """A case folder and an op type with an escape sequence in their names."""
    case = tmp_path / "src" / "node" / "test_\x1b[2Jodd"
    (case / "test_data_set_0").mkdir(parents=True)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y\x1b[31m", TensorProto.FLOAT, [2])
    node = helper.make_node("Odd\x1b[5m", ["x"], ["y\x1b[31m"], domain="my.domain")
    graph = helper.make_graph([node], "g", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("my.domain", 1)])
    (case / "model.onnx").write_bytes(model.SerializeToString())
    for stem in ("input_0", "output_0"):
        tensor = numpy_helper.from_array(np.array([1.0, 2.0], np.float32), stem[0])
        (case / "test_data_set_0" / f"{stem}.pb").write_bytes(tensor.SerializeToString())
    store = tmp_path / "odd.parquet"
    assert run_cli("import", str(tmp_path / "src"), str(store)).returncode == 0
    done = run_cli("compare", str(store), "--runner", _runner(tmp_path, CONTROLS))
    assert done.returncode == 1
    assert "node/test_[2Jodd  data set 0  output 0 (y[31m)  error  " in done.stdout
    assert "Odd[5m" in done.stdout  # the op types' table
    assert "\x1b" not in done.stdout
