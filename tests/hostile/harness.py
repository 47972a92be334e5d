"""Running hostile cases: batches in child processes, each under a memory cap and a timeout.

A :class:`Case` names its family, the action the child runs (:mod:`hostile.actions`),
a ``build`` that makes its input files and returns the action's arguments, and what
must happen (:class:`Expect`), and the bug the library still has if it is ``known`` to
fail (the suite runs it as a strict xfail).  :func:`run_cases` runs the cases in batches, one child
process per batch (two at a time, for two cores), each child started with
``RLIMIT_AS`` set to the batch's cap.  A child that crashes or hangs is restarted after
the case that did it, which is reported as a crash (with its signal) or a hang.
:func:`judge` then says what each outcome was (its *verdict*) and what is wrong with it,
if anything.  Run as a module it prints the verdicts of every case (the slow ones of
:mod:`hostile.readers` too) counted by family::

    PYTHONPATH=.:tests python -m hostile.harness
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
#: The address-space cap of a child: several times what importing everything takes
#: (about 0.4 GiB), well below what the hostile sizes would make the old code allocate.
MEMORY_CAP = 2 << 30
CASE_TIMEOUT = 20
#: Names of the project's exception classes: what a refusal must be.
PROJECT_ERROR = "OnnxArrowError"


@dataclass(frozen=True)
class Expect:
    """What must happen.

    ``error``: the project error class that must be raised (its name in the exception's
    class hierarchy); ``None`` with ``clean=False``: the call must succeed.  ``clean``:
    either succeeds, or raises a project error; either way nothing foreign.  ``where``:
    text the message (or the command's stderr) must contain: the file, row or field.
    ``rc``: the command's exit status.  ``warning``: a warning of that class must be
    emitted, naming ``where``.  ``result``: keys the action's result must have, with
    these values.
    """

    error: str | None = None
    where: str | None = None
    rc: int | None = None
    clean: bool = False
    warning: str | None = None
    result: dict[str, Any] | None = None


@dataclass(frozen=True)
class Case:
    family: str
    name: str
    action: str
    build: Callable[[Path], dict[str, Any]]
    expect: Expect
    memory: int = MEMORY_CAP
    #: folders (relative to the work root) that must be the same after the case, and
    #: hold no ``.partial`` file: what it must not write into, or leave half-written
    guard: tuple[str, ...] = ()
    #: a bug the library still has: the case must fail, and its problem must hold this
    #: text (the suite runs it as a strict xfail, so that it fails once the bug is fixed)
    known: str | None = None

    @property
    def id(self) -> str:
        return f"{self.family}/{self.name}"


@dataclass
class Outcome:
    case: Case
    record: dict[str, Any]
    changed: list[str] = field(default_factory=list)  # guarded files added, removed, changed
    verdict: str = ""
    problem: str | None = None


def _tree(path: Path) -> dict[str, tuple[int, int]]:
    if not path.exists() and not path.is_symlink():
        return {}
    out = {}
    for dirpath, dirnames, filenames in os.walk(path):
        for name in dirnames + filenames:
            p = Path(dirpath, name)
            st = p.lstat()
            out[str(p.relative_to(path))] = (st.st_size, st.st_mtime_ns)
    return out


def _child_env(memory: int) -> dict[str, str]:
    env = dict(os.environ)
    env["HOSTILE_MEMORY"] = str(memory)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "tests")])
    env.pop("PYTHONWARNINGS", None)
    env["OMP_NUM_THREADS"] = "1"
    return env


def _run_batch(
    batch: Sequence[tuple[Case, dict[str, Any]]], memory: int, timeout: int
) -> dict[str, dict[str, Any]]:
    """Run ``batch`` in child processes until every case has a record."""
    records: dict[str, dict[str, Any]] = {}
    todo = list(batch)
    while todo:
        request = {
            "timeout": timeout,
            "cases": [{"id": c.id, "action": c.action, "args": a} for c, a in todo],
        }
        proc = subprocess.Popen(
            [sys.executable, "-m", "hostile.child"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=_child_env(memory),
            cwd=ROOT,
            text=True,
        )
        try:
            stdout, stderr = proc.communicate(json.dumps(request), timeout=timeout * len(todo) + 60)
        except subprocess.TimeoutExpired:
            proc.kill()
            stdout, stderr = proc.communicate()
        started = None
        for line in stdout.splitlines():
            event = json.loads(line)
            if event["event"] == "start":
                started = event["id"]
            else:
                records[event["id"]] = event
                started = None
        if started is not None:  # it died or hung inside this case
            code = proc.returncode
            status = (
                "crash" if code is not None and code < 0 else "hang" if code is None else "died"
            )
            records[started] = {
                "id": started,
                "status": status,
                "returncode": code,
                "stderr": stderr[-3000:],
            }
        elif proc.returncode != 0 and len(records) < len(batch):
            raise RuntimeError(f"the hostile child failed to start: {stderr[-3000:]}")
        todo = [(c, a) for c, a in todo if c.id not in records]
    return records


def run_cases(
    cases: Sequence[Case], root: Path, *, workers: int = 2, timeout: int = CASE_TIMEOUT
) -> dict[str, Outcome]:
    """Build every case's input under ``root``, run them, judge them: outcomes by id."""
    built = [(c, c.build(root)) for c in cases]
    before = {c.id: {g: _tree(root / g) for g in c.guard} for c in cases}
    by_memory: dict[int, list[tuple[Case, dict[str, Any]]]] = {}
    for case, args in built:
        by_memory.setdefault(case.memory, []).append((case, args))
    batches = []
    for memory, group in by_memory.items():
        n = min(workers, len(group))
        batches += [(group[i::n], memory) for i in range(n)]
    records: dict[str, dict[str, Any]] = {}
    lock = threading.Lock()
    pending = list(batches)

    def work() -> None:
        while True:
            with lock:
                if not pending:
                    return
                batch, memory = pending.pop(0)
            result = _run_batch(batch, memory, timeout)
            with lock:
                records.update(result)

    threads = [threading.Thread(target=work) for _ in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    outcomes = {}
    for case, _ in built:
        outcome = Outcome(case, records[case.id])
        for g in case.guard:
            after = _tree(root / g)
            old = before[case.id][g]
            outcome.changed += [
                f"{g}/{p}" for p in sorted(set(old) | set(after)) if old.get(p) != after.get(p)
            ]
            outcome.changed += [f"{g}/{p} (half-written)" for p in after if ".partial" in p]
        judge(outcome)
        outcomes[case.id] = outcome
    return outcomes


def judge(outcome: Outcome) -> None:
    """Set the outcome's verdict, and its problem if it is not what the case expects."""
    record, expect = outcome.record, outcome.case.expect
    status = record["status"]
    result = record.get("result", {})
    text = record.get("message", "") if status == "raised" else result.get("stderr", "")
    problems = []
    if status == "crash":
        outcome.verdict = f"crash (signal {-record['returncode']})"
        problems.append(f"the process died: {record.get('stderr', '')[-600:]}")
    elif status in ("hang", "died"):
        outcome.verdict = status
        problems.append(f"{status}: {record.get('stderr', '')[-600:]}")
    elif status == "raised":
        project = PROJECT_ERROR in record["mro"]
        outcome.verdict = f"refused ({record['type']})" if project else f"foreign {record['type']}"
        if not project:
            problems.append(f"raised {record['type']}: {record['message'][:300]}")
        elif expect.error is not None and expect.error not in record["mro"]:
            problems.append(f"raised {record['type']}, expected {expect.error}")
        elif expect.error is None and not expect.clean:
            problems.append(f"expected success, got {record['type']}: {text[:300]}")
        if project and expect.where is not None and expect.where not in text:
            problems.append(f"the message does not name {expect.where!r}: {text[:300]}")
    else:  # returned
        rc = result.get("rc")
        if rc is not None:
            outcome.verdict = f"exit {rc}"
            if expect.rc is not None and rc != expect.rc:
                problems.append(f"exit status {rc}, expected {expect.rc}: {text[-300:]}")
            if "Traceback" in text:
                problems.append(f"a traceback on stderr: {text[-600:]}")
            if expect.where is not None and expect.where not in text:
                problems.append(f"stderr does not name {expect.where!r}: {text[-300:]}")
        elif expect.warning is not None:
            outcome.verdict = "warned"
        else:
            outcome.verdict = "accepted"
        if rc is None and expect.error is not None:
            problems.append(f"accepted, expected {expect.error}: {result}")
        if expect.warning is not None:
            named = [
                m
                for c, m in record.get("warnings", [])
                if c == expect.warning and (expect.where is None or expect.where in m)
            ]
            if not named:
                problems.append(
                    f"no {expect.warning} naming {expect.where!r}: {record['warnings']}"
                )
        for key, value in (expect.result or {}).items():
            if result.get(key) != value:
                problems.append(f"result {key} is {result.get(key)!r}, expected {value!r}")
    if outcome.changed:
        problems.append(f"changed outside the target or left half-written: {outcome.changed[:10]}")
    outcome.problem = "; ".join(problems) or None


def counts(outcomes: dict[str, Outcome]) -> Counter[tuple[str, str, bool]]:
    """(family, verdict, as expected) counted over the outcomes."""
    return Counter((o.case.family, o.verdict, o.problem is None) for o in outcomes.values())


def main() -> None:
    import tempfile

    from hostile import families as first
    from hostile import owned, readers

    families = set(sys.argv[1:])
    every = first.CASES + readers.CASES + readers.MORE + owned.CASES
    chosen = [c for c in every if not families or c.family in families]
    with tempfile.TemporaryDirectory(prefix="hostile-") as tmp:
        outcomes = run_cases(chosen, Path(tmp))
    for (family, verdict, good), n in sorted(counts(outcomes).items()):
        print(f"{family:<14} {verdict:<40} {'as expected' if good else 'WRONG':<12} {n}")
    for o in outcomes.values():
        if o.problem:
            known = "" if o.case.known is None else f" (known: {o.case.known})"
            print(f"WRONG {o.case.id}{known}: {o.problem}")
    print(f"{len(outcomes)} cases, {sum(o.problem is None for o in outcomes.values())} as expected")


if __name__ == "__main__":
    main()
