"""Backends of a runtime's version from the package index, each in a virtual environment
made for it: ``--backend onnxruntime==1.20.1``, ``onnxruntime==1.20.1:onnxruntime.backend``,
``PACKAGE==VERSION[,PACKAGE==VERSION...][:BACKEND]``.

The environment (:mod:`onnx_arrow.corpus.venvs`) holds the packages asked for and the
installed onnx's version of onnx unless onnx is one of them; it is made once into the
cache folder (``backends/``), its record (what pip resolved, every file by digest) kept
with it, and checked each time its Python starts.  ``BACKEND`` is ``MODULE`` or
``MODULE:NAME`` of an object with onnx's backend interface in the environment, or
``reference`` (onnx's ``ReferenceEvaluator``); without one, the known packages'
(:data:`DEFAULT_BACKENDS`).

:class:`EnvironmentBackend` runs the backend in one process of that environment's
Python, :mod:`~onnx_arrow.compare.environment_server`, started once and fed a data set at
a time through files as ``--runner`` feeds a command (each input as the model declares
it, each output read back as the model declares it, below the folder it was given): a
data set costs a few milliseconds more than in process (``benchmarks/
environment_backends.py``), where a process per data set would cost the start of Python,
onnx and the runtime each time.  A backend that dies or is killed makes that data set an
error, and the next one starts a new process; a deadline or Ctrl-C kills it with its
process group.  It pickles as its spec and folder: a worker process starts its own,
after checking the environment again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import selectors
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Final

import onnx
from onnx import ModelProto

from onnx_arrow._interrupt import deferred_interrupt
from onnx_arrow.compare import environment_server
from onnx_arrow.compare.runner import (
    FOLDER_PREFIX,
    dies_with_parent,
    how_it_ended,
    input_files,
    read_outputs,
    remove_folder,
    stderr_tail,
)
from onnx_arrow.core.model import NO_FOLLOW
from onnx_arrow.corpus.cache import cache_folder
from onnx_arrow.corpus.venvs import (
    Environment,
    cached_environment,
    python_command,
    verify_environment,
)
from onnx_arrow.errors import (
    BackendPrepareError,
    BackendSpecError,
    BackendTimeoutError,
    CompareError,
    OnnxArrowError,
    RunnerError,
    VirtualEnvironmentError,
)

__all__ = [
    "DEFAULT_BACKENDS",
    "START_TIMEOUT",
    "EnvironmentBackend",
    "PackageSpec",
    "environment_folder",
    "is_package_spec",
    "parse_package_spec",
]

#: The backend of a package named without one: its module with onnx's backend interface.
DEFAULT_BACKENDS: Final = {
    "onnxruntime": "onnxruntime.backend",
    "onnxruntime-gpu": "onnxruntime.backend",
    "onnxruntime-directml": "onnxruntime.backend",
    "onnxruntime-openvino": "onnxruntime.backend",
    "onnx": "reference",
}
#: Seconds the environment's Python may take to start and import the backend.
START_TIMEOUT: Final = 300.0
#: Seconds between two looks at a Ctrl-C or deadline while a reply is awaited.
_TICK: Final = 0.5
#: The longest reply line read.
_MAX_REPLY: Final = 1 << 20

#: Most pins of a spec, and the longest pin (a package's name and an exact version).
_MAX_PINS: Final = 16
_MAX_PIN: Final = 120
#: The longest name of an environment's folder, within every file system's 255 bytes.
_MAX_FOLDER_NAME: Final = 200
_NAME: Final = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
_VERSION: Final = r"[0-9][0-9A-Za-z.+!-]*"
_PIN: Final = re.compile(rf"(?P<name>{_NAME})==(?P<version>{_VERSION})")
_DOTTED: Final = r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*"
_BACKEND: Final = re.compile(rf"reference|{_DOTTED}(?::{_DOTTED})?")


def _normal(name: str) -> str:
    """A distribution's name as PEP 503 compares them."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True)
class PackageSpec:
    """A backend spec ``PACKAGE==VERSION[,PACKAGE==VERSION...][:BACKEND]``, parsed: the
    pins (the runtime first) and the backend run in their environment."""

    pins: tuple[tuple[str, str], ...]
    backend: str
    given_backend: bool = False

    @property
    def package(self) -> str:
        """The runtime's package (the first pin)."""
        return self.pins[0][0]

    @property
    def version(self) -> str:
        """The runtime's version."""
        return self.pins[0][1]

    def requirements(self) -> list[str]:
        """What pip installs: the pins, and the installed onnx's version of onnx unless
        onnx is pinned (the backend interface and the files it reads need it)."""
        wanted = [f"{name}=={version}" for name, version in self.pins]
        if all(_normal(name) != "onnx" for name, _ in self.pins):
            wanted.append(f"onnx=={onnx.__version__}")
        return wanted

    def __str__(self) -> str:
        pins = ",".join(f"{name}=={version}" for name, version in self.pins)
        return f"{pins}:{self.backend}" if self.given_backend else pins


def is_package_spec(text: object) -> bool:
    """Whether ``text`` is a backend spec of this module: ``==`` before any ``:``."""
    return isinstance(text, str) and "==" in text.partition(":")[0]


def parse_package_spec(text: str) -> PackageSpec:
    """The :class:`PackageSpec` ``text`` spells.

    >>> str(parse_package_spec("onnxruntime==1.20.1"))
    'onnxruntime==1.20.1'
    >>> parse_package_spec("onnxruntime==1.20.1,numpy==1.26.4").backend
    'onnxruntime.backend'

    Raises
    ------
    BackendSpecError
        Naming the spec: a pin that is not ``NAME==VERSION``, a package named twice, a
        backend that is not ``MODULE[:NAME]`` or ``reference``, or none given for a
        package without a default one.
    """
    form = "PACKAGE==VERSION[,PACKAGE==VERSION...][:MODULE[:NAME]], as onnxruntime==1.20.1"
    pins_text, colon, backend = text.strip().partition(":")
    pins: list[tuple[str, str]] = []
    if len(pins_text.split(",")) > _MAX_PINS:
        raise BackendSpecError(f"backend {text[:200]!r}...: more than {_MAX_PINS} pins; {form}")
    for pin in pins_text.split(","):
        if len(pin.strip()) > _MAX_PIN:
            raise BackendSpecError(
                f"backend {text[:200]!r}...: a pin of {len(pin.strip())} characters (at most "
                f"{_MAX_PIN}: a package's name and an exact version); give {form}"
            )
        match = _PIN.fullmatch(pin.strip())
        if match is None:
            raise BackendSpecError(
                f"backend {text!r}: {pin.strip()!r} is not a pin NAME==VERSION (an exact "
                f"version: an environment is made for it); give {form}"
            )
        pins.append((match.group("name"), match.group("version")))
    names = [_normal(name) for name, _ in pins]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise BackendSpecError(f"backend {text!r}: {', '.join(twice)} pinned twice; pin each once")
    if colon:
        if not _BACKEND.fullmatch(backend.strip()):
            raise BackendSpecError(
                f"backend {text!r}: {backend!r} is not MODULE or MODULE:NAME (such as "
                f"onnxruntime.backend) nor reference; give {form}"
            )
        return PackageSpec(tuple(pins), backend.strip(), given_backend=True)
    default = DEFAULT_BACKENDS.get(names[0])
    if default is None:
        known = ", ".join(sorted(DEFAULT_BACKENDS))
        raise BackendSpecError(
            f"backend {text!r}: onnx-arrow knows no backend module of {pins[0][0]} (it knows "
            f"those of {known}); name the module with onnx's backend interface it installs: "
            f"{pins_text}:MODULE[:NAME]"
        )
    return PackageSpec(tuple(pins), default)


def environment_folder(spec: PackageSpec) -> Path | None:
    """Where the environment of ``spec`` is cached (None: the cache is off)."""
    base = cache_folder()
    if base is None:
        return None
    python = f"py{sys.version_info[0]}.{sys.version_info[1]}"
    pins = "-".join(f"{_normal(r.split('==')[0])}-{r.split('==')[1]}" for r in spec.requirements())
    name = f"{pins}-{python}"
    if len(name.encode()) > _MAX_FOLDER_NAME:  # many pins: named by their digest, kept short
        digest = hashlib.blake2b(name.encode(), digest_size=8).hexdigest()
        name = f"{_normal(spec.package)}-{digest}-{python}"
    return base / "backends" / name


@dataclass
class _Process:
    """The environment's Python serving the backend, and its folder (stderr)."""

    process: subprocess.Popen[bytes]
    requests: IO[bytes]
    replies: IO[bytes]
    folder: Path
    stderr: IO[bytes]
    buffer: bytearray = field(default_factory=bytearray)
    #: The process that started it: a process forked after (a worker of ``--jobs``)
    #: inherits this object, not the process, and starts its own.
    owner: int = field(default_factory=os.getpid)

    def stop(self) -> None:
        """Kill it with its process group, reap it, remove its folder (in the process that
        started it only)."""
        if os.getpid() != self.owner:
            return
        with deferred_interrupt():
            with contextlib.suppress(OSError):
                self.requests.close()
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
            with contextlib.suppress(OSError):
                self.replies.close()
            self.stderr.close()
            remove_folder(self.folder)


class EnvironmentBackend:
    """A backend of a runtime's version, run in an environment made for it (see the
    module docs): a callable ``(model, inputs) -> outputs``.

    Parameters
    ----------
    spec
        ``PACKAGE==VERSION[,PACKAGE==VERSION...][:BACKEND]`` or a :class:`PackageSpec`.
    offline
        Use the cached environment only; one not cached is an error naming it.
    device
        The device the backend's ``prepare`` is asked for.

    Raises
    ------
    BackendSpecError
        A spec that does not parse (:func:`parse_package_spec`).
    VirtualEnvironmentError
        The environment cannot be made (pip's last lines), is not cached and ``offline``,
        or a cached one fails its check.
    """

    def __init__(
        self, spec: str | PackageSpec, *, offline: bool = False, device: str = "CPU"
    ) -> None:
        self.spec = spec if isinstance(spec, PackageSpec) else parse_package_spec(spec)
        self.device = device
        self._temporary: weakref.finalize[Any, Any] | None = None
        folder = environment_folder(self.spec)
        what = f"the backend {self.spec}"
        if folder is None:
            if offline:
                raise VirtualEnvironmentError(
                    f"the cache is off (ONNX_ARROW_CACHE_DIR=off), so {what} has no cached "
                    "environment, and --offline forbids making one"
                )
            made = Path(tempfile.mkdtemp(prefix="onnx-arrow-env-"))
            self._temporary = weakref.finalize(self, _remove_made, made, os.getpid())
            folder = made / "env"
        self.folder = folder
        self._env: Environment | None = cached_environment(
            folder, self.spec.requirements(), offline=offline, what=what
        )
        self._fresh = True  # checked just now: the first start need not check again
        self._proc: _Process | None = None
        self._model: ModelProto | None = None
        self._finalizer: weakref.finalize[Any, Any] | None = None

    # --- what it is -------------------------------------------------------------------

    @property
    def name(self) -> str:
        """What a report calls it: its spec (``onnxruntime==1.20.1``)."""
        return str(self.spec)

    @property
    def packages(self) -> dict[str, str]:
        """The distributions of its environment and their versions (what pip resolved)."""
        return dict(self._environment().packages)

    def environment(self) -> dict[str, Any]:
        """Its environment, for a report: its folder's name, its Python's version and the
        distributions pip resolved."""
        env = self._environment()
        return {
            "name": self.folder.name,
            "python": env.python_version,
            "requirements": list(env.requirements),
            "packages": dict(env.packages),
        }

    def describe(self) -> str:
        """What runs: the runtime's version, the backend, the device, and the versions of
        the environment's onnx and numpy and Python."""
        env = self._environment()
        found = {_normal(k): v for k, v in env.packages.items()}
        version = found.get(_normal(self.spec.package), "?")
        beside = ", ".join(
            f"{name} {found[name]}"
            for name in ("onnx", "numpy")
            if name in found and name != _normal(self.spec.package)
        )
        return (
            f"{self.spec.package} {version} ({self.spec.backend}, device {self.device}), in an "
            f"environment of its own with {beside}, Python {env.python_version}"
        )

    def __repr__(self) -> str:
        return f"EnvironmentBackend({self.name!r}, device={self.device!r})"

    # --- the process ------------------------------------------------------------------

    def check(self) -> EnvironmentBackend:
        """Start the environment's Python and import the backend there now, so that a
        backend that does not import fails before any case runs.

        Raises
        ------
        BackendSpecError
            The backend does not import in its environment (the message quotes why).
        """
        if self._proc is None:
            self._start()
        return self

    def _environment(self) -> Environment:
        """Its environment as last checked (checked now if it never was here)."""
        if self._env is None:
            self._env = verify_environment(self.folder)
        return self._env

    def _start(self) -> _Process:
        """Start the environment's Python, checked first (every start is)."""
        env = self._env if self._fresh and self._env is not None else None
        if env is None:
            env = self._env = verify_environment(self.folder)
        self._fresh = False
        folder = Path(tempfile.mkdtemp(prefix=f"{FOLDER_PREFIX}{os.getpid()}-"))
        stderr = open(folder / "stderr.txt", "w+b")  # noqa: SIM115 (kept by _Process)
        command = [*python_command(env), environment_server.__file__, self.spec.backend]
        try:
            process = subprocess.Popen(
                [*command, self.device],
                cwd=folder,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                start_new_session=True,  # its own process group, out of the terminal's
                preexec_fn=dies_with_parent(),  # noqa: PLW1509 (prctl only)
            )
        except OSError as exc:
            stderr.close()
            remove_folder(folder)
            raise VirtualEnvironmentError(
                f"its Python does not start ({exc.strerror})", where=str(env.python)
            ) from None
        requests, replies = process.stdin, process.stdout
        if requests is None or replies is None:  # never: both are pipes
            raise RunnerError("the environment's Python was started without its pipes")
        proc = _Process(process, requests, replies, folder, stderr)
        self._proc = proc
        self._model = None
        self._finalizer = weakref.finalize(self, proc.stop)
        try:
            hello = self._receive(proc, START_TIMEOUT)
        except RunnerError as exc:
            self._stop()
            hello = {"error": exc.message}
        except BaseException:
            self._stop()
            raise
        if "ready" not in hello:
            self._stop()
            raise BackendSpecError(
                f"backend {self.spec}: {self.spec.backend} does not load in its environment "
                f"({hello.get('error', 'no answer')}); name a module the environment's "
                f"packages install ({', '.join(env.packages)})"
            )
        return proc

    def _forked(self) -> None:
        """In a process forked after this backend's started (a worker of ``--jobs``): the
        parent's process is the parent's, this one starts its own (its environment checked
        again)."""
        if self._finalizer is not None:
            self._finalizer.detach()
        self._finalizer = None
        if self._temporary is not None:
            self._temporary.detach()
            self._temporary = None
        self._proc = None
        self._model = None
        self._fresh = False

    def _stop(self) -> None:
        if self._finalizer is not None:
            self._finalizer()  # proc.stop, once
            self._finalizer = None
        self._proc = None
        self._model = None

    def close(self) -> None:
        """End the environment's Python (a new one starts on the next call); remove an
        environment made for this backend alone (the cache off)."""
        self._stop()
        if self._temporary is not None:
            self._temporary()
            self._temporary = None

    def _receive(self, proc: _Process, timeout: float | None) -> dict[str, Any]:
        """The next reply line, waiting ``_TICK`` seconds at a time (a deadline or Ctrl-C
        lands between two); a process that ends first is a :class:`RunnerError`."""
        fd = proc.replies.fileno()
        waited = 0.0
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            while b"\n" not in proc.buffer:
                if timeout is not None and waited >= timeout:
                    raise RunnerError(
                        f"the Python of {self.spec}'s environment did not answer within "
                        f"{timeout:g} s{stderr_tail(proc.folder / 'stderr.txt')}"
                    )
                if not selector.select(_TICK):
                    waited += _TICK
                    continue
                block = os.read(fd, 1 << 16)
                if not block:
                    status = proc.process.wait()
                    raise RunnerError(
                        f"the Python of {self.spec}'s environment {how_it_ended(status)}"
                        f"{stderr_tail(proc.folder / 'stderr.txt')}"
                    )
                proc.buffer += block
                if len(proc.buffer) > _MAX_REPLY:
                    raise RunnerError(
                        f"the Python of {self.spec}'s environment answered a line of more "
                        f"than {_MAX_REPLY} bytes, not the protocol's"
                    )
        line, _, rest = bytes(proc.buffer).partition(b"\n")
        proc.buffer[:] = rest
        try:
            reply = json.loads(line)
        except ValueError:
            reply = None
        if not isinstance(reply, dict):
            raise RunnerError(
                f"the Python of {self.spec}'s environment answered {line[:200]!r}, not the "
                "protocol's JSON object"
            )
        return reply

    # --- a data set -------------------------------------------------------------------

    def __call__(self, model: ModelProto, inputs: dict[str, Any], /) -> list[Any]:
        """Run one data set in the environment: the model's outputs in graph order.

        Raises
        ------
        BackendPrepareError
            The backend's ``prepare`` raised on the model.
        RunnerError
            Its ``run`` raised, its outputs could not be written or read as the model
            declares them, or its process ended (the last lines of its stderr quoted).
        """
        if self._proc is not None and self._proc.owner != os.getpid():
            self._forked()
        proc = self._proc if self._proc is not None else self._start()
        stderr = proc.folder / "stderr.txt"
        try:
            request = self._request(proc, model, inputs)
            proc.stderr.seek(0)
            proc.stderr.truncate()
            proc.requests.write(json.dumps(request).encode() + b"\n")
            proc.requests.flush()
            reply = self._receive(proc, None)
        except CompareError:  # the inputs are not the model's: this data set's error
            raise
        except BackendTimeoutError:  # a deadline: its process killed, a new one next
            self._stop()
            raise
        except (BrokenPipeError, OnnxArrowError) as exc:  # it ended, or broke its folder
            said = (
                f"the Python of {self.spec}'s environment {how_it_ended(proc.process.wait())}"
                f"{stderr_tail(stderr)}"
                if isinstance(exc, BrokenPipeError)
                else exc.message
            )
            self._stop()
            raise RunnerError(said) from None
        except BaseException:  # a deadline, a Ctrl-C: its process killed, a new one next
            self._stop()
            raise
        self._model = model
        error = reply.get("error")
        if error is not None:
            stage = reply.get("stage")
            if stage == "prepare":
                self._model = None
                raise BackendPrepareError(
                    f"{self.spec.backend}.prepare(model, {self.device!r}) raised {error}"
                )
            what = {"run": "rep.run(inputs)", "read": "reading its inputs"}.get(
                str(stage), "writing its outputs"
            )
            raise RunnerError(f"{self.spec}: {what} raised {error}{stderr_tail(stderr)}")
        done = f"the backend {self.spec} said it wrote its outputs"
        return read_outputs(model, proc.folder, Path(_OUTPUTS), stderr, done=done)

    def _request(self, proc: _Process, model: ModelProto, inputs: dict[str, Any]) -> dict[str, Any]:
        """Write the data set into the process's folder (the model when it changed, the
        inputs, an empty outputs folder), every file opened below the folder without
        following a link; the request that names them."""
        files = input_files(model, inputs)
        root = _open_folder(proc.folder, None, proc.folder)
        try:
            if model is not self._model:
                _write_at(root, _MODEL, model.SerializeToString())
            for sub in (_INPUTS, _OUTPUTS):
                _emptied(root, sub, proc.folder)
            folder = _open_folder(_INPUTS, root, proc.folder / _INPUTS)
            try:
                for _, file, message in files:
                    _write_at(folder, file, message.SerializeToString())
            finally:
                os.close(folder)
        finally:
            os.close(root)
        return {
            "model": None if model is self._model else str(proc.folder / _MODEL),
            "inputs": [[name, str(proc.folder / _INPUTS / file)] for name, file, _ in files],
            "outputs": str(proc.folder / _OUTPUTS),
        }

    # --- pickled for a worker process -------------------------------------------------

    def __getstate__(self) -> dict[str, Any]:
        return {"spec": str(self.spec), "device": self.device, "folder": str(self.folder)}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.spec = parse_package_spec(state["spec"])
        self.device = state["device"]
        self.folder = Path(state["folder"])
        self._temporary = None
        self._env = None  # checked when its Python starts
        self._fresh = False
        self._proc = None
        self._model = None
        self._finalizer = None

    def runner_command(self) -> str:
        """The ``--runner`` command that runs this backend a process per data set (the
        runner protocol), for comparison: the environment's Python on the server script."""
        env = self._environment()
        words = [*python_command(env), environment_server.__file__, self.spec.backend]
        return shlex.join([*words, self.device, "--once", "{model}", "{inputs}", "{outputs}"])


#: The files of a process's folder: the model, the inputs' and the outputs' folders.
_MODEL: Final = "model.onnx"
_INPUTS: Final = "inputs"
_OUTPUTS: Final = "outputs"
#: Opening a folder, never a link to one.
_FOLDER_FLAGS: Final = (
    os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | NO_FOLLOW | getattr(os, "O_CLOEXEC", 0)
)


def _open_folder(path: str | Path, dir_fd: int | None, named: Path) -> int:
    """The folder ``path`` (below ``dir_fd``) opened, never through a link."""
    try:
        return os.open(path, _FOLDER_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        raise OnnxArrowError(
            f"the folder {named} the backend's data sets go through is a link or not a "
            f"folder ({exc.strerror}): something in the environment replaced it"
        ) from None


def _emptied(root: int, name: str, named: Path) -> None:
    """The folder ``name`` of the open folder ``root`` made empty (made, if missing; what
    is in its place removed, a link as a link)."""
    try:
        os.mkdir(name, 0o700, dir_fd=root)
        return
    except FileExistsError:
        pass
    try:
        folder = os.open(name, _FOLDER_FLAGS, dir_fd=root)
    except OSError:  # a link or a file in its place: removed, never followed
        os.unlink(name, dir_fd=root)
        os.mkdir(name, 0o700, dir_fd=root)
        return
    try:
        with os.scandir(folder) as entries:
            names = [(e.name, e.is_dir(follow_symlinks=False)) for e in entries]
        for entry, is_folder in names:
            if is_folder:
                shutil.rmtree(entry, dir_fd=folder)
            else:
                os.unlink(entry, dir_fd=folder)
    except OSError as exc:
        raise OnnxArrowError(f"cannot empty the folder {named / name} ({exc.strerror})") from None
    finally:
        os.close(folder)


def _write_at(folder: int, name: str, data: bytes) -> None:
    """Write the file ``name`` of the open folder ``folder`` anew (whatever was in its
    place removed first, never written through)."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(name, dir_fd=folder)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | NO_FOLLOW | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(name, flags, 0o600, dir_fd=folder)
    with open(fd, "wb") as out:
        out.write(data)


def _remove_made(folder: Path, owner: int) -> None:
    """Remove an environment made for one backend alone, in the process that made it."""
    if os.getpid() == owner:
        shutil.rmtree(folder, ignore_errors=True)
