"""The ``onnx-arrow`` command: the corpus store, a built-in example, a look inside files.

Commands: ``import`` a corpus (the built-in default corpus, or a folder) into one
Parquet store, ``export`` a store back to the folder tree, ``verify`` that a
corpus survives the round trip byte for byte, ``generate`` the node suite as a
folder, ``info`` on a ``.pb`` file, a store or a case folder, and ``example``;
``run`` a backend over a store, writing its outputs as a store, and ``compare``
a backend's outputs (or such a store) with the expected ones (exit 1 if any
output does not match).

Exit codes: 0 success, 1 a data error (a file, case or store onnx-arrow cannot
read, an output it will not overwrite, a round trip that differs; one line on
stderr), 2 a usage error, 130 interrupted (Ctrl-C; nothing half-written is left).

>>> main(["--version"])  # doctest: +ELLIPSIS
onnx-arrow ...
0
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import textwrap
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final

import onnx_arrow
from onnx_arrow._lazy import exports
from onnx_arrow._startup import restore_interrupt
from onnx_arrow.corpus.options import WriteOptions
from onnx_arrow.errors import OnnxArrowError
from onnx_arrow.parallel import ENGINES

if TYPE_CHECKING:
    from onnx_arrow._commands import example_tensors

__all__ = ["example_tensors", "main"]

# The commands themselves import numpy, onnx, ml_dtypes and the store: only once the
# arguments have parsed, so that --help and a usage error answer at once.
__getattr__, __dir__ = exports(__name__)

PROG: Final = "onnx-arrow"
EXIT_OK: Final = 0
EXIT_DATA_ERROR: Final = 1
EXIT_USAGE: Final = 2
EXIT_INTERRUPTED: Final = 130  # 128 + SIGINT, as shells report it

#: Differences, op types and drifts a command lists before a count of the rest.
MAX_LISTED: Final = 20

_DESCRIPTION: Final = """\
ONNX values as Apache Arrow data, exactly, both ways.

Tensors become arrow.fixed_shape_tensor (or a variable-shape layout) columns
with every one of ONNX's 28 element types, and come back byte for byte.
Corpora of ONNX test cases go to one Parquet store that DuckDB, Polars and
pandas query, and come back as the same folder tree, byte for byte."""

_EPILOG: Final = """\
examples:
  onnx-arrow import corpus.parquet
      the built-in default corpus (the installed onnx's node suite and the model
      tests in its wheel) to one Parquet store
  onnx-arrow import path/to/onnx/backend/test/data corpus.parquet
      a corpus folder to one Parquet store
  onnx-arrow export corpus.parquet corpus/
      the store back to the folder tree, byte for byte
  onnx-arrow verify
      import, export and compare every file of the default corpus
  onnx-arrow info corpus.parquet
      what a store holds; also takes a case folder, a model or a .pb file
  onnx-arrow example
      convert a built-in set of tensors to Arrow and back, and show them
  python -m onnx_arrow --version

exit status: 0 success, 1 a file, case or store onnx-arrow cannot read, an output
it will not overwrite, or a round trip that differs, 2 bad usage, 130 interrupted"""

_IMPORT_EPILOG: Final = """\
examples:
  onnx-arrow import corpus.parquet
      the built-in default corpus to corpus.parquet
  onnx-arrow import onnx/backend/test/data corpus.parquet
      every case under a corpus folder
  onnx-arrow import --jobs 4 onnx/backend/test/data corpus.parquet
      decode cases in 4 processes; the store is the same
  onnx-arrow import --force --compression-level 19 my-tests/ my-tests.parquet
      replace an existing store, compressing harder
  onnx-arrow import --partition-by kind --part-cases 500 corpus/
      a dataset store: a folder per kind, parts of 500 cases
  onnx-arrow import --append my-tests/ corpus/
      add the cases of my-tests/ to the dataset store corpus/ as new parts

An existing OUT is kept (exit status 1) unless --force is given; the store is
written beside OUT and renamed into place when complete, so an error or Ctrl-C
leaves no partial store and keeps the previous one.  The parts of a dataset
store, appended or new, are moved into place only when all are written."""

_EXPORT_EPILOG: Final = """\
examples:
  onnx-arrow export corpus.parquet corpus/
      write the corpus folder tree, byte for byte, into a new folder
  onnx-arrow export --force corpus.parquet existing/
      write into a folder that already holds files (same paths are replaced)

Without --force, DEST must not exist or be empty (else exit status 1); the tree
is written beside DEST and renamed into place when complete."""

_VERIFY_EPILOG: Final = """\
examples:
  onnx-arrow verify
      the built-in default corpus: import, export, compare every file
  onnx-arrow verify onnx/backend/test/data
      the same for a corpus folder

Both the store and the exported tree go to temporary folders that are removed
afterwards.  Exit status 1 if any file is missing, extra or different."""

_GENERATE_EPILOG: Final = """\
examples:
  onnx-arrow generate node-suite/
      node/<case>/model.onnx and node/<case>/test_data_set_N/input_K.pb ...
  onnx-arrow generate --force existing/
      write into a folder that already holds files (same paths are replaced)

Without --force, DEST must not exist or be empty (else exit status 1)."""

_INFO_EPILOG: Final = """\
examples:
  onnx-arrow info corpus.parquet
      format version, creator, cases, files by role, tensors by dtype, size
  onnx-arrow info node/test_abs
      a case folder: declared inputs and outputs, each data set's values
  onnx-arrow info node/test_abs/test_data_set_0/input_0.pb
      name, dtype, dims, Arrow type and statistics of one value file, typed by
      the model.onnx of its case folder
  onnx-arrow info node/test_abs/model.onnx
      a model's inputs, outputs, opsets and operators
  onnx-arrow info input_0.pb --model model.onnx --input x
      the same, typed by what the model declares for its input x"""


_RUN_EPILOG: Final = """\
examples:
  onnx-arrow run corpus.parquet actual.parquet
      onnx's reference evaluator on every case
  onnx-arrow run --backend onnxruntime --case 'node/test_add*' corpus.parquet ort.parquet
      onnxruntime (pip install onnxruntime) on the Add cases

Exit status 0 when OUT is written, backend errors or not (compare reports them);
1 if STORE cannot be read, OUT exists (without --force) or onnxruntime is missing."""

_COMPARE_EPILOG: Final = """\
examples:
  onnx-arrow compare corpus.parquet
      run onnx's reference evaluator and compare
  onnx-arrow compare corpus.parquet --actual ort.parquet --out report.parquet
      compare with the outputs 'onnx-arrow run' wrote; a row per output to Parquet
  onnx-arrow compare --backend onnxruntime --rtol 1e-4 --case test_abs corpus.parquet

  onnx-arrow compare corpus.parquet --patterns skips.txt --xfail 'test_dft' --strict
      onnx BackendTest-style regexes: skip cases, expect failures (an xpass fails)
  onnx-arrow compare corpus.parquet --tolerance 'test_dft=1e-2,1e-4'
      the cases a regex finds with tolerances of their own

Tolerances: a case is compared with the first --tolerance (or --patterns) pattern that
finds it, else with its own as the store keeps them (onnx's TestCase, the case's
data.json), else with --rtol and --atol; each report row says which (its rtol, atol and
tolerance columns), and the element furthest beyond it (worst_index, worst_expected,
worst_actual).

Statuses: match, mismatch (beyond |a - e| <= atol + rtol * |e|; integers and strings
exactly), nan_mismatch, dtype_mismatch, shape_mismatch, error (the backend raised, or
an expected value was kept as bytes at import), skipped (a case without a model or
data sets, or a --skip pattern's), xfail (a failure of an --xfail case), xpass (an
--xfail case that passed).  Exit status 0 if every output matches (skipped, xfail and,
without --strict, xpass aside) and at least one was compared, 1 if not or a store
cannot be read, 2 bad usage."""

_DIFF_EPILOG: Final = """\
examples:
  onnx-arrow diff old-onnx/onnx/backend/test/data @default
      an older onnx wheel's test folders against the installed onnx's corpus
  onnx-arrow diff before.parquet after.parquet --max-ulp 4 --out diff.parquet
      float drift of up to 4 ULP counts as equivalent; a row per path to Parquet
  onnx-arrow diff old/ new/ --accept 'node/test_image_decoder*/*' --min-cases 1800

Each side is a store, a dataset store's folder, a corpus folder (imported first) or
@default, the built-in default corpus.  Statuses: identical, same-values,
float-drift, nan-changed, values-changed, shape-changed, dtype-changed,
type-changed, model-changed, file-changed, added, removed.  Exit status 0 when the
sides are equivalent (every path identical, same-values, drifting by at most
--max-ulp, or accepted, and both sides have --min-cases cases), 1 when not, 2 bad
usage."""

_BACKENDS: Final = ("reference", "onnxruntime")
#: Seconds a backend may spend on one data set unless --timeout says otherwise: far above
#: the slowest case of the default corpus (onnx.reference on light/light_inception_v2,
#: under a minute here), so that a model that never ends cannot hang a run.
DEFAULT_TIMEOUT: Final = 600.0


def _tolerance(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"{text} is not a finite number of 0 or more")
    return value


def _pattern_tolerance(text: str) -> tuple[str, float, float]:
    from onnx_arrow.compare import CompareError, parse_tolerance

    try:
        return parse_tolerance(text)
    except CompareError as exc:
        raise argparse.ArgumentTypeError(exc.message) from None


def _backend_options(parser: argparse.ArgumentParser) -> Any:
    """--backend (in a group --actual can join), --case and --timeout."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--backend",
        choices=_BACKENDS,
        default=None,
        help="reference (onnx.reference.ReferenceEvaluator, the default) or onnxruntime",
    )
    parser.add_argument(
        "--case",
        action="append",
        metavar="PATTERN",
        help="only the cases matching this glob (node/test_add*, or test_add* without the "
        "kind folder); repeat for more",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        metavar="SECONDS",
        help="record a data set the backend spends longer on as an error (default: "
        f"{DEFAULT_TIMEOUT:g}; 0: no limit)",
    )
    _jobs_option(parser, "run the cases in N processes of this machine (or N workers of --engine)")
    parser.add_argument(
        "--engine",
        choices=ENGINES,
        help="run on local processes, Dask (the current client, or a local cluster of "
        "--jobs workers) or Ray (the running one, or a local one of --jobs CPUs); the "
        "result is the same as one process's",
    )
    parser.add_argument(
        "--backend-logs",
        action="store_true",
        help="let the backend log as it does by default (onnxruntime's warnings and errors "
        "on stderr); without it only fatal messages reach stderr, and every failure is "
        "recorded with its message",
    )
    return group


class _UsageError(Exception):
    """Raised by argparse instead of exiting, so :func:`main` returns the code."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # argparse declares NoReturn
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise _UsageError(message)


def _subparser(
    commands: Any, name: str, help_text: str, description: str, epilog: str | None = None
) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = commands.add_parser(
        name,
        help=help_text,
        description=textwrap.fill(description, 79),  # the raw formatter keeps the epilog's lines
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.set_defaults(subparser=parser)
    return parser


def _whole_number(low: int, high: int | None = None, *, what: str = "") -> Callable[[str], int]:
    """An argparse type: a whole number from ``low`` to ``high`` (no upper bound if None)."""
    bounds = f"{low} or more" if high is None else f"{what}{low} to {high}"

    def parse(text: str) -> int:
        try:
            number = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if number < low or (high is not None and number > high):
            raise argparse.ArgumentTypeError(f"{number} is not {bounds}")
        return number

    return parse


_compression_level = _whole_number(1, 22, what="one of zstd's levels ")
_positive = _whole_number(1)

_UNITS: Final = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def _byte_size(text: str) -> int:
    """A size: bytes, or with a binary unit (``512M``, ``2G``, ``64MiB``)."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?\s*", text, re.IGNORECASE)
    if match is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size; give bytes, or 512M, 2G ...")
    value = int(float(match.group(1)) * _UNITS[match.group(2).upper()])
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a size of 1 byte or more")
    return value


_IMPORT_JOBS: Final = (
    "decode cases in N processes; the store is the same whatever N.  One writer thread "
    "compresses every row group, so more processes pay off only while decoding, not "
    "compression, is what waits: with 2 cores they do not (workers and writer share them)"
)
_EXPORT_JOBS: Final = (
    "write the store's row groups in N processes; pays off for large tensors with a core "
    "to spare, not for many small files (the node suite: slower, each file costs more in "
    "a worker than it saves)"
)


def _jobs_option(parser: argparse.ArgumentParser, what: str = _IMPORT_JOBS) -> None:
    parser.add_argument(
        "--jobs", type=_positive, default=1, metavar="N", help=f"{what} (default: %(default)s)"
    )


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG,
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {onnx_arrow.__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    imp = _subparser(
        commands,
        "import",
        "import a corpus (the built-in default, or a folder) into one Parquet store",
        "Import a corpus of ONNX test cases into one Parquet store: a row per file, value "
        "files decoded into typed columns (each value typed by its model's graph), every "
        "other file kept as bytes.  Without SRC, the built-in default corpus: the node test "
        "suite the installed onnx builds, plus the model tests in its wheel.  Prints a summary "
        "and the files kept as bytes instead of decoded.",
        _IMPORT_EPILOG,
    )
    imp.add_argument(
        "src", nargs="?", metavar="SRC", help="corpus folder (default: the built-in corpus)"
    )
    imp.add_argument("out", metavar="OUT", help="the Parquet store to write")
    imp.add_argument(
        "--keep-undecodable",
        action="store_true",
        help="keep a value file that does not decode as its declared type as bytes (with a "
        "warning) instead of stopping with an error",
    )
    imp.add_argument(
        "--compression-level",
        type=_compression_level,
        metavar="N",
        help=f"zstd level, 1 to 22, of every column (default: {WriteOptions().compression_level}, "
        f"and {WriteOptions().float_compression_level} for the float data columns)",
    )
    imp.add_argument(
        "--row-group-cases",
        type=_positive,
        metavar="N",
        help="close a row group at N cases too (default: by size only, about "
        f"{WriteOptions().row_group_bytes >> 20} MiB of files each): row groups are what "
        "engines hand their workers",
    )
    dataset = imp.add_argument_group(
        "dataset store",
        "OUT is a folder of Parquet part files (same schema and format as one file) when "
        "any of these is given",
    )
    dataset.add_argument(
        "--dataset", action="store_true", help="write OUT as a dataset store's folder"
    )
    dataset.add_argument(
        "--part-bytes",
        type=_byte_size,
        metavar="SIZE",
        help="close a part once its cases' files hold SIZE (512M, 2G ...)",
    )
    dataset.add_argument(
        "--part-cases", type=_positive, metavar="N", help="close a part at N cases"
    )
    dataset.add_argument(
        "--partition-by",
        choices=["kind"],
        help="parts in a folder per kind of case: OUT/node/part-00000.parquet ...",
    )
    dataset.add_argument(
        "--append",
        action="store_true",
        help="add the corpus to the dataset store OUT as new parts (the others are not "
        "rewritten; a case OUT holds already is refused)",
    )
    imp.add_argument("--force", action="store_true", help="replace OUT if it exists")
    _jobs_option(imp)

    exp = _subparser(
        commands,
        "export",
        "write a store back to the corpus folder tree, byte for byte",
        "Write every file of a corpus store into the folder DEST, byte for byte as it was "
        "imported, and print how many files and bytes were written.",
        _EXPORT_EPILOG,
    )
    exp.add_argument("store", metavar="STORE", help="a Parquet store written by import")
    exp.add_argument("dest", metavar="DEST", help="the folder to write")
    exp.add_argument("--force", action="store_true", help="write into a non-empty DEST")
    _jobs_option(exp, _EXPORT_JOBS)

    ver = _subparser(
        commands,
        "verify",
        "import, export and compare a corpus byte for byte",
        "Import a corpus (a folder, or without SRC the built-in default corpus) into a "
        "temporary store, export it into a temporary folder, and compare every file with the "
        "source, path and bytes.  Prints 'N files byte-identical', or the differences (the "
        f"first {MAX_LISTED}, then a count).",
        _VERIFY_EPILOG,
    )
    ver.add_argument(
        "src", nargs="?", metavar="SRC", help="corpus folder (default: the built-in corpus)"
    )
    ver.add_argument(
        "--part-cases",
        type=_positive,
        metavar="N",
        help="go through a dataset store: parts of N cases, a folder per kind",
    )
    _jobs_option(ver, "import and export in N processes (see import --help and export --help)")

    gen = _subparser(
        commands,
        "generate",
        "write the node test suite the installed onnx builds as a folder tree",
        "Build the node test suite of the installed onnx in memory and write it out in the "
        "classic layout (node/<case>/model.onnx, node/<case>/test_data_set_N/input_K.pb, "
        "output_K.pb), each file the bytes onnx's own test-data writer produces.",
        _GENERATE_EPILOG,
    )
    gen.add_argument("dest", metavar="DEST", help="the folder to write")
    gen.add_argument("--force", action="store_true", help="write into a non-empty DEST")

    info = _subparser(
        commands,
        "info",
        "describe a .pb file, a model, a corpus store or a case folder",
        "Describe PATH.  A .pb value file: its name, dtype, dims, Arrow type, element count "
        "and, for numbers, min/max/mean and NaN/Inf counts (external data is resolved "
        "relative to the file's folder); it is read as the type the model declares, the "
        "model of --model or, for test_data_set_N/input_K.pb or output_K.pb, of the case "
        "folder it sits in, and as a TensorProto otherwise (a sequence, map or optional "
        "needs its model).  A model (.onnx): its declared inputs and outputs, opsets and "
        "operators.  A corpus store (.parquet): its format version, creator, cases, files by "
        "role, tensors by dtype and size.  A case folder (holding model.onnx): the model's "
        "declared inputs and outputs, and the dtype and shape of every value of every data "
        "set.",
        _INFO_EPILOG,
    )
    info.add_argument(
        "path", metavar="PATH", help="a .pb file, a store (.parquet) or a case folder"
    )
    info.add_argument(
        "--model",
        metavar="MODEL.onnx",
        help="type a .pb file by what this model declares (needs --input or --output)",
    )
    which = info.add_mutually_exclusive_group()
    which.add_argument("--input", metavar="K", help="graph input of --model: its name or its index")
    which.add_argument(
        "--output", metavar="K", help="graph output of --model: its name or its index"
    )

    run = _subparser(
        commands,
        "run",
        "run a backend over a store and write its outputs as a store",
        "Run a backend (onnx's reference evaluator, or onnxruntime) on every data set of every "
        "case of STORE and write a store OUT of the same models and inputs with the backend's "
        "outputs; compare the two with 'onnx-arrow compare STORE --actual OUT'.  A backend "
        "error is kept in OUT (output_K.error.txt) and counted, never fatal.",
        _RUN_EPILOG,
    )
    run.add_argument("store", metavar="STORE", help="a Parquet store written by import")
    run.add_argument("out", metavar="OUT", help="the Parquet store of actual outputs to write")
    _backend_options(run)
    run.add_argument("--force", action="store_true", help="replace OUT if it exists")

    cmp = _subparser(
        commands,
        "compare",
        "compare a backend's outputs with a store's expected outputs",
        "Run a backend over STORE (or take the outputs of a store written by 'onnx-arrow "
        "run' with --actual) and compare every output with the expected one, as onnx's "
        "backend test runner does.  Prints the outputs by status, then the 20 op types with "
        "the most outputs that do not match.",
        _COMPARE_EPILOG,
    )
    cmp.add_argument("store", metavar="STORE", help="a Parquet store written by import")
    which_actual = _backend_options(cmp)
    which_actual.add_argument(
        "--actual", metavar="ACTUAL", help="a store of actual outputs written by 'onnx-arrow run'"
    )
    cmp.add_argument(
        "--skip",
        action="append",
        default=[],
        metavar="REGEX",
        help="do not run the cases it finds (re.search in node/test_x, test_x and "
        "test_x_cpu, as onnx's BackendTest.exclude); repeat for more",
    )
    cmp.add_argument(
        "--xfail",
        action="append",
        default=[],
        metavar="REGEX",
        help="cases known to fail: their failures are xfail, a pass xpass; repeat for more",
    )
    cmp.add_argument(
        "--tolerance",
        action="append",
        default=[],
        type=_pattern_tolerance,
        metavar="REGEX=RTOL,ATOL",
        help="compare the cases it finds with these tolerances, over their own (as --skip "
        "finds them; the first that finds a case applies); repeat for more",
    )
    cmp.add_argument(
        "--patterns",
        metavar="FILE",
        help="more patterns from a file, after those given: lines 'skip REGEX', 'xfail "
        "REGEX' or 'tolerance REGEX=RTOL,ATOL' (# comments), or JSON {\"skip\": [...], "
        '"xfail": [...], "tolerance": {REGEX: [RTOL, ATOL]}}',
    )
    cmp.add_argument(
        "--keep-actual",
        choices=("failed", "all", "none"),
        default="failed",
        help="whose actual values the report keeps, as .pb bytes in its actual column: of "
        "the outputs that differ (default), all or none",
    )
    cmp.add_argument(
        "--strict", action="store_true", help="an xpass fails the run, as pytest's strict xfail"
    )
    cmp.add_argument(
        "--all-cases",
        action="store_true",
        help="with --actual: an expected case ACTUAL does not hold is an error (default: left "
        "out, and counted)",
    )
    cmp.add_argument(
        "--rtol",
        type=_tolerance,
        default=1e-3,
        help="relative tolerance of a case that states none of its own (onnx's TestCase, "
        "data.json) and that no --tolerance finds (default: %(default)s)",
    )
    cmp.add_argument(
        "--atol",
        type=_tolerance,
        default=1e-7,
        help="absolute tolerance, like --rtol (default: %(default)s)",
    )
    cmp.add_argument(
        "--out", metavar="REPORT.parquet", help="write the row per output to this Parquet file"
    )
    cmp.add_argument("--force", action="store_true", help="replace REPORT.parquet if it exists")

    dif = _subparser(
        commands,
        "diff",
        "what changed between two corpora, file by file, with ULP distances",
        "Compare two corpora path by path and print how many paths have each status, the "
        "changes by kind of case, and the largest float drifts; values are compared decoded, "
        "floats by their ULP distance (on the codes, for every floating dtype), models by "
        "what changed in them.",
        _DIFF_EPILOG,
    )
    dif.add_argument("old", metavar="OLD", help="a store, dataset store, corpus folder or @default")
    dif.add_argument("new", metavar="NEW", help="the same, for the new side")
    dif.add_argument(
        "--max-ulp",
        type=_whole_number(0),
        default=0,
        metavar="N",
        help="a float drift of at most N ULP counts as equivalent (default: %(default)s)",
    )
    dif.add_argument(
        "--accept",
        action="append",
        default=[],
        metavar="PATTERN",
        help="paths matching this glob may differ (decoded images ...); repeat for more",
    )
    dif.add_argument(
        "--min-cases",
        type=_whole_number(0),
        default=1,
        metavar="N",
        help="fewer cases on either side is not equivalent (default: %(default)s)",
    )
    dif.add_argument("--out", metavar="REPORT.parquet", help="write the row per path to Parquet")
    dif.add_argument("--force", action="store_true", help="replace REPORT.parquet if it exists")

    _subparser(
        commands,
        "example",
        "convert a built-in example to Arrow and back, and print it",
        "Convert six built-in tensors (float32, int64, bfloat16, float8e4m3fn, bool, and "
        "strings that are not valid UTF-8) to Arrow, print each, convert them back and check "
        "that every message is byte-identical.  Exits 1 if one is not.",
        "example:\n  onnx-arrow example | head",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status instead of exiting."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except _UsageError:
        return EXIT_USAGE
    except SystemExit as exc:  # --help and --version
        return exc.code if isinstance(exc.code, int) else EXIT_OK
    out = sys.stdout
    try:
        from onnx_arrow._commands import COMMANDS  # a Ctrl-C here still exits at once

        restore_interrupt()  # from here on a Ctrl-C unwinds, cleaning up (below)
        return COMMANDS[args.command](args, out)
    except _UsageError:
        return EXIT_USAGE
    except OnnxArrowError as exc:  # a command's own errors too: one line, exit status 1
        print_error(str(exc))
        return EXIT_DATA_ERROR
    except MemoryError:
        # a legal but huge input (a sparse file) on a machine without the memory for it
        print_error("out of memory; free memory, or leave the largest files out")
        return EXIT_DATA_ERROR
    except KeyboardInterrupt:
        # Outputs are written beside their target and renamed when complete, and
        # temporary folders are removed on the way out: nothing half-done is left.
        print(f"{PROG}: interrupted", file=sys.stderr)
        _stop_children()
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (``onnx-arrow example | head``): stop quietly.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    except OSError as exc:  # a folder that cannot be created, a full disk ...
        where = f"{exc.filename}: " if exc.filename else ""
        print_error(f"{where}{exc.strerror or exc}")
        return EXIT_DATA_ERROR


def _stop_children() -> None:
    """End worker processes a pool stopped by Ctrl-C left waiting for work (a Ctrl-C just
    after a pool forks can leave them so), which Python would otherwise wait for at exit;
    by now every pool has stopped writing, so nothing they hold is half-written."""
    import multiprocessing

    for child in multiprocessing.active_children():
        child.terminate()
    for child in multiprocessing.active_children():
        child.join(5)


def print_error(message: str) -> None:
    """``onnx-arrow: error: message`` on one line of stderr."""
    print(f"{PROG}: error: {' '.join(message.split())}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
