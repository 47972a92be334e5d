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

from hostile.families import corpus, store_file
from hostile.harness import Case, Expect

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
) -> Callable[[Callable[[Path], dict[str, Any]]], Callable[[Path], dict[str, Any]]]:
    def register(build: Callable[[Path], dict[str, Any]]) -> Callable[[Path], dict[str, Any]]:
        CASES.append(Case(family, name, action, build, expect, guard=guard, known=known))
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
