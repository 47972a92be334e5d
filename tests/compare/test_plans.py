"""Which cases are compared and how: case patterns, skip and xfail, where tolerances come
from, patterns files."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pandas as pd
import pytest
from compare_helpers import scaled, stated_store

from onnx_arrow import compare as cmp
from onnx_arrow.cli import main
from onnx_arrow.corpus import NodeSuiteSource, Store, write_store


def test_no_case_matches(store: Store) -> None:
    with pytest.raises(cmp.CompareError, match="no case matches 'nope'"):
        cmp.compare(store, cases=["nope"])
    with pytest.raises(cmp.CompareError, match="rtol"):
        cmp.compare(store, rtol=-1)


PATTERNS = Path(__file__).parents[1] / "data" / "reference_backend_patterns.txt"


@pytest.fixture(scope="module")
def node_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("node") / "node.parquet"
    write_store(list(NodeSuiteSource()), path)
    return path


def test_the_node_suite_passes_with_onnxs_own_exclusions(
    node_store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "report.parquet"
    args = ["compare", str(node_store), "--patterns", str(PATTERNS), "--jobs", "2"]
    assert main([*args, "--out", str(report)]) == 0
    df = pd.read_parquet(report)
    counts = df["status"].value_counts().to_dict()
    assert counts["match"] > 2200
    assert counts["xfail"] == 2
    assert set(counts) == {"match", "skipped", "xfail"}
    skipped = df[df["status"] == "skipped"]
    assert skipped["detail"].str.startswith("skip pattern '").all()
    assert "node/test_bernoulli" in set(skipped["case"])
    # without the patterns the same store fails
    capsys.readouterr()
    assert main(["compare", str(node_store), "--jobs", "2"]) == 1
    capsys.readouterr()


def test_xfail_and_xpass(store: Store) -> None:
    df = cmp.compare(store, xfail=["test_abs", "test_div"], skip=[r"^node/test_add$"]).to_pandas()
    rows = {r.case: r for r in df.itertuples()}
    assert rows["node/test_abs"].status == "xpass"
    assert "xfail pattern 'test_abs' expects it to fail" in rows["node/test_abs"].detail
    assert rows["node/test_add"].status == "skipped"
    assert rows["node/test_add"].detail == "skip pattern '^node/test_add$'"
    with pytest.raises(cmp.CompareError, match=r"pattern '\(' is not a regular expression"):
        cmp.compare(store, skip=["("])


def test_a_failing_xfail_case_and_strict_xpass_on_the_command_line(
    store: Store, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(store.path)
    df = cmp.compare(store).to_pandas()
    failing = sorted({r.case for r in df.itertuples() if r.status not in cmp.PASSING})
    assert failing, "the store holds cases that fail"
    bad = "^(" + "|".join(re.escape(c) for c in failing) + ")$"
    assert main(["compare", path]) == 1
    assert main(["compare", path, "--xfail", bad]) == 0
    assert main(["compare", path, "--xfail", bad, "--xfail", "test_abs"]) == 0
    assert main(["compare", path, "--xfail", bad, "--xfail", "test_abs", "--strict"]) == 1
    listed = tmp_path / "patterns.json"
    listed.write_text(json.dumps({"xfail": [bad], "skip": []}))
    assert main(["compare", path, "--patterns", str(listed)]) == 0
    broken = tmp_path / "broken.txt"
    broken.write_text("skip\nexclude test_abs\n")
    assert main(["compare", path, "--patterns", str(broken)]) == 1
    assert "broken.txt: line 1: expected 'skip REGEX', 'xfail REGEX' or" in capsys.readouterr().err


def test_a_case_is_compared_with_its_own_tolerance_unless_a_pattern_names_it(
    tmp_path: Path,
) -> None:
    path = stated_store(tmp_path, '{"rtol": 0.2}')
    backend = scaled(1.1)  # 10% off: beyond 1e-3, within the case's own 0.2
    (row,) = cmp.compare(path, backend).to_pandas().itertuples()
    assert (row.status, row.rtol, row.atol, row.tolerance) == ("match", 0.2, 1e-7, "case")
    (row,) = cmp.compare(path, backend, tolerance={"tiny$": (1e-3, 0.0)}).to_pandas().itertuples()
    assert (row.status, row.rtol, row.atol) == ("mismatch", 1e-3, 0.0)
    assert row.tolerance == "pattern 'tiny$'"
    # the first pattern that finds the case wins; one that finds nothing changes nothing
    both = {"other": (0.0, 0.0), "test_tiny": (0.5, 0.0), "tiny": (0.0, 0.0)}
    (row,) = cmp.compare(path, backend, tolerance=both).to_pandas().itertuples()
    assert (row.status, row.tolerance) == ("match", "pattern 'test_tiny'")
    plain = stated_store(tmp_path / "plain", None)
    (row,) = cmp.compare(plain, backend, rtol=0.15).to_pandas().itertuples()
    assert (row.status, row.rtol, row.tolerance) == ("match", 0.15, "default")


def test_tolerances_on_the_command_line_and_in_a_patterns_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(stated_store(tmp_path, None))
    off = ["--backend", "reference"]
    assert main(["compare", path, *off]) == 0
    out = tmp_path / "r.parquet"
    assert main(["compare", path, "--tolerance", "tiny=0.5,0", "--out", str(out)]) == 0
    report = pd.read_parquet(out)
    assert report.loc[0, "tolerance"] == "pattern 'tiny'"
    assert report.loc[0, "rtol"] == 0.5
    lines = tmp_path / "p.txt"
    lines.write_text("# ours\ntolerance tiny=0.5,1e-6\nskip nothing_like_it\n")
    plan = cmp.Expectations.read(lines)
    assert plan.tolerance == [("tiny", 0.5, 1e-6)]
    assert plan.skip == ["nothing_like_it"]
    as_json = tmp_path / "p.json"
    as_json.write_text(json.dumps({"tolerance": {"a=b": [0.1, 0.0]}}))
    assert cmp.Expectations.read(as_json).tolerance == [("a=b", 0.1, 0.0)]
    assert cmp.parse_tolerance("a=b=0.1,0") == ("a=b", 0.1, 0.0)
    for bad, message in (
        ("tolerance tiny=0.5\n", "line 1: tolerance 'tiny=0.5': expected REGEX=RTOL,ATOL"),
        ("tolerance tiny=-1,0\n", "line 1: tolerance 'tiny=-1,0': rtol is -1.0"),
        ("tolerance (=1,0\n", f"pattern '(' ({lines}:1) is not a regular expression"),
    ):
        lines.write_text(bad)
        with pytest.raises(cmp.CompareError, match=re.escape(message)) as err:
            cmp.Expectations.read(lines)
        assert str(lines) in str(err.value)
    as_json.write_text(json.dumps({"tolerance": {"x": [0.1]}}))
    with pytest.raises(cmp.CompareError, match=r"tolerance must map patterns to \[RTOL, ATOL\]"):
        cmp.Expectations.read(as_json)
    capsys.readouterr()
    assert main(["compare", path, "--tolerance", "tiny=nan,0"]) == 2
    assert "rtol is nan" in capsys.readouterr().err
    with pytest.raises(cmp.CompareError, match="rtol is inf"):
        cmp.compare(path, rtol=float("inf"))


@pytest.mark.parametrize(
    "text",
    [
        '{"skip": [' + "[" * 5000 + "]" * 5000 + "]}",
        '{"tolerance": {"x": [1' + "0" * 5000 + ", 0]}}",
    ],
)
def test_a_hostile_patterns_file_is_a_located_error(tmp_path: Path, text: str) -> None:
    path = tmp_path / "patterns.json"
    path.write_text(text)
    with pytest.raises(cmp.CompareError) as err:
        cmp.Expectations.read(path)
    assert str(path) in str(err.value)


def test_max_ulp_zero_over_the_node_suite_agrees_with_the_max_ulp_column(
    node_store: Path,
) -> None:
    """The reference evaluator against the node suite's own outputs, bit for bit."""
    patterns = cmp.Expectations.read(PATTERNS)
    df = cmp.compare(node_store, max_ulp=0, patterns=patterns, jobs=2).to_pandas()
    judged = df[df["rule"] == "ulp"]
    assert len(judged) > 1000
    assert judged["max_ulp"].notna().all()
    assert (judged["ulp_budget"] == 0).all()
    matched = judged["status"] == "match"
    assert (judged.loc[matched, "max_ulp"] == 0).all()
    assert not (judged.loc[judged["max_ulp"] > 0, "status"] == "match").any()
    off = judged[~matched & ~judged["status"].isin(["xfail", "nan_mismatch", "dtype_mismatch"])]
    assert (off["max_ulp"] > 0).all()


def test_select_cases_looks_exact_names_up(store: Store) -> None:
    """Thousands of exact names cost a table look-up each; globs match as before."""
    from onnx_arrow.compare.plans import matching_names
    from onnx_arrow.corpus.sources import case_matches

    names = [f"{kind}/test_{i}" for kind in ("node", "real") for i in range(600)]
    names += ["simple/test_0", "loose"]
    patterns = [*names[::5], "test_12", "node/test_99*", "test_[12]", "loose", "re*/test_5?"]
    chosen = matching_names(names, patterns)
    wanted = [n for n in names if any(case_matches(n, p) for p in patterns)]
    assert chosen == wanted
    assert {"node/test_12", "real/test_12", "node/test_1", "real/test_2"} <= set(chosen)
    many = [f"node/test_{i}" for i in range(50_000)]
    assert matching_names(many, many[::-1]) == many
    assert matching_names(many, [m[5:] for m in many[::3]]) == many[::3]
    with pytest.raises(cmp.CompareError, match="no case matches 'test_x'"):
        matching_names(names, ["test_0", "test_x"])
    every = store.cases()
    assert cmp.select_cases(store, every) == every
    assert cmp.select_cases(store, [c.split("/")[1] for c in every[::-1]]) == every


def test_a_plan_is_the_settings_compare_takes_as_keywords(store: Store, tmp_path: Path) -> None:
    plan = cmp.Plan(rtol=1e-4, skip=["test_add"], tolerance={"test_abs": (1e-2, 0.0)})
    by_plan = cmp.compare(store, plan=plan, cases=["test_abs", "test_add"])
    by_keywords = cmp.compare(
        store, cases=["test_abs", "test_add"], rtol=1e-4, skip=["test_add"],
        tolerance={"test_abs": (1e-2, 0.0)},
    )  # fmt: skip
    assert by_plan.table.equals(by_keywords.table)
    assert by_plan.provenance == by_keywords.provenance
    assert by_plan.provenance is not None
    assert by_plan.provenance["rtol"] == 1e-4
    stored = tmp_path / "actual.parquet"
    cmp.write_actual(store, "reference", stored, cases=["test_abs"])
    assert cmp.compare_stores(store, stored, plan=plan, cases=["test_abs"]).table.equals(
        cmp.compare_stores(store, stored, cases=["test_abs"], **_keywords(plan)).table
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.rtol = 1.0  # type: ignore[misc]
    assert plan.tolerance == (("test_abs", 1e-2, 0.0),)
    assert dataclasses.replace(plan, rtol=1e-2).rtol == 1e-2


def _keywords(plan: cmp.Plan) -> dict[str, object]:
    return {f.name: getattr(plan, f.name) for f in dataclasses.fields(plan)}


def test_a_plan_and_keywords_together_or_unknown_keywords_are_refused(store: Store) -> None:
    with pytest.raises(cmp.CompareError, match=r"^compare\(rtol\): rtol given both as keywords"):
        cmp.compare(store, plan=cmp.Plan(), rtol=1e-4)  # type: ignore[call-overload]
    with pytest.raises(cmp.CompareError, match=r"^compare_stores\(rtl\): unexpected keyword 'rtl'"):
        cmp.compare_stores(store, store, rtl=1e-4)  # type: ignore[call-arg]
    with pytest.raises(cmp.CompareError, match=r"^compare\(plan\): expected a Plan, got dict"):
        cmp.compare(store, plan={"rtol": 1e-4})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"skip": "test_abs"}, r"Plan\(skip\): expected a list .* give \['test_abs'\] for one"),
        (
            {"xfail": ["ok", 3]},
            r"Plan\(xfail\[1\]\): expected a regular expression \(str\), got int",
        ),
        ({"xfail": ["ok", "("]}, r"Plan\(xfail\[1\]\): pattern '\(' is not a regular expression"),
        ({"tolerance": {"(": (0.1, 0.0)}}, r"Plan\(tolerance\[0\]\): pattern '\('"),
        ({"tolerance": {"x": (0.1, -1)}}, r"Plan\(tolerance\): pattern 'x': atol is -1"),
        ({"tolerance": {"x": 0.1}}, r"Plan\(tolerance\): expected \(rtol, atol\) for pattern 'x'"),
        ({"tolerance": "x"}, r"Plan\(tolerance\): expected \{pattern: \(rtol, atol\)\}"),
        ({"patterns": ["skip x"]}, r"Plan\(patterns\): expected the Expectations of a file"),
        ({"keep_actual": "some"}, r"Plan\(keep_actual\): keep_actual is 'some'; expected one"),
        ({"rtol": float("nan")}, r"Plan\(rtol\): rtol is nan"),
        ({"atol": -1.0}, r"Plan\(atol\): atol is -1.0"),
        ({"atol": "1e-3"}, r"Plan\(atol\): atol is '1e-3'"),
        ({"max_ulp": -1}, r"Plan\(max_ulp\): max_ulp is -1; give a whole number"),
        ({"max_ulp": True}, r"Plan\(max_ulp\): max_ulp is True"),
        ({"ulp_floor": float("inf")}, r"Plan\(ulp_floor\): ulp_floor is inf"),
    ],
)
def test_a_bad_setting_is_refused_where_it_is(settings: dict[str, object], message: str) -> None:
    with pytest.raises(cmp.CompareError, match=f"^{message}"):
        cmp.Plan(**settings)  # type: ignore[arg-type]
