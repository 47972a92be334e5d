"""Where a backend runs: out of the command's process unless asked otherwise, so that what
the backend's code does (exit, raise ``KeyboardInterrupt``, crash, hang, swallow its
deadline, leave a thread running) is a case's error and never decides how the command
ends.

* :func:`backend_to_run` gives what ``compare``, ``run`` and the pytest plugin run.  A
  backend spec (``MODULE[:NAME]``) is loaded and checked in a worker process of its own
  first (:func:`checked_spec`): the command never imports the module, so that nothing its
  import does (``sys.exit``, a crash, a thread) reaches the command; a spec that fails
  there is a :class:`~onnx_arrow.errors.BackendSpecError`, as one that does not import.
  The cases then run in worker processes (:func:`~onnx_arrow.parallel.map_cases` with
  ``isolate``, one worker for ``jobs=1``), each loading the backend again
  (:class:`SpecBackend`).
* :func:`isolates` says whether a backend's cases run in a worker: every backend but a
  :class:`~onnx_arrow.compare.runner.CommandRunner` (which runs a process of its own per
  data set already), a runtime version's environment (its backend runs in a process of
  that environment's Python) and the built-in onnxruntime one (whose sessions are not fork-safe)
  unless ``in_process`` is asked for.  In the process, a backend's crash
  ends the command, its ``sys.exit`` too: for debuggers and profilers, unprotected.
"""

from __future__ import annotations

from typing import Any

from onnx import ModelProto

from onnx_arrow.compare.backends import BACKENDS, Backend, BackendLike, describe_backend
from onnx_arrow.compare.backends import resolve_backend as _resolve
from onnx_arrow.compare.environments import EnvironmentBackend, is_package_spec
from onnx_arrow.compare.ort import OnnxruntimeBackend, onnxruntime_backend
from onnx_arrow.compare.runner import CommandRunner
from onnx_arrow.errors import BackendSpecError, CaseLostError, CompareError
from onnx_arrow.pool import Pool

__all__ = ["SpecBackend", "backend_to_run", "checked_spec", "escaped", "isolates"]


class SpecBackend:
    """A backend named by a spec, loaded where it is first called (a worker process) and
    described as :func:`checked_spec` found it (``name``, :meth:`describe`)."""

    def __init__(self, spec: str, description: dict[str, Any]) -> None:
        self.spec = spec
        self.description = dict(description)
        self._backend: Backend | None = None

    @property
    def name(self) -> str:
        """The name the checked backend gave."""
        return str(self.description.get("name"))

    def describe(self) -> str:
        """What the checked backend runs, in words."""
        return str(self.description.get("runs"))

    def __call__(self, model: ModelProto, inputs: dict[str, Any], /) -> Any:
        if self._backend is None:
            self._backend = _resolve(self.spec)
        return self._backend(model, inputs)

    def __getstate__(self) -> dict[str, Any]:
        return {"spec": self.spec, "description": self.description}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["spec"], state["description"])  # type: ignore[misc]

    def __repr__(self) -> str:
        return f"SpecBackend({self.spec!r})"


def escaped(exc: BaseException) -> str:
    """The error of a case whose backend raised ``SystemExit`` or ``KeyboardInterrupt``
    (or another exception that is not an ``Exception``) in a worker process, in words."""
    name = type(exc).__name__
    if isinstance(exc, SystemExit):
        return f"{name}: the backend called sys.exit({exc.code!r}); it ends no command"
    if isinstance(exc, KeyboardInterrupt):
        return (
            f"{name}: raised by the backend itself (a Ctrl-C goes to the command, not to "
            "the worker process running the backend)"
        )
    return f"{name}: raised by the backend ({exc})"


def _check(spec: str) -> tuple[str, Any]:
    """In a worker: load the backend ``spec`` names and describe it; ``("error", message)``
    whatever it raises (its import's ``sys.exit`` too)."""
    try:
        return "ok", describe_backend(_resolve(spec))
    except BackendSpecError as exc:
        return "error", exc.message
    except Exception as exc:  # the backend's code, whatever it raises: a bad spec
        return "error", f"backend {spec!r}: loading it raised {type(exc).__name__}: {exc}"
    except BaseException as exc:  # sys.exit or KeyboardInterrupt of its code
        return "error", f"backend {spec!r}: loading it raised {escaped(exc)}"


def checked_spec(spec: str) -> SpecBackend:
    """The backend ``spec`` names, loaded and checked in a worker process of its own (its
    module never imported here).

    Raises
    ------
    BackendSpecError
        If it does not load (:func:`~onnx_arrow.compare.backends.resolve_backend` says
        why), its code raises anything while it loads, or it kills its worker process.
    """
    with Pool(1) as pool:
        try:
            kind, value = pool.result(pool.submit(_check, spec))
        except CaseLostError as exc:
            raise BackendSpecError(
                f"backend {spec!r}: loading it ended its worker process ({exc.message})"
            ) from None
    if kind != "ok":
        raise BackendSpecError(value)
    return SpecBackend(spec, value)


def isolates(backend: Backend, *, in_process: bool) -> bool:
    """Whether ``backend``'s cases run in a worker process: always, but for a runner (its
    own processes already), the built-in onnxruntime backend (a session's threads do not
    survive a fork: a worker forked from a process that made sessions can hang in its
    next; ``jobs`` above 1 forks it before any) or where ``in_process`` is asked for."""
    if in_process or isinstance(backend, CommandRunner | OnnxruntimeBackend | EnvironmentBackend):
        return False  # a runner and a runtime version's environment run processes of their own
    return backend is not onnxruntime_backend


def backend_to_run(
    backend: BackendLike, *, in_process: bool = False, jobs: int = 1, engine: str | None = None
) -> Backend:
    """The backend ``backend`` names or is (see
    :func:`~onnx_arrow.compare.backends.resolve_backend`), a spec loaded and checked in a
    worker process unless ``in_process``.

    Raises
    ------
    CompareError
        If ``in_process`` is asked for with ``jobs`` above 1 or an ``engine``.
    BackendSpecError
        As :func:`checked_spec`.
    """
    if in_process and (jobs > 1 or engine is not None):
        raise CompareError("in_process runs the cases in this process: not with jobs or engine")
    if in_process or not isinstance(backend, str) or backend.strip() in BACKENDS:
        return _resolve(backend)
    if is_package_spec(backend):  # its backend runs in its environment's process already
        return _resolve(backend)
    return checked_spec(backend.strip())
