"""The exceptions and warnings onnx-arrow raises.

Every error derives from :class:`OnnxArrowError`, and each concrete class also
derives from the matching built-in (``ValueError`` or ``TypeError``), so callers
can catch either.  Messages name where the problem is (file, row, field) and
what would fix it.

Examples
--------
>>> from onnx_arrow.errors import InvalidTensorError, OnnxArrowError
>>> err = InvalidTensorError("raw_data holds 3 bytes, dims [2] need 8", where="row 3: raw_data")
>>> str(err)
'row 3: raw_data: raw_data holds 3 bytes, dims [2] need 8'
>>> isinstance(err, OnnxArrowError) and isinstance(err, ValueError)
True
"""

from __future__ import annotations

import re

__all__ = [
    "ArrowLayoutError",
    "BackendPrepareError",
    "BackendSpecError",
    "BackendTimeoutError",
    "BackendUnavailableError",
    "CaseLostError",
    "CompareError",
    "CorpusError",
    "DeclarationWarning",
    "EngineError",
    "ExternalDataError",
    "FileWriteError",
    "InvalidMessageError",
    "InvalidTensorError",
    "NotRepresentableError",
    "OnnxArrowError",
    "OnnxArrowWarning",
    "ProvenanceWarning",
    "ReleaseError",
    "ResultsError",
    "RunnerError",
    "SiteError",
    "TraceError",
    "UnsupportedTypeError",
    "VirtualEnvironmentError",
]


def join_path(where: str, name: str) -> str:
    """Extend a location by a field: ``row 3`` + ``keys`` is ``row 3: keys``, then dots.

    >>> join_path(join_path("row 3", "sequence_values[2]"), "map_value")
    'row 3: sequence_values[2].map_value'
    """
    if not where:
        return name
    if re.search(r"(^|: )row \d+$", where) or where.endswith(".pb"):
        return f"{where}: {name}"
    return f"{where}.{name}"


class OnnxArrowError(Exception):
    """Base class of every error raised by onnx-arrow.

    Parameters
    ----------
    message
        What is wrong and, where it helps, what would fix it.
    where
        The location: a file, a row, a field path (``"row 3: sequence_values[2].dims"``).
    """

    def __init__(self, message: str, *, where: str | None = None) -> None:
        self.message = message
        self.where = where
        super().__init__(f"{where}: {message}" if where else message)

    def at(self, where: str) -> OnnxArrowError:
        """Locate this error at ``where`` (prefixed to any location) and return it.

        The same object, so that ``raise exc.at(where)`` keeps the traceback of the
        frame where the problem was found.
        """
        self.where = f"{where}: {self.where}" if self.where else where
        self.args = (f"{self.where}: {self.message}",)
        return self


class InvalidMessageError(OnnxArrowError, ValueError):
    """A protobuf message is malformed: bad wire format, inconsistent fields."""


class InvalidTensorError(InvalidMessageError):
    """A ``TensorProto`` is inconsistent: data length against dims, ranges, fields."""


class UnsupportedTypeError(OnnxArrowError, TypeError):
    """A data type, message kind or Arrow type onnx-arrow does not map."""


class NotRepresentableError(OnnxArrowError, ValueError):
    """A value cannot be represented exactly in the requested form; nothing is approximated."""


class ArrowLayoutError(OnnxArrowError, ValueError):
    """An Arrow array or its extension metadata does not follow the documented layout."""


class ExternalDataError(OnnxArrowError, ValueError):
    """External tensor data cannot be resolved safely (location, offset, length, checksum)."""


class CorpusError(OnnxArrowError, ValueError):
    """A corpus or a store cannot be read or written as asked."""


class FileWriteError(CorpusError, OSError):
    """Writing a file failed in the file system: a full disk, a name too long, a file
    not allowed.  Located at the file as the caller named it (never a temporary file
    beside it), and an ``OSError`` too, of the same ``errno``, with ``filename`` the file.
    """

    def __init__(self, message: str, *, where: str | None = None, code: int | None = None):
        super().__init__(message, where=where)
        self.errno = code
        self.strerror = message
        self.filename = where

    def __str__(self) -> str:
        return str(self.args[0])  # OSError's own form would print errno and filename again

    def __reduce__(self) -> tuple[object, ...]:  # sent back by an export worker
        return (_file_write_error, (self.message, self.where, self.errno))


def _file_write_error(message: str, where: str | None, code: int | None) -> FileWriteError:
    return FileWriteError(message, where=where, code=code)


class ReleaseError(CorpusError):
    """An onnx release cannot be had as a corpus as asked: a version the package index
    does not list, no network (or ``--offline``) and nothing cached, a cached file whose
    digest is not the one recorded, a wheel without test data."""


class CompareError(OnnxArrowError, ValueError):
    """A comparison cannot be made as asked: no case matches, a bad tolerance."""


class ResultsError(OnnxArrowError, ValueError):
    """A results store cannot be read or added to as asked: a part that is not Parquet or
    not of the store's schema, runs that contradict each other, versions that cannot be
    ordered."""


class SiteError(OnnxArrowError, ValueError):
    """A results site cannot be built as asked: a triage file that is not of its format,
    an output folder that is not a site this command made, a name that would leave it."""


class BackendUnavailableError(OnnxArrowError, ImportError):
    """A built-in backend's runtime is not installed."""


class BackendSpecError(CompareError):
    """A backend cannot be made as asked: its module does not import, it has no such name,
    it has neither onnx's backend interface (``prepare`` and a rep's ``run``) nor a call,
    or an option of it (an execution provider, a session option) is not valid."""


class BackendPrepareError(OnnxArrowError, RuntimeError):
    """A backend's ``prepare`` raised on a case's model (recorded as that case's error)."""


class BackendTimeoutError(OnnxArrowError, TimeoutError):
    """A backend ran longer than the timeout on one data set (recorded as an error)."""


class RunnerError(OnnxArrowError, RuntimeError):
    """A runner's command failed on a data set: it did not start, exited with a status
    other than 0, or left an output file missing or undecodable (recorded as an error)."""


class VirtualEnvironmentError(OnnxArrowError, RuntimeError):
    """A virtual environment onnx-arrow makes (an onnx release's generator, a backend's
    ``PACKAGE==VERSION``) cannot be made or used: venv or pip failed, ``--offline`` and
    none cached, or a cached one whose interpreter or installed files are not those
    recorded when it was made (it is never run then)."""


class EngineError(OnnxArrowError, ValueError):
    """Cases cannot be run on the engine asked for: there is no engine of that name."""


class CaseLostError(OnnxArrowError, RuntimeError):
    """The worker running a case died or stopped answering (recorded as the case's error)."""


class OnnxArrowWarning(UserWarning):
    """Emitted when something is approximated or dropped on request; never silently."""


class DeclarationWarning(OnnxArrowWarning):
    """A value contradicts the type its model declares for it (another element type, rank
    or size): kept exactly with its own type, and said; the message names the file, the
    declaration and what the data holds."""


class ProvenanceWarning(OnnxArrowWarning):
    """A report is written without saying what it was made from (its store, backend or
    versions, or all of it): the message names what is missing."""


class TraceError(OnnxArrowError, RuntimeError):
    """A backend cannot be traced: it cannot run a case's model with intermediate values
    exposed as graph outputs, or gives another number of values than the outputs asked."""
