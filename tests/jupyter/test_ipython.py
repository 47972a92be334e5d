"""IPython: registration on a shell, show outside a notebook, an import without IPython."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pyarrow as pa
import pytest
from fresh_python import fresh_python
from onnx import TensorProto, numpy_helper

import onnx_arrow
from onnx_arrow import jupyter
from onnx_arrow.corpus import Store


class _Formatter:
    def __init__(self) -> None:
        self.types: dict[type, Any] = {}

    def for_type(self, cls: type, func: Any) -> None:
        self.types[cls] = func


class _Shell:
    def __init__(self) -> None:
        self.display_formatter = type("DF", (), {"formatters": {"text/html": _Formatter()}})()


def test_register_with_a_stub_shell() -> None:
    shell = _Shell()
    jupyter.load_ipython_extension(shell)
    types = shell.display_formatter.formatters["text/html"].types
    assert {pa.ExtensionArray, Store, TensorProto, onnx.SequenceProto} <= set(types)
    column = onnx_arrow.to_arrow([numpy_helper.from_array(np.ones((2, 2), np.float32))], exact=True)
    assert "onnx.message" in types[pa.ExtensionArray](column)
    assert (
        types[pa.ExtensionArray](
            pa.ExtensionArray.from_storage(pa.uuid(), pa.nulls(1, pa.binary(16)))
        )
        is None
    )


def test_register_with_ipython() -> None:
    pytest.importorskip("IPython")
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    try:
        jupyter.register(shell)
        tensor = numpy_helper.from_array(np.eye(3, dtype=np.float32), "<b>")
        data, _ = shell.display_formatter.format(tensor)
        assert "&lt;b&gt;" in data["text/html"]
        assert "<img" in data["text/html"]
        data, _ = shell.display_formatter.format(pa.array([1, 2]))
        assert "text/html" not in data
    finally:
        InteractiveShell.clear_instance()


def test_show_prints_text_outside_a_notebook(capsys: pytest.CaptureFixture[str]) -> None:
    jupyter.show(np.arange(3, dtype=np.int64))
    assert "INT64" in capsys.readouterr().out


def test_import_does_not_need_ipython() -> None:
    code = "import onnx_arrow.jupyter, sys; print('IPython' in sys.modules)"
    result = fresh_python(code)
    assert result.stdout.strip() == "False"
