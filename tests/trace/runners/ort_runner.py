"""onnxruntime as a runner through files, as the protocol's docs tell one to write it:
``python ort_runner.py MODEL INPUTS OUTPUTS [UNTYPED] [--leaky-relu]``.

Each input is read as the model declares it and each output written as the model
declares it; the outputs UNTYPED lists (the numbers K of those declared without a type)
are written as the values onnxruntime computed.  Without UNTYPED such an output fails,
as a runner that writes by declared type only does.  ``--leaky-relu`` plants a bug: Relu
lets negative inputs through (each Relu node run as Identity).
"""

import pathlib
import sys


def main() -> None:
    """Run one data set (imports here: the test run imports this file for its doctests)."""
    import numpy as np
    import onnx
    import onnxruntime
    from onnx import numpy_helper

    from onnx_arrow.core.model import graph_values, value_message

    args = [a for a in sys.argv[1:] if a != "--leaky-relu"]
    model = onnx.load(args[0])
    inputs, outputs = pathlib.Path(args[1]), pathlib.Path(args[2])
    untyped = (
        {int(k) for k in pathlib.Path(args[3]).read_text().split()} if len(args) > 3 else set()
    )
    if "--leaky-relu" in sys.argv:
        for node in model.graph.node:
            if node.op_type == "Relu":
                node.op_type = "Identity"
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    feed = {}
    for k, info in enumerate(graph_values(model, "input")):
        path = inputs / f"input_{k}.pb"
        if path.exists():
            feed[info.name] = numpy_helper.to_array(onnx.TensorProto.FromString(path.read_bytes()))
    names = [o.name for o in graph_values(model, "output")]
    for k, (info, value) in enumerate(
        zip(graph_values(model, "output"), session.run(names, feed), strict=True)
    ):
        if k in untyped:
            message = numpy_helper.from_array(np.asarray(value), info.name)
        else:
            message = value_message(value, info.name, info.type)
        (outputs / f"output_{k}.pb").write_bytes(message.SerializeToString())


if __name__ == "__main__":
    main()
