"""The pages of a results site as HTML text: the index (the matrix, the Interop score and
its trend), a page per runtime (the failures only it has), the operators (operator x
element type x cell), the coverage, the list of cases and a page per case.

Every string that comes from a report, a store or a triage file goes through :func:`e`
(``html.escape`` with ``quote=True``, control characters left out), in text and in
attributes alike; the only URLs drawn from data are a triage file's, which
:mod:`onnx_arrow.site.triage` admits as http or https only, escaped here too.  Links
between pages use the names :mod:`onnx_arrow.site.publish` makes (a digest), never a name
from data.  No page loads anything: the style sheet is the site's own file, there is no
script.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from onnx_arrow.compare.failures import cause_line
from onnx_arrow.compare.side_by_side import VERDICTS
from onnx_arrow.site.facts import VERDICT_OF, WORST_FIRST, Facts
from onnx_arrow.site.triage import TriageEntry, matching
from onnx_arrow.text import printable

__all__ = ["STYLE", "Links", "case_page", "cases_page", "cell_text", "coverage_page", "e",
           "index_page", "operators_page", "runtime_page"]  # fmt: skip

#: The style sheet every page links (``style.css``).
STYLE: Final = """\
body { font: 14px/1.45 system-ui, sans-serif; margin: 0; color: #1a1a1a; background: #fff; }
header { background: #24292f; color: #fff; padding: 0.6em 1.5em; }
header a { color: #fff; margin-right: 1.2em; text-decoration: none; }
header a:hover { text-decoration: underline; }
main { padding: 0.5em 1.5em 2em; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.6em; }
table { border-collapse: collapse; margin: 0.5em 0 1.2em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
thead th { background: #f4f4f4; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
.pass { background: #dff3df; } .xfail { background: #ececec; }
.fail { background: #fbe0c4; } .error { background: #f6c9c9; }
.skip { background: #f8f8f8; color: #777; } .none { background: #fff; color: #999; }
.bar { display: inline-block; height: 0.8em; background: #4c9a4c; vertical-align: middle; }
.muted { color: #666; } code, pre { font-family: ui-monospace, monospace; font-size: 0.95em; }
pre { white-space: pre-wrap; word-break: break-all; background: #f6f8fa; padding: 0.5em; }
.triage { background: #fff8c5; padding: 0 0.3em; }
"""


def e(value: Any) -> str:
    """``value`` as HTML text on one line, also safe inside a quoted attribute."""
    return html.escape(printable(str(value)), quote=True)


def block(value: Any) -> str:
    """``value`` as HTML text of a ``<pre>``: its lines kept, other controls left out."""
    text = re.sub("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", "", str(value))
    return html.escape(text, quote=True)


@dataclass(frozen=True)
class Links:
    """The site's file names as a page links them: a case's page and a runtime's (from
    the page's folder), the case zips by case (from ``cases/``), and whether there is a
    coverage page; made by :mod:`onnx_arrow.site.build` from
    :func:`~onnx_arrow.site.publish.safe_name`."""

    case: Callable[[str], str]
    runtime: Callable[[str], str]
    zips: Mapping[str, str]
    coverage: bool


def _page(title: str, body: Iterable[str], *, depth: int, links: Links) -> str:
    up = "../" * depth
    nav = [("index.html", "Matrix"), ("operators.html", "Operators"), ("cases.html", "Cases")]
    if links.coverage:
        nav.append(("coverage.html", "Coverage"))
    anchors = "".join(f'<a href="{up}{href}">{text}</a>' for href, text in nav)
    return (
        "\n".join(
            [
                "<!DOCTYPE html>",
                '<html lang="en"><head><meta charset="utf-8">',
                '<meta name="viewport" content="width=device-width, initial-scale=1">',
                f"<title>{e(title)}</title>",
                f'<link rel="stylesheet" href="{up}style.css"></head><body>',
                f"<header><strong>onnx-arrow results</strong> &nbsp; {anchors}</header>",
                '<main class="onnx-arrow">',
                *body,
                "</main></body></html>",
            ]
        )
        + "\n"
    )


def cell_text(counts: Mapping[str, Any], max_ulp: Any = None) -> str:
    """``3 pass, 1 fail; max 2 ULP``: the cases per verdict (those it has), as the
    scoreboard of ``onnx-arrow report`` says them."""
    text = ", ".join(f"{int(counts[v])} {v}" for v in VERDICTS if int(counts[v]))
    if max_ulp is not None and not math.isnan(max_ulp):
        text += f"; max {int(max_ulp)} ULP"
    return text


def _worst(counts: Mapping[str, Any]) -> str:
    return next((v for v in WORST_FIRST if int(counts[v])), "none")


def _percent(score: float | None) -> str:
    return "-" if score is None else f"{100 * score:.1f}%"


def index_page(facts: Facts, links: Links, *, triage: bool) -> str:
    """The matrix of lines x releases, the Interop score per release and its trend."""
    body = ["<h1>Results: runtimes x onnx releases</h1>"]
    body.append(
        f"<p>{len(facts.runs)} runs of {len(facts.lines)} runtime versions over "
        f"{len(facts.releases)} onnx releases; {len(facts.cases)} cases."
        + (" Known failures from the triage file are marked." if triage else "")
        + "</p>"
    )
    if not facts.cells:
        body.append("<p>The results store holds no run.</p>")
        return _page("Results", body, depth=0, links=links)
    by = {(c.line.key, c.release): c for c in facts.cells}
    head = "".join(f"<th>onnx {e(r)}</th>" for r in facts.releases)
    body += [
        "<h2>Cases per verdict</h2>",
        "<p class='muted'>Each cell counts the cases of the latest run of a runtime version "
        "over a release's corpus, each by the worst verdict of its outputs.</p>",
        f"<table class='matrix'><thead><tr><th>runtime</th>{head}</tr></thead><tbody>",
    ]
    for line in facts.lines:
        tds = []
        for release in facts.releases:
            cell = by.get((line.key, release))
            if cell is None:
                tds.append("<td class='none'>not run</td>")
                continue
            more = f" <span class='muted'>({cell.runs} runs)</span>" if cell.runs > 1 else ""
            tds.append(
                f"<td class='{_worst(cell.counts)}' data-cell='{e(cell.label)}'>"
                f"{e(cell_text(cell.counts))}{more}</td>"
            )
        href = links.runtime(line.runtime)
        body.append(f"<tr><th><a href='{href}'>{e(line.label)}</a></th>{''.join(tds)}</tr>")
    body.append("</tbody></table>")
    body += _interop(facts)
    body.append(
        "<p class='muted'>The numbers of these pages, for machines: "
        "<a href='site.json'>site.json</a>.</p>"
    )
    return _page("Results", body, depth=0, links=links)


def _interop(facts: Facts) -> list[str]:
    out = [
        "<h2>Interop score</h2>",
        "<p class='muted'>The share of a release's cases that pass on every runtime of the "
        "release, each at its latest version there.</p>",
        "<table class='interop'><thead><tr><th>release</th><th>score</th><th>passing</th>"
        "<th>cases</th><th>runtimes</th></tr></thead><tbody>",
    ]
    for release in facts.releases:
        found = facts.interop[release]
        names = ", ".join(e(v) for v in found["runtimes"].values())
        width = 0 if found["score"] is None else round(120 * found["score"])
        out.append(
            f"<tr><th>onnx {e(release)}</th><td class='n' data-score='{e(release)}'>"
            f"{_percent(found['score'])} <span class='bar' style='width:{width}px'></span></td>"
            f"<td class='n'>{found['passing']}</td><td class='n'>{found['cases']}</td>"
            f"<td>{names}</td></tr>"
        )
    out += ["</tbody></table>", "<h2>Interop score over runtime versions</h2>"]
    out.append(
        "<p class='muted'>Per runtime, the score of the release with each of its versions in "
        "place of its latest, the other runtimes at their latest.</p>"
    )
    out.append(
        "<table class='trend'><thead><tr><th>release</th><th>runtime</th><th>version: score"
        "</th></tr></thead><tbody>"
    )
    for release in facts.releases:
        for name, points in facts.interop[release]["trend"].items():
            steps = " → ".join(f"{e(v or '(no version)')}: {_percent(s)}" for v, s in points)
            out.append(f"<tr><th>onnx {e(release)}</th><td>{e(name)}</td><td>{steps}</td></tr>")
    out.append("</tbody></table>")
    return out


def _triage_notes(entries: Sequence[TriageEntry], runtime: str | None, case: str) -> str:
    notes = []
    for entry in matching(list(entries), runtime, case):
        note = e(entry.note) if entry.note else ""
        link = f'<a href="{e(entry.url)}" rel="noreferrer">{e(entry.url)}</a>' if entry.url else ""
        notes.append(f"<span class='triage'>{' '.join(p for p in (link, note) if p)}</span>")
    return " ".join(notes)


def runtime_page(name: str, facts: Facts, links: Links, triage: Sequence[TriageEntry]) -> str:
    """A runtime's versions and runs, and per release the failures only it has, each
    with the triage entries that cover it."""
    body = [f"<h1>{e(name)}</h1>", "<h2>Runs</h2>"]
    body.append(
        "<p class='muted'>Outputs per verdict, as <code>onnx-arrow results</code> counts them "
        "(fail: mismatches and xfail; error: the runtime raised).</p>"
        "<table class='runs'><thead><tr><th>version</th><th>onnx release</th><th>date</th>"
        "<th>run</th><th>backend or runner</th><th>outputs</th><th>pass</th><th>fail</th>"
        "<th>error</th><th>skipped</th></tr></thead><tbody>"
    )
    for run in facts.runs:
        if run["line"].runtime != name:
            continue
        runs = run["runner_command"] or run["backend"] or ""
        body.append(
            f"<tr><td>{e(run['line'].label)}</td><td>{e(run['release'])}</td>"
            f"<td>{e(run['date'].strftime('%Y-%m-%d %H:%M:%S UTC'))}</td>"
            f"<td><code>{e(run['run_id'][:12])}</code></td><td><code>{e(runs)}</code></td>"
            + "".join(
                f"<td class='n'>{int(run[k])}</td>"
                for k in ("outputs", "pass", "fail", "error", "skipped")
            )
            + "</tr>"
        )
    body.append("</tbody></table>")
    runtime = _runtime_of(facts, name)
    for release, found in facts.only_failures.get(name, {}).items():
        body.append(f"<h2>Failures only it has over onnx {e(release)}</h2>")
        if not found:
            body.append(
                "<p>None: every case it does not pass fails on another runtime too, "
                "or no other runtime ran it.</p>"
            )
            continue
        body.append(
            "<table class='only'><thead><tr><th>case</th><th>verdict</th>"
            "<th>known</th></tr></thead><tbody>"
        )
        for case, verdict in found:
            notes = _triage_notes(triage, runtime, case)
            body.append(
                f"<tr><td><a href='{links.case(case)}'>{e(case)}</a></td>"
                f"<td class='{verdict}'>{verdict}</td><td>{notes}</td></tr>"
            )
        body.append("</tbody></table>")
    return _page(name, body, depth=1, links=links)


def _runtime_of(facts: Facts, name: str) -> str | None:
    """The runtime's name as a triage file says it (the run's ``runtime``, else its
    ``backend``)."""
    for run in facts.runs:
        if run["line"].runtime == name:
            return run["runtime"] or run["backend"]
    return None


def operators_page(facts: Facts, links: Links) -> str:
    """Operator x element type x cell: the cases per verdict and the largest ULP."""
    body = ["<h1>Operators x element types x runtimes</h1>"]
    board = facts.board
    if not facts.cells:
        body.append("<p>The results store holds no run.</p>")
        return _page("Operators", body, depth=0, links=links)
    names = [c.label for c in facts.cells]
    head = "".join(f"<th>{e(n)}</th>" for n in names)
    body += [
        "<p class='muted'>Each cell counts the cases of an operator with outputs of an element "
        "type, each by the worst verdict of those outputs, and gives the largest ULP distance "
        "of their floats (as <code>onnx-arrow report</code> does).</p>",
        "<table class='operators'><thead><tr><th>operator</th><th>type</th>"
        f"{head}</tr></thead><tbody>",
    ]
    rows: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}  # in the cells' order
    for row in board.cells.astype(object).to_dict(orient="records"):
        rows.setdefault((row["operator"], row["element_type"]), {})[row["backend"]] = row
    for (op, element), by in rows.items():
        tds = []
        for n in names:
            row = by.get(n)
            if row is None:
                tds.append("<td class='none'></td>")
            else:
                ulp = row["max_ulp"] if isinstance(row["max_ulp"], int) else None
                tds.append(f"<td class='{_worst(row)}'>{e(cell_text(row, ulp))}</td>")
        body.append(f"<tr><th>{e(op)}</th><td>{e(element)}</td>{''.join(tds)}</tr>")
    body.append("</tbody></table><h2>Errors by cause</h2>")
    if board.causes.empty:
        body.append("<p>No errors.</p>")
    else:
        body.append(
            "<table class='causes'><thead><tr><th>cause</th><th>runtime</th><th>cases</th>"
            "<th>example</th></tr></thead><tbody>"
        )
        for row in board.causes.to_dict(orient="records"):
            body.append(
                f"<tr><td>{e(row['cause'])}</td><td>{e(row['backend'])}</td>"
                f"<td class='n'>{int(row['cases'])}</td>"
                f"<td><a href='{links.case(row['example'])}'>{e(row['example'])}</a></td></tr>"
            )
        body.append("</tbody></table>")
    return _page("Operators", body, depth=0, links=links)


def cases_page(facts: Facts, links: Links) -> str:
    """Every case with its verdict in each cell."""
    head = "".join(f"<th>{e(c.label)}</th>" for c in facts.cells)
    body = [
        "<h1>Cases</h1>",
        f"<table class='cases'><thead><tr><th>case</th>{head}</tr></thead><tbody>",
    ]
    for case in facts.cases:
        tds = []
        for cell in facts.cells:
            verdict = facts.verdicts.get(cell.run_id, {}).get(case)
            tds.append(f"<td class='{verdict or 'none'}'>{verdict or 'not run'}</td>")
        body.append(f"<tr><td><a href='{links.case(case)}'>{e(case)}</a></td>{''.join(tds)}</tr>")
    body.append("</tbody></table>")
    return _page("Cases", body, depth=0, links=links)


def coverage_page(facts: Facts, operators: list[dict[str, Any]], made_from: Mapping[str, Any],
                  links: Links) -> str:  # fmt: skip
    """Per operator version of the corpus store: its cases, and how many pass per cell."""
    head = "".join(f"<th>{e(c.label)}</th>" for c in facts.cells)
    corpus = made_from.get("corpus_onnx")
    body = [
        "<h1>Coverage per operator</h1>",
        f"<p>The operators of the specification at the corpus's opsets (onnx {e(corpus)}, "
        f"schemas of onnx {e(made_from.get('schemas_onnx'))}) and the cases of the corpus "
        "store that exercise each; per runtime, how many of those cases pass.</p>",
        "<table class='coverage'><thead><tr><th>domain</th><th>operator</th><th>since</th>"
        f"<th>cases</th>{head}</tr></thead><tbody>",
    ]
    for op in operators:
        cases = list(op["cases"] or [])
        tds = []
        for cell in facts.cells:
            verdicts = facts.verdicts.get(cell.run_id, {})
            ran = [c for c in cases if c in verdicts]
            if not ran:
                tds.append("<td class='none'></td>")
                continue
            passing = sum(1 for c in ran if verdicts[c] == "pass")
            kind = "pass" if passing == len(ran) else "fail"
            tds.append(f"<td class='n {kind}'>{passing}/{len(ran)}</td>")
        klass = "" if op["case_count"] else " class='fail'"
        body.append(
            f"<tr{klass}><td>{e(op['domain'])}</td><td>{e(op['op_type'])}</td>"
            f"<td class='n'>{e('' if op['since_version'] is None else op['since_version'])}</td>"
            f"<td class='n'>{int(op['case_count'])}</td>{''.join(tds)}</tr>"
        )
    body.append("</tbody></table>")
    return _page("Coverage", body, depth=0, links=links)


def _tolerance(row: Mapping[str, Any]) -> str:
    parts = []
    if row["rule"]:
        parts.append(f"rule {row['rule']}")
    if row["rtol"] is not None:
        parts.append(f"rtol {row['rtol']:g}")
    if row["atol"] is not None:
        parts.append(f"atol {row['atol']:g}")
    if row["ulp_budget"] is not None:
        parts.append(f"{row['ulp_budget']} ULP")
    if row["ulp_floor"]:
        parts.append(f"floor {row['ulp_floor']:g}")
    source = f" (from {row['tolerance']})" if row["tolerance"] else ""
    return ", ".join(parts) + source


def _worst_element(row: Mapping[str, Any]) -> str:
    if row["worst_index"] is None:
        return ""
    return f"at {row['worst_index']}: expected {row['worst_expected']}, got {row['worst_actual']}"


def case_page(case: str, facts: Facts, links: Links, triage: Sequence[TriageEntry],
              zip_note: str) -> str:  # fmt: skip
    """Every run's verdict of a case's outputs, the worst element, the error's line, the
    tolerance and its source; the triage entries that cover it; the case's download."""
    runs = {run["run_id"]: run for run in facts.runs}
    body = [f"<h1>{e(case)}</h1>"]
    if case in links.zips:
        body.append(
            f"<p><a href='{links.zips[case]}' download>Download the case</a> (a zip of its "
            f"folder: model.onnx and its data sets) to reproduce it. {e(zip_note)}</p>"
        )
    else:
        body.append(f"<p class='muted'>No download: {e(zip_note)}</p>")
    notes = [
        f"<li>{e(entry.runtime)}: {_triage_notes([entry], entry.runtime, case)}</li>"
        for entry in triage
        if entry.covers(entry.runtime, case)
    ]
    if notes:
        body += ["<h2>Known failures</h2>", "<ul>", *notes, "</ul>"]
    body += [
        "<h2>Runs</h2>",
        "<table class='runs'><thead><tr><th>runtime</th><th>onnx</th><th>date</th>"
        "<th>output</th><th>status</th><th>max ULP</th><th>worst element</th>"
        "<th>error</th><th>tolerance</th></tr></thead><tbody>",
    ]
    for row in facts.case_rows.get(case, []):
        run = runs[row["run_id"]]
        output = (
            "" if row["index"] is None else f"{row['data_set']}/{row['index']} {row['name'] or ''}"
        )
        error = cause_line(row["error"]) if row["error"] else (row["detail"] or "")
        verdict = VERDICT_OF.get(row["status"], "none")
        body.append(
            f"<tr><td>{e(run['line'].label)}</td><td>{e(run['release'])}</td>"
            f"<td>{e(run['date'].strftime('%Y-%m-%d %H:%M'))}</td><td>{e(output)}</td>"
            f"<td class='{verdict}'>{e(row['status'])}</td>"
            f"<td class='n'>{'' if row['max_ulp'] is None else int(row['max_ulp'])}</td>"
            f"<td>{e(_worst_element(row))}</td><td>{e(error)}</td>"
            f"<td>{e(_tolerance(row))}</td></tr>"
        )
    body.append("</tbody></table>")
    full = [r for r in facts.case_rows.get(case, []) if r["error"] and "\n" in r["error"]]
    if full:
        body.append("<h2>Errors in full</h2>")
        for row in full:
            body.append(
                f"<details><summary>{e(runs[row['run_id']]['line'].label)}</summary>"
                f"<pre>{block(row['error'])}</pre></details>"
            )
    return _page(case, body, depth=1, links=links)
