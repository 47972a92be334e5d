"""``onnx-arrow results``: a results store's runs, the changes of verdict between them,
and reports added to it.  Its arguments here; its work in
:mod:`onnx_arrow.cli.work.results`, imported only to run it.
"""

from __future__ import annotations

from typing import Any, Final

from onnx_arrow.cli._shared import Command, add_command

_EPILOG: Final = """\
examples:
  onnx-arrow compare corpus.parquet --backend onnxruntime --results results/
      a run added to the results store results/ (made if missing)
  onnx-arrow results add ort-1.20.parquet ort-1.21.parquet results/
      reports 'compare --out' wrote, added (a run already there is said and left)
  onnx-arrow results results/
      the runs: runtime, version, corpus, and their outputs by verdict
  onnx-arrow results results/ --changes
      per case and output, the runtime version (and the onnx release) where its verdict
      changed, pass->fail or fail->pass, with what both sides said

A results store is a folder of Parquet parts, a run each, that pyarrow, pandas,
DuckDB (read_parquet('results/*.parquet')) and Polars (scan_parquet('results/*.parquet'))
read as one table: a row per compared output, the report's columns after the run's
(run_id, runtime, runtime_version, execution_provider, runner_command,
corpus_onnx_version, corpus_digest, options, platform, onnx_arrow_version, date).

Verdicts: pass (match, xpass), fail (mismatch, nan_mismatch, dtype_mismatch,
shape_mismatch, error, xfail); a skipped output has none.  Versions are ordered as
packaging.version orders them.  Exit status 0; 1 if a part or report does not read
(the file named); 2 bad usage."""


def register(commands: Any) -> None:
    """Add ``results`` and its arguments."""
    res = add_command(
        commands,
        "results",
        "a results store: its runs, where verdicts changed, reports added",
        "Print the runs of the results store RESULTS (a folder of Parquet parts that "
        "'compare --results' writes) with their outputs by verdict; with --changes, where "
        "each output's verdict changed along a runtime's versions and along the corpus's "
        "onnx releases.  'results add REPORT... RESULTS' adds compare reports.",
        _EPILOG,
    )
    res.usage = (
        "onnx-arrow results [-h] RESULTS [--changes]\n"
        "       onnx-arrow results add REPORT... RESULTS [--again]"
    )
    res.add_argument(
        "paths",
        nargs="+",
        metavar="RESULTS",
        help="the results store (a folder; one named add: ./add); or 'add', the reports "
        "'compare --out' wrote, then the results store",
    )
    res.add_argument(
        "--changes",
        action="store_true",
        help="list where verdicts changed, along runtime versions and onnx releases",
    )
    res.add_argument(
        "--again",
        action="store_true",
        help="with add: add a run even if one of its identity (corpus digest, runtime, "
        "version, options) is there, as its next attempt",
    )


def load() -> Command:
    """The command's work, imported now (pyarrow and the results store with it)."""
    from onnx_arrow.cli.work.results import run

    return run
