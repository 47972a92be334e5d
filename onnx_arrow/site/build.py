"""A results site built: a results store read and checked, its facts computed, the
triage file and the corpus store read, every page written into a new folder that then
replaces OUT (``onnx_arrow.site.publish``)."""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from onnx_arrow import results
from onnx_arrow.compare.report import store_digest
from onnx_arrow.corpus.store import Store, as_store
from onnx_arrow.coverage import coverage
from onnx_arrow.site import pages
from onnx_arrow.site.facts import Facts, facts
from onnx_arrow.site.publish import building, case_zip, check_target, safe_name, write
from onnx_arrow.site.triage import TriageEntry, read_triage

__all__ = ["SITE_FORMAT", "Built", "build_site", "site_data"]

#: The format of the site's ``site.json`` (its ``format``).
SITE_FORMAT: Final = 1


@dataclass(frozen=True)
class Built:
    """What :func:`~onnx_arrow.site.build_site` wrote: the site's folder, its files and
    their bytes, the pages, the runs and cases it shows and the cases it made a zip of."""

    out: Path
    files: int
    nbytes: int
    pages: int
    runs: int
    cases: int
    zips: int
    seconds: float


def build_site(
    results_path: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    store: Store | str | os.PathLike[str] | None = None,
    triage: str | os.PathLike[str] | None = None,
) -> Built:
    """Build the static site of the results store ``results_path`` in the folder ``out``
    (replacing a site built there before, in one swap).

    Parameters
    ----------
    results_path
        A results store (:func:`onnx_arrow.results.read` reads and checks it first).
    out
        The site's folder: new, or a site this function built (anything else is refused).
    store
        The corpus store the runs ran over: adds the coverage page and, on each case's
        page, the case's files as a zip.
    triage
        A triage file (``onnx_arrow.site.triage``): known failures shown beside the
        failures they cover.

    Raises
    ------
    ResultsError
        If the results store does not read (located at the part).
    SiteError
        If the triage file is not of its format, ``out`` may not be replaced; nothing is
        written then.
    CorpusError
        If the corpus store does not read.
    """
    started = time.perf_counter()
    check_target(Path(out))
    entries = [] if triage is None else read_triage(triage)
    table = results.read(results_path)
    found = facts(table, results.runs(table), results.provenances(results_path))
    corpus = None if store is None else as_store(store, where="build_site(store)")
    covered = None if corpus is None else coverage(corpus)
    with building(out) as root:
        counted = _write_pages(root, found, entries, corpus, covered)
    files, nbytes = _sizes(Path(out))
    return Built(
        Path(out), files, nbytes, counted["pages"], len(found.runs), len(found.cases),
        counted["zips"], time.perf_counter() - started,
    )  # fmt: skip


def _write_pages(
    root: Path, found: Facts, entries: list[TriageEntry], corpus: Store | None, covered: Any
) -> dict[str, int]:
    zips: dict[str, str] = {}
    note = "No corpus store was given (--store STORE): the case's files are not in the site."
    if corpus is not None:
        in_store = set(corpus.cases())
        digest = store_digest(corpus)
        onnx = corpus.metadata.get("onnx_version")
        ran = {run["corpus_digest"] for run in found.runs}
        note = (
            f"From the corpus store {corpus.path.name} (onnx {onnx}, digest {str(digest)[:12]})"
            + ("." if digest in ran else ", which is not the corpus any run here was of: "
               "check that it is the one you ran.")
        )  # fmt: skip
        for case in found.cases:
            if case not in in_store:
                continue
            name = "cases/" + safe_name(case, ".zip")
            files = [(f.path, f.data) for f in corpus.case_files(case)]
            write(root, name, case_zip(files, where=f"{corpus.path}: {case}"))
            zips[case] = name.split("/", 1)[1]
    links = pages.Links(
        case=lambda case: "cases/" + safe_name(case, ".html"),
        runtime=lambda name: "runtimes/" + safe_name(name, ".html"),
        zips=zips,
        coverage=covered is not None,
    )
    up = pages.Links(
        case=lambda case: "../cases/" + safe_name(case, ".html"),
        runtime=lambda name: "../runtimes/" + safe_name(name, ".html"),
        zips=zips,
        coverage=covered is not None,
    )
    n = 0
    write(root, "style.css", pages.STYLE)
    write(root, "index.html", pages.index_page(found, links, triage=bool(entries)))
    write(root, "operators.html", pages.operators_page(found, links))
    write(root, "cases.html", pages.cases_page(found, links))
    n += 3
    for name in sorted({line.runtime for line in found.lines}):
        write(root, links.runtime(name), pages.runtime_page(name, found, up, entries))
        n += 1
    for case in found.cases:
        case_note = (
            note
            if case in zips or corpus is None
            else (f"{case} is not in the corpus store {corpus.path.name}.")
        )
        write(root, links.case(case), pages.case_page(case, found, up, entries, case_note))
        n += 1
    if covered is not None:
        operators = [o for o in covered.operators.to_pylist() if o["in_spec"] or o["case_count"]]
        write(
            root, "coverage.html", pages.coverage_page(found, operators, covered.made_from, links)
        )
        n += 1
    write(root, "site.json", _json(site_data(found, entries)))
    return {"pages": n, "zips": len(zips)}


def site_data(found: Facts, entries: list[TriageEntry]) -> dict[str, Any]:
    """What ``site.json`` holds: the cells with their counts, the Interop scores and
    their trend, the failures only one runtime has, the triage entries, and the
    scoreboard of the cells' runs as ``onnx-arrow report --format json`` gives it."""
    return {
        "format": SITE_FORMAT,
        "releases": found.releases,
        "cells": [
            {
                "label": c.label,
                "runtime": c.line.runtime,
                "runtime_version": c.line.version,
                "release": c.release,
                "run_id": c.run_id,
                "runs": c.runs,
                **c.counts,
            }
            for c in found.cells
        ],
        "interop": {
            release: {
                **value,
                "trend": {k: [list(p) for p in v] for k, v in value["trend"].items()},
            }
            for release, value in found.interop.items()
        },
        "only_failures": {
            name: {release: [list(p) for p in cases] for release, cases in per.items()}
            for name, per in found.only_failures.items()
        },
        "triage": [
            {"runtime": t.runtime, "cases": list(t.patterns), "url": t.url, "note": t.note}
            for t in entries
        ],
        "scoreboard": json.loads(found.board.render("json")) if found.cells else None,
    }


def _json(data: Any) -> str:
    """``data`` as JSON whose strings hold no ``<``, ``>`` or ``&`` (written as ``\\u``
    escapes, the same JSON): the file stays inert wherever it is pasted into HTML."""
    text = json.dumps(data, indent=1, ensure_ascii=False)
    for char in "<>&":
        text = text.replace(char, f"\\u{ord(char):04x}")
    return text + "\n"


def _sizes(root: Path) -> tuple[int, int]:
    files = nbytes = 0
    for dirpath, _, names in os.walk(root):
        for name in names:
            files += 1
            nbytes += os.path.getsize(os.path.join(dirpath, name))
    return files, nbytes
