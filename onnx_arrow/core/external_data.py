"""Read the bytes of a ``TensorProto`` kept in an external file, safely.

A tensor with ``data_location = EXTERNAL`` names its bytes with ``external_data``
key/value pairs: ``location`` (a POSIX path relative to the folder of the model or
``.pb`` file), and optionally ``offset``, ``length`` and ``checksum`` (SHA-1).
onnx's own loader has had a run of path traversal CVEs and falls back to the
current directory; :func:`read_external_data` does neither.  It never leaves
``base_dir`` (``..``, absolute paths, symbolic links and hard links are refused),
never opens anything but a regular file (a FIFO or a device cannot block or feed it
endless bytes), checks every size before it allocates and never modifies its inputs.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import stat
from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

from onnx_arrow.core._open import NO_FOLLOW, OPEN_FLAGS, file_kind
from onnx_arrow.errors import ExternalDataError

__all__ = ["read_external_data"]

#: Start address alignment of the returned array, in bytes (Arrow's recommendation).
_ALIGNMENT = 64

#: The keys ``TensorProto.external_data`` may hold, in the order the ONNX spec lists them.
_KEYS = ("location", "offset", "length", "checksum")

#: ``offset`` and ``length``: ASCII decimal digits only; ``int()`` alone would take
#: ``" 1"``, ``"+1"``, ``"1_0"`` and non-ASCII digits.
_DECIMAL = re.compile(r"[0-9]+")

#: 2**64 has 20 digits: a longer ``offset`` or ``length`` cannot be a position in a file.
_MAX_DIGITS = 20

_SHA1_HEX = re.compile(r"[0-9a-fA-F]{40}")
_WINDOWS_DRIVE = re.compile(r"[A-Za-z]:")


def read_external_data(
    entries: Iterable[tuple[str, str]],
    base_dir: str | os.PathLike[str] | None,
    *,
    expected_length: int | None = None,
    max_bytes: int = 1 << 40,
    where: str | None = None,
) -> npt.NDArray[np.uint8]:
    """Read the external bytes of a tensor from a regular file inside ``base_dir``.

    Parameters
    ----------
    entries
        The ``(key, value)`` pairs of ``TensorProto.external_data``, in order, for
        example ``[(e.key, e.value) for e in tensor.external_data]``.  Accepted keys:
        ``location`` (required), ``offset``, ``length`` and ``checksum``.
    base_dir
        The folder of the model or ``.pb`` file; ``location`` is relative to it and
        must stay inside it.  ``None`` is an error: the current directory is never
        used as a fallback.
    expected_length
        The number of bytes the tensor's ``dims`` and ``data_type`` require; a
        different ``length`` is an error raised before anything is read.
    max_bytes
        The largest ``length`` accepted; a larger one is an error raised before
        anything is allocated.
    where
        A location prefixed to error messages, such as ``"input_0.pb: row 0"``.

    Returns
    -------
    numpy.ndarray
        A new, writable, 1-D ``uint8`` array holding exactly the bytes, whose start
        address is a multiple of 64.

    Raises
    ------
    ExternalDataError
        If ``base_dir`` is missing, an entry is unknown, duplicated or malformed, the
        location leaves ``base_dir`` or is not a regular file with a single link, the
        byte range does not fit in the file or in the limits, the file shrinks while
        it is read, or the checksum does not match.

    Examples
    --------
    >>> import hashlib, pathlib, tempfile
    >>> from onnx_arrow.core.external_data import read_external_data
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     _ = pathlib.Path(folder, "weights.bin").write_bytes(b"headerDATA")
    ...     data = read_external_data(
    ...         [
    ...             ("location", "weights.bin"),
    ...             ("offset", "6"),
    ...             ("length", "4"),
    ...             ("checksum", hashlib.sha1(b"DATA").hexdigest()),
    ...         ],
    ...         folder,
    ...         expected_length=4,
    ...     )
    >>> data.tobytes(), data.dtype, data.ctypes.data % 64
    (b'DATA', dtype('uint8'), 0)
    >>> read_external_data(  # doctest: +NORMALIZE_WHITESPACE
    ...     [("location", "../secret.bin")], folder, where="model.onnx: w"
    ... )
    Traceback (most recent call last):
      ...
    onnx_arrow.errors.ExternalDataError: model.onnx: w: external_data.location:
    '../secret.bin' has a '..' component; external data must stay inside base_dir,
    give a path below it
    """
    if base_dir is None:
        raise _error(
            where,
            "base_dir",
            "base_dir is None and external data is never looked up in the current directory; "
            "pass base_dir, the folder of the model or .pb file that holds this tensor",
        )
    max_bytes = _check_limit(max_bytes, "max_bytes", where)
    if expected_length is not None:
        expected_length = _check_limit(expected_length, "expected_length", where)

    fields = _collect_entries(entries, where)
    location = _check_location(fields, where)
    offset = _parse_integer(fields, "offset", where)
    length = _parse_integer(fields, "length", where)
    checksum = _check_checksum(fields, where)
    if length is not None:
        _check_length(length, expected_length, max_bytes, "", where)

    real_base = _resolve_base_dir(base_dir, where)
    path, real_path = _resolve_location(real_base, location, where)
    link_stat = _lstat_regular(path, location, real_base, where)

    fd = _open(real_path, location, where)
    try:
        file_stat = os.fstat(fd)
        _check_regular(file_stat, location, where)
        if (file_stat.st_dev, file_stat.st_ino) != (link_stat.st_dev, link_stat.st_ino):
            raise _error(
                where,
                "external_data.location",
                f"{location!r} was replaced by another file while it was being opened; "
                "retry once nothing is writing into base_dir",
            )
        size = file_stat.st_size
        start = 0 if offset is None else offset
        if length is None:
            if start > size:
                raise _error(
                    where,
                    "external_data.offset",
                    f"offset {start} is past the end of {location!r}, which holds {size} bytes; "
                    "fix offset",
                )
            length = size - start
            _check_length(
                length,
                expected_length,
                max_bytes,
                f" (the rest of the file after offset {start})",
                where,
            )
        elif start + length > size:
            raise _error(
                where,
                "external_data.length",
                f"offset {start} + length {length} = {start + length} is past the end of "
                f"{location!r}, which holds {size} bytes; fix offset or length",
            )
        data = _aligned_empty(length)
        done = _read_at(fd, data, start)
    finally:
        os.close(fd)

    if done != length:
        raise _error(
            where,
            "external_data.location",
            f"{location!r} ended after {done} of {length} bytes: the file shrank while it was "
            "being read; retry once nothing is writing into base_dir",
        )
    if checksum is not None:
        actual = hashlib.sha1(data.data, usedforsecurity=False).hexdigest()
        if actual != checksum.lower():
            raise _error(
                where,
                "external_data.checksum",
                f"the SHA-1 of the {length} bytes read is {actual}, but checksum is {checksum}; "
                "the file is corrupt or offset and length point at the wrong bytes",
            )
    return data


def _error(where: str | None, field: str, message: str) -> ExternalDataError:
    return ExternalDataError(message, where=f"{where}: {field}" if where else field)


def _check_limit(value: int, name: str, where: str | None) -> int:
    """Return ``value`` as a non-negative ``int`` (numpy integers accepted, ``bool`` not)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise _error(
            where, name, f"{name} must be a non-negative integer, got {type(value).__name__}"
        )
    number = int(value)
    if number < 0:
        raise _error(where, name, f"{name} must be a non-negative integer, got {number}")
    return number


def _collect_entries(entries: Iterable[tuple[str, str]], where: str | None) -> dict[str, str]:
    """Return the entries as a dict, refusing non-pairs, unknown and duplicate keys."""
    fields: dict[str, str] = {}
    first_index: dict[str, int] = {}
    for index, entry in enumerate(entries):
        if not (
            isinstance(entry, tuple)
            and len(entry) == 2
            and isinstance(entry[0], str)
            and isinstance(entry[1], str)
        ):
            raise _error(
                where,
                f"external_data[{index}]",
                f"entry is a {type(entry).__name__}, not a (key, value) pair of str; "
                "pass [(e.key, e.value) for e in tensor.external_data]",
            )
        key, value = entry
        if key not in _KEYS:
            accepted = ", ".join(repr(k) for k in _KEYS)
            raise _error(
                where,
                f"external_data[{index}].key",
                f"unknown key {key!r}; the accepted keys are {accepted}",
            )
        if key in fields:
            raise _error(
                where,
                f"external_data.{key}",
                f"key {key!r} appears twice (entries {first_index[key]} and {index}); keep one",
            )
        fields[key] = value
        first_index[key] = index
    return fields


def _check_location(fields: dict[str, str], where: str | None) -> str:
    """Return ``location`` once it is a non-empty relative POSIX path without ``..``."""
    field = "external_data.location"
    if "location" not in fields:
        raise _error(
            where,
            field,
            "the required key 'location' is missing; "
            "add ('location', <path of the data file relative to base_dir>)",
        )
    location = fields["location"]
    relative = "give the path of the data file relative to base_dir"
    problem = None
    if not location:
        problem = f"is empty; {relative}"
    elif "\0" in location:
        problem = f"contains a NUL byte; {relative}"
    elif "\\" in location:
        problem = "contains a backslash; locations are POSIX paths, write '/' between folders"
    elif location.startswith("/"):
        problem = f"is an absolute path; {relative}"
    elif _WINDOWS_DRIVE.match(location):
        problem = f"starts with a Windows drive; {relative}"
    elif ".." in location.split("/"):
        problem = (
            "has a '..' component; external data must stay inside base_dir, give a path below it"
        )
    if problem is not None:
        raise _error(where, field, f"{location!r} {problem}")
    return location


def _parse_integer(fields: dict[str, str], key: str, where: str | None) -> int | None:
    """Return ``offset`` or ``length`` as an ``int``, or ``None`` when absent."""
    if key not in fields:
        return None
    value = fields[key]
    field = f"external_data.{key}"
    if not _DECIMAL.fullmatch(value):
        raise _error(
            where,
            field,
            f"{value!r} is not a non-negative decimal integer; write ASCII digits only, "
            "with no sign, space, underscore, decimal point or base prefix, such as '4096'",
        )
    if len(value) > _MAX_DIGITS:
        raise _error(
            where,
            field,
            f"{value[:24]!r}... has {len(value)} digits, more than any file size; fix {key}",
        )
    return int(value)


def _check_checksum(fields: dict[str, str], where: str | None) -> str | None:
    """Return ``checksum`` once it is 40 hexadecimal characters, or ``None``."""
    checksum = fields.get("checksum")
    if checksum is not None and not _SHA1_HEX.fullmatch(checksum):
        raise _error(
            where,
            "external_data.checksum",
            f"{checksum!r} is not a SHA-1 digest; write the 40 hexadecimal characters of "
            "hashlib.sha1(data).hexdigest(), or leave checksum out",
        )
    return checksum


def _check_length(
    length: int, expected_length: int | None, max_bytes: int, detail: str, where: str | None
) -> None:
    """Refuse a ``length`` other than ``expected_length`` or above ``max_bytes``."""
    if expected_length is not None and length != expected_length:
        raise _error(
            where,
            "external_data.length",
            f"length is {length} bytes{detail}, but the tensor's dims and data_type need "
            f"{expected_length}; fix length or dims",
        )
    if length > max_bytes:
        raise _error(
            where,
            "external_data.length",
            f"length is {length} bytes{detail}, more than max_bytes={max_bytes}; "
            "pass a larger max_bytes if the tensor is meant to be this large",
        )


def _resolve_base_dir(base_dir: str | os.PathLike[str], where: str | None) -> str:
    """Return the real path of ``base_dir``, an existing directory."""
    folder = os.fspath(base_dir)
    if not isinstance(folder, str) or not folder:
        raise _error(
            where,
            "base_dir",
            f"base_dir is {folder!r}; pass the folder of the model or .pb file as a str "
            "or pathlib.Path (an empty path would mean the current directory)",
        )
    real_base = os.path.realpath(folder)
    if not os.path.isdir(real_base):
        raise _error(
            where,
            "base_dir",
            f"base_dir {folder!r} is not an existing directory; "
            "pass the folder of the model or .pb file",
        )
    return real_base


def _resolve_location(real_base: str, location: str, where: str | None) -> tuple[str, str]:
    """Return ``location`` joined to ``real_base``, and its real path, inside ``real_base``."""
    path = os.path.join(real_base, location)
    real_path = os.path.realpath(path)
    if os.path.commonpath([real_base, real_path]) != real_base:
        raise _error(
            where,
            "external_data.location",
            f"{location!r} leads through a symbolic link to {real_path!r}, outside base_dir "
            f"{real_base!r}; move the data file itself into base_dir",
        )
    return path, real_path


def _check_regular(file_stat: os.stat_result, location: str, where: str | None) -> None:
    """Refuse anything but a regular file with exactly one link."""
    if not stat.S_ISREG(file_stat.st_mode):
        kind = file_kind(file_stat.st_mode)
        hint = (
            "replace the link by the file itself"
            if kind == "a symbolic link"
            else "point location at a regular file"
        )
        raise _error(
            where,
            "external_data.location",
            f"{location!r} is {kind}, not a regular file; {hint}",
        )
    if file_stat.st_nlink != 1:
        raise _error(
            where,
            "external_data.location",
            f"{location!r} has {file_stat.st_nlink} hard links and a hard link may lead out of "
            "base_dir; copy the file instead of linking it",
        )


def _lstat_regular(path: str, location: str, real_base: str, where: str | None) -> os.stat_result:
    """Return ``os.lstat(path)`` once it shows a regular file with one link."""
    try:
        link_stat = os.lstat(path)
    except FileNotFoundError:
        raise _error(
            where,
            "external_data.location",
            f"{location!r} does not exist in base_dir {real_base!r}; "
            "pass the folder the data file was saved next to",
        ) from None
    except OSError as exc:
        raise _error(
            where, "external_data.location", f"cannot inspect {location!r}: {exc.strerror}"
        ) from exc
    _check_regular(link_stat, location, where)
    return link_stat


def _open(real_path: str, location: str, where: str | None) -> int:
    try:
        return os.open(real_path, OPEN_FLAGS | NO_FOLLOW)
    except OSError as exc:
        raise _error(
            where, "external_data.location", f"cannot open {location!r}: {exc.strerror}"
        ) from exc


def _aligned_empty(length: int) -> npt.NDArray[np.uint8]:
    """Return an uninitialized ``uint8`` array of ``length`` bytes at a 64-byte aligned address."""
    raw = np.empty(length + _ALIGNMENT, dtype=np.uint8)
    pad = -raw.ctypes.data % _ALIGNMENT
    # raw[pad:] is never empty; numpy would drop the offset of an empty raw[pad:pad]
    return raw[pad:][:length]


def _read_at(fd: int, out: npt.NDArray[np.uint8], start: int) -> int:
    """Fill ``out`` from ``fd`` at ``start``; return the bytes read (fewer at end of file)."""
    view = out.data
    done = 0
    if hasattr(os, "preadv"):
        while done < len(view):
            count = os.preadv(fd, [view[done:]], start + done)
            if count == 0:
                break
            done += count
        return done
    os.lseek(fd, start, os.SEEK_SET)
    with io.FileIO(fd, "rb", closefd=False) as stream:
        while done < len(view):
            count = stream.readinto(view[done:])
            if not count:
                break
            done += count
    return done
