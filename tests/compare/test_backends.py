"""The built-in backends, and finding one by name."""

from __future__ import annotations

import sys

import pytest
from onnx import ModelProto

from onnx_arrow import compare as cmp
from onnx_arrow.corpus import Store


def test_onnxruntime_missing_is_said_once_the_same_way(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import raises ImportError
    for call in (
        lambda: cmp.backend_named("onnxruntime"),
        lambda: cmp.onnxruntime_backend(ModelProto(), {}),
    ):
        with pytest.raises(cmp.BackendUnavailableError, match="pip install onnxruntime"):
            call()


def test_onnxruntime_backend(store: Store) -> None:
    pytest.importorskip("onnxruntime")
    df = cmp.compare(store, cmp.backend_named("onnxruntime"), cases=["test_abs", "test_add"])
    assert set(df.status) == {"match"}


def test_unknown_backend() -> None:
    with pytest.raises(cmp.CompareError, match="no backend 'tvm'"):
        cmp.backend_named("tvm")
