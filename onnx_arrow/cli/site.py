"""``onnx-arrow site``: a results store as a static site.  Its arguments here; its work in
:mod:`onnx_arrow.cli.work.site`, imported only to run it.
"""

from __future__ import annotations

from typing import Any, Final

from onnx_arrow.cli._shared import Command, add_command, offline_option

_EPILOG: Final = """\
examples:
  onnx-arrow site results/ site/
      the site of the results store results/ in site/ (open site/index.html)
  onnx-arrow site results/ site/ --store corpus.parquet --triage triage.toml
      with the coverage page, each case's files as a zip, and known failures

The site is plain HTML, CSS and JSON: it works from file:// and any static host, and
loads nothing from anywhere.  Rebuilding replaces the site in one swap (built beside
it, then renamed); OUT must be new or a site this command made.  A triage file is
TOML: format = 1, then an [[entry]] per known failure with runtime, cases (globs),
url (http or https) and note.  Exit status 0; 1 if the results store, the corpus
store or the triage file does not read (the file named); 2 bad usage."""


def register(commands: Any) -> None:
    """Add ``site`` and its arguments."""
    cmd = add_command(
        commands,
        "site",
        "a results store as a static site: the runtime x onnx release matrix and more",
        "Build a static site of the results store RESULTS in the folder OUT: the matrix "
        "of runtime versions x onnx releases with the Interop score, a page per runtime "
        "(the failures only it has), operator x element type x runtime with the largest "
        "ULP, per operator coverage, and a page per case with every run's verdict.",
        _EPILOG,
    )
    cmd.add_argument("results", metavar="RESULTS", help="the results store (a folder)")
    cmd.add_argument("out", metavar="OUT", help="the site's folder (new, or a site made before)")
    cmd.add_argument(
        "--store",
        metavar="STORE",
        help="the corpus store the runs ran over (a store, or @onnx==VERSION): adds the "
        "coverage page and each case's files as a zip",
    )
    cmd.add_argument(
        "--triage",
        metavar="FILE",
        help="a triage file (TOML): known failures' tracker URLs and notes, per runtime",
    )
    offline_option(cmd)


def load() -> Command:
    """The command's work, imported now (the results store and pandas with it)."""
    from onnx_arrow.cli.work.site import run

    return run
