"""Ctrl-C at several points of ``onnx-arrow import`` and ``export``, in a real process.

Each point starts the command in a session of its own, waits until it has reached
the point (watched from outside: the imports it reports with ``-X importtime``, the
worker processes it starts, the bytes of its partial store, the files of its partial
folder), sends SIGINT to the whole process group as a terminal's Ctrl-C does, and
measures the time from the signal to the exit.  Run as a module it prints the
figures::

    PYTHONPATH=.:tests python -m hostile.interrupt
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: How long a point may take to be reached, and the process to exit after the signal.
DEADLINE = 120.0


@dataclass
class Interrupted:
    point: str
    returncode: int | None
    seconds: float | None  # from the signal to the exit; None: killed after DEADLINE
    stderr: str
    leftovers: list[str]  # files left half-written (*.partial) or in the target


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


def _partial_files(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if ".partial" in p.name]


Reached = Callable[[int, list[str]], bool]

#: Starts the command as a terminal would: Ctrl-C neither ignored nor blocked, whatever
#: the process running these points does with it (an ignored or blocked SIGINT is
#: inherited through exec, and a test run's engines may leave it so).
_AS_FROM_A_TERMINAL = """
import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
os.execv(sys.executable, [sys.executable, "-X", "importtime", "-m", "onnx_arrow", *sys.argv[1:]])
"""


def run(point: str, argv: list[str], work: Path, reached: Reached) -> Interrupted:
    """Start ``onnx-arrow argv`` in ``work``, SIGINT it once ``reached(pid, stderr lines)``."""
    # the node suite is built, not read from the cache, so that building it is a point
    env = dict(os.environ, PYTHONPATH=str(ROOT), ONNX_ARROW_CACHE_DIR="off")
    proc = subprocess.Popen(
        [sys.executable, "-c", _AS_FROM_A_TERMINAL, *argv],
        cwd=work,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stderr or ()), daemon=True)
    reader.start()
    start = time.monotonic()
    while not reached(proc.pid, lines) and proc.poll() is None:
        if time.monotonic() - start > DEADLINE:
            break
        time.sleep(0.01)
    sent = time.monotonic()
    if proc.poll() is not None:
        return Interrupted(point, proc.returncode, None, "ended before the point", [])
    os.killpg(proc.pid, signal.SIGINT)
    try:
        proc.wait(DEADLINE)
        seconds: float | None = time.monotonic() - sent
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        seconds = None
    reader.join(10)
    stderr = "".join(line for line in lines if not line.startswith("import time:"))
    leftovers = [str(p.relative_to(work)) for p in _partial_files(work)]
    return Interrupted(point, proc.returncode, seconds, stderr, leftovers)


def _building_the_suite(pid: int, lines: list[str]) -> bool:
    # onnx's reference operators are imported as the suite is built, after the command starts
    return any("onnx.reference.ops.op_" in line for line in lines[-50:])


def points(work: Path, store: Path, corpus: Path) -> dict[str, Callable[[], Interrupted]]:
    """The points tried: name -> a call that runs the command and interrupts it there.

    ``store`` is a store to export, ``corpus`` a corpus folder to import.
    """
    out = work / "out"

    def fresh() -> None:
        out.mkdir(parents=True, exist_ok=True)
        for p in sorted(out.rglob("*"), reverse=True):
            p.rmdir() if p.is_dir() and not p.is_symlink() else p.unlink()

    def importing(pid: int, lines: list[str]) -> bool:
        return any("| numpy" in line or "| pyarrow" in line for line in lines)

    def store_bytes(pid: int, lines: list[str]) -> bool:
        return any(p.stat().st_size > 0 for p in _partial_files(out) if p.is_file())

    def workers(pid: int, lines: list[str]) -> bool:
        return len(_children(pid)) >= 2

    def exported(pid: int, lines: list[str]) -> bool:
        staged = [p for p in out.parent.glob(".out.*.partial") if p.is_dir()]
        return any(sum(1 for f in s.rglob("*") if f.is_file()) >= 20 for s in staged)

    def at(name: str, argv: list[str], reached: Reached) -> Callable[[], Interrupted]:
        def go() -> Interrupted:
            fresh()
            return run(name, argv, work, reached)

        return go

    target = str(out / "s.parquet")
    return {
        "start-up (importing numpy/pyarrow)": at("start-up", ["import", target], importing),
        "building the node suite in memory": at(
            "node suite", ["import", target], _building_the_suite
        ),
        "worker pool (import --jobs 2)": at(
            "workers", ["import", "--jobs", "2", str(corpus), target], workers
        ),
        "writer thread (row groups being written)": at(
            "writer", ["import", "--row-group-cases", "1", target], store_bytes
        ),
        "export (files being written)": at("export", ["export", str(store), str(out)], exported),
        "export --jobs 2 (files being written)": at(
            "export jobs", ["export", "--jobs", "2", str(store), str(out)], exported
        ),
    }


def inputs(work: Path) -> tuple[Path, Path]:
    """A corpus folder to import (the model tests in onnx's wheel, three times over) and
    its store to export (small row groups, so that export --jobs has work to share)."""
    import shutil

    from onnx_arrow.corpus import FolderSource, WriteOptions, write_store
    from onnx_arrow.corpus.sources import wheel_data_dir

    corpus = work / "corpus"
    for copy in ("a", "b", "c"):
        shutil.copytree(wheel_data_dir(), corpus / copy)
    store = work / "store.parquet"
    write_store(FolderSource(corpus), store, options=WriteOptions(row_group_bytes=1 << 18))
    return store, corpus


def main() -> None:
    import tempfile

    with tempfile.TemporaryDirectory(prefix="interrupt-") as tmp:
        work = Path(tmp)
        store, corpus = inputs(work)
        for name, go in points(work, store, corpus).items():
            r = go()
            took = "killed" if r.seconds is None else f"{r.seconds:.3f} s"
            tb = "traceback" if "Traceback" in r.stderr else "no traceback"
            left = r.leftovers or "nothing"
            print(f"{name:<42} exit {r.returncode}  {took:>9}  {tb}  left: {left}")


if __name__ == "__main__":
    main()
