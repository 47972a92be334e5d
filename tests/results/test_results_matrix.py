"""The matrix: every corpus x every runtime into a results store, resumable, a crash an
error row, a pair that cannot run a failed pair the matrix goes past."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import onnx
import pyarrow.compute as pc
import pytest
from compare_helpers import cli
from release_helpers import network
from results_helpers import CASES

from onnx_arrow import results
from onnx_arrow.corpus import Store
from onnx_arrow.errors import ResultsError

#: A backend module whose every run raises, as a runtime that crashes on every model.
CRASHING = "def backend(model, inputs):\n    raise RuntimeError('planted crash')\n"

#: A runner of onnx's reference evaluator through files (MODEL INPUTS OUTPUTS), tensors only.
RUNNER = """\
import pathlib, sys
import onnx
from onnx import numpy_helper
from onnx.reference import ReferenceEvaluator

model = onnx.load(sys.argv[1])
inputs, outputs = pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
feed = {}
for k, info in enumerate(model.graph.input):
    tensor = onnx.TensorProto.FromString((inputs / f"input_{k}.pb").read_bytes())
    feed[info.name] = numpy_helper.to_array(tensor)
values = ReferenceEvaluator(model).run(None, feed)
for k, (info, value) in enumerate(zip(model.graph.output, values)):
    tensor = numpy_helper.from_array(value, info.name)
    (outputs / f"output_{k}.pb").write_bytes(tensor.SerializeToString())
"""

#: A backend module whose worker process dies on every model, as a segfault would end it.
DYING = "import os\n\ndef backend(model, inputs):\n    os._exit(11)\n"


@pytest.fixture
def module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Write a backend module into a folder on sys.path (and PYTHONPATH, for workers)."""
    folder = tmp_path / "modules"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    paths = [str(folder), *filter(None, [os.environ.get("PYTHONPATH")])]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(paths))

    def write(name: str, source: str) -> str:
        (folder / f"{name}.py").write_text(source)
        return f"{name}:backend"

    return write


def _parts(path: Path) -> list[str]:
    return sorted(p.name for p in path.glob("*.parquet"))


def test_every_pair_once_a_crash_an_error_row_a_failed_pair_gone_past(
    node_store: Store, planted: str, module: Any, tmp_path: Path
) -> None:
    store = tmp_path / "results"
    crashing = module("crashing_matrix_backend", CRASHING)
    backends = [
        "reference",
        results.MatrixBackend(backend=planted, runtime="mine==1.1"),
        crashing,
        "no_such_module_of_onnx_arrow:backend",
        results.MatrixBackend(runner="false {model}", runtime="falsehood==0.1"),
    ]
    ran: list[tuple[str, str, str]] = []
    seen: list[results.Pair] = []
    pairs = results.matrix(
        store,
        [node_store],
        backends,
        progress=lambda *step: ran.append(step),
        on_pair=seen.append,
    )
    assert pairs == seen
    assert [p.state for p in pairs] == ["added", "added", "added", "failed", "added"]
    reference, mine, crash, failed, runner = pairs
    assert (reference.runtime, reference.outputs, reference.passed) == ("onnx.reference", 4, 3)
    assert (mine.runtime, mine.runtime_version, mine.passed, mine.failed) == ("mine", "1.1", 3, 1)
    # a crash on every case is an error on every output, never a skip
    assert (crash.outputs, crash.errors, crash.skipped) == (4, 4, 0)
    assert (runner.runtime, runner.runtime_version, runner.errors) == ("falsehood", "0.1", 4)
    assert str(failed.error).startswith("BackendSpecError: ")
    assert failed.run_id is None
    assert len(ran) == 4 * len(CASES)  # every case of every pair that ran, once
    # the store holds the runs added, and says the same counts
    table = results.read(store)
    kept = {r["run_id"]: r for r in results.runs(table).to_pylist()}
    assert set(kept) == {p.run_id for p in pairs if p.state == "added"}
    assert kept[crash.run_id]["error"] == 4
    errors = table.filter(pc.equal(table.column("run_id"), crash.run_id)).column("error")
    assert all("RuntimeError: planted crash" in e for e in errors.to_pylist())

    # run again: nothing is run, nothing added; the failed pair is tried again
    before, ran = _parts(store), []
    again = results.matrix(store, [node_store], backends, progress=lambda *s: ran.append(s))
    assert ran == []
    assert _parts(store) == before
    assert [p.state for p in again] == ["present", "present", "present", "failed", "present"]
    for old, new in zip(pairs, again, strict=True):
        assert (new.run_id, new.outputs, new.passed, new.errors) == (
            old.run_id, old.outputs, old.passed, old.errors,
        )  # fmt: skip

    # --again: run and added as the next attempt
    (anew,) = results.matrix(store, [node_store], ["reference"], again=True)
    assert anew.state == "added"
    assert anew.run_id != reference.run_id
    assert len(_parts(store)) == len(before) + 1


def test_a_corpus_that_does_not_open_fails_its_pairs_only(
    node_store: Store, tmp_path: Path
) -> None:
    missing, garbage = tmp_path / "missing.parquet", tmp_path / "garbage.parquet"
    garbage.write_bytes(b"PAR1 not a store PAR1")
    pairs = results.matrix(tmp_path / "r", [missing, garbage, node_store], ["reference"])
    assert [(p.corpus, p.state) for p in pairs] == [
        (str(missing), "failed"),
        (str(garbage), "failed"),
        (str(node_store.path), "added"),
    ]
    assert str(missing) in str(pairs[0].error)
    assert str(pairs[1].error).startswith(f"CorpusError: {garbage}: ")


def test_a_store_that_does_not_read_is_said_before_any_pair(
    node_store: Store, tmp_path: Path
) -> None:
    store = tmp_path / "r"
    store.mkdir()
    (store / "notes.txt").write_text("not a part")
    ran: list[object] = []
    with pytest.raises(ResultsError, match=r"notes\.txt"):
        results.matrix(store, [node_store], ["reference"], progress=lambda *s: ran.append(s))
    assert ran == []
    with pytest.raises(ResultsError, match="a backend or a runner"):
        results.MatrixBackend()


def test_the_command_lists_the_pairs_and_fails_for_a_failed_one(
    node_store: Store, tmp_path: Path
) -> None:
    store, corpus = str(tmp_path / "r"), str(node_store.path)
    code, out, err = cli(
        "matrix", store, "--corpus", corpus, "--backend", "reference", "--case", "node/test_a*",
        "--backend", "no_such_module_of_onnx_arrow", "--runner", "false {model}",
        "--runtime", "falsehood==0.1", "--max-ulp", "0",
    )  # fmt: skip
    assert code == 1
    lines = err.splitlines()
    assert lines[0].startswith(f"matrix: pair 1 of 3: {corpus} x reference: onnx.reference ")
    assert "2 outputs: 2 pass, 0 fail, 0 error, 0 skipped, " in lines[0]
    assert "pair 2 of 3" in lines[1]
    assert ": failed (" in lines[1]
    assert "falsehood 0.1: 2 outputs: 0 pass, 0 fail, 2 error" in lines[2]
    assert lines[-1] == "onnx-arrow: error: 1 of 3 pairs failed; their errors are listed above"
    assert out.startswith(f"{store}: 3 pairs, 2 added, 0 present (not run again), 1 failed")
    table = out.split("\n\n")[1].splitlines()
    assert table[0].split() == ["corpus", "onnx", "runtime", "recorded", "as", "outputs",
                                "pass", "fail", "error", "skipped", "seconds", "pair"]  # fmt: skip
    assert table[3].split()[-1] == "added"
    assert "failed pairs:\n  " in out
    code, out, err = cli(
        "matrix", store, "--corpus", corpus, "--backend", "reference", "--case", "node/test_a*",
        "--runner", "false {model}", "--runtime", "falsehood==0.1", "--max-ulp", "0",
    )  # fmt: skip
    assert code == 0
    assert out.startswith(f"{store}: 2 pairs, 0 added, 2 present (not run again), 0 failed")
    assert err.count("in the results store already, not run") == 2


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--runtime", "x==1", "--backend", "reference"], "--runtime x==1 names the runtime"),
        (
            ["--runner", "false {model}", "--runtime", "x==1", "--runtime", "y==2"],
            "two --runtime for --runner false {model}",
        ),
        ([], "give one --backend or --runner or more"),
        (["--runner", "false"], "--runner: the command 'false' names neither"),
        (["--backend", "reference", "--in-process"], "--in-process applies to compare and run"),
    ],
)
def test_runtimes_are_given_in_order(
    node_store: Store, tmp_path: Path, argv: list[str], said: str
) -> None:
    code, _, err = cli("matrix", str(tmp_path / "r"), "--corpus", str(node_store.path), *argv)
    assert code == 2
    assert said in err
    assert not (tmp_path / "r").exists()


@pytest.mark.slow  # the installed onnx's corpus built twice, a frozen release fetched
@network
def test_releases_x_runtimes_as_users_run_it(
    tmp_path: Path, node_store: Store, module: Any
) -> None:
    """@onnx==1.14.1 (a temporary cache) and @onnx x the reference, onnxruntime, a backend
    whose worker dies, a runner that works and one that fails, as a command; run again,
    nothing runs."""
    dying = module("dying_matrix_backend", DYING)
    script = tmp_path / "reference_runner.py"
    script.write_text(RUNNER)
    store = tmp_path / "results"
    env = {**os.environ, "ONNX_ARROW_CACHE_DIR": str(tmp_path / "cache")}
    env["ONNX_ARROW_PROGRESS_INTERVAL"] = "0"  # a progress line per case: what ran
    command = [
        sys.executable, "-m", "onnx_arrow", "matrix", str(store),
        "--corpus", "@onnx==1.14.1", "--corpus", "@onnx",
        "--backend", "reference", "--backend", "onnxruntime", "--backend", dying,
        "--runner", "false {model}", "--runtime", "falsehood==0.1",
        "--runner", f"{sys.executable} {script} {{model}} {{inputs}} {{outputs}}",
        "--runtime", "pyref==1.0",
        "--case", "node/test_abs", "--case", "node/test_add", "--jobs", "2",
    ]  # fmt: skip
    done = subprocess.run(
        command, capture_output=True, text=True, env=env, timeout=900, check=False
    )
    assert done.returncode == 0, done.stderr
    first = done.stdout.splitlines()
    assert first[0] == f"{store}: 10 pairs, 10 added, 0 present (not run again), 0 failed"
    rows = [line.split() for line in first[3:13]]
    assert [(r[0], r[1]) for r in rows[:5]] == [("@onnx==1.14.1", "1.14.1")] * 5
    assert [r[0] for r in rows[5:]] == ["@onnx"] * 5
    by = {(r[0], r[2]): r for r in rows}
    assert by["@onnx==1.14.1", "onnxruntime"][5:8] == ["2", "2", "0"]  # outputs, pass, fail
    assert by["@onnx", dying][5:10] == ["2", "0", "0", "2", "0"]  # the dead worker: errors
    runs = results.runs(results.read(store)).to_pylist()
    assert {r["corpus_onnx_version"] for r in runs} == {"1.14.1", onnx.__version__}
    counts = {(r["runtime"], r["corpus_onnx_version"]): (r["pass"], r["error"]) for r in runs}
    assert counts["pyref", "1.14.1"] == counts["pyref", onnx.__version__] == (2, 0)
    assert counts["falsehood", "1.14.1"] == (0, 2)  # a runner that fails: errors, no skip
    parts = _parts(store)
    again = subprocess.run(
        command, capture_output=True, text=True, env=env, timeout=900, check=False
    )
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines()[0] == (
        f"{store}: 10 pairs, 0 added, 10 present (not run again), 0 failed"
    )
    assert "cases" not in again.stderr  # no case ran: no progress line
    assert _parts(store) == parts
