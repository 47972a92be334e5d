"""A store of a few node-suite cases and two compare reports of it, one runtime in two
versions (the reference evaluator as 1.0, a planted-bug backend as 1.1), made once."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from results_helpers import CASES, PLANTED_MODULE, PLANTED_SOURCE

from onnx_arrow import compare
from onnx_arrow.corpus import NodeSuiteSource, Store, write_store
from onnx_arrow.reports import Report


@pytest.fixture(scope="session")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The planted-bug backend's spec, its module importable."""
    folder = tmp_path_factory.mktemp("planted")
    (folder / f"{PLANTED_MODULE}.py").write_text(PLANTED_SOURCE)
    sys.path.insert(0, str(folder))
    yield f"{PLANTED_MODULE}:backend"
    sys.path.remove(str(folder))
    sys.modules.pop(PLANTED_MODULE, None)


@pytest.fixture(scope="session")
def node_store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    cases = [c for c in NodeSuiteSource() if c.name in CASES]
    assert len(cases) == len(CASES)
    path = tmp_path_factory.mktemp("results") / "node.parquet"
    write_store(cases, path)
    return Store(path)


@pytest.fixture(scope="session")
def reports(node_store: Store, planted: str) -> tuple[Report, Report]:
    """Compare reports of version 1.0 (the reference) and 1.1 (the planted bug)."""
    old = compare.compare(node_store, "reference", runtime="mine==1.0")
    new = compare.compare(node_store, planted, runtime="mine==1.1")
    return old, new


@pytest.fixture(scope="session")
def both_runs(tmp_path_factory: pytest.TempPathFactory, reports: tuple[Report, Report]) -> Path:
    """A results store of both runs, made once (tests take a copy)."""
    from onnx_arrow import results

    path = tmp_path_factory.mktemp("both") / "results"
    for report in reports:
        results.add(path, report)
    return path


@pytest.fixture
def results_dir(tmp_path: Path, both_runs: Path) -> Path:
    """A results store of both runs, this test's own."""
    return Path(shutil.copytree(both_runs, tmp_path / "results"))
