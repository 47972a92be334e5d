"""The parts of a store: its Parquet files found (the file itself, or a dataset store's
part files in order), each opened with its footer read and checked (its index of cases
too, where it has one; the last few footers kept, used again for a file whose footer
holds the same bytes), and its row groups read as located errors when they do not read;
a part of an older format version reads in the current schema, the columns its version
lacks as nulls.  The rows a store decoded last are kept, taken again by a store of
files that hold the same bytes."""

from __future__ import annotations

import copy
import dataclasses
import os
import re
import stat
import sys
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from onnx_arrow.core.model import file_kind
from onnx_arrow.corpus.columns import strings
from onnx_arrow.corpus.format import (
    CASES_KEY,
    FORMAT_VERSION,
    SCHEMA,
    format_schemas,
    parse_case_index,
    parse_metadata,
)
from onnx_arrow.corpus.sources import CorpusError

__all__ = [
    "PART_NAME",
    "Part",
    "by_parts",
    "forget_kept_reads",
    "keep_read",
    "kept_read",
    "open_part",
    "part_paths",
    "read_back",
]

#: The name of a dataset store's part files: ``part-00000.parquet`` ...
PART_NAME: Final = re.compile(r"part-(\d+)\.parquet")


@dataclass(frozen=True)
class Part:
    """One Parquet file of a store, its footer read and checked; ``missing`` names the
    columns of the current schema its format version lacks (read as nulls); ``index`` is
    its index of cases, per row group each case's ``(name, start, stop)`` rows, where its
    footer holds one that agrees with the footer (:func:`footer_index`), else None."""

    path: Path
    file: pq.ParquetFile
    metadata: dict[str, Any]
    missing: tuple[str, ...] = ()
    index: list[list[tuple[str, int, int]]] | None = None
    #: The file's Arrow schema (its columns' types as they read: a list's item may be
    #: named ``element``), without its metadata.
    schema: pa.Schema = SCHEMA
    #: The file as it was opened (its path, device, inode and footer's bytes, the
    #: footer kept): what :func:`read_back` compares.  None where it was not kept.
    identity: tuple[Any, ...] | None = None

    @property
    def groups(self) -> int:
        return int(self.file.num_row_groups)

    def dtype_span(self, groups: Sequence[int]) -> tuple[str, str] | None:
        """The smallest and largest ``dtype`` of the rows of ``groups``, as the footer's
        statistics record them; None where a row group records none (or holds no
        dtype).  A hint only: what the rows hold is checked when they are read."""
        meta = self.file.metadata
        at = next(
            (i for i in range(meta.num_columns) if meta.schema.column(i).path == "dtype"), None
        )
        if at is None:
            return None
        spans = []
        for group in groups:
            stats = meta.row_group(group).column(at).statistics
            try:
                if stats is None or not stats.has_min_max:
                    return None
                low, high = stats.min, stats.max
            except (ValueError, pa.ArrowException):
                return None
            if not (isinstance(low, str) and isinstance(high, str)):
                return None
            spans.append((low, high))
        return (min(s[0] for s in spans), max(s[1] for s in spans)) if spans else None

    def read(
        self,
        groups: Sequence[int] | None,
        columns: Sequence[str] | None,
        roles: Sequence[str] | None = None,
        *,
        threads: bool = True,
    ) -> pa.Table:
        """Row groups (all when None), only ``columns`` if given, only rows of ``roles`` if
        given (all row groups), in the current schema, on several threads unless
        ``threads`` is false (a small read costs more to share out than to do); a page
        that does not read is a located error."""
        wanted = list(SCHEMA.names if columns is None else columns)
        if not self.missing:
            return self._read(groups, None if columns is None else wanted, roles, threads)
        table = self._read(groups, [c for c in wanted if c not in self.missing], roles, threads)
        arrays = [
            pa.nulls(table.num_rows, SCHEMA.field(c).type) if c in self.missing else table[c]
            for c in wanted
        ]
        return pa.table(arrays, schema=pa.schema([SCHEMA.field(c) for c in wanted]))

    def _read(
        self,
        groups: Sequence[int] | None,
        columns: list[str] | None,
        roles: Sequence[str] | None,
        threads: bool,
    ) -> pa.Table:
        try:
            if roles is not None:
                return self._of_roles(columns, roles)
            if groups is None:
                return self.file.read(columns=columns)
            return self.file.read_row_groups(list(groups), columns=columns, use_threads=threads)
        except (OSError, pa.ArrowException) as exc:
            what = "the store" if groups is None else "row group " + ", ".join(map(str, groups))
            raise CorpusError(
                f"{what} does not read ({exc}); the file is damaged: import the corpus again",
                where=str(self.path),
            ) from None

    def _of_roles(self, columns: list[str] | None, roles: Sequence[str]) -> pa.Table:
        """The rows of ``roles``, filtered here rather than by a dataset filter, whose
        module imports pandas (half a second of a short command) and parses the footer
        again."""
        read = None if columns is None or "role" in columns else [*columns, "role"]
        table = self.file.read(columns=read or columns)
        table = table.filter(pc.is_in(table["role"], value_set=strings(list(roles))))
        return table if read is None else table.drop_columns(["role"])


def open_part(path: Path) -> Part:
    """A store's Parquet file, opened: a regular file, of the store's format version
    and schema.

    The footers of the files opened last are kept (:data:`_KEPT_FOOTER_BYTES` in all),
    parsed and checked, each with its bytes: a file whose footer holds the same bytes
    again (read and compared, a few hundred KB) is opened with the footer kept, not
    parsed again (1.7 ms for a store of 60 row groups, 2.9 ms for 104), so that a store
    opened for each case costs little more than one kept open.  Its pages are read from
    the file as always."""
    where = str(path)
    try:
        st = os.stat(path)
    except OSError as exc:
        raise CorpusError(f"cannot open: {exc.strerror}", where=where) from None
    if not stat.S_ISREG(st.st_mode):
        # opening a FIFO or a device to read it would block or read forever
        raise CorpusError(
            f"{file_kind(st.st_mode)}, not a regular file; pass a store's .parquet file or a "
            "dataset store's folder",
            where=where,
        )
    key = os.path.abspath(path)
    tail = _footer_bytes(path, st)
    kept = _FOOTERS.get(key)
    if tail is not None and kept is not None and kept[0] == tail:
        try:
            file = pq.ParquetFile(path, metadata=kept[1])
            again = os.stat(path)
        except (OSError, pa.ArrowException):
            file = None
        if file is not None and _same_file(st, again):  # the file the footer was read from
            with _FOOTERS_LOCK:
                if key in _FOOTERS:
                    _FOOTERS.move_to_end(key)
            metadata, missing, index, schema = kept[2]
            identity = _identity(path, st, kept[0])  # metadata copied: the caller's to change
            return Part(path, file, copy.deepcopy(metadata), missing, index, schema, identity)
    part = _open_footer(path, where)
    try:
        again = os.stat(path)
    except OSError:
        return part
    if tail is not None and _same_file(st, again):  # no other file came in its place
        with _FOOTERS_LOCK:
            fields = (copy.deepcopy(part.metadata), part.missing, part.index, part.schema)
            _FOOTERS[key] = (tail, part.file.metadata, fields)
            _FOOTERS.move_to_end(key)
            kept_bytes = sum(len(entry[0]) for entry in _FOOTERS.values())
            while kept_bytes > _KEPT_FOOTER_BYTES:
                kept_bytes -= len(_FOOTERS.popitem(last=False)[1][0])
        return dataclasses.replace(part, identity=_identity(path, st, tail))
    return part


def _identity(path: Path, st: os.stat_result, footer: bytes) -> tuple[Any, ...]:
    """A file as :func:`open_part` opened it: the path as given (errors name it so), its
    device and inode, and its footer's bytes."""
    return (str(path), st.st_dev, st.st_ino, footer)


def by_parts(groups: Iterable[tuple[int, int]]) -> dict[int, list[int]]:
    """Row groups given as ``(part, row group in the part)``, as their numbers per part."""
    numbers: dict[int, list[int]] = {}
    for k, local in groups:
        numbers.setdefault(k, []).append(local)
    return numbers


def read_back(parts: Sequence[Part], groups: Mapping[int, Sequence[int]]) -> tuple[Any, ...] | None:
    """Row groups of ``parts`` (``groups``: their numbers per part) as the files hold them
    now: each part's identity and the bytes of the row groups' column chunks, read from
    the file at its path while it is still the file opened; None where a part's footer
    was not kept or its file is not the one opened, or does not read.  Rows read from
    equal bytes under an equal footer are equal rows (:func:`kept_read`)."""
    if any(parts[k].identity is None for k in groups):
        return None
    spans = {
        k: [_chunk_span(parts[k].file.metadata.row_group(g)) for g in numbers]
        for k, numbers in groups.items()
    }
    if sum(b - a for k in spans for a, b in spans[k]) > _KEPT_READ_BYTES:
        return None  # too large to keep: not read twice
    now: list[Any] = []
    for k, numbers in groups.items():
        part = parts[k]
        try:
            with open(part.path, "rb") as f:
                st = os.fstat(f.fileno())
                if (st.st_dev, st.st_ino) != (part.identity or ())[1:3]:
                    return None
                for g, (start, stop) in zip(numbers, spans[k], strict=True):
                    f.seek(start)
                    now += (part.identity, g, f.read(stop - start))
        except OSError:
            return None
    return tuple(now)


def _chunk_span(group: pq.RowGroupMetaData) -> tuple[int, int]:
    """Where a row group's column chunks are in its file: from the first page of the
    first to the end of the last."""
    spans = [
        (start, start + c.total_compressed_size)
        for c in (group.column(i) for i in range(group.num_columns))
        for start in [
            c.dictionary_page_offset
            if c.has_dictionary_page and c.dictionary_page_offset is not None
            else c.data_page_offset
        ]
    ]
    return min(a for a, _ in spans), max(b for _, b in spans)


#: The rows a store read last in this process, with what :func:`read_back` gave for them,
#: up to :data:`_KEPT_READ_BYTES` of rows and bytes (a row group of four cases of 1.2 MB
#: is 5 MB): a store opened for each case, as a test per case or an engine's loop does,
#: decodes each row group once, as a store kept open does.
_KEPT_READ: list[tuple[tuple[Any, ...], Any]] = []
_KEPT_READ_BYTES: Final = 64 << 20
_KEPT_READ_LOCK: Final = threading.Lock()


def kept_read(now: tuple[Any, ...]) -> Any | None:
    """What :func:`keep_read` kept of row groups whose files held then what ``now``
    (:func:`read_back`) says they hold now, byte for byte (None: nothing)."""
    with _KEPT_READ_LOCK:
        return next((read for then, read in _KEPT_READ if then == now), None)


def forget_kept_reads() -> None:
    """Let the rows kept go (:func:`keep_read`): the next store reads its row groups from
    the file, and the memory they held is free."""
    with _KEPT_READ_LOCK:
        _KEPT_READ.clear()


def keep_read(now: tuple[Any, ...] | None, read: Any, nbytes: int) -> None:
    """Keep ``read``, rows of ``nbytes`` read from what ``now`` (:func:`read_back`) says
    the files held, in place of what was kept (None: keep nothing)."""
    with _KEPT_READ_LOCK:
        _KEPT_READ.clear()
        if now is not None and nbytes + sum(len(x) for x in now if isinstance(x, bytes)) <= (
            _KEPT_READ_BYTES
        ):
            _KEPT_READ.append((now, read))


def _open_footer(path: Path, where: str) -> Part:
    """A store's Parquet file opened, its footer read and checked."""
    try:
        file = pq.ParquetFile(path)
    except (OSError, pa.ArrowException) as exc:
        raise CorpusError(f"cannot read as Parquet ({exc})", where=where) from None
    schema = file.schema_arrow
    metadata = parse_metadata(schema.metadata, where=where)
    version = metadata["format_version"]
    plain = schema.remove_metadata()
    for expected, missing in format_schemas(version):
        if plain.equals(expected):
            return Part(path, file, metadata, missing, footer_index(file), plain)
    written = "this version" if version == FORMAT_VERSION else f"format version {version}"
    raise CorpusError(
        f"the columns differ from those of {written} of the store format; it was not "
        "written by onnx-arrow, or was changed since",
        where=where,
    )


#: The footer bytes :func:`open_part` keeps in all, of the files opened last (a footer of
#: a store of 104 row groups is 0.45 MB; parsed, it takes a few times that): a longer
#: footer is not kept.
_KEPT_FOOTER_BYTES: Final = 8 << 20
#: Per file (its absolute path): its footer's bytes, parsed, and what was read of it.
_FOOTERS: OrderedDict[str, tuple[bytes, pq.FileMetaData, tuple[Any, ...]]] = OrderedDict()
_FOOTERS_LOCK: Final = threading.Lock()


def _same_file(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino, a.st_size, a.st_mtime_ns) == (
        b.st_dev, b.st_ino, b.st_size, b.st_mtime_ns,
    )  # fmt: skip


def _footer_bytes(path: Path, st: os.stat_result) -> bytes | None:
    """The bytes of the file's footer (its Thrift metadata and the 8 bytes after it), read
    from the file ``st`` describes; None where the file is not that one any more, has no
    Parquet footer, or one too long to keep (then it is opened as any file is, and
    refused there if it is no Parquet file)."""
    try:
        with open(path, "rb") as f:
            if not _same_file(st, os.fstat(f.fileno())) or st.st_size < 12:
                return None
            f.seek(st.st_size - 8)
            end = f.read(8)
            length = int.from_bytes(end[:4], "little")
            if end[4:] != b"PAR1" or not 0 < length <= min(st.st_size - 12, _KEPT_FOOTER_BYTES):
                return None
            f.seek(st.st_size - 8 - length)
            data = f.read(length)
    except OSError:
        return None
    return data + end if len(data) == length else None


def footer_index(file: pq.ParquetFile) -> list[list[tuple[str, int, int]]] | None:
    """The file's index of cases (:func:`~onnx_arrow.corpus.format.parse_case_index`),
    where its footer holds one that agrees with the footer itself: as many row groups,
    each of as many rows, and each row group's smallest and largest case those its
    ``test_case`` statistics record (where it records them).  None otherwise (a store
    written before the index, or one whose footer was changed): the reader then reads
    the ``test_case`` column, as it did before.  The rows of a case are checked against
    the index when they are read (:class:`~onnx_arrow.corpus.Store`)."""
    meta = file.metadata
    index = parse_case_index(
        (meta.metadata or {}).get(CASES_KEY.encode()),
        [meta.row_group(i).num_rows for i in range(meta.num_row_groups)],
    )
    if index is None:
        return None
    for i, spans in enumerate(index):
        stats = meta.row_group(i).column(0).statistics
        try:
            if stats is None or not stats.has_min_max:
                continue
            low, high = stats.min, stats.max
        except (ValueError, pa.ArrowException):  # not UTF-8: the index cannot be right
            return None
        names = [name for name, _, _ in spans]
        if (low, high) != (min(names), max(names)):
            return None
    return index


def part_paths(path: Path) -> list[Path]:
    """A store's files: the file itself, or the parts under a dataset store's folder (see
    :class:`Store`); symlinks are refused, hidden and ``_`` files are not parts."""
    try:
        mode = os.lstat(path).st_mode
    except OSError as exc:
        raise CorpusError(f"cannot open: {exc.strerror}", where=str(path)) from None
    if not stat.S_ISDIR(mode):
        return [path]
    found: list[tuple[int, str, Path]] = []
    for folder, subfolders, names in os.walk(path):
        subfolders[:] = sorted(d for d in subfolders if not d.startswith((".", "_")))
        linked = [d for d in subfolders if Path(folder, d).is_symlink()]
        if linked:
            raise CorpusError(
                "is a symlink; the parts of a dataset store are files inside its folder",
                where=str(Path(folder, linked[0])),
            )
        for name in names:
            if name.startswith((".", "_")) or not name.endswith(".parquet"):
                continue
            part = Path(folder, name)
            if part.is_symlink():
                raise CorpusError(
                    "is a symlink; the parts of a dataset store are files inside its folder",
                    where=str(part),
                )
            match = PART_NAME.fullmatch(name)
            number = int(match.group(1)) if match else sys.maxsize
            found.append((number, part.relative_to(path).as_posix(), part))
    if not found:
        raise CorpusError(
            "holds no .parquet part; pass a store's .parquet file or a dataset store's folder",
            where=str(path),
        )
    return [part for _, _, part in sorted(found)]
