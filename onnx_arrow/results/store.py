"""The results store on disk: a folder of Parquet parts, one per run (or more), each
written under a hidden name, synced and renamed into place, so a reader never sees half
a run; every part checked as it is read (its schema, its run, the runs beside it)."""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import stat
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from onnx_arrow.compare.report import REPORT_SCHEMA, check_made, check_report
from onnx_arrow.core.model import NO_FOLLOW, file_kind, load_json
from onnx_arrow.corpus.tree import atomic_file
from onnx_arrow.errors import ResultsError
from onnx_arrow.reports import Report
from onnx_arrow.results.schema import (
    RESULTS_FORMAT,
    RESULTS_METADATA_KEY,
    RESULTS_SCHEMA,
    RUN_COLUMNS,
    RUN_SCHEMA,
    portable_provenance,
    run_key,
    run_values,
)

__all__ = [
    "PART_SUFFIX",
    "Added",
    "add",
    "check",
    "has_run",
    "part_names",
    "provenances",
    "read",
    "runs",
]

#: The suffix of a part; files whose names start with ``.`` or ``_`` are not parts (a part
#: being written is ``.NAME.XXXX.partial``), as pyarrow, pandas, Polars and DuckDB's
#: ``RESULTS/*.parquet`` skip them.
PART_SUFFIX: Final = ".parquet"

# the lock file of a store's writers (hidden: no reader takes it for a part)
_LOCK: Final = ".lock"


@dataclass(frozen=True)
class Added:
    """What :func:`add` did with one run: written to ``part``, or not (``present``: a
    run of its identity was there already, see :data:`~onnx_arrow.results.IDENTITY_COLUMNS`)."""

    run_id: str
    run_key: str
    runtime: str | None
    runtime_version: str | None
    rows: int
    part: Path | None
    present: bool


def _folder(results: str | os.PathLike[str], *, create: bool) -> Path:
    path = Path(results)
    if create:
        try:
            path.mkdir()
        except FileExistsError:  # there already (made by another writer meanwhile too)
            pass
        except OSError as exc:
            raise ResultsError(
                f"cannot make the results folder ({exc.strerror})", where=str(path)
            ) from None
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise ResultsError("no such results store (folder)", where=str(path)) from None
    except OSError as exc:
        raise ResultsError(
            f"cannot open the results store ({exc.strerror})", where=str(path)
        ) from None
    if not stat.S_ISDIR(mode):
        raise ResultsError(f"{file_kind(mode)}, not a results store's folder", where=str(path))
    return path


def part_names(results: str | os.PathLike[str]) -> list[Path]:
    """The parts of a results store, by name; files starting with ``.`` or ``_`` left out.

    Raises
    ------
    ResultsError
        Located at the file: anything else in the folder (a folder, a link, a file not
        named ``*.parquet``), which readers of the folder would take for a part.
    """
    path = _folder(results, create=False)
    parts = []
    for entry in sorted(os.scandir(path), key=lambda e: e.name):
        if entry.name.startswith((".", "_")):
            continue
        where = str(path / entry.name)
        if not entry.is_file(follow_symlinks=False):
            kind = "a symbolic link" if entry.is_symlink() else "a folder or special file"
            raise ResultsError(
                f"{kind} in a results store, whose readers take every file for a part; move it out",
                where=where,
            )
        if not entry.name.endswith(PART_SUFFIX):
            raise ResultsError(
                f"not a part of the results store (not named *{PART_SUFFIX}), which readers "
                "of the folder would read as one; move it out",
                where=where,
            )
        parts.append(path / entry.name)
    return parts


@dataclass(frozen=True)
class _Footer:
    path: Path
    file: pq.ParquetFile
    run_id: str
    run_key: str
    rows: int
    made: dict[str, Any]


def _footer(path: Path) -> _Footer:
    """A part opened, its schema and metadata checked (no row read)."""
    where = str(path)
    try:
        file = pq.ParquetFile(where)
        schema = file.schema_arrow
    except (OSError, pa.ArrowException) as exc:
        raise ResultsError(f"not a Parquet file ({exc})", where=where) from None
    got = schema.remove_metadata()
    if got != RESULTS_SCHEMA:
        missing = [n for n in RESULTS_SCHEMA.names if n not in got.names]
        extra = [n for n in got.names if n not in RESULTS_SCHEMA.names]
        typed = [
            f"{f.name} is {got.field(f.name).type}, not {f.type}"
            for f in RESULTS_SCHEMA
            if f.name in got.names and got.field(f.name).type != f.type
        ]
        said = [
            *([f"no column {', '.join(missing)}"] if missing else []),
            *([f"columns not of the schema: {', '.join(extra)}"] if extra else []),
            *typed,
        ] or ["its columns are not in the schema's order"]
        raise ResultsError(f"not a part of a results store: {'; '.join(said)}"[:2000], where=where)
    raw = (schema.metadata or {}).get(RESULTS_METADATA_KEY.encode())
    if raw is None:
        raise ResultsError(f"the part has no {RESULTS_METADATA_KEY} metadata", where=where)
    meta = load_json(raw, what="the part's metadata", where=where, error=ResultsError)
    if not isinstance(meta, dict):
        raise ResultsError("the part's metadata is not a JSON object", where=where)
    version = meta.get("results_format")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ResultsError(f"the part's results_format is {version!r:.40}", where=where)
    if version > RESULTS_FORMAT:
        raise ResultsError(
            f"the part is of results format {version}; this onnx-arrow reads up to "
            f"{RESULTS_FORMAT}: upgrade onnx-arrow to read it",
            where=where,
        )
    run_id, key, rows = meta.get("run_id"), meta.get("run_key"), meta.get("rows")
    if not (isinstance(run_id, str) and isinstance(key, str) and isinstance(rows, int)):
        raise ResultsError("the part's metadata lacks its run_id, run_key or rows", where=where)
    if rows != file.metadata.num_rows:
        raise ResultsError(
            f"the part holds {file.metadata.num_rows} rows, its metadata says {rows}",
            where=where,
        )
    made = check_made(meta.get("report"), where=f"{where}: report")
    return _Footer(path, file, run_id, key, rows, made)


def _footers(path: Path) -> list[_Footer]:
    """Every part's footer, and the runs they claim checked against each other: a run's
    parts agree on what it is; two runs never claim one identity."""
    footers = [_footer(part) for part in part_names(path)]
    by_id: dict[str, _Footer] = {}
    by_key: dict[str, _Footer] = {}
    for footer in footers:
        first = by_id.setdefault(footer.run_id, footer)
        if first.run_key != footer.run_key or first.made != footer.made:
            raise ResultsError(
                f"the part claims run {footer.run_id}, as {first.path.name} does, with "
                "another identity or provenance; one of them was changed",
                where=str(footer.path),
            )
        other = by_key.setdefault(footer.run_key, footer)
        if other.run_id != footer.run_id:
            raise ResultsError(
                f"two runs claim one identity (run_key {footer.run_key}): this part's run "
                f"{footer.run_id} and {other.path.name}'s run {other.run_id}; one was "
                "copied or changed",
                where=str(footer.path),
            )
    return footers


def check(results: str | os.PathLike[str]) -> int:
    """Check that runs can be added to ``results`` before any is made: a folder whose
    parts' footers read and agree (see :func:`read`; their rows are read by
    :func:`read`), or a name not taken in a folder that exists.  Returns the number of
    runs it holds.

    Raises
    ------
    ResultsError
        Located at the file or folder, as :func:`read`.
    """
    path = Path(results)
    if not os.path.lexists(path):
        if not path.absolute().parent.is_dir():
            raise ResultsError("the results folder's parent folder does not exist", where=str(path))
        return 0
    return len({f.run_id for f in _footers(_folder(path, create=False))})


def has_run(results: str | os.PathLike[str], made: Mapping[str, Any]) -> str | None:
    """The id of the run of ``results`` whose identity is that of a compare report's
    provenance ``made`` (its first attempt), None if there is none or no store: what a
    command that runs many pairs asks before running one again (read from the parts'
    footers, as :func:`check` reads them).

    Raises
    ------
    ResultsError
        As :func:`check`.
    """
    if check(results) == 0:
        return None
    now = datetime.datetime.now(datetime.timezone.utc)
    key = run_values(made, attempt=1, run_id="", date=now)["run_key"]
    found = [f.run_id for f in _footers(Path(results)) if f.run_key == key]
    return found[0] if found else None


def provenances(results: str | os.PathLike[str]) -> dict[str, dict[str, Any]]:
    """What each run's report said it was made from and with, as its parts keep it (no
    path of the machine that ran it), by run id; read from the parts' footers, checked
    as :func:`check` checks them.

    Raises
    ------
    ResultsError
        As :func:`check`.
    """
    return {f.run_id: f.made for f in _footers(_folder(results, create=False))}


def _read_part(footer: _Footer) -> pa.Table:
    """A part's rows, checked: one run on every row (the metadata's), its identity's
    digest its run_key, the report's columns as a compare report's."""
    where = str(footer.path)
    try:
        table = footer.file.read()
    except (OSError, pa.ArrowException) as exc:
        raise ResultsError(f"the part does not read ({exc})", where=where) from None
    table = table.replace_schema_metadata(None)
    values: dict[str, Any] = {}
    for name in RUN_COLUMNS:
        column = table.column(name)
        distinct = pc.unique(column)
        if len(distinct) > 1 or (name in ("run_id", "run_key", "date") and column.null_count):
            raise ResultsError(
                f"column {name} is not one value on every row: a part holds one run",
                where=where,
            )
        values[name] = distinct[0].as_py() if len(distinct) else None
    if values["run_id"] != footer.run_id or values["run_key"] != footer.run_key:
        raise ResultsError(
            "the rows' run_id or run_key is not the one the part's metadata says", where=where
        )
    if table.num_rows and run_key(values) != footer.run_key:
        raise ResultsError(
            f"the run's columns do not give its run_key {footer.run_key} (the runtime, "
            "version, corpus or options were changed after it was written)",
            where=where,
        )
    check_report(table.select(REPORT_SCHEMA.names), where=where)
    return table


def read(results: str | os.PathLike[str]) -> pa.Table:
    """Every row of a results store as one table of
    :data:`~onnx_arrow.results.RESULTS_SCHEMA`, every part checked first.

    Raises
    ------
    ResultsError
        Located at the file: a part that is not Parquet, not of the schema (a column
        missing, another type), without its metadata, of a later format; a run whose rows
        disagree with their metadata or run_key; a run's parts that disagree; two runs
        claiming one identity; an output twice in one run.
    """
    footers = _footers(_folder(results, create=False))
    tables = [_read_part(footer) for footer in footers]
    if not tables:
        return RESULTS_SCHEMA.empty_table()
    table = pa.concat_tables(tables)
    _check_outputs_once(table, footers)
    return table


def _check_outputs_once(table: pa.Table, footers: Sequence[_Footer]) -> None:
    keys = table.select(["run_id", "case", "data_set", "index"])
    counted = keys.group_by(["run_id", "case", "data_set", "index"], use_threads=False).aggregate(
        [([], "count_all")]
    )
    twice = counted.filter(pc.greater(counted.column("count_all"), 1))
    if twice.num_rows:
        row = twice.slice(0, 1).to_pylist()[0]
        parts = [f.path.name for f in footers if f.run_id == row["run_id"]]
        raise ResultsError(
            f"run {row['run_id']} holds output {row['index']} of {row['case']!r:.200}, data "
            f"set {row['data_set']}, twice (parts {', '.join(parts)}); a part was copied",
            where=str(footers[0].path.parent),
        )


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """The store's writers one at a time (where the system has ``flock``)."""
    try:
        import fcntl
    except ImportError:  # Windows: no lock
        yield
        return
    lock = path / _LOCK
    try:  # never through a link, never waiting on a FIFO: the store's own regular file
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | NO_FOLLOW | os.O_NONBLOCK, 0o666)
    except OSError as exc:
        raise ResultsError(
            f"cannot open the writers' lock file ({exc.strerror or exc}): a results store "
            "holds it as a regular file; remove what stands in its place",
            where=str(lock),
        ) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ResultsError(
                "the writers' lock file is not a regular file; remove what stands in its place",
                where=str(lock),
            )
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _runs_of(report: Report, where: str) -> list[tuple[dict[str, Any], pa.Table]]:
    """A compare report's runs: each source's provenance and rows (one for a report as
    compare made it, several for a joined one)."""
    if not isinstance(report, Report):
        raise ResultsError(
            f"expected a Report (compare's, or read_report's), got {type(report).__name__}",
            where=where,
        )
    if report.kind != "compare":
        raise ResultsError(
            f"a {report.kind or 'report without provenance'}, not a compare report; a "
            "results store keeps what compare says, with what it was made from",
            where=where,
        )
    table = check_report(report, where=where)
    runs, first = [], 0
    for k, source in enumerate(report.sources):
        rows = source.get("rows")
        if not isinstance(rows, int) or rows < 0 or first + rows > table.num_rows:
            raise ResultsError(f"source {k} does not say which rows it gave", where=where)
        made = check_made({k: v for k, v in source.items() if k != "rows"}, where=where)
        if not made.get("store_digest"):
            raise ResultsError(
                f"source {k} does not name the digest of its corpus; a run is kept by it",
                where=where,
            )
        runs.append((made, table.slice(first, rows)))
        first += rows
    return runs


def add(
    results: str | os.PathLike[str],
    report: Report,
    *,
    again: bool = False,
    date: datetime.datetime | None = None,
    where: str = "the report",
) -> list[Added]:
    """Add the runs of a compare ``report`` to the results store ``results`` (a folder,
    made if missing): a part per run, written atomically (a hidden temporary name, synced,
    renamed into place).  A run whose identity the store has already is not added again
    unless ``again`` (then it is added as the next ``attempt``).  ``date`` (UTC, now
    unless given) is recorded as the run's.

    The store's parts are checked as :func:`check` checks them (their footers: schema,
    metadata, the runs they claim), not row by row as :func:`read` reads them.

    Raises
    ------
    ResultsError
        If ``report`` is not a compare report with its provenance, or a part's footer
        does not read or contradicts another's (see :func:`check`); nothing is written
        then.
    """
    runs = _runs_of(report, where)
    path = _folder(results, create=True)
    when = date or datetime.datetime.now(datetime.timezone.utc)
    added = []
    with _locked(path):
        footers = _footers(path)
        keys = {f.run_key: f.run_id for f in footers}
        for made, rows in runs:
            run_id = uuid.uuid4().hex
            attempt = 1
            values = run_values(made, attempt=attempt, run_id=run_id, date=when)
            if values["run_key"] in keys and not again:
                values["run_id"] = keys[values["run_key"]]
                added.append(_added(values, rows, None, present=True))
                continue
            while values["run_key"] in keys:  # again: the next attempt
                attempt += 1
                values = run_values(made, attempt=attempt, run_id=run_id, date=when)
            part = _write_part(path, values, made, rows)
            keys[values["run_key"]] = run_id
            added.append(_added(values, rows, part, present=False))
    return added


def _added(values: dict[str, Any], rows: pa.Table, part: Path | None, *, present: bool) -> Added:
    return Added(
        values["run_id"],
        values["run_key"],
        values["runtime"],
        values["runtime_version"],
        rows.num_rows,
        part,
        present,
    )


def _write_part(path: Path, values: dict[str, Any], made: dict[str, Any], rows: pa.Table) -> Path:
    n = rows.num_rows
    columns = [pa.array([values[f.name]] * n, f.type) for f in RUN_SCHEMA]
    columns += [rows.column(name) for name in REPORT_SCHEMA.names]
    meta = {
        "results_format": RESULTS_FORMAT,
        "run_id": values["run_id"],
        "run_key": values["run_key"],
        "rows": n,
        "report": portable_provenance(made),
    }
    schema = RESULTS_SCHEMA.with_metadata(
        {RESULTS_METADATA_KEY: json.dumps(meta, sort_keys=True, default=str)}
    )
    table = pa.Table.from_arrays(columns, schema=schema)
    stamp = values["date"].strftime("%Y%m%dT%H%M%SZ")
    part = path / f"run-{stamp}-{values['run_id']}{PART_SUFFIX}"
    with atomic_file(part, what="the run's part") as tmp:
        pq.write_table(table, tmp)
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    with contextlib.suppress(OSError):  # the rename made durable where the system can
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    return part


def runs(table: pa.Table) -> pa.Table:
    """The runs of a results table (:func:`read`'s), a row each in the order of their
    ``date``: the run columns, ``outputs`` (its rows) and how many ``pass`` (match, xpass),
    ``fail`` (mismatch, nan, dtype and shape mismatches, xfail), are ``error`` and
    ``skipped``."""
    status = table.column("status")
    counted = table.select(list(RUN_COLUMNS))
    flags = {
        "pass": pc.is_in(status, pa.array(["match", "xpass"])),
        "fail": pc.is_in(
            status,
            pa.array(["mismatch", "nan_mismatch", "dtype_mismatch", "shape_mismatch", "xfail"]),
        ),
        "error": pc.equal(status, "error"),
        "skipped": pc.equal(status, "skipped"),
    }
    for name, flag in flags.items():
        counted = counted.append_column(name, pc.cast(flag, pa.int64()))
    grouped = counted.group_by(list(RUN_COLUMNS), use_threads=False).aggregate(
        [([], "count_all"), *((name, "sum") for name in flags)]
    )
    names = {"count_all": "outputs", **{f"{n}_sum": n for n in flags}}
    grouped = grouped.rename_columns([names.get(n, n) for n in grouped.column_names])
    ordered = grouped.select([*RUN_COLUMNS, "outputs", *flags])
    return ordered.sort_by([("date", "ascending"), ("run_id", "ascending")])
