"""A runtime's version in an environment of its own (``--backend onnxruntime==1.20.1``)
against the installed onnxruntime in this process: what the environment costs cold and
warm, and what a data set costs through it.

Three measures, each side by side in one run:

* the environment: made cold (``python -m venv``, ``pip install``, its record written)
  into an empty cache, against taken warm from the cache (its files checked by digest)
  with its Python started and the backend imported there;
* a data set, on the node cases both run without an error (found in a first round): the
  installed onnxruntime through ``onnxruntime.backend`` in this process (the same backend
  interface), against the environment's backend served by one process of its Python, and
  against the environment's Python started once per data set (the runner protocol:
  ``--runner`` on the same script), on the first ``--per-process`` of those cases;
* ``onnx-arrow compare`` as a user runs it (a process, start-up included) with
  ``--backend onnxruntime.backend`` against ``--backend onnxruntime==VERSION``, warm.

Rounds run in turns (the baseline, then the others, then again); medians and ranges.

Usage::

    python benchmarks/environment_backends.py                       # onnxruntime 1.20.1
    python benchmarks/environment_backends.py --spec onnxruntime==1.21.0 --rounds 5
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import onnxruntime
from _report import workdir

from onnx_arrow import compare
from onnx_arrow.compare.environments import EnvironmentBackend
from onnx_arrow.corpus import NodeSuiteSource, Store, write_store


def _timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def _spread(times: list[float], per: int = 1) -> str:
    values = sorted(t / per for t in times)
    return (
        f"{statistics.median(values):9.4f} s  ({values[0]:.4f} .. {values[-1]:.4f}, "
        f"{len(values)} rounds)"
    )


def _row(name: str, times: list[float], per: int, base: list[float] | None = None) -> None:
    ratio = ""
    if base is not None:
        ratio = f"  {statistics.median(times) / statistics.median(base):8.2f}x"
    print(f"  {name:<58} {_spread(times, per)}{ratio}")


def _data_sets(report: Any) -> int:
    df = report.to_pandas()
    return len(df[df["status"] != "skipped"].groupby(["case", "data_set"]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spec", default="onnxruntime==1.20.1", help="the backend spec")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of each (default 3)")
    parser.add_argument("--cold-rounds", type=int, default=1, help="cold makes (default 1)")
    parser.add_argument("--cases", action="append", help="globs of node cases (default: all)")
    parser.add_argument(
        "--per-process", type=int, default=20, help="cases run a process per data set"
    )
    parser.add_argument("--work", help="keep the store and the caches in this folder")
    args = parser.parse_args(argv)
    with workdir(args.work, "env-bench-") as work:
        path = work / "node.parquet"
        if not path.exists():
            write_store(NodeSuiteSource(), path)
        store = Store(path)
        cases = args.cases or ["node/*"]

        # --- the environment: cold, then warm -----------------------------------------
        cold: list[float] = []
        for n in range(args.cold_rounds):
            os.environ["ONNX_ARROW_CACHE_DIR"] = str(work / f"cold-{os.getpid()}-{n}")
            backend, took = _timed(lambda: EnvironmentBackend(args.spec).check())
            backend.close()
            cold.append(took)
        warm: list[float] = []
        for _ in range(args.rounds):
            backend, took = _timed(lambda: EnvironmentBackend(args.spec, offline=True).check())
            backend.close()
            warm.append(took)
        env = EnvironmentBackend(args.spec, offline=True).check()
        print(f"backend: {args.spec}, {env.describe()}")
        print(f"environment: {env.folder} ({len(env.packages)} distributions)\n")
        print("the environment (made, or taken from the cache, and its backend started)")
        _row("cold: venv, pip install, record, start", cold, 1)
        _row("warm: its files checked by digest, start", warm, 1)

        # --- a data set -----------------------------------------------------------------
        onnxruntime.set_default_logger_severity(3)  # its warnings: not what is timed
        installed = compare.resolve_backend("onnxruntime.backend")
        first = compare.compare(store, env, cases=cases, keep_actual="none").to_pandas()
        base = compare.compare(store, installed, cases=cases, keep_actual="none").to_pandas()
        errors = set(first.loc[first["error"].notna(), "case"])
        errors |= set(base.loc[base["error"].notna(), "case"])
        both = sorted(set(first["case"]) - errors)
        print(f"\nnode cases: {first['case'].nunique()}; run without an error by both: {len(both)}")
        if not both:
            return 1
        runner = compare.CommandRunner(env.runner_command())
        few = both[: args.per_process]
        sides: dict[str, list[float]] = {"installed": [], "env": [], "process": []}
        sets = few_sets = 0
        for _ in range(args.rounds):
            for side, backend, chosen in (
                ("installed", installed, both),
                ("env", env, both),
                ("process", runner, few),
            ):
                report, took = _timed(
                    lambda b=backend, c=chosen: compare.compare(
                        store, b, cases=c, keep_actual="none"
                    )
                )
                sides[side].append(took)
                if side == "installed":
                    sets = _data_sets(report)
                if side == "process":
                    few_sets = _data_sets(report)
        base_times = [t / sets for t in sides["installed"]]
        print("a data set (the wall time of compare over the cases, per data set)")
        _row(f"installed onnxruntime in this process ({sets} data sets)", base_times, 1)
        _row(
            "its environment, one process serving every data set",
            [t / sets for t in sides["env"]],
            1,
            base_times,
        )
        _row(
            f"its environment, a process per data set ({few_sets} data sets)",
            [t / few_sets for t in sides["process"]],
            1,
            base_times,
        )
        env.close()

        # --- as a user runs it ----------------------------------------------------------
        pattern = [arg for case in both for arg in ("--case", case)]
        command = [sys.executable, "-m", "onnx_arrow", "compare", str(path), *pattern]
        users: dict[str, list[float]] = {"installed": [], "env": []}
        for _ in range(args.rounds):
            for side, spec in (("installed", "onnxruntime.backend"), ("env", args.spec)):
                done, took = _timed(
                    lambda s=spec: subprocess.run(
                        [*command, "--backend", s, "--offline"],
                        capture_output=True,
                        text=True,
                        check=False,
                    )
                )
                if done.returncode not in (0, 1) or "\nbackend " not in "\n" + done.stdout:
                    print(done.stderr, file=sys.stderr)  # not a comparison: not timed
                    return 1
                users[side].append(took)
        print(f"\nonnx-arrow compare over those {len(both)} cases, as a process, warm")
        _row("--backend onnxruntime.backend", users["installed"], 1)
        _row(f"--backend {args.spec}", users["env"], 1, users["installed"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
