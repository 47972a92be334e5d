"""Backends with onnx's backend interface: prepared once per model, run as onnx's runner
runs them, their failures a case's error, and shipped to workers as their spec."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest
from backend_helpers import EvaluatorBackend, FailingBackend, InstanceBackend, NoRunBackend
from compare_helpers import GOOD
from fresh_python import fresh_python

from onnx_arrow import compare as cmp
from onnx_arrow.compare.interface import InterfaceBackend, load_spec
from onnx_arrow.corpus import Store

TESTS = Path(__file__).parents[1]


def test_prepare_raising_is_the_cases_error_not_a_crash(store: Store) -> None:
    df = cmp.compare(store, FailingBackend, cases=["test_abs", "test_add"]).to_pandas()
    assert list(df.status) == ["error", "error"]
    assert df.error.iloc[0] == (
        "BackendPrepareError: backend_helpers:FailingBackend.prepare(model, 'CPU') raised "
        "NotImplementedError: no kernel for Abs"
    )
    df = cmp.compare(store, NoRunBackend, cases=["test_abs"]).to_pandas()
    assert df.status.iloc[0] == "error"
    assert "gave object, which has no run(inputs)" in df.error.iloc[0]


def test_prepare_once_per_model(store: Store) -> None:
    backend = cmp.resolve_backend(EvaluatorBackend)
    before = EvaluatorBackend.prepared
    list(cmp.run_backend(store, backend, cases=["test_abs"]))
    assert EvaluatorBackend.prepared == before + 1
    model = store.model("node/test_abs")
    for _ in range(3):
        backend(model, {"x": next(iter(store.values("node/test_abs"))).to_numpy()})
    assert EvaluatorBackend.prepared == before + 2  # one more model object, one prepare


def test_an_instance_method_prepare_is_called_on_an_instance(store: Store) -> None:
    backend = InterfaceBackend(InstanceBackend, device="CPU")
    assert isinstance(backend.target, InstanceBackend)
    # in this process: the instance's state is read here
    df = cmp.compare(store, backend, cases=["test_abs"], in_process=True).to_pandas()
    assert df.status.iloc[0] == "match"
    assert backend.target.device == "CPU"


def test_a_backend_by_spec_is_pickled_as_its_spec() -> None:
    pytest.importorskip("onnxruntime")
    chosen = cmp.resolve_backend("onnxruntime.backend")
    data = pickle.dumps(chosen)  # a module cannot be pickled: the spec is
    assert b"onnxruntime.backend" in data
    assert pickle.loads(data).target is load_spec("onnxruntime.backend")
    by_class = pickle.loads(pickle.dumps(cmp.resolve_backend(EvaluatorBackend)))
    assert by_class.target is EvaluatorBackend


def test_a_spec_is_loaded_again_in_a_fresh_process(store: Store, tmp_path: Path) -> None:
    """What a Dask or Ray worker does with the pickled backend: import it by its spec."""
    pickled = tmp_path / "backend.pickle"
    pickled.write_bytes(pickle.dumps(cmp.resolve_backend("backend_helpers:EvaluatorBackend")))
    code = (
        "import pickle, sys, numpy as np\n"
        "from onnx_arrow.corpus import Store\n"
        f"backend = pickle.loads(open({str(pickled)!r}, 'rb').read())\n"
        "assert 'backend_helpers' in sys.modules, 'the spec was not imported'\n"
        f"store = Store({str(store.path)!r})\n"
        "x = next(iter(store.values('node/test_abs'))).to_numpy()\n"
        "(y,) = backend(store.model('node/test_abs'), {'x': x})\n"
        "assert np.array_equal(y, np.abs(x))\n"
        "print(backend.name)\n"
    )
    path = os.pathsep.join([str(TESTS), str(Path(cmp.__file__).parents[2])])
    env = {**os.environ, "PYTHONPATH": path}
    done = fresh_python(code, env=env)
    assert done.stdout.strip() == "backend_helpers:EvaluatorBackend"


def test_a_spec_runs_on_worker_processes_as_here(store: Store) -> None:
    cases = [f"node/{n}" for n in GOOD]
    spec = "backend_helpers:EvaluatorBackend"
    here = cmp.compare(store, spec, cases=cases).to_pandas()
    there = cmp.compare(store, spec, cases=cases, jobs=2, engine="processes").to_pandas()
    assert there.drop(columns="actual").equals(here.drop(columns="actual"))
    assert set(here.status) == {"match"}


@pytest.mark.slow
def test_a_spec_resolves_inside_dask_workers(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """Dask's workers are fresh processes: they import the backend by its spec."""
    pytest.importorskip("distributed")
    path = os.pathsep.join([str(TESTS), str(Path(cmp.__file__).parents[2])])
    monkeypatch.setenv("PYTHONPATH", path)  # the workers' path, as a cluster's would be
    cases = [f"node/{n}" for n in GOOD]
    spec = "backend_helpers:EvaluatorBackend"
    there = cmp.compare(store, spec, cases=cases, jobs=2, engine="dask").to_pandas()
    here = cmp.compare(store, spec, cases=cases).to_pandas()
    assert there.drop(columns="actual").equals(here.drop(columns="actual"))
