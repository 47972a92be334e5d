"""Backends whose code exits, raises KeyboardInterrupt, crashes, hangs, swallows its
deadline or leaves a thread running: each is a case's error (or a bad spec), never how
the command ends; hostile backend modules written to tmp_path, run in real processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from compare_helpers import cli, stated_store

from onnx_arrow import compare
from onnx_arrow.errors import BackendSpecError

ROOT = Path(__file__).resolve().parents[2]

#: A backend with onnx's interface, Identity; ``{import_}``, ``{prepare}`` and ``{run}``
#: are the hostile statements, ``{returns}`` what run returns.
_MODULE = """\
import os, sys, threading, time
import numpy as np

{import_}


class Rep:
    def run(self, inputs, **kwargs):
        {run}
        return {returns}


class Hostile:
    @classmethod
    def prepare(cls, model, device="CPU", **kwargs):
        {prepare}
        return Rep()
"""


def _module(tmp_path: Path, name: str, **parts: str) -> str:
    """Write the hostile module ``name`` into ``tmp_path`` (on sys.path); its spec."""
    fields = {"import_": "", "prepare": "pass", "run": "pass", "returns": "[inputs[0]]", **parts}
    (tmp_path / f"{name}.py").write_text(_MODULE.format(**fields))
    return f"{name}:Hostile"


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.syspath_prepend(str(tmp_path))  # the worker processes are forked: they see it
    return stated_store(tmp_path, None)


def _error(store: Path, spec: str, **kwargs: object) -> str:
    df = compare.compare(store, spec, **kwargs).to_pandas()  # type: ignore[arg-type]
    assert list(df["status"]) == ["error"]
    return str(df["error"][0])


@pytest.mark.parametrize(
    ("where", "statement", "said"),
    [
        ("prepare", "sys.exit(0)", "SystemExit: the backend called sys.exit(0)"),
        ("run", "sys.exit(0)", "SystemExit: the backend called sys.exit(0)"),
        ("run", "sys.exit('text')", "sys.exit('text')"),
        ("run", "raise SystemExit(3)", "sys.exit(3)"),
        ("prepare", "raise KeyboardInterrupt", "KeyboardInterrupt: raised by the backend"),
        ("run", "raise KeyboardInterrupt", "KeyboardInterrupt: raised by the backend"),
    ],
)
def test_exit_and_keyboard_interrupt_of_backend_code_are_the_case_error(
    store: Path, tmp_path: Path, where: str, statement: str, said: str
) -> None:
    spec = _module(tmp_path, f"exits_{where}", **{where: statement})
    assert said in _error(store, spec)


def test_exit_in_run_with_jobs_2_is_the_case_error_too(store: Path, tmp_path: Path) -> None:
    spec = _module(tmp_path, "exits_jobs", run="sys.exit(0)")
    assert "sys.exit(0)" in _error(store, spec, jobs=2)


@pytest.mark.parametrize(
    "statement", ["sys.exit(0)", "sys.exit('text')", "raise KeyboardInterrupt", "os.abort()"]
)
def test_exit_at_import_is_a_bad_spec_and_the_module_is_never_imported_here(
    store: Path, tmp_path: Path, statement: str
) -> None:
    name = f"exits_at_import_{abs(hash(statement))}"
    spec = _module(tmp_path, name, import_=statement)
    with pytest.raises(BackendSpecError, match="loading it"):
        compare.compare(store, spec)
    assert name not in sys.modules


def test_a_module_whose_getattr_raises_is_a_bad_spec(store: Path, tmp_path: Path) -> None:
    body = "def __getattr__(name):\n    raise RuntimeError('no ' + name)\n"
    (tmp_path / "getattr_raises.py").write_text(body)
    with pytest.raises(BackendSpecError, match="RuntimeError: no Hostile"):
        compare.compare(store, "getattr_raises:Hostile")
    with pytest.raises(BackendSpecError, match="RuntimeError: no prepare"):
        compare.compare(store, "getattr_raises", in_process=True)


def test_a_backend_whose_name_raises_is_a_bad_spec(store: Path, tmp_path: Path) -> None:
    body = (
        "import numpy as np\n"
        "class Named:\n"
        "    @property\n"
        "    def name(self):\n"
        "        raise RuntimeError('nameless')\n"
        "    def __call__(self, model, inputs):\n"
        "        return [inputs['x']]\n"
        "backend = Named()\n"
    )
    (tmp_path / "name_raises.py").write_text(body)
    with pytest.raises(BackendSpecError, match="RuntimeError: nameless"):
        compare.compare(store, "name_raises:backend")
    with pytest.raises(BackendSpecError, match="RuntimeError: nameless"):
        compare.compare(store, "name_raises:backend", in_process=True)


_ARRAYS = """\
class Odd:
    def __init__(self, how):
        self.how = how
    def __array__(self, dtype=None, copy=None):
        if self.how == "raise":
            raise RuntimeError("no array here")
        if self.how == "hang":
            while True:
                time.sleep(0.01)
        return "a string"
"""


@pytest.mark.parametrize(
    ("how", "said"),
    [
        ("raise", "output 0: Odd.__array__ gave no array (RuntimeError: no array here)"),
        ("string", "output 0: Odd.__array__ gave no array (ValueError"),
        ("hang", "BackendTimeoutError: the backend ran longer than 0.3 s"),
    ],
)
def test_an_output_whose_array_fails_or_never_returns_is_a_located_error(
    store: Path, tmp_path: Path, how: str, said: str
) -> None:
    spec = _module(tmp_path, f"odd_{how}", import_=_ARRAYS, returns=f"[Odd({how!r})]")
    assert said in _error(store, spec, timeout=0.3)


def test_more_outputs_than_the_model_declares_is_the_case_error(
    store: Path, tmp_path: Path
) -> None:
    spec = _module(tmp_path, "many", returns="[inputs[0]] * 100_000")
    said = "the backend gave 100000 outputs; the model declares 1"
    assert said in _error(store, spec)
    assert said in _error(store, spec, in_process=True)


def test_in_process_is_not_with_jobs(store: Path) -> None:
    with pytest.raises(compare.CompareError, match="in_process"):
        compare.compare(store, "reference", in_process=True, jobs=2)


# --- the command, as a user runs it -----------------------------------------------------


def _cli(tmp_path: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{tmp_path}"}
    return subprocess.run(
        [sys.executable, "-m", "onnx_arrow", "compare", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def test_a_segfault_in_run_is_the_case_error(store: Path, tmp_path: Path) -> None:
    spec = _module(tmp_path, "segfault", run="import ctypes; ctypes.string_at(0)")
    said = _error(store, spec)
    assert "CaseLostError: the worker process running the case died (SIGSEGV)" in said


def test_sys_exit_0_in_run_is_no_pass_of_the_command(store: Path, tmp_path: Path) -> None:
    spec = _module(tmp_path, "exit_zero", run="sys.exit(0)")
    code, out, err = cli("compare", str(store), "--backend", spec)  # main(), its worker forked
    assert code == 1, err
    assert "sys.exit(0)" in out


@pytest.mark.slow  # a command as a user runs it; sys.exit(0) above is one by default
def test_a_thread_left_running_by_the_backend_does_not_hold_the_command(
    store: Path, tmp_path: Path
) -> None:
    stray = "threading.Thread(target=time.sleep, args=(3600,)).start()"
    spec = _module(tmp_path, "stray", import_=stray, run=stray)
    done = _cli(tmp_path, str(store), "--backend", spec, timeout=60)
    assert done.returncode == 0, done.stderr


@pytest.mark.slow  # the worker is killed after the deadline and GRACE (10 s)
def test_a_run_that_swallows_its_deadline_is_killed(store: Path, tmp_path: Path) -> None:
    swallow = textwrap.dedent("""\
        while True:
                    try:
                        time.sleep(1)
                    except BaseException:
                        pass""")
    spec = _module(tmp_path, "swallow", run=swallow)
    done = _cli(tmp_path, str(store), "--backend", spec, "--timeout", "0.5", timeout=60)
    assert done.returncode == 1, done.stderr
    assert "did not return within 0.5 s" in done.stdout


@pytest.mark.slow  # Ctrl-C of a command in a worker: as tests/compare/test_runner.py's
def test_ctrl_c_still_ends_the_command_with_130_and_leaves_no_process(
    store: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "running"
    spec = _module(tmp_path, "slow", run=f"open({str(marker)!r}, 'w').close(); time.sleep(60)")
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{tmp_path}"}
    process = subprocess.Popen(
        [sys.executable, "-m", "onnx_arrow", "compare", str(store), "--backend", spec],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert marker.exists()
        os.killpg(process.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the whole group
        _, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    assert process.returncode == 130, err
    time.sleep(0.2)
    with pytest.raises(ProcessLookupError):
        os.killpg(process.pid, 0)  # nothing of its group is left


@pytest.mark.slow  # a command as a user runs it
def test_run_writes_the_exit_of_a_backend_as_its_error(store: Path, tmp_path: Path) -> None:
    spec = _module(tmp_path, "exit_in_run", run="sys.exit(0)")
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{tmp_path}"}
    out = tmp_path / "actual.parquet"
    done = subprocess.run(
        [sys.executable, "-m", "onnx_arrow", "run", str(store), str(out), "--backend", spec],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "backend errors" in done.stdout
    assert "1 data sets" in done.stdout
    kept = compare.compare_stores(store, out).to_pandas()
    assert "sys.exit(0)" in str(kept["error"][0])
