"""onnxruntime as a backend: providers and session options checked, and every element
type it takes fed and handed back exactly, the types numpy lacks through OrtValues."""

from __future__ import annotations

import math
import pickle
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto, helper

from onnx_arrow import compare as cmp
from onnx_arrow.compare.ort import parse_session_option
from onnx_arrow.corpus import NodeSuiteSource, Store, write_store

ort = pytest.importorskip("onnxruntime")

#: The element types numpy has no type for, that onnxruntime's CPU Cast takes, with
#: values (each rounded to the type before it is used).
OWN_TYPES = {
    "BFLOAT16": (ml_dtypes.bfloat16, [1.5, -2.0, 0.0, 3.0e38, -1e-30]),  # rounded first
    "FLOAT8E4M3FN": (ml_dtypes.float8_e4m3fn, [1.5, -2.0, 0.0, 448.0, -0.015625]),
    "FLOAT8E4M3FNUZ": (ml_dtypes.float8_e4m3fnuz, [1.5, -2.0, 0.0, 240.0, -0.0078125]),
    "FLOAT8E5M2": (ml_dtypes.float8_e5m2, [1.5, -2.0, 0.0, 57344.0, -0.5]),
    "FLOAT8E5M2FNUZ": (ml_dtypes.float8_e5m2fnuz, [1.5, -2.0, 0.0, 57344.0, -0.5]),
    "INT4": (ml_dtypes.int4, [-8, 7, 0, -1, 3]),
    "UINT4": (ml_dtypes.uint4, [0, 15, 1, 8, 3]),
    "INT2": (ml_dtypes.int2, [-2, 1, 0, -1, 1]),
    "UINT2": (ml_dtypes.uint2, [0, 3, 1, 2, 3]),
}


def _cast(source: int, target: int, shape: list[int]) -> object:
    graph = helper.make_graph(
        [helper.make_node("Cast", ["x"], ["y"], to=target)],
        "cast",
        [helper.make_tensor_value_info("x", source, shape)],
        [helper.make_tensor_value_info("y", target, shape)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)], ir_version=11)


@pytest.mark.parametrize("name", list(OWN_TYPES))
@pytest.mark.parametrize("shape", [[5], [1, 5], []])
def test_a_type_numpy_lacks_goes_in_and_out_exactly(name: str, shape: list[int]) -> None:
    dtype, values = OWN_TYPES[name]
    onnx_type = getattr(TensorProto, name)
    x = np.array(values, dtype=dtype).astype(np.float32)  # exact in both
    x = x[: math.prod(shape)].reshape(shape)
    # out: FLOAT to the type, handed back as the ml_dtypes dtype, never as raw bytes
    (y,) = cmp.onnxruntime_backend(_cast(TensorProto.FLOAT, onnx_type, shape), {"x": x})
    assert y.dtype == np.dtype(dtype)
    assert y.shape == tuple(shape)
    assert y.tobytes() == x.astype(dtype).tobytes()
    # in: the type to FLOAT, fed as an OrtValue of its ONNX type
    fed = x.astype(dtype)
    (back,) = cmp.onnxruntime_backend(_cast(onnx_type, TensorProto.FLOAT, shape), {"x": fed})
    np.testing.assert_array_equal(back, x)
    # and both ways at once, with a tensor numpy has beside them
    (same,) = cmp.onnxruntime_backend(_cast(onnx_type, onnx_type, shape), {"x": fed})
    assert same.shape == fed.shape
    assert same.tobytes() == fed.tobytes()


def test_an_odd_count_of_packed_elements_and_an_empty_tensor() -> None:
    x = np.array([[-8, 7, 1], [2, -3, 0], [5, 6, -1]], dtype=ml_dtypes.int4)  # 9 nibbles
    (y,) = cmp.onnxruntime_backend(_cast(TensorProto.INT4, TensorProto.INT8, [3, 3]), {"x": x})
    np.testing.assert_array_equal(y, x.astype(np.int8))
    (z,) = cmp.onnxruntime_backend(_cast(TensorProto.INT8, TensorProto.INT4, [3, 3]), {"x": y})
    assert z.dtype == np.dtype(ml_dtypes.int4)
    np.testing.assert_array_equal(z.astype(np.int8), y)
    empty = np.zeros((0, 4), dtype=ml_dtypes.bfloat16)
    model = _cast(TensorProto.BFLOAT16, TensorProto.BFLOAT16, [0, 4])
    (e,) = cmp.onnxruntime_backend(model, {"x": empty})
    assert e.shape == (0, 4)
    assert e.dtype == np.dtype(ml_dtypes.bfloat16)


#: Node-suite cases onnxruntime erred on for the conversion alone (bfloat16, float8, int4
#: and int2 inputs; float8e4m3fn outputs came back as raw uint8, a dtype_mismatch).
USED_TO_ERR = [
    "node/test_cast_BFLOAT16_to_FLOAT",
    "node/test_cast_FLOAT_to_BFLOAT16",
    "node/test_cast_FLOAT_to_FLOAT8E4M3FN",
    "node/test_cast_FLOAT8E5M2FNUZ_to_FLOAT16",
    "node/test_cast_no_saturate_FLOAT16_to_FLOAT8E5M2",
    "node/test_cast_INT4_to_FLOAT",
    "node/test_cast_UINT2_to_UINT8",
    "node/test_cast_e8m0_FLOAT_to_FLOAT8E8M0",
    "node/test_castlike_FLOAT8E4M3FNUZ_to_FLOAT",
    "node/test_einsum_batch_matmul_bfloat16",
    "node/test_unique_bfloat16_sorted_without_axis",
]


@pytest.fixture(scope="module")
def used_to_err(tmp_path_factory: pytest.TempPathFactory) -> Store:
    cases = [c for c in NodeSuiteSource() if c.name in USED_TO_ERR]
    assert len(cases) == len(USED_TO_ERR)
    path = tmp_path_factory.mktemp("ort") / "types.parquet"
    write_store(cases, path)
    return Store(path)


def test_node_cases_that_erred_for_the_conversion_now_match(used_to_err: Store) -> None:
    df = cmp.compare(used_to_err, "onnxruntime").to_pandas()
    assert set(df.case) == set(USED_TO_ERR)
    assert (df.status == "match").all(), df[df.status != "match"][["case", "status", "error"]]
    assert (df.dtype_expected == df.dtype_actual).all()


def test_providers_are_checked_and_the_available_ones_named() -> None:
    with pytest.raises(
        cmp.BackendSpecError,
        match=r"'NopeExecutionProvider' is not available.*"
        r"available: .*CPUExecutionProvider",
    ):
        cmp.OnnxruntimeBackend(providers=["NopeExecutionProvider"]).check()
    with pytest.raises(cmp.BackendSpecError, match="no execution provider given"):
        cmp.OnnxruntimeBackend(providers=[]).check()
    chosen = cmp.OnnxruntimeBackend(providers=["CPUExecutionProvider"]).check()
    assert chosen.providers == ("CPUExecutionProvider",)
    joined = cmp.OnnxruntimeBackend(providers="AzureExecutionProvider, CPUExecutionProvider")
    assert joined.providers == ("AzureExecutionProvider", "CPUExecutionProvider")
    with pytest.raises(cmp.BackendSpecError, match="session_options: expected a mapping"):
        cmp.OnnxruntimeBackend(session_options=["intra_op_num_threads=1"])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("nope", "1", r"'nope' is not an attribute .* intra_op_num_threads"),
        ("add_initializer", "1", "is not an attribute"),  # a method, not an attribute
        ("intra_op_num_threads", "two", "expected a whole number"),
        ("intra_op_num_threads", True, "expected a whole number"),
        ("use_deterministic_compute", "maybe", "expected true or false"),
        ("graph_optimization_level", "fast", "expected one of ORT_DISABLE_ALL"),
        ("execution_mode", "7", "expected one of ORT_SEQUENTIAL"),
    ],
)
def test_a_session_option_that_is_not_valid_is_refused(
    key: str, value: object, message: str
) -> None:
    with pytest.raises(cmp.BackendSpecError, match=message):
        cmp.OnnxruntimeBackend(session_options={key: value}).check()


def test_session_options_reach_the_session(tmp_path: Path) -> None:
    """optimized_model_filepath makes the session write the model it optimized."""
    written = tmp_path / "optimized.onnx"
    options = {
        "optimized_model_filepath": str(written),
        "graph_optimization_level": "enable_basic",
        "intra_op_num_threads": "1",
        "use_deterministic_compute": "true",
        "session.intra_op.allow_spinning": "0",
        "execution_mode": ort.ExecutionMode.ORT_SEQUENTIAL,
    }
    backend = cmp.OnnxruntimeBackend(["CPUExecutionProvider"], options).check()
    x = np.array([1.0, -2.0], dtype=np.float32)
    (y,) = backend(_cast(TensorProto.FLOAT, TensorProto.DOUBLE, [2]), {"x": x})
    np.testing.assert_array_equal(y, x.astype(np.float64))
    assert written.stat().st_size > 0


def test_a_session_is_made_once_per_model_and_never_pickled() -> None:
    backend = cmp.OnnxruntimeBackend()
    model = _cast(TensorProto.FLOAT, TensorProto.DOUBLE, [2])
    x = np.ones(2, np.float32)
    backend(model, {"x": x})
    first = backend._last
    backend(model, {"x": x})
    assert backend._last is first
    copy = pickle.loads(pickle.dumps(backend))
    assert copy._last is None
    assert copy.providers == backend.providers


def test_parse_session_option() -> None:
    assert parse_session_option(" a.b = c=d ") == ("a.b", "c=d")
    for junk in ("intra_op_num_threads", "=1", ""):
        with pytest.raises(cmp.BackendSpecError, match="expected KEY=VALUE"):
            parse_session_option(junk)
