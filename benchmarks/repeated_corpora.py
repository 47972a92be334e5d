"""Corpora of repeated files, in the shapes runtimes keep them, for the benchmarks of the
store's size (``bench_throughput.py --corpora node-twice one-model cutouts``).

* ``node-twice``: the node suite the installed onnx builds, kept twice, under two kind
  folders (``node/`` and ``node2019/``), as cONNXr keeps a copy of the node suite beside its
  own cases;
* ``one-model``: one model (a 256x256 float32 MatMul and a Relu, 256 KiB of weights) under
  40 cases of 3 data sets each, every case with the same ``model.onnx``, their inputs drawn
  from 16 (so that inputs, and the outputs they give, repeat across cases), and one data
  set of each case its own;
* ``cutouts``: per-layer cut-outs of one model of 12 layers (a MatMul and a Relu each, on
  ``[1, 16, 64, 64]`` activations), a case per layer whose input file is byte for byte the
  previous layer's output file (the edge keeps its name), and the whole model as one more
  case whose input and output are the first layer's input and the last layer's output.

Every generator writes the tree once into ``root`` (kept if it exists) and returns it.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["CORPORA", "cutouts_corpus", "node_twice_corpus", "one_model_corpus"]


def _save(path: Path, value: np.ndarray, name: str) -> None:
    from onnx import numpy_helper

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(numpy_helper.from_array(value, name).SerializeToString())


def _layer_model(layers: list[np.ndarray], first: int, shape: list[int]) -> Any:
    """A model of MatMul + Relu layers, the edges named t{k}: from t{first} to
    t{first + len(layers)}."""
    from onnx import TensorProto, helper, numpy_helper

    nodes, inits = [], []
    for k, weights in enumerate(layers, start=first):
        inits.append(numpy_helper.from_array(weights, f"w{k}"))
        nodes.append(helper.make_node("MatMul", [f"t{k}", f"w{k}"], [f"m{k}"]))
        nodes.append(helper.make_node("Relu", [f"m{k}"], [f"t{k + 1}"]))
    last = first + len(layers)
    x = helper.make_tensor_value_info(f"t{first}", TensorProto.FLOAT, shape)
    y = helper.make_tensor_value_info(f"t{last}", TensorProto.FLOAT, shape)
    graph = helper.make_graph(nodes, "layers", [x], [y], initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def node_twice_corpus(root: Path, node: Path) -> Path:
    """The node suite folder ``node`` (a tree with ``node/``) kept twice."""
    if not root.exists():
        shutil.copytree(node / "node", root / "node")
        shutil.copytree(node / "node", root / "node2019")
    return root


def one_model_corpus(root: Path, cases: int = 40, pool: int = 16) -> Path:
    if root.exists():
        return root
    from onnx import save_model

    rng = np.random.default_rng(1)
    weights = (rng.standard_normal((256, 256)) / 16).astype(np.float32)
    model = _layer_model([weights], 0, [1, 256])
    inputs = [rng.standard_normal((1, 256)).astype(np.float32) for _ in range(pool)]
    for c in range(cases):
        case = root / "one_model" / f"test_dense_{c:03d}"
        case.mkdir(parents=True)
        save_model(model, case / "model.onnx")
        for d in range(3):
            x = inputs[rng.integers(pool)] if d < 2 else rng.standard_normal((1, 256))
            x = x.astype(np.float32)
            _save(case / f"test_data_set_{d}" / "input_0.pb", x, "t0")
            _save(case / f"test_data_set_{d}" / "output_0.pb", np.maximum(x @ weights, 0), "t1")
    return root


def cutouts_corpus(root: Path, layers: int = 12) -> Path:
    if root.exists():
        return root
    from onnx import save_model

    rng = np.random.default_rng(2)
    shape = [1, 16, 64, 64]
    weights = [(rng.standard_normal((64, 64)) / 6).astype(np.float32) for _ in range(layers)]
    acts = [rng.standard_normal(shape).astype(np.float32)]
    for w in weights:
        acts.append(np.maximum(acts[-1] @ w, 0).astype(np.float32))
    for k in range(layers):
        case = root / "cutouts" / f"test_layer_{k:02d}"
        case.mkdir(parents=True)
        save_model(_layer_model([weights[k]], k, shape), case / "model.onnx")
        _save(case / "test_data_set_0" / "input_0.pb", acts[k], f"t{k}")
        _save(case / "test_data_set_0" / "output_0.pb", acts[k + 1], f"t{k + 1}")
    whole = root / "cutouts" / "test_whole"
    whole.mkdir(parents=True)
    save_model(_layer_model(weights, 0, shape), whole / "model.onnx")
    _save(whole / "test_data_set_0" / "input_0.pb", acts[0], "t0")
    _save(whole / "test_data_set_0" / "output_0.pb", acts[-1], f"t{layers}")
    return root


#: The corpora this module makes, by the name ``--corpora`` gives them.
CORPORA = ("node-twice", "one-model", "cutouts")
