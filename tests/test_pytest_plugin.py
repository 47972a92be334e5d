"""The pytest plugin, run as a backend's test job runs it: pytest in a subprocess over a
small store, one item per case, skips and xfails from compare's patterns file, failures
showing the report's rows, and nothing at all without --onnx-store."""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper
from store_helpers import one_data_set_case

from onnx_arrow.corpus import Case, write_store

ROOT = Path(__file__).parents[1]
MODEL = helper.make_model(
    helper.make_graph(
        [helper.make_node("Abs", ["x"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])],
    ),
    opset_imports=[helper.make_opsetid("", 21)],
)

#: The cases of the store, by whether their expected outputs are right.
CASES = {
    "node/test_abs": True,
    "node/test_abs_wrong": False,
    "node/test_skipped": False,
    "node/test_known_bad": False,
    "node/test_fixed": True,
}
PATTERNS = "skip test_skipped\nxfail test_known_bad\nxfail test_fixed$\n"


def _case(name: str, right: bool) -> Case:
    x = np.array([-1.0, 2.0, -3.0], np.float32)
    y = np.abs(x) + (np.float32(0) if right else np.array([0, 0.5, 0], np.float32))
    return one_data_set_case(name, MODEL, x, y)


@pytest.fixture(scope="module")
def job(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder to run pytest in, holding the store and the patterns file."""
    root = tmp_path_factory.mktemp("job")
    write_store([_case(n, right) for n, right in CASES.items()], root / "store.parquet")
    (root / "expected.txt").write_text(PATTERNS)
    return root


def _pytest(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """pytest with the plugin, as an installed entry point loads it (others off)."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")]),
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
    }
    command = [sys.executable, "-m", "pytest", "-p", "onnx_arrow.pytest_plugin"]
    command += ["-p", "no:cacheprovider", "-v", "-rA", *args]
    return subprocess.run(
        command, cwd=folder, env=env, capture_output=True, text=True, check=False, timeout=300
    )


def _outcomes(stdout: str) -> dict[str, str]:
    found = re.findall(r"^store\.parquet::(\S+) (PASSED|FAILED|SKIPPED|XFAIL|XPASS)", stdout, re.M)
    return dict(found)


@pytest.mark.parametrize("backend", [[], ["--onnx-backend", "backend_helpers:EvaluatorBackend"]])
def test_an_item_per_case_with_the_patterns_marks(job: Path, backend: list[str]) -> None:
    done = _pytest(
        job, "--onnx-store", "store.parquet", "--onnx-patterns", "expected.txt", *backend
    )
    assert done.returncode == 1, done.stdout + done.stderr  # test_abs_wrong fails
    assert _outcomes(done.stdout) == {
        "node/test_abs": "PASSED",
        "node/test_abs_wrong": "FAILED",
        "node/test_skipped": "SKIPPED",
        "node/test_known_bad": "XFAIL",
        "node/test_fixed": "XPASS",
    }
    assert "collected 5 items" in done.stdout  # collected as pytest collects a file
    assert "skip pattern 'test_skipped'" in done.stdout
    assert "xfail pattern 'test_known_bad'" in done.stdout


def test_a_failure_shows_the_report_row(job: Path) -> None:
    done = _pytest(job, "--onnx-store", "store.parquet", "-k", "abs_wrong")
    assert done.returncode == 1
    assert "node/test_abs_wrong: 1 of 1 outputs do not pass (backend reference)" in done.stdout
    assert "output 0 'y' (data set 0): mismatch" in done.stdout
    assert "rule: tolerance rtol=0.001 atol=1e-07 (default)" in done.stdout
    assert "max abs error 0.5" in done.stdout
    assert "worst element [1]: expected 2.5, actual 2.0" in done.stdout
    assert _outcomes(done.stdout) == {"node/test_abs_wrong": "FAILED"}  # -k selects cases


def test_a_patterns_tolerance_applies(job: Path) -> None:
    (job / "loose.txt").write_text("tolerance test_abs_wrong=0.5,0\n")
    done = _pytest(
        job, "--onnx-store", "store.parquet", "--onnx-patterns", "loose.txt", "-k", "wrong"
    )
    assert done.returncode == 0, done.stdout
    assert _outcomes(done.stdout) == {"node/test_abs_wrong": "PASSED"}


def test_inert_without_a_store(tmp_path: Path) -> None:
    (tmp_path / "test_light.py").write_text(
        "import sys\n"
        "def test_nothing_heavy_imported():\n"
        "    heavy = {'onnx', 'pandas', 'ml_dtypes', 'onnx_arrow.compare', 'onnx_arrow.corpus'}\n"
        "    assert not heavy & set(sys.modules), heavy & set(sys.modules)\n"
    )
    done = _pytest(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout
    assert "store.parquet" not in done.stdout
    done = _pytest(tmp_path, "--onnx-backend", "onnxruntime")
    assert done.returncode == 4  # a usage error
    assert "--onnx-backend applies to --onnx-store STORE" in done.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--onnx-backend", "no_such_module_here"], "no backend 'no_such_module_here'"),
        (["--onnx-patterns", "missing.txt"], "missing.txt"),
        (["--onnx-backend", "reference", "--onnx-runner", "true"], "not both"),
        (["--onnx-timeout", "-1"], "--onnx-timeout -1.0: give seconds"),
        pytest.param(  # a pytest run of its own (5 s): the range is compare's (tests/cli)
            ["--onnx-timeout", "inf"], "at most 604800 (a week)", marks=pytest.mark.slow
        ),
    ],
)
def test_bad_options_are_usage_errors(job: Path, args: list[str], message: str) -> None:
    done = _pytest(job, "--onnx-store", "store.parquet", *args)
    assert done.returncode == 4, done.stdout + done.stderr
    assert message in done.stderr


@pytest.mark.skipif(
    importlib.util.find_spec("onnx_arrow.compare.runner") is not None,
    reason="onnx_arrow.compare.runner is here: --onnx-runner runs it (next test)",
)
def test_onnx_runner_without_the_runner_module_says_so(job: Path) -> None:
    done = _pytest(job, "--onnx-store", "store.parquet", "--onnx-runner", "true")
    assert done.returncode == 4
    assert "--onnx-runner needs onnx_arrow.compare.runner" in done.stderr


@pytest.mark.skipif(
    importlib.util.find_spec("onnx_arrow.compare.runner") is None,
    reason="no onnx_arrow.compare.runner here: --onnx-runner is a usage error (test above)",
)
def test_onnx_runner_runs_the_command(job: Path) -> None:
    done = _pytest(
        job, "--onnx-store", "store.parquet", "--onnx-runner", "no-such-program-here {model}"
    )
    assert done.returncode == 1
    assert _outcomes(done.stdout)["node/test_abs"] == "FAILED"
    assert ": error" in done.stdout


def test_the_entry_point_names_the_plugin() -> None:
    text = (ROOT / "pyproject.toml").read_text()
    table = re.search(r"^\[project\.entry-points\.pytest11\]\n((?:.+\n)+)", text, re.M)
    assert table is not None, "no [project.entry-points.pytest11] in pyproject.toml"
    assert table[1].strip() == 'onnx_arrow = "onnx_arrow.pytest_plugin"'
    importlib.import_module("onnx_arrow.pytest_plugin")


@pytest.mark.slow
def test_stale_entries_listed_and_the_file_updated(job: Path) -> None:
    """The plugin lists the entries compare lists, writes the file again as compare
    --update-expectations does, and --onnx-check-expectations fails a stale file."""
    path = job / "update.txt"
    path.write_text(PATTERNS)
    base = ("--onnx-store", "store.parquet")
    done = _pytest(job, *base, "--onnx-patterns", "update.txt")
    assert "update.txt:3 xfail 'test_fixed$': its case passes" in done.stdout
    check = ("--onnx-update-expectations", "update.txt", "--onnx-check-expectations")
    done = _pytest(job, *base, *check)
    assert done.returncode == 1
    assert path.read_text() == PATTERNS  # stale, not written
    assert "-xfail test_fixed$" in done.stdout
    done = _pytest(job, *base, "--onnx-update-expectations", "update.txt")
    assert path.read_text().splitlines()[:2] == ["skip test_skipped", "xfail test_known_bad"]
    assert path.read_text().splitlines()[2].startswith("xfail ^test_abs_wrong$  # ")
    done = _pytest(job, *base, *check)
    assert done.returncode == 0, done.stdout
    assert "nothing to change" in done.stdout


@pytest.mark.slow  # two pytest sessions in processes of their own
def test_a_backend_that_exits_or_interrupts_decides_no_outcome(job: Path) -> None:
    (job / "exits_at_import.py").write_text("import sys\nsys.exit(0)\n")
    (job / "interrupts_in_run.py").write_text(
        "class Rep:\n"
        "    def run(self, inputs, **kwargs):\n"
        "        raise KeyboardInterrupt\n"
        "class Hostile:\n"
        "    @classmethod\n"
        "    def prepare(cls, model, device='CPU', **kwargs):\n"
        "        return Rep()\n"
    )
    done = _pytest(job, "--onnx-store", "store.parquet", "--onnx-backend", "exits_at_import")
    assert done.returncode == 4, done.stdout  # a usage error, not a pass
    assert "loading it raised SystemExit" in done.stderr
    args = ("--onnx-store", "store.parquet", "-k", "test_abs")
    done = _pytest(job, *args, "--onnx-backend", "interrupts_in_run:Hostile")
    assert done.returncode == 1, done.stdout  # failed items, not an interrupted session
    assert _outcomes(done.stdout)["node/test_abs"] == "FAILED"
    assert "KeyboardInterrupt: raised by the backend itself" in done.stdout
