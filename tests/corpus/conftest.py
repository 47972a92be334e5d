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


@pytest.fixture
def release_cache(tmp_path, monkeypatch):
    """A cache folder of the test's own, and an index nobody answers at (loopback): the
    tests of releases reach the real index only where they say so."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("ONNX_ARROW_CACHE_DIR", str(folder))
    monkeypatch.setenv("ONNX_ARROW_INDEX_URL", "http://127.0.0.1:9/simple")
    return folder
