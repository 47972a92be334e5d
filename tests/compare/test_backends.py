"""The built-in backends, and the one rule that turns a name, a spec or an object into a
backend (``resolve_backend``)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from backend_helpers import EvaluatorBackend
from compare_helpers import GOOD
from onnx import ModelProto

from onnx_arrow import compare as cmp
from onnx_arrow.compare.backends import describe_backend
from onnx_arrow.corpus import Store


def test_onnxruntime_missing_is_said_once_the_same_way(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import raises ImportError
    for call in (
        lambda: cmp.backend_named("onnxruntime"),
        lambda: cmp.onnxruntime_backend(ModelProto(), {}),
        lambda: cmp.resolve_backend("onnxruntime", providers=["CPUExecutionProvider"]),
    ):
        with pytest.raises(cmp.BackendUnavailableError, match="pip install onnxruntime"):
            call()


def test_onnxruntime_backend(store: Store) -> None:
    pytest.importorskip("onnxruntime")
    df = cmp.compare(
        store, cmp.backend_named("onnxruntime"), cases=["test_abs", "test_add"]
    ).to_pandas()
    assert set(df.status) == {"match"}


def test_unknown_backend() -> None:
    with pytest.raises(cmp.BackendSpecError, match=r"no backend 'tvm'.*No module named 'tvm'"):
        cmp.backend_named("tvm")
    with pytest.raises(cmp.CompareError, match="no backend 'tvm'"):  # a CompareError
        cmp.resolve_backend("tvm")


def test_the_built_in_names_and_none() -> None:
    assert cmp.resolve_backend() is cmp.reference_backend
    assert cmp.resolve_backend("reference") is cmp.reference_backend
    assert cmp.resolve_backend(cmp.reference_backend) is cmp.reference_backend
    pytest.importorskip("onnxruntime")
    assert cmp.resolve_backend(" onnxruntime ") is cmp.onnxruntime_backend
    chosen = cmp.resolve_backend("onnxruntime", providers=["CPUExecutionProvider"])
    assert isinstance(chosen, cmp.OnnxruntimeBackend)
    assert chosen.providers == ("CPUExecutionProvider",)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no_such_module_here", r"module 'no_such_module_here' does not import"),
        ("backend_helpers:Missing", r"has no 'Missing' \(those with prepare: .*EvaluatorBackend"),
        ("backend_helpers:EvaluatorBackend.nope", r"has no 'EvaluatorBackend.nope'"),
        ("backend_helpers:NOT_A_BACKEND", r"neither a backend with onnx's interface"),
        ("backend_helpers:GpuOnlyBackend", r"does not support device 'CPU'"),
        ("backend_helpers:", r"expected MODULE or MODULE:NAME"),
        (":EvaluatorBackend", r"expected MODULE or MODULE:NAME"),
    ],
)
def test_a_spec_that_names_no_backend_says_why(spec: str, message: str) -> None:
    with pytest.raises(cmp.BackendSpecError, match=message) as info:
        cmp.resolve_backend(spec)
    assert spec in str(info.value)


def test_a_module_that_raises_on_import_is_quoted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "broken_runtime.py").write_text("raise RuntimeError('libfoo.so not found')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(cmp.BackendSpecError, match=r"RuntimeError: libfoo.so not found"):
        cmp.resolve_backend("broken_runtime:Backend")


def test_an_object_that_is_no_backend_is_refused() -> None:
    for junk in (42, [1], "  "):
        with pytest.raises(cmp.BackendSpecError, match=r"expected|neither"):
            cmp.resolve_backend(junk)
    with pytest.raises(cmp.BackendSpecError, match="expected a backend's name"):
        cmp.backend_named(42)  # type: ignore[arg-type]


def test_onnxruntime_options_apply_to_onnxruntime_only() -> None:
    for backend in ("reference", None, EvaluatorBackend, "backend_helpers:EvaluatorBackend"):
        with pytest.raises(cmp.BackendSpecError, match="apply to the onnxruntime backend"):
            cmp.resolve_backend(backend, session_options={"intra_op_num_threads": 1})
    pytest.importorskip("onnxruntime")
    with pytest.raises(cmp.BackendSpecError, match="given twice"):
        cmp.resolve_backend(cmp.OnnxruntimeBackend(), providers=["CPUExecutionProvider"])


def test_every_form_of_a_backend_gives_the_same_report(store: Store) -> None:
    import backend_helpers

    cases = [f"node/{n}" for n in GOOD]
    reference = cmp.compare(store, "reference", cases=cases).to_pandas()
    assert set(reference.status) == {"match"}
    forms = [
        EvaluatorBackend,
        EvaluatorBackend(),
        "backend_helpers:EvaluatorBackend",
        "backend_helpers:InstanceBackend",
        cmp.InterfaceBackend(backend_helpers.EvaluatorBackend),
    ]
    for form in forms:
        df = cmp.compare(store, form, cases=cases).to_pandas()
        assert df.drop(columns="actual").equals(reference.drop(columns="actual")), form


def test_the_report_names_the_backend(store: Store) -> None:
    df = cmp.compare(store, "backend_helpers:EvaluatorBackend", cases=["test_abs"]).to_pandas()
    made = df.attrs["onnx_arrow"]["backend"]
    assert made["name"] == "backend_helpers:EvaluatorBackend"
    assert made["runs"].startswith("onnx backend interface: backend_helpers:EvaluatorBackend")
    assert describe_backend(cmp.reference_backend)["name"] == "reference"
    pytest.importorskip("onnxruntime")
    chosen = cmp.resolve_backend("onnxruntime", session_options={"intra_op_num_threads": "1"})
    assert describe_backend(chosen)["name"] == "onnxruntime"
    assert "intra_op_num_threads=1" in describe_backend(chosen)["runs"]


def test_onnxruntime_backend_module_as_a_backend(store: Store) -> None:
    ort_backend = pytest.importorskip("onnxruntime.backend")
    by_class = "onnxruntime.backend.backend:OnnxRuntimeBackend"
    for form in (ort_backend, "onnxruntime.backend", by_class):
        df = cmp.compare(
            store, form, cases=["test_abs", "test_add", "test_string_concat"]
        ).to_pandas()
        assert set(df.status) == {"match"}, form
