"""Walk ``compare``'s ``store`` argument through the code, and time reading every case, for
this checkout and, with ``--before PATH``, another one (an older checkout of onnx-arrow)
side by side.

The walk: ``sys.settrace`` over one call of ``onnx_arrow.compare.compare`` on a store of
``node/test_abs`` and ``light/light_squeezenet`` (the reference backend), noting the module
of every onnx-arrow frame that is given the store (its arguments hold the ``Store``), and
of those frames and the frames they call directly.  Consecutive frames of one module are
one stay; a stay in a module already visited is a return; a stay in ``compare/`` right
after one in ``corpus/`` is a climb back up.  It also lists each call from a module of
``compare/`` into the store.

The times: every case of the built-in default corpus read as compare reads it (its data
sets, ``compare.runs.data_sets_of``) and as ``Store.case_arrays`` gives it, each side in a
process of its own, in turns; medians of the rounds, with the data sets each counted.

Usage::

    python benchmarks/walk_compare_store.py [--before PATH] [--rounds 3]
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

_CHILD = "--child"


def _walk(folder: Path) -> dict[str, Any]:
    from onnx_arrow import compare
    from onnx_arrow.corpus import Store, default_source, write_store

    path = folder / "walk.parquet"
    if not path.exists():
        write_store(default_source(cases=["node/test_abs", "light/light_squeezenet"]), path)
    store = Store(path)
    given: list[str] = []
    under: list[str] = []
    calls: list[str] = []

    def holds(frame: Any) -> bool:
        return any(v is store for v in frame.f_locals.values())

    def stay(stays: list[str], module: str) -> None:
        if not stays or stays[-1] != module:
            stays.append(module)

    def tracer(frame: Any, event: str, arg: Any) -> None:
        module = frame.f_globals.get("__name__", "")
        if event != "call" or not module.startswith("onnx_arrow"):
            return
        back = frame.f_back
        caller = back.f_globals.get("__name__", "") if back is not None else ""
        if holds(frame):
            stay(given, module)
            if module == "onnx_arrow.corpus.store" and caller.startswith("onnx_arrow.compare"):
                calls.append(f"{caller}.{back.f_code.co_name} -> Store.{frame.f_code.co_name}")
        if holds(frame) or (back is not None and holds(back)):
            stay(under, module)

    sys.settrace(tracer)
    try:
        compare.compare(store, compare.reference_backend)
    finally:
        sys.settrace(None)
    return {"given": given, "under": under, "calls": calls}


def _times(folder: Path) -> dict[str, Any]:
    from onnx_arrow.compare.runs import data_sets_of
    from onnx_arrow.corpus import CorpusError, Store, default_source, write_store

    path = folder / "default.parquet"
    if not path.exists():
        write_store(default_source(), path)
    store = Store(path)
    cases = store.cases()
    start = time.perf_counter()
    runs = sum(len(list(data_sets_of(store, case))) for case in cases)
    runs_s = time.perf_counter() - start
    start = time.perf_counter()
    arrays = 0
    for case in cases:
        with contextlib.suppress(CorpusError):  # a case without a model
            arrays += len(store.case_arrays(case))
    return {"runs": (runs_s, runs), "arrays": (time.perf_counter() - start, arrays)}


def _child(kind: str, folder: Path) -> dict[str, Any]:
    return _walk(folder) if kind == "walk" else _times(folder)


def _run(checkout: str, kind: str, folder: Path) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": checkout}
    argv = [sys.executable, __file__, _CHILD, kind, str(folder)]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=True, cwd=folder)
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return result


def _summary(stays: list[str]) -> str:
    modules = list(dict.fromkeys(stays))
    climbs = sum(".corpus." in a and ".compare" in b for a, b in itertools.pairwise(stays))
    return (
        f"{len(stays)} stays in {len(modules)} modules, {len(stays) - len(modules)} returns, "
        f"{climbs} climbs from corpus/ to compare/"
    )


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == _CHILD:
        print(json.dumps(_child(sys.argv[2], Path(sys.argv[3]))))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", help="another onnx-arrow checkout to measure beside")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    here = str(Path(__file__).resolve().parent.parent)
    sides = {"this checkout": here}
    if args.before:
        sides = {"before": str(Path(args.before).resolve()), "after": here}
    print("load:", os.getloadavg())
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for side, checkout in sides.items():
            walk = _run(checkout, "walk", folder)
            print(f"\n{side} ({checkout})")
            print("  frames given the store:", _summary(walk["given"]))
            print("    " + " -> ".join(m.removeprefix("onnx_arrow.") for m in walk["given"]))
            print("  those and the frames they call:", _summary(walk["under"]))
            print(f"  calls from compare/ into the store: {len(walk['calls'])}")
            for call in walk["calls"]:
                print("    " + call.removeprefix("onnx_arrow."))
        rounds: dict[tuple[str, str], list[tuple[float, int]]] = {}
        for _ in range(args.rounds):
            for side, checkout in sides.items():
                for what, got in _run(checkout, "times", folder).items():
                    rounds.setdefault((side, what), []).append(tuple(got))
        print(f"\nevery case of the default corpus, median of {args.rounds} rounds in turns")
        print("load:", os.getloadavg())
        for what, label in (("runs", "compare's data sets"), ("arrays", "Store.case_arrays")):
            line = []
            for side in sides:
                times = rounds[(side, what)]
                median = statistics.median(t for t, _ in times)
                line.append(f"{side} {median:.2f} s ({times[0][1]} data sets)")
            if len(sides) == 2:
                a, b = (statistics.median(t for t, _ in rounds[(s, what)]) for s in sides)
                line.append(f"after/before {b / a:.2f}x")
            print(f"  {label}: " + ", ".join(line))


if __name__ == "__main__":
    main()
