"""Reports as Arrow tables that carry what they were made from: joined with both
provenances kept (or refused), never written without a word when that is lost, read back
with it."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from compare_helpers import scaled

from onnx_arrow import compare as cmp
from onnx_arrow import jupyter
from onnx_arrow.corpus import NodeSuiteSource, Store, write_store
from onnx_arrow.diff import diff
from onnx_arrow.errors import CompareError, ProvenanceWarning
from onnx_arrow.reports import REPORT_METADATA_KEY, Report, concat_reports

CASES = ("node/test_abs", "node/test_add")


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    cases = [c for c in NodeSuiteSource() if c.name in CASES]
    assert len(cases) == len(CASES)
    path = tmp_path_factory.mktemp("reports") / "node.parquet"
    write_store(cases, path)
    return Store(path)


@pytest.fixture(scope="module")
def two_runs(store: Store) -> tuple[Report, Report]:
    return cmp.compare(store), cmp.compare(store, scaled(2.0))


def test_a_report_is_a_table_that_says_what_made_it(store: Store) -> None:
    report = cmp.compare(store, cases=["test_abs"])
    assert isinstance(report.table, pa.Table)
    assert report.table.schema.remove_metadata() == cmp.REPORT_SCHEMA
    made = json.loads(report.table.schema.metadata[REPORT_METADATA_KEY.encode()])
    assert made == report.provenance
    assert made["kind"] == report.kind == "compare"
    assert made["store"] == [str(store.path)]
    assert len(made["store_digest"]) == 32
    assert made["store_onnx_version"] == store.metadata.get("onnx_version")
    assert made["backend"]["name"] == "reference"
    assert (made["rtol"], made["atol"], made["keep_actual"]) == (1e-3, 1e-7, "failed")
    frame = report.to_pandas()
    assert frame.attrs["onnx_arrow"] == made
    assert frame["status"].tolist() == report.table.column("status").to_pylist()
    assert frame["op_types"].tolist() == [("Abs",)]
    assert pa.table(report).equals(report.table)  # the Arrow PyCapsule stream protocol
    assert "compare: 1 rows, backend reference" in repr(report)


def test_the_digest_follows_the_store(store: Store, tmp_path: Path) -> None:
    abs_only = tmp_path / "abs.parquet"
    write_store([c for c in NodeSuiteSource() if c.name == "node/test_abs"], abs_only)
    one = cmp.compare(store, cases=["test_abs"]).provenance
    again = cmp.compare(store, cases=["test_abs"]).provenance
    other = cmp.compare(abs_only).provenance
    assert one is not None
    assert again is not None
    assert other is not None
    assert one["store_digest"] == again["store_digest"] != other["store_digest"]


def test_the_digest_leaves_out_when_the_corpus_was_imported(tmp_path: Path) -> None:
    """A corpus built again from one source (``@onnx`` on each use) is the same corpus."""
    from onnx_arrow.compare.report import store_digest
    from onnx_arrow.corpus import WriteOptions

    cases = [c for c in NodeSuiteSource() if c.name == "node/test_abs"]
    digests = []
    for k, (when, onnx) in enumerate([("2026-01-01", "1.0"), ("2026-02-02", "1.0"), ("", "1.1")]):
        options = WriteOptions(provenance={"imported_at": when, "onnx": onnx})
        write_store(cases, tmp_path / f"{k}.parquet", options=options)
        digests.append(store_digest(Store(tmp_path / f"{k}.parquet")))
    assert digests[0] == digests[1] != digests[2]


def test_two_reports_joined_keep_both_provenances(two_runs: tuple[Report, Report]) -> None:
    a, b = two_runs
    joined = concat_reports([a, b])
    assert joined.table.num_rows == a.table.num_rows + b.table.num_rows
    assert joined.kind == "compare"
    sources = joined.sources
    assert [s["backend"] for s in sources] == [
        a.provenance["backend"],  # type: ignore[index]
        b.provenance["backend"],  # type: ignore[index]
    ]
    assert [s["rows"] for s in sources] == [a.table.num_rows, b.table.num_rows]
    assert joined.source_of(0)["backend"]["name"] == "reference"
    assert joined.source_of(joined.table.num_rows - 1) == sources[1]
    pd.testing.assert_frame_equal(
        joined.to_pandas(), pd.concat([a.to_pandas(), b.to_pandas()], ignore_index=True)
    )
    # joined again: the sources stay flat, in row order
    thrice = concat_reports([joined, a])
    assert [s["rows"] for s in thrice.sources] == [*(s["rows"] for s in sources), a.table.num_rows]
    with pytest.raises(CompareError, match="no provenance covers row 99"):
        joined.source_of(99)


def test_reports_that_cannot_be_joined_are_refused(
    two_runs: tuple[Report, Report], tmp_path: Path
) -> None:
    a, _ = two_runs
    folder = tmp_path / "corpus" / "c"
    folder.mkdir(parents=True)
    (folder / "loose.pb").write_bytes(b"x")  # a case without a model
    of_a_diff = diff(tmp_path / "corpus", tmp_path / "corpus")
    assert of_a_diff.kind == "diff"
    with pytest.raises(CompareError, match=r"reports\[1\]\): the report is a diff report"):
        concat_reports([a, of_a_diff])
    with pytest.raises(CompareError, match=r"reports\[1\]\): the report says nothing"):
        concat_reports([a, Report.of(a.table, None)])
    with pytest.raises(CompareError, match="a DataFrame does not keep what it was made from"):
        concat_reports([a, a.to_pandas()])  # type: ignore[list-item]
    narrower = Report.of(a.table.drop_columns(["actual"]), a.provenance)
    with pytest.raises(CompareError, match="columns are not those of the first"):
        concat_reports([a, narrower])
    with pytest.raises(CompareError, match="no report to join"):
        concat_reports([])


def test_a_report_that_lost_its_provenance_is_written_with_a_warning(
    two_runs: tuple[Report, Report], tmp_path: Path
) -> None:
    a, b = two_runs
    concatenated = pd.concat([a.to_pandas(), b.to_pandas()], ignore_index=True)
    assert "onnx_arrow" not in concatenated.attrs  # what pandas does to two runs
    with pytest.warns(ProvenanceWarning, match="without what it was made from"):
        cmp.write_report(concatenated, tmp_path / "lost.parquet")
    assert pq.read_schema(tmp_path / "lost.parquet").metadata.get(b"onnx_arrow.report") is None
    partial = Report.of(a.table, {"kind": "compare", "onnx_arrow_version": "0"})
    with pytest.warns(
        ProvenanceWarning, match="partial.parquet: the report is written without its store"
    ):
        cmp.write_report(partial, tmp_path / "partial.parquet")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cmp.write_report(concat_reports([a, b]), tmp_path / "joined.parquet")
        cmp.write_report(a, tmp_path / "a.parquet")


def test_a_joined_report_reads_back_with_its_sources(
    store: Store, two_runs: tuple[Report, Report], tmp_path: Path
) -> None:
    a, b = two_runs
    joined = concat_reports([a, b])
    out = tmp_path / "joined.parquet"
    cmp.write_report(joined, out)
    back = cmp.read_report(out)
    assert back.provenance == json.loads(json.dumps(joined.provenance, default=str))
    assert back.table.equals(joined.table)
    # a row of the second run is shown from the store its run names
    view = jupyter.text(jupyter.report_view(back, joined.table.num_rows - 1))
    assert "node/test_add" in view
    # a scoreboard column is one backend: a join of two is refused, a join of one is one column
    with pytest.raises(CompareError, match="joins the runs of 2 backends"):
        cmp.scoreboard([back])
    board = cmp.scoreboard([concat_reports([cmp.compare(store, cases=["test_abs"]), a])])
    assert list(board.backends["backend"]) == ["reference"]


def test_a_report_written_before_reads_as_a_compare_report(store: Store, tmp_path: Path) -> None:
    """A report file of the DataFrame era: pandas' metadata, no ``kind``, no digest."""
    frame = cmp.compare(store, cases=["test_abs"]).to_pandas()
    made = dict(frame.attrs["onnx_arrow"])
    for key in ("kind", "store_digest", "store_onnx_version"):
        del made[key]
    table = pa.Table.from_pandas(frame, preserve_index=False)
    meta = {**table.schema.metadata, REPORT_METADATA_KEY.encode(): json.dumps(made).encode()}
    pq.write_table(table.replace_schema_metadata(meta), tmp_path / "before.parquet")
    back = cmp.read_report(tmp_path / "before.parquet")
    assert back.kind == "compare"
    assert back.provenance == {"kind": "compare", **made}
    pd.testing.assert_frame_equal(back.to_pandas(), frame, check_like=False)


def test_a_diff_and_a_trace_say_what_made_them(store: Store, tmp_path: Path) -> None:
    from onnx_arrow.trace import trace

    made = diff(store.path, store.path).provenance
    assert made is not None
    assert (made["kind"], made["old"], made["new"]) == ("diff", str(store.path), str(store.path))
    found = trace(store, "node/test_abs", "reference", tmp_path / "t.parquet", rtol=1e-4)
    report = found.report(["value", "side", "status"])
    assert report.kind == "trace"
    assert report.table.column_names == ["value", "side", "status"]
    provenance = report.provenance
    assert provenance is not None
    assert provenance["store"] == [str(store.path)]
    assert provenance["store_digest"] == cmp.compare(store).provenance["store_digest"]  # type: ignore[index]
    assert provenance["plan"]["rtol"] == 1e-4
    assert provenance["backend"]["name"] == "reference"
