"""The store of node-suite cases the tests of the compare package share, built once."""

from __future__ import annotations

import pytest
from compare_helpers import GOOD, RAISES, WRONG_SHAPE

from onnx_arrow.corpus import NodeSuiteSource, Store, write_store


@pytest.fixture(scope="session")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    wanted = {f"node/{n}" for n in (*GOOD, RAISES, WRONG_SHAPE)}
    cases = [c for c in NodeSuiteSource() if c.name in wanted]
    assert len(cases) == len(wanted)
    path = tmp_path_factory.mktemp("compare") / "node.parquet"
    write_store(cases, path)
    return Store(path)
