"""``onnx-arrow site``: a results store of real compare runs (one runtime in two versions,
the reference evaluator and a planted-bug backend, and onnxruntime) built into a static
site, its numbers checked against ``onnx-arrow report --format json``, rendered in
headless Chromium, hostile strings escaped, a triage file checked, rebuilt atomically."""

from __future__ import annotations

import html
import json
import re
import zipfile
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from chromium import measure, screenshot
from compare_helpers import cli

from onnx_arrow import compare, results
from onnx_arrow.corpus import Store
from onnx_arrow.errors import SiteError
from onnx_arrow.reports import Report
from onnx_arrow.site import build_site, pages, parse_triage, publish
from onnx_arrow.site.publish import safe_name

TRIAGE = """\
format = 1

[[entry]]
runtime = "mine"
cases = ["test_add*"]
url = "https://tracker.example/issues/7?a=1&b=<2>"
note = "Add is off by one since 1.1 <b>bold</b>"
"""

HOSTILE = "node/<img src=x onerror=alert(1)>/../../x"


@pytest.fixture(scope="module")
def made(
    tmp_path_factory: pytest.TempPathFactory, node_store: Store, reports: tuple[Report, Report]
) -> dict[str, Any]:
    """The three runs' report files, their results store and its site (with the corpus
    store and a triage file), made once."""
    folder = tmp_path_factory.mktemp("site")
    ort = compare.compare(node_store, "onnxruntime")
    files, statuses = {}, {}
    for k, report in enumerate((*reports, ort)):
        path = folder / f"run{k}.parquet"
        compare.write_report(report, path)
        (added,) = results.add(folder / "results", report)
        files[added.run_id] = path
        statuses[added.run_id] = report.table.select(["case", "status"]).to_pylist()
    (folder / "triage.toml").write_text(TRIAGE)
    code, out, err = cli(
        "site", str(folder / "results"), str(folder / "out"), "--store", str(node_store.path),
        "--triage", str(folder / "triage.toml"),
    )  # fmt: skip
    assert (code, err) == (0, ""), err
    assert out.startswith(f"site: {folder / 'out'} (")
    return {"folder": folder, "files": files, "statuses": statuses, "out": folder / "out"}


def _cells(page: str, attribute: str) -> dict[str, str]:
    """The text of each table cell of ``page`` that has ``attribute``, by its value."""
    found = re.findall(rf"<td[^>]* {attribute}='([^']*)'>(.*?)</td>", page)
    return {html.unescape(k): html.unescape(re.sub("<[^>]+>", "", v)) for k, v in found}


def test_the_pages_say_what_report_json_says(made: dict[str, Any]) -> None:
    out: Path = made["out"]
    data = json.loads((out / "site.json").read_text())
    labels = [c["label"] for c in data["cells"]]
    # the cells' runs are the three reports, in the site's order
    args = [str(made["files"][c["run_id"]]) for c in data["cells"]]
    for label in labels:
        args += ["--label", label]
    code, text, err = cli("report", *args, "--format", "json")
    assert (code, err) == (0, "")
    board = json.loads(text)
    # the matrix on the index, as the page shows it
    shown = _cells((out / "index.html").read_text(), "data-cell")
    assert set(shown) == set(labels)
    for backend in board["backends"]:
        assert shown[backend["backend"]] == pages.cell_text(backend)
    # operator x element type x runtime, with the worst ULP
    page = (out / "operators.html").read_text()
    for cell in board["cells"]:
        assert f"{html.escape(pages.cell_text(cell, cell['max_ulp']), quote=True)}</td>" in page
    for backend in board["backends"]:  # a report's file name is no run's
        backend["report"] = None
    assert data["scoreboard"] == board
    # the Interop score: the cases every runtime passes at its latest version (mine 1.1,
    # onnxruntime), as their reports say
    latest = [made["statuses"][c["run_id"]] for c in data["cells"] if c["runtime_version"] != "1.0"]
    assert len(latest) == 2
    every = {r["case"] for r in latest[0]}
    fails = {r["case"] for rows in latest for r in rows if r["status"] not in ("match", "xpass")}
    passing = every - fails
    interop = data["interop"][data["releases"][0]]
    assert (interop["passing"], interop["cases"]) == (len(passing), 4)
    score = _cells((out / "index.html").read_text(), "data-score")
    assert score[data["releases"][0]].startswith(f"{100 * len(passing) / 4:.1f}%")
    # the failure only the planted bug has, with its triage note beside it
    only = data["only_failures"]["mine"][data["releases"][0]]
    assert only == [["node/test_add", "fail"]]
    runtime = (out / "runtimes" / safe_name("mine", ".html")).read_text()
    assert "Add is off by one since 1.1 &lt;b&gt;bold&lt;/b&gt;" in runtime
    assert 'href="https://tracker.example/issues/7?a=1&amp;b=&lt;2&gt;"' in runtime


def test_nothing_is_fetched_and_every_link_stays_in_the_site(made: dict[str, Any]) -> None:
    """No script, no ``src``; every link a file of the site, but the triage file's."""
    out: Path = made["out"]
    for page in out.rglob("*.html"):
        text = page.read_text()
        assert "<script" not in text
        assert " src=" not in text
        for link in re.findall(r"href=['\"]([^'\"]*)['\"]", text):
            if link.startswith("https://tracker.example/"):
                continue
            assert (page.parent / link).resolve().is_file(), (page.name, link)
            assert (page.parent / link).resolve().is_relative_to(out.resolve())


def test_a_case_page_and_its_zip(made: dict[str, Any], node_store: Store) -> None:
    out: Path = made["out"]
    page = (out / "cases" / safe_name("node/test_add", ".html")).read_text()
    assert page.count("<td class='pass'>match</td>") == 2  # reference and onnxruntime
    assert "<td class='fail'>mismatch</td>" in page
    assert "rule tolerance, rtol 0.001, atol 1e-07 (from " in page
    assert re.search(r"at \[[\d, ]+\]: expected [-\d.e]+, got [-\d.e]+", page)
    name = safe_name("node/test_add", ".zip")
    assert f"href='{name}' download" in page
    with zipfile.ZipFile(out / "cases" / name) as archive:
        got = {n: archive.read(n) for n in archive.namelist()}
    assert got == {f.path: f.data for f in node_store.case_files("node/test_add")}


@pytest.mark.slow  # two pages in headless Chromium, about 3 seconds
def test_the_index_and_a_case_page_render_in_chromium(made: dict[str, Any], tmp_path: Path) -> None:
    from PIL import Image

    out: Path = made["out"]
    case = out / "cases" / safe_name("node/test_add", ".html")
    release = json.loads((out / "site.json").read_text())["releases"][0]
    for page, text in ((out / "index.html", "Interop score"), (case, "node/test_add")):
        probed = measure(page)
        assert text in probed["prose"]
        shot = screenshot(page, tmp_path / f"{page.stem}.png")
        with Image.open(shot) as image:
            colours = image.convert("RGB").getcolors(maxcolors=1 << 16)
        assert colours is None or len(colours) > 10  # not blank
        if page.name == "index.html":  # the matrix as the browser lays it out
            matrix = probed["tables"][0]["rows"]
            assert [cell["text"] for cell in matrix[0]] == ["runtime", f"onnx {release}"]
            assert [row[1]["text"] for row in matrix[1:]] == [
                "3 pass, 1 fail",
                "3 pass, 1 fail",
                "4 pass",
            ]


def _hostile(report: Report) -> Report:
    """``report`` of a runtime and a case whose names are HTML."""
    table = report.table
    cases = [HOSTILE if c == "node/test_abs" else c for c in table.column("case").to_pylist()]
    table = table.set_column(table.schema.get_field_index("case"), "case", pa.array(cases))
    made = dict(report.provenance or {})
    made["backend"] = {
        **made["backend"],
        "runtime": "<script>alert(2)</script>",
        "runtime_version": "1",
    }
    return Report.of(table, made)


def test_strings_from_a_report_render_as_text(
    tmp_path: Path, reports: tuple[Report, Report]
) -> None:
    report = tmp_path / "forged.parquet"
    compare.write_report(_hostile(reports[1]), report)
    code, _, err = cli("results", "add", str(report), str(tmp_path / "results"))
    assert (code, err) == (0, "")
    built = build_site(tmp_path / "results", tmp_path / "out")
    files = [p for p in (tmp_path / "out").rglob("*") if p.is_file()]
    assert all(p.resolve().is_relative_to((tmp_path / "out").resolve()) for p in files)
    assert built.cases == 4
    for path in files:
        text = path.read_text(errors="replace")
        assert "<img" not in text
        assert "<script>" not in text
    case = tmp_path / "out" / "cases" / safe_name(HOSTILE, ".html")
    assert html.escape(HOSTILE, quote=True) in case.read_text()
    assert "No download: No corpus store was given (--store STORE)" in case.read_text()


@pytest.mark.slow  # a page in headless Chromium
def test_a_hostile_case_name_is_text_in_chromium(
    tmp_path: Path, reports: tuple[Report, Report]
) -> None:
    results.add(tmp_path / "results", _hostile(reports[1]))
    build_site(tmp_path / "results", tmp_path / "out")
    probed = measure(tmp_path / "out" / "cases" / safe_name(HOSTILE, ".html"))
    assert HOSTILE in probed["prose"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("format = 1\n[[entry]\n", "not TOML: .*line 2"),
        ("format = 2\n", "format is 2"),
        ("[[entry]]\nruntime = 'x'\n", "format is None"),
        ("format = 1\n[[entry]]\ncases = ['a']\nnote = 'n'\n", "entry\\[0\\]: no runtime"),
        (
            "format = 1\n[[entry]]\nruntime = 'x'\ncases = []\nnote = 'n'\n",
            "entry\\[0\\].cases: not a non-empty",
        ),
        (
            "format = 1\n[[entry]]\nruntime = 'x'\ncases = ['a', 3]\nnote = 'n'\n",
            "entry\\[0\\].cases\\[1\\]: a int",
        ),
        (
            "format = 1\n[[entry]]\nruntime = 'x'\ncases = ['a']\n",
            "entry\\[0\\]: neither url nor note",
        ),
        (
            "format = 1\n[[entry]]\nruntime = 'x'\ncases = ['a']\nurl = 'javascript:alert(1)'\n",
            "entry\\[0\\].url: 'javascript:alert\\(1\\)' is not an http",
        ),
        (
            "format = 1\n[[entry]]\nruntime = 'x'\ncases = ['a']\nurl = 'https:///x'\n",
            "entry\\[0\\].url: .* not an http",
        ),
        (
            "format = 1\n[[entry]]\nruntime = 'x'\ncases = ['a']\nnote = 'n'\nbug = 1\n",
            "entry\\[0\\]: unknown key 'bug'",
        ),
        ("format = 1\nentry = 3\n", "entry is not an array"),
        ("format = 1\nextra = 3\n", "unknown key 'extra'"),
    ],
)
def test_a_garbage_triage_file_is_a_located_error(text: str, message: str) -> None:
    with pytest.raises(SiteError, match=f"^triage.toml: {message}"):
        parse_triage(text, where="triage.toml")


def test_a_garbage_triage_file_writes_nothing(
    tmp_path: Path, reports: tuple[Report, Report]
) -> None:
    results.add(tmp_path / "results", reports[0])
    (tmp_path / "t.toml").write_bytes(b"\xff\xfe")
    code, _, err = cli(
        "site",
        str(tmp_path / "results"),
        str(tmp_path / "out"),
        "--triage",
        str(tmp_path / "t.toml"),
    )
    assert code == 1
    assert "t.toml: the triage file is not UTF-8 text (byte 0)" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results", "t.toml"]


def test_a_rebuild_replaces_the_site_and_an_interrupted_one_leaves_it(
    tmp_path: Path, reports: tuple[Report, Report], monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "results"
    results.add(store, reports[0])
    build_site(store, tmp_path / "out")
    (tmp_path / "out" / "stale.html").write_text("from before")
    results.add(store, reports[1])
    built = build_site(store, tmp_path / "out")
    assert built.runs == 2
    assert not (tmp_path / "out" / "stale.html").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "results"]
    before = {p: p.read_bytes() for p in (tmp_path / "out").rglob("*") if p.is_file()}

    def interrupted(*args: object, **kwargs: object) -> str:
        raise KeyboardInterrupt

    monkeypatch.setattr(pages, "case_page", interrupted)
    with pytest.raises(KeyboardInterrupt):
        build_site(store, tmp_path / "out")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "results"]
    assert {p: p.read_bytes() for p in (tmp_path / "out").rglob("*") if p.is_file()} == before


def test_a_folder_that_is_no_site_is_not_replaced(
    tmp_path: Path, reports: tuple[Report, Report]
) -> None:
    results.add(tmp_path / "results", reports[0])
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep")
    with pytest.raises(SiteError, match="is not a site onnx-arrow made") as caught:
        build_site(tmp_path / "results", tmp_path / "mine")
    assert caught.value.where == str(tmp_path / "mine")
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep"
    with pytest.raises(SiteError, match="would leave the site"):
        publish.write(tmp_path / "mine", "../escaped.html", "x")
    assert not (tmp_path / "escaped.html").exists()


def test_a_column_per_onnx_release(tmp_path: Path, reports: tuple[Report, Report]) -> None:
    """Runs over two onnx releases: a column each, a cell a runtime did not run says so,
    and each release has its Interop score."""
    old, new = reports
    results.add(tmp_path / "results", _over(old, "1.16.0"))
    results.add(tmp_path / "results", new)
    built = build_site(tmp_path / "results", tmp_path / "out")
    assert built.runs == 2
    data = json.loads((tmp_path / "out" / "site.json").read_text())
    release = data["releases"][1]
    assert data["releases"] == ["1.16.0", release]
    assert [(c["runtime_version"], c["release"]) for c in data["cells"]] == [
        ("1.0", "1.16.0"),
        ("1.1", release),
    ]
    index = (tmp_path / "out" / "index.html").read_text()
    assert index.count("<td class='none'>not run</td>") == 2
    assert {r: (v["passing"], v["cases"]) for r, v in data["interop"].items()} == {
        "1.16.0": (3, 4),  # the reference gets the expanded Range's shape wrong
        release: (3, 4),  # the planted bug gets Add wrong and the Range right
    }


def _over(report: Report, onnx: str) -> Report:
    """``report`` as a run over a corpus of another onnx release."""
    made = dict(report.provenance or {})
    made["store_onnx_version"], made["store_digest"] = onnx, "a" * 32
    return Report.of(report.table, made)


def test_two_runners_without_a_runtime_are_two_runtimes(
    tmp_path: Path, reports: tuple[Report, Report]
) -> None:
    for command in ("/opt/bin/rt {model}", "/opt/other/rt2 --x {model}"):
        made = dict(reports[0].provenance or {})
        made["backend"] = {"name": "runner", "runs": command, "runtime": None}
        results.add(tmp_path / "results", Report.of(reports[0].table, made))
    build_site(tmp_path / "results", tmp_path / "out")
    data = json.loads((tmp_path / "out" / "site.json").read_text())
    names = ["runner rt '{model}'", "runner rt2 --x '{model}'"]
    assert [c["runtime"] for c in data["cells"]] == names
    assert sorted(data["interop"][data["releases"][0]]["runtimes"]) == names


def test_an_interrupt_between_the_renames_puts_the_old_site_back(
    tmp_path: Path, reports: tuple[Report, Report], monkeypatch: pytest.MonkeyPatch
) -> None:
    results.add(tmp_path / "results", reports[0])
    build_site(tmp_path / "results", tmp_path / "out")
    before = (tmp_path / "out" / "index.html").read_bytes()
    renames = []
    rename = publish.os.rename

    def interrupted(src: object, dst: object) -> None:
        renames.append((src, dst))
        if len(renames) == 2:  # the new site into place, the old one already aside
            raise KeyboardInterrupt
        rename(src, dst)  # type: ignore[arg-type]

    monkeypatch.setattr(publish.os, "rename", interrupted)
    with pytest.raises(KeyboardInterrupt):
        build_site(tmp_path / "results", tmp_path / "out")
    monkeypatch.undo()
    assert len(renames) == 3  # aside, (interrupted), back
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "results"]
    assert (tmp_path / "out" / "index.html").read_bytes() == before


@pytest.mark.parametrize("bad", ["part", "store"])
def test_a_bad_results_or_corpus_store_writes_nothing(
    tmp_path: Path, reports: tuple[Report, Report], bad: str
) -> None:
    results.add(tmp_path / "results", reports[0])
    args = ["site", str(tmp_path / "results"), str(tmp_path / "out")]
    if bad == "part":
        (tmp_path / "results" / "forged.parquet").write_bytes(b"PAR1 not a part")
        said = "forged.parquet: not a Parquet file"
    else:
        (tmp_path / "corpus.parquet").write_bytes(b"not a store")
        args += ["--store", str(tmp_path / "corpus.parquet")]
        said = "corpus.parquet"
    code, _, err = cli(*args)
    assert code == 1
    assert said in err
    assert not (tmp_path / "out").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.")]
