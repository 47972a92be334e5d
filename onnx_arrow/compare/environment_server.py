"""A backend served from the Python of an environment made for it (a runtime's version
from the package index): a script that imports only the standard library, onnx, numpy
and the backend, run as ``python -I -B environment_server.py BACKEND DEVICE``.

``BACKEND`` is ``MODULE`` or ``MODULE:NAME`` naming an object with onnx's backend
interface (``prepare(model, device)`` giving a rep with ``run(inputs)``), or
``reference`` for onnx's ``ReferenceEvaluator``.  The script answers on its standard
output, a JSON line per request of its standard input (the backend's own prints go to
its standard error):

* first, unasked: ``{"ready": {"python": ..., "backend": ..., "version": ...}}`` once the
  backend imports, else ``{"error": "Type: message"}`` and it ends;
* a request ``{"model": PATH or null, "inputs": [[NAME, PATH], ...], "outputs": FOLDER}``
  (a model when it changes: the backend prepares it once for the data sets that
  follow; each input a ``.pb`` file as the model declares that input) is answered
  ``{"outputs": N}`` once ``FOLDER/output_K.pb`` are written, each as the model
  declares output K (as onnx's test-data writer writes it), or ``{"error": "Type:
  message", "stage": "prepare" | "run" | "read" | "write"}``.

A backend that exits, raises ``SystemExit`` or ``KeyboardInterrupt`` gives that data
set's error; one that kills the process ends the script, and whoever runs it sees its
output end.  ``--once MODEL INPUTS OUTPUTS`` runs one data set and ends: the runner
protocol (``--runner``), a process per data set.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import platform
import sys
from typing import Any

__all__ = ["main"]


def _load(spec: str) -> Any:
    """The backend ``spec`` names (see the module docs), ready to ``prepare``."""
    if spec == "reference":
        return None
    module_name, _, name = spec.partition(":")
    target: Any = importlib.import_module(module_name)
    for part in name.split(".") if name else ():
        target = getattr(target, part)
    if not callable(getattr(target, "prepare", None)):
        raise TypeError(f"{spec} has no prepare(model, device): not onnx's backend interface")
    if inspect.isclass(target):
        static = inspect.getattr_static(target, "prepare")
        if not isinstance(static, classmethod | staticmethod):
            target = target()
    return target


def _version(spec: str) -> str | None:
    from importlib import metadata

    top = "onnx" if spec == "reference" else spec.partition(":")[0].split(".")[0]
    module = sys.modules.get(top)
    found = getattr(module, "__version__", None)
    if isinstance(found, str):
        return found
    try:
        return metadata.version(top)
    except metadata.PackageNotFoundError:
        return None


def _as_str(value: Any) -> Any:
    """String tensors decoded to ``str`` (as onnx's backend runner feeds them): the rule of
    :func:`onnx_arrow.compare.feeds.strings_as_str`, written again because this script runs
    where onnx-arrow is not installed (a test holds the two equal)."""
    import numpy as np

    if isinstance(value, np.ndarray) and value.dtype.kind in "OS":
        out = np.empty(value.shape, dtype=object)
        out.flat[:] = [
            x.decode("utf-8", "surrogateescape") if isinstance(x, bytes) else x for x in value.flat
        ]
        return out
    if isinstance(value, list):
        return [_as_str(v) for v in value]
    return value


def _read(path: str, declared: Any) -> Any:
    """The value of a ``.pb`` file, read as ``declared`` (a ``TypeProto``) says."""
    import onnx
    from onnx import numpy_helper

    with open(path, "rb") as f:
        data = f.read()
    which = declared.WhichOneof("value") if declared is not None else None
    if which in (None, "tensor_type"):
        tensor = onnx.TensorProto()
        tensor.ParseFromString(data)
        return _as_str(numpy_helper.to_array(tensor))
    if which == "sequence_type":
        sequence = onnx.SequenceProto()
        sequence.ParseFromString(data)
        return _as_str(numpy_helper.to_list(sequence))
    if which == "map_type":
        mapping = onnx.MapProto()
        mapping.ParseFromString(data)
        return numpy_helper.to_dict(mapping)
    if which == "optional_type":
        optional = onnx.OptionalProto()
        optional.ParseFromString(data)
        return _as_str(numpy_helper.to_optional(optional))
    raise TypeError(f"a {which} input is not fed by this script")


def _value_bytes(value: Any, info: Any) -> bytes:
    """An output as onnx's test-data writer serializes it, by its declared type."""
    import numpy as np
    from onnx import TensorProto, numpy_helper

    declared = info.type
    if declared.HasField("map_type"):
        message = numpy_helper.from_dict(value, info.name)
    elif declared.HasField("sequence_type"):
        message = numpy_helper.from_list(list(value), info.name)
    elif declared.HasField("optional_type"):
        message = numpy_helper.from_optional(value, info.name)
    elif isinstance(value, TensorProto):
        message = value
    else:
        message = numpy_helper.from_array(np.asarray(value), info.name)
    return bytes(message.SerializeToString())


def _error(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


class _Server:
    def __init__(self, spec: str, device: str) -> None:
        self.spec = spec
        self.device = device
        self.backend = _load(spec)
        self.model: Any = None
        self.rep: Any = None

    def hello(self) -> dict[str, Any]:
        return {
            "python": platform.python_version(),
            "backend": self.spec,
            "version": _version(self.spec),
        }

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        stage = "prepare"
        try:
            import onnx

            if request.get("model") is not None:
                self.model, self.rep = None, None
                self.model = onnx.load(request["model"])
                if self.backend is None:
                    from onnx.reference import ReferenceEvaluator

                    self.rep = ReferenceEvaluator(self.model)
                else:
                    self.rep = self.backend.prepare(self.model, self.device)
                    if not callable(getattr(self.rep, "run", None)):
                        raise TypeError(
                            f"prepare gave {type(self.rep).__name__}, which has no run(inputs)"
                        )
            if self.rep is None:
                raise RuntimeError("no model was prepared (the last prepare failed)")
            stage = "read"
            declared = {v.name: v.type for v in self.model.graph.input}
            names = [name for name, _ in request["inputs"]]
            values = [_read(path, declared.get(name)) for name, path in request["inputs"]]
            stage = "run"
            if self.backend is None:
                outputs = list(self.rep.run(None, dict(zip(names, values, strict=True))))
            else:
                outputs = list(self.rep.run(values))
            stage = "write"
            infos = list(self.model.graph.output)
            if len(outputs) != len(infos):
                raise ValueError(
                    f"the backend gave {len(outputs)} outputs; the model declares {len(infos)}"
                )
            for k, (value, info) in enumerate(zip(outputs, infos, strict=True)):
                path = os.path.join(request["outputs"], f"output_{k}.pb")
                with open(path, "wb") as out:
                    out.write(_value_bytes(value, info))
        except BaseException as exc:  # SystemExit, KeyboardInterrupt too: this data set's
            return {"error": _error(exc), "stage": stage}
        return {"outputs": len(outputs)}


def _serve(spec: str, device: str) -> int:
    # the protocol keeps the real stdin and stdout; the backend's prints go to stderr
    requests = os.fdopen(os.dup(0), "r", encoding="utf-8")
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    os.dup2(2, 1)
    try:
        server = _Server(spec, device)
        hello = {"ready": server.hello()}
    except BaseException as exc:  # the backend's import: said, then the end
        replies.write(json.dumps({"error": _error(exc)}) + "\n")
        replies.flush()
        return 1
    replies.write(json.dumps(hello) + "\n")
    replies.flush()
    for line in requests:
        try:
            request = json.loads(line)
        except ValueError as exc:
            reply = {"error": _error(exc), "stage": "read"}
        else:
            reply = server.answer(request)
        replies.write(json.dumps(reply) + "\n")
        replies.flush()
    return 0


def _folder_inputs(model_path: str, folder: str) -> list[list[str]]:
    """The ``input_K.pb`` files of a data set's folder, by the model's fed inputs."""
    import onnx

    model = onnx.load(model_path)
    weights = {t.name for t in model.graph.initializer}
    fed = [v.name for v in model.graph.input if v.name not in weights]
    return [
        [name, os.path.join(folder, f"input_{k}.pb")]
        for k, name in enumerate(fed)
        if os.path.exists(os.path.join(folder, f"input_{k}.pb"))
    ]


def main(argv: list[str]) -> int:
    """``BACKEND DEVICE`` serves requests; ``BACKEND DEVICE --once MODEL INPUTS OUTPUTS``
    runs one data set, the runner protocol's (exit status 1 and the error on stderr if it
    fails)."""
    if len(argv) not in (2, 6) or (len(argv) == 6 and argv[2] != "--once"):
        print(
            "usage: python environment_server.py BACKEND DEVICE [--once MODEL INPUTS OUTPUTS]",
            file=sys.stderr,
        )
        return 2
    spec, device = argv[0], argv[1]
    if len(argv) == 2:
        status = _serve(spec, device)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)  # a thread the backend left running does not keep it alive
    model, inputs, outputs = argv[3:]
    request = {"model": model, "inputs": _folder_inputs(model, inputs), "outputs": outputs}
    reply = _Server(spec, device).answer(request)
    if "error" in reply:
        print(reply["error"], file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
