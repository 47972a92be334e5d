"""compare with onnxruntime's expectation files against onnxruntime's own backend test script,
case by case, on the node suite of the installed onnx.

onnxruntime runs onnx's backend test suite with ``onnxruntime/test/python/
onnx_backend_test_series.py``, which reads ``onnx_backend_test_series_filters.jsonc`` (the
tests to skip) and ``onnx_backend_test_series_overrides.jsonc`` (their tolerances) from a
``testdata`` folder beside it.  This runs a copy of that script (``--script``, from an
onnxruntime source tree; it is not part of onnx-arrow) with the two files of
``tests/data/onnxruntime`` on the installed onnxruntime, and ``onnx-arrow compare
--backend onnxruntime --patterns FILTERS --patterns OVERRIDES`` over a store of the same
node cases, and prints:

1. the script's outcome (pass, fail, error, skip) against compare's verdict for each case
   (``match`` when every output matched, else its worst status), with the cases they
   disagree on and why;
2. the entries of the files that matched no failing case (compare's "can be removed");
3. the same with the skips run (the script with ``-t test_``, which applies no filters;
   compare ``--run-skipped``): the entries of the filters file the installed onnxruntime no
   longer needs, and whether the script agrees that their cases pass.

Usage::

    python benchmarks/vs_onnxruntime_series.py --script path/to/onnx_backend_test_series.py
    python benchmarks/vs_onnxruntime_series.py --script ... --cases 'test_ab*'

The script's ``assert_similar_outputs`` must take onnx's ``model_dir`` keyword (onnx 1.16
and later pass it); a copy from before that is given it here, nothing else changed.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import fnmatch
import importlib.util
import io
import re
import shutil
import sys
import tempfile
import time
import unittest
import warnings
from pathlib import Path
from typing import Any

import pandas as pd

from onnx_arrow import compare
from onnx_arrow.compare.plans import searched_names
from onnx_arrow.corpus import NodeSuiteSource, Store, write_store

DATA = Path(__file__).parents[1] / "tests" / "data" / "onnxruntime"
FILES = ("onnx_backend_test_series_filters.jsonc", "onnx_backend_test_series_overrides.jsonc")
OUTCOMES = ("pass", "fail", "error", "skip")
#: compare's verdicts that agree with each outcome of the script.
AGREES = {
    "pass": {"match", "xpass"},
    "skip": {"skipped"},
    "fail": set(compare.STATUSES) - {"match", "xpass", "skipped"},
    "error": set(compare.STATUSES) - {"match", "xpass", "skipped"},
}


class _Outcomes(unittest.TestResult):
    """The outcome of each node test of the script, by case name (``node/test_abs``), and
    its message's last line."""

    def __init__(self) -> None:
        super().__init__()
        self.by_case: dict[str, tuple[str, str]] = {}

    def _put(self, test: unittest.TestCase, outcome: str, why: str = "") -> None:
        name = test.id().rsplit(".", 1)[-1].removesuffix("_cpu")
        self.by_case[f"node/{name}"] = (outcome, why.strip().splitlines()[-1][:160] if why else "")

    def addSuccess(self, test: unittest.TestCase) -> None:
        self._put(test, "pass")

    def addFailure(self, test: unittest.TestCase, err: Any) -> None:
        self._put(test, "fail", self._exc_info_to_string(err, test))

    def addError(self, test: unittest.TestCase, err: Any) -> None:
        self._put(test, "error", self._exc_info_to_string(err, test))

    def addSkip(self, test: unittest.TestCase, reason: str) -> None:
        self._put(test, "skip", reason)


def script_outcomes(script: Path, cases: list[str], *, filtered: bool) -> dict[str, Any]:
    """Run onnxruntime's script (a copy in a folder with the two files) over the node
    ``cases``: with its filters, or with none (``-t test_``, as ``--test-name`` does)."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        text = script.read_text(encoding="utf-8").replace(
            "def assert_similar_outputs(cls, ref_outputs, outputs, rtol, atol):",
            "def assert_similar_outputs(cls, ref_outputs, outputs, rtol, atol, model_dir=None):",
        )
        (folder / script.name).write_text(text, encoding="utf-8")
        (folder / "testdata").mkdir()
        for name in FILES:
            shutil.copyfile(DATA / name, folder / "testdata" / name)
        name = f"ort_series_{'filtered' if filtered else 'all'}"
        spec = importlib.util.spec_from_file_location(name, folder / script.name)
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            spec.loader.exec_module(module)
            module.create_backend_test(None if filtered else "test_")
            node = module.OnnxBackendNodeModelTest
            wanted = {c.removeprefix("node/") for c in cases}
            tests = list(unittest.TestLoader().getTestCaseNames(node))
            suite = unittest.TestSuite(node(t) for t in tests if t.removesuffix("_cpu") in wanted)
            result = _Outcomes()
            with contextlib.redirect_stderr(io.StringIO()):
                suite.run(result)
        del sys.modules[name]
    return result.by_case


def verdicts(df: pd.DataFrame) -> dict[str, str]:
    """compare's verdict for each case: its worst status."""
    rank = {s: i for i, s in enumerate(compare.STATUSES)}
    out: dict[str, str] = {}
    for case, status in zip(df["case"], df["status"], strict=True):
        if case not in out or rank[status] > rank[out[case]]:
            out[case] = status
    return out


def agreement(outcomes: dict[str, Any], verdict: dict[str, str], df: pd.DataFrame) -> int:
    """Print the table of the script's outcomes against compare's verdicts and the cases
    they disagree on; the number of those."""
    pairs = collections.Counter((outcomes[c][0], verdict[c]) for c in outcomes if c in verdict)
    columns = [s for s in compare.STATUSES if any(pairs[(o, s)] for o in OUTCOMES)]
    table = pd.DataFrame(
        [[pairs[(o, v)] for v in columns] for o in OUTCOMES], index=OUTCOMES, columns=columns
    )
    print("  script outcome (rows) x compare verdict (columns)")
    print("  " + table.to_string().replace("\n", "\n  "))
    missing = sorted(set(outcomes) ^ set(verdict))
    if missing:
        print(f"  in one run only: {len(missing)}: {missing[:10]}")
    differ = sorted(
        c for c in outcomes if c in verdict and verdict[c] not in AGREES[outcomes[c][0]]
    )
    agreed = sum(1 for c in outcomes if c in verdict) - len(differ)
    print(f"  agree on {agreed} of {agreed + len(differ)} cases; disagree on {len(differ)}")
    for case in differ:
        rows = df[(df["case"] == case) & (df["status"] != "match")]
        ours = "; ".join(str(x) for x in rows["detail"].fillna(rows["error"]).head(1).tolist())
        print(f"    {case:<56} script {outcomes[case][0]:<5} compare {verdict[case]}")
        print(f"      script: {outcomes[case][1][:150]}")
        print(f"      compare: {ours[:150]}")
    return len(differ)


def running_skips(patterns: compare.Expectations) -> compare.Expectations:
    """The patterns with the skips run as xfail, but for those the script makes itself
    (``(FLOAT16)``), which it applies with ``-t`` too."""
    own = [p for p in patterns.skip if getattr(p, "group", None) == "onnx_backend_test_series.py"]
    rest = compare.Expectations(
        [p for p in patterns.skip if p not in own], patterns.xfail, patterns.tolerance, patterns.ulp
    )
    return compare.Expectations(own) + rest.running_skips()


def print_unneeded(table: pd.DataFrame) -> None:
    """The entries, those that find no case first, then those whose cases all pass."""
    none = table["why"] == "finds no case"
    for title, rows in (("finds no case", table[none]), ("its cases all pass", table[~none])):
        print(f"  {title}: {len(rows)}")
        for row in rows.itertuples():
            where = str(row.where).rsplit("/", 1)[-1]
            print(f"    {where:<45} {row.group or '':<38} {row.pattern}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--script", type=Path, required=True, help="onnx_backend_test_series.py")
    parser.add_argument("--cases", default="*", help="glob of node test names (test_ab*)")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    ort = compare.backend_named("onnxruntime")
    import onnxruntime

    onnxruntime.set_default_logger_severity(3)  # the script's sessions: errors only
    patterns = compare.Expectations.read(DATA / FILES[0]) + compare.Expectations.read(
        DATA / FILES[1]
    )
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "node.parquet"
        cases = [c for c in NodeSuiteSource() if fnmatch.fnmatchcase(c.name[5:], args.cases)]
        write_store(cases, path)
        store = Store(path)
        names = store.cases()
        onnx_version = store.metadata.get("onnx_version")
        print(f"node suite: {len(names)} cases (onnx {onnx_version})")
        for filtered in (True, False):
            title = (
                "with the filters"
                if filtered
                else "skips run (script -t test_, compare --run-skipped)"
            )
            print(f"\n{title}")
            start = time.perf_counter()
            outcomes = script_outcomes(args.script, names, filtered=filtered)
            t_script = time.perf_counter() - start
            used = patterns if filtered else running_skips(patterns)
            start = time.perf_counter()
            df = compare.compare(store, ort, patterns=used, jobs=args.jobs).to_pandas()
            t_compare = time.perf_counter() - start
            print(
                f"  wall time: script {t_script:.1f} s, "
                f"compare --jobs {args.jobs} {t_compare:.1f} s"
            )
            agreement(outcomes, verdicts(df), df)
            table = compare.unneeded_entries(df, used, onnx_version)
            print(f"\n  entries that matched no failing case (can be removed): {len(table)}")
            print_unneeded(table)
            if not filtered:
                gone = table[table["why"] != "finds no case"]
                verdict = verdicts(df)
                print(
                    "\n  of those whose cases all pass here, the script's outcome for their cases:"
                )
                for row in gone.itertuples():
                    found = [
                        c
                        for c in verdict
                        if any(re.search(row.pattern, n) for n in searched_names(c))
                    ]
                    said = collections.Counter(outcomes.get(c, ("absent",))[0] for c in found)
                    print(f"    {row.pattern:<60} {dict(said)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
