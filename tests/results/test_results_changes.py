"""Where verdicts changed: the same as two separate compare reports say, case by case;
along runtime versions and onnx releases; versions that cannot be ordered refused."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from release_helpers import network
from results_helpers import verdicts

from onnx_arrow import results
from onnx_arrow.errors import ResultsError
from onnx_arrow.reports import Report


def _changes(table: pa.Table, axis: str) -> dict[tuple[str, int, int], str]:
    rows = table.filter(pa.compute.equal(table.column("axis"), axis)).to_pylist()
    return {(r["case"], r["data_set"], r["index"]): r["change"] for r in rows}


def test_the_changes_are_what_two_compare_reports_say(
    results_dir: Path, reports: tuple[Report, Report]
) -> None:
    old, new = (verdicts(r) for r in reports)
    expected = {
        key: f"{old[key]}->{new[key]}" for key in old.keys() & new.keys() if old[key] != new[key]
    }
    table = results.changes(results.read(results_dir))
    assert table.schema == results.CHANGES_SCHEMA
    assert _changes(table, "runtime_version") == expected
    assert sorted(expected.values()) == ["fail->pass", "pass->fail"]  # both ways planted
    for row in table.to_pylist():
        assert (row["runtime"], row["before"], row["after"]) == ("mine", "1.0", "1.1")
        side = {"pass->fail": row["after_status"], "fail->pass": row["before_status"]}
        assert side[row["change"]] in ("mismatch", "shape_mismatch")
    assert _changes(table, "onnx_release") == {}


def test_versions_in_version_order_not_in_text_order(
    tmp_path: Path, reports: tuple[Report, Report]
) -> None:
    old, new = reports
    # 1.10 after 1.9: the planted bug comes with 1.10, so 1.9 -> 1.10 is where it changed
    results.add(tmp_path, _relabel(old, "1.9"))
    results.add(tmp_path, _relabel(new, "1.10"))
    results.add(tmp_path, _relabel(old, "1.2"))
    rows = results.changes(results.read(tmp_path)).to_pylist()
    assert {(r["before"], r["after"]) for r in rows} == {("1.9", "1.10")}


def test_along_onnx_releases(tmp_path: Path, reports: tuple[Report, Report]) -> None:
    old, new = reports
    results.add(tmp_path, _relabel(old, "2.0", onnx="1.16.0", digest="a" * 32))
    results.add(tmp_path, _relabel(new, "2.0", onnx="1.17.0", digest="b" * 32))
    table = results.changes(results.read(tmp_path))
    rows = table.to_pylist()
    assert {(r["axis"], r["before"], r["after"], r["runtime_version"]) for r in rows} == {
        ("onnx_release", "1.16.0", "1.17.0", "2.0")
    }
    before, after = verdicts(old), verdicts(new)
    expected = {k: f"{before[k]}->{after[k]}" for k in before if before[k] != after[k]}
    assert _changes(table, "onnx_release") == expected


def test_a_version_that_cannot_be_ordered_is_a_located_error(
    tmp_path: Path, reports: tuple[Report, Report]
) -> None:
    results.add(tmp_path, _relabel(reports[0], "nightly"))
    results.add(tmp_path, _relabel(reports[1], "1.0"))
    with pytest.raises(ResultsError, match="'nightly' is not a version") as caught:
        results.changes(results.read(tmp_path))
    assert caught.value.where is not None
    assert caught.value.where.startswith("run ")


def test_runs_without_a_version_take_no_part(
    tmp_path: Path, reports: tuple[Report, Report]
) -> None:
    for report in reports:
        made = dict(report.provenance or {})
        made["backend"] = {"name": "runner", "runs": "/opt/bin/rt {model}", "runtime": None}
        results.add(tmp_path, Report.of(report.table, made))
    table = results.read(tmp_path)
    assert set(table.column("runner_command").to_pylist()) == {"rt '{model}'"}
    assert results.changes(table).num_rows == 0


def _relabel(
    report: Report, version: str, *, onnx: str | None = None, digest: str | None = None
) -> Report:
    """``report`` as a run of runtime ``mine`` ``version`` (over another corpus)."""
    made = dict(report.provenance or {})
    made["backend"] = {**made["backend"], "runtime": "mine", "runtime_version": version}
    if onnx is not None:
        made["store_onnx_version"], made["store_digest"] = onnx, digest
    return Report.of(report.table, made)


@pytest.mark.slow  # two onnxruntime versions from the index, each in an environment made cold
@network
def test_the_changes_between_two_onnxruntime_versions_are_what_their_reports_say(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """onnxruntime 1.20.1 and 1.24.1, run as ``--backend onnxruntime==V`` runs them: the
    changes the results store gives between them are the ones their two reports say."""
    from onnx_arrow import compare
    from onnx_arrow.corpus import NodeSuiteSource, Store, write_store

    monkeypatch.setenv("ONNX_ARROW_CACHE_DIR", str(tmp_path / "cache"))
    # an opset-22 model (1.20.1 refuses it), uint8 Add (no kernel in 1.20.1), and two both pass
    names = {"node/test_acos", "node/test_add_uint8", "node/test_abs", "node/test_add"}
    path = tmp_path / "node.parquet"
    write_store([c for c in NodeSuiteSource() if c.name in names], path)
    reports = [compare.compare(Store(path), f"onnxruntime=={v}") for v in ("1.20.1", "1.24.1")]
    store = tmp_path / "results"
    for report in reports:
        results.add(store, report)
    old, new = (verdicts(r) for r in reports)
    expected = {
        key: f"{old[key]}->{new[key]}" for key in old.keys() & new.keys() if old[key] != new[key]
    }
    table = results.changes(results.read(store))
    assert _changes(table, "runtime_version") == expected
    assert {case for case, _, _ in expected} == {"node/test_acos", "node/test_add_uint8"}
    for row in table.to_pylist():
        assert (row["runtime"], row["before"], row["after"]) == ("onnxruntime", "1.20.1", "1.24.1")
