"""``onnx-arrow coverage``: what a corpus tests against what the ONNX specification
allows, per operator and type.  Its arguments here; its work in
:mod:`onnx_arrow.cli.work.coverage`, imported only to run it.
"""

from __future__ import annotations

from typing import Any, Final

from onnx_arrow.cli._shared import Command, add_command, offline_option

#: The formats the coverage renders to.
FORMATS: Final = ("text", "json", "csv")

_EPILOG: Final = """\
examples:
  onnx-arrow coverage corpus.parquet
      operators covered / in the specification, (operator, type) pairs covered /
      allowed, and what no case exercises
  onnx-arrow coverage @onnx==1.14.1 --case 'node/*'
      the node suite of a frozen corpus of an older release (its store, built once
      and cached)
  onnx-arrow coverage corpus.parquet --format csv -o coverage.csv
      a row per (operator, type constraint, type) with its cases
  onnx-arrow coverage corpus.parquet --format json -o coverage.json
      the figures, the uncovered lists, and every operator and pair with its cases

The schemas are the installed onnx's (onnx.defs), each operator at the version the
opset a case's model imports resolves to; the specification is every operator of
each domain the corpus imports, at its highest opset there.  A type is the stored
values' where a case stores them, else the model's declared type, else onnx's type
inference's.  An operator without a schema (a custom domain, a model-local
function) is listed as unknown."""


def register(commands: Any) -> None:
    """Add ``coverage`` and its arguments."""
    cov = add_command(
        commands,
        "coverage",
        "what a corpus tests against what the ONNX specification allows",
        "Count what the cases of STORE exercise of the ONNX specification: per operator "
        "(domain, name, version) and per type each of its type constraints allows, the "
        "cases whose models run it; the operators and (operator, type) pairs no case "
        "exercises; the operators whose schema is unknown.",
        _EPILOG,
    )
    cov.add_argument(
        "store",
        metavar="STORE",
        help="a store (.parquet, or a dataset store's folder) or a release, @onnx==VERSION",
    )
    cov.add_argument(
        "--case",
        action="append",
        metavar="PATTERN",
        help="only the cases matching this glob (node/*, node/test_add*, or test_add* "
        "without the kind folder, as compare --case); repeat for more",
    )
    offline_option(cov)
    cov.add_argument(
        "--format", choices=FORMATS, default="text", help="the output's format (default: text)"
    )
    cov.add_argument("-o", "--out", metavar="FILE", help="write to FILE (default: stdout)")
    cov.add_argument("--force", action="store_true", help="replace FILE if it exists")


def load() -> Command:
    """The command's work, imported now (onnx and the store with it)."""
    from onnx_arrow.cli.work.coverage import run

    return run
