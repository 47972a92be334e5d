"""Where two backends part ways: a case's intermediate values on both, as columns, and the
first node that diverges, written as a case of its own.

An adapter (it imports the corpus store and compare; ``import onnx_arrow`` does not
import this package).

* :func:`trace` runs a case's model on a backend (A) and another (B, the reference
  evaluator unless given), with every value its main graph's nodes make exposed as an
  output, a chunk at a time (peak memory is a chunk's, not the model's), compares each
  value as ``compare`` compares an output (the case's tolerance, or a ULP budget) and
  writes a trace store: one row per value per backend, its data in the corpus store's
  typed columns, its comparison beside it (the module ``store``).  Its metadata says what
  the trace was made from and with (the store and its digest, the backends, the plan), and
  :meth:`Trace.report` gives the rows with it as a report of kind ``trace``.
* The verdict (:class:`Verdict`) is the first node in topological order whose outputs
  diverge while everything it reads agrees and whose divergence reaches a graph output
  the case checks, with the worst elements of its inputs and outputs, the later
  divergences it explains, and apart the divergent values that reach no checked output.
  A value written twice (two nodes, or a node and a graph input) is refused, named.
* A backend that cannot give a chunk's values is run on halves of it until the value it
  cannot give is found and named (module ``exposed``); a runner through files
  (:class:`~onnx_arrow.compare.CommandRunner`) is told the values declared without a
  type by its ``{untyped}`` file.
* :func:`write_repro` writes that node as a one-node model with its inputs and B's
  outputs: a classic case folder that ``compare`` (after ``import``) and any runtime's
  file tests take.

Nodes holding graphs (If, Loop, Scan) and calls of local functions are traced as the
model has them: their outputs are, the values inside their bodies are not (the trace's
metadata lists them under ``untraced``).  Values whose type shape inference does not find
are exposed by name alone, their type left to the backend (``untyped``).

A runtime that optimizes a graph computes what it is asked for: exposing a value can undo
a fusion (onnxruntime fuses nodes only where no one asks for the values between them), so
a trace judges each value as the backend computes it with its chunk exposed, and chunks
of another size can give other bits (onnxruntime on ``light/light_densenet121``: the
data of 576 of its 3,492 rows differ between one chunk and chunks of 64).  For values as
the whole model computes them, turn the runtime's graph optimizations off (an
:class:`~onnx_arrow.compare.OnnxruntimeBackend` with
``session_options={"graph_optimization_level": "ORT_DISABLE_ALL"}``, ``--session-option
graph_optimization_level=ORT_DISABLE_ALL`` on the command line): so run, the same trace
is the same bits in one chunk or in chunks of 64.

The package, one concern a module: ``plan`` (nodes in order, values, chunks), ``exposed``
(a backend on a model with values exposed), ``store`` (the trace store), ``verdict`` (the
first divergent node), ``repro`` (its case folder) and ``run`` (:func:`trace`).

Examples
--------
>>> import tempfile, numpy as np
>>> from onnx import TensorProto, helper, numpy_helper
>>> from onnx_arrow.corpus import Case, CorpusFile, Store, write_store
>>> graph = helper.make_graph(
...     [helper.make_node("Abs", ["x"], ["a"]), helper.make_node("Neg", ["a"], ["y"])], "g",
...     [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
...     [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])])
>>> model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
>>> x = np.array([-1.0, 2.0, 3.0], np.float32)
>>> files = [
...     CorpusFile("simple/abs_neg/model.onnx", model.SerializeToString()),
...     CorpusFile("simple/abs_neg/test_data_set_0/input_0.pb",
...                numpy_helper.from_array(x, "x").SerializeToString()),
...     CorpusFile("simple/abs_neg/test_data_set_0/output_0.pb",
...                numpy_helper.from_array(-np.abs(x), "y").SerializeToString())]
>>> tmp = tempfile.TemporaryDirectory()
>>> _ = write_store([Case("simple/abs_neg", "simple", files, files[0].path)],
...                 f"{tmp.name}/s.parquet")
>>> def neg_off(model, inputs):  # the reference evaluator, but Neg's results a bit off
...     from onnx.reference import ReferenceEvaluator
...     names = [o.name for o in model.graph.output]
...     got = ReferenceEvaluator(model).run(None, inputs)
...     return [v * np.float32(1.01) if n == "y" else v for n, v in zip(names, got)]
>>> found = trace(f"{tmp.name}/s.parquet", "simple/abs_neg", neg_off, f"{tmp.name}/t.parquet")
>>> found.verdict.node, found.verdict.op_type, found.verdict.outputs[0].status
('Neg#1', 'Neg', 'mismatch')
>>> rows, metadata = read_trace(f"{tmp.name}/t.parquet", ["value", "side", "data_float"])
>>> for row in rows.to_pylist()[:2]:
...     print(row)
{'value': 'a', 'side': 'backend', 'data_float': [1.0, 2.0, 3.0]}
{'value': 'a', 'side': 'against', 'data_float': [1.0, 2.0, 3.0]}
>>> tmp.cleanup()
"""

from __future__ import annotations

from onnx_arrow.trace.plan import TracedNode, TracePlan, plan_trace
from onnx_arrow.trace.repro import node_model, write_repro
from onnx_arrow.trace.run import DEFAULT_CHUNK, Trace, trace
from onnx_arrow.trace.store import (
    TRACE_COLUMNS,
    TRACE_FORMAT,
    TRACE_FORMAT_VERSION,
    TRACE_METADATA_KEY,
    TRACE_SCHEMA,
    read_trace,
    read_trace_metadata,
    read_value,
)
from onnx_arrow.trace.verdict import ValueSummary, Verdict, find_verdict

__all__ = [
    "DEFAULT_CHUNK",
    "TRACE_COLUMNS",
    "TRACE_FORMAT",
    "TRACE_FORMAT_VERSION",
    "TRACE_METADATA_KEY",
    "TRACE_SCHEMA",
    "Trace",
    "TracePlan",
    "TracedNode",
    "ValueSummary",
    "Verdict",
    "find_verdict",
    "node_model",
    "plan_trace",
    "read_trace",
    "read_trace_metadata",
    "read_value",
    "trace",
    "write_repro",
]
