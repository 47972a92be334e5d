"""Ctrl-C at several points of ``onnx-arrow import`` and ``export``, in a real process.

Each point starts the command in a session of its own, waits until it has reached
the point (watched from outside: the imports it reports with ``-X importtime``, the
worker processes it starts, the bytes of its partial store, the files of its partial
folder), sends SIGINT to the whole process group as a terminal's Ctrl-C does, and
measures the time from the signal to the exit.  Whatever of the session outlives the
command (a worker process left waiting for work) is recorded, then killed.  Run as a
module it prints the figures::

    PYTHONPATH=.:tests python -m hostile.interrupt

and with ``--trials N`` it interrupts ``import --jobs 2`` N times under a CPU load of
one busy process per core, each signal a little later into the pool's work than the
last, and counts the exit statuses and the processes left behind::

    PYTHONPATH=.:tests python -m hostile.interrupt --trials 20
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
#: How long a point may take to be reached, and the process to exit after the signal.
DEADLINE = 120.0
#: How long what the command started may take to end once the command has exited: a
#: process still there after this is a survivor.
SETTLE = 3.0
#: What a run that ended before the signal was sent says (nothing was tried).
TOO_LATE = "ended before the point"


@dataclass
class Interrupted:
    point: str
    returncode: int | None
    seconds: float | None  # from the signal to the exit; None: killed after DEADLINE
    stderr: str
    leftovers: list[str]  # files left half-written (*.partial) or in the target
    #: What of the command's session outlived it by :data:`SETTLE` seconds ("pid state
    #: command line"); killed since.
    survivors: list[str] = field(default_factory=list)


def session_processes(sid: int) -> dict[int, str]:
    """The processes of session ``sid`` (the command and everything it started, forked
    workers orphaned by its exit included): pid -> "pid state command line"."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:  # ended meanwhile
            continue
        # pid (comm) state ppid pgrp session ...: comm may hold spaces and parentheses
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[3]) == sid:
            command = cmdline.replace(b"\0", b" ").decode(errors="replace").strip()
            found[int(entry.name)] = f"{entry.name} {fields[0]} {command}"
    return found


def survivors(sid: int) -> list[str]:
    """What of session ``sid`` is still there :data:`SETTLE` seconds after its leader
    exited (zombies not yet reaped do not count), all of it killed before returning."""
    end = time.monotonic() + SETTLE
    while True:
        left = {p: s for p, s in session_processes(sid).items() if s.split()[1] != "Z"}
        if not left or time.monotonic() > end:
            break
        time.sleep(0.05)
    for pid in left:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return list(left.values())


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


def run(
    point: str, argv: list[str], work: Path, reached: Reached, *, delay: float = 0.0
) -> Interrupted:
    """Start ``onnx-arrow argv`` in ``work``, SIGINT it ``delay`` seconds after
    ``reached(pid, stderr lines)``."""
    # the node suite is built, not read from the cache, so that building it is a point
    env = dict(os.environ, PYTHONPATH=str(ROOT), ONNX_ARROW_CACHE_DIR="off")
    stdout = work / "stdout.txt"
    with stdout.open("wb") as out:
        proc = _start(argv, work, env, out)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stderr or ()), daemon=True)
    reader.start()
    start = time.monotonic()
    while not reached(proc.pid, lines) and proc.poll() is None:
        if time.monotonic() - start > DEADLINE:
            break
        time.sleep(0.01)
    time.sleep(delay)
    sent = time.monotonic()
    if proc.poll() is not None:
        left = survivors(proc.pid)
        return Interrupted(point, proc.returncode, None, TOO_LATE, [], left)
    os.killpg(proc.pid, signal.SIGINT)
    try:
        proc.wait(DEADLINE)
        seconds: float | None = time.monotonic() - sent
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        seconds = None
    alive = survivors(proc.pid)
    reader.join(10)
    if proc.returncode == 0 and stdout.read_text().strip():
        # its work was done and its report printed: the signal came as the process was
        # ending (in the kernel, after its last instruction), too late to interrupt it
        return Interrupted(point, proc.returncode, None, TOO_LATE, [], alive)
    stderr = "".join(line for line in lines if not line.startswith("import time:"))
    leftovers = [str(p.relative_to(work)) for p in _partial_files(work)]
    return Interrupted(point, proc.returncode, seconds, stderr, leftovers, alive)


def _start(argv: list[str], work: Path, env: dict[str, str], out: Any) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", _AS_FROM_A_TERMINAL, *argv],
        cwd=work,
        env=env,
        stdout=out,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def _building_the_suite(pid: int, lines: list[str]) -> bool:
    # onnx's reference operators are imported as the suite is built, after the command starts
    return any("onnx.reference.ops.op_" in line for line in lines[-50:])


Point = Callable[..., Interrupted]
#: The point the trials repeat.
WORKERS = "worker pool (import --jobs 2)"


def points(work: Path, store: Path, corpus: Path) -> dict[str, Point]:
    """The points tried: name -> a call that runs the command and interrupts it there
    (``delay`` seconds after it is reached, if given).

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

    def at(name: str, argv: list[str], reached: Reached) -> Point:
        def go(delay: float = 0.0) -> Interrupted:
            fresh()
            return run(name, argv, work, reached, delay=delay)

        return go

    target = str(out / "s.parquet")
    return {
        "start-up (importing numpy/pyarrow)": at("start-up", ["import", target], importing),
        "building the node suite in memory": at(
            "node suite", ["import", target], _building_the_suite
        ),
        WORKERS: at("workers", ["import", "--jobs", "2", str(corpus), target], workers),
        # a fixed float encoding: with auto the writer holds the first row groups (8 MiB of
        # float data, the whole node suite) to choose it, and writes them all at the end
        "writer thread (row groups being written)": at(
            "writer",
            ["import", "--row-group-cases", "1", "--float-encoding", "PLAIN", target],
            store_bytes,
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


@contextlib.contextmanager
def cpu_load(processes: int | None = None) -> Iterator[None]:
    """A busy loop per core (or ``processes`` of them) while the block runs, as on a
    machine running other work: the command's threads and workers get their turns late."""
    count = processes if processes is not None else os.cpu_count() or 1
    busy = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)
        for _ in range(count)
    ]
    try:
        yield
    finally:
        for proc in busy:
            proc.kill()
        for proc in busy:
            proc.wait()


#: The delays of the trials after the point is reached, in turn: the signal falls while
#: the pool starts, while its first tasks run, while row groups are written.
DELAYS = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.8, 1.2)


def trials(
    go: Point, count: int, report: Callable[[int, Interrupted], None] | None = None
) -> list[Interrupted]:
    """``count`` runs of the point ``go``, each signal :data:`DELAYS` later in turn; a run
    whose work ended before its signal is run again with half the delay."""
    results = []
    for i in range(count):
        r = attempt(go, DELAYS[i % len(DELAYS)])
        if report is not None:
            report(i, r)
        results.append(r)
    return results


def attempt(go: Point, delay: float) -> Interrupted:
    """A run of the point ``go``, its signal ``delay`` seconds after the point; if the work
    ended before the signal, run again with half the delay."""
    while (r := go(delay)).stderr == TOO_LATE and delay > 0.01:
        delay /= 2
    return r


def well_ended(r: Interrupted) -> bool:
    """Exit 130, promptly, one line, nothing half-written, nothing left running."""
    return (
        r.seconds is not None
        and r.returncode == 130
        and "Traceback" not in r.stderr
        and r.stderr.strip().splitlines()[-1:] == ["onnx-arrow: interrupted"]
        and not r.leftovers
        and not r.survivors
    )


def outcome(r: Interrupted) -> str:
    """A trial in a few words: how it ended and what it left."""
    if r.stderr == TOO_LATE:
        return f"exit {r.returncode} before the signal"
    words = ["killed after the deadline" if r.seconds is None else f"exit {r.returncode}"]
    if "Traceback" in r.stderr:
        words.append("traceback")
    elif r.stderr.strip().splitlines()[-1:] != ["onnx-arrow: interrupted"]:
        last = (r.stderr.strip().splitlines() or ["nothing"])[-1]
        words.append(f"said {last[:60]!r}")
    if r.leftovers:
        words.append(f"{len(r.leftovers)} partial files")
    if r.survivors:
        words.append(f"{len(r.survivors)} processes left running")
    return ", ".join(words)


def _print(r: Interrupted, name: str) -> None:
    took = "killed" if r.seconds is None else f"{r.seconds:.3f} s"
    tb = "traceback" if "Traceback" in r.stderr else "no traceback"
    left = r.leftovers or "nothing"
    alive = f"  running: {r.survivors}" if r.survivors else ""
    print(f"{name:<42} exit {r.returncode}  {took:>9}  {tb}  left: {left}{alive}", flush=True)


def main(argv: list[str] | None = None) -> int:
    import tempfile

    parser = argparse.ArgumentParser(prog="python -m hostile.interrupt", description=__doc__)
    parser.add_argument(
        "--trials", type=int, help="interrupt import --jobs 2 this many times under load"
    )
    parser.add_argument(
        "--point", default=WORKERS, help=f"the point the trials repeat (default: {WORKERS})"
    )
    parser.add_argument("--no-load", action="store_true", help="the trials without a CPU load")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="interrupt-") as tmp:
        work = Path(tmp)
        store, corpus = inputs(work)
        tried = points(work, store, corpus)
        if args.trials is None:
            for name, go in tried.items():
                _print(go(), name)
            return 0
        load = contextlib.nullcontext() if args.no_load else cpu_load()
        with load:
            results = trials(
                tried[args.point], args.trials, lambda i, r: _print(r, f"trial {i + 1}")
            )
        counts = collections.Counter(outcome(r) for r in results)
        print(f"{args.point}, {args.trials} trials{'' if args.no_load else ' under load'}:")
        for words, n in counts.most_common():
            print(f"  {n:>3}  {words}")
        return 0 if all(map(well_ended, results)) else 1


if __name__ == "__main__":
    sys.exit(main())
