"""What the tests of the results store share: a planted-bug backend module's source, the
node-suite cases they run, and each output's verdict as a compare report says it."""

from __future__ import annotations

from typing import Final

from onnx_arrow.reports import Report

#: Node-suite cases: the reference evaluator gets the first three right and gives the
#: last the wrong shape ([2, 1] where [2] is expected).
CASES: Final = (
    "node/test_abs",
    "node/test_add",
    "node/test_relu",
    "node/test_range_float_type_positive_delta_expanded",
)

#: The name of the planted-bug backend's module, written to a folder on sys.path.
PLANTED_MODULE: Final = "planted_results_backend"

#: A backend that is the reference evaluator with one bug planted (Add gives 1 too much)
#: and one fixed (an expanded Range, through Loop, gives its output flat).
PLANTED_SOURCE: Final = """\
import numpy as np

from onnx_arrow.compare import reference_backend


def backend(model, inputs):
    outputs = reference_backend(model, inputs)
    ops = {node.op_type for node in model.graph.node}
    if "Add" in ops:
        return [np.asarray(o) + np.asarray(1, dtype=np.asarray(o).dtype) for o in outputs]
    if "Loop" in ops:
        return [np.asarray(o).ravel() for o in outputs]
    return outputs
"""


def verdicts(report: Report) -> dict[tuple[str, int, int], str]:
    """Each compared output's verdict in ``report``: pass (match, xpass) or fail."""
    rows = report.table.select(["case", "data_set", "index", "status"]).to_pylist()
    return {
        (r["case"], r["data_set"], r["index"]): "pass"
        if r["status"] in ("match", "xpass")
        else "fail"
        for r in rows
        if r["status"] != "skipped"
    }
