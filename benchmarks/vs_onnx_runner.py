"""compare's verdicts against onnx's own backend test runner, case by case, on the node suite.

onnx's runner (``onnx.backend.test.BackendTest``, as onnx's CI runs it) and
``onnx-arrow compare`` run the same backend over the same node cases (the store's data is
byte for byte what the runner reads).  This prints, for each backend, the confusion table
of the runner's outcome (pass, fail, error, skip) against compare's verdict for the case
(``match`` when every output matched, else its worst status), the cases they disagree on,
and the wall time of the runner, of compare and of ``compare --jobs 2`` side by side.

Usage::

    python benchmarks/vs_onnx_runner.py                       # reference and onnxruntime
    python benchmarks/vs_onnx_runner.py --backend reference --cases 'test_ab*'

onnxruntime is left out where it is not installed (``pip install onnxruntime``).
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import fnmatch
import io
import sys
import tempfile
import time
import unittest
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd
from onnx import ModelProto
from onnx.backend.base import Backend, BackendRep

from onnx_arrow import compare
from onnx_arrow.core.model import graph_values
from onnx_arrow.corpus import NodeSuiteSource, Store, write_store

#: The order of compare's verdicts in the table: its statuses, best first.
VERDICTS = [s for s in compare.STATUSES if s not in ("xfail", "xpass")]
OUTCOMES = ("pass", "fail", "error", "skip")


class ReferenceRep(BackendRep):
    """onnx's ReferenceEvaluator behind onnx's backend interface, fed as compare feeds it."""

    def __init__(self, model: ModelProto) -> None:
        self.model = model

    def run(self, inputs: Any, **kwargs: Any) -> tuple[Any, ...]:
        names = [i.name for i in graph_values(self.model, "input")]
        feed = dict(zip(names, inputs, strict=False)) if isinstance(inputs, list) else inputs
        return tuple(compare.reference_backend(self.model, feed))


class ReferenceBackend(Backend):
    @classmethod
    def is_compatible(cls, model: ModelProto, device: str = "CPU", **kwargs: Any) -> bool:
        return True

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return device == "CPU"

    @classmethod
    def prepare(cls, model: ModelProto, device: str = "CPU", **kwargs: Any) -> ReferenceRep:
        return ReferenceRep(model)


class _Outcomes(unittest.TestResult):
    """The outcome of each test of onnx's runner, by case name (``node/test_abs``)."""

    def __init__(self) -> None:
        super().__init__()
        self.by_case: dict[str, str] = {}

    def _put(self, test: unittest.TestCase, outcome: str) -> None:
        name = test.id().rsplit(".", 1)[-1].removesuffix("_cpu")
        self.by_case[f"node/{name}"] = outcome

    def addSuccess(self, test: unittest.TestCase) -> None:
        self._put(test, "pass")

    def addFailure(self, test: unittest.TestCase, err: Any) -> None:
        self._put(test, "fail")

    def addError(self, test: unittest.TestCase, err: Any) -> None:
        self._put(test, "error")

    def addSkip(self, test: unittest.TestCase, reason: str) -> None:
        self._put(test, "skip")


def runner_outcomes(backend: Any, cases: Iterable[str]) -> dict[str, str]:
    """Run onnx's runner with ``backend`` over the node ``cases`` (``node/test_x``) on the
    CPU; its outcome for each."""
    from onnx.backend.test import BackendTest

    names = sorted(c.removeprefix("node/") for c in cases)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runner = BackendTest(backend, __name__)
        node = runner.test_cases["OnnxBackendNodeModelTest"]
        suite = unittest.TestSuite(node(f"{n}_cpu") for n in names if hasattr(node, f"{n}_cpu"))
        result = _Outcomes()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            suite.run(result)
    return result.by_case


def verdicts(df: pd.DataFrame) -> dict[str, str]:
    """compare's verdict for each case: ``match`` when every output matched, else the worst
    status of its outputs."""
    rank = {s: i for i, s in enumerate(compare.STATUSES)}
    out: dict[str, str] = {}
    for case, status in zip(df["case"], df["status"], strict=True):
        if case not in out or rank[status] > rank[out[case]]:
            out[case] = status
    return out


def confusion(outcomes: dict[str, str], verdict: dict[str, str]) -> pd.DataFrame:
    """The runner's outcomes (rows) against compare's verdicts (columns), counted."""
    pairs = collections.Counter((outcomes[c], verdict[c]) for c in outcomes if c in verdict)
    table = pd.DataFrame(
        [[pairs[(o, v)] for v in VERDICTS] for o in OUTCOMES], index=OUTCOMES, columns=VERDICTS
    )
    return table.loc[:, table.sum() > 0]


def _timed(what: str, fn: Any, *args: Any, **kwargs: Any) -> tuple[Any, float]:
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    seconds = time.perf_counter() - start
    print(f"  {what:<40} {seconds:8.2f} s", flush=True)
    return out, seconds


def measure(name: str, store: Store) -> None:
    """Print the figures for one backend (see the module docstring)."""
    try:
        # the same backend on both sides: onnxruntime through its own backend interface
        # (the built-in onnxruntime backend also feeds the types numpy lacks, which the
        # runner's onnxruntime.backend cannot)
        ours = compare.resolve_backend("onnxruntime.backend" if name == "onnxruntime" else name)
    except (compare.CompareError, compare.BackendUnavailableError) as exc:
        print(f"\n{name}: left out ({exc})")
        return
    theirs: Any = ReferenceBackend
    if name == "onnxruntime":
        import onnxruntime.backend as theirs
    print(f"\n{name}: wall time, each from this run")
    outcomes, t_runner = _timed(
        "onnx's runner (BackendTest)", runner_outcomes, theirs, store.cases()
    )
    df, t_one = _timed("onnx-arrow compare", compare.compare, store, ours)
    df2, t_two = _timed("onnx-arrow compare --jobs 2", compare.compare, store, ours, jobs=2)
    print(f"  compare / runner {t_one / t_runner:.2f}x; --jobs 2 / one job {t_two / t_one:.2f}x")
    keep = ~df["case"].str.contains("bernoulli")  # random: differs run to run
    same = df[keep].drop(columns="actual").equals(df2[keep].drop(columns="actual"))
    print(f"  --jobs 2 report equal to one job's (Bernoulli aside): {same}")
    verdict = verdicts(df)
    print(f"\n  runner outcome (rows) x compare verdict (columns), {len(outcomes)} cases")
    print("  " + confusion(outcomes, verdict).to_string().replace("\n", "\n  "))
    differ = sorted(c for c in outcomes if (outcomes[c] == "pass") != (verdict.get(c) == "match"))
    print(f"\n  cases where one passes and the other does not: {len(differ)}")
    for case in differ:
        rows = df[(df["case"] == case) & (df["status"] != "match")]
        why = "; ".join(str(x) for x in rows["detail"].fillna(rows["error"]).head(2).tolist())
        print(f"    {case:<56} runner {outcomes[case]:<5} compare {verdict[case]:<14}")
        print(f"      {why[:150]}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=("reference", "onnxruntime"), action="append")
    parser.add_argument("--cases", default="*", help="glob of node test names (test_ab*)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "node.parquet"
        cases = [c for c in NodeSuiteSource() if fnmatch.fnmatchcase(c.name[5:], args.cases)]
        write_store(cases, path)
        print(f"node suite: {len(cases)} cases, store {path.stat().st_size:,} bytes")
        for name in args.backend or ["reference", "onnxruntime"]:
            measure(name, Store(path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
