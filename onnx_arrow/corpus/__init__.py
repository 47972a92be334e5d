"""The corpus store: ONNX test corpora to one Parquet file and back, byte for byte.

An adapter around the core: it reads folders of test cases (or the node suite the
installed onnx builds, or any onnx release's test data: ``@onnx==VERSION``), writes them
to a Parquet store that DuckDB, Polars and pandas can query, and gives the folder tree
back exactly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from onnx_arrow._lazy import exports

if TYPE_CHECKING:
    from onnx_arrow.corpus.dataset import write_dataset
    from onnx_arrow.corpus.decode import (
        REQUIRED_COLUMNS,
        StoredCase,
        case_data_sets,
        cases_from_rows,
    )
    from onnx_arrow.corpus.export import export_store
    from onnx_arrow.corpus.options import WriteOptions
    from onnx_arrow.corpus.release_dataset import release_changes, release_stores
    from onnx_arrow.corpus.releases import open_release_store, release_source
    from onnx_arrow.corpus.rows import StoredFile, StoredValue
    from onnx_arrow.corpus.sources import (
        Case,
        CorpusError,
        CorpusFile,
        FolderSource,
        MergedSource,
        NodeSuiteSource,
        Tolerance,
        default_source,
    )
    from onnx_arrow.corpus.store import Store
    from onnx_arrow.corpus.write import write_store

#: The names above, imported when first looked up (``onnx-arrow --help`` reads
#: WriteOptions only): ``{module: names}``; a test checks that this table and the
#: ``TYPE_CHECKING`` block name the same.
_LAZY: Final = {
    "onnx_arrow.corpus.dataset": ("write_dataset",),
    "onnx_arrow.corpus.decode": (
        "REQUIRED_COLUMNS",
        "StoredCase",
        "case_data_sets",
        "cases_from_rows",
    ),
    "onnx_arrow.corpus.export": ("export_store",),
    "onnx_arrow.corpus.options": ("WriteOptions",),
    "onnx_arrow.corpus.release_dataset": ("release_changes", "release_stores"),
    "onnx_arrow.corpus.releases": ("open_release_store", "release_source"),
    "onnx_arrow.corpus.rows": ("StoredFile", "StoredValue"),
    "onnx_arrow.corpus.sources": (
        "Case",
        "CorpusError",
        "CorpusFile",
        "FolderSource",
        "MergedSource",
        "NodeSuiteSource",
        "Tolerance",
        "default_source",
    ),
    "onnx_arrow.corpus.store": ("Store",),
    "onnx_arrow.corpus.write": ("write_store",),
}
__getattr__, __dir__ = exports(__name__, _LAZY)

__all__ = [
    "REQUIRED_COLUMNS",
    "Case",
    "CorpusError",
    "CorpusFile",
    "FolderSource",
    "MergedSource",
    "NodeSuiteSource",
    "Store",
    "StoredCase",
    "StoredFile",
    "StoredValue",
    "Tolerance",
    "WriteOptions",
    "case_data_sets",
    "cases_from_rows",
    "default_source",
    "export_store",
    "open_release_store",
    "release_changes",
    "release_source",
    "release_stores",
    "write_dataset",
    "write_store",
]
