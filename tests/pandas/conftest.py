"""The store the pandas tests read: the node suite the installed onnx builds, once."""

from __future__ import annotations

from pathlib import Path

import pytest

from onnx_arrow.corpus import NodeSuiteSource, write_store


@pytest.fixture(scope="session")
def node_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("pandas") / "node.parquet"
    write_store(NodeSuiteSource(), path)
    return path
