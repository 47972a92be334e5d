"""The scoreboard: real reports of the reference backend and onnxruntime over a small
store side by side, as Markdown, JSON and HTML (laid out by Chromium); operators, element
types, verdicts, ULPs, errors by cause, labels, and the ``report`` command."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest
from chromium import measure, screenshot
from compare_helpers import cli

from onnx_arrow import compare as cmp
from onnx_arrow.compare.report import report_frame
from onnx_arrow.compare.side_by_side import FORMATS, VERDICTS, error_cause, scoreboard
from onnx_arrow.corpus import Store


@pytest.fixture(scope="module")
def reports(store: Store, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The reports of the reference backend and of onnxruntime over the shared store."""
    pytest.importorskip("onnxruntime")
    folder = tmp_path_factory.mktemp("scoreboard")
    paths = folder / "reference.parquet", folder / "onnxruntime.parquet"
    cmp.write_report(cmp.compare(store).to_pandas(), paths[0])
    cmp.write_report(cmp.compare(store, cmp.onnxruntime_backend).to_pandas(), paths[1])
    return paths


def _cell(board: object, operator: str, element: str, backend: str) -> dict[str, object]:
    cells = board.cells  # type: ignore[attr-defined]
    hit = cells[
        (cells.operator == operator) & (cells.element_type == element) & (cells.backend == backend)
    ]
    assert len(hit) == 1, (operator, element, backend)
    return dict(hit.iloc[0])


def test_the_reports_of_two_backends_side_by_side(reports: tuple[Path, Path]) -> None:
    board = scoreboard(list(reports))
    assert board.backends.backend.tolist() == ["reference", "onnxruntime"]
    assert board.backends.report.tolist() == ["reference.parquet", "onnxruntime.parquet"]
    assert board.backends.runs.str.startswith(("onnx ", "onnxruntime ")).all()
    ref = board.backends.iloc[0]
    assert (ref.cases, ref["pass"], ref.fail, ref.error) == (9, 7, 1, 1)
    abs_ref = _cell(board, "Abs", "FLOAT", "reference")
    assert (abs_ref["pass"], abs_ref["max_ulp"]) == (1, 0)
    # the reference has no Scatter: an error; onnxruntime runs it
    assert _cell(board, "Scatter", "FLOAT", "reference")["error"] == 1
    assert _cell(board, "Scatter", "FLOAT", "onnxruntime")["pass"] == 1
    # an output not compared (the reference raised) takes its type from its declared one;
    # onnxruntime takes bfloat16 as an OrtValue of its ONNX type and passes
    assert pd.isna(_cell(board, "Scatter", "FLOAT", "reference")["max_ulp"])
    cast = _cell(board, "Cast", "BFLOAT16", "onnxruntime")
    assert (cast["pass"], cast["error"]) == (1, 0)
    assert _cell(board, "StringConcat", "STRING", "reference")["pass"] == 1
    assert _cell(board, "SequenceInsert", "INT64", "onnxruntime")["pass"] == 1
    # an expansion whose base case the reports lack is a row of its own
    case = "node/test_range_float_type_positive_delta_expanded"
    assert _cell(board, case, "FLOAT", "reference")["fail"] == 1
    causes = board.causes
    scatter = causes[causes.backend == "reference"].iloc[0]
    assert scatter.cause.startswith(
        "RuntimeImplementationError: No registered implementation for operator … and domain …"
    )
    assert (scatter.cases, scatter.example) == (1, "node/test_scatter_without_axis")
    for path, row in zip(reports, board.backends.itertuples(), strict=True):
        df = pd.read_parquet(path)
        floats = df[df.ulp_histogram.notna()]
        pairs = list(zip(floats.ulp_histogram, floats.n_elements, strict=True))
        # every element within 0, 1, 4 and 16 ULP: the first 1, 2, 4 and 6 bins
        within = [sum(int(sum(h[:bins]) == n) for h, n in pairs) for bins in (1, 2, 4, 6)]
        assert [row.bit_exact, row.within_1_ulp, row.within_4_ulp, row.within_16_ulp] == within
        assert row.float_outputs == len(floats) > 0
    ort = causes[causes.backend == "onnxruntime"].set_index("example").cause
    assert ort.to_dict() == {
        "node/test_optional_get_element_sequence": (
            "NotImplemented: Could not find an implementation for … node with name …"
        ),
    }


def test_markdown_is_stable_and_names_every_cell(reports: tuple[Path, Path]) -> None:
    text = scoreboard(list(reports)).render("md")
    assert text == scoreboard(list(reports)).render("md")  # the same bytes: no time, one order
    assert text.startswith("# Scoreboard\n\n| | reference | onnxruntime |\n|---|---|---|\n")
    assert "| Abs | FLOAT | 1 pass; max 0 ULP | 1 pass; max 0 ULP |" in text
    assert "| Cast | BFLOAT16 | 1 pass; max 0 ULP | 1 pass; max 0 ULP |" in text
    assert "| pass | 7 | " in text
    assert "| within 4 ULP | " in text
    matrix = text.split("## By operator")[1].split("## Errors by cause")[0]
    operators = [line.split(" | ")[0][2:] for line in matrix.splitlines()
                 if line.startswith("| ") and not line.startswith("| operator")]  # fmt: skip
    assert len(operators) == 9
    assert operators == sorted(operators)
    assert "## Errors by cause" in text
    assert "| RuntimeImplementationError: No registered implementation" in text


def test_json_is_for_machines(reports: tuple[Path, Path]) -> None:
    data = json.loads(scoreboard(list(reports)).render("json"))
    assert data["format"] == 1
    assert data["verdicts"] == {v: list(s) for v, s in VERDICTS.items()}
    assert [b["backend"] for b in data["backends"]] == ["reference", "onnxruntime"]
    cell = next(c for c in data["cells"] if c["operator"] == "Abs" and c["backend"] == "reference")
    assert cell == {
        "operator": "Abs", "element_type": "FLOAT", "backend": "reference",
        "pass": 1, "xfail": 0, "fail": 0, "error": 0, "skip": 0, "max_ulp": 0,
    }  # fmt: skip
    scatter = next(c for c in data["cells"] if c["operator"] == "Scatter" and c["error"])
    assert scatter["max_ulp"] is None


def test_html_reads_in_a_browser(reports: tuple[Path, Path], tmp_path: Path) -> None:
    page = tmp_path / "scoreboard.html"
    page.write_text(scoreboard(list(reports)).render("html"), encoding="utf-8")
    measured = measure(page)
    backends, matrix, causes = measured["tables"]
    assert [c["text"] for c in backends["rows"][0]] == ["", "reference", "onnxruntime"]
    cells = {
        tuple(c["text"] for c in row[:2]): [c["text"] for c in row[2:]] for row in matrix["rows"]
    }
    assert cells["Abs", "FLOAT"] == ["1 pass; max 0 ULP", "1 pass; max 0 ULP"]
    assert cells["Cast", "BFLOAT16"] == ["1 pass; max 0 ULP", "1 pass; max 0 ULP"]
    assert cells["Scatter", "FLOAT"][0] == "1 error"
    for row in matrix["rows"][1:]:
        lefts = [c["left"] for c in row]
        assert lefts == sorted(lefts)  # the columns in their order, side by side
        assert all(c["align"] in ("left", "start") for c in row)
    assert next(row[0]["text"] for row in causes["rows"]) == "cause"
    assert any(row[0]["text"].startswith("RuntimeImplementationError") for row in causes["rows"])
    shots = Path(os.environ.get("ONNX_ARROW_SCREENSHOTS", tmp_path))
    screenshot(page, shots / "scoreboard.png")


def test_a_cause_is_the_error_type_and_its_first_general_words() -> None:
    assert (
        error_cause(
            "NotImplemented: [ONNXRuntimeError] : 9 : NOT_IMPLEMENTED : Failed to find kernel for "
            "Cast(25) (node:'' ep:'CPUExecutionProvider'). Op with name (x) and type (Cast)"
        )
        == "NotImplemented: Failed to find kernel for … Op with name … and type"
    )
    assert (
        error_cause(
            "Fail: [ONNXRuntimeError] : 1 : FAIL : Fatal error: ai.onnx.preview.training:Adam(-1) "
            "is not a registered function/op"
        )
        == "Fail: Fatal error: … is not a registered …"
    )
    same = {
        error_cause(f"RuntimeError: No corresponding Numpy type for Tensor Type. {t}")
        for t in ("bfloat16", "Float8E5M2", "Int4x2")
    }
    assert same == {"RuntimeError: No corresponding Numpy type for Tensor Type. …"}
    assert error_cause("BackendTimeoutError: took longer than 600 s") == (
        "BackendTimeoutError: took longer than … s"
    )
    assert error_cause("no type here") == "no type here"
    assert error_cause("ValueError: ") == "ValueError: (no message)"


def test_labels_tell_two_reports_of_one_backend_apart(
    reports: tuple[Path, Path], tmp_path: Path
) -> None:
    again = tmp_path / "again.parquet"
    again.write_bytes(reports[0].read_bytes())
    board = scoreboard([reports[0], again])
    assert board.backends.backend.tolist() == [
        f"reference ({board.backends.runs[0]}, onnx {board.backends.onnx_version[0]}, {name})"
        for name in ("reference.parquet", "again.parquet")
    ]
    named = scoreboard([reports[0], again], labels=["before", "after"])
    assert named.backends.backend.tolist() == ["before", "after"]
    with pytest.raises(cmp.CompareError, match="1 labels for 2 reports"):
        scoreboard([reports[0], again], labels=["one"])
    with pytest.raises(cmp.CompareError, match="one or more compare reports"):
        scoreboard(reports[0])  # type: ignore[arg-type]
    with pytest.raises(cmp.CompareError, match="format is 'pdf'"):
        named.render("pdf")
    from onnx_arrow.cli import report  # the light command module states them too

    assert report.FORMATS == FORMATS


def test_a_dataframe_and_a_report_without_distributions(store: Store) -> None:
    df = cmp.compare(store, cases=["test_abs", "test_add"]).to_pandas()
    old = df.drop(columns=["max_ulp", "ulp_histogram", "n_elements"])
    board = scoreboard([df, old], labels=["now", "before"])
    assert pd.isna(_cell(board, "Abs", "FLOAT", "before")["max_ulp"])
    assert _cell(board, "Abs", "FLOAT", "now")["max_ulp"] == 0
    now, before = board.backends.itertuples()
    assert (now.float_outputs, now.bit_exact) == (2, 2)
    assert pd.isna(before.float_outputs)
    assert pd.isna(before.within_4_ulp)
    assert "| bit-exact | 2 |  |" in board.render("md")
    rows = [
        {"case": "node/test_x", "op_types": (), "status": "skipped", "detail": "skip pattern"},
        {"case": "node/test_y", "status": "skipped"},  # no op types at all
        {"case": "real/model", "op_types": ("Conv", "Relu"), "status": "xfail",
         "dtype_expected": "FLOAT", "error": "KeyError: 'w'"},
    ]  # fmt: skip
    board = scoreboard([report_frame(rows)])
    assert _cell(board, "(no model)", "(none)", "report 1")["skip"] == 2
    assert _cell(board, "real/model", "FLOAT", "report 1")["xfail"] == 1
    assert board.causes.cause.tolist() == ["KeyError: …"]


def test_the_report_command(reports: tuple[Path, Path], tmp_path: Path) -> None:
    args = [str(p) for p in reports]
    code, out, _ = cli("report", *args)
    assert code == 0
    assert out == scoreboard(list(reports)).render("md")
    target = tmp_path / "SCOREBOARD.md"
    code, out, _ = cli("report", *args, "-o", str(target))
    assert (code, target.read_text(encoding="utf-8")) == (0, scoreboard(list(reports)).render("md"))
    code, _, err = cli("report", *args, "-o", str(target))
    assert code == 1
    assert "exists; pass --force" in err
    code, _, _ = cli("report", *args, "--format", "json", "-o", str(target), "--force")
    assert json.loads(target.read_text(encoding="utf-8"))["format"] == 1
    code, _, err = cli("report", args[0], "--label", "a", "--label", "b")
    assert code == 2
    assert "2 --label for 1 reports" in err
    code, _, err = cli("report", str(tmp_path / "missing.parquet"))
    assert code == 1
    assert "missing.parquet: cannot open the report" in err


def test_runner_errors_group_on_the_last_exception_line_of_their_stderr() -> None:
    def crash(tail: str) -> str:
        return (
            "RunnerError: the command exited with status 1; its stderr ends:\n"
            "Traceback (most recent call last):\n"
            '  File "/home/me/run.py", line 3, in <module>\n'
            f"    kernel(op)\n{tail}"
        )

    rows = [
        {"case": "node/test_gradient", "op_types": ("Gradient",), "status": "error",
         "error": crash("NotImplementedError: no kernel for 'Gradient'")},
        {"case": "node/test_adam", "op_types": ("Adam",), "status": "error",
         "error": crash("NotImplementedError: no kernel for 'Adam'")},
        {"case": "node/test_abs", "op_types": ("Abs",), "status": "error",
         "error": crash("ValueError: bad \x1b[31mred\x1b[0m input")},
        {"case": "node/test_add", "op_types": ("Add",), "status": "error",
         "error": "RunnerError: cannot start 'pyhton': No such file or directory"},
    ]  # fmt: skip
    board = scoreboard([report_frame(rows)], labels=["runner"])
    assert board.causes[["cause", "cases"]].to_numpy().tolist() == [
        ["NotImplementedError: no kernel for …", 2],
        ["RunnerError: cannot start … No such file or directory", 1],
        ["ValueError: bad … input", 1],
    ]
    text = board.render("md")
    assert "| NotImplementedError: no kernel for … | 2 | node/test_adam |" in text
    assert "Traceback" not in text
    escaped = scoreboard([report_frame(rows[2:3])], labels=["<b>"]).render("html")
    assert "<th>&lt;b&gt;</th>" in escaped
    named = [{**rows[2], "case": "node/test_\x1b[2Jx", "error": "ValueError: \x07 bad"}]
    assert not any(c in scoreboard([report_frame(named)]).render("md") for c in "\x1b\x07")


def test_the_corpus_release_from_its_provenance_and_no_path_of_the_machine() -> None:
    rows = [{"case": "node/test_abs", "op_types": ("Abs",), "status": "match"}]
    wheel = {"file": "onnx-1.14.1-cp311-cp311-manylinux_2_17_x86_64.whl", "sha256": "ab"}
    made = {
        "kind": "compare", "onnx_version": "1.17.0", "store": ["/home/me/onnx-1.14.1.parquet"],
        "store_onnx_version": "1.14.1",
        "store_provenance": {"onnx": "1.14.1", "source": "wheel", "wheel": wheel},
        "backend": {"name": "runner",
                    "runs": "/usr/local/bin/tract /home/me/run.sh --nnef=/opt/x '{model}'"},
    }  # fmt: skip
    frame = report_frame(rows)
    frame.attrs["onnx_arrow"] = made
    board = scoreboard([frame])
    row = board.backends.iloc[0]
    assert row.corpus == f"onnx 1.14.1 (wheel {wheel['file']})"
    assert row.runs == "tract run.sh --nnef=x '{model}'"
    for format in FORMATS:
        assert "/home/me" not in board.render(format)
        assert "/usr/local" not in board.render(format)
    older = report_frame(rows)
    older.attrs["onnx_arrow"] = {"kind": "compare", "store_onnx_version": "1.16.0"}
    assert scoreboard([older]).backends.corpus.tolist() == ["onnx 1.16.0"]


def test_markdown_escapes_html_and_table_syntax_in_every_string_from_a_report() -> None:
    """A case name, an error and a label holding HTML, ``|``, a line break, backticks,
    emphasis or a link are shown as they are: one cell each, no element of their own."""
    markdown = pytest.importorskip("markdown")
    hostile = "<img src=x onerror=alert(1)>|x\n| y `z` *b* _e_ [l](u) ~~s~~ &amp;"
    rows = [
        {"case": f"node/test_a{hostile}", "op_types": (f"Op{hostile}",), "status": "error",
         "error": f"ValueError: {hostile}"},
    ]  # fmt: skip
    text = scoreboard([report_frame(rows)], labels=[f"lab{hostile}"]).render("md")
    page = markdown.markdown(text, extensions=["tables"])
    for tag in ("<img", "<code", "<em", "<strong", "<a ", "<del"):
        assert tag not in page
    tables = page.split("<table>")[1:]
    widths = {row.count("<td") + row.count("<th") for t in tables for row in t.split("<tr>")[1:]}
    assert widths == {2, 3}  # facts: what | backend; matrix and causes: 3 cells a row
    assert "onerror=alert(1)" in page  # shown as text
    assert all(s in text for s in ("&lt;img", "&amp;amp;", "\\|x", "\\`z\\`"))
