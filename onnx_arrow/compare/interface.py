"""Backends with onnx's backend interface (``onnx.backend.base.Backend``: ``prepare(model,
device, **kw)`` returning a rep whose ``run(inputs)`` gives the outputs) such as the module
``onnxruntime.backend`` or a ``Backend`` subclass, and the spec strings ``MODULE`` and
``MODULE:NAME`` that name a backend, loaded again wherever they run.

:class:`InterfaceBackend` runs one as onnx's backend test runner does: ``prepare`` once
per model (a case's data sets share the rep), then ``rep.run`` with the list of a data
set's inputs (string tensors as ``str``, as ``numpy_helper.to_array`` gives them).  One
made from a spec is pickled as its spec, so a worker process (or a Dask or Ray worker)
imports the backend itself.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Mapping
from types import ModuleType
from typing import Any

from onnx import ModelProto

from onnx_arrow.compare.feeds import strings_as_str
from onnx_arrow.errors import BackendPrepareError, BackendSpecError

__all__ = ["InterfaceBackend", "has_interface", "load_spec"]


def load_spec(spec: str) -> object:
    """The object ``spec`` names: ``MODULE`` (``onnxruntime.backend``) or ``MODULE:NAME``
    (``my_backend:MyBackend``; NAME may be dotted, an attribute of an attribute).

    Raises
    ------
    BackendSpecError
        If the spec is empty, its module does not import (the message quotes why) or
        it has no such NAME (the message lists the names in it that have ``prepare``).
    """
    module_name, colon, name = spec.strip().partition(":")
    if not module_name or (colon and not name):
        raise BackendSpecError(
            f"backend {spec!r}: expected MODULE or MODULE:NAME, for example "
            "'onnxruntime.backend' or 'my_package.backend:MyBackend'"
        )
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # an import can raise anything; each is a spec that fails
        raise BackendSpecError(
            f"module {module_name!r} does not import ({type(exc).__name__}: {exc}); "
            "install it, or check the name and PYTHONPATH"
        ) from None
    target: object = module
    for part in name.split(".") if name else ():
        try:
            found_part = hasattr(target, part)
        except Exception as exc:  # a module's __getattr__ that raises: its own code
            raise BackendSpecError(
                f"module {module_name!r}: reading {part!r} raised {type(exc).__name__}: {exc}"
            ) from None
        if not found_part:
            found = sorted(
                n for n in dir(module) if not n.startswith("_") and has_interface(module, n)
            )
            hint = f"those with prepare: {', '.join(found)}" if found else "none has prepare"
            raise BackendSpecError(f"module {module_name!r} has no {name!r} ({hint})")
        target = getattr(target, part)
    return target


def has_interface(module: ModuleType, name: str) -> bool:
    """Whether ``module.name`` has a callable ``prepare`` (onnx's backend interface)."""
    try:
        return callable(getattr(getattr(module, name), "prepare", None))
    except Exception:  # a module attribute that raises on access has no interface
        return False


class InterfaceBackend:
    """A backend with onnx's interface, as a callable ``(model, inputs) -> outputs``.

    Parameters
    ----------
    target
        A module, class or object with ``prepare(model, device, **options)``.  A class
        whose ``prepare`` is neither a class method nor a static method is instantiated
        (without arguments).
    spec
        The spec it was loaded from (pickled instead of ``target``); a module's own
        name when ``target`` is a module and no spec is given.
    device
        The device ``prepare`` is asked for (``supports_device`` is asked first).
    options
        Keyword arguments of ``prepare``.

    Raises
    ------
    BackendSpecError
        If ``target`` has no callable ``prepare``, or does not support ``device``.
    """

    def __init__(
        self,
        target: object,
        *,
        spec: str | None = None,
        device: str = "CPU",
        options: Mapping[str, object] | None = None,
    ) -> None:
        if isinstance(target, ModuleType) and spec is None:
            spec = target.__name__
        self.spec = spec
        self.device = device
        self.options = dict(options or {})
        self.target = _usable(target, self.name_of(target))
        self._last: tuple[ModelProto, Any] | None = None

    def name_of(self, target: object) -> str:
        """The name the backend is known by: its spec, else its qualified name."""
        if self.spec is not None:
            return self.spec
        kind = target if inspect.isclass(target) else type(target)
        return f"{kind.__module__}:{kind.__qualname__}"

    @property
    def name(self) -> str:
        """The backend's spec, else its class's qualified name."""
        return self.name_of(self.target)

    def check(self) -> InterfaceBackend:
        """Ask ``supports_device`` now, where the backend has it.

        Raises
        ------
        BackendSpecError
            If it does not support the device (or asking raises).
        """
        supports = getattr(self.target, "supports_device", None)
        if supports is None:
            return self
        try:
            ok = supports(self.device)
        except Exception as exc:  # the backend's own code: any failure is said as such
            raise BackendSpecError(
                f"backend {self.name}: supports_device({self.device!r}) raised "
                f"{type(exc).__name__}: {exc}"
            ) from None
        if not ok:
            raise BackendSpecError(f"backend {self.name} does not support device {self.device!r}")
        return self

    def describe(self) -> str:
        """What runs: the backend, the version of its top package, and the device."""
        if isinstance(self.target, ModuleType):
            where = self.target.__name__
        elif inspect.isclass(self.target):
            where = self.target.__module__
        else:
            where = type(self.target).__module__
        top = where.split(".")[0]
        version = getattr(sys.modules.get(top), "__version__", None)
        package = f" ({top} {version})" if version else ""
        return f"onnx backend interface: {self.name}{package}, device {self.device}"

    def __call__(self, model: ModelProto, inputs: dict[str, Any]) -> list[Any]:
        """``prepare`` (once per model), then ``run`` on the inputs in graph order.

        Raises
        ------
        BackendPrepareError
            If ``prepare`` raises or gives a rep without ``run``; a case's error.
        """
        if self._last is not None and self._last[0] is model:
            rep = self._last[1]
        else:
            call = f"{self.name}.prepare(model, {self.device!r})"
            try:
                rep = self.target.prepare(model, self.device, **self.options)  # type: ignore[attr-defined]
            except Exception as exc:  # the backend's own failure: this case's error
                raise BackendPrepareError(f"{call} raised {type(exc).__name__}: {exc}") from exc
            if not callable(getattr(rep, "run", None)):
                raise BackendPrepareError(
                    f"{call} gave {type(rep).__name__!s}, which has no run(inputs); onnx's "
                    "backend interface returns a BackendRep"
                )
            self._last = (model, rep)
        return list(rep.run([strings_as_str(v) for v in inputs.values()]))

    def __getstate__(self) -> dict[str, Any]:
        state: dict[str, Any] = {"spec": self.spec, "device": self.device, "options": self.options}
        if self.spec is None:
            state["target"] = self.target
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.spec = state["spec"]
        self.device = state["device"]
        self.options = dict(state["options"])
        target = state["target"] if self.spec is None else load_spec(self.spec)
        self.target = _usable(target, self.name_of(target))
        self._last = None

    def __repr__(self) -> str:
        return f"InterfaceBackend({self.name!r}, device={self.device!r})"


def _usable(target: object, name: str) -> object:
    """``target`` itself, or an instance of it where it is a class whose ``prepare`` needs
    one."""
    if not callable(getattr(target, "prepare", None)):
        raise BackendSpecError(
            f"backend {name} ({type(target).__name__}) has no prepare(model, device): it "
            "does not have onnx's backend interface (onnx.backend.base.Backend)"
        )
    if inspect.isclass(target):
        static = inspect.getattr_static(target, "prepare")
        if not isinstance(static, classmethod | staticmethod):
            try:
                return target()
            except Exception as exc:  # the backend's own constructor
                raise BackendSpecError(
                    f"backend {name}: its prepare is an instance method, and {name}() "
                    f"raised {type(exc).__name__}: {exc}"
                ) from None
    return target
