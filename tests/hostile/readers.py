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

Every reader's case is in the default run; ``HOSTILE_LONG=1`` adds the same damages
through the API where the default run takes the command line only.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from hostile.families import KINDS, _fresh, _row, _set, corpus, store_file
from hostile.harness import MEMORY_CAP, Case, Expect

LONG = os.environ.get("HOSTILE_LONG") == "1"

CASES: list[Case] = []


def case(
    family: str,
    name: str,
    action: str,
    expect: Expect,
    *,
    guard: tuple[str, ...] = (),
    known: str | None = None,
    memory: int = MEMORY_CAP,
) -> Callable[[Callable[[Path], dict[str, Any]]], Callable[[Path], dict[str, Any]]]:
    def register(build: Callable[[Path], dict[str, Any]]) -> Callable[[Path], dict[str, Any]]:
        CASES.append(Case(family, name, action, build, expect, memory, guard=guard, known=known))
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
for _name, _said in _DAMAGES.items():
    for _how in ("open", "info", "export", "diff", "compare", "rows") + (
        ("export-api", "diff-api") if LONG else ()
    ):
        if _how == "rows":
            if _name not in _ROWS:  # not Parquet: the engine cannot read it to hand it over
                continue
            _expect = _ROWS[_name]
        elif _how in _ACTIONS:
            _expect = Expect("CorpusError", _said)
        else:
            _expect = Expect(rc=1, where=_said)
        case(
            "dataset-forged",
            f"{_name}-{_how}",
            _ACTIONS.get(_how, "cli"),
            _expect,
            guard=("dataset-out",),
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
    # the decoder reads the values from their columns, never by their digest
    ("digest-changed", _other_digest, "rows", Expect(result={"cases": _ALL_CASES})),
):
    # 16 GiB claimed: under a 1 GiB cap, nothing of the claim may be allocated
    memory = 1 << 30 if _name == "case-rows-2**31-1" else MEMORY_CAP
    case("engine-rows", _name, _action, _expect, memory=memory)(
        lambda root, change=_change, n=_name: {"path": _rows_file(root, n, change)}
    )
# Dask's numpy backend turns integer columns with nulls to float64: refused (the docs say to
# read with dtype_backend="pyarrow", which decodes)
case("engine-rows", "dask-numpy-backend", "rows", Expect("CorpusError", "data_set is double"))(
    lambda root: {"path": _rows_file(root, "dask", lambda t: t), "engine": "pandas"}
)
case("engine-rows", "dask-pyarrow-backend", "rows", Expect(result={"cases": _ALL_CASES}))(
    lambda root: {"path": _rows_file(root, "dask", lambda t: t), "engine": "pandas-arrow"}
)
