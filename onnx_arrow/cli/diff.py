"""``onnx-arrow diff``: what changed between two corpora, file by file, with ULP
distances.  Its arguments here; its work in :mod:`onnx_arrow.cli.work.diff`, imported
only to run it.
"""

from __future__ import annotations

from typing import Any, Final

from onnx_arrow.cli._shared import RELEASES_HELP, Command, add_command, offline_option, whole_number

_EPILOG: Final = """\
examples:
  onnx-arrow diff old-onnx/onnx/backend/test/data @default
      an older onnx wheel's test folders against the installed onnx's corpus
  onnx-arrow diff before.parquet after.parquet --max-ulp 4 --out diff.parquet
      float drift of up to 4 ULP counts as equivalent; a row per path to Parquet
  onnx-arrow diff old/ new/ --accept 'node/test_image_decoder*/*' --min-cases 1800
  onnx-arrow diff @onnx==1.21.0 @onnx==1.22.0
      two releases' test data, fetched, imported and cached on first use
  onnx-arrow diff @onnx==1.22.0 @onnx --max-ulp 4 --min-cases 1500
      the frozen 1.22.0 suite against the installed onnx's regenerated one

Each side is a store, a dataset store's folder, a corpus folder (imported first),
@default or @onnx, the built-in default corpus, or a release, @onnx==VERSION.
Statuses: identical, same-values, float-drift, nan-changed, values-changed,
shape-changed, dtype-changed, type-changed, model-changed, file-changed, added,
removed.  Exit status 0 when the sides are equivalent (every path identical,
same-values, drifting by at most --max-ulp, or accepted, and both sides have
--min-cases cases), 1 when not, 2 bad usage."""


def register(commands: Any) -> None:
    """Add ``diff`` and its arguments."""
    dif = add_command(
        commands,
        "diff",
        "what changed between two corpora, file by file, with ULP distances",
        "Compare two corpora path by path and print how many paths have each status, the "
        "changes by kind of case, and the largest float drifts; values are compared decoded, "
        "floats by their ULP distance (on the codes, for every floating dtype), models by "
        "what changed in them.",
        _EPILOG,
    )
    dif.add_argument(
        "old",
        metavar="OLD",
        help="a store, dataset store, corpus folder, @default or a release.  " + RELEASES_HELP,
    )
    dif.add_argument("new", metavar="NEW", help="the same, for the new side")
    dif.add_argument(
        "--max-ulp",
        type=whole_number(0),
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
        type=whole_number(0),
        default=1,
        metavar="N",
        help="fewer cases on either side is not equivalent (default: %(default)s)",
    )
    dif.add_argument("--out", metavar="REPORT.parquet", help="write the row per path to Parquet")
    dif.add_argument("--force", action="store_true", help="replace REPORT.parquet if it exists")
    offline_option(dif)


def load() -> Command:
    """The command's work, imported now (onnx, the store and pandas with it)."""
    from onnx_arrow.cli.work.diff import run

    return run
