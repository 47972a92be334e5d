"""Run a backend over a corpus store and compare what it gives with the expected outputs.

An adapter (it imports pandas; ``import onnx_arrow`` does not import this package).

* A *backend* is any callable ``(model, inputs) -> outputs``: ``model`` an
  ``onnx.ModelProto``, ``inputs`` a dict from graph input name to value (ndarray,
  list for a sequence, dict for a map, None for an absent optional), ``outputs`` the
  values of the graph outputs in graph order.  :func:`reference_backend`
  (``onnx.reference.ReferenceEvaluator``) and :func:`onnxruntime_backend` are built in
  (:class:`OnnxruntimeBackend` with other execution providers and session options);
  :func:`resolve_backend` also takes a spec ``MODULE[:NAME]`` or any object with onnx's
  backend interface (``onnxruntime.backend``, a ``onnx.backend.base.Backend`` subclass),
  run by :class:`InterfaceBackend`.
  :class:`CommandRunner` runs a command of any runtime on each data set through files.
* :func:`run_backend` runs it over every data set of every case of a store; an
  exception the backend raises is recorded, never propagated.
* :func:`compare` gives a :class:`Report` (an Arrow table that says what it was made
  from and with) of one row per expected output value: its status (see
  :data:`STATUSES`), max absolute and relative errors, elements beyond tolerance, NaN
  counts, dtypes, shapes and the backend's error.  How values are judged is one
  :class:`Plan`.  :func:`summary` counts statuses per operator;
  :func:`concat_reports` joins reports keeping what each was made from;
  :func:`write_report` and :func:`read_report` keep a report as Parquet.
* :func:`write_actual` writes what a backend gives as a corpus store of its own (the
  same models and inputs, the actual outputs), and :func:`compare_stores` compares two
  stores, so a run on one machine can be compared on another.
* :func:`scoreboard` puts reports of several backends side by side: operator x element
  type x backend, in Markdown, HTML or JSON.

Values are compared the way onnx's backend test runner does
(``onnx.backend.test.runner.Runner.assert_similar_outputs``): floats with
``numpy.isclose`` (``|actual - expected| <= atol + rtol * |expected|``, NaN equal to
NaN, bfloat16 with ``rtol`` at least ``2**-6``), other ml_dtypes floats (float8,
float4) as float32.  Where the runner differs, this module is stricter and says so:
integers and booleans are compared exactly, strings by equality (``str`` and UTF-8
``bytes`` are equal), dtypes must match.

Each case is compared with the first of: the tolerance of a pattern that names it
(``tolerance={"test_dft": (1e-2, 1e-4)}``, as onnx's backend test files override
theirs per test), the case's own as its store keeps it (onnx's ``TestCase.rtol`` /
``atol``, a case folder's ``data.json``: densenet121's rtol is 2e-3), and the ``rtol``
/ ``atol`` given (1e-3 and 1e-7, onnx's defaults).  Each row says which it used.

The package, one concern a module (this one only gathers their public names):
``backends`` (the built-in backends, and the rule that finds one by name, spec or
object), ``feeds`` (values as runtimes take them), ``ort`` (onnxruntime: providers,
session options, every element type through OrtValues), ``interface`` (onnx's
backend interface, and specs), ``deadlines`` (the timeout of one
data set), ``runs`` (a backend run over the data sets of a store's cases), ``similarity``
(one actual value against its expected value), ``statuses`` (the verdicts, best to
worst), ``plans`` (which cases, skip / xfail / tolerance patterns),
``expectation_files`` (the files those patterns come from, onnxruntime's among them),
``unneeded`` (the entries of those files a report shows can go), ``serialize`` (an
actual value as a ``.pb``), ``distribution`` (how an output's errors are spread: their
percentiles, the ULP histogram), ``report`` (rows, columns, counts, the Parquet file),
``runner`` (a command through files: :class:`CommandRunner`),
``direct`` (:func:`compare`), ``actual`` (stores of actual outputs: :func:`write_actual`
and :func:`compare_stores`) and ``side_by_side`` (reports side by side: the scoreboard).

Examples
--------
>>> import tempfile, numpy as np
>>> from onnx import TensorProto, helper, numpy_helper
>>> from onnx_arrow.corpus import Case, CorpusFile, Store, write_store
>>> graph = helper.make_graph(
...     [helper.make_node("Abs", ["x"], ["y"])], "g",
...     [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
...     [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])])
>>> model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
>>> x = np.array([-1.0, 2.0, np.nan], np.float32)
>>> files = [
...     CorpusFile("node/test_abs/model.onnx", model.SerializeToString()),
...     CorpusFile("node/test_abs/test_data_set_0/input_0.pb",
...                numpy_helper.from_array(x, "x").SerializeToString()),
...     CorpusFile("node/test_abs/test_data_set_0/output_0.pb",
...                numpy_helper.from_array(np.abs(x), "y").SerializeToString())]
>>> tmp = tempfile.TemporaryDirectory()
>>> _ = write_store([Case("node/test_abs", "node", files, files[0].path)],
...                 f"{tmp.name}/abs.parquet")
>>> store = Store(f"{tmp.name}/abs.parquet")
>>> report = compare(store)
>>> report.provenance["backend"]["name"], report.table.num_rows
('reference', 1)
>>> report.to_pandas()[["case", "name", "status", "max_abs_error", "nan_expected"]]
            case name status  max_abs_error  nan_expected
0  node/test_abs    y  match            0.0             1
>>> def off_by_half(model, inputs):
...     return [np.abs(inputs["x"]) + np.float32(0.5)]
>>> df = compare(store, off_by_half, plan=Plan(rtol=0.0, atol=0.25)).to_pandas()
>>> df[["status", "max_abs_error", "n_beyond_tolerance"]].to_numpy().tolist()
[['mismatch', 0.5, 2]]
>>> summary(df)[["op_type", "total", "match", "mismatch", "non_match"]]
  op_type  total  match  mismatch  non_match
0     Abs      1      0         1          1
>>> tmp.cleanup()
"""

from __future__ import annotations

from onnx_arrow.compare.actual import compare_stores, write_actual
from onnx_arrow.compare.backends import (
    BACKENDS,
    Backend,
    BackendLike,
    backend_named,
    reference_backend,
    resolve_backend,
)
from onnx_arrow.compare.direct import compare
from onnx_arrow.compare.expectation_files import Pattern
from onnx_arrow.compare.interface import InterfaceBackend
from onnx_arrow.compare.ort import (
    ORT_DEFAULT_LOG_SEVERITY,
    ORT_LOG_SEVERITY_VARIABLE,
    OnnxruntimeBackend,
    onnxruntime_backend,
)
from onnx_arrow.compare.plans import (
    KEEP_ACTUAL,
    Expectations,
    Plan,
    parse_tolerance,
    select_cases,
)
from onnx_arrow.compare.report import (
    COMPARE_COLUMNS,
    REPORT_FORMAT,
    REPORT_METADATA_KEY,
    REPORT_SCHEMA,
    read_report,
    status_counts,
    summary,
    write_report,
)
from onnx_arrow.compare.runner import CommandRunner
from onnx_arrow.compare.runs import DataSetRun, run_backend
from onnx_arrow.compare.side_by_side import Scoreboard, scoreboard
from onnx_arrow.compare.statuses import PASSING, STATUSES
from onnx_arrow.compare.unneeded import UNNEEDED_COLUMNS, unneeded_entries
from onnx_arrow.errors import (
    BackendPrepareError,
    BackendSpecError,
    BackendTimeoutError,
    BackendUnavailableError,
    CompareError,
    RunnerError,
)
from onnx_arrow.reports import Report, concat_reports

__all__ = [
    "BACKENDS",
    "COMPARE_COLUMNS",
    "KEEP_ACTUAL",
    "ORT_DEFAULT_LOG_SEVERITY",
    "ORT_LOG_SEVERITY_VARIABLE",
    "PASSING",
    "REPORT_FORMAT",
    "REPORT_METADATA_KEY",
    "REPORT_SCHEMA",
    "STATUSES",
    "UNNEEDED_COLUMNS",
    "Backend",
    "BackendLike",
    "BackendPrepareError",
    "BackendSpecError",
    "BackendTimeoutError",
    "BackendUnavailableError",
    "CommandRunner",
    "CompareError",
    "DataSetRun",
    "Expectations",
    "InterfaceBackend",
    "OnnxruntimeBackend",
    "Pattern",
    "Plan",
    "Report",
    "RunnerError",
    "Scoreboard",
    "backend_named",
    "compare",
    "compare_stores",
    "concat_reports",
    "onnxruntime_backend",
    "parse_tolerance",
    "read_report",
    "reference_backend",
    "resolve_backend",
    "run_backend",
    "scoreboard",
    "select_cases",
    "status_counts",
    "summary",
    "unneeded_entries",
    "write_actual",
    "write_report",
]
