"""The facts of a store, counted from its descriptive columns: what ``info`` and Jupyter show.

Both say the same of a store because both read :class:`StoreFacts`: the counting is
done here, each caller only lays the numbers out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import pyarrow as pa
import pyarrow.compute as pc

from onnx_arrow.corpus.columns import strings
from onnx_arrow.corpus.format import FORMAT_VERSION
from onnx_arrow.corpus.store import Store

__all__ = ["StoreFacts", "file_count", "store_facts"]

#: The store columns a summary reads: descriptive ones only, never data or contents.
_STORE_COLUMNS: Final = (
    "test_case", "kind", "role", "dtype", "count", "declared", "copy_of", "nbytes",
)  # fmt: skip


@dataclass(frozen=True)
class StoreFacts:
    """What a store holds, counted: the same numbers for ``info`` and for Jupyter.

    ``kinds`` pairs each kind folder (None for cases outside one) with its number of
    cases, in name order, None last.  ``roles`` and ``dtypes`` count rows by role and
    tensors by dtype, most frequent first (ties by name); ``elements`` adds up the
    elements of each dtype's tensors.  ``contradicting`` counts the values that contradict
    what their model declares (stored with their own type, flagged in the ``declared``
    column; none in a store of a version before 4).  ``copies`` counts the files stored
    once, as copies of an earlier file with their bytes (see the store format's Repeated
    files), ``copied_bytes`` their bytes (none in a store of a version before 5, or
    imported with ``--no-dedup``).
    """

    format: str
    created_by: str
    nbytes: int
    row_groups: int
    rows: int
    cases: int
    kinds: list[tuple[str | None, int]]
    roles: dict[str, int]
    dtypes: dict[str, int]
    elements: dict[str, int]
    contradicting: int = 0
    copies: int = 0
    copied_bytes: int = 0

    @property
    def files(self) -> int:
        """Rows that are files: models, values and other files (element rows are parts
        of values)."""
        return sum(n for role, n in self.roles.items() if role != "element")

    @property
    def tensors(self) -> int:
        """Tensors of value and element rows (those with a dtype)."""
        return sum(self.dtypes.values())


def store_facts(store: Store) -> StoreFacts:
    """Count what ``store`` holds, reading its descriptive columns only.

    Raises ``pyarrow.ArrowException`` if the file cannot be read (a damaged page).
    """
    meta = store.metadata
    table = store.read_columns(_STORE_COLUMNS)
    kinds = sorted(
        ((kind.as_py(), _distinct_cases(table, kind)) for kind in pc.unique(table.column("kind"))),
        key=lambda kv: (kv[0] is None, kv[0] or ""),
    )
    with_dtype = table.filter(pc.is_valid(table.column("dtype")))
    copied = table.filter(
        pc.and_(pc.is_valid(table.column("copy_of")), pc.not_equal(table.column("role"), _ELEMENT))
    )
    dtypes = with_dtype.column("dtype")
    elements = {
        dtype.as_py(): pc.sum(with_dtype.filter(pc.equal(dtypes, dtype))["count"]).as_py()
        for dtype in pc.unique(dtypes)
    }
    return StoreFacts(
        format=_format_text(meta),
        created_by=f"{meta.get('created_by', '?')} (onnx {meta.get('onnx_version', '?')})",
        nbytes=store.nbytes,
        row_groups=store.num_row_groups,
        rows=table.num_rows,
        cases=pc.count_distinct(table.column("test_case")).as_py(),
        kinds=kinds,
        roles=_value_counts(table.column("role")),
        dtypes=_value_counts(table.column("dtype")),
        elements={name: n or 0 for name, n in elements.items()},
        contradicting=len(table) - table.column("declared").null_count,
        copies=len(copied),
        copied_bytes=pc.sum(copied.column("nbytes")).as_py() or 0,
    )


#: The role compared with, made from buffers (see :func:`_distinct_cases`).
_ELEMENT: Final = strings(["element"])[0]


def _format_text(meta: dict[str, Any]) -> str:
    """The format and its version, and for an older version what it lacks: ``onnx-arrow
    corpus store, version 2 (older: no case tolerances, ...)``."""
    version = meta.get("format_version")
    text = f"{meta.get('format')}, version {version}"
    if isinstance(version, int) and version < FORMAT_VERSION:
        text += (
            f" (older than version {FORMAT_VERSION}, read as it; export and import again to "
            "upgrade: docs/store-format.md, Older versions)"
        )
    return text


def _distinct_cases(table: pa.Table, kind: pa.Scalar) -> int:
    """The cases of ``kind`` (a null: of no kind).  Per kind, with compute functions: a
    table's ``group_by`` imports pyarrow's dataset modules and pandas with them (as
    comparing with a Python value does, through ``pyarrow.scalar``), a third of a second
    of ``info``'s start-up."""
    column = table.column("kind")
    of_kind = pc.equal(column, kind) if kind.is_valid else pc.is_null(column)
    return int(pc.count_distinct(table.column("test_case").filter(of_kind)).as_py())


def file_count(store: Store) -> int:
    """The files of ``store`` (its rows of every role but ``element``), its ``role`` column
    alone read: as :attr:`StoreFacts.files` counts them."""
    roles = _value_counts(store.read_columns(["role"]).column("role"))
    return sum(n for role, n in roles.items() if role != "element")


def _value_counts(column: pa.ChunkedArray) -> dict[str, int]:
    """Count of each non-null value, most frequent first (ties by value)."""
    counts = pc.value_counts(column.drop_null())
    pairs = zip(counts.field("values").to_pylist(), counts.field("counts").to_pylist(), strict=True)
    return dict(sorted(pairs, key=lambda kv: (-kv[1], kv[0])))
