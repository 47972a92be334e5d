"""Benchmark: one case of a store read against ``onnx.numpy_helper`` on its ``.pb`` files.

The corpora (``bench_throughput.py``'s, made here):

* ``relu``: 60 cases of a ReLU, one float32 ``[1, 3, 224, 224]`` input of noise and its
  output (72 MB of files, a row group of four cases at the default ``row_group_bytes``);
* ``mixed``: cases of one float32 ``[1, 3, 224, 224]`` input and output of noise, smooth
  waves and ReLU activations in turn, every case different, ``--mixed-gb`` of files (0.5 by
  default; smaller is allowed, the row groups still hold four cases).

Each is imported with ``write_store`` (default options).  Then, per round, for a few cases
spread over the store (the same cases in every round), the sides in turns:

* ``numpy_helper``: each ``.pb`` file of the case read from disk (``Path.read_bytes``),
  parsed as a ``TensorProto`` and turned into an ndarray, as a user would;
* ``open``: ``store.case(name).data_sets()`` with the store opened once before the
  rounds (its last row groups forgotten before each call, so every call reads the file);
* ``fresh``: ``Store(path).case(name).data_sets()``: the store opened for the case, as a
  Jupyter case view or an engine loop that opens per case meets it (nothing kept of an
  earlier read: each case of another row group).  In this process
  (with onnx_arrow imported), not a fresh process: the cost measured is the store's
  opening and reading, not the interpreter's start-up, which ``bench_throughput.py``
  measures on its own;
* ``open, rows decoded``: the case read again from a store that read it before, its rows
  kept decoded: no Parquet read, the values decoded from the rows and checked against
  their digests (a floor of any store that checks what it gives back);
* ``fresh, in order`` against ``numpy_helper, in order``: as ``fresh``, for as many
  consecutive cases from the middle of the store, as a test per case or an engine's
  loop reads them (a store opened again decodes a row group it decoded last only if
  its bytes changed);
* ``data column`` (a floor, not a side a user runs): the row group that holds the case,
  its ``data_float`` column alone, read by pyarrow on one thread, no more: what any reader
  of a Parquet store through pyarrow pays before it has a value.

Then the pieces of a read and the floors below them, each in the same turns (none is a
side a user runs; each is printed over ``numpy_helper``):

* ``footer``: ``pyarrow.parquet.ParquetFile(store)``, the footer parsed (what a fresh
  open pays for it when the store has not kept it);
* ``other columns``: the row group's columns but the data columns (what the case's rows
  say besides their numbers: paths, kinds, shapes, envelopes, the model's bytes);
* ``digest``: BLAKE2b-128 of each of the case's ``.pb`` files (bytes in memory): the
  check of every value read against the digest recorded at import;
* floors of the case's own float data (its rows' ``data_float`` lists alone, no other
  case's), each written as a Parquet file of one row group in pages as large as the
  store's, read by pyarrow on one thread: ``case floats, as stored`` (zstd at the store's
  level, the store's float encoding: decompression and list levels), ``case floats,
  uncompressed`` (list levels only), ``case floats, flat`` (uncompressed, no list: a
  plain float column), ``case floats, a binary per value`` (each value's floats as one
  ``large_binary``, as a ``.pb`` file's ``raw_data`` holds them: no levels per element),
  uncompressed and at zstd level 3, and ``np.fromfile`` of the same bytes (the file
  system's speed).  The bytes of each floor's files are printed over zstd level 3 of the
  same cases' ``.pb`` files (what ``tar | zstd -3`` makes of them, headers aside): the
  size a store of that layout would have, against the size bar's peer.

Every side's arrays are checked equal to numpy_helper's once.  A time is the sum over the
cases of one round; printed: each side's median with its min and max over the rounds, and
the ratios ``open / numpy_helper`` and ``fresh / numpy_helper`` of the same round (median,
min, max), and ``data column / numpy_helper``, ``open / data column`` (what the store adds
to the floor) and ``fresh / open`` (what opening the store costs); each in wall time and
in this process's CPU time (``time.process_time``, all its threads: what the machine's
other load does not change).  The files are read once before the rounds (page cache
warm).  The machine may be shared: compare ratios, not
lone times.

Run::

    python benchmarks/bench_case_read.py [--mixed-gb 0.5] [--rounds 15] [--cases 6]
        [--keep DIR] [--corpora relu mixed] [--row-group-cases N]

``--row-group-cases 1`` imports each corpus a case per row group (``import
--row-group-cases 1``): what reading a case costs when its row group holds no other.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import itertools
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from _report import workdir
from bench_throughput import large_corpus, relu_corpus, warm

from onnx_arrow.corpus import WriteOptions
from onnx_arrow.corpus.parquet import DATA_PAGE_SIZE, float_level


def _stats(xs: list[float]) -> dict[str, float]:
    return {"median": statistics.median(xs), "min": min(xs), "max": max(xs)}


def _ratios(times: dict[str, list[float]], a: str, b: str) -> dict[str, float]:
    return _stats([x / y for x, y in zip(times[a], times[b], strict=True)])


def _flat(data_sets: list[dict[str, dict[str, Any]]]) -> list[np.ndarray]:
    return [v for d in data_sets for io in ("outputs", "inputs") for v in d[io].values()]


def measure(src: Path, store_path: Path, rounds: int, count: int) -> dict[str, Any]:
    """The three sides over ``count`` cases of the store, ``rounds`` rounds in turns."""
    from onnx import TensorProto, numpy_helper

    from onnx_arrow.corpus import Store, parts

    store = Store(store_path)
    cases = store.cases()
    picked = [cases[i] for i in np.linspace(0, len(cases) - 1, count).astype(int)]
    pbs = {c: sorted((src / c).rglob("*.pb")) for c in picked}

    def helper() -> None:
        for case in picked:
            [numpy_helper.to_array(TensorProto.FromString(p.read_bytes())) for p in pbs[case]]

    def forget() -> None:  # the next read reads the file (page cache warm)
        store._last_read = None
        parts.forget_kept_reads()

    def opened() -> None:
        for case in picked:
            forget()
            store.case(case).data_sets()

    def fresh() -> None:
        for case in picked:
            forget()
            Store(store_path).case(case).data_sets()

    held = {case: Store(store_path) for case in picked}  # each keeps its case's rows decoded
    for case, kept in held.items():
        kept.case(case).data_sets()

    def decoded() -> None:
        for case in picked:
            held[case].case(case).data_sets()

    middle = len(cases) // 2  # consecutive cases, as a test per case or a loop reads them
    in_order = cases[middle : middle + count]
    pbs.update({c: sorted((src / c).rglob("*.pb")) for c in in_order})

    def helper_in_order() -> None:
        for case in in_order:
            [numpy_helper.to_array(TensorProto.FromString(p.read_bytes())) for p in pbs[case]]

    def fresh_in_order() -> None:
        forget()
        for case in in_order:
            Store(store_path).case(case).data_sets()

    parquet = pq.ParquetFile(store_path)
    group_of = {  # the row group holding each case (it may hold others)
        name: i
        for i in range(parquet.num_row_groups)
        for name in set(parquet.read_row_group(i, columns=["test_case"])["test_case"].to_pylist())
    }

    def column() -> None:
        for case in picked:
            parquet.read_row_group(group_of[case], columns=["data_float"], use_threads=False)

    def footer() -> None:
        for _ in picked:
            pq.ParquetFile(store_path)

    others = [c for c in parquet.schema_arrow.names if not c.startswith("data_") or c == "data_set"]

    def other_columns() -> None:
        for case in picked:
            parquet.read_row_group(group_of[case], columns=others, use_threads=False)

    pb_bytes = {c: [p.read_bytes() for p in pbs[c]] for c in picked}

    def digest() -> None:
        for case in picked:
            for data in pb_bytes[case]:
                hashlib.blake2b(data, digest_size=16).digest()

    floors, floor_bytes = _case_floors(store_path, parquet, picked, group_of, store_path.parent)
    zstd3 = pa.Codec("zstd", compression_level=3)  # the size bar's peer: zstd -3 of the files
    packed = sum(len(zstd3.compress(b"".join(pb_bytes[c]), asbytes=True)) for c in picked)

    for case in (*picked, *in_order):  # every side gives numpy_helper's arrays
        want = sorted(
            (numpy_helper.to_array(TensorProto.FromString(p.read_bytes())) for p in pbs[case]),
            key=lambda a: a.tobytes(),
        )
        for got in (store.case(case).data_sets(), Store(store_path).case(case).data_sets()):
            have = sorted(_flat(got), key=lambda a: a.tobytes())
            if len(have) != len(want) or not all(
                np.array_equal(a, b) for a, b in zip(have, want, strict=True)
            ):
                raise RuntimeError(f"the store's {case!r} differs from its .pb files")
    warm(src)
    warm(store_path)
    sides: dict[str, Callable[[], None]] = {
        "numpy_helper": helper,
        "open": opened,
        "fresh": fresh,
        "open, rows decoded": decoded,
        "numpy_helper, in order": helper_in_order,
        "fresh, in order": fresh_in_order,
        "data column": column,
        "footer": footer,
        "other columns": other_columns,
        "digest": digest,
        **floors,
    }
    times: dict[str, list[float]] = {k: [] for k in sides}
    cpu: dict[str, list[float]] = {k: [] for k in sides}
    for _ in range(rounds):
        for label, fn in sides.items():
            gc.collect()
            start, used = time.perf_counter(), time.process_time()
            fn()
            times[label].append(time.perf_counter() - start)
            cpu[label].append(time.process_time() - used)
    pairs = (
        ("open", "numpy_helper"),
        ("fresh", "numpy_helper"),
        ("open, rows decoded", "numpy_helper"),
        ("fresh, in order", "numpy_helper, in order"),
        ("data column", "numpy_helper"),
        ("open", "data column"),
        ("fresh", "open"),
        *((k, "numpy_helper") for k in ("footer", "other columns", "digest", *floors)),
    )
    return {
        "store": str(store_path),
        "store_bytes": store_path.stat().st_size,
        "row_groups": store.num_row_groups,
        "cases": len(cases),
        "cases_read": len(picked),
        "rounds": rounds,
        "zstd -3 of the cases' .pb files, bytes": packed,
        **{f"{k}, bytes / zstd -3": v / packed for k, v in floor_bytes.items()},
        **{f"{k} s": _stats(v) for k, v in times.items()},
        **{f"{a} / {b}": _ratios(times, a, b) for a, b in pairs},
        **{f"{k} cpu s": _stats(v) for k, v in cpu.items()},
        **{f"{a} / {b} (cpu)": _ratios(cpu, a, b) for a, b in pairs},
    }


def _case_floors(
    store_path: Path,
    parquet: pq.ParquetFile,
    picked: list[str],
    group_of: dict[str, int],
    work: Path,
) -> tuple[dict[str, Callable[[], None]], dict[str, int]]:
    """The floors of reading each picked case's float data: its rows' ``data_float`` lists
    alone written as a Parquet file of one row group (as the store compresses them,
    uncompressed, flat and uncompressed) and as raw bytes; a side per floor."""
    leaf = next(
        i
        for i in range(parquet.metadata.num_columns)
        if parquet.metadata.schema.column(i).path.startswith("data_float")
    )
    kinds = ("stored", "plain", "flat", "binary", "binary zstd", "raw")
    files: dict[str, list[Path]] = {k: [] for k in kinds}
    for n, case in enumerate(picked):
        group = parquet.read_row_group(group_of[case], columns=["test_case", "data_float"])
        rows = group.filter(pc.equal(group.column("test_case"), case))
        lists = rows.column("data_float").combine_chunks()
        lists = lists.filter(lists.is_valid())
        chunk = parquet.metadata.row_group(group_of[case]).column(leaf)
        split = "BYTE_STREAM_SPLIT" in chunk.encodings
        encoding = "BYTE_STREAM_SPLIT" if split else "PLAIN"
        base = work / f"floor-{store_path.stem}-{n}"
        settings = {
            "stored": {
                "compression": "zstd",
                "compression_level": float_level(WriteOptions(), encoding),
                "use_dictionary": False,
                "column_encoding": {"x.list.element": encoding},
            },
            "plain": {"compression": "none", "use_dictionary": False},
        }
        pages = {"data_page_size": DATA_PAGE_SIZE, "write_statistics": False}  # as the store's
        for kind, options in settings.items():
            path = base.with_suffix(f".{kind}.parquet")
            table = pa.table({"x": lists})
            pq.write_table(table, path, row_group_size=len(lists), **options, **pages)
            files[kind].append(path)
        flat = base.with_suffix(".flat.parquet")
        values = lists.flatten()
        pq.write_table(
            pa.table({"x": values}), flat, compression="none", use_dictionary=False, **pages
        )
        files["flat"].append(flat)
        # each value's floats as one binary, as a .pb file's raw_data holds them
        offsets = lists.offsets.to_numpy() - lists.offsets[0].as_py()
        numbers = values.to_numpy()
        blobs = pa.array(
            [numbers[a:b].tobytes() for a, b in itertools.pairwise(offsets)],
            pa.large_binary(),
        )
        for kind, compression in (("binary", "none"), ("binary zstd", "zstd")):
            path = base.with_suffix(f".{kind.replace(' ', '-')}.parquet")
            pq.write_table(
                pa.table({"x": blobs}),
                path,
                compression=compression,
                use_dictionary=False,
                **pages,
                **({"compression_level": 3} if compression == "zstd" else {}),
            )
            files[kind].append(path)
        raw = base.with_suffix(".raw")
        values.to_numpy().tofile(raw)
        files["raw"].append(raw)

    def reader(kind: str) -> Callable[[], None]:
        if kind == "raw":

            def raw() -> None:
                for p in files[kind]:
                    np.fromfile(p, dtype=np.float32)

            return raw
        opened = [pq.ParquetFile(p) for p in files[kind]]  # opened once, as the store is

        def read() -> None:
            for f in opened:
                f.read_row_group(0, use_threads=False)

        return read

    labels = {
        "stored": "case floats, as stored",
        "plain": "case floats, uncompressed",
        "flat": "case floats, flat",
        "binary": "case floats, a binary per value",
        "binary zstd": "case floats, a binary per value, zstd",
        "raw": "np.fromfile",
    }
    for paths in files.values():
        for p in paths:
            warm(p)
    sizes = {labels[kind]: sum(p.stat().st_size for p in paths) for kind, paths in files.items()}
    return {label: reader(kind) for kind, label in labels.items()}, sizes


def summary(name: str, result: dict[str, Any]) -> None:
    """The ratios of the same rounds (wall, then CPU) and the floors' sizes, a line each."""
    print(f"\n== {name}: {result['cases_read']} cases of {result['cases']}, "
          f"{result['row_groups']} row groups, {result['rounds']} rounds in turns")  # fmt: skip
    for key, value in result.items():
        if isinstance(value, dict) and " / " in key and not key.endswith("(cpu)"):
            cpu = result[f"{key} (cpu)"]
            print(
                f"  {key:<56} {value['median']:6.2f}x [{value['min']:.2f}-{value['max']:.2f}]"
                f"  CPU {cpu['median']:6.2f}x"
            )
        elif key.endswith("bytes / zstd -3"):
            print(f"  size: {key:<50} {value:6.3f}x")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mixed-gb", type=float, default=0.5)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--cases", type=int, default=6)
    parser.add_argument("--corpora", nargs="+", default=["relu", "mixed"])
    parser.add_argument("--keep", default=None, help="work folder, kept (corpora reused)")
    parser.add_argument(
        "--row-group-cases",
        type=int,
        default=None,
        help="close a row group at this many cases too (1: a case per row group)",
    )
    args = parser.parse_args(argv)
    from onnx_arrow.corpus import FolderSource, WriteOptions, write_store

    options = WriteOptions(row_group_cases=args.row_group_cases)

    with workdir(args.keep, "bench-case-read-") as work:
        for name in args.corpora:
            if name == "relu":
                src = relu_corpus(work / "relu")
            else:
                src = large_corpus(work / f"mixed-{args.mixed_gb}", args.mixed_gb)
            store_path = work / f"{name}-{time.time_ns()}.parquet"
            start = time.perf_counter()
            write_store(FolderSource(src), store_path, options=options)
            took = time.perf_counter() - start
            result = measure(src, store_path, args.rounds, args.cases)
            store_path.unlink()
            for floor in store_path.parent.glob(f"floor-{store_path.stem}-*"):
                floor.unlink()
            print(json.dumps({"corpus": name, "import s": took, **result}, indent=1))
            summary(name, result)
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
