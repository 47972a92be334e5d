"""Shared fixtures: the node test suite that the installed onnx builds, as messages; and the
check that no process a test started outlives the run."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from onnx import TypeProto


@dataclass(frozen=True)
class NodeValue:
    """One value of one data set of a node test case, serialized as onnx's writer does."""

    case: str
    data_set: int
    io: str  # "input" or "output"
    index: int
    type: TypeProto
    serialized: bytes
    value: Any  # as the case generator gives it: an ndarray, a list, a dict, None or a message


@pytest.fixture
def ctrl_c() -> Iterator[None]:
    """Python's own Ctrl-C handler (SIGINT raises KeyboardInterrupt) for a test that sends
    SIGINT to its own process: a process started in the background by a shell without job
    control inherits SIGINT ignored, and Python then installs no handler."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.fixture(scope="session")
def node_values() -> list[NodeValue]:
    """Every value of the node suite (onnx.backend.test.loader.load_node_model_tests)."""
    from onnx.backend.test.loader import load_node_model_tests

    from onnx_arrow.core.model import value_message  # as the corpus writes the node suite

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = load_node_model_tests()
    out = []
    for case in cases:
        graph = case.model.graph
        for n, (inputs, outputs) in enumerate(case.data_sets):
            for io, values, infos in (
                ("input", inputs, graph.input),
                ("output", outputs, graph.output),
            ):
                for k, value in enumerate(values):
                    info = infos[k]
                    out.append(
                        NodeValue(
                            case.name,
                            n,
                            io,
                            k,
                            info.type,
                            value_message(value, info.name, info.type).SerializeToString(),
                            value,
                        )
                    )
    return out


@contextlib.contextmanager
def _deadline(seconds: int = 5) -> Iterator[None]:
    """Fail with TimeoutError instead of hanging when a call blocks (a FIFO, /dev/zero)."""

    def _timeout(signum: int, frame: Any) -> None:
        raise TimeoutError(f"blocked for more than {seconds} s")

    previous = signal.signal(signal.SIGALRM, _timeout)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture
def deadline() -> Callable[..., contextlib.AbstractContextManager[None]]:
    """``with deadline(seconds):`` turns a hang into a TimeoutError."""
    return _deadline


# --- no process of a test outlives it ------------------------------------------------------
#
# This process is made the reaper of every orphan below it (Linux), so that a worker whose
# parent died is still seen as a child here.  After each test the children that appeared
# are put down to that test; at the end of the run, once every fixture (Dask's and Ray's
# clusters included) is torn down, any child still running fails the run, named with the
# test it came from and its command line, and is killed.

_PR_SET_CHILD_SUBREAPER = 36
#: Seconds children may take to end at the end of the run.
_SETTLE = 5.0
#: pid -> (the test after which it was first seen, its command line)
_seen: dict[int, tuple[str, str]] = {}
#: Helpers of this interpreter that live as long as it does and end with it, whoever
#: started them (Dask's spawned workers start multiprocessing's resource tracker).
_INTERPRETER_HELPERS = (
    "from multiprocessing.resource_tracker import main",
    "from multiprocessing.forkserver import main",
)


def _running_children() -> dict[int, str]:
    """This process's children that still run (zombies not reaped do not count): pid ->
    command line, from /proc/<pid>/task/*/children."""
    found: dict[int, str] = {}
    for task in Path(f"/proc/{os.getpid()}/task").glob("*/children"):
        with contextlib.suppress(OSError):
            for pid in map(int, task.read_text().split()):
                with contextlib.suppress(OSError):
                    stat = Path(f"/proc/{pid}/stat").read_text()
                    if stat[stat.rindex(")") + 2 :].split()[0] == "Z":
                        continue
                    cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
                    command = cmd.decode(errors="replace").strip()
                    if not any(helper in command for helper in _INTERPRETER_HELPERS):
                        found[pid] = command[:300]
    return found


def pytest_configure(config: pytest.Config) -> None:
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            import ctypes

            ctypes.CDLL(None).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    yield
    for pid, command in _running_children().items():
        _seen.setdefault(pid, (item.nodeid, command))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if not Path(f"/proc/{os.getpid()}/task").is_dir():
        return
    end = time.monotonic() + _SETTLE
    while (left := _running_children()) and time.monotonic() < end:
        time.sleep(0.1)
    if not left:
        return
    lines = []
    for pid, command in left.items():
        test = _seen.get(pid, ("a fixture or hook outside any test", ""))[0]
        lines.append(f"  {pid} from {test}: {command}")
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    for pid in left:
        with contextlib.suppress(OSError):
            os.waitpid(pid, 0)
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    title = "processes left running by the tests (killed now)"
    if reporter is not None:
        reporter.line("")
        reporter.write_sep("=", title, red=True, bold=True)
        for line in lines:
            reporter.write_line(line, red=True)
    else:
        print("\n".join([title, *lines]), file=sys.stderr)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED
