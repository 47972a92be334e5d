"""The hostile cases of what readers are handed back: each builds its own input and says
what must happen, as :mod:`hostile.families` does for the first families.

Families: ``dataset-forged`` (dataset stores with a part added twice, a case split over
two parts, a part of another schema or not Parquet, a null or non-UTF-8 ``test_case``, a
forged format version), each read by ``Store``, ``info``, ``export``, ``diff``,
``compare`` and ``cases_from_rows``, which must refuse it alike; ``engine-rows`` (rows
as an engine hands them to ``cases_from_rows``: rows missing or twice, an absurd
``case_rows``, a null element, columns dropped or retyped, a changed digest);
``portable`` (``to_portable`` tables damaged, read back by ``from_portable``); ``diff``
(stores whose rows lie to ``diff``); ``report-files`` (compare report files that are
garbage, missing, a folder, forged or short of a column, read by ``report_view``,
``read_report`` and ``compare --actual``).

The default run (``CASES``) takes each damage through a few readers, every reader through
some damages; ``MORE`` holds the rest of each family's readers and damages crossed, run
by the slow test (``python -m pytest -m slow tests/hostile``) and by
``python -m hostile.harness``.
"""

from __future__ import annotations

import functools
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from onnx import numpy_helper

from hostile.families import KINDS, _fresh, _row, _set, corpus, store_file
from hostile.harness import MEMORY_CAP, Case, Expect

CASES: list[Case] = []
MORE: list[Case] = []


def case(
    family: str,
    name: str,
    action: str,
    expect: Expect,
    *,
    guard: tuple[str, ...] = (),
    known: str | None = None,
    memory: int = MEMORY_CAP,
    more: bool = False,
) -> Callable[[Callable[[Path], dict[str, Any]]], Callable[[Path], dict[str, Any]]]:
    """Register a case: in ``MORE`` if ``more``, else in the default ``CASES``."""

    def register(build: Callable[[Path], dict[str, Any]]) -> Callable[[Path], dict[str, Any]]:
        listed = MORE if more else CASES
        listed.append(Case(family, name, action, build, expect, memory, guard=guard, known=known))
        return build

    return register


def _rewrite(path: Path, change: Callable[[pa.Table], pa.Table], *, meta: Any = None) -> None:
    """``path`` rewritten with its table changed, its metadata kept (or edited by ``meta``)."""
    table = pq.read_table(path)
    metadata = dict(table.schema.metadata or {})
    table = change(table)
    if meta is not None:
        metadata[b"onnx_arrow"] = json.dumps(meta(json.loads(metadata[b"onnx_arrow"]))).encode()
    pq.write_table(table.replace_schema_metadata(metadata), path)


# --- dataset-forged ------------------------------------------------------------------------


@functools.cache
def dataset(root: Path) -> Path:
    """``root/dataset``: the corpus as a dataset store of two parts of three cases each."""
    from onnx_arrow.corpus import FolderSource, write_dataset

    out = root / "dataset"
    write_dataset(FolderSource(corpus(root)), out, part_cases=3)
    return out


def _names(t: pa.Table, names: pa.Array) -> pa.Table:
    return t.set_column(0, t.schema.field(0), names)


def _null_case(t: pa.Table) -> pa.Table:
    names = t.column("test_case").to_pylist()
    names[-1] = None
    return _names(t, pa.array(names, pa.string()))


def _invalid_utf8(t: pa.Table) -> pa.Table:
    names = [n.encode() for n in t.column("test_case").to_pylist()]
    names[-1] = b"node/test_\xff\xfe"
    binary = pa.array(names, pa.binary())
    return _names(t, pa.Array.from_buffers(pa.string(), len(binary), binary.buffers()))


def _split(folder: Path) -> None:
    first = folder / "part-00000.parquet"
    table = pq.read_table(first)
    pq.write_table(table.slice(0, 2), first)
    pq.write_table(table.slice(2), folder / "part-00002.parquet")


def _damaged(root: Path, name: str) -> Path:
    """A copy of :func:`dataset` with the damage ``name``, at ``root/datasets/name``."""
    out = root / "datasets" / name
    if out.exists():
        return out
    shutil.copytree(dataset(root), out)
    second = out / "part-00001.parquet"
    if name == "part-added-twice":
        shutil.copy(out / "part-00000.parquet", out / "part-00002.parquet")
    elif name == "case-split-over-two-parts":
        _split(out)
    elif name == "part-of-another-schema":
        _rewrite(second, lambda t: t.drop_columns(["dtype"]))
    elif name == "part-not-parquet":
        (out / "part-00002.parquet").write_bytes(b"PAR1 not a part at all PAR1")
    elif name == "null-test-case":
        _rewrite(second, _null_case)
    elif name == "test-case-not-utf8":
        _rewrite(second, _invalid_utf8)
    elif name == "format-version-newer":
        _rewrite(second, lambda t: t, meta=lambda m: {**m, "format_version": 99})
    elif name == "format-version-older-columns-missing":
        _rewrite(
            second,
            lambda t: t.drop_columns(["rtol", "atol", "case_row"]),
            meta=lambda m: {**m, "format_version": 2},
        )
    else:
        raise ValueError(name)
    return out


#: each damage and what every reader of a store must say of it
_DAMAGES = {
    "part-added-twice": "is in two parts of the store",
    "case-split-over-two-parts": "is in two parts of the store",
    "part-of-another-schema": "part-00001.parquet",
    "part-not-parquet": "part-00002.parquet",
    "null-test-case": "rows have no test_case (null)",
    "test-case-not-utf8": "the test_case column is invalid",
    "format-version-newer": "upgrade onnx-arrow",
    "format-version-older-columns-missing": "the columns differ from those of format version 2",
}
#: what cases_from_rows, handed each part's rows (and all of them), must say: it reads rows,
#: not a store's metadata, so a newer version's rows of this version's columns are read
_ROWS = {
    "part-added-twice": Expect("CorpusError", "appears more than once"),
    "case-split-over-two-parts": Expect("CorpusError", "part-00000.parquet"),
    "part-of-another-schema": Expect("CorpusError", "no column 'dtype'"),
    "null-test-case": Expect("CorpusError", "rows have no test_case (null)"),
    "test-case-not-utf8": Expect("CorpusError", "the test_case column is invalid"),
    "format-version-newer": Expect(clean=True),
    "format-version-older-columns-missing": Expect("CorpusError", "no column 'case_row'"),
}


def _reader(name: str, how: str) -> Callable[[Path], dict[str, Any]]:
    def build(root: Path) -> dict[str, Any]:
        path = str(_damaged(root, name))
        out = str(root / "dataset-out" / f"{name}-{how}")
        return {
            "open": {"path": path, "op": "open"},
            "export-api": {"path": path, "op": "export", "dest": out},
            "rows": {"path": path},
            "diff-api": {"old": str(store_file(root)), "new": path},
            "info": {"argv": ["info", path]},
            "export": {"argv": ["export", path, out]},
            "diff": {"argv": ["diff", str(store_file(root)), path]},
            "compare": {"argv": ["compare", path]},
        }[how]

    return build


_ACTIONS = {"open": "store", "export-api": "store", "rows": "rows_of_store", "diff-api": "diff"}
#: the commands, each run by default on two damages (the rest are in MORE)
_COMMANDS = ("info", "export", "diff", "compare")
for _k, (_name, _said) in enumerate(_DAMAGES.items()):
    for _how in ("open", "rows", *_COMMANDS, "export-api", "diff-api"):
        if _how == "rows":
            if _name not in _ROWS:  # not Parquet: the engine cannot read it to hand it over
                continue
            _expect = _ROWS[_name]
        elif _how in _ACTIONS:
            _expect = Expect("CorpusError", _said)
        else:
            _expect = Expect(rc=1, where=_said)
        _default = _how in ("open", "rows") or _how == _COMMANDS[_k % len(_COMMANDS)]
        case(
            "dataset-forged",
            f"{_name}-{_how}",
            _ACTIONS.get(_how, "cli"),
            _expect,
            guard=("dataset-out",),
            more=not _default,
        )(_reader(_name, _how))


# --- engine-rows -----------------------------------------------------------------------------

_ALL_CASES = sorted(f"node/test_{k}" for k in KINDS)
_TENSOR = "node/test_tensor"


def _rows_of(t: pa.Table, case: str = _TENSOR) -> list[int]:
    return [i for i, c in enumerate(t.column("test_case").to_pylist()) if c == case]


def _take(t: pa.Table, rows: list[int]) -> pa.Table:
    return t.take(pa.array(rows, pa.int64()))


def _without_row(t: pa.Table) -> pa.Table:
    gone = _rows_of(t)[1]
    return _take(t, [i for i in range(t.num_rows) if i != gone])


def _row_twice(t: pa.Table) -> pa.Table:
    twice = _rows_of(t)[1]
    return _take(t, sorted([*range(t.num_rows), twice]))


def _claims_rows(n: int) -> Callable[[pa.Table], pa.Table]:
    def change(t: pa.Table) -> pa.Table:
        for i in _rows_of(t):
            t = _set(t, "case_rows", i, n)
        return t

    return change


def _null_element(t: pa.Table) -> pa.Table:
    i = _row(t, path_end="input_0.pb")
    data = t.column("data_float")[i].as_py()
    return _set(t, "data_float", i, [*data[:-1], None])


def _retyped(column: str, to: pa.DataType) -> Callable[[pa.Table], pa.Table]:
    def change(t: pa.Table) -> pa.Table:
        k = t.schema.get_field_index(column)
        return t.set_column(k, column, t.column(column).cast(to))

    return change


def _other_digest(t: pa.Table) -> pa.Table:
    return _set(t, "digest", _row(t, path_end="input_0.pb"), b"\x00" * 16)


def _rows_file(root: Path, name: str, change: Callable[[pa.Table], pa.Table]) -> str:
    table = change(pq.read_table(store_file(root)))
    out = _fresh(root, f"rows/{name}") / "rows.parquet"
    pq.write_table(table, out)
    return str(out)


for _name, _change, _action, _expect in (
    ("case-row-missing", _without_row, "rows", Expect("CorpusError", f"{_TENSOR}: 2 of its 3")),
    ("case-row-twice", _row_twice, "rows", Expect("CorpusError", "appears more than once")),
    (
        "case-rows-2**31-1",
        _claims_rows(2**31 - 1),
        "rows",
        Expect("CorpusError", f"{_TENSOR}: 3 of its 2147483647 rows are here"),
    ),
    ("case-rows-fewer", _claims_rows(2), "rows", Expect("CorpusError", _TENSOR)),
    ("null-element", _null_element, "rows", Expect("CorpusError", "null element")),
    (
        "null-element-other-cases-read",
        _null_element,
        "rows_by_case",
        Expect(result={"read": [c for c in _ALL_CASES if c != _TENSOR], "refused": [_TENSOR]}),
    ),
    ("column-dropped", lambda t: t.drop_columns(["shape"]), "rows", Expect("CorpusError", "shape")),
    (
        "data-float-as-double",
        _retyped("data_float", pa.list_(pa.float64())),
        "rows",
        Expect("CorpusError", "data_float"),
    ),
    (
        "case-row-as-double",
        _retyped("case_row", pa.float64()),
        "rows",
        Expect("CorpusError", "case_row"),
    ),
    (
        "nbytes-as-double",
        _retyped("nbytes", pa.float64()),
        "rows",
        Expect(result={"cases": _ALL_CASES}),
    ),
    # the decoder checks each value it rebuilds against its row's digest: located refusal
    (
        "digest-changed",
        _other_digest,
        "rows",
        Expect(
            "CorpusError",
            f"{_TENSOR}/test_data_set_0/input_0.pb: the file rebuilt from the rows is not "
            "the file imported",
        ),
    ),
):
    # 16 GiB claimed: under a 1 GiB cap, nothing of the claim may be allocated
    memory = 1 << 30 if _name == "case-rows-2**31-1" else MEMORY_CAP
    case("engine-rows", _name, _action, _expect, memory=memory)(
        lambda root, change=_change, n=_name: {"path": _rows_file(root, n, change)}
    )
# Dask's numpy backend turns integer columns with nulls to float64, and lists to object
# cells of ndarrays: taken back exactly
case("engine-rows", "dask-numpy-backend", "rows", Expect(result={"cases": _ALL_CASES}))(
    lambda root: {"path": _rows_file(root, "dask", lambda t: t), "engine": "pandas"}
)
case("engine-rows", "dask-pyarrow-backend", "rows", Expect(result={"cases": _ALL_CASES}))(
    lambda root: {"path": _rows_file(root, "dask", lambda t: t), "engine": "pandas-arrow"}
)


# --- portable ---------------------------------------------------------------------------------


def _tensors(dtype: type, shape: tuple[int, ...], n: int = 3) -> pa.Array:
    import onnx_arrow

    values = [(np.arange(np.prod(shape)) / 10 + k).reshape(shape).astype(dtype) for k in range(n)]
    return onnx_arrow.to_arrow([numpy_helper.from_array(v) for v in values])


def _portable_file(
    root: Path,
    name: str,
    change: Callable[[pa.Table], pa.Table] = lambda t: t,
    *,
    columns: tuple[pa.Array, ...] = (),
    schema: bool = False,
) -> dict[str, Any]:
    """``to_portable`` of a table of float tensors 0.1 apart, changed by ``change``, as
    Parquet under ``root/portable/name`` (a folder of one file per array of ``columns``
    where given); and the values it must read back as."""
    import onnx_arrow

    folder = _fresh(root, f"portable/{name}")
    arrays = columns or (_tensors(np.float32, (2, 3)),)
    tables = [pa.table({"x": a}) for a in arrays]
    (folder / "parts").mkdir()
    for k, table in enumerate(tables):
        pq.write_table(change(onnx_arrow.to_portable(table)), folder / f"parts/part-{k}.parquet")
    want = [v for a in arrays for v in onnx_arrow.to_numpy(a)]
    np.savez(folder / "expected.npz", *want)
    args = {
        "path": str(folder / "parts" if columns else folder / "parts/part-0.parquet"),
        "expected": str(folder / "expected.npz"),
    }
    if schema:
        with pa.OSFile(str(folder / "schema.arrow"), "wb") as sink:
            pa.ipc.new_file(sink, tables[0].schema).close()
        args["schema"] = str(folder / "schema.arrow")
    return args


def _metadata(raw: bytes) -> Callable[[pa.Table], pa.Table]:
    return lambda t: t.replace_schema_metadata({b"onnx_arrow.portable": raw})


def _recorded(blob: bytes) -> Callable[[pa.Table], pa.Table]:
    import base64

    text = base64.b64encode(blob).decode()
    return _metadata(json.dumps({"version": 2, "columns": {"x": text}}).encode())


def _as_double_lists(shift: float = 0.0) -> Callable[[pa.Table], pa.Table]:
    """The float tensors as an engine widened them, to ``list<double>`` (each element
    ``shift`` further, a value float32 does not hold)."""

    def change(t: pa.Table) -> pa.Table:
        doubles = [[v + shift for v in row] for row in t.column("x").to_pylist()]
        column = pa.array(doubles, pa.list_(pa.float64()))
        return t.set_column(0, "x", column).replace_schema_metadata(t.schema.metadata)

    return change


_SAME = Expect(result={"same": True})
#: a folder of two files whose column ``x`` has the same storage and two types: refused at
#: the first row of the second file, whatever type the engine gave the column
_MIXED = Expect("ArrowLayoutError", "column 'x': row 3 (and 3 rows in all) was written as")
_UNREADABLE = Expect("ArrowLayoutError", "unreadable onnx_arrow.portable metadata")
for _name, _build, _expect in (
    ("as-written", lambda root: _portable_file(root, "as-written"), _SAME),
    (
        # the types come from the type column's rows
        "metadata-dropped",
        lambda root: _portable_file(root, "dropped", lambda t: t.replace_schema_metadata(None)),
        _SAME,
    ),
    (
        "metadata-and-type-column-dropped",
        lambda root: _portable_file(
            root,
            "dropped-both",
            lambda t: t.drop_columns(["x__onnx_arrow_type"]).replace_schema_metadata(None),
        ),
        Expect("ArrowLayoutError", "no onnx_arrow.portable metadata and no type columns"),
    ),
    (
        "type-column-forged",
        lambda root: _portable_file(
            root,
            "type-forged",
            lambda t: t.set_column(1, "x__onnx_arrow_type", pa.array(["////"] * len(t))),
        ),
        Expect("ArrowLayoutError", "column 'x__onnx_arrow_type': unreadable recorded type"),
    ),
    (
        "metadata-dropped-schema-passed",
        lambda root: _portable_file(
            root, "dropped-schema", lambda t: t.replace_schema_metadata(None), schema=True
        ),
        _SAME,
    ),
    (
        "recorded-schema-not-a-schema",
        lambda root: _portable_file(root, "not-schema", _recorded(b"\xff" * 40)),
        _UNREADABLE,
    ),
    (
        "recorded-schema-empty",
        lambda root: _portable_file(root, "empty-schema", _recorded(b"")),
        _UNREADABLE,
    ),
    (
        "metadata-not-json",
        lambda root: _portable_file(root, "not-json", _metadata(b"{\xff")),
        _UNREADABLE,
    ),
    (
        "metadata-version-9",
        lambda root: _portable_file(root, "version-9", _metadata(b'{"version": 9, "columns": {}}')),
        _UNREADABLE,
    ),
    (
        "fixed-size-list-float-as-list-double",
        # every value widened exactly: cast back, the messages as written
        lambda root: _portable_file(root, "as-double", _as_double_lists()),
        _SAME,
    ),
    (
        "fixed-size-list-float-as-list-double-not-float32",
        lambda root: _portable_file(root, "as-double-shifted", _as_double_lists(1e-12)),
        Expect("ArrowLayoutError", "column 'x'"),
    ),
    (
        "folder-of-two-dtypes",
        lambda root: _portable_file(
            root,
            "two-dtypes",
            columns=(_tensors(np.float32, (2, 3)), _tensors(np.float64, (2, 3))),
        ),
        _MIXED,
    ),
    (
        "folder-of-two-shapes",
        lambda root: _portable_file(
            root,
            "two-shapes",
            columns=(_tensors(np.float32, (2, 3)), _tensors(np.float32, (3, 2))),
        ),
        _MIXED,
    ),
):
    case("portable", _name, "portable", _expect)(_build)


# --- diff ---------------------------------------------------------------------------------------


def _other_model(t: pa.Table) -> pa.Table:
    """The tensor case's model replaced by the int64 case's, its digest and size kept."""
    other = t.column("content")[_row(t, path_end="model.onnx", role="model", case="int64")]
    return _set(t, "content", _row(t, path_end="model.onnx", role="model"), other.as_py())


def _path_twice(t: pa.Table) -> pa.Table:
    """The tensor case's output row a second time, as the last row of its case."""
    i = _row(t, path_end="output_0.pb")
    return pa.concat_tables([t.slice(0, i + 1), t.slice(i, 1), t.slice(i + 1)])


def _no_digests(t: pa.Table) -> pa.Table:
    return t.drop_columns(["rtol", "atol", "declared", "copy_of", "digest"])


def _diff_store(root: Path, name: str, change: Callable[[pa.Table], pa.Table], meta: Any) -> str:
    out = _fresh(root, f"diff/{name}") / "new.parquet"
    shutil.copy(store_file(root), out)
    _rewrite(out, change, meta=meta)
    return str(out)


_OUTPUT = f"{_TENSOR}/test_data_set_0/output_0.pb"
for _name, _change, _meta, _said, _statuses in (
    ("same-store", lambda t: t, None, None, ["identical"]),
    (
        "model-changed-under-its-old-digest",
        _other_model,
        None,
        f"{_TENSOR}/model.onnx: the file rebuilt from the rows is not the file imported",
        None,
    ),
    (
        "value-kind-banana",
        lambda t: _set(t, "value_kind", _row(t, path_end="output_0.pb"), "banana"),
        None,
        "banana",
        None,
    ),
    ("path-held-twice", _path_twice, None, f"{_OUTPUT}: the store holds this path twice", None),
    (
        "row-without-its-digest",
        lambda t: _set(t, "digest", _row(t, path_end="output_0.pb"), None),
        None,
        "the row has no digest",
        None,
    ),
    (
        "store-without-digests",
        _no_digests,
        lambda m: {**m, "format_version": 2},
        "the store records no digests of its files",
        None,
    ),
):
    _expect = (
        Expect(result={"statuses": _statuses}) if _said is None else Expect("CorpusError", _said)
    )
    for _how in ("api", "cli"):

        def _build(root: Path, n: str = _name, c: Any = _change, m: Any = _meta, how: str = _how):
            new = _diff_store(root, n, c, m)
            old = str(store_file(root))
            return {"old": old, "new": new} if how == "api" else {"argv": ["diff", old, new]}

        if _how == "cli":
            _expect = Expect(rc=0 if _said is None else 1, where=_said)
        _more = _how == "cli" and _name not in ("same-store", "value-kind-banana")
        case("diff", f"{_name}-{_how}", "diff" if _how == "api" else "cli", _expect, more=_more)(
            _build
        )


# --- report-files -------------------------------------------------------------------------------


@functools.cache
def report_file(root: Path) -> Path:
    """``root/report.parquet``: a compare report of one row (a mismatch of the tensor
    case's output, its actual value kept), naming the store of :func:`store_file`."""
    from onnx_arrow.compare import write_report
    from onnx_arrow.compare.report import report_frame

    actual = numpy_helper.from_array(np.zeros((2, 3), np.float32), "y0").SerializeToString()
    row = {
        "case": _TENSOR,
        "index": 0,
        "data_set": 0,
        "name": "y0",
        "status": "mismatch",
        "rtol": 1e-3,
        "atol": 1e-7,
        "tolerance": "default",
        "actual": actual,
    }
    frame = report_frame([row])
    frame.attrs["onnx_arrow"] = {"store": [str(store_file(root))]}
    out = root / "report.parquet"
    write_report(frame, out)
    return out


def _report_table(root: Path) -> pa.Table:
    return pq.read_table(report_file(root))


def _report_with(root: Path, name: str, table: pa.Table, raw: bytes | None) -> str:
    out = _fresh(root, f"reports/{name}") / "report.parquet"
    meta = dict(table.schema.metadata or {})
    if raw is not None:
        meta[b"onnx_arrow.report"] = raw
    pq.write_table(table.replace_schema_metadata(meta), out)
    return str(out)


def _column(t: pa.Table, name: str, values: pa.Array) -> pa.Table:
    return t.set_column(t.schema.get_field_index(name), name, values)


def _reports(root: Path, name: str) -> str:
    """The report file of the damage ``name``."""
    t = _report_table(root)
    if name == "as-written":
        return str(report_file(root))
    if name == "garbage-bytes":
        out = _fresh(root, "reports/garbage") / "report.parquet"
        out.write_bytes(b"PAR1 not a report at all PAR1")
        return str(out)
    if name == "missing":
        return str(_fresh(root, "reports/missing") / "report.parquet")
    if name == "a-folder":
        out = _fresh(root, "reports/folder") / "report.parquet"
        out.mkdir()
        return str(out)
    forged: dict[str, tuple[pa.Table, bytes | None]] = {
        "metadata-not-an-object": (t, b'["not", "an", "object"]'),
        "metadata-store-5": (t, b'{"store": 5}'),
        "metadata-not-utf8": (t, b"\xff\xfe"),
        "metadata-nested-deep": (t, b"[" * 10000),
        "metadata-store-missing": (t, json.dumps({"store": [str(root / "gone.parquet")]}).encode()),
        "column-dropped": (t.drop_columns(["case"]), None),
        "index-retyped": (_column(t, "index", pa.array(["zero"])), None),
        "status-banana": (_column(t, "status", pa.array(["banana"])), None),
        "actual-garbage": (_column(t, "actual", pa.array([b"\xff\xff\xff"], pa.binary())), None),
        "metadata-format-99": (t, b'{"report_format": 99, "onnx_arrow_version": "99.0"}'),
        "histogram-retyped": (_column(t, "ulp_histogram", pa.array(["x"])), None),
    }
    return _report_with(root, name, *forged[name])


_REPORTS = {
    "as-written": Expect(),
    "garbage-bytes": Expect("CompareError", "report.parquet: cannot read the report as Parquet"),
    "missing": Expect("CompareError", "report.parquet: cannot open the report"),
    "a-folder": Expect("CompareError", "a directory, not a report's Parquet file"),
    "metadata-not-an-object": Expect("CompareError", "not a JSON object"),
    "metadata-store-5": Expect("CompareError", "the report's store is 5"),
    "metadata-not-utf8": Expect("CompareError", "the report's metadata"),
    "metadata-nested-deep": Expect("CompareError", "the report's metadata"),
    "metadata-store-missing": Expect("OnnxArrowError", "gone.parquet"),
    "column-dropped": Expect("CompareError", "the report has no column 'case'"),
    "index-retyped": Expect("CompareError", "column 'index' is string"),
    "status-banana": Expect("CompareError", "row 0 has a status that is not one of"),
    "actual-garbage": Expect(clean=True),
    "metadata-format-99": Expect("CompareError", "the report is of format 99"),
    "histogram-retyped": Expect("CompareError", "column 'ulp_histogram' is string"),
}
#: what read_report must do where report_view does more: it reads the file, not the store
_READ_ONLY = {"as-written": Expect(result={"rows": 1}), "metadata-store-missing": Expect()}
for _name, _expect in _REPORTS.items():
    case("report-files", f"{_name}-report_view", "report", _expect)(
        lambda root, n=_name: {"path": _reports(root, n)}
    )
    case(
        "report-files",
        f"{_name}-read_report",
        "read_report",
        _READ_ONLY.get(_name, _expect),
        more=_name not in _READ_ONLY,
    )(lambda root, n=_name: {"path": _reports(root, n)})
# the scoreboard reads a report as read_report does: one line naming the file, exit 1
for _name in ("as-written", "garbage-bytes", "a-folder", "status-banana", "metadata-format-99"):
    _fine = _name == "as-written"
    _said = Expect(rc=0) if _fine else Expect(rc=1, where="report.parquet")
    case("report-files", f"{_name}-scoreboard", "cli", _said)(
        lambda root, n=_name: {"argv": ["report", _reports(root, n)]}
    )
# a report is not a store of actual outputs: compare --actual says so of any report file
for _name in ("as-written", "garbage-bytes", "a-folder"):
    case("report-files", f"{_name}-compare-actual", "cli", Expect(rc=1, where="report.parquet"))(
        lambda root, n=_name: {
            "argv": ["compare", str(store_file(root)), "--actual", _reports(root, n)]
        }
    )
