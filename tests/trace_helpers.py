"""What the tests of the trace package share: a backend with a planted divergence (onnx's
reference evaluator with one operator's float outputs moved a few ULPs), importable by
spec (``trace_helpers:perturbed_sqrt``) wherever ``tests`` is on the path."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
from onnx import ModelProto
from onnx.reference import ReferenceEvaluator
from onnx.reference.ops import load_op

from onnx_arrow.compare.feeds import strings_as_str


def nudged(value: Any, ulps: int) -> Any:
    """A float array moved ``ulps`` ULPs up (each element, NaN and inf aside); any other
    value as it is."""
    if not isinstance(value, np.ndarray) or value.dtype.kind != "f":
        return value
    out = value.copy()
    finite = np.isfinite(out)
    for _ in range(ulps):
        out[finite] = np.nextafter(out[finite], np.array(np.inf, out.dtype))
    return out


class Perturbed:
    """onnx's reference evaluator, except that every ``op_type`` node's float outputs are
    ``ulps`` ULPs up: a backend that parts ways with the reference at those nodes."""

    def __init__(self, op_type: str, ulps: int = 3) -> None:
        self.op_type = op_type
        self.ulps = ulps
        self.name = f"perturbed {op_type}"

    def __call__(self, model: ModelProto, inputs: dict[str, Any]) -> list[Any]:
        version = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
        base = load_op("", self.op_type, version)
        ulps = self.ulps

        def run(self: Any, *args: Any, **kwargs: Any) -> Any:
            got = base.run(self, *args, **kwargs)
            return tuple(nudged(v, ulps) for v in got)

        # the schema of the model's opset, as the base class has it (not the newest one)
        schema = onnx.defs.get_schema(self.op_type, version, "")
        cls = type(self.op_type, (base,), {"op_domain": "", "run": run, "op_schema": schema})
        feed = {k: strings_as_str(v) for k, v in inputs.items()}
        return list(ReferenceEvaluator(model, new_ops=[cls]).run(None, feed))


#: Specs for the command line: ``--backend trace_helpers:perturbed_sqrt``.
perturbed_sqrt = Perturbed("Sqrt")
perturbed_relu = Perturbed("Relu")


def first_float_node(model: ModelProto, op_type: str) -> int | None:
    """The position (in the graph's order, which is topological) of the first
    ``op_type`` node, or None."""
    return next((i for i, n in enumerate(model.graph.node) if n.op_type == op_type), None)
