"""Backends: what runs a model on inputs, the built-in ones, and the one rule that turns
what a caller names (a name, a spec string, an object) into a backend.

A *backend* is any callable ``(model, inputs) -> outputs`` (:class:`Backend`).
:func:`reference_backend` (``onnx.reference.ReferenceEvaluator``) and
:func:`~onnx_arrow.compare.ort.onnxruntime_backend` are built in (:data:`BACKENDS`).
:func:`resolve_backend` takes a built-in name, a spec ``MODULE`` or ``MODULE:NAME`` (or
``PACKAGE==VERSION``: :mod:`~onnx_arrow.compare.environments`), an
object with onnx's backend interface (a module such as ``onnxruntime.backend``, a
``onnx.backend.base.Backend`` subclass or instance) or a callable, and gives the backend
``compare``, ``run`` and the pytest plugin run; :func:`describe_backend` says what one
runs, for a report.
"""

from __future__ import annotations

import inspect
import os
import re
import shlex
import sys
from collections.abc import Iterable, Mapping, Sequence
from types import ModuleType
from typing import Any, Final, Protocol, TypeAlias

import onnx
from onnx import ModelProto

from onnx_arrow.compare.environments import EnvironmentBackend, is_package_spec
from onnx_arrow.compare.feeds import strings_as_str
from onnx_arrow.compare.interface import InterfaceBackend, load_spec
from onnx_arrow.compare.ort import OnnxruntimeBackend, import_onnxruntime, onnxruntime_backend
from onnx_arrow.errors import BackendSpecError, CompareError

__all__ = [
    "BACKENDS",
    "Backend",
    "BackendLike",
    "backend_named",
    "describe_backend",
    "parse_runtime",
    "portable_command",
    "reference_backend",
    "resolve_backend",
]


class Backend(Protocol):
    """Runs a model on inputs: ``(model, {input name: value}) -> [output values]``.

    Outputs are in graph order; a value is an ndarray for a tensor, a list for a
    sequence, a dict for a map and None for an absent optional.
    """

    def __call__(self, model: ModelProto, inputs: dict[str, Any], /) -> Sequence[Any]: ...


#: What :func:`resolve_backend` takes: a built-in name or a spec (``str``), a module,
#: class or object with onnx's backend interface, or a :class:`Backend`.
BackendLike: TypeAlias = object


def reference_backend(model: ModelProto, inputs: dict[str, Any]) -> list[Any]:
    """onnx's own reference implementation: ``ReferenceEvaluator(model).run(None, inputs)``.

    String tensors are fed as ``str`` (UTF-8 decoded), as its string operators want them
    (a store gives ``bytes``, as ``numpy_helper.to_array`` does).
    """
    from onnx.reference import ReferenceEvaluator

    feed = {name: strings_as_str(v) for name, v in inputs.items()}
    return list(ReferenceEvaluator(model).run(None, feed))


#: The built-in backends by name (the ``--backend`` names of the command line).
BACKENDS: Final[dict[str, Backend]] = {
    "reference": reference_backend,
    "onnxruntime": onnxruntime_backend,
}


def resolve_backend(
    backend: BackendLike = None,
    *,
    providers: Iterable[str] | None = None,
    session_options: Mapping[str, object] | None = None,
    device: str = "CPU",
) -> Backend:
    """The backend ``backend`` names or is, checked now (its runtime imports, its options
    are valid), so that a bad one fails before any case runs.

    Parameters
    ----------
    backend
        None (:func:`reference_backend`); a name of :data:`BACKENDS`; a spec
        ``PACKAGE==VERSION[:MODULE[:NAME]]``, that version from the package index run in
        an environment made for it
        (:class:`~onnx_arrow.compare.environments.EnvironmentBackend`); a spec
        ``MODULE`` or ``MODULE:NAME`` naming any of the following (loaded again in a
        worker process); an object with onnx's backend interface (``prepare(model,
        device, **kw)`` returning a rep with ``run(inputs)``: a module such as
        ``onnxruntime.backend``, an ``onnx.backend.base.Backend`` subclass or
        instance), run through :class:`~onnx_arrow.compare.interface.InterfaceBackend`;
        or a callable ``(model, inputs) -> outputs``, as it is.
    providers, session_options
        onnxruntime's execution providers and session options (see
        :class:`~onnx_arrow.compare.ort.OnnxruntimeBackend`): for ``"onnxruntime"`` only.
    device
        The device an interface backend's ``prepare`` is asked for.

    Raises
    ------
    BackendUnavailableError
        If onnxruntime is asked for and not installed.
    VirtualEnvironmentError
        If a ``PACKAGE==VERSION``'s environment cannot be made, or fails its check.
    BackendSpecError
        If a spec's module does not import, it has no such NAME, the object has neither
        ``prepare`` nor a call, it does not support ``device``, or a provider or session
        option is not valid (or given for another backend than onnxruntime).

    Examples
    --------
    >>> resolve_backend("reference") is reference_backend
    True
    >>> resolve_backend("onnxruntime.backend")
    InterfaceBackend('onnxruntime.backend', device='CPU')
    """
    ort_options = providers is not None or bool(session_options)
    if isinstance(backend, str):
        name = backend.strip()
        if name == "onnxruntime":
            if ort_options:
                return OnnxruntimeBackend(providers, session_options).check()
            import_onnxruntime()
            return onnxruntime_backend
        if ort_options:
            raise BackendSpecError(
                f"providers and session options apply to the onnxruntime backend, not to {name!r}"
            )
        if name in BACKENDS:
            return BACKENDS[name]
        if is_package_spec(name):  # a version from the index, in an environment of its own
            return EnvironmentBackend(name, device=device).check()
        try:
            target = load_spec(name)
        except BackendSpecError as exc:
            raise BackendSpecError(
                f"no backend {name!r}: it is not a built-in one ({', '.join(BACKENDS)}), "
                f"and as a spec MODULE[:NAME]: {exc.message}"
            ) from None
        return _from_object(target, spec=name, device=device)
    if isinstance(backend, OnnxruntimeBackend):
        if ort_options:
            raise BackendSpecError(
                "providers and session options are given twice: as arguments and by the "
                "OnnxruntimeBackend; give them to the OnnxruntimeBackend"
            )
        return backend.check()
    if ort_options:
        raise BackendSpecError(
            "providers and session options apply to the onnxruntime backend; name it "
            "('onnxruntime') or pass an OnnxruntimeBackend"
        )
    if backend is None:
        return reference_backend
    return _from_object(backend, spec=None, device=device)


def _from_object(target: object, *, spec: str | None, device: str) -> Backend:
    if isinstance(target, InterfaceBackend | OnnxruntimeBackend | EnvironmentBackend):
        return target.check()
    try:
        prepare = getattr(target, "prepare", None)
    except Exception as exc:  # a module's __getattr__, a property: the backend's own code
        raise BackendSpecError(
            f"backend {spec or type(target).__name__!r}: reading its prepare raised "
            f"{type(exc).__name__}: {exc}"
        ) from None
    if callable(prepare):
        return InterfaceBackend(target, spec=spec, device=device).check()
    if callable(target):
        return target
    what = spec or type(target).__name__
    raise BackendSpecError(
        f"backend {what!r} is neither a backend with onnx's interface (prepare(model, device) "
        "returning a rep with run(inputs)) nor a callable (model, inputs) -> outputs; "
        f"expected one of those, a spec MODULE[:NAME] or a built-in name ({', '.join(BACKENDS)})"
    )


def backend_named(name: str) -> Backend:
    """The backend ``name`` names: a built-in name (see :data:`BACKENDS`) or a spec
    ``MODULE[:NAME]``, checked now (see :func:`resolve_backend`).

    Raises
    ------
    BackendUnavailableError
        If the backend's runtime is not installed (``pip install onnxruntime``).
    BackendSpecError
        If there is no backend of that name (a :class:`~onnx_arrow.errors.CompareError`).
    """
    if not isinstance(name, str):
        raise BackendSpecError(
            f"name: expected a backend's name or spec (str), got {type(name).__name__}"
        )
    return resolve_backend(name)


#: The spelling of ``--runtime NAME==VERSION``: a name as package indexes spell them, and a
#: version of letters, digits and ``.+!-_`` (any scheme; ``results --changes`` orders
#: them as :mod:`packaging.version` does, and says which it cannot order).
_RUNTIME: Final = re.compile(
    r"([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)==([A-Za-z0-9][A-Za-z0-9.+!_-]*)"
)


def parse_runtime(text: str) -> tuple[str, str]:
    """The runtime's name and version of ``NAME==VERSION`` (``tract==0.21.13``).

    Raises
    ------
    CompareError
        If ``text`` is not spelled so, saying what it got.

    Examples
    --------
    >>> parse_runtime("onnxruntime-node==1.22.0")
    ('onnxruntime-node', '1.22.0')
    >>> parse_runtime("tract 0.21")
    Traceback (most recent call last):
    ...
    onnx_arrow.errors.CompareError: the runtime is 'tract 0.21'; spell it NAME==VERSION \
(tract==0.21.13): a name of letters, digits and .-_, a version of letters, digits and .+!-_
    """
    found = _RUNTIME.fullmatch(text) if isinstance(text, str) else None
    if found is None:
        raise CompareError(
            f"the runtime is {text!r:.80}; spell it NAME==VERSION (tract==0.21.13): a name of "
            "letters, digits and .-_, a version of letters, digits and .+!-_"
        )
    return found[1], found[2]


def describe_backend(backend: Backend, runtime: str | None = None) -> dict[str, Any]:
    """The backend's name and the version of what it runs, for the report: a backend's own
    ``name`` and ``describe()`` where it has them (as :class:`InterfaceBackend` does),
    else its qualified name; and the runtime it runs as ``runtime`` and
    ``runtime_version`` (what a results store records): ``runtime`` (``NAME==VERSION``,
    :func:`parse_runtime`) where given, else the backend's own (``onnx.reference`` and
    onnx's version for the reference evaluator, ``onnxruntime`` and its version, an
    interface backend's top package and its version), else not said."""
    made = _described(backend)
    if runtime is not None:
        made["runtime"], made["runtime_version"] = parse_runtime(runtime)
        made["runtime_given"] = True
    return made


def _described(backend: Backend) -> dict[str, Any]:
    name = next((n for n, b in BACKENDS.items() if b is backend), None)
    if name == "reference":
        return {
            "name": name,
            "runs": f"onnx {onnx.__version__} ReferenceEvaluator",
            "runtime": "onnx.reference",
            "runtime_version": onnx.__version__,
        }
    if name == "onnxruntime" or isinstance(backend, OnnxruntimeBackend):
        version = import_onnxruntime().__version__
        runs = f"onnxruntime {version}"
        providers = None
        if isinstance(backend, OnnxruntimeBackend):
            runs, providers = backend.describe(), list(backend.providers)
        made: dict[str, Any] = {"name": "onnxruntime", "runs": runs, "runtime": "onnxruntime"}
        made["runtime_version"] = version
        if providers is not None:
            made["providers"] = providers
        return made
    kind = backend if inspect.isfunction(backend) or inspect.isclass(backend) else type(backend)
    where = f"{getattr(kind, '__module__', '?')}.{getattr(kind, '__qualname__', '?')}"
    try:
        name = getattr(backend, "name", None)
        describe = getattr(backend, "describe", None)
        runs = str(describe()) if callable(describe) else "a backend of the caller's"
    except Exception as exc:  # the backend's own code
        raise BackendSpecError(
            f"backend {where}: its name or describe() raised {type(exc).__name__}: {exc}"
        ) from None
    checked = getattr(backend, "description", None)  # a spec checked in a worker process
    if isinstance(checked, dict) and isinstance(name, str):
        return dict(checked)
    made = {"name": name if isinstance(name, str) else where, "runs": runs}
    if isinstance(backend, EnvironmentBackend):  # and what pip resolved for it
        made["environment"] = backend.environment()
        made["runtime"], made["runtime_version"] = backend.spec.package, backend.spec.version
    if isinstance(backend, InterfaceBackend):
        target = backend.target
        module = target.__name__ if isinstance(target, ModuleType) else None
        module = module or (target if inspect.isclass(target) else type(target)).__module__
        top = module.split(".")[0]
        version = getattr(sys.modules.get(top), "__version__", None)
        if isinstance(version, str):
            made["runtime"], made["runtime_version"] = top, version
    return made


def portable_command(command: str, cwd: str | os.PathLike[str] | None = None) -> str:
    """A command line (a runner's, as :func:`describe_backend` gives it) with no absolute
    path of this machine, for a scoreboard to share: each absolute path in a word
    (``--model=/a/b`` too) relative to ``cwd`` (the working folder) when it lies under it,
    else its last name (a program's name, for a program found on PATH).

    >>> portable_command("/usr/bin/node /work/runners/run.js {model}", cwd="/work")
    "node runners/run.js '{model}'"
    >>> portable_command("tract --nnef=/opt/nnef {model} 'a b'", cwd="/work")
    "tract --nnef=nnef '{model}' 'a b'"
    """
    try:
        words = shlex.split(command)
    except ValueError:
        return command
    here = os.path.abspath(os.getcwd() if cwd is None else cwd)
    return shlex.join(_portable_word(word, here) for word in words)


def _portable_word(word: str, here: str) -> str:
    prefix, sep, path = (
        word.partition("=") if "=" in word and word.startswith("-") else ("", "", word)
    )
    if not os.path.isabs(path):
        return word
    inside = os.path.commonpath([here, os.path.abspath(path)]) == here
    mapped = os.path.relpath(path, here) if inside else os.path.basename(path.rstrip("/"))
    return f"{prefix}{sep}{mapped or '.'}"
