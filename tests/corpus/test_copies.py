"""Repeated files stored once (onnx_arrow/corpus/copies.py): every reader gives a copy back
as the file it is, engines see every value through the documented view, and a store whose
copies name what they cannot is a located error."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from onnx import TensorProto, helper, numpy_helper, save_model
from store_helpers import rewrite, tree_bytes

from onnx_arrow.corpus import (
    CorpusError,
    FolderSource,
    Store,
    cases_from_rows,
    copies,
    export_store,
    write_store,
)
from onnx_arrow.corpus.copies import RESOLVED_POLARS, RESOLVED_SQL
from onnx_arrow.corpus.decode import REQUIRED_COLUMNS
from onnx_arrow.corpus.format import METADATA_KEY
from onnx_arrow.corpus.options import WriteOptions
from onnx_arrow.errors import UnsupportedTypeError


def _tensor_model(op: str) -> Any:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])
    graph = helper.make_graph([helper.make_node(op, ["x"], ["y"])], "g", [x], [y])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _sequence_model() -> Any:
    t = helper.make_tensor_type_proto(TensorProto.FLOAT, None)
    s = helper.make_sequence_type_proto(t)
    x, y = helper.make_value_info("x", s), helper.make_value_info("y", s)
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g", [x], [y])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _put(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _tensor(values: list[float], name: str) -> bytes:
    return numpy_helper.from_array(np.array(values, np.float32), name).SerializeToString()


def _sequence(name: str) -> bytes:
    items = [np.array([1.5, -2.0], np.float32), np.array([[3.0]], np.float32)]
    return numpy_helper.from_list(items, name).SerializeToString()


def repeated_corpus(root: Path) -> Path:
    """Cases that repeat files: the same model in two cases, an input repeated across
    cases, a README repeated, a sequence value repeated within its case (Identity: its
    output is its input, but for the name) and in another case."""
    model = _tensor_model("Abs")
    for name, outputs in (("test_a", [1.0, 2.0, 3.0]), ("test_b", [1.0, 2.0, 3.0])):
        case = root / "node" / name
        case.mkdir(parents=True)
        save_model(model, case / "model.onnx")
        _put(case / "test_data_set_0" / "input_0.pb", _tensor([-1.0, 2.0, -3.0], "x"))
        _put(case / "test_data_set_0" / "output_0.pb", _tensor(outputs, "y"))
        own = float(ord(name[-1]))  # each case's data set 1 its own
        _put(case / "test_data_set_1" / "input_0.pb", _tensor([own, 0.5, 0.25], "x"))
        _put(case / "test_data_set_1" / "output_0.pb", _tensor([own, 0.5, 0.25], "y"))
        (case / "README").write_text("the same words\n")
    for name in ("test_seq", "test_seq_again"):
        case = root / "simple" / name
        case.mkdir(parents=True)
        save_model(_sequence_model(), case / "model.onnx")
        _put(case / "test_data_set_0" / "input_0.pb", _sequence("x"))
        _put(case / "test_data_set_0" / "output_0.pb", _sequence("x"))
    return root


@pytest.fixture(scope="module", autouse=True)
def _tiny_copies() -> Any:
    """Files of any size stored as copies: the corpus's files are smaller than
    MIN_COPY_BYTES (a file under it is stored whole: see the last test)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(copies, "MIN_COPY_BYTES", 0)
        yield


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """The corpus, its store (a case per row group) and its store without copies."""
    root = tmp_path_factory.mktemp("copies")
    src = repeated_corpus(root / "src")
    store, whole = root / "store.parquet", root / "whole.parquet"
    write_store(FolderSource(src), store, options=WriteOptions(row_group_bytes=1))
    write_store(FolderSource(src), whole, options=WriteOptions(row_group_bytes=1, dedup=False))
    return src, store, whole


def _copies(path: Path) -> dict[tuple[str, str | None], str]:
    t = pq.read_table(path, columns=["path", "element", "copy_of"])
    return {
        (p, e): c
        for p, e, c in zip(*(t[n].to_pylist() for n in ("path", "element", "copy_of")), strict=True)
        if c is not None
    }


def test_repeated_files_are_stored_once_and_named(stores):
    _, store, whole = stores
    copies = _copies(store)
    assert copies == {
        ("node/test_b/README", None): "node/test_a/README",
        ("node/test_b/model.onnx", None): "node/test_a/model.onnx",
        ("node/test_b/test_data_set_0/input_0.pb", ""): "node/test_a/test_data_set_0/input_0.pb",
        ("node/test_b/test_data_set_0/output_0.pb", ""): "node/test_a/test_data_set_0/output_0.pb",
        ("simple/test_seq_again/model.onnx", None): "simple/test_seq/model.onnx",
        # the sequence: its output is a copy of its input, in its own case (the output's
        # rows come first in a data set, so the input names the output); the other case's
        # both name it, value row and element rows alike
        **{
            (f"simple/{case}/test_data_set_0/{io}.pb", e): (
                "simple/test_seq/test_data_set_0/output_0.pb"
            )
            for case, io in (
                ("test_seq", "input_0"),
                ("test_seq_again", "input_0"),
                ("test_seq_again", "output_0"),
            )
            for e in ("", "tensor_values[0]", "tensor_values[1]")
        },
    }
    assert Store(store).num_row_groups == 4  # the copies in other row groups than theirs
    assert not _copies(whole)
    payload = ["content", "envelope", "data_float"]
    held = [pq.read_table(p, columns=payload) for p in (store, whole)]
    assert [sum(t[c].null_count for c in payload) for t in held] == [44 + 16, 44]
    # a copy's rows keep every column but the payload
    t = pq.read_table(store).to_pylist()
    by = {(r["path"], r["element"]): r for r in t}
    copy = by[("node/test_b/test_data_set_0/input_0.pb", "")]
    source = by[("node/test_a/test_data_set_0/input_0.pb", "")]
    assert copy["data_float"] is None
    assert copy["envelope"] is None
    assert {k: v for k, v in copy.items() if k not in ("path", "test_case", "copy_of")} == {
        k: v
        for k, v in source.items()
        if k not in ("path", "test_case", "copy_of", "data_float", "envelope")
    } | {"data_float": None, "envelope": None}


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_store_of_copies_exports_byte_for_byte(stores, tmp_path, jobs):
    src, store, _ = stores
    export_store(store, tmp_path / "out", jobs=jobs)
    assert tree_bytes(tmp_path / "out") == tree_bytes(src)


def test_store_reads_copies_as_the_files_they_are(stores):
    src, store, whole = stores
    ours, theirs = Store(store), Store(whole)
    for case in ours.cases():
        got, want = ours.case(case), theirs.case(case)
        assert [(v.path, v.to_bytes()) for v in got.values] == [
            (v.path, v.to_bytes()) for v in want.values
        ]
        assert got.model == want.model
        assert ours.model(case) == theirs.model(case)
        assert {f.path: f.data for f in ours.case_files(case)} == {
            f.path: f.data for f in theirs.case_files(case)
        }
    again = "simple/test_seq_again/test_data_set_0/input_0.pb"
    assert ours.value(again).to_bytes() == (src / again).read_bytes()
    assert [v.to_bytes() for v in ours.values()] == [v.to_bytes() for v in theirs.values()]
    assert {f.path: f.data for f in ours.files()} == tree_bytes(src)
    columns = ["path", "content", "envelope", "data_float"]
    assert ours.read_columns(columns).equals(theirs.read_columns(columns))
    assert ours.read_columns(["content"], roles=["model"]).equals(
        theirs.read_columns(["content"], roles=["model"])
    )
    assert [b.select(columns) for b in ours.row_groups(columns)] == [
        b.select(columns) for b in theirs.row_groups(columns)
    ]


def test_source_rows_kept_stay_within_their_budget(stores, monkeypatch):
    """Row groups kept for copies to take their payload from: at most _KEPT_GROUPS, and
    past the last one, at most _KEPT_BYTES of them; copies still read whole."""
    src, store, _ = stores
    monkeypatch.setattr(copies, "_KEPT_BYTES", 1)
    ours = Store(store)
    assert {f.path: f.data for f in ours.files()} == tree_bytes(src)
    for case in ours.cases():
        ours.case(case)
        assert len(ours._sources._kept) == 1  # the last row group read alone
    monkeypatch.setattr(copies, "_KEPT_BYTES", 1 << 30)
    for case in ours.cases():
        ours.case(case)
    assert len(ours._sources._kept) == min(copies._KEPT_GROUPS, ours.num_row_groups)


def test_cases_from_rows_takes_the_source_rows_from_the_rows_or_sources(stores):
    _, store, whole = stores
    table = pq.read_table(store, columns=list(REQUIRED_COLUMNS))
    plain = pq.read_table(whole, columns=list(REQUIRED_COLUMNS))
    want = {c.name: c for c in cases_from_rows(plain)}

    def of(case: str) -> pa.Table:
        return table.filter(pc.equal(table["test_case"], case))

    # every case at once: the sources are among the rows, in any order
    got = cases_from_rows(table.take(np.random.default_rng(0).permutation(table.num_rows)))
    assert sorted(c.name for c in got) == sorted(want)
    assert all(
        [v.to_bytes() for v in c.values] == [v.to_bytes() for v in want[c.name].values] for c in got
    )
    with pytest.raises(CorpusError) as info:
        cases_from_rows(of("node/test_b"), where="task 7")
    message = str(info.value)
    assert message.startswith(
        "task 7: node/test_b: node/test_b/README: the row is a copy of "
        "'node/test_a/README' (copy_of), and no row of that path is "
        "among the rows read: hand the decoder the rows of the file it names too"
    )
    assert "sources=" in message
    for sources in (store, Store(store), table, of("node/test_a").to_pandas()):
        (case,) = cases_from_rows(of("node/test_b"), sources=sources)
        assert [v.to_bytes() for v in case.values] == [
            v.to_bytes() for v in want["node/test_b"].values
        ]
        assert case.model == want["node/test_b"].model
    # the source's rows handed over with the case's: both cases decode
    both = pa.concat_tables([of("node/test_b"), of("node/test_a")])
    assert [c.name for c in cases_from_rows(both)] == ["node/test_b", "node/test_a"]
    with pytest.raises(CorpusError, match=r"^rows \(sources\): rows of type bytes"):
        cases_from_rows(of("node/test_b"), sources=b"store")


def test_a_store_of_format_4_still_reads(stores, tmp_path):
    src, _, whole = stores

    def as_version_4(table: pa.Table) -> pa.Table:
        meta = json.loads(table.schema.metadata[METADATA_KEY.encode()])
        meta["format_version"] = 4
        table = table.drop_columns(["copy_of"])
        return table.replace_schema_metadata({METADATA_KEY: json.dumps(meta)})

    old = tmp_path / "v4.parquet"
    rewrite(whole, old, as_version_4)
    store = Store(old)
    assert store.metadata["format_version"] == 4
    assert {f.path: f.data for f in store.files()} == tree_bytes(src)
    copies = store.read_columns(["copy_of"]).column(0)
    assert copies.null_count == len(copies) == 26
    export_store(old, tmp_path / "out", jobs=2)
    assert tree_bytes(tmp_path / "out") == tree_bytes(src)


_ENGINES = """
import json, sys
import duckdb
import polars as pl

sql, polars_code, store, whole = sys.argv[1:]
view = duckdb.sql(sql.format(store=repr(store)))
key = "path, coalesce(element, '') AS element"
got = duckdb.sql(f"SELECT {key}, data_float, envelope, content FROM view ORDER BY 1, 2")
want = duckdb.sql(
    f"SELECT {key}, data_float, envelope, content FROM read_parquet({whole!r}) ORDER BY 1, 2"
)
names = {}
exec(polars_code.format(store=repr(store)), names)
frame = names["view"].select("path", "element", "data_float", "envelope", "content").collect()
plain = pl.read_parquet(whole).select("path", "element", "data_float", "envelope", "content")
order = ["path", "element"]
print(json.dumps({
    "duckdb": got.fetchall() == want.fetchall(),
    "rows": len(want.fetchall()),
    "copies": duckdb.sql(f"SELECT count(copy_of) FROM read_parquet({store!r})").fetchall()[0][0],
    "polars": frame.sort(order, nulls_last=True).equals(plain.sort(order, nulls_last=True)),
    "onnx_arrow": any(m.startswith("onnx_arrow") for m in sys.modules),
}))
"""


def test_duckdb_and_polars_see_every_value_through_the_documented_view(stores):
    """In a process that has not imported onnx_arrow, as a user queries the store."""
    _, store, whole = stores
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            textwrap.dedent(_ENGINES),
            RESOLVED_SQL,
            RESOLVED_POLARS,
            *map(str, (store, whole)),
        ],
        check=False,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got == {"duckdb": True, "rows": 26, "copies": 14, "polars": True, "onnx_arrow": False}


def _hostile(store: Path, dst: Path, path: str, element: str | None, names: str | None) -> Path:
    """``store`` with the row of ``path`` (and ``element``) made a copy of ``names``: its
    payload cleared, ``copy_of`` set."""

    def change(table: pa.Table) -> pa.Table:
        rows = table.to_pylist()
        for row in rows:
            if row["path"] == path and row["element"] == element:
                row["copy_of"] = names
                for c in ("content", "envelope", *(k for k in row if k.startswith("data_"))):
                    row[c] = None
        return pa.Table.from_pylist(rows, schema=table.schema)

    rewrite(store, dst, change)
    return dst


_INPUT = "node/test_b/test_data_set_1/input_0.pb"


@pytest.mark.parametrize(
    ("path", "element", "names", "said"),
    [
        (_INPUT, "", "node/test_b/no_such.pb", "no row of that path is among the rows read"),
        (_INPUT, "", _INPUT, "which names its own file"),
        # a chain: test_b's output (a copy) named by its input
        (
            _INPUT,
            "",
            "node/test_b/test_data_set_0/output_0.pb",
            "itself a copy of 'node/test_a/test_data_set_0/output_0.pb'",
        ),
        # another size and digest
        (_INPUT, "", "node/test_a/test_data_set_1/input_0.pb", "whose row holds another digest"),
        # another dtype: a tensor named by a sequence
        (
            _INPUT,
            "",
            "simple/test_seq/test_data_set_0/output_0.pb",
            "whose row holds another dtype (None, this row 'FLOAT')",
        ),
        # another role: a model named by a value
        (_INPUT, "", "node/test_a/model.onnx", "whose row holds another role"),
        # a cycle: test_a's model names test_b's, a copy of test_a's
        (
            "node/test_a/model.onnx",
            None,
            "node/test_b/model.onnx",
            "itself a copy of 'node/test_a/model.onnx'",
        ),
        # an element of another size
        (
            "simple/test_seq/test_data_set_0/output_0.pb",
            "tensor_values[1]",
            "simple/test_seq/test_data_set_0/output_0.pb",
            "which names its own file",
        ),
    ],
)
def test_a_copy_that_names_what_it_cannot_is_a_located_error(
    stores, tmp_path, path, element, names, said
):
    _, store, _ = stores
    bad = _hostile(store, tmp_path / "bad.parquet", path, element, names)
    case = path.rsplit("/", 2)[0] if "test_data_set" in path else path.rsplit("/", 1)[0]
    opened = Store(bad)
    with pytest.raises(CorpusError, match="copy_of") as info:
        opened.case(case)
    assert said in str(info.value)
    assert f"{path}" in str(info.value)
    with pytest.raises(CorpusError, match="copy_of"):
        export_store(bad, tmp_path / "out", jobs=1)
    assert not (tmp_path / "out").exists()
    table = pq.read_table(bad, columns=list(REQUIRED_COLUMNS))
    with pytest.raises(CorpusError, match="copy_of"):
        cases_from_rows(table)


def test_a_copy_row_that_holds_a_payload_of_its_own_is_refused(stores, tmp_path):
    _, store, _ = stores

    def change(table: pa.Table) -> pa.Table:
        content = table["content"].to_pylist()
        copies = table["copy_of"].to_pylist()
        i = next(k for k, c in enumerate(copies) if c and c.endswith("README"))
        content[i] = b"other words\n"
        at = table.schema.get_field_index("content")
        return table.set_column(at, "content", pa.array(content, pa.binary()))

    rewrite(store, tmp_path / "bad.parquet", change)
    with pytest.raises(CorpusError, match=r"README: the row is a copy of .* holds a content"):
        Store(tmp_path / "bad.parquet").case_files("node/test_b")


def test_dedup_is_an_option_of_true_or_false():
    with pytest.raises(UnsupportedTypeError, match=r"WriteOptions\(dedup\)"):
        WriteOptions(dedup="no")  # type: ignore[arg-type]


def test_a_dataset_store_keeps_copies_within_a_part(stores, tmp_path):
    """Parts are written (and appended) on their own: a file repeated in another part is
    stored whole there; the folder reads and diffs as the corpus it holds."""
    from onnx_arrow.corpus import write_dataset
    from onnx_arrow.diff import diff

    src, store, _ = stores
    folder = tmp_path / "dataset"
    write_dataset(FolderSource(src), folder, part_cases=1)
    parts = sorted(folder.rglob("*.parquet"))
    assert len(parts) == 4
    # only each sequence case's input, a copy of its output in the same part
    assert {c for p in parts for c in _copies(p).values()} == {
        f"simple/{case}/test_data_set_0/output_0.pb" for case in ("test_seq", "test_seq_again")
    }
    assert {f.path: f.data for f in Store(folder).files()} == tree_bytes(src)
    assert set(diff(store, folder).to_pandas()["status"]) == {"identical"}


def test_info_counts_the_copies_and_the_bytes_not_stored_again(stores, capsys):
    from onnx_arrow.cli import main
    from onnx_arrow.corpus.facts import store_facts

    src, store, whole = stores
    facts = store_facts(Store(store))
    copied = [
        "node/test_b/README",
        "node/test_b/model.onnx",
        "node/test_b/test_data_set_0/input_0.pb",
        "node/test_b/test_data_set_0/output_0.pb",
        "simple/test_seq_again/model.onnx",
        "simple/test_seq/test_data_set_0/input_0.pb",
        "simple/test_seq_again/test_data_set_0/input_0.pb",
        "simple/test_seq_again/test_data_set_0/output_0.pb",
    ]
    assert facts.copies == len(copied)
    assert facts.copied_bytes == sum((src / p).stat().st_size for p in copied)
    assert store_facts(Store(whole)).copies == 0
    assert main(["info", str(store)]) == 0
    lines = [" ".join(line.split()) for line in capsys.readouterr().out.splitlines()]
    assert (
        f"copies 8 files stored once, as copies of a file of the same bytes "
        f"({facts.copied_bytes} bytes not stored again)"
    ) in lines


def test_a_file_under_min_copy_bytes_is_stored_whole(tmp_path, monkeypatch):
    monkeypatch.setattr(copies, "MIN_COPY_BYTES", 1024)
    src = repeated_corpus(tmp_path / "src")
    for case in ("test_a", "test_b"):  # 2 KiB, in two cases
        _put(src / "node" / case / "weights.bin", bytes(range(256)) * 8)
    write_store(FolderSource(src), tmp_path / "store.parquet")
    assert _copies(tmp_path / "store.parquet") == {
        ("node/test_b/weights.bin", None): "node/test_a/weights.bin"
    }
