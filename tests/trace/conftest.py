"""The store of default-corpus cases the tests of the trace package share, built once."""

from __future__ import annotations

import pytest

from onnx_arrow.corpus import Store, default_source, write_store

#: Multi-node cases of the node suite, nodes holding graphs, and a light/ model.
CASES = (
    "node/test_layer_normalization_4d_axis1_expanded",
    "node/test_layer_normalization_default_axis_expanded_ver18",
    "node/test_if",
    "node/test_if_seq",
    "node/test_loop11",
    "node/test_scan9_sum",
    "node/test_gemm_default_scalar_bias",
    "light/light_squeezenet",
)


@pytest.fixture(scope="session")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    path = tmp_path_factory.mktemp("trace") / "corpus.parquet"
    write_store(default_source(cases=CASES), path)
    return Store(path)
