"""The project's exceptions: one module, located messages, tracebacks kept."""

from __future__ import annotations

import ast
import traceback
from pathlib import Path

import pytest
from onnx import TensorProto

import onnx_arrow
from onnx_arrow import errors
from onnx_arrow.errors import InvalidTensorError, OnnxArrowError

PACKAGE = Path(onnx_arrow.__file__).parent


def test_at_locates_the_same_error() -> None:
    err = InvalidTensorError("raw_data holds 3 bytes", where="raw_data")
    assert err.at("row 2") is err
    assert str(err) == "row 2: raw_data: raw_data holds 3 bytes"
    assert err.where == "row 2: raw_data"
    assert err.message == "raw_data holds 3 bytes"


def test_a_located_error_keeps_the_frame_where_it_started() -> None:
    short = TensorProto(dims=[4], data_type=TensorProto.FLOAT, raw_data=b"\x00" * 4)
    with pytest.raises(InvalidTensorError) as info:
        onnx_arrow.to_arrow([short, short])
    assert str(info.value).startswith("row 0: ")
    frames = [f.name for f in traceback.extract_tb(info.value.__traceback__)]
    # raised in the tensor decoder, located on the way out by to_arrow
    assert "to_arrow" in frames
    assert any(name.startswith("_raw_to_codes") or name == "decode_tensor" for name in frames)


def _exception_classes(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
        and any(
            isinstance(base, ast.Name) and base.id.endswith(("Error", "Warning", "Exception"))
            for base in node.bases
        )
    ]


def test_every_public_exception_class_is_defined_in_errors() -> None:
    defined = {
        str(path.relative_to(PACKAGE)): names
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.name != "errors.py"
        # a private module's exceptions (the command line's flow of control) are not API
        and not any(part.startswith("_") for part in path.relative_to(PACKAGE).parts)
        for names in [[n for n in _exception_classes(path) if not n.startswith("_")]]
        if names
    }
    assert defined == {}
    for name in errors.__all__:
        cls = getattr(errors, name)
        assert issubclass(cls, OnnxArrowError | errors.OnnxArrowWarning), name


def test_errors_are_also_the_builtin_they_stand_for() -> None:
    for name in errors.__all__:
        cls = getattr(errors, name)
        if issubclass(cls, OnnxArrowError) and cls is not OnnxArrowError:
            assert issubclass(
                cls, ValueError | TypeError | ImportError | TimeoutError | RuntimeError
            ), name
