"""Backends of a runtime's version from the package index, in an environment made for it
(:mod:`onnx_arrow.compare.environments`): the spec, the command line's errors, and (slow,
where the index answers) onnxruntime 1.20.1 itself, made cold in a cache of the tests' own,
then warm, over node cases."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import onnx
import pytest
from compare_helpers import cli
from onnx import TensorProto, helper, numpy_helper
from release_helpers import network
from store_helpers import small_corpus

from onnx_arrow import compare
from onnx_arrow.compare.environments import (
    EnvironmentBackend,
    environment_folder,
    is_package_spec,
    parse_package_spec,
)
from onnx_arrow.corpus import Store, write_store
from onnx_arrow.corpus.sources import FolderSource
from onnx_arrow.corpus.venvs import RECORD, cached_environment
from onnx_arrow.errors import (
    BackendPrepareError,
    BackendSpecError,
    RunnerError,
    VirtualEnvironmentError,
)

#: The version of onnxruntime the slow tests install: one the index has besides the
#: installed one, for this Python (cp311).
OLD_ORT = "1.20.1"


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.parquet"
    write_store(FolderSource(small_corpus(tmp_path / "corpus")), path)
    return path


@pytest.fixture
def empty_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("ONNX_ARROW_CACHE_DIR", str(folder))
    return folder


# --- the spec -------------------------------------------------------------------------------


def test_a_spec_is_pins_and_a_backend() -> None:
    spec = parse_package_spec("onnxruntime==1.20.1")
    assert (spec.package, spec.version, spec.backend) == (
        "onnxruntime",
        "1.20.1",
        "onnxruntime.backend",
    )
    assert spec.requirements() == ["onnxruntime==1.20.1", f"onnx=={onnx.__version__}"]
    assert str(spec) == "onnxruntime==1.20.1"
    spec = parse_package_spec("onnxruntime==1.16.3,numpy==1.26.4,onnx==1.15.0:onnxruntime.backend")
    assert spec.requirements() == ["onnxruntime==1.16.3", "numpy==1.26.4", "onnx==1.15.0"]
    assert str(spec) == "onnxruntime==1.16.3,numpy==1.26.4,onnx==1.15.0:onnxruntime.backend"
    assert parse_package_spec("my-runtime==0.3:my_runtime.onnx:Backend").backend == (
        "my_runtime.onnx:Backend"
    )
    assert parse_package_spec("onnx==1.17.0").backend == "reference"
    assert parse_package_spec("onnx==1.17.0").requirements() == ["onnx==1.17.0"]


def test_only_a_pin_before_the_colon_is_a_package_spec() -> None:
    assert is_package_spec("onnxruntime==1.20.1:onnxruntime.backend")
    assert not is_package_spec("onnxruntime.backend")
    assert not is_package_spec("my_module:Thing")
    assert not is_package_spec("reference")
    assert not is_package_spec(None)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("onnxruntime>=1.20", "not a pin NAME==VERSION"),
        ("onnxruntime==", "not a pin NAME==VERSION"),
        ("onnxruntime==1.20.1,", "'' is not a pin"),
        ("onnxruntime==1.20.1;rm -rf /", "not a pin"),
        ("../x==1.0", "not a pin"),
        ("onnxruntime==1.20.1,ONNXRuntime==1.21.0", "onnxruntime pinned twice"),
        ("onnxruntime==1.20.1:os.system('x')", "is not MODULE or MODULE:NAME"),
        ("onnxruntime==1.20.1:", "is not MODULE or MODULE:NAME"),
        ("<script>alert(1)</script>==1.0", "not a pin"),
        ("onnxruntime==1.20.1:<img src=x onerror=alert(1)>", "is not MODULE or MODULE:NAME"),
        ("onnxruntime==$(touch x)", "not a pin"),
        ("tract-onnx==0.21.0", "knows no backend module of tract-onnx"),
    ],
)
def test_a_bad_spec_is_refused_and_said(text: str, said: str) -> None:
    with pytest.raises(BackendSpecError, match="backend ") as info:
        parse_package_spec(text)
    assert said in info.value.message
    assert repr(text) in info.value.message


def test_the_environment_is_named_by_its_pins_and_python(empty_cache: Path) -> None:
    folder = environment_folder(parse_package_spec("onnxruntime==1.20.1,numpy==1.26.4"))
    assert folder is not None
    assert folder.parent == empty_cache / "backends"
    assert folder.name.startswith(f"onnxruntime-1.20.1-numpy-1.26.4-onnx-{onnx.__version__}-py3")


# --- the command line -----------------------------------------------------------------------


def test_a_bad_spec_is_a_usage_error(tiny: Path, empty_cache: Path) -> None:
    code, _, err = cli("compare", str(tiny), "--backend", "tract-onnx==0.21.0")
    assert code == 2
    assert "knows no backend module of tract-onnx" in err
    assert "tract-onnx==0.21.0:MODULE[:NAME]" in err
    code, _, err = cli(
        "run", str(tiny), str(tiny.with_name("o.parquet")), "--backend", "onnxruntime==1.20.1",
        "--providers", "CPUExecutionProvider",
    )  # fmt: skip
    assert code == 2
    assert "--providers and --session-option apply to --backend onnxruntime" in err
    assert not empty_cache.exists()


@pytest.mark.parametrize("command", ["compare", "run"])
def test_offline_with_an_empty_cache_names_what_is_missing(
    tiny: Path, empty_cache: Path, command: str
) -> None:
    args = [command, str(tiny), *([str(tiny.with_name("o.parquet"))] if command == "run" else [])]
    code, _, err = cli(*args, "--backend", "onnxruntime==1.20.1", "--offline")
    assert code == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    folder = environment_folder(parse_package_spec("onnxruntime==1.20.1"))
    assert lines[0].startswith(f"onnx-arrow: error: {folder}: the environment of the backend ")
    assert "--offline forbids making it (pip install onnxruntime==1.20.1 onnx==" in lines[0]
    assert not empty_cache.exists()
    assert not tiny.with_name("o.parquet").exists()


def test_offline_with_the_cache_off_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ONNX_ARROW_CACHE_DIR", "off")
    with pytest.raises(VirtualEnvironmentError, match="the cache is off"):
        EnvironmentBackend("onnxruntime==1.20.1", offline=True)


# --- its process, in a small environment of no package (onnx missing there) --------------


@pytest.fixture(scope="module")
def bare(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An environment of no package (made without pip: fast), to copy into a cache."""
    folder = tmp_path_factory.mktemp("bare") / "env"
    cached_environment(folder, [], offline=False, what="the tests")
    return folder


@pytest.fixture
def no_onnx(bare: Path, empty_cache: Path) -> Iterator[EnvironmentBackend]:
    """``onnx==1.17.0`` (the reference evaluator) over the bare environment, put in the
    cache in its place: its process starts, and says onnx does not import there."""
    spec = parse_package_spec("onnx==1.17.0")
    folder = environment_folder(spec)
    assert folder is not None
    shutil.copytree(bare, folder, symlinks=True)
    backend = EnvironmentBackend(spec, offline=True)
    yield backend
    backend.close()


def _tiny_model() -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    graph = helper.make_graph([helper.make_node("Abs", ["x"], ["y"])], "g", [x], [y])
    return helper.make_model(graph), {"x": np.array([-1.0, 2.0], np.float32)}


def test_its_process_answers_and_its_errors_are_the_data_set_s(
    no_onnx: EnvironmentBackend,
) -> None:
    model, feed = _tiny_model()
    assert no_onnx.check() is no_onnx  # started: the backend loads (reference: nothing yet)
    with pytest.raises(BackendPrepareError, match="No module named 'onnx'") as info:
        no_onnx(model, feed)
    assert info.value.message.startswith("reference.prepare(model, 'CPU') raised ModuleNotFound")
    proc = no_onnx._proc
    assert proc is not None
    os.killpg(proc.process.pid, signal.SIGKILL)  # dies: that data set's error
    with pytest.raises(RunnerError, match=r"onnx==1.17.0's environment was killed by SIGKILL"):
        no_onnx(model, feed)
    assert not proc.folder.exists()
    with pytest.raises(BackendPrepareError):  # a new process
        no_onnx(model, feed)


def test_a_python_replaced_between_two_starts_is_refused(no_onnx: EnvironmentBackend) -> None:
    model, feed = _tiny_model()
    no_onnx.check()
    python = no_onnx.folder / "bin" / "python"
    python.unlink()
    python.write_text("#!/bin/sh\nexit 0\n")
    python.chmod(0o755)
    no_onnx.close()  # the next data set starts its Python again: checked first
    with pytest.raises(VirtualEnvironmentError, match="replaced since") as info:
        no_onnx(model, feed)
    assert info.value.where == str(python)


def test_a_module_that_is_not_there_fails_before_any_case(bare: Path, empty_cache: Path) -> None:
    spec = parse_package_spec("onnx==1.17.0:no_such_module.backend")
    folder = environment_folder(spec)
    assert folder is not None
    shutil.copytree(bare, folder, symlinks=True)
    backend = EnvironmentBackend(spec, offline=True)
    with pytest.raises(BackendSpecError, match="does not load in its environment") as info:
        backend.check()
    assert "ModuleNotFoundError: No module named 'no_such_module'" in info.value.message


def test_the_server_reads_and_writes_values_as_the_model_declares(tmp_path: Path) -> None:
    """The script the environment runs, here in this process with the installed onnx: a
    string tensor fed as str, a sequence given back, as the model says; a run that raises
    is that request's error."""
    from onnx_arrow.compare import environment_server

    s = helper.make_tensor_value_info("s", TensorProto.STRING, [2])
    out = helper.make_tensor_sequence_value_info("q", TensorProto.STRING, None)
    node = helper.make_node("SequenceConstruct", ["s"], ["q"])
    graph = helper.make_graph([node], "g", [s], [out])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, tmp_path / "model.onnx")
    value = numpy_helper.from_array(np.array([b"a", b"bc"], dtype=object), "s")
    (tmp_path / "input_0.pb").write_bytes(value.SerializeToString())
    (tmp_path / "out").mkdir()
    request = {
        "model": str(tmp_path / "model.onnx"),
        "inputs": [["s", str(tmp_path / "input_0.pb")]],
        "outputs": str(tmp_path / "out"),
    }
    assert environment_server._Server("reference", "CPU").answer(request) == {"outputs": 1}
    written = onnx.SequenceProto()
    written.ParseFromString((tmp_path / "out" / "output_0.pb").read_bytes())
    assert [t.string_data for t in written.tensor_values] == [[b"a", b"bc"]]
    reply = environment_server._Server("reference", "CPU").answer({**request, "inputs": []})
    assert reply["stage"] == "run"
    assert "s" in reply["error"]  # the input not fed


# --- the real thing (slow): onnxruntime 1.20.1 from the index -------------------------------


@pytest.fixture(scope="module")
def old_ort(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EnvironmentBackend]:
    """onnxruntime 1.20.1 in an environment made cold into a cache of its own."""
    cache = tmp_path_factory.mktemp("env-cache")
    before = os.environ.get("ONNX_ARROW_CACHE_DIR")
    os.environ["ONNX_ARROW_CACHE_DIR"] = str(cache)
    try:
        backend = EnvironmentBackend(f"onnxruntime=={OLD_ORT}").check()
        yield backend
        backend.close()
    finally:
        if before is None:
            del os.environ["ONNX_ARROW_CACHE_DIR"]
        else:
            os.environ["ONNX_ARROW_CACHE_DIR"] = before


@pytest.mark.slow
@network
def test_an_older_onnxruntime_runs_node_cases_in_its_environment(
    old_ort: EnvironmentBackend, store: Store
) -> None:
    assert old_ort.packages["onnxruntime"] == OLD_ORT
    record = (old_ort.folder / RECORD).read_bytes()
    report = compare.compare(store, old_ort)
    made = report.provenance["backend"]
    assert made["name"] == f"onnxruntime=={OLD_ORT}"
    assert made["runs"].startswith(f"onnxruntime {OLD_ORT} (onnxruntime.backend, device CPU)")
    assert made["environment"]["packages"]["onnxruntime"] == OLD_ORT
    assert made["environment"]["packages"]["onnx"] == onnx.__version__
    df = report.to_pandas().set_index("case")
    assert df.loc["node/test_abs", "status"] == "match"
    assert df.loc["node/test_add", "status"] == "match"
    # the same verdicts from worker processes (forked after its process started), each
    # starting (and checking) its own
    again = compare.compare(store, old_ort, jobs=2).to_pandas()
    assert (
        again[["case", "status"]].values.tolist()
        == df.reset_index()[["case", "status"]].values.tolist()
    )
    # warm: the cached environment taken as it is, nothing installed again
    warm = EnvironmentBackend(f"onnxruntime=={OLD_ORT}", offline=True)
    assert warm.folder == old_ort.folder
    assert (warm.folder / RECORD).read_bytes() == record
    assert compare.compare(store, warm).to_pandas()["status"].tolist() == df["status"].tolist()
    warm.close()


@pytest.mark.slow
@network
def test_a_killed_environment_process_is_one_error_and_started_again(
    old_ort: EnvironmentBackend, store: Store
) -> None:
    case = store.case("node/test_abs")
    model = case.model
    assert model is not None
    feed = {"x": case.sets[0].inputs[0].to_numpy().copy()}
    assert len(old_ort(model, feed)) == 1
    proc = old_ort._proc
    assert proc is not None
    os.killpg(proc.process.pid, signal.SIGKILL)
    with pytest.raises(RunnerError, match=r"was killed by SIGKILL|ended"):
        old_ort(model, feed)
    assert len(old_ort(model, feed)) == 1  # a new process, the environment checked again


@pytest.mark.slow
@network
def test_the_command_line_runs_and_records_the_version(
    old_ort: EnvironmentBackend, store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ONNX_ARROW_CACHE_DIR", str(old_ort.folder.parent.parent))
    spec = f"onnxruntime=={OLD_ORT}"
    out = tmp_path / "actual.parquet"
    code, _, err = cli("run", str(store.path), str(out), "--backend", spec, "--offline")
    assert code == 0, err
    made = Store(out).metadata["provenance"]["backend"]
    assert made["name"] == spec
    assert made["environment"]["packages"]["onnxruntime"] == OLD_ORT
    code, text, err = cli("compare", str(store.path), "--backend", spec, "--case", "test_abs")
    assert code == 0, err
    assert f"onnxruntime=={OLD_ORT} (onnxruntime {OLD_ORT} (onnxruntime.backend" in text
    assert "making the environment" not in err


@pytest.mark.slow
@network
def test_the_pytest_plugin_runs_it(
    old_ort: EnvironmentBackend, store: Store, tmp_path: Path
) -> None:
    root = Path(__file__).parents[2]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(root), str(root / "tests")]),
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "ONNX_ARROW_CACHE_DIR": str(old_ort.folder.parent.parent),
    }
    command = [sys.executable, "-m", "pytest", "-p", "onnx_arrow.pytest_plugin", "-v"]
    command += ["-p", "no:cacheprovider", "--onnx-store", str(store.path)]
    command += ["--onnx-backend", f"onnxruntime=={OLD_ORT}", "-k", "test_abs or test_add"]
    done = subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, check=False, timeout=600
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"node/test_abs PASSED", done.stdout)
    assert re.search(r"node/test_add PASSED", done.stdout)


def test_a_spec_past_what_a_pin_or_a_folder_name_holds_is_refused_or_named_short(
    empty_cache: Path, tiny: Path
) -> None:
    huge = "onnxruntime==" + "9" * 3000  # a folder name past every file system's 255 bytes
    with pytest.raises(BackendSpecError, match=r"a pin of 3013 characters \(at most 120"):
        parse_package_spec(huge)
    with pytest.raises(BackendSpecError, match="more than 16 pins"):
        parse_package_spec(",".join(f"p{k}==1.0" for k in range(17)))
    many = parse_package_spec(
        ",".join(
            ["onnxruntime==1.20.1", *(f"a-package-of-a-long-name-{k}==1.0.0" for k in range(15))]
        )
    )
    folder = environment_folder(many)
    assert folder is not None
    assert len(folder.name) <= 200  # named by the pins' digest
    assert folder.name.startswith("onnxruntime-")
    assert folder.name.endswith(f"-py{sys.version_info[0]}.{sys.version_info[1]}")
    code, _, err = cli("compare", str(tiny), "--backend", huge)  # said, not an OSError
    assert code == 2
    assert "a pin of 3013 characters" in err
    assert "File name too long" not in err


def test_the_server_feeds_strings_as_compare_feeds_them() -> None:
    """The script's copy of the rule (it runs where onnx-arrow is not installed)."""
    from onnx_arrow.compare import environment_server
    from onnx_arrow.compare.feeds import strings_as_str

    values = [
        np.array([b"ab", "c", b"\xff"], dtype=object),
        np.array([b"x", b"yz"]),
        [np.array([b"s"], dtype=object), [np.array([b"t"], dtype=object)]],
        np.arange(3.0),
        None,
    ]
    for value in values:
        ours, theirs = environment_server._as_str(value), strings_as_str(value)
        assert repr(ours) == repr(theirs)
