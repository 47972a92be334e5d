"""Every public entry point refuses junk with an onnx-arrow error that says where and what.

The functions are read from ``__all__`` of ``onnx_arrow``, ``onnx_arrow.corpus`` and
``onnx_arrow.pandas``, so a new public function is covered as soon as it is exported.
Each argument that takes data (a required one, or one that takes a type, schema,
message or store) gets, in turn, each junk input below while the others keep a valid
value; the call must raise an :class:`~onnx_arrow.errors.OnnxArrowError` subclass
whose message is located: it names the argument or says what was expected.

Classes are covered by their constructors where those take data (``Store(path)``);
the others are records, Arrow types or exceptions, and are listed with why they are not.
Where an entry point raises something else today, its case is a strict ``xfail`` saying
what it raises, so the case turns into a pass (and the xfail into a failure) when fixed.
"""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnx_arrow
import onnx_arrow.corpus
import onnx_arrow.pandas
from onnx_arrow.errors import OnnxArrowError

pl = pytest.importorskip("polars")

MODULES = (onnx_arrow, onnx_arrow.corpus, onnx_arrow.pandas)


def _tensor() -> TensorProto:
    return numpy_helper.from_array(np.arange(3, dtype=np.int64), name="t")


#: The junk inputs, by the id each case shows.
JUNK: dict[str, Callable[[], Any]] = {
    "int": lambda: 1,
    "None": lambda: None,
    "list": lambda: [1],
    "message": _tensor,
    "polars_series": lambda: pl.Series("a", [1, 2, 3]),
    "polars_frame": lambda: pl.DataFrame({"a": [1, 2, 3]}),
    "int64_array": lambda: pa.array([1, 2, 3], pa.int64()),
    "type_proto": lambda: helper.make_tensor_type_proto(TensorProto.FLOAT, [2]),
}

#: Classes in ``__all__`` whose constructors take data, and so are fed junk.
DATA_CLASSES = {"Store", "FolderSource", "MergedSource", "OnnxSeriesAccessor"}

#: The other classes in ``__all__``, and why they are not fed junk.
OTHER_CLASSES = {
    **dict.fromkeys(
        [
            "ArrowLayoutError",
            "CorpusError",
            "DeclarationWarning",
            "ExternalDataError",
            "InvalidMessageError",
            "InvalidTensorError",
            "NotRepresentableError",
            "OnnxArrowError",
            "OnnxArrowWarning",
            "UnsupportedTypeError",
        ],
        "an exception or warning",
    ),
    **dict.fromkeys(
        ["MessageType", "SparseTensorType", "VariableRankTensorType", "VariableShapeTensorType"],
        "an Arrow extension type: its parameters are types, built by onnx-arrow itself",
    ),
    **dict.fromkeys(
        [
            "Case",
            "CorpusFile",
            "DType",
            "StoredCase",
            "StoredFile",
            "StoredValue",
            "Tolerance",
            "WriteOptions",
        ],
        "a record (a frozen dataclass of facts), not an entry point for data",
    ),
    "NodeSuiteSource": "takes no data (cache: bool)",
}

#: Names in ``__all__`` that are neither functions nor classes: constants and type aliases.
NOT_CALLED = {"Cells": "a type alias (Literal) of to_pandas's cells option"}

#: Annotations that mark an optional argument as one that takes data.
DATA_ANNOTATIONS = re.compile(r"TypeProto|Schema|Message|Store|pa\.")


def _public() -> list[tuple[str, str, Any]]:
    out = []
    for module in MODULES:
        for name in module.__all__:
            obj = getattr(module, name)
            if name in NOT_CALLED or not callable(obj):
                continue
            if inspect.isclass(obj) and name not in DATA_CLASSES:
                continue
            out.append((module.__name__, name, obj))
    return out


def _data_parameters(obj: Any) -> list[inspect.Parameter]:
    params = []
    for p in inspect.signature(obj).parameters.values():
        if p.kind is inspect.Parameter.VAR_KEYWORD:
            continue
        required = p.default is inspect.Parameter.empty
        if required or DATA_ANNOTATIONS.search(str(p.annotation)):
            params.append(p)
    return params


def _model() -> Any:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    graph = helper.make_graph([helper.make_node("Abs", ["x"], ["y"])], "g", [x], [y])
    return helper.make_model(graph)


@pytest.fixture(scope="module")
def valid(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Any]:
    """A valid value of each data argument, for the calls that feed junk to another one."""
    root = tmp_path_factory.mktemp("entry_points")
    column = onnx_arrow.to_arrow([_tensor()])
    pb = root / "input_0.pb"
    pb.write_bytes(_tensor().SerializeToString())
    case = onnx_arrow.corpus.Case(
        "node/test_x",
        "node",
        [onnx_arrow.corpus.CorpusFile("test_data_set_0/input_0.pb", pb.read_bytes())],
    )
    store = root / "store.parquet"
    onnx_arrow.corpus.write_store([case], store)
    return {
        ("from_arrow", "data"): column,
        ("from_arrow_scalar", "scalar"): column[0],
        ("from_portable", "table"): onnx_arrow.to_portable(pa.table({"x": column})),
        ("from_storage", "data"): onnx_arrow.to_storage(column),
        ("from_storage", "arrow_type"): column.type,
        ("read_pb", "path"): pb,
        ("to_arrow", "values"): [_tensor()],
        ("to_arrow_scalar", "value"): _tensor(),
        ("case_data_sets", "model"): _model(),
        ("case_data_sets", "values"): [],
        ("export_store", "store"): store,
        ("write_dataset", "cases"): [case],
        ("write_store", "cases"): [case],
    }


#: Arguments that name where to write: a fresh path under the test's own folder.
OUTPUTS = {("export_store", "dest"), ("write_dataset", "out"), ("write_store", "out")}

#: Junk that is a valid value of that argument, so no junk there: (function, argument, junk).
VALID_JUNK = {
    ("dtype_of", "key", "int"): "1 is FLOAT's enum value",
    ("arrow_type", "type_proto", "type_proto"): "a TypeProto is what it takes",
    ("read_pb", "declared", "type_proto"): "a TypeProto is what it takes (one the file "
    "contradicts reads it with its own type, with a DeclarationWarning)",
    ("to_arrow_scalar", "value", "message"): "a message is what it takes",
    ("to_storage", "data", "int64_array"): "a plain Arrow array is its own storage form",
    ("to_storage", "data", "polars_series"): "Arrow data: a plain column is its own storage form",
    ("to_storage", "data", "polars_frame"): "Arrow data: a plain table is its own storage form",
    ("to_portable", "table", "polars_frame"): "a table, through the Arrow PyCapsule protocol",
}


def _but(*skip: str) -> tuple[str, ...]:
    return tuple(j for j in JUNK if j not in skip)


ALL = _but()
#: What entry points raise today instead of an onnx-arrow error, and where (none now; a
#: case listed here is a strict xfail, so it is found the day it is fixed):
#: (function, argument, what it raises, the junk it raises it for).
TODAY: tuple[tuple[str, str, str, tuple[str, ...]], ...] = ()

#: The cases that do not raise an onnx-arrow error today: (function, argument, junk) -> why.
XFAIL: dict[tuple[str, str, str], str] = {
    (function, param, junk): reason for function, param, reason, junks in TODAY for junk in junks
}


def _cases() -> list[Any]:
    cases = []
    for module, name, obj in _public():
        for p in _data_parameters(obj):
            for junk in JUNK:
                if junk == "None" and p.default is None:
                    continue  # the default: no value given
                if (name, p.name, junk) in VALID_JUNK:
                    continue
                reason = XFAIL.get((name, p.name, junk))
                marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
                cases.append(
                    pytest.param(
                        module, name, p.name, junk, id=f"{name}-{p.name}-{junk}", marks=marks
                    )
                )
    return cases


def _call(
    name: str, obj: Any, param: str, junk: Any, valid: dict[Any, Any], tmp: Callable[[], Path]
) -> Any:
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    for p in inspect.signature(obj).parameters.values():
        if p.name == param:
            value = junk
        elif p.default is not inspect.Parameter.empty or p.kind in (
            inspect.Parameter.VAR_POSITIONAL,
            inspect.Parameter.VAR_KEYWORD,
        ):
            continue
        elif (name, p.name) in OUTPUTS:
            value = tmp() / "out"
        else:
            value = valid[(name, p.name)]
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.VAR_POSITIONAL):
            args.append(value)
        else:
            kwargs[p.name] = value
    return obj(*args, **kwargs)


#: Words of a message that says what was expected.
EXPECTED = re.compile(
    r"expect|must be|takes|needs|not an? |is no |got|accepts|give|\bbut\b|pass ", re.I
)


@pytest.mark.parametrize(("module", "name", "param", "junk"), _cases())
def test_junk_raises_a_located_onnx_arrow_error(
    module: str,
    name: str,
    param: str,
    junk: str,
    valid: dict[Any, Any],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    obj = getattr(importlib.import_module(module), name)
    call = f"{name}({param}={junk})"
    # failures without a traceback: the xfailed cases stay cheap to report
    try:
        _call(name, obj, param, JUNK[junk](), valid, lambda: tmp_path_factory.mktemp("out"))
    except OnnxArrowError as exc:
        error = exc
    except Exception as exc:
        pytest.fail(f"{call} raised {type(exc).__name__}: {exc}", pytrace=False)
    else:
        pytest.fail(f"{call} raised nothing", pytrace=False)
    message = str(error)
    assert message.strip()
    assert error.where or param in message or EXPECTED.search(message), message


def test_every_public_name_is_covered_or_said_why_not() -> None:
    called = {name for _, name, _ in _public()}
    for module in MODULES:
        for name in module.__all__:
            obj = getattr(module, name)
            where = f"{module.__name__}.{name}"
            if inspect.isclass(obj):
                assert name in DATA_CLASSES or name in OTHER_CLASSES, where
            elif callable(obj) and name not in NOT_CALLED:
                assert name in called, where
    assert called >= DATA_CLASSES
    assert {"to_arrow", "from_arrow", "to_pandas", "write_store", "Store"} <= called


def test_the_tables_name_real_cases() -> None:
    """An xfail or valid-junk entry that no longer names a case is stale."""
    names = {(name, p.name) for _, name, obj in _public() for p in _data_parameters(obj)}
    for function, param, junk in [*XFAIL, *VALID_JUNK]:
        assert (function, param) in names, (function, param)
        assert junk in JUNK, junk
    assert len(XFAIL) == sum(len(junks) for *_, junks in TODAY), "a case listed twice"
    assert not set(XFAIL) & set(VALID_JUNK)
