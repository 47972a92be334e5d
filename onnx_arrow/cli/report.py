"""``onnx-arrow report``: compare reports as a scoreboard, operator x element type x
backend.  Its arguments here; its work in :mod:`onnx_arrow.cli.work.report`, imported only
to run it.
"""

from __future__ import annotations

from typing import Any, Final

from onnx_arrow.cli._shared import Command, add_command

#: The formats the scoreboard renders to (onnx_arrow.compare.scoreboard.FORMATS).
FORMATS: Final = ("md", "html", "json")

_EPILOG: Final = """\
examples:
  onnx-arrow compare corpus.parquet --out reference.parquet
  onnx-arrow compare corpus.parquet --backend onnxruntime --out ort.parquet
  onnx-arrow report reference.parquet ort.parquet -o SCOREBOARD.md
      a Markdown table to commit: operators x element types, a column per backend
  onnx-arrow report reference.parquet ort.parquet --format html -o scoreboard.html
  onnx-arrow report ort-1.31.parquet ort-1.32.parquet --label 1.31 --label 1.32

Each cell counts cases by the worst verdict of their outputs of that element type:
pass (match, xpass), xfail, fail (mismatch, nan_mismatch, dtype_mismatch,
shape_mismatch), error, skip; with the largest ULP distance of their floats.  Errors
are grouped by cause: the exception type and the first words of its message.  A
column is named from the backend the report says it ran, and what that runs, the
onnx version or the file name when needed to tell two apart."""


def register(commands: Any) -> None:
    """Add ``report`` and its arguments."""
    rep = add_command(
        commands,
        "report",
        "compare reports as a scoreboard: operator x element type x backend",
        "Render one or more compare reports (several backends, providers or onnx versions) "
        "as a scoreboard: a row per operator and element type, a column per report, each "
        "cell the cases that pass, xfail, fail and error with the largest ULP distance; "
        "then the errors by cause.  Markdown to commit (no timestamps, a stable order), "
        "HTML to read in a browser, or JSON.",
        _EPILOG,
    )
    rep.add_argument(
        "reports", nargs="+", metavar="REPORT", help="a report 'onnx-arrow compare --out' wrote"
    )
    rep.add_argument(
        "--format", choices=FORMATS, default="md", help="the output's format (default: md)"
    )
    rep.add_argument(
        "--label",
        action="append",
        metavar="NAME",
        help="the column of a report, one per REPORT in their order (default: its backend)",
    )
    rep.add_argument("-o", "--out", metavar="FILE", help="write to FILE (default: stdout)")
    rep.add_argument("--force", action="store_true", help="replace FILE if it exists")


def load() -> Command:
    """The command's work, imported now (pandas and the compare package with it)."""
    from onnx_arrow.cli.work.report import run

    return run
