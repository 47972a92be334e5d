"""The corpus store format: Parquet, one row per file or per tensor, plain columns.

The spec is ``docs/store-format.md``; this module is its single source: the
columns, their types and the data column of each ONNX dtype are defined here and
the docs page is generated from them.
"""

from __future__ import annotations

import base64
import json
import math
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import pyarrow as pa

from onnx_arrow.core.model import (
    DTYPES,
    MAX_ELEMENTS,
    DType,
    element_type,
    load_json,
    storage_type,
)
from onnx_arrow.corpus.sources import CorpusError, CorpusFile, Slot

__all__ = [
    "CASES_KEY",
    "CASES_VERSION",
    "COLUMNS",
    "DATA_COLUMNS",
    "FORMAT",
    "FORMAT_VERSION",
    "METADATA_KEY",
    "OLDEST_VERSION",
    "ORDINAL_COLUMNS",
    "ROLES",
    "SCHEMA",
    "TOLERANCE_COLUMNS",
    "Column",
    "build_case_index",
    "case_runs",
    "data_column",
    "data_storage_dtype",
    "format_schemas",
    "parse_case_index",
    "parse_metadata",
    "shape_problem",
    "store_order",
]

#: Name of the format, in the file metadata.
FORMAT: Final = "onnx-arrow corpus store"
#: Version of the format; a reader refuses versions it does not know.
FORMAT_VERSION: Final = 5
#: The oldest version a reader reads: versions from it to :data:`FORMAT_VERSION` read as
#: the current one, the columns a version lacks read as nulls (see :func:`format_schemas`).
OLDEST_VERSION: Final = 2
#: The Parquet key-value metadata key holding the store's JSON description.
METADATA_KEY: Final = "onnx_arrow"
#: The Parquet key-value metadata key of a store file's index of cases (its footer):
#: per row group, each case's name and rows, in store order (see :func:`build_case_index`).
CASES_KEY: Final = "onnx_arrow.cases"
#: The version of the index of cases; a reader ignores an index of another.
CASES_VERSION: Final = 1
#: The most bytes the index of cases unpacks to (100,000 cases of 100-character names
#: take a tenth of it): past it, the index is ignored.
_MAX_INDEX_BYTES: Final = 128 << 20

#: What a row holds.
ROLES: Final = {
    "model": "a model file (model.onnx, NAME.onnx): its bytes in content",
    "value": "a value file (input_K.pb, output_K.pb) decoded; for a tensor its data, "
    "for a container its envelope, with the tensors inside on element rows",
    "element": "a tensor inside a container value (map keys and sparse dims included)",
    "file": "any other file, or a .pb that cannot be typed or decoded exactly: its bytes "
    "in content",
}


@dataclass(frozen=True)
class Column:
    """One column of the store: name, Arrow type, and what it holds."""

    name: str
    type: pa.DataType
    doc: str


def data_storage_dtype(row: DType) -> pa.DataType:
    """The Arrow type of one element in the data column of ``row``: plain, no extension.

    The Arrow storage of the element type, except where the dtype table's store storage
    is wider (FLOAT16, widened to float32 exactly: Spark refuses whole Parquet files
    holding a FLOAT16 column).
    """
    if row.store_widens:
        return pa.from_numpy_dtype(row.store_storage)
    return storage_type(element_type(row))


def data_column(row: DType) -> str:
    """The name of the data column of ``row``: ``data_float``, ``data_bfloat16`` ..."""
    return f"data_{row.name.lower()}"


_COLUMNS: Final = (
    Column(
        "test_case", pa.string(), "test case folder, relative to the corpus root: node/test_abs"
    ),
    Column("kind", pa.string(), "kind folder of the case (node, simple, light ...), or empty"),
    Column(
        "case_rows",
        pa.int32(),
        "rows the case has in the store; with case_row, a reader tells a whole case from "
        "part of one",
    ),
    Column(
        "case_row",
        pa.int32(),
        "where the row sits in its case, from 0: the order a case's rows are read in "
        "(element rows in the order their value's envelope takes them)",
    ),
    Column(
        "rtol",
        pa.float64(),
        "the case's own relative tolerance, as its source states it (onnx's TestCase, the "
        "case folder's data.json), on every row of the case; null where it states none",
    ),
    Column("atol", pa.float64(), "the case's own absolute tolerance, like rtol"),
    Column("path", pa.string(), "the file, relative to the corpus root"),
    Column("role", pa.string(), "model, value, element or file (see roles)"),
    Column("data_set", pa.int32(), "N of test_data_set_N; null outside data sets"),
    Column("io", pa.string(), "input or output, for value and element rows"),
    Column(
        "index",
        pa.int32(),
        "which of the model's inputs (those not initializers) or outputs the value is "
        "for, from 0: the one whose name the file's message carries, else the K of "
        "input_K.pb / output_K.pb (as onnxruntime's test runner pairs them)",
    ),
    Column(
        "element",
        pa.string(),
        "where the tensor sits in its value: '' for the value "
        "itself, tensor_values[2], values.map_values[0].keys ...",
    ),
    Column("name", pa.string(), "the value's name (its message's name field)"),
    Column(
        "onnx_type",
        pa.string(),
        "ONNX type: tensor(float), seq(tensor(int64)), "
        "map(string,tensor(float)), optional(...), sparse_tensor(float)",
    ),
    Column(
        "declared",
        pa.string(),
        "on a value row whose value contradicts what its model declares (another element "
        "type, rank or size): the declared type with its dims, tensor(float) [] (onnx_type, "
        "dtype and shape say what the value holds, kept exactly); null where it agrees",
    ),
    Column("dtype", pa.string(), "ONNX data type of the tensor: FLOAT, BFLOAT16 ..."),
    Column("shape", pa.list_(pa.int64()), "dims of the tensor"),
    Column("count", pa.int64(), "number of elements of the tensor"),
    Column("nbytes", pa.int64(), "size of the file in bytes (value, model and file rows)"),
    Column(
        "digest",
        pa.binary(),
        "BLAKE2b-128 of the file's bytes (value, model and file rows): equal digests, equal "
        "files, without reading their data",
    ),
    Column(
        "min",
        pa.float64(),
        "smallest element, NaN ignored (numeric tensors; as a double, so 64-bit integers "
        "beyond 2**53 are rounded)",
    ),
    Column(
        "max",
        pa.float64(),
        "largest element, NaN ignored (numeric tensors; as a double, like min)",
    ),
    Column("mean", pa.float64(), "mean of the elements, NaN ignored (numeric tensors)"),
    Column("nan_count", pa.int64(), "elements that are NaN (float tensors)"),
    Column("inf_count", pa.int64(), "elements that are +-Inf (float tensors)"),
    Column(
        "value_kind",
        pa.string(),
        'structure of the value as JSON: ["sequence", ["tensor"]] (value rows)',
    ),
    Column(
        "envelope",
        pa.binary(),
        "the value's message without its bulk data, itself a valid message (value rows)",
    ),
    Column("content", pa.binary(), "the file's bytes (model and file rows)"),
    Column(
        "copy_of",
        pa.string(),
        "on the rows of a file whose bytes repeat an earlier file's in the same store file "
        "(same digest and nbytes): the path of that file, whose rows (matched by element) "
        "hold the payload this file's rows leave null (its data columns, envelope, content); "
        "null on every other row (see Repeated files)",
    ),
)

#: The store's schema: the columns above, then one data column per ONNX dtype.
SCHEMA: Final = pa.schema(
    [pa.field(c.name, c.type) for c in _COLUMNS]
    + [pa.field(data_column(r), pa.list_(data_storage_dtype(r))) for r in DTYPES.values()]
)
COLUMNS: Final = {c.name: c for c in _COLUMNS}
#: The columns that say where a row sits in its case: filled by the writer, checked by the
#: readers of rows handed over by an engine.
ORDINAL_COLUMNS: Final = ("case_rows", "case_row")
#: The columns of a case's own tolerances: the same on every row of a case.
TOLERANCE_COLUMNS: Final = ("rtol", "atol")
#: The data column of each ONNX dtype, by column name.
DATA_COLUMNS: Final = {data_column(r): r for r in DTYPES.values()}


#: The columns each version added, and a column added within a version (stores of that
#: version hold it or not).  Version 2 added case_rows and case_row; version 1 is not read.
_ADDED: Final = {3: ("rtol", "atol"), 4: ("declared",), 5: ("copy_of",)}
_ADDED_WITHIN: Final = {2: ("digest",)}


def format_schemas(version: int) -> list[tuple[pa.Schema, tuple[str, ...]]]:
    """The schemas a part of format ``version`` (:data:`OLDEST_VERSION` ..
    :data:`FORMAT_VERSION`) may have, each with the columns of :data:`SCHEMA` it lacks:
    a reader reads those as nulls (no tolerance stated, no digest recorded).

    >>> [lacks for _, lacks in format_schemas(2)]
    [('rtol', 'atol', 'declared', 'copy_of'), ('rtol', 'atol', 'declared', 'copy_of', 'digest')]
    >>> format_schemas(5) == [(SCHEMA, ())]
    True
    """
    lacks = tuple(c for v, added in _ADDED.items() if v > version for c in added)
    variants = [lacks, (*lacks, *_ADDED_WITHIN.get(version, ()))]
    out = []
    for missing in dict.fromkeys(variants):
        schema = pa.schema([f for f in SCHEMA if f.name not in missing])
        out.append((schema, missing))
    return out


def build_metadata(**extra: Any) -> bytes:
    """The JSON description stored under :data:`METADATA_KEY`."""
    doc = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "roles": ROLES,
        "columns": {c.name: c.doc for c in _COLUMNS},
        "data_columns": {
            r.name: {"column": data_column(r), "element": str(data_storage_dtype(r))}
            for r in DTYPES.values()
        },
        **extra,
    }
    return json.dumps(doc, indent=1, sort_keys=False).encode()


def parse_metadata(metadata: dict[bytes, bytes] | None, *, where: str) -> dict[str, Any]:
    """Check a store's file metadata and return its JSON description."""
    raw = (metadata or {}).get(METADATA_KEY.encode())
    if raw is None:
        raise CorpusError(
            f"no '{METADATA_KEY}' metadata: this Parquet file is not an onnx-arrow store",
            where=where,
        )
    doc = load_json(raw, what="store metadata", where=where, error=CorpusError)
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise CorpusError(f"store metadata does not name the format {FORMAT!r}", where=where)
    version = doc.get("format_version")
    reads = f"this onnx-arrow reads versions {OLDEST_VERSION} to {FORMAT_VERSION}"
    # exactly the integer: true and 2.0 compare equal to 1 and 2 in Python, not in JSON
    if type(version) is not int:
        raise CorpusError(
            f"store format version {version!r}; {reads}, as an integer: the metadata was "
            "changed after the store was written; import the corpus again",
            where=where,
        )
    if version > FORMAT_VERSION:
        raise CorpusError(
            f"store format version {version}; {reads}: the store was written by a newer "
            "onnx-arrow, upgrade onnx-arrow to read it (pip install --upgrade onnx-arrow)",
            where=where,
        )
    if version < OLDEST_VERSION:
        raise CorpusError(
            f"store format version {version}; {reads}: the store was written by an older "
            f"onnx-arrow ({doc.get('created_by', 'created_by not recorded')}), export it to "
            "a folder with that version (onnx-arrow export STORE FOLDER) and import the "
            "folder with this one",
            where=where,
        )
    return doc


def store_order(files: Sequence[CorpusFile], slots: Mapping[str, Slot]) -> list[CorpusFile]:
    """A case's files in the order the store holds their rows: as the case lists them
    (by path), except that the output files of a data set come before its input files.

    A value's elements and the next value's lie one after the other in a data column, and
    Parquet's zstd at its fast levels finds an output's values in its input (an
    activation repeats much of its input) far better when the output comes first: a
    store of ReLU cases is about a quarter smaller (benchmarks/bench_throughput.py).
    """
    first: dict[int | None, int] = {}
    keys = []
    for i, f in enumerate(files):
        slot = slots.get(f.path)
        if slot is None or slot.data_set is None:
            keys.append((i, 0, i))
        else:
            keys.append((first.setdefault(slot.data_set, i), slot.io != "output", i))
    return [files[k[2]] for k in sorted(keys)]


def shape_problem(shape: Sequence[int | None]) -> str | None:
    """What is wrong with a tensor row's ``shape`` column, or None: a dim that is null or
    below 0, or non-zero dims that declare more than ``MAX_ELEMENTS`` elements (no tensor
    declares so many; numpy gives no array of such a shape, even one of 0 elements)."""
    if any(d is None or d < 0 for d in shape):
        return "holds a dim below 0"
    if math.prod(d for d in shape if d) > MAX_ELEMENTS:
        return f"declares more than {MAX_ELEMENTS} elements along its non-zero dims"
    return None


def case_runs(names: Sequence[str | None]) -> list[tuple[str | None, int]]:
    """The runs of a row group's ``test_case`` column: each case's name and its rows, in
    order (a case whose rows are not together is in several runs).

    >>> case_runs(["a", "a", "b"])
    [('a', 2), ('b', 1)]
    """
    runs: list[tuple[str | None, int]] = []
    for name in names:
        if runs and runs[-1][0] == name:
            runs[-1] = (name, runs[-1][1] + 1)
        else:
            runs.append((name, 1))
    return runs


def build_case_index(groups: Sequence[Sequence[tuple[str | None, int]]]) -> bytes:
    """The index of cases stored under :data:`CASES_KEY`: JSON, ``{"version": 1,
    "row_groups": [[[NAME, ROWS], ...], ...]}``, a list per row group of its cases' runs
    (:func:`case_runs`) in store order, zlib-compressed and in base64."""
    doc = {"version": CASES_VERSION, "row_groups": [[list(run) for run in g] for g in groups]}
    text = json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode()
    # compressed, as text: case names repeat their folders (node/test_...), and a footer's
    # metadata is text to some engines
    return base64.b64encode(zlib.compress(text, 9))


def parse_case_index(
    raw: bytes | None, rows: Sequence[int]
) -> list[list[tuple[str, int, int]]] | None:
    """The index of cases of a store file (:func:`build_case_index`), per row group each
    case's ``(name, start, stop)`` rows, if it is one that agrees with the footer's row
    groups (``rows``: the rows of each); None where it is missing, of another version,
    malformed, or disagrees (a reader then reads the ``test_case`` column instead).

    A case is in one run of one row group, named by a UTF-8 string, and the
    runs of a row group cover its rows exactly.

    >>> parse_case_index(build_case_index([[("a", 2), ("b", 1)]]), [3])
    [[('a', 0, 2), ('b', 2, 3)]]
    >>> parse_case_index(build_case_index([[("a", 2), ("b", 1)]]), [4]) is None
    True
    """
    if raw is None:
        return None
    try:
        unzip = zlib.decompressobj()
        text = unzip.decompress(base64.b64decode(raw, validate=True), _MAX_INDEX_BYTES)
        if unzip.unconsumed_tail or not unzip.eof:  # larger than any index: a bomb
            return None
        doc = json.loads(text)
    except (ValueError, RecursionError, zlib.error):
        return None
    if not isinstance(doc, dict) or doc.get("version") != CASES_VERSION:
        return None
    groups = doc.get("row_groups")
    if not isinstance(groups, list) or len(groups) != len(rows):
        return None
    seen: set[str] = set()
    out = []
    for runs, count in zip(groups, rows, strict=True):
        if not isinstance(runs, list):
            return None
        spans, start = [], 0
        for run in runs:
            if not (isinstance(run, list) and len(run) == 2 and isinstance(run[0], str)):
                return None
            name, size = run
            if type(size) is not int or size < 1 or name in seen or not _utf8(name):
                return None
            seen.add(name)
            spans.append((name, start, start + size))
            start += size
        if start != count:
            return None
        out.append(spans)
    return out


def _utf8(name: str) -> bool:
    """Whether ``name`` is text a ``test_case`` column can hold (no lone surrogate)."""
    try:
        name.encode()
    except UnicodeEncodeError:
        return False
    return True
