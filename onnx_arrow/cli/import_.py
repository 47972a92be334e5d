"""``onnx-arrow import``: a corpus (the built-in default, or a folder) into one Parquet
store or a dataset store.  Its arguments here; its work in :mod:`onnx_arrow.cli.work.import_`,
imported only to run it.
"""

from __future__ import annotations

import argparse
import re
from typing import Any, Final

from onnx_arrow.cli._shared import (
    RELEASES_HELP,
    Command,
    add_command,
    jobs_option,
    offline_option,
    positive,
    whole_number,
)
from onnx_arrow.corpus.options import FLOAT_ENCODINGS, WriteOptions

_EPILOG: Final = """\
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
  onnx-arrow import --case 'test_add*' --case 'real/*' onnx/backend/test/data some.parquet
      only the cases the patterns find
  onnx-arrow import @onnx==1.14.1 onnx-1.14.1.parquet
      onnx 1.14.1's test data, from its wheel on the package index
  onnx-arrow import --append @onnx==1.21.0 releases/
  onnx-arrow import --append @onnx==1.22.0 releases/
      a dataset store of releases: releases/onnx_version=1.22.0/part-00000.parquet ...
      (--partition-by onnx_version starts one too)

An existing OUT is kept (exit status 1) unless --force is given; the store is
written beside OUT and renamed into place when complete, so an error or Ctrl-C
leaves no partial store and keeps the previous one.  The parts of a dataset
store, appended or new, are moved into place only when all are written."""

_JOBS: Final = (
    "decode cases in N processes; the store is the same whatever N.  Row groups are "
    "compressed on threads of their own (2, or N if more, up to the cores) while the next "
    "are decoded, so more processes pay off only where decoding, not compression, is what "
    "waits: with 2 cores they take about as long as one (workers and threads share them)"
)

_compression_level = whole_number(1, 22, what="one of zstd's levels ")

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


def register(commands: Any) -> None:
    """Add ``import`` and its arguments."""
    imp = add_command(
        commands,
        "import",
        "import a corpus (the built-in default, or a folder) into one Parquet store",
        "Import a corpus of ONNX test cases into one Parquet store: a row per file, value "
        "files decoded into typed columns (each value typed by its model's graph), every "
        "other file kept as bytes.  Without SRC, the built-in default corpus: the node test "
        "suite the installed onnx builds, plus the model tests in its wheel.  Prints a summary "
        "and the files kept as bytes instead of decoded.",
        _EPILOG,
    )
    imp.add_argument(
        "src",
        nargs="?",
        metavar="SRC",
        help="corpus folder, or @onnx, @onnx==VERSION (default: the built-in corpus, "
        "@onnx).  " + RELEASES_HELP,
    )
    imp.add_argument("out", metavar="OUT", help="the Parquet store to write")
    imp.add_argument(
        "--case",
        action="append",
        metavar="PATTERN",
        help="only the cases matching this glob (node/test_add*, or test_add* without the "
        "kind folder, as compare --case); repeat for more.  A pattern that finds no case "
        "is an error",
    )
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
        f"and {WriteOptions().float_compression_level} for the float data columns written "
        "byte stream split)",
    )
    imp.add_argument(
        "--float-encoding",
        choices=FLOAT_ENCODINGS,
        default=WriteOptions().float_encoding,
        help="the encoding of the float data columns: auto (the default) chooses for each "
        "store file whichever of BYTE_STREAM_SPLIT and PLAIN compresses its first 8 MiB of "
        "float data smaller; BYTE_STREAM_SPLIT alone is faster on activations (ReLU outputs) "
        "and makes their store larger",
    )
    imp.add_argument(
        "--no-dedup",
        action="store_true",
        help="store every file whole, even one whose bytes repeat an earlier file's (by "
        "default such a file is stored once: its rows name that file in copy_of; see "
        "docs/store-format.md, Repeated files)",
    )
    imp.add_argument(
        "--row-group-cases",
        type=positive,
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
    dataset.add_argument("--part-cases", type=positive, metavar="N", help="close a part at N cases")
    dataset.add_argument(
        "--partition-by",
        choices=["kind", "onnx_version"],
        help="parts in a folder per kind of case: OUT/node/part-00000.parquet ...; or, for "
        "@onnx==VERSION, a dataset store of releases, a folder per version: "
        "OUT/onnx_version=1.14.1/part-00000.parquet (engines read the onnx_version column "
        "from the folder names; each folder is a store)",
    )
    dataset.add_argument(
        "--append",
        action="store_true",
        help="add the corpus to the dataset store OUT as new parts, laid out as OUT's are "
        "(in a folder per kind, or not); the others are not rewritten, and a case OUT holds "
        "already is refused.  A release, @onnx==VERSION, goes into a folder of its own, "
        "OUT/onnx_version=VERSION (OUT is made if missing), and one OUT holds is refused",
    )
    imp.add_argument("--force", action="store_true", help="replace OUT if it exists")
    offline_option(imp)
    jobs_option(imp, _JOBS)


def load() -> Command:
    """The command's work, imported now (onnx and the store with it)."""
    from onnx_arrow.cli.work.import_ import run

    return run
