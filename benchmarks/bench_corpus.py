"""Benchmark: the corpus store on the node suite, against plain file I/O and onnx's numpy_helper.

One run measures, on the node suite the installed onnx builds, written out once as a folder tree
(``node/<case>/model.onnx``, ``test_data_set_N/*.pb``) so that every side starts from the same
files on disk:

* import: ``write_store(FolderSource(root), out)`` against reading every ``.pb`` file's bytes
  (bar: at most 3x); for context against reading every file (models too, which import also
  reads), and the naive path: parse each ``.pb`` with onnx, ``numpy_helper`` to numpy, one
  ``pa.FixedShapeTensorArray`` per value, all to one Parquet file (one column per value).
  The floor of any import: the same folder read into cases by ``FolderSource`` while the
  writer thread writes the store's own row groups, already built (decoding and row building
  free); and, for a corpus of fewer, larger files, the same on the model test kinds of the
  onnx wheel (context);
* export: ``export_store(out, dest)`` against writing the same bytes with plain
  ``open(path, "wb").write(data)`` (bar: at most 3x); folders are created in the timed part of
  both, the two take turns, each run writes a new folder after ``os.sync()`` (file creation
  on a disk still writing out or deleting earlier runs slows down), and the export is checked
  against the source tree, byte for byte; for context, ``export_store(..., jobs=cores)``;
* loading every value to numpy: from the store, against ``TensorProto`` / ``SequenceProto`` /
  ``OptionalProto.FromString`` plus ``numpy_helper.to_array`` / ``to_list`` / ``to_optional``
  on every ``.pb`` (bar: faster).  The baseline is given each file's message type for free
  (precomputed from the models), so the fight is on reading and decoding values only.  Two
  store paths: ``Store.values()`` (every value decoded from the data columns), and
  ``Store.case_arrays`` per case (the typed view a runtime is fed from; one run only);
* size: store bytes against ``.pb`` bytes (bar: at most 0.35x); for context against all
  source bytes, and the same store at zstd levels 1 (pyarrow's default), 6 and 19.

Times are the best of ``--repeat`` runs (``time.perf_counter``); ratios are taken within one
run, and the runs of the import and export measures take turns, so a noisy shared machine
moves both sides of each ratio together.  The page cache is warm for every side: setup has
just written the files, and each side runs once before timing.

Run::

    python benchmarks/bench_corpus.py [--repeat 3] [--keep DIR] [--jobs N]
"""

from __future__ import annotations

import argparse
import functools
import gc
import itertools
import os
import platform
import resource
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pyarrow as pa
import pyarrow.parquet as pq
from _report import Row, print_table
from onnx import MapProto, ModelProto, OptionalProto, SequenceProto, TensorProto, numpy_helper

from onnx_arrow.core.model import declared_type
from onnx_arrow.corpus import (
    FolderSource,
    NodeSuiteSource,
    Store,
    WriteOptions,
    export_store,
    write_store,
)
from onnx_arrow.corpus.parquet import StoreFile
from onnx_arrow.corpus.rows import VALUE_COLUMNS
from onnx_arrow.corpus.sources import Case, value_slot, wheel_data_dir
from onnx_arrow.corpus.write import BackgroundWriter, RowGroup

IMPORT_BAR = 3.0  # import time at most 3x reading the .pb files' bytes
EXPORT_BAR = 3.0  # export time at most 3x writing the same bytes
LOAD_BAR = 1.0  # loading to numpy faster than onnx.numpy_helper
SIZE_BAR = 0.35  # store at most 0.35x the .pb bytes

#: The message class of a value file, by the oneof of its declared TypeProto.
_MESSAGE_OF_TYPE: dict[str, type[Any]] = {
    "tensor_type": TensorProto,
    "sequence_type": SequenceProto,
    "optional_type": OptionalProto,
    "map_type": MapProto,
}
_TO_NUMPY: dict[type[Any], Callable[[Any], Any]] = {
    TensorProto: numpy_helper.to_array,
    SequenceProto: numpy_helper.to_list,
    OptionalProto: numpy_helper.to_optional,
    MapProto: numpy_helper.to_dict,
}


# --- the corpus on disk --------------------------------------------------------------------------


@dataclass
class Corpus:
    """The node suite written out: every file's path and bytes, and each .pb's message type."""

    root: Path
    files: dict[str, bytes] = field(default_factory=dict)  # relative path -> bytes
    cases: int = 0
    messages: dict[str, type[Any]] = field(default_factory=dict)  # .pb path -> message class
    untyped: list[str] = field(default_factory=list)  # .pb files with no declared type

    @property
    def pb_paths(self) -> list[str]:
        return [p for p in self.files if p.endswith(".pb")]

    def nbytes(self, suffix: str = "") -> int:
        return sum(len(d) for p, d in self.files.items() if p.endswith(suffix))


def write_corpus(root: Path) -> Corpus:
    """Write the node suite under ``root`` and note each value file's declared message type."""
    corpus = Corpus(root)
    for case in NodeSuiteSource():
        corpus.cases += 1
        for f in case.files:
            target = root / f.path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(f.data)
            corpus.files[f.path] = f.data
        _note_types(case, corpus)
    return corpus


def _note_types(case: Case, corpus: Corpus) -> None:
    model = case.model()
    for f in case.files:
        slot = value_slot(case, f.path)
        if slot is None:
            continue
        type_proto = declared_type(model, slot[1], slot[2])
        message = (
            None if type_proto is None else _MESSAGE_OF_TYPE.get(type_proto.WhichOneof("value"))
        )
        if message is None:
            corpus.untyped.append(f.path)
        else:
            corpus.messages[f.path] = message


# --- timing --------------------------------------------------------------------------------------


def best_of(
    fn: Callable[[], Any], repeat: int, *, before: Callable[[], None] | None = None
) -> tuple[float, Any]:
    """Best wall time of ``fn()`` over ``repeat`` calls, and the last result.

    ``before`` runs ahead of each call, untimed (e.g. to remove the previous output).
    """
    best = float("inf")
    result = None
    for _ in range(repeat):
        if before is not None:
            before()
        result = None
        gc.collect()
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def best_of_each(
    runs: dict[str, tuple[Callable[[], Any], Callable[[], None]]], repeat: int
) -> dict[str, tuple[float, Any]]:
    """Best wall time and last result of each ``name: (fn, before)``, the runs taken in turn.

    Rounds alternate the functions, so a drift of the machine (the page cache filling with
    dirty pages, another load) reaches each of them alike; ``before`` runs untimed ahead of
    each call.
    """
    best = {name: (float("inf"), None) for name in runs}
    for _ in range(repeat):
        for name, (fn, before) in runs.items():
            before()
            gc.collect()
            start = time.perf_counter()
            result = fn()
            best[name] = (min(best[name][0], time.perf_counter() - start), result)
    return best


def cpu_seconds(fn: Callable[[], Any]) -> tuple[float, float, float]:
    """Wall time of one ``fn()``, and the CPU time it took here and in child processes."""
    before, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    start = time.perf_counter()
    fn()
    wall = time.perf_counter() - start
    after, children_after = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )

    def used(a: Any, b: Any) -> float:
        return float((b.ru_utime - a.ru_utime) + (b.ru_stime - a.ru_stime))

    return wall, used(before, after), used(children, children_after)


# --- import --------------------------------------------------------------------------------------


def read_all(paths: list[str]) -> int:
    """The baseline: read every file's bytes."""
    total = 0
    for p in paths:
        with open(p, "rb") as fh:
            total += len(fh.read())
    return total


def import_store(root: Path, out: Path, options: WriteOptions, jobs: int | None) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"options": options}
    if jobs is not None:
        kwargs["jobs"] = jobs
    return write_store(FolderSource(root), out, **kwargs)


@dataclass
class BuiltGroups:
    """A store's row groups, already built, and how many cases each holds."""

    tables: list[pa.Table]
    cases: list[int]

    @classmethod
    def of(cls, store: Path) -> BuiltGroups:
        parquet = pq.ParquetFile(store)
        tables = [parquet.read_row_group(i) for i in range(parquet.num_row_groups)]
        return cls(tables, [len(t.column("test_case").unique()) for t in tables])


def import_floor(root: Path, built: BuiltGroups, out: Path, options: WriteOptions) -> None:
    """What any import does, with decoding and row building free: read every file of the
    folder into cases (``FolderSource``) while the writer thread writes the store's own row
    groups, each handed over once its cases are read, as ``write_store`` does."""
    writer = StoreFile(str(out), options)
    background = BackgroundWriter(lambda group: writer.append(group.table))
    pending = iter(zip(built.tables, itertools.accumulate(built.cases), strict=True))
    table, due = next(pending, (None, 0))
    for read, _ in enumerate(FolderSource(root), 1):
        while table is not None and read >= due:
            background.write(RowGroup(table=table))
            table, due = next(pending, (None, 0))
    while table is not None:
        background.write(RowGroup(table=table))
        table, due = next(pending, (None, 0))
    background.finish()
    writer.close()


def naive_import(corpus: Corpus, out: Path) -> Counter[str]:
    """Each .pb through onnx and numpy_helper into a fixed_shape_tensor column of one Parquet file.

    Models are parsed for their graph types (import reads them too).  Values that are not tensors,
    or that ``from_numpy_ndarray`` cannot take (0-d, empty, complex, string, ml_dtypes), are
    skipped and counted by reason.  The file has one column per value: each has its own type.
    """
    root = corpus.root
    skipped: Counter[str] = Counter()
    names: list[str] = []
    arrays: list[pa.Array] = []
    models: dict[str, ModelProto] = {}
    for rel in corpus.files:
        if rel.endswith("/model.onnx"):
            with open(f"{root}/{rel}", "rb") as fh:
                models[rel.rsplit("/", 1)[0]] = ModelProto.FromString(fh.read())
    for rel in corpus.pb_paths:
        case_name = rel.split("/test_data_set_", 1)[0]
        case = Case(case_name, "node", model_path=f"{case_name}/model.onnx")
        slot = value_slot(case, rel)
        model = models.get(case_name)
        type_proto = None if slot is None else declared_type(model, slot[1], slot[2])
        if type_proto is None or type_proto.WhichOneof("value") != "tensor_type":
            skipped["not a tensor"] += 1
            continue
        with open(f"{root}/{rel}", "rb") as fh:
            array = numpy_helper.to_array(TensorProto.FromString(fh.read()))
        if array.ndim == 0 or array.size == 0:
            skipped["0-d" if array.ndim == 0 else "empty"] += 1
            continue
        try:
            tensor = pa.FixedShapeTensorArray.from_numpy_ndarray(
                np.ascontiguousarray(array).reshape((1, *array.shape))
            )
        except (ValueError, pa.ArrowException) as exc:
            skipped[f"{array.dtype} ({type(exc).__name__})"] += 1
            continue
        names.append(rel)
        arrays.append(tensor)
    pq.write_table(pa.Table.from_arrays(arrays, names=names), out)
    return skipped


# --- export --------------------------------------------------------------------------------------


def write_all(files: dict[str, bytes], dest: Path) -> None:
    """The baseline: create the folders, then write every file with plain writes."""
    base = str(dest)
    os.makedirs(base, exist_ok=True)
    for d in sorted({p.rsplit("/", 1)[0] for p in files if "/" in p}):
        os.makedirs(f"{base}/{d}", exist_ok=True)
    for rel, data in files.items():
        with open(f"{base}/{rel}", "wb") as fh:
            fh.write(data)


def tree_differences(files: dict[str, bytes], dest: Path) -> list[str]:
    """Paths that differ between ``files`` and the tree under ``dest`` (missing, extra, bytes)."""
    found = {
        p.relative_to(dest).as_posix(): p for p in dest.rglob("*") if p.is_file() or p.is_symlink()
    }
    diffs = [f"missing {p}" for p in files if p not in found]
    diffs += [f"extra {p}" for p in found if p not in files]
    diffs += [
        f"bytes of {p}" for p, d in files.items() if p in found and found[p].read_bytes() != d
    ]
    return diffs


def _nothing() -> None:
    pass


class Fresh:
    """A new folder for each run of writing a tree, so that nothing is deleted between runs
    (deleting thousands of files keeps the disk busy into the next run); each run starts
    after ``os.sync()``, with no dirty page of an earlier run left to write."""

    def __init__(self, base: Path) -> None:
        self.base, self.runs = base, 0
        self.path = base

    def next(self) -> None:
        self.runs += 1
        self.path = self.base.with_name(f"{self.base.name}_{self.runs}")
        os.sync()

    def clean(self) -> None:
        for k in range(1, self.runs + 1):
            shutil.rmtree(self.base.with_name(f"{self.base.name}_{k}"), ignore_errors=True)


# --- loading to numpy ----------------------------------------------------------------------------


def load_numpy_helper(files: list[tuple[str, str, type[Any]]]) -> dict[str, Any]:
    """The baseline: each .pb parsed as its (given) message type, then numpy_helper.

    ``files`` holds (relative path, full path, message class), all computed beforehand.
    """
    out: dict[str, Any] = {}
    for rel, full, message in files:
        with open(full, "rb") as fh:
            out[rel] = _TO_NUMPY[message](message.FromString(fh.read()))
    return out


def load_case_arrays(store_path: Path) -> int:
    """``Store.case_arrays`` for every case; returns the number of values."""
    store = Store(store_path)
    count = 0
    for case in store.cases():
        for data_set in store.case_arrays(case):
            count += len(data_set["inputs"]) + len(data_set["outputs"])
    return count


def load_values(store_path: Path) -> dict[str, Any]:
    """Every value of the store to numpy with ``Store.values()``: ``{path: value}``."""
    return {value.path: value.to_numpy() for value in Store(store_path).values()}


def value_differences(expected: dict[str, Any], got: dict[str, Any]) -> Counter[str]:
    """What differs between two ``{path: value}`` loads, counted by kind of difference."""
    diffs: Counter[str] = Counter()
    for path, value in expected.items():
        if path not in got:
            diffs["missing"] += 1
            continue
        why = _difference(value, got[path])
        if why:
            diffs[why] += 1
    diffs["extra"] += len(set(got) - set(expected))
    return +diffs


def _difference(a: Any, b: Any) -> str:
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        if a.shape != b.shape:
            return f"shape {a.shape} vs {b.shape}"
        if object in (a.dtype, b.dtype):
            norm = [x.encode() if isinstance(x, str) else x for x in a.ravel().tolist()]
            return "" if norm == b.ravel().tolist() else f"strings ({a.dtype} vs {b.dtype})"
        if a.dtype != b.dtype:
            return f"dtype {a.dtype} vs {b.dtype}"
        same = np.ascontiguousarray(a).view(np.uint8) == np.ascontiguousarray(b).view(np.uint8)
        return "" if same.all() else f"bits of {a.dtype}"
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"list length {len(a)} vs {len(b)}"
        return next((w for w in map(_difference, a, b) if w), "")
    if isinstance(a, dict) and isinstance(b, dict):
        if list(a) != list(b):
            return "map keys"
        return next((w for w in map(_difference, a.values(), b.values()) if w), "")
    if a is None and b is None:
        return ""
    return f"{type(a).__name__} vs {type(b).__name__}"


def read_columns_only(store_path: Path) -> int:
    """The floor under the direct path: the same row group reads, nothing else."""
    parquet = pq.ParquetFile(store_path)
    return sum(
        parquet.read_row_group(group, columns=list(VALUE_COLUMNS)).num_rows
        for group in range(parquet.num_row_groups)
    )


# --- the report ----------------------------------------------------------------------------------


@contextmanager
def workdir(keep: str | None) -> Iterator[Path]:
    if keep is None:
        with tempfile.TemporaryDirectory(prefix="bench_corpus_") as tmp:
            yield Path(tmp)
        return
    path = Path(keep)
    path.mkdir(parents=True, exist_ok=True)
    yield path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per measure; best is kept")
    parser.add_argument("--keep", metavar="DIR", help="work in DIR (empty) and keep the artifacts")
    parser.add_argument("--jobs", type=int, help="passed to write_store (default: 1)")
    args = parser.parse_args(argv)
    if args.keep is not None:
        keep = Path(args.keep)
        if keep.exists() and (not keep.is_dir() or any(keep.iterdir())):
            parser.error(f"--keep {args.keep}: must be an empty folder or not exist yet")
    repeat = max(args.repeat, 1)
    jobs = args.jobs

    print(
        f"python {platform.python_version()}, onnx {onnx.__version__}, pyarrow {pa.__version__}, "
        f"numpy {np.__version__}, {os.cpu_count()} CPUs; best of {repeat} runs"
    )
    if jobs is not None:
        print(f"write_store(..., jobs={jobs})")

    with workdir(args.keep) as work:
        rows = run(work, repeat, jobs)
    print()
    print_table(rows)
    bars = [r for r in rows if r.bar is not None]
    print()
    print(f"bars: {sum(bool(r.passed) for r in bars)} of {len(bars)} met")
    if args.keep:
        print(f"artifacts kept in {args.keep}")
    return 0


def run(work: Path, repeat: int, jobs: int | None) -> list[Row]:
    # --- setup (not timed) ---
    start = time.perf_counter()
    corpus = write_corpus(work / "src")
    root = corpus.root
    pb_paths = [str(root / p) for p in corpus.pb_paths]
    all_paths = [str(root / p) for p in corpus.files]
    pb_bytes, all_bytes = corpus.nbytes(".pb"), corpus.nbytes()
    print(
        f"node suite: {corpus.cases} cases, {len(pb_paths)} .pb files, {pb_bytes:,} .pb bytes, "
        f"{corpus.nbytes('.onnx'):,} model bytes ({len(corpus.files) - len(pb_paths)} other "
        f"files), {all_bytes:,} bytes in all; written in {time.perf_counter() - start:.1f} s"
    )
    rows: list[Row] = []

    # --- import ---
    print("\n[import]")
    read_all(all_paths)  # warm
    store = work / "store.parquet"
    import_store(root, store, WriteOptions(), jobs)  # warm, and the row groups of the floor
    built = BuiltGroups.of(store)
    floor = work / "floor.parquet"
    cores = os.cpu_count() or 1
    parallel = work / "parallel.parquet"
    import_runs: dict[str, tuple[Callable[[], Any], Callable[[], None]]] = {
        "read .pb": (lambda: read_all(pb_paths), _nothing),
        "read all": (lambda: read_all(all_paths), _nothing),
        "import": (lambda: import_store(root, store, WriteOptions(), jobs), _nothing),
        "list": (lambda: sum(1 for _ in FolderSource(root)), _nothing),
        "floor": (lambda: import_floor(root, built, floor, WriteOptions()), _nothing),
    }
    if cores > 1:
        import_runs["parallel"] = (
            lambda: import_store(root, parallel, WriteOptions(), cores),
            _nothing,
        )
    timed = best_of_each(import_runs, repeat)
    t_read_pb, t_read_all, t_list, t_floor = (
        timed[k][0] for k in ("read .pb", "read all", "list", "floor")
    )
    t_import, summary = timed["import"]
    store_bytes = store.stat().st_size
    if cores > 1:
        t_parallel = timed["parallel"][0]
    print(
        f"read .pb bytes {t_read_pb:.3f} s (the baseline of the bar, as the issue says; the bar "
        f"is write_store <= {IMPORT_BAR * t_read_pb:.3f} s); read all files, models too "
        f"{t_read_all:.3f} s (context)"
    )
    print(
        f"write_store {t_import:.3f} s: {summary['rows']} rows, {summary['row_groups']} row "
        f"groups, {len(summary['warnings'])} warnings, {store_bytes:,} bytes"
    )
    print(f"FolderSource alone (list the folder, read every file into cases) {t_list:.3f} s")
    if cores > 1:
        same = parallel.read_bytes() == store.read_bytes()
        print(
            f"write_store(jobs={cores}) {t_parallel:.3f} s; the same store as one job: "
            + ("yes" if same else "NO")
        )
    for n in (1, cores) if cores > 1 else (1,):
        run_once = functools.partial(import_store, root, parallel, WriteOptions(), n)
        wall, here, workers = cpu_seconds(run_once)
        print(
            f"cpu of one write_store(jobs={n}): {here:.3f} s in this process (writer thread "
            f"included), {workers:.3f} s in workers; {(here + workers) / wall:.2f} cores busy"
        )
    print(
        f"floor: FolderSource with the store's row groups, already built, written as the cases "
        f"are read {t_floor:.3f} s; what is left for decoding and building rows: "
        f"{(IMPORT_BAR * t_read_pb - t_floor) / len(corpus.files) * 1e6:.1f} us per file under "
        f"the bar, {(t_import - t_floor) / len(corpus.files) * 1e6:.1f} us per file now"
    )
    wheel = wheel_data_dir()
    wheel_pb = [str(p) for p in sorted(wheel.rglob("*.pb"))]
    read_all(wheel_pb)  # warm
    t_wheel_pb, _ = best_of(lambda: read_all(wheel_pb), repeat)
    wheel_store = work / "wheel.parquet"
    t_wheel, _ = best_of(lambda: import_store(wheel, wheel_store, WriteOptions(), jobs), repeat)
    built_wheel = BuiltGroups.of(wheel_store)
    t_wheel_floor, _ = best_of(
        lambda: import_floor(wheel, built_wheel, floor, WriteOptions()), repeat
    )
    print(
        f"the wheel's model kinds ({len(wheel_pb)} .pb files, {read_all(wheel_pb):,} bytes): "
        f"read .pb bytes {t_wheel_pb:.4f} s, write_store {t_wheel:.3f} s, floor "
        f"{t_wheel_floor:.3f} s"
    )
    naive = work / "naive.parquet"
    t_naive, skipped = best_of(lambda: naive_import(corpus, naive), repeat)
    print(
        f"naive (onnx parse + numpy_helper + FixedShapeTensorArray + one Parquet file, one column "
        f"per value) {t_naive:.3f} s, {naive.stat().st_size:,} bytes; skipped "
        f"{sum(skipped.values())} values:"
    )
    for why, n in skipped.most_common():
        print(f"  {n:>5}  {why}")
    rows += [
        Row(
            "import: write_store vs read .pb bytes (the bar)", t_read_pb, t_import, "s", IMPORT_BAR
        ),
        Row("import: write_store vs read all files", t_read_all, t_import, "s"),
        Row("import: FolderSource alone vs read .pb bytes", t_read_pb, t_list, "s"),
        *(
            [Row(f"import: write_store jobs={cores} vs read .pb bytes", t_read_pb, t_parallel, "s")]
            if cores > 1
            else []
        ),
        Row("import: floor (decoding free) vs read .pb bytes", t_read_pb, t_floor, "s"),
        Row("import: naive vs read .pb bytes (context)", t_read_pb, t_naive, "s"),
        Row("import: wheel kinds vs read their .pb bytes", t_wheel_pb, t_wheel, "s"),
        Row("import: wheel kinds floor vs read their .pb bytes", t_wheel_pb, t_wheel_floor, "s"),
    ]

    # --- export ---
    print("\n[export]")
    write_all(corpus.files, work / "plain")  # warm
    plain, exported, parallel_tree = (Fresh(work / name) for name in ("plain", "export", "jobs"))
    export_runs: dict[str, tuple[Callable[[], Any], Callable[[], None]]] = {
        "plain": (lambda: write_all(corpus.files, plain.path), plain.next),
        "export": (lambda: export_store(store, exported.path), exported.next),
    }
    if cores > 1:
        export_runs["parallel"] = (
            lambda: export_store(store, parallel_tree.path, jobs=cores),
            parallel_tree.next,
        )
    timed = best_of_each(export_runs, repeat)
    (t_write, _), (t_export, counts) = timed["plain"], timed["export"]
    diffs = tree_differences(corpus.files, exported.path)
    if cores > 1:
        diffs += tree_differences(corpus.files, parallel_tree.path)
    print(
        f"plain writes {t_write:.3f} s; export_store {t_export:.3f} s ({counts['files']} files, "
        f"{counts['bytes']:,} bytes)"
        + (f"; export_store(jobs={cores}) {timed['parallel'][0]:.3f} s" if cores > 1 else "")
        + "; each export equals the source tree byte for byte: "
        + ("yes" if not diffs else f"NO, {len(diffs)} differences, e.g. {diffs[:3]}")
    )
    for folders in (plain, exported, parallel_tree):
        folders.clean()
    rows.append(Row("export: export_store vs plain writes", t_write, t_export, "s", EXPORT_BAR))
    if cores > 1:
        rows.append(
            Row(f"export: jobs={cores} vs plain writes", t_write, timed["parallel"][0], "s")
        )

    # --- loading to numpy ---
    print("\n[load every value to numpy]")
    if corpus.untyped:
        print(f"{len(corpus.untyped)} .pb files have no declared type: left out of the baseline")
    typed = [(rel, str(root / rel), message) for rel, message in corpus.messages.items()]
    load_numpy_helper(typed)  # warm
    t_helper, expected = best_of(lambda: load_numpy_helper(typed), repeat)
    t_columns, _ = best_of(lambda: read_columns_only(store), repeat)
    print(
        f"numpy_helper (message types given for free) {t_helper:.3f} s, {len(expected)} values; "
        f"the store's columns read with pyarrow only {t_columns:.3f} s"
    )
    attempts: dict[str, tuple[Callable[[], Any], int]] = {
        "Store.values()": (lambda: load_values(store), repeat),
        "Store.case_arrays per case (1 run)": (lambda: load_case_arrays(store), 1),
    }
    paths: dict[str, float] = {}
    results: dict[str, Any] = {}
    for what, (fn, runs) in attempts.items():
        try:
            paths[what], results[what] = best_of(fn, runs)
        except Exception as exc:  # report it, and measure the other paths still
            print(f"  {what:<40} failed: {type(exc).__name__}: {str(exc)[:120]}")
            continue
        print(f"  {what:<40} {paths[what]:8.3f} s  {paths[what] / t_helper:6.2f}x numpy_helper")
    direct = results.get("Store.values()")
    if direct is not None:
        mismatch = value_differences(expected, direct)
        print(
            f"Store.values(): {len(direct)} values, equal to numpy_helper's: "
            + ("all" if not mismatch else ", ".join(f"{n} {why}" for why, n in mismatch.items()))
        )
    if "Store.case_arrays per case (1 run)" in results:
        print(f"Store.case_arrays: {results['Store.case_arrays per case (1 run)']} values")
    if paths:
        best_path = min(paths, key=lambda k: paths[k])
        label, seconds = best_path.split(" (")[0], paths[best_path]
    else:
        label, seconds = "no store path ran", float("inf")
    rows.append(Row(f"load: {label} vs numpy_helper", t_helper, seconds, "s", LOAD_BAR, True))
    t_case = paths.get("Store.case_arrays per case (1 run)")
    if t_case is not None:
        rows.append(Row("load: Store.case_arrays vs numpy_helper", t_helper, t_case, "s"))

    # --- size ---
    print("\n[size]")
    rows.append(Row("size: store vs .pb bytes", pb_bytes, store_bytes, "B", SIZE_BAR))
    rows.append(Row("size: store vs all source bytes", all_bytes, store_bytes, "B"))
    print(
        f"default WriteOptions (zstd level {WriteOptions().compression_level}): {store_bytes:,} B"
    )
    for level in (1, 6, 19):
        other = work / f"store_zstd{level}.parquet"
        options = WriteOptions(compression_level=level)
        seconds, _ = best_of(functools.partial(import_store, root, other, options, jobs), repeat)
        size = other.stat().st_size
        print(f"zstd level {level}: {size:,} B, write_store {seconds:.3f} s")
        rows.append(Row(f"size: zstd level {level} vs .pb bytes", pb_bytes, size, "B"))
        rows.append(Row(f"import: zstd level {level} vs read .pb bytes", t_read_pb, seconds, "s"))
    return rows


if __name__ == "__main__":
    sys.exit(main())
