"""Runtimes that are not Python, through files: :class:`CommandRunner` writes each data
set in the classic layout into a temporary folder, runs a command on it and reads the
``output_K.pb`` files it writes back as the model declares them.

A :class:`CommandRunner` is a backend (:class:`~onnx_arrow.compare.backends.Backend`):
``compare`` and ``run`` (``--runner COMMAND``) call it once per data set, in this
process or on an engine (it pickles as its command and timeout).
"""

from __future__ import annotations

import contextlib
import errno
import os
import shlex
import shutil
import signal
import stat
import string
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Final

from onnx import ModelProto

from onnx_arrow._interrupt import deferred_interrupt
from onnx_arrow.compare.deadlines import MAX_TIMEOUT
from onnx_arrow.core.model import (
    NO_FOLLOW,
    OPEN_FLAGS,
    decode_value,
    graph_values,
    kind_of_type,
    onnx_type_string,
    python_value,
    read_regular_file,
    value_message,
)
from onnx_arrow.corpus.sources import MAX_FILE_BYTES
from onnx_arrow.errors import BackendTimeoutError, CompareError, OnnxArrowError, RunnerError

__all__ = [
    "FOLDER_PREFIX",
    "PLACEHOLDERS",
    "STDERR_TAIL_LINES",
    "CommandRunner",
    "dies_with_parent",
    "how_it_ended",
    "input_files",
    "read_outputs",
    "remove_folder",
    "stderr_tail",
]

#: The placeholders of a command, and what each is replaced with.
PLACEHOLDERS: Final[Mapping[str, str]] = {
    "model": "the model file, CASE/model.onnx",
    "inputs": "the data set's folder of input_K.pb files, CASE/test_data_set_0",
    "outputs": "an empty folder the command writes output_K.pb into",
    "case": "a case folder: model.onnx and test_data_set_0/",
    "untyped": "a text file of the numbers K, one a line, of the outputs the model "
    "declares no type for (empty when it declares every type)",
}
#: The last lines of the command's stderr an error quotes.
STDERR_TAIL_LINES: Final = 20
_TAIL_CHARS: Final = 4000
#: ``prctl`` option: the signal the kernel sends a process when its parent ends.
_PR_SET_PDEATHSIG: Final = 1


class CommandRunner:
    """A backend that runs ``command`` on each data set through files.

    For each data set a temporary folder gets the case in the classic layout:
    ``case/model.onnx`` and ``case/test_data_set_0/input_K.pb`` (each input as the model
    declares it, written as onnx's test-data writer writes it).  The command's
    placeholders are replaced by those paths (see :data:`PLACEHOLDERS`), and it runs
    there, with its own process group.  It writes ``output_K.pb`` for the model's
    output K into ``{outputs}`` (into the data set folder, beside the inputs, when the
    command names no ``{outputs}``, as the classic layout keeps them); each is read as
    the model declares that output (regular files only, size-capped), an output it
    declares no type for as a TensorProto (as onnx's runner reads one), and the folder
    is removed, whatever happened.  ``{untyped}`` names a file listing those outputs
    (``trace`` exposes values that shape inference cannot type so): a command that writes
    each output by its declared type writes them as the values its runtime computed.

    Parameters
    ----------
    command
        The command line, split as a POSIX shell splits words (``shlex.split``) but
        run without a shell.  ``{model}``, ``{inputs}``, ``{outputs}``, ``{case}`` and
        ``{untyped}`` are replaced in any word (``--model={model}`` too); ``{{`` and
        ``}}`` are literal braces.  It must name ``{model}`` or ``{case}``.  A word naming an
        existing file or folder by a relative path (``runners/run.js``), and a program
        given with a ``/``, are made absolute now: the command runs in the temporary
        folder.
    timeout
        Seconds the command may take on one data set; it is then killed with its
        process group and the data set's error is a :class:`BackendTimeoutError`.
        None: no limit of its own (a deadline of ``compare`` still applies).

    Raises
    ------
    CompareError
        If the command is empty, does not split, names an unknown placeholder or
        neither ``{model}`` nor ``{case}``, or the timeout is not a number of seconds
        above 0.

    Notes
    -----
    A data set fails, each of its outputs an ``error`` whose text ends with the
    command's last :data:`STDERR_TAIL_LINES` lines of stderr, when the command does
    not start, exits with a status other than 0 or is killed by a signal
    (:class:`RunnerError`), runs past the timeout (:class:`BackendTimeoutError`), or
    leaves an output file missing or not decodable as declared (:class:`RunnerError`,
    naming each such file).  A Ctrl-C, or a deadline of ``compare``, kills the
    command's process group before the folder is removed; on Linux the command is
    also killed if the process running it dies.  A process killed outright (a worker of
    ``--jobs`` when Ctrl-C stops the pool) cannot remove its folder: the first runner
    call of any later process removes the folders of processes that have ended.

    Examples
    --------
    >>> CommandRunner("node run.js {model} {inputs} {outputs}").placeholders
    ('model', 'inputs', 'outputs')
    >>> CommandRunner("tract {model} --input-dir {nputs}")
    Traceback (most recent call last):
    ...
    onnx_arrow.errors.CompareError: the command 'tract {model} --input-dir {nputs}' names \
{nputs}; the placeholders are {model}, {inputs}, {outputs}, {case} and {untyped} (write \
{{ and }} for a literal brace)
    """

    def __init__(self, command: str, *, timeout: float | None = None) -> None:
        if not isinstance(command, str):
            raise CompareError(
                f"the command is a {type(command).__name__}; give it as one string, as a shell line"
            )
        if timeout is not None and not (
            isinstance(timeout, int | float)
            and not isinstance(timeout, bool)
            and 0 < timeout <= MAX_TIMEOUT
        ):
            raise CompareError(
                f"the runner's timeout is {timeout!r}; give a number of seconds above 0 and "
                f"at most {MAX_TIMEOUT} (a week), or None"
            )
        self.command = command
        self.timeout = timeout
        self.words = _absolute(_parsed(command))
        self.placeholders = tuple(
            dict.fromkeys(name for word in self.words for name in _names(word))
        )

    def __repr__(self) -> str:
        limit = "" if self.timeout is None else f", timeout={self.timeout:g}"
        return f"CommandRunner({shlex.join(self.words)!r}{limit})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CommandRunner):
            return NotImplemented
        return (self.words, self.timeout) == (other.words, other.timeout)

    def __hash__(self) -> int:
        return hash((tuple(self.words), self.timeout))

    #: What a report calls it (:func:`~onnx_arrow.compare.backends.describe_backend`).
    name: Final = "runner"

    def describe(self) -> str:
        """What the runner runs, for a report: its command."""
        return shlex.join(self.words)

    def __call__(self, model: ModelProto, inputs: dict[str, Any], /) -> list[Any]:
        """Run the command on one data set: the model's outputs in graph order."""
        with _folder() as folder:
            places = _write_case(folder, model, inputs, "outputs" in self.placeholders)
            if "untyped" in self.placeholders:
                places["untyped"] = _write_untyped(folder, model)
            argv = [word.format(**{k: str(v) for k, v in places.items()}) for word in self.words]
            stderr = folder / "stderr.txt"
            self._run(argv, folder, stderr)
            return read_outputs(model, folder, places["outputs"].relative_to(folder), stderr)

    def _run(self, argv: list[str], folder: Path, stderr: Path) -> None:
        """Run ``argv`` in ``folder`` to its end (or kill its process group)."""
        with open(folder / "stdout.txt", "wb") as out, open(stderr, "wb") as err:
            try:
                process = subprocess.Popen(
                    argv,
                    cwd=folder,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=err,
                    start_new_session=True,  # its own process group, out of the terminal's
                    # only prctl, looked up beforehand: nothing a lock of another thread guards
                    preexec_fn=dies_with_parent(),  # noqa: PLW1509
                )
            except OSError as exc:
                raise RunnerError(
                    f"cannot start {argv[0]!r}: {exc.strerror}; give the program as a path "
                    "or a name on PATH"
                ) from None
        try:
            status = process.wait(self.timeout)
        except subprocess.TimeoutExpired:
            raise BackendTimeoutError(
                f"the command ran longer than {self.timeout:g} s and was killed"
                f"{stderr_tail(stderr)}"
            ) from None
        except BackendTimeoutError as exc:  # compare's deadline, in this thread
            raise BackendTimeoutError(
                f"{exc.message}; the command was killed{stderr_tail(stderr)}"
            ) from None
        finally:
            _kill_group(process)
        if status != 0:
            raise RunnerError(f"the command {how_it_ended(status)}{stderr_tail(stderr)}")


def _parsed(command: str) -> list[str]:
    """The words of ``command``, each placeholder checked."""
    try:
        words = shlex.split(command)
    except ValueError as exc:
        raise CompareError(
            f"the command {command!r} does not split into words ({exc}); close its quotes"
        ) from None
    if not words:
        raise CompareError("the command is empty; give a program and its arguments")
    known = ", ".join(f"{{{n}}}" for n in list(PLACEHOLDERS)[:-1])
    known += f" and {{{list(PLACEHOLDERS)[-1]}}}"
    named: set[str] = set()
    for word in words:
        try:
            fields = list(string.Formatter().parse(word))
        except ValueError as exc:
            raise CompareError(
                f"the command {command!r} has a brace that opens or closes nothing in "
                f"{word!r} ({exc}); write {{{{ and }}}} for a literal brace"
            ) from None
        for _, name, spec, conversion in fields:
            if name is None:
                continue
            text = "{" + name + ("!" + conversion if conversion else "")
            text += (":" + spec if spec else "") + "}"
            if name not in PLACEHOLDERS or spec or conversion:
                raise CompareError(
                    f"the command {command!r} names {text}; the placeholders are {known} "
                    "(write {{ and }} for a literal brace)"
                )
            named.add(name)
    if not named & {"model", "case"}:
        raise CompareError(
            f"the command {command!r} names neither {{model}} nor {{case}}, so it cannot "
            "find the model; add one of them (and {inputs}, {outputs} where it takes them)"
        )
    return words


def _names(word: str) -> Iterator[str]:
    return (name for _, name, _, _ in string.Formatter().parse(word) if name is not None)


def _absolute(words: list[str]) -> list[str]:
    """Relative paths of files that exist here made absolute (the command runs elsewhere):
    the program when given with a ``/``, any other word without a placeholder."""
    return [
        os.path.abspath(word).replace("{", "{{").replace("}", "}}")
        if (
            not os.path.isabs(word)
            and "{" not in word
            and "}" not in word
            and not word.startswith("-")
            and ("/" in word if n == 0 else os.path.exists(word))
        )
        else word
        for n, word in enumerate(words)
    ]


#: The prefix of the runner's temporary folders: the pid of the process that made one
#: follows it, so that a folder whose process was killed outright (a worker process of
#: ``--jobs`` when Ctrl-C stops the pool) is known as left behind and removed later.
FOLDER_PREFIX: Final = "onnx-arrow-runner-"
#: The processes that have swept the folders left behind (a set of one pid, or none).
_swept: set[int] = set()


@contextlib.contextmanager
def _folder() -> Iterator[Path]:
    """A new temporary folder, removed at the end, a Ctrl-C meanwhile or not."""
    if os.getpid() not in _swept:
        _swept.clear()
        _swept.add(os.getpid())
        _sweep(Path(tempfile.gettempdir()))
    path = Path(tempfile.mkdtemp(prefix=f"{FOLDER_PREFIX}{os.getpid()}-"))
    try:
        yield path
    finally:
        with deferred_interrupt():
            remove_folder(path)


def _sweep(root: Path) -> None:
    """Remove the runner's folders in ``root`` whose process has ended without removing
    them (killed outright: nothing of it ran after)."""
    with contextlib.suppress(OSError):
        for entry in os.scandir(root):
            pid = entry.name.removeprefix(FOLDER_PREFIX).split("-", 1)[0]
            if (
                entry.name.startswith(FOLDER_PREFIX)
                and pid.isdigit()
                and not _alive(int(pid))
                and entry.is_dir(follow_symlinks=False)
            ):
                remove_folder(Path(entry.path))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's: not ours to remove
        return True
    return True


def remove_folder(path: Path) -> None:
    """Remove the folder, what the command left unwritable in it too; never through a
    link (a link put in its place is removed, not what it names), never changing the
    permissions of anything outside it."""
    shutil.rmtree(path, ignore_errors=True)  # follows no link (it walks open folders)
    if path.is_symlink():
        with contextlib.suppress(OSError):
            path.unlink()
        return
    if path.exists():
        with contextlib.suppress(OSError):
            fd = os.open(path, _FOLDER_FLAGS)
            try:
                _unlock(fd, _MAX_DEPTH)
            finally:
                os.close(fd)
        shutil.rmtree(path, ignore_errors=True)


#: Opening a folder of the runner's: a folder itself, never a link to one.
_FOLDER_FLAGS: Final = (
    os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | NO_FOLLOW | getattr(os, "O_CLOEXEC", 0)
)
#: How deep :func:`_unlock` goes into what a command left (deeper folders stay).
_MAX_DEPTH: Final = 64


def _unlock(fd: int, depth: int) -> None:
    """Make the open folder ``fd`` and the folders below it writable by their owner,
    each opened without following a link, so that no permission outside changes."""
    with contextlib.suppress(OSError):
        os.fchmod(fd, 0o700)
    if depth <= 0:
        return
    with contextlib.suppress(OSError), os.scandir(fd) as entries:
        for entry in entries:
            if not entry.is_dir(follow_symlinks=False):
                continue
            with contextlib.suppress(OSError):
                inner = os.open(entry.name, _FOLDER_FLAGS, dir_fd=fd)
                try:
                    _unlock(inner, depth - 1)
                finally:
                    os.close(inner)


def _open_below(root: Path, rel: Path) -> int:
    """The folder ``root / rel`` opened, each folder on the way opened without following
    a link: what is read through it is below ``root``, whatever the command put there.

    Raises
    ------
    OnnxArrowError
        Naming the first folder on the way that is a link or not a folder.
    """
    fd, named = -1, root
    try:
        fd = os.open(root, _FOLDER_FLAGS)
        for n, part in enumerate(rel.parts):
            named = Path(*rel.parts[: n + 1])
            inner = os.open(part, _FOLDER_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = inner
    except OSError as exc:
        if fd != -1:
            os.close(fd)
        what = "a link or not a folder" if exc.errno in _NOT_A_FOLDER else exc.strerror
        raise OnnxArrowError(
            f"the folder {named} is {what}: the runner's folders are read only as made, "
            "never through a link; write output_K.pb into the folder {outputs} names"
        ) from None
    return fd


#: What opening a link or a file as a folder fails with (``O_NOFOLLOW``, ``O_DIRECTORY``).
_NOT_A_FOLDER: Final = frozenset({errno.ELOOP, errno.ENOTDIR})


def input_files(model: ModelProto, inputs: dict[str, Any]) -> list[tuple[str, str, Any]]:
    """The inputs fed, as the files a runtime reads: ``(name, input_K.pb, message)``, K
    the model's input each is for, the message of the type the model declares.

    Raises
    ------
    CompareError
        For an input the model does not declare, or declares without a type.
    """
    declared = {v.name: (k, v) for k, v in enumerate(graph_values(model, "input"))}
    files = []
    for name, value in inputs.items():
        if name not in declared:
            raise CompareError(
                f"input {name!r} is not an input the model declares "
                f"({', '.join(map(repr, declared)) or 'it declares none'}); feed the "
                "model's inputs by their names"
            )
        k, info = declared[name]
        if not info.HasField("type"):
            raise CompareError(
                f"the model declares no type for input {k} ({name!r}), so it cannot be "
                "written as a file; declare its type in the model"
            )
        files.append((name, f"input_{k}.pb", value_message(value, name, info.type)))
    return files


def _write_case(
    folder: Path, model: ModelProto, inputs: dict[str, Any], own_outputs: bool
) -> dict[str, Path]:
    """The case in the classic layout under ``folder``; the paths of the placeholders."""
    case = folder / "case"
    data = case / "test_data_set_0"
    data.mkdir(parents=True)
    outputs = folder / "outputs" if own_outputs else data
    outputs.mkdir(exist_ok=True)
    (case / "model.onnx").write_bytes(model.SerializeToString())
    for _, file, message in input_files(model, inputs):
        (data / file).write_bytes(message.SerializeToString())
    return {"model": case / "model.onnx", "inputs": data, "outputs": outputs, "case": case}


def _write_untyped(folder: Path, model: ModelProto) -> Path:
    """The file ``{untyped}`` names: the numbers of the outputs declared without a type."""
    path = folder / "untyped.txt"
    path.write_text(
        "".join(
            f"{k}\n"
            for k, info in enumerate(graph_values(model, "output"))
            if not info.HasField("type") or info.type.WhichOneof("value") is None
        )
    )
    return path


def read_outputs(
    model: ModelProto,
    root: Path,
    rel: Path,
    stderr: Path,
    *,
    done: str = "the command exited with status 0",
) -> list[Any]:
    """The ``output_K.pb`` files of the folder ``root / rel`` as the model declares its
    outputs (read below ``root`` only); ``done`` says what wrote them, for an error."""
    try:
        folder = _open_below(root, rel)
    except OnnxArrowError as exc:
        raise RunnerError(f"{done} but {exc.message}{stderr_tail(stderr)}") from None
    try:
        return _read_output_files(model, folder, stderr, done)
    finally:
        os.close(folder)


def _read_output_files(model: ModelProto, folder: int, stderr: Path, done: str) -> list[Any]:
    """The ``output_K.pb`` files of the open folder ``folder``."""
    values: list[Any] = []
    problems: list[str] = []
    for k, info in enumerate(graph_values(model, "output")):
        name = f"output_{k}.pb"
        where = f"{name} ({info.name})"
        try:
            os.stat(name, dir_fd=folder, follow_symlinks=False)
        except FileNotFoundError:
            problems.append(f"{where} is missing")
            continue
        except OSError:
            pass  # read_regular_file says what it is
        try:
            data = read_regular_file(
                name,
                max_bytes=MAX_FILE_BYTES,
                where=where,
                fix="write each output as a regular file",
                dir_fd=folder,
            )
        except OnnxArrowError as exc:
            problems.append(str(exc))
            continue
        try:
            # a file of an output the model gives no type is a TensorProto, as read_pb reads it
            typed = info.HasField("type") and info.type.WhichOneof("value") is not None
            kind = kind_of_type(info.type, where=where).name if typed else "tensor"
            node, _, _ = decode_value(data, kind, where=where)
            values.append(python_value(node, maps_as_dicts=True, strings="str"))
        except OnnxArrowError as exc:
            problems.append(
                f"{where} does not decode as the model declares it, {_declared(info.type)} ({exc})"
            )
    if problems:
        raise RunnerError(f"{done} but {'; '.join(problems)}{stderr_tail(stderr)}")
    return values


def _declared(type_proto: Any) -> str:
    if type_proto.WhichOneof("value") is None:
        return "no type (so a tensor)"
    try:
        return onnx_type_string(type_proto)
    except OnnxArrowError:
        return "a type onnx-arrow does not read"


def how_it_ended(status: int) -> str:
    if status < 0:
        try:
            name = signal.Signals(-status).name
        except ValueError:
            name = f"signal {-status}"
        return f"was killed by {name}"
    return f"exited with status {status}"


def stderr_tail(stderr: Path) -> str:
    """The last lines of the command's stderr, for an error (nothing when it is empty, or
    when the command put anything but a regular file of its own in its place)."""
    try:
        folder = os.open(stderr.parent, _FOLDER_FLAGS)
        try:
            fd = os.open(stderr.name, OPEN_FLAGS | NO_FOLLOW, dir_fd=folder)
        finally:
            os.close(folder)
        with open(fd, "rb") as f:
            size = os.fstat(fd).st_size
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return ""
            f.seek(max(0, size - _TAIL_CHARS))
            text = f.read(_TAIL_CHARS).decode("utf-8", "replace")
    except OSError:
        return ""
    lines = text.rstrip().splitlines()[-STDERR_TAIL_LINES:]
    if not lines:
        return "; its stderr is empty"
    return "; its stderr ends:\n" + "\n".join(lines)


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """Kill the command's process group (what it left running too) and reap it."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with deferred_interrupt():
        process.wait()


def dies_with_parent() -> Any:
    """A ``preexec_fn`` that has the kernel kill the command when this process ends
    (Linux); None elsewhere."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None

    def tie() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)

    return tie
