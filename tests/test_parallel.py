"""compare and run over several processes, Dask and Ray: the same report as one process,
and a case that crashes or hangs its worker is that case's error."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from store_helpers import small_corpus

from onnx_arrow.cli import main
from onnx_arrow.compare import compare, reference_backend, write_actual
from onnx_arrow.corpus import FolderSource, NodeSuiteSource, Store, write_dataset, write_store
from onnx_arrow.corpus.options import WriteOptions
from onnx_arrow.errors import CompareError, EngineError
from onnx_arrow.parallel import GRACE, map_cases

#: Operators whose outputs are random: two runs in one process differ too.
_RANDOM = {"Bernoulli", "RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike"}


@pytest.fixture(scope="module")
def node_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("parallel") / "node"
    write_dataset(NodeSuiteSource(), out, part_cases=700, options=WriteOptions(row_group_cases=64))
    return out


@pytest.fixture(scope="module")
def serial(node_store: Path) -> pd.DataFrame:
    return compare(node_store).to_pandas()


def _deterministic(df: pd.DataFrame) -> pd.DataFrame:
    keep = [not (set(ops) & _RANDOM) for ops in df["op_types"]]
    return df[keep].reset_index(drop=True)


@pytest.mark.parametrize(
    ("engine", "jobs"),
    [
        (None, 2),
        ("processes", 2),
        # the node suite on Dask's and Ray's clusters: 7 to 13 s each; both engines keep
        # their default tests below (a crashed worker, the timeout)
        pytest.param("dask", 2, marks=pytest.mark.slow),
        pytest.param("ray", 2, marks=pytest.mark.slow),
    ],
)
def test_a_parallel_compare_of_the_node_suite_is_the_serial_one(
    node_store: Path, serial: pd.DataFrame, engine: str | None, jobs: int
) -> None:
    if engine in ("dask", "ray"):
        pytest.importorskip("distributed" if engine == "dask" else "ray")
    seen: list[str] = []
    df = compare(node_store, jobs=jobs, engine=engine, progress=seen.append).to_pandas()
    assert len(df) == len(serial) > 2000
    assert sorted(seen) == sorted(Store(node_store).cases())
    assert (serial["status"] == "match").sum() > 1800
    pd.testing.assert_frame_equal(_deterministic(df), _deterministic(serial))
    assert list(df["case"]) == list(serial["case"])  # random ops: only their numbers differ


@pytest.mark.slow  # 9 s: four compares and runs of 100 cases; the tables are held equal above
def test_the_report_file_is_the_same_bytes(
    node_store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = ["--case", "node/test_a*", "--case", "node/test_sequence*"]
    args = ["compare", str(node_store), *cases]
    assert main([*args, "--out", str(tmp_path / "one.parquet")]) == 0
    assert main([*args, "--jobs", "2", "--out", str(tmp_path / "two.parquet")]) == 0
    assert (tmp_path / "one.parquet").read_bytes() == (tmp_path / "two.parquet").read_bytes()
    assert main(["run", str(node_store), str(tmp_path / "a1.parquet"), *cases]) == 0
    run_args = ["run", str(node_store), str(tmp_path / "a2.parquet"), *cases, "--jobs", "2"]
    assert main(run_args) == 0
    one, two = Store(tmp_path / "a1.parquet"), Store(tmp_path / "a2.parquet")
    assert [f.data for f in one.files()] == [f.data for f in two.files()]
    capsys.readouterr()


# --- backends that crash or hang their worker -------------------------------------------


def _backends() -> dict[str, Any]:
    """Backends that crash, hang or spin on the graph named 'crash'.  Built in a function,
    so that Dask and Ray pickle them by value (their workers cannot import this module)."""

    def crashing(model: Any, inputs: dict[str, Any]) -> list[Any]:
        if model.graph.name == "crash":
            os.kill(os.getpid(), signal.SIGSEGV)
        return reference_backend(model, inputs)

    def stuck(model: Any, inputs: dict[str, Any]) -> list[Any]:
        if model.graph.name == "crash":
            # SIGALRM blocked: as a backend stuck in native code, the timeout cannot stop it
            signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGALRM])
            time.sleep(3600)
        return reference_backend(model, inputs)

    def spinning(model: Any, inputs: dict[str, Any]) -> list[Any]:
        while model.graph.name == "crash":
            pass
        return reference_backend(model, inputs)

    def name_length(store: Store, case: str) -> int:
        return len(case)

    return {"crashing": crashing, "stuck": stuck, "spinning": spinning, "length": name_length}


_BACKENDS = _backends()
_crashing, _stuck, _spinning = _BACKENDS["crashing"], _BACKENDS["stuck"], _BACKENDS["spinning"]
_name_length = _BACKENDS["length"]


@pytest.fixture(scope="module")
def three_cases(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three cases; the middle one's graph is named 'crash'."""
    import onnx

    root = tmp_path_factory.mktemp("three")
    small_corpus(root / "src")
    case = root / "src" / "node" / "test_tiny"
    for name in ("test_a", "test_b", "test_c"):
        copy = root / "src" / "node" / name
        copy.mkdir()
        for f in case.rglob("*"):
            target = copy / f.relative_to(case)
            if f.is_dir():
                target.mkdir()
            elif f.name == "model.onnx" and name == "test_b":
                model = onnx.load(f)
                model.graph.name = "crash"
                onnx.save(model, target)
            else:
                target.write_bytes(f.read_bytes())
    for f in sorted(case.rglob("*"), reverse=True):
        f.rmdir() if f.is_dir() else f.unlink()
    case.rmdir()
    write_store(FolderSource(root / "src"), root / "store.parquet")
    return root / "store.parquet"


def _by_case(df: pd.DataFrame) -> dict[str, tuple[str, str | None]]:
    return {r.case: (r.status, None if pd.isna(r.error) else r.error) for r in df.itertuples()}


@pytest.mark.parametrize("engine", ["processes", "dask", "ray"])
def test_a_case_that_crashes_its_worker_is_its_error(three_cases: Path, engine: str) -> None:
    pytest.importorskip({"processes": "os", "dask": "distributed", "ray": "ray"}[engine])
    df = compare(three_cases, _crashing, jobs=2, engine=engine).to_pandas()
    got = _by_case(df)
    assert got["node/test_a"] == ("match", None)
    assert got["node/test_c"] == ("match", None)
    status, error = got["node/test_b"]
    assert status == "error"
    assert error is not None
    assert error.startswith("CaseLostError: the ")
    assert "died" in error
    if engine == "processes":
        assert "SIGSEGV" in error


@pytest.mark.slow  # 11 s, most of it the grace a stuck worker is given
def test_a_case_stuck_outside_python_is_stopped_and_reported(three_cases: Path) -> None:
    start = time.monotonic()
    df = compare(three_cases, _stuck, jobs=2, timeout=0.5).to_pandas()
    assert time.monotonic() - start < 0.5 + GRACE + 20
    got = _by_case(df)
    assert got["node/test_a"] == got["node/test_c"] == ("match", None)
    assert got["node/test_b"][1] is not None
    assert "did not return within 0.5 s" in got["node/test_b"][1]


@pytest.mark.parametrize("engine", ["processes", "dask", "ray"])
def test_the_timeout_holds_on_every_engine(three_cases: Path, engine: str) -> None:
    """Dask runs tasks on a worker thread, where SIGALRM cannot reach them."""
    pytest.importorskip({"processes": "os", "dask": "distributed", "ray": "ray"}[engine])
    got = _by_case(compare(three_cases, _spinning, jobs=2, engine=engine, timeout=1).to_pandas())
    assert got["node/test_b"] == (
        "error",
        "BackendTimeoutError: the backend ran longer than 1 s",
    )
    assert got["node/test_a"] == ("match", None)


def test_run_on_a_lost_case_keeps_the_message(three_cases: Path, tmp_path: Path) -> None:
    counts = write_actual(three_cases, _crashing, tmp_path / "actual.parquet", jobs=2)
    assert counts["errors"] == 1
    errors = [
        f for f in Store(tmp_path / "actual.parquet").files() if f.path.endswith(".error.txt")
    ]
    assert [f.path for f in errors] == ["node/test_b/test_data_set_0/output_0.error.txt"]
    assert errors[0].data.startswith(b"CaseLostError: the worker process running the case died")


def test_map_cases_gives_results_in_order_and_refuses_unknown_engines(
    three_cases: Path,
) -> None:
    store = Store(three_cases)
    cases = store.cases()
    results = list(map_cases(_name_length, store, cases, jobs=2))
    assert results == [(c, len(c)) for c in cases]
    with pytest.raises(Exception, match=r"no engine 'spark'"):
        list(map_cases(_name_length, store, cases, engine="spark"))


def test_an_unknown_engine_is_an_engine_error(three_cases: Path) -> None:
    store = Store(three_cases)
    message = r"^no engine 'spark'; expected one of processes, dask, ray$"
    with pytest.raises(EngineError, match=message) as err:
        list(map_cases(_name_length, store, store.cases(), engine="spark"))
    assert not isinstance(err.value, CompareError)
