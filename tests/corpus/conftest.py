"""Fixtures of the corpus tests: the node suite written to one store, once per run."""

from __future__ import annotations

import pytest

from onnx_arrow.corpus import NodeSuiteSource, write_store


@pytest.fixture(scope="session")
def node_store(tmp_path_factory):
    cases = list(NodeSuiteSource())
    path = tmp_path_factory.mktemp("node") / "node.parquet"
    summary = write_store(cases, path)
    return cases, path, summary
