"""The one check of a store's cases that every reader shares: each row names its case
(a valid UTF-8 string, never null), and each case lies whole in one part of the store.

:class:`~onnx_arrow.corpus.Store` runs it when it opens a store, so every reader of a
store (``info``, ``export``, ``diff``, ``compare``, the Jupyter views, the catalog)
refuses what one refuses; :func:`~onnx_arrow.corpus.cases_from_rows` checks the case
names of the rows an engine hands it with :func:`check_case_names`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from onnx_arrow.corpus.parts import Part
from onnx_arrow.corpus.sources import CorpusError

__all__ = ["case_index", "check_case_names"]


def check_case_names(column: pa.Array | pa.ChunkedArray, *, where: str) -> None:
    """Refuse a ``test_case`` column with a null or a name that is not valid UTF-8: a row
    that names no case belongs to none, and could be read as any."""
    try:
        column.validate(full=True)
    except pa.ArrowInvalid as exc:
        raise CorpusError(
            f"the test_case column is invalid ({exc}); every row names its case as UTF-8 "
            "text: the store is damaged or was changed after it was written, import the "
            "corpus again",
            where=where,
        ) from None
    nulls = column.null_count
    if nulls:
        raise CorpusError(
            f"{nulls} rows have no test_case (null); every row names its case: the store "
            "is damaged or was changed after it was written, import the corpus again",
            where=where,
        )


def case_index(parts: Sequence[Part]) -> list[list[str]]:
    """The cases of each part, in store order, checked: names as
    :func:`check_case_names` wants them, and no case in two parts (a part added twice,
    or a case split over two parts).  Reads a part's index of cases where its footer
    holds one (:attr:`Part.index`), else its ``test_case`` column only."""
    index: list[list[str]] = []
    seen: dict[str, Path] = {}
    for part in parts:
        if part.index is not None:  # names and rows checked against the footer
            names = [name for spans in part.index for name, _, _ in spans]
        else:
            column = part.read(None, ["test_case"]).column("test_case")
            check_case_names(column, where=str(part.path))
            names = pc.unique(column).to_pylist()
        for name in names:
            if name in seen and _release_folder(part.path) != _release_folder(seen[name]):
                raise CorpusError(
                    f"case {name!r} is in two releases of a dataset store of releases "
                    f"({seen[name].parent.name} and {part.path.parent.name}): open one "
                    "release, the folder onnx_version=VERSION, as a store (DuckDB and "
                    "Polars read the whole folder, with its onnx_version column)",
                    where=str(part.path),
                )
            if name in seen:
                raise CorpusError(
                    f"case {name!r} is in two parts of the store, {seen[name]} and this one "
                    "(a part added twice, or a case split over two parts); remove the part "
                    "added twice, or import the corpus again",
                    where=str(part.path),
                )
            seen[name] = part.path
        index.append(names)
    return index


def _release_folder(path: Path) -> str | None:
    """The ``onnx_version=VERSION`` folder a part sits in (a dataset store of releases)."""
    for folder in path.parents:
        if folder.name.startswith("onnx_version="):
            return folder.name
    return None
