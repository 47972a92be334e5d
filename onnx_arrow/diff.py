"""What changed between two corpora, file by file, with exact ULP distances.

:func:`diff` compares two corpora (stores, dataset stores, corpus folders, or the
built-in default corpus) and gives one row per path of either side with a status:

* ``identical`` (the same bytes), ``added``, ``removed``;
* for a value file whose bytes differ, from mildest to worst: ``same-values`` (equal
  values in another encoding), ``float-drift`` (floating values differ; ``max_ulp``
  says by how much), ``nan-changed`` (NaN where the other side has a number),
  ``values-changed`` (integer, bool or string values, map keys, an optional's
  presence), ``shape-changed`` (a tensor's shape, a sequence's length),
  ``dtype-changed``, ``type-changed`` (tensor, sequence, map or optional, or another
  element type inside a container); inside a container the worst element decides;
* ``model-changed`` for a model, with what changed in words (IR version, opsets, op
  types, graph inputs and outputs and their declared types, nodes, initializers);
* ``file-changed`` for any other file (or a value kept as bytes) whose bytes differ.

ULP distances are :func:`onnx_arrow.core.model.ulp_distance`'s: on the codes, for every
floating dtype, -0.0 and +0.0 0 apart, NaN equal to NaN.  Two stores are compared
through their files: each rebuilt from its rows as every reader of a store rebuilds it
(the rows validated, the bytes checked against the digest the row records), its size and
digest taken from the bytes read; only the cases with a file whose digest differs are
compared further, their values decoded.  A row that does not validate, a model that does
not parse or a path held twice is a :class:`~onnx_arrow.errors.CorpusError` naming the
store and the path.
"""

from __future__ import annotations

import contextlib
import fnmatch
import hashlib
import os
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import pandas as pd  # no pandas-stubs: pandas is Any
import pyarrow as pa
from google.protobuf.message import DecodeError

import onnx_arrow
from onnx_arrow.core.model import (
    MapValue,
    Node,
    OptionalValue,
    SequenceValue,
    SparseValue,
    Tensor,
    declared_type_text,
    ulp_distance,
)
from onnx_arrow.corpus import FolderSource, Store, StoredValue, write_store
from onnx_arrow.corpus.options import WriteOptions
from onnx_arrow.corpus.releases import folder_provenance, is_release, open_release_store
from onnx_arrow.errors import CorpusError
from onnx_arrow.reports import Report, as_frame

if TYPE_CHECKING:
    from onnx import ModelProto

__all__ = [
    "DEFAULT_CORPUS",
    "DIFF_COLUMNS",
    "DIFF_SCHEMA",
    "STATUSES",
    "diff",
    "equivalent",
    "model_changes",
    "open_side",
]

#: The statuses, from identical to the worst change of a value, then the others.
STATUSES: Final = (
    "identical",
    "same-values",
    "float-drift",
    "nan-changed",
    "values-changed",
    "shape-changed",
    "dtype-changed",
    "type-changed",
    "model-changed",
    "file-changed",
    "added",
    "removed",
)
_SEVERITY: Final = {status: k for k, status in enumerate(STATUSES)}

#: The columns of the report.
DIFF_COLUMNS: Final = (
    "path", "case", "role", "status", "max_ulp", "dtype", "old_shape", "new_shape",
    "old_bytes", "new_bytes", "detail",
)  # fmt: skip

#: The Arrow schema of a diff report's table: :data:`DIFF_COLUMNS` with their types.
DIFF_SCHEMA: Final = pa.schema(
    [
        ("path", pa.string()),
        ("case", pa.string()),
        ("role", pa.string()),
        ("status", pa.string()),
        ("max_ulp", pa.uint64()),
        ("dtype", pa.string()),
        ("old_shape", pa.list_(pa.int64())),
        ("new_shape", pa.list_(pa.int64())),
        ("old_bytes", pa.int64()),
        ("new_bytes", pa.int64()),
        ("detail", pa.string()),
    ]
)

#: The name that stands for the built-in default corpus as a side of a diff.
DEFAULT_CORPUS: Final = "@default"


# --- sides -----------------------------------------------------------------------------


@contextlib.contextmanager
def open_side(side: str | os.PathLike[str] | Store, *, offline: bool = False) -> Iterator[Store]:
    """A side of a diff as a store: a store or dataset store as it is; a release
    (``@onnx==VERSION``, see ``onnx_arrow.corpus.releases``) as its cached store; a corpus
    folder or :data:`DEFAULT_CORPUS` imported into a temporary store (files that do not
    decode kept as bytes), removed afterwards."""
    if isinstance(side, Store):
        yield side
        return
    if is_release(str(side)):
        with open_release_store(str(side), offline=offline) as path:
            yield Store(path)
        return
    path = Path(side)
    if path.is_file() or _is_store_folder(path):
        yield Store(path)
        return
    with tempfile.TemporaryDirectory(prefix="onnx-arrow-diff-") as tmp:
        out = Path(tmp) / "side.parquet"
        options = WriteOptions(keep_undecodable=True, provenance=folder_provenance(path))
        write_store(FolderSource(path), out, options=options)
        yield Store(out)


def _is_store_folder(path: Path) -> bool:
    """A folder of Parquet parts (a dataset store), not a corpus folder."""
    if not path.is_dir():
        return False
    return any(True for pattern in ("*.parquet", "*/*.parquet") for _ in path.glob(pattern))


# --- comparing values ------------------------------------------------------------------


@dataclass
class _Finding:
    """How two values differ: the worst status met, the largest ULP distance, and where."""

    status: str = "same-values"
    max_ulp: int | None = None
    dtype: str | None = None
    old_shape: tuple[int, ...] | None = None
    new_shape: tuple[int, ...] | None = None
    details: list[str] = field(default_factory=list)

    def worse(self, status: str, detail: str) -> None:
        if _SEVERITY[status] > _SEVERITY[self.status]:
            self.status = status
        self.details.append(detail)

    def ulp(self, n: int) -> None:
        self.max_ulp = n if self.max_ulp is None else max(self.max_ulp, n)


def _kind(node: Node | None) -> str:
    return {
        Tensor: "tensor",
        SequenceValue: "sequence",
        MapValue: "map",
        OptionalValue: "optional",
        SparseValue: "sparse tensor",
    }.get(type(node), "absent")


def _walk(old: Node | None, new: Node | None, where: str, found: _Finding) -> None:
    at = f"{where}: " if where else ""
    if _kind(old) != _kind(new):
        found.worse("type-changed", f"{at}{_kind(old)} -> {_kind(new)}")
        return
    if isinstance(old, Tensor) and isinstance(new, Tensor):
        _tensors(old, new, where, found)
    elif isinstance(old, SequenceValue) and isinstance(new, SequenceValue):
        if len(old.items) != len(new.items):
            found.worse("shape-changed", f"{at}a sequence of {len(old.items)} -> {len(new.items)}")
        for k, (a, b) in enumerate(zip(old.items, new.items, strict=False)):
            _walk(a, b, f"{where}[{k}]", found)
    elif isinstance(old, OptionalValue) and isinstance(new, OptionalValue):
        if (old.value is None) != (new.value is None):
            present = "absent -> present" if old.value is None else "present -> absent"
            found.worse("values-changed", f"{at}optional {present}")
        elif old.value is not None:
            _walk(old.value, new.value, where, found)
    elif isinstance(old, MapValue) and isinstance(new, MapValue):
        if old.key.name != new.key.name:
            found.worse("type-changed", f"{at}map keys {old.key.name} -> {new.key.name}")
            return
        if old.keys.tolist() != new.keys.tolist():
            found.worse("values-changed", f"{at}map keys differ")
            return
        for k, (a, b) in enumerate(zip(old.values, new.values, strict=True)):
            _walk(a, b, f"{where}[{old.keys[k]!r}]", found)
    elif isinstance(old, SparseValue) and isinstance(new, SparseValue):
        if old.dims != new.dims:
            found.worse("shape-changed", f"{at}sparse dims {list(old.dims)} -> {list(new.dims)}")
            return
        _walk(old.indices, new.indices, f"{where}.indices", found)
        _walk(old.values, new.values, f"{where}.values", found)


def _tensors(old: Tensor, new: Tensor, where: str, found: _Finding) -> None:
    at = f"{where}: " if where else ""
    if found.dtype is None:
        found.dtype, found.old_shape, found.new_shape = old.dtype.name, old.dims, new.dims
    if old.dtype.name != new.dtype.name:
        found.worse("dtype-changed", f"{at}dtype {old.dtype.name} -> {new.dtype.name}")
        return
    if old.dims != new.dims:
        found.worse("shape-changed", f"{at}shape {list(old.dims)} -> {list(new.dims)}")
        return
    a, b = old.codes.reshape(-1), new.codes.reshape(-1)

    def at_element(k: int) -> str:
        return f"element {k}: {_number(a[k])} -> {_number(b[k])}"

    if old.dtype.is_floating:
        d = ulp_distance(a, b, old.dtype)
        nans = np.flatnonzero(d.nan_mismatch)
        if nans.size:
            found.worse(
                "nan-changed",
                f"{at}{nans.size} NaN where the other side has a number "
                f"(first at {at_element(int(nans[0]))})",
            )
        found.ulp(d.max)
        if d.max:
            found.worse(
                "float-drift",
                f"{at}{int(np.count_nonzero(d.distance))} of {a.size} elements drift, at most "
                f"{d.max} ULP ({at_element(int(np.argmax(d.distance)))})",
            )
        return
    if a.dtype == object:
        differ = np.flatnonzero([x != y for x, y in zip(a.tolist(), b.tolist(), strict=True)])
    else:
        differ = np.flatnonzero(a != b)
    if differ.size:
        found.worse(
            "values-changed",
            f"{at}{differ.size} of {a.size} elements differ "
            f"(first at {at_element(int(differ[0]))})",
        )


def _number(x: Any) -> str:
    return repr(x.item()) if hasattr(x, "item") else repr(x)


# --- comparing models ------------------------------------------------------------------


def model_changes(old: ModelProto, new: ModelProto) -> list[str]:
    """What changed between two models, in words; the byte level only when nothing else."""
    changes: list[str] = []
    if old.ir_version != new.ir_version:
        changes.append(f"IR version {old.ir_version} -> {new.ir_version}")
    opsets = [{o.domain or "ai.onnx": o.version for o in m.opset_import} for m in (old, new)]
    for domain in sorted(opsets[0].keys() | opsets[1].keys()):
        a, b = opsets[0].get(domain), opsets[1].get(domain)
        if a != b:
            changes.append(f"opset {domain} {a or '(none)'} -> {b or '(none)'}")
    ops = [Counter(n.op_type for n in m.graph.node) for m in (old, new)]
    if ops[0] != ops[1]:
        gone = sorted((ops[0] - ops[1]).elements())
        came = sorted((ops[1] - ops[0]).elements())
        parts = ([f"removed {', '.join(gone)}"] if gone else []) + (
            [f"added {', '.join(came)}"] if came else []
        )
        changes.append(f"nodes: {'; '.join(parts)}")
    for what in ("input", "output"):
        a = [(v.name, declared_type_text(v.type)) for v in getattr(old.graph, what)]
        b = [(v.name, declared_type_text(v.type)) for v in getattr(new.graph, what)]
        if a != b:
            changes.append(f"graph {what}s {_listed(a)} -> {_listed(b)}")
    if not changes:
        nodes = list(zip(old.graph.node, new.graph.node, strict=False))
        for k, (a, b) in enumerate(nodes):
            if a.SerializeToString() != b.SerializeToString():
                names = sorted(
                    {x.name for x in a.attribute} ^ {x.name for x in b.attribute}
                    | {
                        x.name
                        for x in a.attribute
                        for y in b.attribute
                        if x.name == y.name and x.SerializeToString() != y.SerializeToString()
                    }
                )
                what = f"attributes {', '.join(names)}" if names else "inputs, outputs or names"
                changes.append(f"node {k} ({a.op_type}): {what} changed")
                break
    if not changes:
        a = [(t.name, t.data_type, tuple(t.dims)) for t in old.graph.initializer]
        b = [(t.name, t.data_type, tuple(t.dims)) for t in new.graph.initializer]
        if a != b:
            changes.append(f"initializers: {len(a)} -> {len(b)}, or their names, types, dims")
        elif any(
            x.SerializeToString() != y.SerializeToString()
            for x, y in zip(old.graph.initializer, new.graph.initializer, strict=True)
        ):
            changes.append("initializer values changed")
    if not changes:
        changes.append("only other bytes differ (doc strings, names, metadata or encoding)")
    return changes


def _listed(values: list[tuple[str, str]]) -> str:
    return "[" + ", ".join(f"{n}: {t}" for n, t in values) + "]"


# --- the report ------------------------------------------------------------------------


def diff(
    old: str | os.PathLike[str] | Store,
    new: str | os.PathLike[str] | Store,
    *,
    progress: Callable[[str], None] | None = None,
    offline: bool = False,
) -> Report:
    """Compare two corpora path by path (see the module docs).

    Parameters
    ----------
    old, new
        A store, a dataset store's folder, a corpus folder (imported first, into a
        temporary store), :data:`DEFAULT_CORPUS` (or ``@onnx``) for the built-in default
        corpus, or a release, ``@onnx==VERSION`` (its store, built once and cached: see
        ``onnx_arrow.corpus.releases``).
    progress
        Called with each case once compared.
    offline
        Take a release from the cache (or a wheel on disk) only.

    Returns
    -------
    Report
        A report of kind ``diff`` (:meth:`~onnx_arrow.reports.Report.to_pandas` for a
        DataFrame): one row per path of either side, columns :data:`DIFF_COLUMNS`
        (types :data:`DIFF_SCHEMA`): ``path``,
        ``case``, ``role`` (model, value or file; of the new side where both have it),
        ``status`` (one of :data:`STATUSES`), ``max_ulp`` (the largest ULP distance of
        a value's floating elements; null where none were compared), ``dtype``
        (the value's first tensor's, old side), ``old_shape`` / ``new_shape``,
        ``old_bytes`` / ``new_bytes`` (file sizes) and ``detail`` (what changed).
        Sorted by path.  Its provenance says what was compared: both sides, the
        onnx-arrow that wrote them and their provenance (``old_provenance``,
        ``new_provenance``: where each side's data came from, see
        ``onnx_arrow.corpus.releases``).
    """
    with open_side(old, offline=offline) as a, open_side(new, offline=offline) as b:
        rows = list(_rows(a, b, progress))
        made = {
            "kind": "diff",
            "onnx_arrow_version": onnx_arrow.__version__,
            "old": str(old) if not isinstance(old, Store) else [str(p) for p in a.parts],
            "new": str(new) if not isinstance(new, Store) else [str(p) for p in b.parts],
            "old_created_by": a.metadata.get("created_by"),
            "new_created_by": b.metadata.get("created_by"),
            "old_provenance": a.metadata.get("provenance"),
            "new_provenance": b.metadata.get("provenance"),
        }
    rows.sort(key=lambda r: r["path"])
    table = pa.Table.from_pandas(_frame(rows), schema=DIFF_SCHEMA, preserve_index=False)
    return Report.of(table, made)


_Listed = tuple[str, str, int, bytes]  # case, role, bytes, digest


def _listing(store: Store) -> dict[str, _Listed]:
    """Per path: its case, role, size and digest, each file rebuilt from the store's rows as
    every reader of the store rebuilds it (its rows validated, the bytes checked against
    the digest the row records) and its size and digest taken from the bytes read: a row
    changed after the store was written is refused, never called identical."""
    if not store.digests:
        raise CorpusError(
            "the store records no digests of its files (format version 2, written before "
            "they were): diff compares them by digest; export the store to a folder and "
            "import it again, or diff the exported folder",
            where=str(store.path),
        )
    table = store.read_columns(["path", "role", "digest"], roles=["model", "value", "file"])
    paths, digests = table.column("path").to_pylist(), table.column("digest").to_pylist()
    if None in digests:  # every file row has one: without it, equal could not be told
        raise CorpusError(
            "the row has no digest; the store is damaged or was changed after it was "
            "written: import the corpus again",
            where=f"{store.path}: {paths[digests.index(None)]}",
        )
    roles = dict(zip(paths, table.column("role").to_pylist(), strict=True))
    listed: dict[str, _Listed] = {}
    for file in store.files():
        if file.path in listed:
            raise CorpusError(
                f"the store holds this path twice (cases {listed[file.path][0]!r} and "
                f"{file.case!r}); the store is damaged or was changed after it was written: "
                "import the corpus again",
                where=f"{store.path}: {file.path}",
            )
        digest = hashlib.blake2b(file.data, digest_size=16).digest()
        listed[file.path] = (file.case, roles[file.path], len(file.data), digest)
    return listed


def _rows(
    old: Store, new: Store, progress: Callable[[str], None] | None
) -> Iterator[dict[str, Any]]:
    before, after = _listing(old), _listing(new)
    for path in before.keys() - after.keys():
        case, role, size, _ = before[path]
        yield {"path": path, "case": case, "role": role, "status": "removed", "old_bytes": size}
    for path in after.keys() - before.keys():
        case, role, size, _ = after[path]
        yield {"path": path, "case": case, "role": role, "status": "added", "new_bytes": size}
    changed: dict[str, set[str]] = {}
    for path in after.keys() & before.keys():
        (case, role, size, digest), (_, _, old_size, old_digest) = after[path], before[path]
        if digest == old_digest:  # BLAKE2b-128 of the bytes: the same file, nothing to read
            yield {
                "path": path, "case": case, "role": role, "status": "identical",
                "old_bytes": old_size, "new_bytes": size,
            }  # fmt: skip
        else:
            changed.setdefault(case, set()).add(path)
    order = {case: k for k, case in enumerate(dict.fromkeys(c for c, _, _, _ in after.values()))}
    for case in sorted(changed, key=order.__getitem__):
        yield from _case_rows(old, new, case, changed[case], before, after)
        if progress is not None:
            progress(case)


def _case_rows(
    old: Store,
    new: Store,
    case: str,
    paths: set[str],
    before: dict[str, _Listed],
    after: dict[str, _Listed],
) -> Iterator[dict[str, Any]]:
    """The rows of a case's paths whose digests differ: models and other files compared by
    their contents, values decoded from the columns (each side's case read once)."""
    old_case = before[next(iter(paths))][0]
    old_contents, new_contents = _contents(old, old_case, paths), _contents(new, case, paths)
    old_values, new_values = _values(old, old_case, paths), _values(new, case, paths)
    for path in sorted(paths):
        role, old_role = after[path][1], before[path][1]
        row: dict[str, Any] = {
            "path": path,
            "case": case,
            "role": role,
            "old_bytes": before[path][2],
            "new_bytes": after[path][2],
        }
        if role == "model" and old_role == "model":
            changes = model_changes(
                _model(old_contents[path], f"{old.path}: {path}"),
                _model(new_contents[path], f"{new.path}: {path}"),
            )
            yield {**row, "status": "model-changed", "detail": "; ".join(changes)}
            continue
        if path in old_values and path in new_values:
            found = _compare(old_values[path], new_values[path], old.path, new.path)
            yield {
                **row,
                "status": found.status,
                "max_ulp": found.max_ulp,
                "dtype": found.dtype,
                "old_shape": found.old_shape,
                "new_shape": found.new_shape,
                "detail": _detail(found.details) or "the same values, encoded differently",
            }
            continue
        kept = "kept as bytes on one side; " if "value" in (role, old_role) else ""
        yield {**row, "status": "file-changed", "detail": f"{kept}the bytes differ"}


def _contents(store: Store, case: str, paths: set[str]) -> dict[str, bytes]:
    """The stored bytes of the case's model and file rows among ``paths``."""
    table = store.read_case(case, ["path", "role", "content"])
    return {
        path: content
        for path, role, content in zip(
            *(table.column(c).to_pylist() for c in table.column_names), strict=True
        )
        if role in ("model", "file") and path in paths
    }


def _model(content: bytes, where: str) -> ModelProto:
    """A model row's bytes parsed; bytes that do not parse are a located error."""
    from onnx_arrow.core.model import ModelProto  # only models that differ are parsed

    try:
        return ModelProto.FromString(content)
    except DecodeError as exc:
        raise CorpusError(
            f"the model does not parse ({exc}); the store is damaged or was changed after it "
            "was written: import the corpus again",
            where=where,
        ) from None


def _values(store: Store, case: str, paths: set[str]) -> dict[str, StoredValue]:
    if not paths:
        return {}
    return {v.path: v for v in store.values(case) if v.path in paths}


def _compare(old: StoredValue, new: StoredValue, old_store: Path, new_store: Path) -> _Finding:
    for value, store in ((old, old_store), (new, new_store)):
        if not isinstance(value.onnx_type, str):
            raise CorpusError(
                "the value row has no onnx_type; the store is damaged or was changed after "
                "it was written: import the corpus again",
                where=f"{store}: {value.path}",
            )
    found = _Finding()
    if old.onnx_type != new.onnx_type and not (
        old.onnx_type.startswith("tensor(") and new.onnx_type.startswith("tensor(")
    ):
        found.worse("type-changed", f"declared {old.onnx_type} -> {new.onnx_type}")
        return found
    _walk(old.node, new.node, "", found)
    return found


_DETAILS_KEPT: Final = 3


def _detail(details: list[str]) -> str | None:
    if not details:
        return None
    more = len(details) - _DETAILS_KEPT
    return "; ".join(details[:_DETAILS_KEPT]) + (f"; ... {more} more" if more > 0 else "")


def _frame(rows: Iterable[dict[str, Any]]) -> pd.DataFrame:
    records = list(rows)
    data: dict[str, Any] = {}
    for name in DIFF_COLUMNS:
        values = [r.get(name) for r in records]
        if name in ("old_bytes", "new_bytes"):
            data[name] = pd.array(values, dtype="Int64")
        elif name == "max_ulp":
            data[name] = pd.array(values, dtype="UInt64")
        elif name in ("old_shape", "new_shape"):
            data[name] = pd.Series(values, dtype=object)
        else:
            data[name] = pd.array(values, dtype=pd.StringDtype())
    return pd.DataFrame(data)


def equivalent(
    report: Report | pd.DataFrame,
    *,
    max_ulp: int = 0,
    accept: Sequence[str] = (),
) -> pd.Series:
    """Per row of a :func:`diff` report, whether the two sides count as the same: identical,
    ``same-values``, a ``float-drift`` of at most ``max_ulp``, or a path matching one of
    the glob patterns ``accept`` (files that may differ, such as decoded images)."""
    report = as_frame(report)
    status = report["status"]
    ok = status.isin(["identical", "same-values"])
    ok |= (status == "float-drift") & (report["max_ulp"].fillna(0) <= max_ulp)
    if accept:
        ok |= report["path"].map(lambda p: any(fnmatch.fnmatchcase(p, a) for a in accept))
    return ok.astype(bool)
