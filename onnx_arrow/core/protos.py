"""ONNX's protobuf message classes, without the cost of ``import onnx``.

``import onnx`` imports ``onnx.helper``, and with it ml_dtypes, whose registration of its
types with numpy takes most of a second of CPU here: more than an import of 72 MB of
activations does with its data.  The message classes themselves live in onnx's generated
module ``onnx/onnx_ml_pb2.py``, which needs protobuf alone.  This module executes that file
of the installed onnx (found without importing the package) and takes its classes from it.
Protobuf keeps one class per message descriptor and one descriptor per proto file, so a
later ``import onnx``, which executes the same file again, gets the very same classes:
``onnx.TensorProto is TensorProto``, and a message made on either side is an instance of
both.  Where onnx is imported already, or its generated file cannot be found, the classes
come from ``import onnx`` itself.

:func:`onnx_version` is ``onnx.__version__``, read as onnx reads it (from the installed
distribution), so that recording it imports nothing either.
"""

from __future__ import annotations

import builtins
import importlib.machinery
import importlib.util
import sys
from collections.abc import Sequence
from types import ModuleType, SimpleNamespace
from typing import TYPE_CHECKING, Any

__all__ = [
    "GraphProto",
    "MapProto",
    "ModelProto",
    "OptionalProto",
    "SequenceProto",
    "SparseTensorProto",
    "TensorProto",
    "TypeProto",
    "ValueInfoProto",
    "onnx_version",
]


def _generated() -> tuple[ModuleType, ModuleType]:
    """onnx's ``onnx_ml_pb2`` and ``onnx_data_pb2``: the modules themselves once onnx is
    imported, else their files executed as modules of this package (registered nowhere:
    onnx loads its own when it is imported)."""
    if "onnx" not in sys.modules:
        package = importlib.util.find_spec("onnx")
        where = None if package is None else package.submodule_search_locations
        if where is not None:
            ml = _execute("onnx_ml_pb2", list(where), {})
            data = (
                None if ml is None else _execute("onnx_data_pb2", list(where), {"onnx_ml_pb2": ml})
            )
            if ml is not None and data is not None:
                return ml, data
    import onnx.onnx_data_pb2
    import onnx.onnx_ml_pb2

    return onnx.onnx_ml_pb2, onnx.onnx_data_pb2


def _execute(name: str, where: list[str], given: dict[str, ModuleType]) -> ModuleType | None:
    """onnx's generated module ``name`` executed from its file in ``where``, its
    ``from onnx import X`` of a module of ``given`` answered with that module (an import
    of the package is what this module avoids); None where the file is not found."""
    found = importlib.machinery.PathFinder.find_spec(f"onnx.{name}", where)
    if found is None or found.origin is None:
        return None
    spec = importlib.util.spec_from_file_location(f"{__name__}._{name}", found.origin)
    if spec is None or spec.loader is None:
        return None
    module = importlib.util.module_from_spec(spec)

    def import_(
        what: str,
        globals_: Any = None,
        locals_: Any = None,
        fromlist: Sequence[str] = (),
        level: int = 0,
    ) -> Any:
        if what == "onnx" and level == 0 and fromlist and all(n in given for n in fromlist):
            return SimpleNamespace(**{n: given[n] for n in fromlist})
        return builtins.__import__(what, globals_, locals_, fromlist, level)

    # this module's own builtins: its imports alone are answered so
    module.__dict__["__builtins__"] = {**vars(builtins), "__import__": import_}
    spec.loader.exec_module(module)
    return module


if TYPE_CHECKING:  # the same classes, as onnx's type stubs describe them
    from onnx import (
        GraphProto,
        MapProto,
        ModelProto,
        OptionalProto,
        SequenceProto,
        SparseTensorProto,
        TensorProto,
        TypeProto,
        ValueInfoProto,
    )
else:
    _ml, _data = _generated()
    GraphProto = _ml.GraphProto
    MapProto = _data.MapProto
    ModelProto = _ml.ModelProto
    OptionalProto = _data.OptionalProto
    SequenceProto = _data.SequenceProto
    SparseTensorProto = _ml.SparseTensorProto
    TensorProto = _ml.TensorProto
    TypeProto = _ml.TypeProto
    ValueInfoProto = _ml.ValueInfoProto


def onnx_version() -> str:
    """``onnx.__version__``, without importing onnx where it is not imported yet: the
    version of the installed distribution, as onnx itself reads it."""
    onnx = sys.modules.get("onnx")
    if onnx is not None and hasattr(onnx, "__version__"):
        return str(onnx.__version__)
    import importlib.metadata

    for distribution in ("onnx", "onnx-weekly"):
        try:
            return importlib.metadata.version(distribution)
        except importlib.metadata.PackageNotFoundError:
            continue
    return "unknown"
