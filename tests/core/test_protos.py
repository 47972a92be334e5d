"""ONNX's message classes without ``import onnx`` (core/protos.py): the very classes onnx
has once it is imported, and its version as onnx gives it.  Loaded before onnx (in a
process that imports a folder, then onnx), in tests/cli/test_import.py."""

from __future__ import annotations

import onnx

from onnx_arrow.core import protos


def test_the_classes_are_onnx_s_own_once_onnx_is_imported() -> None:
    for name in protos.__all__:
        if name != "onnx_version":
            assert getattr(protos, name) is getattr(onnx, name), name
    assert protos.onnx_version() == onnx.__version__
