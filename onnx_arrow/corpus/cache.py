"""The cache of the node suite: onnx's generation done once per onnx version, reused after.

Building the node suite runs onnx's 200-odd test-case modules and takes seconds; what
they give depends only on the installed onnx, numpy, protobuf, ml_dtypes and Pillow
(which encodes the image decoder tests' pictures) and on the sources of those modules.
The first :class:`~onnx_arrow.corpus.NodeSuiteSource` to run writes the cases it built
into one file of the cache folder, named by those versions and a digest of the sources;
the next ones read it instead of building the suite again.

The folder is ``$ONNX_ARROW_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/onnx-arrow``, else
``~/.cache/onnx-arrow``.  It holds nothing else; deleting it, or any file in it, is always
safe (the suite is built again).  ``ONNX_ARROW_CACHE_DIR=off`` turns the cache off.

A cache file is a magic line, the length of a JSON manifest (8 bytes, little-endian),
the manifest (the key it was built for; per case its name, its facts such as its
tolerances, and its files' paths, offsets, lengths and BLAKE2b-128 digests) and the
files' bytes.  It is checked whole when read: the magic, the key, every offset and every
file's digest.  A file that fails a check is not used, and is written again; one that
cannot be written is skipped.  No pickle.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import json
import os
import sys
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Final

from onnx_arrow.core.model import load_json, read_regular_file
from onnx_arrow.errors import OnnxArrowError

__all__ = ["cache_folder", "cached_cases", "suite_key"]

_MAGIC: Final = b"onnx-arrow node-suite cache 2\n"
_LENGTH_BYTES: Final = 8
#: The largest cache file read (onnx's node suite takes some tens of MiB).
_MAX_BYTES: Final = 4 << 30
_OFF: Final = frozenset({"off", "0", "no", "false", ""})

#: What a case is built from and gives back: (name, kind, [(path, bytes)], model path, and
#: the case's other facts as JSON values, such as its tolerances).
CaseParts = tuple[str, str, list[tuple[str, bytes]], str, dict[str, Any]]


def cache_folder() -> Path | None:
    """The cache folder (see the module docs), or None when the cache is turned off."""
    given = os.environ.get("ONNX_ARROW_CACHE_DIR")
    if given is not None:
        return None if given.strip().lower() in _OFF else Path(given)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(base, "onnx-arrow")


def _version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def suite_key() -> dict[str, Any]:
    """What the node suite onnx builds depends on: versions, and the digest of the sources
    of its test-case modules."""
    import onnx.backend.test.case.node as node_cases

    sources = hashlib.blake2b(digest_size=16)
    for folder in map(Path, node_cases.__path__):
        for path in sorted(folder.rglob("*.py")):
            sources.update(path.relative_to(folder).as_posix().encode() + b"\0")
            sources.update(path.read_bytes())
    return {
        "onnx": _version("onnx"),
        "numpy": _version("numpy"),
        "protobuf": _version("protobuf"),
        "ml_dtypes": _version("ml_dtypes"),
        "pillow": _version("pillow"),
        "python": f"{sys.version_info[0]}.{sys.version_info[1]}",
        "sources": sources.hexdigest(),
    }


def _file_name(key: dict[str, Any]) -> str:
    digest = hashlib.blake2b(json.dumps(key, sort_keys=True).encode(), digest_size=8)
    return f"node-suite-onnx-{key['onnx']}-{digest.hexdigest()}.bin"


def _digest(data: bytes | memoryview) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _read(path: Path, key: dict[str, Any]) -> list[CaseParts] | None:
    """The cases of a cache file, or None if it is missing or fails any check (a FIFO, a
    link or anything but a regular file in its place too: opened without blocking, it is
    replaced by the file written next)."""
    try:
        blob = read_regular_file(str(path), max_bytes=_MAX_BYTES, where=str(path))
    except OnnxArrowError:
        return None
    head = len(_MAGIC) + _LENGTH_BYTES
    if len(blob) < head or not blob.startswith(_MAGIC):
        return None
    length = int.from_bytes(blob[len(_MAGIC) : head], "little")
    try:
        manifest = load_json(
            blob[head : head + length], what="cache manifest", where=str(path), error=ValueError
        )
        if manifest["key"] != key:
            return None
        view = memoryview(blob)
        start = head + length
        cases: list[CaseParts] = []
        for name, kind, model_path, facts, files in manifest["cases"]:
            if not isinstance(facts, dict):
                return None
            got = []
            for file_path, offset, size, digest in files:
                begin, end = start + offset, start + offset + size
                if not 0 <= offset <= begin <= end <= len(blob):
                    return None
                data = view[begin:end]
                if _digest(data) != digest:
                    return None
                got.append((str(file_path), bytes(data)))
            cases.append((str(name), str(kind), got, str(model_path), facts))
    except (ValueError, KeyError, TypeError):
        return None
    return cases


def _write(path: Path, key: dict[str, Any], cases: list[CaseParts]) -> None:
    """Write the cache file atomically (a temporary file renamed into place); a folder that
    cannot be written is left alone."""
    manifest_cases = []
    offset = 0
    for name, kind, files, model_path, facts in cases:
        entries = []
        for file_path, data in files:
            entries.append([file_path, offset, len(data), _digest(data)])
            offset += len(data)
        manifest_cases.append([name, kind, model_path, facts, entries])
    manifest = json.dumps({"key": key, "cases": manifest_cases}).encode()
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
        with os.fdopen(fd, "wb") as out:
            out.write(_MAGIC + len(manifest).to_bytes(_LENGTH_BYTES, "little") + manifest)
            for _, _, files, _, _ in cases:
                for _, data in files:
                    out.write(data)
        os.replace(tmp, path)
        tmp = None
    except OSError:
        pass
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def cached_cases(build: Callable[[], Iterable[CaseParts]]) -> list[CaseParts]:
    """The node suite's cases from the cache, or from ``build()`` (then written to the
    cache) when there is no valid cache file for the installed versions."""
    folder = cache_folder()
    if folder is None:
        return list(build())
    key = suite_key()
    path = folder / _file_name(key)
    cases = _read(path, key)
    if cases is None:
        cases = list(build())
        _write(path, key, cases)
    return cases
