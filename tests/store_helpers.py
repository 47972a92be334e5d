"""Helpers shared by the store tests: small corpora, trees as bytes, exact equality."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from onnx import ModelProto, TensorProto, helper, numpy_helper, save_model


def tree_bytes(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def small_corpus(root: Path) -> Path:
    case = root / "node" / "test_tiny"
    (case / "test_data_set_0").mkdir(parents=True)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    model = helper.make_model(
        helper.make_graph([helper.make_node("Abs", ["x"], ["y"])], "g", [x], [y])
    )
    save_model(model, case / "model.onnx")
    data = numpy_helper.from_array(np.array([-1.0, 2.0], np.float32), "x").SerializeToString()
    (case / "test_data_set_0" / "input_0.pb").write_bytes(data)
    (case / "test_data_set_0" / "output_0.pb").write_bytes(
        numpy_helper.from_array(np.array([1.0, 2.0], np.float32), "y").SerializeToString()
    )
    (case / "README").write_text("not a value\n")
    return root


def same(a: Any, b: Any) -> bool:
    """Equal in kind, structure, dtype, shape and bytes (NaN payloads included)."""
    if isinstance(a, np.ndarray):
        return (
            isinstance(b, np.ndarray)
            and a.dtype == b.dtype
            and a.shape == b.shape
            and (a.tobytes() == b.tobytes() if a.dtype != object else a.tolist() == b.tolist())
        )
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(same, a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return a is None and b is None


def one_data_set_case(
    name: str, model: Any, x: np.ndarray[Any, Any], y: np.ndarray[Any, Any]
) -> Any:
    """A case of ``model`` (an ``onnx.ModelProto``) with one data set: input ``x`` and
    expected output ``y``, as onnx's test-data writer serializes them."""
    from onnx_arrow.corpus import Case, CorpusFile

    files = [
        CorpusFile(f"{name}/model.onnx", model.SerializeToString()),
        CorpusFile(
            f"{name}/test_data_set_0/input_0.pb",
            numpy_helper.from_array(x, "x").SerializeToString(),
        ),
        CorpusFile(
            f"{name}/test_data_set_0/output_0.pb",
            numpy_helper.from_array(y, "y").SerializeToString(),
        ),
    ]
    return Case(name, name.split("/", 1)[0], files, files[0].path)


def rewrite(src: Path, dst: Path, change: Any) -> None:
    """Write ``src``'s table, as ``change`` returns it, to ``dst``."""
    import pyarrow.parquet as pq

    table = pq.read_table(src)
    table = change(table)
    pq.write_table(table, dst)


def scattered_store(tmp_path: Path) -> tuple[Path, Path, list[int]]:
    """A store of :func:`small_corpus` (and a case ``node`` of one loose ``.pb`` file) written by
    onnx-arrow, the same rows with one row of ``node/test_tiny`` first, then the other
    case, then the rest of ``node/test_tiny`` (a store onnx-arrow did not write), and the
    rows of ``node/test_tiny`` in the first: ``(store, scattered, tiny)``."""
    import pyarrow.parquet as pq

    from onnx_arrow.corpus import FolderSource, write_store

    root = small_corpus(tmp_path / "src")
    (root / "node" / "loose.pb").write_text("a case of its own: node\n")
    path, scattered = tmp_path / "store.parquet", tmp_path / "scattered.parquet"
    write_store(FolderSource(root), path)
    table = pq.read_table(path)
    tiny = [i for i, c in enumerate(table.column("test_case").to_pylist()) if c != "node"]
    other = [i for i in range(table.num_rows) if i not in tiny]
    rewrite(path, scattered, lambda t: t.take(tiny[:1] + other + tiny[1:]))
    return path, scattered, tiny


def float_case(name: str, elements: int) -> Any:
    """A case of one float tensor of ``elements`` elements, fed through an empty graph."""
    from onnx_arrow.corpus import Case, CorpusFile

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [elements])
    model = helper.make_model(helper.make_graph([], "g", [x], [x]))
    data = numpy_helper.from_array(np.arange(elements, dtype=np.float32), "x").SerializeToString()
    files = [
        CorpusFile(f"{name}/model.onnx", model.SerializeToString()),
        CorpusFile(f"{name}/test_data_set_0/input_0.pb", data),
    ]
    return Case(name, "node", files, f"{name}/model.onnx")


def sum_model(inputs: int = 1, *, weights: int = 0) -> ModelProto:
    """A model summing ``inputs`` float inputs and ``weights`` initializers, the weights
    listed among the graph inputs as older models list them."""
    names = [f"x{k}" for k in range(inputs)] + [f"w{k}" for k in range(weights)]
    infos = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2]) for n in names]
    init = [
        numpy_helper.from_array(np.zeros(2, np.float32), f"w{k}") for k in range(weights)
    ]  # older models list their weights among the graph inputs
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    graph = helper.make_graph(
        [helper.make_node("Sum", names, ["y"])], "g", infos, [y], initializer=init
    )
    return helper.make_model(graph)
