"""The node suite of an onnx release written as its classic folders, by that release alone:
a script run by the Python of an environment made for the release (onnx and numpy of
the versions asked for, and nothing of onnx-arrow).

onnx 1.23 and later build the node suite in memory and ship no ``node/`` folder; their
``backend-test-tools generate-data`` writes the model tests only.  This script builds the
suite with the release's own loader and writes each case as the writer of the releases
before did (``numpy_helper.from_array`` / ``from_list`` / ``from_dict`` /
``from_optional`` by the declared type, a ``TensorProto`` as it is), into
``DEST/node/CASE/model.onnx`` and ``test_data_set_N/input_K.pb`` / ``output_K.pb``.
Beside the tree, ``DEST/generated.json`` records the versions that built it (onnx,
numpy, protobuf, ml_dtypes, Pillow, Python) and each case's tolerances.

Run as ``python node_writer.py DEST``; it imports only the standard library, onnx and
numpy, so that any release's environment runs it.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import warnings
from typing import Any

__all__ = ["MANIFEST", "main", "write_suite"]

#: The file beside the tree that says what built it.
MANIFEST = "generated.json"


def _value_bytes(value: Any, info: Any) -> bytes:
    """A value as the release's writer serializes it, by the graph's declared type."""
    from onnx import TensorProto, numpy_helper

    declared = info.type
    if declared.HasField("map_type"):
        message = numpy_helper.from_dict(value, info.name)
    elif declared.HasField("sequence_type"):
        message = numpy_helper.from_list(value, info.name)
    elif declared.HasField("optional_type"):
        message = numpy_helper.from_optional(value, info.name)
    elif isinstance(value, TensorProto):
        message = value
    else:
        message = numpy_helper.from_array(value, info.name)
    return bytes(message.SerializeToString())


def _write(path: str, data: bytes) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as out:
        out.write(data)


def _version(name: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def write_suite(dest: str) -> dict[str, Any]:
    """Write the node suite of the onnx this Python imports into ``dest``; the manifest."""
    from onnx.backend.test.loader import load_node_model_tests

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the generators warn about overflows they mean
        cases = load_node_model_tests()
    tolerances: dict[str, list[float | None]] = {}
    for case in sorted(cases, key=lambda c: c.name):
        folder = os.path.join(dest, "node", case.name)
        model: Any = case.model  # every node case has its model and data sets
        _write(os.path.join(folder, "model.onnx"), model.SerializeToString())
        for n, (inputs, outputs) in enumerate(case.data_sets or ()):
            for io, values, infos in (
                ("input", inputs, model.graph.input),
                ("output", outputs, model.graph.output),
            ):
                for k, value in enumerate(values):
                    path = os.path.join(folder, f"test_data_set_{n}", f"{io}_{k}.pb")
                    _write(path, _value_bytes(value, infos[k]))
        rtol, atol = getattr(case, "rtol", None), getattr(case, "atol", None)
        tolerances[f"node/{case.name}"] = [
            None if rtol is None else float(rtol),
            None if atol is None else float(atol),
        ]
    manifest = {
        "generator": "onnx-arrow node_writer",
        "onnx": _version("onnx"),
        "numpy": _version("numpy"),
        "protobuf": _version("protobuf"),
        "ml_dtypes": _version("ml_dtypes"),
        "pillow": _version("pillow"),  # encodes the image decoder cases' pictures
        "python": platform.python_version(),
        "cases": len(tolerances),
        "tolerances": tolerances,
    }
    with open(os.path.join(dest, MANIFEST), "w", encoding="utf-8") as out:
        json.dump(manifest, out, indent=1, sort_keys=True)
    return manifest


def main(argv: list[str]) -> int:
    """``python node_writer.py DEST``: write the suite, print the number of cases."""
    if len(argv) != 1:
        print("usage: python node_writer.py DEST", file=sys.stderr)
        return 2
    manifest = write_suite(argv[0])
    print(manifest["cases"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
