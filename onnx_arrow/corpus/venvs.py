"""Virtual environments of the cache (an onnx release's generator, a backend's
``PACKAGE==VERSION``): made once with ``python -m venv`` and pip, recorded by digest, and
checked on every use, like a cached wheel.

An environment is made in a hidden folder beside its place, and moved into place whole
once pip has installed what it is asked for and its record is written: another process
never sees one half-made.  The record, ``onnx-arrow-environment.json`` in the
environment's folder, holds what it was asked for (the requirements), what pip resolved
(each installed distribution and its version, read from its ``METADATA``), its
interpreter (``bin/python``: the link's target, or the file, and the sha256 of the
program it runs) and the sha256 of every file it holds, grouped by entry (each top folder
of ``site-packages``, each other file): so that a change is named by the package it
touched.

:func:`cached_environment` checks all of it before the environment's Python runs: an
interpreter replaced, a file of ``site-packages`` changed, added (a ``.pth`` file runs
code at start-up) or removed, anything but a regular file, a folder or a link in it, is a
:class:`~onnx_arrow.errors.VirtualEnvironmentError` naming the environment and what
changed, with the fix (delete it, and it is made again).  Its Python runs as
:func:`python_command` gives it, ``-I -B``: isolated from the caller's ``PYTHONPATH`` and
user site, and writing no bytecode into the folder it was checked against.
"""

from __future__ import annotations

import contextlib
import datetime
import email.parser
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from onnx_arrow.corpus.wheels import read_record, write_record
from onnx_arrow.errors import OnnxArrowError, VirtualEnvironmentError

__all__ = [
    "RECORD",
    "Environment",
    "cached_environment",
    "python_command",
    "temporary_environment",
    "verify_environment",
]

#: The record of an environment, in its folder.
RECORD: Final = "onnx-arrow-environment.json"
#: The version of the record's layout; a record of another is not this one's.
_FORMAT: Final = 1
#: Where an environment keeps its interpreter and its packages.
_BIN: Final = "Scripts" if os.name == "nt" else "bin"
_EXE: Final = "python.exe" if os.name == "nt" else "python"
#: The largest record read (an environment of some thousand packages).
_MAX_RECORD: Final = 1 << 20
#: Bytes hashed at a time.
_BLOCK: Final = 1 << 20


@dataclass(frozen=True)
class Environment:
    """A checked environment: its folder, its Python, and from its record what it was made
    for (``requirements``), the distributions pip resolved (``packages``, name: version)
    and its interpreter's Python version."""

    folder: Path
    requirements: tuple[str, ...]
    packages: Mapping[str, str]
    python_version: str

    @property
    def python(self) -> Path:
        """The environment's interpreter."""
        return self.folder / _BIN / _EXE


def python_command(env: Environment) -> list[str]:
    """The command that runs the environment's Python as onnx-arrow runs it: isolated
    (``-I``: no ``PYTHONPATH``, no user site, not the working folder) and writing no
    bytecode (``-B``), so that running it changes nothing it was checked against."""
    return [str(env.python), "-I", "-B"]


def cached_environment(
    folder: Path,
    requirements: Sequence[str],
    *,
    offline: bool,
    what: str,
    pip_options: Sequence[str] = (),
) -> Environment:
    """The environment of ``folder``: checked if it is there (:func:`verify_environment`),
    else made (``python -m venv``, then ``pip install`` of ``requirements``) and recorded.

    Parameters
    ----------
    folder
        Its place, in the cache.
    requirements
        What pip installs (``onnx==1.23.0``, a wheel's path); an environment of its own,
        whatever this one's pip constrains.  The index is pip's (its environment and
        configuration), or ``$ONNX_ARROW_INDEX_URL`` where set.
    offline
        Never make one: an environment that is not there is an error.
    what
        What the environment is for, in words (``the node suite of onnx 1.23.0``).
    pip_options
        More options of ``pip install`` (``--no-index``).

    Raises
    ------
    VirtualEnvironmentError
        Located at ``folder``: not there and ``offline``; venv or pip failed (the last
        lines pip printed); a check failed.
    """
    if folder.exists() or folder.is_symlink():
        return verify_environment(folder)
    if offline:
        raise VirtualEnvironmentError(
            f"the environment of {what} is not in the cache, and --offline forbids making "
            f"it (pip install {' '.join(requirements)}): run once without --offline",
            where=str(folder),
        )
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".making-{folder.name}-", dir=folder.parent))
    try:
        _make(staging, requirements, what=what, pip_options=pip_options)
        try:
            os.rename(staging, folder)
        except OSError as exc:
            if not folder.exists():  # else made meanwhile by another process: that one
                raise VirtualEnvironmentError(
                    f"the environment of {what} cannot be moved into place ({exc.strerror})",
                    where=str(folder),
                ) from None
        else:
            staging = Path()
    finally:
        if staging != Path():
            shutil.rmtree(staging, ignore_errors=True)
    return verify_environment(folder)


@contextlib.contextmanager
def temporary_environment(
    requirements: Sequence[str], *, what: str, pip_options: Sequence[str] = ()
) -> Iterator[Environment]:
    """An environment made for this use alone (the cache turned off), removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="onnx-arrow-env-") as tmp:
        yield cached_environment(
            Path(tmp) / "env", requirements, offline=False, what=what, pip_options=pip_options
        )


def _make(env: Path, requirements: Sequence[str], *, what: str, pip_options: Sequence[str]) -> None:
    """Make the environment in the (empty) folder ``env`` and write its record."""
    venv = [sys.executable, "-m", "venv", "--clear", str(env)]
    if not requirements:
        venv.insert(3, "--without-pip")
    _run(venv, what=f"making the environment of {what}", where=env)
    python = env / _BIN / _EXE
    if requirements:
        pip = [str(python), "-I", "-m", "pip", "install", "--quiet", "--no-input"]
        pip += ["--disable-pip-version-check", *pip_options]
        index = os.environ.get("ONNX_ARROW_INDEX_URL", "").strip()
        if index:
            pip += ["--index-url", index]
        _run(
            [*pip, *requirements],
            what=f"installing {' '.join(requirements)} (for {what})",
            where=env,
            # an environment of its own: what is asked for, whatever this one constrains
            env={**os.environ, "PIP_CONSTRAINT": "", "PIP_REQUIRE_VIRTUALENV": "0"},
        )
    version = _run(
        [str(python), "-I", "-B", "-c", "import platform; print(platform.python_version())"],
        what=f"starting the Python of the environment of {what}",
        where=env,
    ).strip()
    record = {
        "format": _FORMAT,
        "what": what,
        "requirements": list(requirements),
        "python_version": version,
        "interpreter": _interpreter(env),
        "packages": _packages(env),
        "entries": _entries(env),
        "made_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }
    write_record(env / RECORD, json.dumps(record, indent=1, sort_keys=True) + "\n")


def _run(command: list[str], *, what: str, where: Path, env: dict[str, str] | None = None) -> str:
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, env=env, check=False, stdin=subprocess.DEVNULL
        )
    except OSError as exc:
        raise VirtualEnvironmentError(f"{what} failed: {exc}", where=str(where)) from None
    if done.returncode != 0:
        tail = " ".join((done.stderr or done.stdout).strip().splitlines()[-3:])
        raise VirtualEnvironmentError(
            f"{what} failed (exit status {done.returncode}): {tail}", where=str(where)
        )
    return done.stdout


# --- what an environment holds --------------------------------------------------------------


def _sha256(path: str | Path, dir_fd: int | None = None) -> str:
    """The sha256 of a regular file, opened without following a link or blocking."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0), dir_fd=dir_fd)
    with open(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
        return hashlib.file_digest(f, "sha256").hexdigest()


def _interpreter(env: Path) -> dict[str, str]:
    """What ``bin/python`` is: the link's target (or ``file``), and the sha256 of the
    program it runs."""
    python = env / _BIN / _EXE
    link = os.readlink(python) if python.is_symlink() else ""
    program = Path(os.path.realpath(python))
    return {"link": link, "program": str(program), "sha256": _sha256(program)}


def _site_packages(env: Path) -> list[Path]:
    found = sorted(env.glob("lib/python*/site-packages")) + sorted(env.glob("Lib/site-packages"))
    return [p for p in found if p.is_dir() and not p.is_symlink()]


def _packages(env: Path) -> dict[str, str]:
    """The distributions installed, name: version, as their ``METADATA`` say."""
    found: dict[str, str] = {}
    for site in _site_packages(env):
        for meta in sorted(site.glob("*.dist-info/METADATA")):
            with open(meta, "rb") as f:
                head = f.read(64 << 10).split(b"\n\n", 1)[0]
            message = email.parser.BytesHeaderParser().parsebytes(head)
            name, version = message.get("Name"), message.get("Version")
            if name and version:
                found[str(name)] = str(version)
    return dict(sorted(found.items(), key=lambda kv: kv[0].lower()))


def _entry_of(rel: str, sites: Sequence[str]) -> str:
    """The entry a file belongs to: a top folder (or file) of ``site-packages``, else the
    file itself."""
    for site in sites:
        if rel.startswith(site + "/"):
            return site + "/" + rel[len(site) + 1 :].split("/", 1)[0]
    return rel


def _entries(env: Path) -> dict[str, str]:
    """Per entry (see :func:`_entry_of`) the sha256 of its files' paths, kinds and contents
    (a link's target, a file's sha256), the record itself left out.

    Raises
    ------
    OSError
        Anything but a regular file, a folder or a link in it; a file that cannot be read.
    """
    sites = [p.relative_to(env).as_posix() for p in _site_packages(env)]
    digests: dict[str, Any] = {}

    def add(rel: str, line: str) -> None:
        digests.setdefault(_entry_of(rel, sites), hashlib.sha256()).update(line.encode() + b"\n")

    def walk(folder: str, prefix: str) -> None:
        with os.scandir(folder) as found:
            entries = sorted(found, key=lambda e: e.name)
        for entry in entries:
            rel = prefix + entry.name
            if entry.is_symlink():
                add(rel, f"link {rel} {os.readlink(entry.path)}")
            elif entry.is_dir(follow_symlinks=False):
                add(rel, f"folder {rel}")
                walk(entry.path, rel + "/")
            elif entry.is_file(follow_symlinks=False):
                if rel != RECORD:
                    add(rel, f"file {rel} {_sha256(entry.path)}")
            else:
                raise OSError(f"{rel} is neither a file, a folder nor a link")

    walk(str(env), "")
    return {k: v.hexdigest() for k, v in sorted(digests.items())}


# --- the check -------------------------------------------------------------------------------


def _record(folder: Path) -> dict[str, Any]:
    fix = f"delete it (rm -r {folder}), and it is made again"
    try:
        text = read_record(folder / RECORD)
    except OnnxArrowError as exc:
        raise VirtualEnvironmentError(
            f"its record: {exc.message}; {fix}", where=str(folder)
        ) from None
    if text is None:
        raise VirtualEnvironmentError(
            f"holds no record ({RECORD}) of what it was made with, so what it runs cannot be "
            f"checked (made by an earlier onnx-arrow, or not by onnx-arrow); {fix}",
            where=str(folder),
        )
    try:
        record = json.loads(text)
    except (ValueError, RecursionError):
        record = None
    if (
        not isinstance(record, dict)
        or record.get("format") != _FORMAT
        or not isinstance(record.get("interpreter"), dict)
        or not isinstance(record.get("entries"), dict)
        or not isinstance(record.get("packages"), dict)
        or not isinstance(record.get("requirements"), list)
    ):
        raise VirtualEnvironmentError(
            f"its record ({RECORD}) is not one onnx-arrow {_FORMAT} writes; {fix}",
            where=str(folder),
        )
    return record


def verify_environment(folder: Path) -> Environment:
    """The environment of ``folder``, checked against its record (see the module docs).

    Raises
    ------
    VirtualEnvironmentError
        Located at ``folder`` (or its interpreter): no record, or one that does not read;
        an interpreter, or files, not those recorded when it was made.
    """
    fix = f"delete it (rm -r {folder}), and it is made again"
    if folder.is_symlink() or not folder.is_dir():
        raise VirtualEnvironmentError(
            f"is not a folder (a link, or a file); the cache holds environments as folders: {fix}",
            where=str(folder),
        )
    record = _record(folder)
    python = folder / _BIN / _EXE
    try:
        now = _interpreter(folder)
    except OSError as exc:
        raise VirtualEnvironmentError(
            f"its interpreter cannot be read ({exc.strerror or exc}); {fix}", where=str(python)
        ) from None
    was = record["interpreter"]
    if now != {k: was.get(k) for k in now}:
        said = f"a link to {now['link']}" if now["link"] else "a file"
        raise VirtualEnvironmentError(
            f"the interpreter is not the one recorded when the environment was made (now "
            f"{said}, running {now['program']} of sha256 {now['sha256'][:16]}...; recorded "
            f"{was.get('link') or 'a file'}, sha256 {str(was.get('sha256'))[:16]}...): it was "
            f"replaced since, and is not run; {fix}",
            where=str(python),
        )
    try:
        entries = _entries(folder)
    except OSError as exc:
        raise VirtualEnvironmentError(
            f"cannot be checked: {exc.strerror or exc}; {fix}", where=str(folder)
        ) from None
    recorded = record["entries"]
    changed = sorted(k for k in entries.keys() & recorded.keys() if entries[k] != recorded[k])
    added = sorted(entries.keys() - recorded.keys())
    removed = sorted(recorded.keys() - entries.keys())
    if changed or added or removed:
        said = "; ".join(
            f"{kind} {', '.join(names[:5])}{' ...' if len(names) > 5 else ''}"
            for kind, names in (("changed", changed), ("added", added), ("removed", removed))
            if names
        )
        raise VirtualEnvironmentError(
            f"its files are not those recorded when it was made ({said}): the environment "
            f"changed since, and is not run; {fix}",
            where=str(folder),
        )
    return Environment(
        folder,
        tuple(str(r) for r in record["requirements"]),
        {str(k): str(v) for k, v in record["packages"].items()},
        str(record.get("python_version")),
    )
