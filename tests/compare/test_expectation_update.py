"""Expectation files written again with what a run showed, in each project's format:
entries that pass or find no case removed, new failures added with their cause, the
rest byte for byte; and ``compare --update-expectations FILE [--check]`` end to end,
with a backend module of a planted bug (Abs off by one)."""

from __future__ import annotations

import difflib
import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import tomllib
from compare_helpers import RAISES, cli
from onnx import ModelProto
from onnx.reference import ReferenceEvaluator

from onnx_arrow import compare as cmp
from onnx_arrow.compare.expectation_edits import (
    MAX_VALUE_LINES,
    TomlTable,
    edit_json_lists,
    edit_toml_tables,
)
from onnx_arrow.compare.expectation_update import update_expectations, write_update
from onnx_arrow.corpus import Store
from onnx_arrow.errors import CompareError

DATA = Path(__file__).parents[1] / "data"
BURN = DATA / "burn-onnx" / "expectations.toml"
IREE = DATA / "iree" / "onnx_ops_cpu_llvm_sync.json"
FILTERS = DATA / "onnxruntime" / "onnx_backend_test_series_filters.jsonc"
TRACT = DATA / "tract" / "node.txt"
CASES = ["test_abs", "test_add", RAISES, "test_cast_FLOAT_to_BFLOAT16"]
#: The planted bug: a backend module whose Abs is off by one.
PLANTED = """\
import numpy as np
from onnx.reference import ReferenceEvaluator


def backend(model, inputs):
    outputs = ReferenceEvaluator(model).run(None, inputs)
    if any(node.op_type == "Abs" for node in model.graph.node):
        outputs = [np.asarray(o) + np.asarray(o).dtype.type(1) for o in outputs]
    return outputs
"""


def planted(model: ModelProto, inputs: dict[str, Any]) -> list[Any]:
    """The planted bug, in this process."""
    outputs = ReferenceEvaluator(model).run(None, inputs)
    if any(node.op_type == "Abs" for node in model.graph.node):
        outputs = [np.asarray(o) + np.asarray(o).dtype.type(1) for o in outputs]
    return list(outputs)


@pytest.fixture(scope="module")
def report(store: Store) -> pd.DataFrame:
    """One run of the planted bug over four cases: test_abs fails, the scatter raises."""
    return cmp.compare(store, planted, cases=CASES).to_pandas()


def _changes(old: str, new: str) -> tuple[list[str], list[str]]:
    """The lines removed and added (everything else is the same, byte for byte)."""
    gone, came = [], []
    for line in difflib.ndiff(old.splitlines(keepends=True), new.splitlines(keepends=True)):
        if line.startswith("- "):
            gone.append(line[2:])
        elif line.startswith("+ "):
            came.append(line[2:])
    return gone, came


def test_own_lines(store: Store, report: pd.DataFrame, tmp_path: Path) -> None:
    path = tmp_path / "expected.txt"
    old = (
        "# known failures\n"
        "xfail ^test_add$  # fixed since\n"
        "xfail ^test_gone_long_ago$\n"
        "skip ^test_cast_FLOAT_to_BFLOAT16$\n"
        "\n"
        "# tolerances\n"
        "tolerance ^test_no_such=0.1,0\n"
        "tolerance ^test_abs ulp=2\n"
        "xfail ^test_old when onnx<1.10\n"  # not this corpus's: not judged
    )
    path.write_text(old)
    update = update_expectations(
        path, report, store.cases(), onnx_version=store.metadata["onnx_version"]
    )
    gone, came = _changes(old, update.new)
    assert gone == [
        "xfail ^test_add$  # fixed since\n",
        "xfail ^test_gone_long_ago$\n",
        "tolerance ^test_no_such=0.1,0\n",
    ]
    assert [c.partition("  # ")[0] for c in came] == [
        "xfail ^test_abs$",
        f"xfail ^{RAISES}$",
    ]
    assert "mismatch at" in came[0]
    assert "RuntimeImplementationError" in came[1]
    assert update.stale
    assert "-xfail ^test_add$" in update.diff()
    write_update(update)
    assert path.read_text() == update.new
    # read back: the new entries are patterns the reader takes
    assert cmp.Expectations.read(path).xfail[-1] == f"^{RAISES}$"


def test_onnxruntime_filters(store: Store, report: pd.DataFrame, tmp_path: Path) -> None:
    path = tmp_path / FILTERS.name
    shutil.copyfile(FILTERS, path)
    old = path.read_text()
    update = update_expectations(path, report, store.cases())
    gone, came = _changes(old, update.new)
    # every list entry of the real file finds no case of four: its line goes, comments stay
    assert all(not g.strip().startswith("//") for g in gone)
    assert sum(1 for line in old.splitlines() if line.strip().startswith("//")) == sum(
        1 for line in update.new.splitlines() if line.strip().startswith("//")
    )
    # a line that only lost its comma (now the last of its list) is not new
    commas = {g.replace(",", "", 1) for g in gone}
    came = [c for c in came if c not in commas]
    assert [c.strip().partition("  //")[0] for c in came] == [
        '"^test_abs_cpu",',
        f'"^{RAISES}_cpu"',
    ]
    # strict JSON once its comments are gone, as onnxruntime's script reads it
    code = "\n".join(line.partition("//")[0] for line in update.new.splitlines())
    doc = json.loads(code)
    assert doc["current_failing_tests"][-2:] == ["^test_abs_cpu", f"^{RAISES}_cpu"]
    path.write_text(update.new)
    assert f"^{RAISES}_cpu" in cmp.Expectations.read(path).skip


def test_iree_config(store: Store, report: pd.DataFrame, tmp_path: Path) -> None:
    path = tmp_path / IREE.name
    shutil.copyfile(IREE, path)
    old = path.read_text()
    read = cmp.Expectations.read(path)
    assert "^node/test_cast_FLOAT_to_BFLOAT16$" in read.xfail
    assert "^node/test_dequantizelinear$" in read.skip
    update = update_expectations(path, report, store.cases())
    doc = json.loads(update.new)
    # the cast passes on the reference: out; the new failures in, at their sorted place
    assert doc["expected_run_failures"] == [
        "onnx/node/generated/test_abs",
        f"onnx/node/generated/{RAISES}",
    ]
    assert doc["expected_compile_failures"] == []
    assert doc["skip_run_tests"] == []
    before, after = json.loads(old), doc
    assert {k: v for k, v in before.items() if not k.endswith(("failures", "tests"))} == {
        k: v for k, v in after.items() if not k.endswith(("failures", "tests"))
    }
    gone, came = _changes(old, update.new)
    assert all("onnx/node/generated/" in line for line in gone + came)


def test_burn_onnx(store: Store, report: pd.DataFrame, tmp_path: Path) -> None:
    path = tmp_path / "expectations.toml"
    shutil.copyfile(BURN, path)
    old = path.read_text()
    read = cmp.Expectations.read(path)
    assert read.xfail[0] == "^node/test_adagrad$"
    assert read.xfail[0].reason.startswith("model contains 1 custom op(s)")  # type: ignore[attr-defined]
    update = update_expectations(path, report, store.cases())
    doc = tomllib.loads(update.new)
    assert list(doc) == ["test_abs", "test_add", RAISES]
    assert doc["test_abs"]["status"] == "fail-compare"
    assert doc["test_abs"]["reason"].startswith("data set 0 output 0 (y) mismatch at")
    assert doc[RAISES]["status"] == "fail-compare"
    assert update.new.startswith(old[: old.index("[test_abs]")])  # the header, byte for byte


def test_burn_statuses_that_pass_become_pass(
    store: Store, report: pd.DataFrame, tmp_path: Path
) -> None:
    path = tmp_path / "expectations.toml"
    old = (
        "# node tests\n\n"
        "[test_add]  # a comment on the header\n"
        'status = "fail-compare"\n'
        'reason = """over\nlines"""\n'
        "notes = [\n"
        '  "kept: a key onnx-arrow does not know",\n'
        "]\n"
        'tracking = "#1"\n'
        "wontfix = true\n"
        "\n"
        'test_cast_FLOAT_to_BFLOAT16 = { status = "skip-compile", reason = "x" }\n'
    )
    # an inline table must come before the first header: put it first
    old = old.replace(
        'test_cast_FLOAT_to_BFLOAT16 = { status = "skip-compile", reason = "x" }\n', ""
    )
    old = 'test_cast_FLOAT_to_BFLOAT16 = { status = "skip-compile", reason = "x" }\n' + old
    path.write_text(old)
    update = update_expectations(path, report, store.cases())
    doc = tomllib.loads(update.new)
    assert doc["test_add"] == {"status": "pass", "notes": ["kept: a key onnx-arrow does not know"]}
    assert doc["test_cast_FLOAT_to_BFLOAT16"] == {"status": "pass"}
    assert update.new.splitlines()[0] == 'test_cast_FLOAT_to_BFLOAT16 = { status = "pass" }'
    assert "[test_add]  # a comment on the header\n" in update.new


def test_toml_traps() -> None:
    text = (
        '["test_a.b"]\n'
        'status = "fail-compare"\n'
        'reason = "has [brackets] = and # not a comment"\n'
        "\n"
        "# about c\n"
        "[test_c]\n"
        'status = "flaky"\n'
        "tracking = [\n"
        '  "[not_a_header]",\n'
        "]\n"
    )
    out = edit_toml_tables(
        text,
        {
            "test_a.b": TomlTable(set_={"status": "pass"}, drop=("reason",)),
            "test_c": TomlTable(remove=True),
        },
        [("test_b", {"status": "fail-compare", "reason": 'quote " and \\ and \x7f'})],
    )
    doc = tomllib.loads(out)
    assert doc == {
        "test_a.b": {"status": "pass"},
        "test_b": {"status": "fail-compare", "reason": 'quote " and \\ and \x7f'},
    }
    assert out.startswith('["test_a.b"]\nstatus = "pass"\n\n[test_b]\n')
    with pytest.raises(CompareError, match="dotted table"):
        edit_toml_tables("[a.b]\nx = 1\n", {}, [])


def test_json_lists_on_one_line_and_commas() -> None:
    text = '{\n  "skip": ["^a"],\n  "xfail": [\n    "^x",\n    "^y"  // y\n  ]\n}\n'
    out = edit_json_lists(text, {5}, {"skip": [("^b", None)]})
    assert json.loads("\n".join(x.partition("//")[0] for x in out.splitlines())) == {
        "skip": ["^a", "^b"],
        "xfail": ["^x"],
    }
    assert '    "^x"\n' in out  # its comma gone: it is the last now
    with pytest.raises(CompareError, match="more than one entry"):
        edit_json_lists('{\n  "skip": [\n    "^a", "^b"\n  ]\n}\n', {3}, {})


def test_compare_update_then_check(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "planted_bug.py").write_text(PLANTED)
    monkeypatch.syspath_prepend(str(tmp_path))
    path = tmp_path / "expectations.toml"
    shutil.copyfile(BURN, path)
    args = [
        str(store.path),
        "--backend",
        "planted_bug:backend",
        "--case",
        "test_abs",
        "--case",
        "test_add",
    ]
    code, out, _ = cli("compare", *args, "--update-expectations", str(path), "--check")
    assert code == 1
    assert "would change" in out
    assert '+status = "fail-compare"' in out
    assert path.read_bytes() == BURN.read_bytes()  # --check writes nothing
    code, out, _ = cli("compare", *args, "--update-expectations", str(path))
    assert code == 1
    assert "changed:" in out  # the run failed; the file now says so
    code, out, _ = cli("compare", *args, "--update-expectations", str(path), "--check")
    assert code == 0
    assert "nothing to change" in out
    code, out, _ = cli("compare", *args, "--check")
    assert code == 2


@pytest.mark.slow
@pytest.mark.parametrize(
    "source",
    [BURN, IREE, FILTERS, TRACT, None],
    ids=["burn-onnx", "iree", "onnxruntime", "tract", "onnx-arrow"],
)
def test_each_format_updated_then_clean(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: Path | None
) -> None:
    """A real compare run per format: --check finds the file stale (exit 1, nothing
    written), the update writes it, --check is then clean (exit 0), and an entry made
    stale again (a failure fixed) makes --check exit 1."""
    (tmp_path / "planted_bug.py").write_text(PLANTED)
    monkeypatch.syspath_prepend(str(tmp_path))
    path = tmp_path / (source.name if source else "expected.txt")
    if source is None:
        path.write_text("# known failures\nxfail ^test_add$  # fixed since\n")
    else:
        shutil.copyfile(source, path)
    old = path.read_bytes()
    cases = [a for c in CASES for a in ("--case", c)]
    args = ["compare", str(store.path), "--backend", "planted_bug:backend", *cases]
    args += ["--update-expectations", str(path)]
    assert cli(*args, "--check")[0] == 1
    assert path.read_bytes() == old
    cli(*args)
    assert path.read_bytes() != old
    code, out, _ = cli(*args, "--check")
    assert (code, "nothing to change" in out) == (0, True)
    # the bug fixed: the entries the update added no longer fail (onnxruntime's are
    # skips: judged when they run)
    args[3] = "reference"
    ran = ["--run-skipped"] if source in (FILTERS, TRACT) else []
    code, out, _ = cli(*args, *ran, "--check")
    assert code == 1
    assert "test_abs" in out


def test_a_toml_value_of_too_many_lines_is_refused_not_read_for_ever() -> None:
    lines = "".join(f'  "{k}",\n' for k in range(MAX_VALUE_LINES + 5))
    text = f'[test_a]\nstatus = "pass"\nnotes = [\n{lines}]\n'
    with pytest.raises(CompareError, match=f"within {MAX_VALUE_LINES} lines"):
        edit_toml_tables(text, {"test_a": TomlTable(set_={"status": "fail-compare"})}, [])


def test_a_burn_file_may_start_with_its_first_table(tmp_path: Path) -> None:
    path = tmp_path / "expectations.toml"
    path.write_text('[test_abs]\nstatus = "fail-compare"\nreason = "why"\n')
    assert cmp.Expectations.read(path).xfail == ["^node/test_abs$"]


def test_a_link_is_written_through(store: Store, report: pd.DataFrame, tmp_path: Path) -> None:
    target = tmp_path / "kept" / "expected.txt"
    target.parent.mkdir()
    target.write_text("xfail ^test_add$\n")
    link = tmp_path / "expected.txt"
    link.symlink_to(target)
    write_update(update_expectations(link, report, store.cases()))
    assert link.is_symlink()
    assert target.read_text().startswith("xfail ^test_abs$  # ")


def test_tract_manifest(store: Store, report: pd.DataFrame, tmp_path: Path) -> None:
    path = tmp_path / "node.txt"
    path.write_text(TRACT.read_text() + "test_string_concat since:99\n")
    read = cmp.Expectations.read(path)
    assert read.only[0] == "test_abs"
    assert read.skips(f"node/{RAISES}") == f"not in {path}"  # the manifest leaves it out
    assert read.skips("node/test_add") is None
    # since:99: not at this corpus's opset, so not run
    version = store.metadata["onnx_version"]
    assert read.for_corpus(version).skips("node/test_string_concat") is not None
    update = update_expectations(path, report, store.cases(), onnx_version=version)
    gone, came = _changes(path.read_text(), update.new)
    assert "test_abs\n" in gone
    assert len(came) == 1
    assert came[0].startswith("# test_abs  (fails: data set 0 output 0 (y) mismatch at")
    assert {g.strip() for g in gone} == {
        "test_abs",
        "test_acos",
        "test_acos_example",
        "test_acosh",
        "test_acosh_example",
        "test_and.*",
        "test_argmax_default_axis_example",
        "test_argmax_default_axis_example_select_last_index",
    }
    (tmp_path / "mine.txt").write_text("test_abs\n")
    with pytest.raises(CompareError, match="named for the folder it lists"):
        cmp.Expectations.read(tmp_path / "mine.txt")
