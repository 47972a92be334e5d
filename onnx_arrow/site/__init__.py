"""A static site of a results store: plain HTML, CSS and JSON files that work from
``file://`` and any static host, with nothing fetched from anywhere.

:func:`~onnx_arrow.site.build_site` (``onnx-arrow site RESULTS/ OUT/``) writes:

* ``index.html``: the matrix of runtime versions x onnx releases, each cell the cases of
  its latest run per verdict; the Interop score of each release (the share of its cases
  passing on every runtime) and its trend over runtime versions;
* ``runtimes/NAME.html``: per runtime, its runs and the failures only it has, beside the
  triage entries that cover them;
* ``operators.html``: operator x element type x cell, the cases per verdict and the
  largest ULP distance, and the errors by cause (the scoreboard of ``onnx-arrow report``);
* ``coverage.html`` (with a corpus store): per operator of the specification, its cases
  and how many pass on each runtime;
* ``cases.html`` and ``cases/NAME.html``: per case, every run's verdict of each output,
  the worst element, the error's line, the tolerance and where it came from; with a
  corpus store, ``cases/NAME.zip``, the case's folder to reproduce it;
* ``site.json``: the numbers of the pages, for machines;
* ``style.css``.

The rules of the numbers are in ``onnx_arrow.site.facts``, the triage file's format in
``onnx_arrow.site.triage``, how the site replaces the one before in
``onnx_arrow.site.publish``.
"""

from __future__ import annotations

from onnx_arrow.site.build import SITE_FORMAT, Built, build_site, site_data
from onnx_arrow.site.triage import TRIAGE_FORMAT, TriageEntry, parse_triage, read_triage

__all__ = [
    "SITE_FORMAT",
    "TRIAGE_FORMAT",
    "Built",
    "TriageEntry",
    "build_site",
    "parse_triage",
    "read_triage",
    "site_data",
]
