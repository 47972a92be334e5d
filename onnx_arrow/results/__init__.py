"""Results as data: the rows of compare reports of many runs (runtimes, their versions,
onnx releases) kept in one results store, a folder of Parquet parts that pyarrow,
DuckDB, Polars and pandas read as one table; and where verdicts changed along a
runtime's versions and along onnx releases.

A row per compared output: a compare report's columns
(:data:`~onnx_arrow.compare.REPORT_SCHEMA`) after the run columns
(:data:`RUN_SCHEMA`: the run's id and identity, the runtime and its version, the
execution provider or runner command, the corpus's onnx release and digest, the
options, the platform, onnx-arrow's version, the date).  :func:`add` adds a report's
runs (a part each, atomically), :func:`read` reads and checks every part, :func:`runs`
counts each run's verdicts and :func:`changes` finds where they changed; :func:`matrix`
runs every given corpus x every given runtime into a store, the pairs it holds skipped.

Examples
--------
>>> RESULTS_SCHEMA.names[:4]
['run_id', 'run_key', 'attempt', 'runtime']
>>> RESULTS_SCHEMA.names[len(RUN_COLUMNS)]
'case'
"""

from __future__ import annotations

from onnx_arrow.results.pairs import PAIR_STATES, MatrixBackend, Pair, matrix
from onnx_arrow.results.schema import (
    IDENTITY_COLUMNS,
    OPTION_KEYS,
    RESULTS_FORMAT,
    RESULTS_METADATA_KEY,
    RESULTS_SCHEMA,
    RUN_COLUMNS,
    RUN_SCHEMA,
)
from onnx_arrow.results.store import (
    PART_SUFFIX,
    Added,
    add,
    check,
    has_run,
    part_names,
    provenances,
    read,
    runs,
)
from onnx_arrow.results.version_changes import CHANGES_SCHEMA, FAILING, PASSES, changes

__all__ = [
    "CHANGES_SCHEMA",
    "FAILING",
    "IDENTITY_COLUMNS",
    "OPTION_KEYS",
    "PAIR_STATES",
    "PART_SUFFIX",
    "PASSES",
    "RESULTS_FORMAT",
    "RESULTS_METADATA_KEY",
    "RESULTS_SCHEMA",
    "RUN_COLUMNS",
    "RUN_SCHEMA",
    "Added",
    "MatrixBackend",
    "Pair",
    "add",
    "changes",
    "check",
    "has_run",
    "matrix",
    "part_names",
    "provenances",
    "read",
    "runs",
]
