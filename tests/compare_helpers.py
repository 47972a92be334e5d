"""What the tests of the compare package share: the cases of the node suite they run, and
small stores and backends."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path
from typing import Any

import numpy as np
from onnx import ModelProto, TensorProto, helper, numpy_helper

from onnx_arrow import compare as cmp
from onnx_arrow.cli import main
from onnx_arrow.corpus import write_store

#: Node-suite cases the reference evaluator gets right, and one it gets wrong.
GOOD = (
    "test_abs",
    "test_add",
    "test_cast_FLOAT_to_BFLOAT16",
    "test_sequence_insert_at_back",
    "test_optional_get_element_sequence",
    "test_identity_opt",
    "test_string_concat",
)
#: The reference evaluator has no Scatter (deprecated): it raises.
RAISES = "test_scatter_without_axis"
#: The reference evaluator gives shape [2, 1] where [2] is expected (onnx 1.23).
WRONG_SHAPE = "test_range_float_type_positive_delta_expanded"


def cli(*args: str) -> tuple[int, str, str]:
    """The command line run on ``args``: its exit status, stdout and stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def scaled(factor: float) -> cmp.Backend:
    """A backend that gives input ``x`` times ``factor``."""

    def backend(model: ModelProto, inputs: dict[str, Any]) -> list[Any]:
        return [np.asarray(inputs["x"]) * np.float32(factor)]

    return backend


def stated_store(tmp_path: Path, data_json: str | None) -> Path:
    """A store of one case, Identity of a 2x3 float tensor, with ``data_json`` as its
    ``data.json`` (its own tolerances) when given."""
    from onnx_arrow.corpus import FolderSource

    src = tmp_path / "src"
    case = src / "node" / "test_tiny"
    (case / "test_data_set_0").mkdir(parents=True)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g", [x], [y])
    (case / "model.onnx").write_bytes(helper.make_model(graph).SerializeToString())
    value = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    for stem, name in (("input_0", "x"), ("output_0", "y")):
        data = numpy_helper.from_array(value, name).SerializeToString()
        (case / "test_data_set_0" / f"{stem}.pb").write_bytes(data)
    if data_json is not None:
        (case / "data.json").write_text(data_json)
    path = tmp_path / "store.parquet"
    write_store(FolderSource(src), path)
    return path
