"""Benchmark: the corpus store against what a user would otherwise do, on three corpora, in one run.

The corpora, each a folder tree on disk that every side starts from:

* ``node``: the node suite the installed onnx builds (many small files);
* ``old-node``: the node corpus of an older onnx wheel (``--old-node PATH``, a folder of case
  folders; by default the ``onnx/backend/test/data/node`` folder of the onnx 1.22 wheel, fetched
  with ``pip download`` into the work folder when no path is given);
* ``relu``: 60 cases of a ReLU, input float32 ``[1, 3, 224, 224]`` noise, output ``max(x, 0)``
  (half exact zeros), the corpus where a store was bigger than the tar.zst;
* ``large``: a synthetic corpus of large dense tensors made here (``--large-gb``, at least
  0.5 GB): float32 ``[1, 3, 224, 224]`` cases of real-valued noise, smooth waves and ReLU
  activations (half zeros), cycling, every case different;
* ``node-twice``, ``one-model``, ``cutouts``: corpora of repeated files, in the shapes
  runtimes keep them (a suite kept twice, one model under many cases and data sets, per-layer
  cut-outs of one model): see ``repeated_corpora.py``.

The sides, each run as a process of its own (wall time of the process and its peak RSS, from
``os.wait4``), on every core of the machine, as a user runs them (with ``--pin``, on one core,
``taskset -c 0``, the --jobs sides excepted):

* import: ``onnx-arrow import SRC store.parquet`` (which decodes on one thread while the
  Parquet writer encodes on another) and the same with ``--float-encoding
  BYTE_STREAM_SPLIT`` (no choice of the float encoding) against ``tar -c SRC | zstd -3``
  (zstd on one thread, tar beside it), against a generic protobuf-to-Arrow conversion
  (protarrow: every tensor file parsed as a ``TensorProto``, ``messages_to_record_batch``
  in batches of about 4 MB, written to Parquet with zstd level 3; models, sequences, maps
  and optionals, which protarrow cannot map as they nest themselves, as bytes) and against
  the naive path
  (each ``.pb`` through ``numpy_helper.to_array``, streamed into one Parquet file a row per
  value, path, dtype, shape and bytes, in batches of about 4 MB with zstd level 3);
  the time inside ``write_store`` is printed too, without the interpreter start and imports;
* export: ``onnx-arrow export`` against ``zstd -d | tar -x``; the export is checked against
  the source tree, byte for byte;
* ``--jobs N`` (never pinned): import and export with N processes against one;
* import --no-dedup: every file stored whole (no copies), its time against the import's and
  its store's size against the tar.zst;
* size: the store against the tar.zst, and against the tar.zst of the files in name order
  (``tar --sort=name``), the files' order but for a data set's outputs, which a store holds
  before its inputs; on the ReLU store, its float data columns rewritten in each of
  :data:`SIZE_TRIALS`' encodings, codecs and levels (one for the whole file, as one Parquet
  writer writes it): the size each gives against the tar.zst, and its writer's time against
  that of the store's writer;
* on the large store: ``Store.case_arrays(case)`` and ``list(Store.values(case))`` against
  ``numpy_helper.to_array`` of that case's ``.pb`` files (best of ``--repeat``, a few cases
  spread over the store, the store opened once); ``read_pb`` of a 256 MiB tensor against
  ``np.fromfile`` (``bench_large_tensor.py``'s measure, in processes of their own);
* start: ``import onnx_arrow``, ``onnx-arrow --help`` and an argument error against
  ``import onnx, numpy, pyarrow`` (wall of the process), and the heavy modules each of them
  imports (``python -X importtime``);
* the main job of the README (``onnx-arrow import corpus.parquet``, the default corpus): its
  wall time, and the share of it each part takes: starting and imports, building the cases
  (onnx's node-suite generation, or the cache of it), onnx-arrow's own ``write_store``, and the
  rest of the command (its summary).

Every side runs ``--repeat`` (3) times, the sides in turns; a time is the median with its min
and max, a ratio onnx-arrow over the peer of the same round (median, min, max of the rounds).
Every run writes to a new path, never into a folder just emptied.  Nothing is asserted about
time, the figures are printed.  Before each side its input is read once (page cache warm) and
``os.sync()`` writes out what earlier sides wrote, so that no side pays for another's
writeback.  The machine may be shared: compare ratios, not lone times.

With ``--import-only`` only the import sides run (``tar | zstd -3``, ``onnx-arrow import``
and the naive import), and each is printed with its wall and CPU seconds (median and range
of the rounds), then the ratios of every round, wall and CPU, and the store's size over
the tar.zst's, the files in the folder's order and in name order: the measure of an
import's speed alone, say ``--import-only --corpora relu large`` (with ``--pin``, on one
core).
``--row-group-cases N`` adds a side, ``onnx-arrow import --row-group-cases N``, in the same
turns, and its ratios to the default import (wall, CPU, size): what row groups of fewer
cases cost the import.

Run::

    python benchmarks/bench_throughput.py [--large-gb 0.5] [--old-node PATH] [--jobs 2]
        [--repeat 3] [--corpora node old-node large relu node-twice one-model cutouts]
        [--keep DIR] [--pin] [--import-only [--row-group-cases N]]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from _report import spread, workdir
from repeated_corpora import CORPORA, cutouts_corpus, node_twice_corpus, one_model_corpus

HERE = Path(__file__).resolve().parent
ROW_BATCH_BYTES = 4 << 20  # protarrow's batches: about a row group of the store
HEAVY = ("onnx", "ml_dtypes", "pandas", "onnx.reference", "onnx.numpy_helper", "polars")


# --- running a side in a process of its own ------------------------------------------------------


def measured(
    args: list[str], *, pin: bool = True, env: dict[str, str] | None = None
) -> dict[str, Any]:
    """Run ``args`` in a process of its own (on core 0 with ``pin``): its wall seconds, its
    CPU seconds (user and system, its own and those of the children it waited for) and
    peak RSS in MiB (the largest of it and its children), from ``os.wait4``, and the fields
    of the JSON object on its last stdout line if it printed one.  The code measured is the
    ``onnx_arrow`` that ``PYTHONPATH`` names first, else this checkout's."""
    if pin and shutil.which("taskset"):
        args = ["taskset", "-c", "0", *args]
    path = os.pathsep.join(filter(None, [os.environ.get("PYTHONPATH"), str(HERE.parent)]))
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(
            args, stdout=out, stderr=err, env={**os.environ, **(env or {}), "PYTHONPATH": path}
        )
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        text, errors = out.read().decode(), err.read().decode()
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} exited {proc.returncode}: {errors[-2000:]}")
    lines = text.strip().splitlines()
    got: dict[str, Any] = json.loads(lines[-1]) if lines and lines[-1].startswith("{") else {}
    got["wall"] = wall
    got["cpu"] = usage.ru_utime + usage.ru_stime
    got["peak_mib"] = usage.ru_maxrss / 1024
    return got


def child(kind: str, *args: str) -> list[str]:
    """The command line of a side run by this script in a process of its own."""
    return [sys.executable, str(Path(__file__).resolve()), "--child", kind, *args]


def _report(**fields: Any) -> None:
    print(json.dumps(fields))


def run_child(kind: str, args: list[str]) -> None:
    """The sides that are Python code of this script."""
    if kind == "import":  # onnx-arrow import, timed inside too
        src, out, jobs = args
        from onnx_arrow.corpus import FolderSource, write_store

        start = time.perf_counter()
        write_store(FolderSource(src), out, jobs=int(jobs))
        _report(inner=time.perf_counter() - start)
    elif kind == "export":
        store, dest, jobs = args
        from onnx_arrow.corpus import export_store

        start = time.perf_counter()
        export_store(store, dest, jobs=int(jobs))
        _report(inner=time.perf_counter() - start)
    elif kind == "protarrow":
        src, out = args
        start = time.perf_counter()
        protarrow_import(Path(src), Path(out))
        _report(inner=time.perf_counter() - start)
    elif kind == "naive":
        src, out = args
        start = time.perf_counter()
        skipped = naive_import(Path(src), Path(out))
        _report(inner=time.perf_counter() - start, skipped=skipped)
    elif kind == "tar":
        src, out = args
        pipe = f"tar -cf - -C {_q(src)} . | zstd -3 -T1 -q -o {_q(out)}"
        subprocess.run(["bash", "-o", "pipefail", "-c", pipe], check=True)
    elif kind == "untar":
        archive, dest = args
        os.makedirs(dest)
        pipe = f"zstd -d -T1 -q -c {_q(archive)} | tar -xf - -C {_q(dest)}"
        subprocess.run(["bash", "-o", "pipefail", "-c", pipe], check=True)
    elif kind == "mainjob":
        (out,) = args
        main_job_phases(Path(out))
    elif kind == "floors":
        store, src = args
        floors(Path(store), Path(src))
    elif kind == "size-floors":
        (store,) = args
        size_floors(Path(store))
    elif kind == "case-read":
        (store, src, repeat) = args
        case_reads(Path(store), Path(src), int(repeat))
    else:
        raise SystemExit(f"unknown child {kind!r}")


def _q(path: str) -> str:
    import shlex

    return shlex.quote(path)


# --- the peers written in Python -----------------------------------------------------------------


def _typed_files(src: Path) -> Iterator[tuple[str, bytes, Any]]:
    """Every file of the corpus folder with the message class its model declares (None: a
    model or a file of no declared value type), case by case."""
    from onnx import MapProto, OptionalProto, SequenceProto, TensorProto

    from onnx_arrow.core.model import declared_type
    from onnx_arrow.corpus import FolderSource
    from onnx_arrow.corpus.sources import value_slot

    classes = {
        "tensor_type": TensorProto,
        "sequence_type": SequenceProto,
        "optional_type": OptionalProto,
        "map_type": MapProto,
    }
    for case in FolderSource(src):
        model = case.model() if case.model_path is not None else None
        for f in case.files:
            slot = value_slot(case, f.path)
            type_proto = (
                None if slot is None or model is None else declared_type(model, slot[1], slot[2])
            )
            cls = None if type_proto is None else classes.get(type_proto.WhichOneof("value") or "")
            yield f.path, f.data, cls


def protarrow_import(src: Path, out: Path) -> None:
    """Every tensor file through protarrow, in a Parquet file of TensorProto rows; the rest
    (models, and sequences, maps and optionals, whose messages nest themselves, which
    protarrow refuses) as path and bytes in another."""
    import protarrow
    import pyarrow as pa
    import pyarrow.parquet as pq

    out.mkdir()
    writers: dict[str, pq.ParquetWriter] = {}
    pending: dict[str, list[Any]] = {}
    sizes: dict[str, int] = {}
    classes: dict[str, Any] = {}

    def flush(name: str) -> None:
        if not pending.get(name):
            return
        if name == "bytes":
            paths, blobs = zip(*pending[name], strict=True)
            batch = pa.record_batch({"path": list(paths), "content": pa.array(blobs, pa.binary())})
        else:
            batch = protarrow.messages_to_record_batch(pending[name], classes[name])
        if name not in writers:
            writers[name] = pq.ParquetWriter(
                out / f"{name}.parquet", batch.schema, compression="zstd", compression_level=3
            )
        writers[name].write_batch(batch)
        pending[name], sizes[name] = [], 0

    from onnx import TensorProto

    for path, data, cls in _typed_files(src):
        # sequences, maps and optionals nest themselves, which protarrow cannot map
        if cls is not TensorProto:
            name, item = "bytes", (path, data)
        else:
            name = cls.__name__
            classes[name] = cls
            item = cls.FromString(data)
        pending.setdefault(name, []).append(item)
        sizes[name] = sizes.get(name, 0) + len(data)
        if sizes[name] >= ROW_BATCH_BYTES:
            flush(name)
    for name in list(pending):
        flush(name)
    for writer in writers.values():
        writer.close()


def naive_import(src: Path, out: Path) -> dict[str, int]:
    """Each tensor ``.pb`` through onnx and numpy_helper, streamed into one Parquet file a row
    per value (path, dtype, shape and the array's bytes), written in batches of about 4 MB of
    source with zstd level 3, as a user would write it; files that are not tensors counted."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from onnx import TensorProto, numpy_helper

    schema = pa.schema(
        [
            ("path", pa.string()),
            ("dtype", pa.string()),
            ("shape", pa.list_(pa.int64())),
            ("data", pa.large_binary()),
        ]
    )
    skipped: dict[str, int] = {}
    rows: dict[str, list[Any]] = {name: [] for name in schema.names}
    pending = 0
    with pq.ParquetWriter(out, schema, compression="zstd", compression_level=3) as writer:

        def flush() -> None:
            writer.write_batch(pa.record_batch(list(rows.values()), schema=schema))
            for column in rows.values():
                column.clear()

        for path, data, cls in _typed_files(src):
            if cls is not TensorProto:
                if path.endswith(".pb"):
                    skipped["not a tensor"] = skipped.get("not a tensor", 0) + 1
                continue
            array = numpy_helper.to_array(TensorProto.FromString(data))
            rows["path"].append(path)
            rows["dtype"].append(str(array.dtype))
            rows["shape"].append(list(array.shape))
            if array.dtype == object:  # strings: their UTF-8 bytes, NUL-separated
                rows["data"].append(
                    b"\0".join(x if isinstance(x, bytes) else str(x).encode() for x in array.flat)
                )
            else:
                rows["data"].append(array.tobytes())
            pending += len(data)
            if pending >= ROW_BATCH_BYTES:
                flush()
                pending = 0
        if rows["path"]:
            flush()
    return skipped


# --- the corpora ---------------------------------------------------------------------------------


def node_corpus(root: Path) -> Path:
    from onnx_arrow.corpus import NodeSuiteSource

    if not root.exists():
        for case in NodeSuiteSource():
            for f in case.files:
                target = root / f.path
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(f.data)
    return root


def old_node_corpus(given: str | None, work: Path) -> Path:
    """The node corpus of the onnx 1.22 wheel: ``given``, or fetched with pip and unpacked."""
    if given is not None:
        return Path(given)
    root = work / "onnx-1.22-node"
    if root.exists():
        return root / "node"
    wheels = work / "wheels"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary",
            ":all:",
            "--dest",
            str(wheels),
            "onnx==1.22.0",
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    (wheel,) = wheels.glob("onnx-1.22.0-*.whl")
    prefix = "onnx/backend/test/data/node/"
    with zipfile.ZipFile(wheel) as zf:
        for member in zf.namelist():
            if member.startswith(prefix) and not member.endswith("/"):
                target = root / "node" / member[len(prefix) :]
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(zf.read(member))
    return root / "node"


SHAPE = (1, 3, 224, 224)


def large_corpus(root: Path, gigabytes: float) -> Path:
    """Cases of one float32 input and output until ``gigabytes`` of files: noise, smooth
    waves and ReLU activations in turn, every case different."""
    if root.exists():
        return root
    from onnx import TensorProto, helper, numpy_helper, save_model

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, list(SHAPE))
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, list(SHAPE))
    models = {
        op: helper.make_model(
            helper.make_graph([helper.make_node(op, ["x"], ["y"])], "g", [x], [y]),
            opset_imports=[helper.make_opsetid("", 17)],
        )
        for op in ("Neg", "Relu")
    }
    rng = np.random.default_rng(0)
    grid = np.linspace(0.0, 1.0, SHAPE[-1], dtype=np.float32)
    total, k = 0, 0
    while total < gigabytes * 1e9:
        case = root / "synthetic" / f"test_case_{k:05d}"
        (case / "test_data_set_0").mkdir(parents=True)
        if k % 3 == 0:  # real-valued noise
            data, op = rng.standard_normal(SHAPE, dtype=np.float32), "Neg"
        elif k % 3 == 1:  # structured: ramps and waves, different in every case
            waves = np.sin(grid[None, :] * (k % 17 + 1) * 6.28 + k)
            data = (grid[:, None] * (k % 5) + waves).astype(np.float32)[None, None].repeat(3, 1)
            op = "Neg"
        else:  # activations: noise, then ReLU
            data, op = rng.standard_normal(SHAPE, dtype=np.float32), "Relu"
        result = -data if op == "Neg" else np.maximum(data, 0)
        save_model(models[op], case / "model.onnx")
        for name, value in (("input_0", data), ("output_0", result)):
            blob = numpy_helper.from_array(value, name[:1]).SerializeToString()
            (case / "test_data_set_0" / f"{name}.pb").write_bytes(blob)
            total += len(blob)
        total += (case / "model.onnx").stat().st_size
        k += 1
    return root


def relu_corpus(root: Path, cases: int = 60) -> Path:
    """``cases`` cases of a ReLU: a float32 input of noise, its output ``max(x, 0)`` (half of
    it exact zeros), every case different."""
    if root.exists():
        return root
    from onnx import TensorProto, helper, numpy_helper, save_model

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, list(SHAPE))
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, list(SHAPE))
    model = helper.make_model(
        helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y]),
        opset_imports=[helper.make_opsetid("", 17)],
    )
    rng = np.random.default_rng(0)
    for k in range(cases):
        case = root / "relu" / f"test_relu_{k:03d}"
        (case / "test_data_set_0").mkdir(parents=True)
        save_model(model, case / "model.onnx")
        data = rng.standard_normal(SHAPE, dtype=np.float32)
        for name, value in (("input_0", data), ("output_0", np.maximum(data, 0))):
            blob = numpy_helper.from_array(value, name[:1]).SerializeToString()
            (case / "test_data_set_0" / f"{name}.pb").write_bytes(blob)
    return root


def warm(path: Path) -> None:
    """Read a file or every file of a tree, so that each side starts with it in the page
    cache (a shared machine may have evicted it since the last side ran)."""
    for p in [path] if path.is_file() else sorted(path.rglob("*")):
        if p.is_file():
            with open(p, "rb") as f:
                while f.read(1 << 24):
                    pass


def sorted_tar_size(src: Path) -> int:
    """The size of ``tar --sort=name | zstd -3`` of the corpus (untimed): the tar.zst of the
    files in name order, as the store holds a case's files, rather than in the order the
    folder lists them.  How far apart two related files lie in the stream decides what zstd
    finds: a ReLU's output before its input compresses far better than after it."""
    pipe = f"tar --sort=name -cf - -C {_q(str(src))} . | zstd -3 -T1 -q -c | wc -c"
    done = subprocess.run(["bash", "-o", "pipefail", "-c", pipe], check=True, capture_output=True)
    return int(done.stdout)


def tree_bytes(root: Path) -> tuple[int, int]:
    files = [p for p in root.rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


def trees_equal(a: Path, b: Path) -> bool:
    files_a = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    return files_a == files_b and all((a / p).read_bytes() == (b / p).read_bytes() for p in files_a)


def size_of(path: Path) -> int:
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return path.stat().st_size


# --- one corpus, every side ----------------------------------------------------------------------


def median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The runs of one side summed up: the median wall (and inner) time with its min and
    max, the highest peak, and the runs themselves (for ratios paired by round)."""
    walls = [r["wall"] for r in runs]
    got: dict[str, Any] = {
        "wall": statistics.median(walls),
        "wall_min": min(walls),
        "wall_max": max(walls),
        "cpu": statistics.median(r["cpu"] for r in runs),
        "peak_mib": max(r["peak_mib"] for r in runs),
        "runs": runs,
    }
    if all("inner" in r for r in runs):
        got["inner"] = statistics.median(r["inner"] for r in runs)
    return got


def paired(got: dict[str, Any], side: str, peer: str, key: str = "wall") -> list[float]:
    """``side`` over ``peer`` round by round (the rounds were run in turns); with ``key``
    ``"cpu"``, CPU seconds over CPU seconds, else ``key`` over the peer's wall."""
    theirs = "cpu" if key == "cpu" else "wall"
    return [a[key] / b[theirs] for a, b in zip(got[side]["runs"], got[peer]["runs"], strict=False)]


def _measure_sides(
    sides: dict[str, list[dict[str, Any]]],
    commands: dict[str, Any],
    repeat: int,
    inputs: list[Any],
    pin: bool,
) -> None:
    """Each side ``repeat`` times, in turn, from a warm page cache; on one core with
    ``--pin``, the --jobs sides never.
    Every run writes to a path of its own, never one just emptied (on some disks extracting
    into a folder just removed with ``rm -rf`` costs more system time)."""
    for _ in range(repeat):
        for side, command in commands.items():
            args = command()
            for path in inputs:
                warm(path() if callable(path) else path)
            os.sync()  # no writeback of earlier sides' files during this one
            pinned = pin and "jobs" not in side
            sides.setdefault(side, []).append(measured(args, pin=pinned))


def corpus_runs(
    name: str, src: Path, work: Path, repeat: int, jobs: int, pin: bool
) -> dict[str, Any]:
    """Every side on one corpus, ``repeat`` runs of each, taken in turn."""
    files, nbytes = tree_bytes(src)
    mb = nbytes / 1e6
    print(f"\n== {name}: {files} files, {mb:.1f} MB ({src})", flush=True)
    out = work / f"out-{name}"
    sides: dict[str, list[dict[str, Any]]] = {}
    latest: dict[Path, Path] = {}
    counter = iter(range(1 << 30))

    def fresh(path: Path) -> Path:
        """A new path for a run's output, beside ``path`` (the outputs are removed when
        every run on the corpus is done)."""
        new = path.with_name(f"{next(counter)}-{path.name}")
        while new.exists():  # left by an earlier run in a --keep folder
            new = path.with_name(f"{next(counter)}-{path.name}")
        latest[path] = new
        return new

    def last(path: Path) -> Path:
        return latest[path]

    out.mkdir(exist_ok=True)
    store, archive = out / "store.parquet", out / "corpus.tar.zst"
    imports = {
        "tar | zstd -3": lambda: child("tar", str(src), str(fresh(archive))),
        "onnx-arrow import": lambda: [
            sys.executable,
            "-m",
            "onnx_arrow",
            "import",
            str(src),
            str(fresh(store)),
        ],
        "onnx-arrow import --no-dedup": lambda: [
            sys.executable,
            "-m",
            "onnx_arrow",
            "import",
            "--no-dedup",
            str(src),
            str(fresh(out / "whole.parquet")),
        ],
        "onnx-arrow import (BYTE_STREAM_SPLIT)": lambda: [
            sys.executable,
            "-m",
            "onnx_arrow",
            "import",
            "--float-encoding",
            "BYTE_STREAM_SPLIT",
            str(src),
            str(fresh(out / "split.parquet")),
        ],
        "write_store": lambda: child("import", str(src), str(fresh(out / "inner.parquet")), "1"),
        "protarrow": lambda: child("protarrow", str(src), str(fresh(out / "protarrow"))),
        "naive numpy_helper": lambda: child("naive", str(src), str(fresh(out / "naive.parquet"))),
    }
    if importlib.util.find_spec("protarrow") is None:
        print("protarrow is not installed (python -m pip install protarrow): left out")
        del imports["protarrow"]
    if jobs > 1:
        imports[f"import --jobs {jobs}"] = lambda: child(
            "import", str(src), str(fresh(out / "jobs.parquet")), str(jobs)
        )
        imports["import --jobs 1 (unpinned)"] = lambda: child(
            "import", str(src), str(fresh(out / "one.parquet")), "1"
        )
    _measure_sides(sides, imports, repeat, [src], pin)
    exports = {
        "zstd -d | tar -x": lambda: child("untar", str(last(archive)), str(fresh(out / "untar"))),
        "onnx-arrow export": lambda: [
            sys.executable,
            "-m",
            "onnx_arrow",
            "export",
            str(last(store)),
            str(fresh(out / "export")),
        ],
        "export_store": lambda: child(
            "export", str(last(store)), str(fresh(out / "export-inner")), "1"
        ),
    }
    if jobs > 1:
        exports[f"export --jobs {jobs}"] = lambda: child(
            "export", str(last(store)), str(fresh(out / "export-jobs")), str(jobs)
        )
        exports["export --jobs 1 (unpinned)"] = lambda: child(
            "export", str(last(store)), str(fresh(out / "export-one")), "1"
        )
    _measure_sides(sides, exports, repeat, [lambda: last(store), lambda: last(archive)], pin)
    exact = trees_equal(src, last(out / "export"))
    got = {side: median_run(runs) for side, runs in sides.items()}
    sizes = {
        "tar.zst": size_of(last(archive)),
        "store": size_of(last(store)),
        "store (BYTE_STREAM_SPLIT)": size_of(last(out / "split.parquet")),
        "store (--no-dedup)": size_of(last(out / "whole.parquet")),
        "protarrow": size_of(last(out / "protarrow")) if "protarrow" in got else 0,
        "naive": size_of(last(out / "naive.parquet")),
        "sorted tar.zst": sorted_tar_size(src),
    }
    report_corpus(name, mb, got, sizes, exact, jobs)
    # the store the later measures read, under its plain name; every other output removed
    os.replace(last(store), store)
    for path in out.iterdir():
        if path != store:
            shutil.rmtree(path) if path.is_dir() else path.unlink()
    return {"mb": mb, "files": files, "sides": got, "sizes": sizes, "exact": exact}


def report_corpus(
    name: str, mb: float, got: dict[str, Any], sizes: dict[str, int], exact: bool, jobs: int
) -> None:
    rounds = len(got["tar | zstd -3"]["runs"])
    print(
        f"{'side':<30} {'wall s, median [min-max]':>26} {'MB/s':>7} "
        f"{'peak MiB':>9} {'inner s':>8} {'CPU s':>7}   ({rounds} rounds in turns)"
    )
    for side, r in got.items():
        inner = f"{r['inner']:.3f}" if "inner" in r else ""
        wall = f"{r['wall']:.3f} [{r['wall_min']:.3f}-{r['wall_max']:.3f}]"
        print(
            f"{side:<30} {wall:>26} {mb / r['wall']:>7.1f} {r['peak_mib']:>9.0f} {inner:>8} "
            f"{r['cpu']:>7.2f}"
        )
    tar, untar = "tar | zstd -3", "zstd -d | tar -x"
    lines: list[tuple[str, list[float]]] = [
        ("import vs tar | zstd -3 (process)", paired(got, "onnx-arrow import", tar)),
        ("import vs tar | zstd -3 (write_store alone)", paired(got, "write_store", tar, "inner")),
        (
            "import vs naive numpy_helper, streamed (process)",
            paired(got, "onnx-arrow import", "naive numpy_helper"),
        ),
        ("export vs zstd -d | tar -x (process)", paired(got, "onnx-arrow export", untar)),
        (
            "export vs zstd -d | tar -x (export_store alone)",
            paired(got, "export_store", untar, "inner"),
        ),
        (
            "CPU seconds: import vs tar | zstd -3 (process)",
            paired(got, "onnx-arrow import", tar, "cpu"),
        ),
        (
            "CPU seconds: import vs naive numpy_helper (process)",
            paired(got, "onnx-arrow import", "naive numpy_helper", "cpu"),
        ),
        (
            "CPU seconds: export vs zstd -d | tar -x (process)",
            paired(got, "onnx-arrow export", untar, "cpu"),
        ),
        (
            "import vs import --float-encoding BYTE_STREAM_SPLIT (process)",
            paired(got, "onnx-arrow import", "onnx-arrow import (BYTE_STREAM_SPLIT)"),
        ),
        (
            "import vs import --no-dedup (process)",
            paired(got, "onnx-arrow import", "onnx-arrow import --no-dedup"),
        ),
        (
            "CPU seconds: import vs import --no-dedup (process)",
            paired(got, "onnx-arrow import", "onnx-arrow import --no-dedup", "cpu"),
        ),
        ("store size vs tar.zst", [sizes["store"] / sizes["tar.zst"]]),
        ("store (--no-dedup) size vs tar.zst", [sizes["store (--no-dedup)"] / sizes["tar.zst"]]),
        (
            "store (BYTE_STREAM_SPLIT) size vs tar.zst",
            [sizes["store (BYTE_STREAM_SPLIT)"] / sizes["tar.zst"]],
        ),
        ("store size vs tar --sort=name | zstd -3", [sizes["store"] / sizes["sorted tar.zst"]]),
    ]
    if "protarrow" in got:
        lines[3:3] = [
            ("import vs protarrow (process)", paired(got, "onnx-arrow import", "protarrow"))
        ]
        lines += [
            ("protarrow size vs tar.zst", [sizes["protarrow"] / sizes["tar.zst"]]),
            (
                "peak memory import vs protarrow",
                [got["onnx-arrow import"]["peak_mib"] / got["protarrow"]["peak_mib"]],
            ),
        ]
    if jobs > 1:
        one_import, one_export = "import --jobs 1 (unpinned)", "export --jobs 1 (unpinned)"
        lines += [
            (
                f"import --jobs {jobs} vs --jobs 1 (write_store, no pinning)",
                [
                    a["inner"] / b["inner"]
                    for a, b in zip(
                        got[f"import --jobs {jobs}"]["runs"], got[one_import]["runs"], strict=False
                    )
                ],
            ),
            (
                f"export --jobs {jobs} vs --jobs 1 (export_store, no pinning)",
                [
                    a["inner"] / b["inner"]
                    for a, b in zip(
                        got[f"export --jobs {jobs}"]["runs"], got[one_export]["runs"], strict=False
                    )
                ],
            ),
        ]
    print(
        f"sizes: store {sizes['store']:,} B, tar.zst {sizes['tar.zst']:,} B, "
        f"protarrow {sizes['protarrow']:,} B, naive {sizes['naive']:,} B, "
        f"tar --sort=name | zstd -3 {sizes['sorted tar.zst']:,} B; "
        f"export {'byte for byte' if exact else 'DIFFERS FROM THE SOURCE'}"
    )
    print("  ratios of the same round, median [min-max]:")
    for label, ratios in lines:
        spread = f" [{min(ratios):.2f}-{max(ratios):.2f}]" if len(ratios) > 1 else ""
        print(f"  {label:<58} {statistics.median(ratios):>6.2f}x{spread}")


def import_runs(
    name: str, src: Path, work: Path, repeat: int, pin: bool, group_cases: int | None = None
) -> dict[str, Any]:
    """The import sides alone (``--import-only``): ``tar | zstd -3``, ``onnx-arrow import``
    and the streamed naive import, ``repeat`` runs of each in turn, with wall and CPU
    seconds per side and per round; with ``group_cases``, ``onnx-arrow import
    --row-group-cases group_cases`` too."""
    files, nbytes = tree_bytes(src)
    mb = nbytes / 1e6
    print(f"\n== {name}: {files} files, {mb:.1f} MB ({src})", flush=True)
    out = work / f"out-{name}"
    out.mkdir(exist_ok=True)
    counter = iter(range(1 << 30))
    latest: dict[str, Path] = {}

    def fresh(stem: str) -> str:
        path = out / f"{next(counter)}-{stem}"
        latest[stem] = path
        return str(path)

    commands = {
        "tar | zstd -3": lambda: child("tar", str(src), fresh("corpus.tar.zst")),
        "onnx-arrow import": lambda: [
            sys.executable, "-m", "onnx_arrow", "import", str(src), fresh("store.parquet")
        ],
        "naive numpy_helper": lambda: child("naive", str(src), fresh("naive.parquet")),
    }  # fmt: skip
    grouped = f"import --row-group-cases {group_cases}"
    if group_cases is not None:
        commands[grouped] = lambda: [
            sys.executable, "-m", "onnx_arrow", "import", "--row-group-cases", str(group_cases),
            str(src), fresh("grouped.parquet"),
        ]  # fmt: skip
    sides: dict[str, list[dict[str, Any]]] = {}
    _measure_sides(sides, commands, repeat, [src], pin)
    got = {side: median_run(runs) for side, runs in sides.items()}
    sizes = {stem: size_of(path) for stem, path in latest.items()}
    sizes["sorted.tar.zst"] = sorted_tar_size(src)
    report_imports(mb, got, sizes, repeat)
    if group_cases is not None:
        ours = "onnx-arrow import"
        print(
            f"  {grouped} / import: wall {spread(paired(got, grouped, ours), 2)}x, "
            f"CPU {spread(paired(got, grouped, ours, 'cpu'), 2)}x, "
            f"size {sizes['grouped.parquet'] / sizes['store.parquet']:.3f}x "
            f"({sizes['grouped.parquet']:,} B)"
        )
    shutil.rmtree(out)
    return {"mb": mb, "files": files, "sides": got, "sizes": sizes, "exact": True}


def report_imports(mb: float, got: dict[str, Any], sizes: dict[str, int], rounds: int) -> None:
    """Both sides of each import measure: wall and CPU seconds of every side (median
    [min-max] of the rounds), then the ratios of the same round, each round listed."""
    print(
        f"{'side':<22} {'wall s, median [min-max]':>26} {'CPU s, median [min-max]':>26} "
        f"{'MB/s':>7} {'peak MiB':>9}   ({rounds} rounds in turns)"
    )
    for side, r in got.items():
        walls = [run["wall"] for run in r["runs"]]
        cpus = [run["cpu"] for run in r["runs"]]
        print(
            f"{side:<22} {spread(walls):>26} {spread(cpus):>26} "
            f"{mb / r['wall']:>7.1f} {r['peak_mib']:>9.0f}"
        )
    ours, tar, naive = "onnx-arrow import", "tar | zstd -3", "naive numpy_helper"
    print("  ratios of the same round, median [min-max] (each round):")
    for label, ratios in (
        ("wall: import / tar | zstd -3", paired(got, ours, tar)),
        ("wall: import / naive numpy_helper", paired(got, ours, naive)),
        ("CPU: import / naive numpy_helper", paired(got, ours, naive, "cpu")),
        ("CPU: import / tar | zstd -3", paired(got, ours, tar, "cpu")),
    ):
        rounds_text = ", ".join(f"{x:.2f}" for x in ratios)
        print(f"  {label:<36} {spread(ratios, 2)}x  ({rounds_text})")
    store, archive, ordered = (
        sizes["store.parquet"], sizes["corpus.tar.zst"], sizes["sorted.tar.zst"]
    )  # fmt: skip
    print(
        f"  size: store {store:,} B, tar.zst {archive:,} B, tar --sort=name | zstd -3 "
        f"{ordered:,} B, naive {sizes['naive.parquet']:,} B; store / tar.zst "
        f"{store / archive:.3f}x, store / tar --sort=name | zstd -3 {store / ordered:.3f}x"
    )


# --- the floors: what import and export cannot do without --------------------------------------


def floors(store_path: Path, src: Path) -> None:
    """Times of the parts every import or export of the store does, each alone: the Parquet
    writer writing the store's own row groups (built already), reading them back one at a
    time (Arrow only), and the BLAKE2b-128 digest of every file, which import records and
    export checks."""
    import hashlib

    import pyarrow.parquet as pq

    from onnx_arrow.corpus.options import WriteOptions
    from onnx_arrow.corpus.parquet import StoreFile

    parquet = pq.ParquetFile(store_path)
    start = time.perf_counter()
    for i in range(parquet.num_row_groups):  # one at a time, as export reads them
        parquet.read_row_group(i)
    read = time.perf_counter() - start
    tables = [parquet.read_row_group(i) for i in range(parquet.num_row_groups)]
    out = store_path.with_name("floor.parquet")
    start = time.perf_counter()
    with StoreFile(str(out), WriteOptions()) as writer:  # one thread
        for table in tables:
            writer.append(table)
    write = time.perf_counter() - start
    out.unlink()
    del tables
    blobs = [p.read_bytes() for p in sorted(src.rglob("*")) if p.is_file()]
    start = time.perf_counter()
    for blob in blobs:
        hashlib.blake2b(blob, digest_size=16).digest()
    digest = time.perf_counter() - start
    _report(read=read, write=write, digest=digest)


#: The encodings, codecs and levels of the float data columns the ReLU store is rewritten
#: with (the store's own first): the size each gives, and what its writer costs.
SIZE_TRIALS = (
    ("BYTE_STREAM_SPLIT", "zstd", 1),
    ("PLAIN", "zstd", 3),
    ("PLAIN", "zstd", 13),
    ("PLAIN", "zstd", 16),
    ("PLAIN", "brotli", 5),
)


def size_floors(store_path: Path) -> None:
    """The store's row groups written as the store writes them (each float column chunk in
    the encoding its data compresses best), then with each encoding, codec and level of
    :data:`SIZE_TRIALS` for all of its float data columns (the other columns zstd 3,
    dictionaries off in the data columns, pages of 64 MiB, as the store writes them): the
    bytes and the writer's seconds of each, on one thread.  A case's output and input lie
    in one page of one column chunk, the output first: which of these finds the output's
    values in the input is the floor of the size."""
    import pyarrow.parquet as pq

    parquet = pq.ParquetFile(store_path)
    tables = [parquet.read_row_group(i) for i in range(parquet.num_row_groups)]
    schema = parquet.schema_arrow
    leaves = [parquet.schema.column(i) for i in range(len(parquet.schema))]
    floats = {
        c.path for c in leaves if c.physical_type in ("FLOAT", "DOUBLE") and c.path[:5] == "data_"
    }
    out = store_path.with_name("size-floor.parquet")
    from onnx_arrow.corpus.options import WriteOptions
    from onnx_arrow.corpus.parquet import DATA_PAGE_SIZE, StoreFile

    start = time.perf_counter()
    with StoreFile(str(out), WriteOptions()) as store:  # as import writes it, one thread
        for table in tables:
            store.append(table)
    got = {"store": [out.stat().st_size, time.perf_counter() - start]}
    for encoding, codec, level in SIZE_TRIALS:
        start = time.perf_counter()
        with pq.ParquetWriter(
            out,
            schema,
            compression={c.path: codec if c.path in floats else "zstd" for c in leaves},
            compression_level={c.path: level if c.path in floats else 3 for c in leaves},
            use_dictionary=[n for n in schema.names if not n.startswith("data_")],
            column_encoding=dict.fromkeys(floats, encoding),
            data_page_size=DATA_PAGE_SIZE,
        ) as writer:
            for table in tables:
                writer.write_table(table, row_group_size=max(table.num_rows, 1))
        got[f"{encoding} {codec} {level}"] = [out.stat().st_size, time.perf_counter() - start]
        out.unlink()
    _report(**got)


# --- reading one case, one large tensor, starting ------------------------------------------------


def case_reads(store_path: Path, src: Path, repeat: int) -> None:
    """Per case: case_arrays (the store open, opened per call, and named by its path per call
    through ``as_store``), values, and numpy_helper on the case's .pb files (the median of
    each)."""
    import gc

    import pyarrow.parquet as pq
    from onnx import TensorProto, numpy_helper

    from onnx_arrow.corpus import Store
    from onnx_arrow.corpus.parts import forget_kept_reads
    from onnx_arrow.corpus.store import as_store

    store = Store(store_path)
    cases = store.cases()
    picked = [cases[i] for i in np.linspace(0, len(cases) - 1, 6).astype(int)]
    best_of = {
        "numpy_helper": 0.0,
        "case_arrays": 0.0,
        "Store(path) per call": 0.0,
        "as_store(path) per call": 0.0,
        "values": 0.0,
        "data column": 0.0,
    }
    parquet = pq.ParquetFile(store_path)
    group_of = {  # the row group holding each case (it may hold others)
        name: i
        for i in range(parquet.num_row_groups)
        for name in set(parquet.read_row_group(i, columns=["test_case"])["test_case"].to_pylist())
    }
    nbytes = 0
    for case in picked:
        pbs = sorted((src / case).rglob("*.pb"))
        nbytes += sum(p.stat().st_size for p in pbs)

        def helper(pbs: list[Path] = pbs) -> Any:
            return [numpy_helper.to_array(TensorProto.FromString(p.read_bytes())) for p in pbs]

        def arrays(case: str = case) -> Any:
            return store.case_arrays(case)

        def reopened(case: str = case) -> Any:
            return Store(store_path).case_arrays(case)

        def by_path(case: str = case) -> Any:
            return as_store(store_path, where="store").case_arrays(case)

        def values(case: str = case) -> Any:
            return [v.to_numpy() for v in store.values(case)]

        expected = helper()
        got = [
            v
            for data_set in arrays()
            for io in ("inputs", "outputs")
            for v in data_set[io].values()
        ]
        if len(got) != len(expected) or not all(
            np.array_equal(a, b) for a, b in zip(got, expected, strict=True)
        ):
            raise RuntimeError(f"case_arrays({case!r}) differs from its .pb files")

        def column(group: int = group_of[case]) -> Any:
            # the floor: the case's row group, its float data column alone, to Arrow
            return parquet.read_row_group(group, columns=["data_float"])

        for label, fn in (
            ("numpy_helper", helper),
            ("case_arrays", arrays),
            ("Store(path) per call", reopened),
            ("as_store(path) per call", by_path),
            ("values", values),
            ("data column", column),
        ):
            times = []
            for _ in range(repeat):
                store._last_read = None  # each time from the file (page cache warm)
                as_store(store_path, where="store")._last_read = None
                forget_kept_reads()  # nor the rows an earlier store decoded
                gc.collect()
                start = time.perf_counter()
                fn()
                times.append(time.perf_counter() - start)
            best_of[label] += statistics.median(times)
    print(json.dumps({"cases": len(picked), "bytes": nbytes, **best_of}))


def start_costs() -> list[tuple[str, float, list[str]]]:
    """Wall of each start (best of 3) and the heavy modules it imports."""
    py = sys.executable
    starts = {
        "import numpy, pyarrow (floor)": [py, "-c", "import numpy, pyarrow"],
        "import onnx, numpy, pyarrow": [py, "-c", "import onnx, numpy, pyarrow"],
        "import onnx_arrow": [py, "-c", "import onnx_arrow"],
        "onnx-arrow --help": [py, "-m", "onnx_arrow", "--help"],
        "onnx-arrow import --bogus (usage error)": [py, "-m", "onnx_arrow", "import", "--bogus"],
    }
    rows = []
    env = {**os.environ, "PYTHONPATH": str(HERE.parent)}
    for label, args in starts.items():
        walls = []
        for _ in range(3):
            start = time.perf_counter()
            subprocess.run(
                args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False
            )
            walls.append(time.perf_counter() - start)
        trace = subprocess.run(
            [py, "-X", "importtime", *args[1:]],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        ).stderr
        loaded = {
            line.rsplit("|", 1)[-1].strip()
            for line in trace.splitlines()
            if line.startswith("import time:")
        }
        rows.append((label, min(walls), [m for m in HEAVY if m in loaded]))
    return rows


def main_job_phases(out: Path) -> None:
    """The README's main job in parts: start, building the default corpus's cases (onnx's
    generation or its cache), writing them with write_store."""
    start = time.perf_counter()
    from onnx_arrow.corpus import default_source, write_store

    imported = time.perf_counter()
    cases = list(default_source())
    built = time.perf_counter()
    write_store(cases, out)
    written = time.perf_counter()
    _report(imports=imported - start, cases=built - imported, write=written - built)


# --- main ----------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--large-gb", type=float, default=0.5, help="size of the large corpus")
    parser.add_argument("--old-node", metavar="PATH", help="an older onnx's node corpus folder")
    parser.add_argument("--jobs", type=int, default=2, help="import and export --jobs measured")
    parser.add_argument(
        "--repeat", type=int, default=3, help="runs of each side, in turns (median, min, max)"
    )
    parser.add_argument(
        "--corpora",
        nargs="*",
        default=["node", "old-node", "large", "relu", *CORPORA],
        choices=["node", "old-node", "large", "relu", *CORPORA],
    )
    parser.add_argument("--keep", metavar="DIR", help="work in DIR and keep it")
    parser.add_argument(
        "--pin", action="store_true", help="run every side but the --jobs ones on one core"
    )
    parser.add_argument(
        "--import-only",
        action="store_true",
        help="only the import sides (tar | zstd -3, onnx-arrow import, naive), wall and CPU "
        "per round; no export, --jobs or the measures after the corpora",
    )
    parser.add_argument(
        "--row-group-cases",
        type=int,
        metavar="N",
        help="with --import-only, also onnx-arrow import --row-group-cases N, in the same turns",
    )
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        run_child(args.child[0], args.child[1:])
        return 0
    for tool in ("tar", "zstd"):
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} is not installed (apt-get install {tool})")
    import onnx
    import pyarrow

    print(
        f"python {sys.version.split()[0]}, onnx {onnx.__version__}, pyarrow {pyarrow.__version__}, "
        f"{os.cpu_count()} CPUs; ratios are onnx-arrow / peer"
    )
    exact = True
    with workdir(args.keep, "bench-throughput-") as work:
        results = {}
        for name in args.corpora:
            if name == "node":
                src = node_corpus(work / "node-corpus")
            elif name == "old-node":
                src = old_node_corpus(args.old_node, work)
            elif name == "relu":
                src = relu_corpus(work / "relu-corpus")
            elif name == "node-twice":
                node = node_corpus(work / "node-corpus")
                src = node_twice_corpus(work / "node-twice-corpus", node)
            elif name == "one-model":
                src = one_model_corpus(work / "one-model-corpus")
            elif name == "cutouts":
                src = cutouts_corpus(work / "cutouts-corpus")
            else:
                src = large_corpus(work / "large-corpus", args.large_gb)
            if args.import_only:
                import_runs(name, src, work, args.repeat, args.pin, args.row_group_cases)
                continue
            results[name] = corpus_runs(name, src, work, args.repeat, args.jobs, args.pin)
            exact &= results[name]["exact"]
        if args.import_only:
            return 0

        if "relu" in results:
            sizes = results["relu"]["sizes"]
            store = work / "out-relu" / "store.parquet"
            got = measured(child("size-floors", str(store)))
            own = got["store"]
            print(
                "\n== the ReLU store rewritten, as the store writes it and with its float data "
                "columns in each encoding, codec and level (one thread)"
            )
            trials = [("the store's own, per row group", "store")] + [
                (f"{encoding:<17} {codec:<6} {level:>2}", f"{encoding} {codec} {level}")
                for encoding, codec, level in SIZE_TRIALS
            ]
            for label, key in trials:
                size, seconds = got[key]
                print(
                    f"  {label:<31}: {size / sizes['tar.zst']:.3f}x tar.zst, "
                    f"{size / sizes['sorted tar.zst']:.3f}x tar --sort=name | zstd -3, "
                    f"writer {seconds / own[1]:.2f}x the store's own"
                )

        if "large" in results:
            large = results["large"]["sides"]
            got = measured(
                child(
                    "floors", str(work / "out-large" / "store.parquet"), str(work / "large-corpus")
                )
            )
            tar, untar = large["tar | zstd -3"]["wall"], large["zstd -d | tar -x"]["wall"]
            print("\n== floors on the large corpus, one core, each part alone (x the peer)")
            for label, seconds, peer, name in (
                ("Parquet writer, the row groups built already", got["write"], tar, "tar | zstd"),
                ("BLAKE2b-128 of every file (import records it)", got["digest"], tar, "tar | zstd"),
                ("reading every row group to Arrow", got["read"], untar, "zstd -d | tar"),
                (
                    "BLAKE2b-128 of every file (export checks it)",
                    got["digest"],
                    untar,
                    "zstd -d | tar",
                ),
            ):
                print(f"  {label:<48} {seconds / peer:>6.2f}x {name}")

            print("\n== one case of the large store (median of each)")
            got = measured(
                child(
                    "case-read",
                    str(work / "out-large" / "store.parquet"),
                    str(work / "large-corpus"),
                    str(max(args.repeat, 3)),
                )
            )
            base = got["numpy_helper"]
            print(
                f"  {got['cases']} cases, {got['bytes'] / 1e6:.1f} MB of .pb: "
                f"numpy_helper {base:.4f} s"
            )
            for key, label in (
                ("case_arrays", "Store.case_arrays(case), the store open"),
                ("Store(path) per call", "Store(path).case_arrays(case)"),
                ("as_store(path) per call", "as_store(path).case_arrays(case)"),
                ("values", "list(Store.values(case))"),
                ("data column", "floor: its data column alone, to Arrow"),
            ):
                print(f"  {label:<40} vs numpy_helper on its .pb files {got[key] / base:>6.2f}x")

        print("\n== read_pb of a 256 MiB float32 tensor (bench_large_tensor.py)")
        sys.path.insert(0, str(HERE))
        import bench_large_tensor as blt

        files = blt.write_files(work, 256 << 20)
        warm = blt.write_files(work, 1 << 20, stem="warm")
        files.update(warm_pb=warm["pb"], warm_raw=warm["raw"])
        runs = {m: blt.run_worker(m, files, max(args.repeat, 3)) for m in blt.METHODS}
        base = runs["fromfile"]
        for m in ("onnx_arrow", "onnx"):
            print(
                f"  {blt.METHODS[m]:<34} time {runs[m]['seconds'] / base['seconds']:>5.2f}x "
                f"np.fromfile, peak extra {runs[m]['peak_bytes'] / files['nbytes']:.2f}x the "
                f"tensor (np.fromfile {base['peak_bytes'] / files['nbytes']:.2f}x)"
            )

        print("\n== start (process wall, best of 3; heavy modules imported)")
        starts = start_costs()
        floor = starts[0][1]
        for label, wall, heavy in starts:
            print(f"  {label:<42} {wall:>6.3f} s {wall / floor:>5.2f}x  {', '.join(heavy) or '-'}")

        print("\n== the README's main job: onnx-arrow import corpus.parquet (default corpus)")
        store = work / "main-job.parquet"
        command = [sys.executable, "-m", "onnx_arrow", "import", str(store)]
        cold = measured(command, pin=False, env={"ONNX_ARROW_CACHE_DIR": "off"})
        store.unlink()
        measured(command, pin=False)  # writes the node-suite cache if it is not there yet
        store.unlink()
        job = measured(command, pin=False)
        store.unlink()
        print(
            f"  node-suite cache off: wall {cold['wall']:.2f} s; on (the cache written "
            f"already): {job['wall']:.2f} s, {job['wall'] / cold['wall']:.2f}x"
        )
        parts = measured(child("mainjob", str(store)), pin=False)
        store.unlink()
        wall = job["wall"]
        rest = wall - parts["imports"] - parts["cases"] - parts["write"]
        print(f"  wall {wall:.2f} s, peak {job['peak_mib']:.0f} MiB; of it:")
        for label, seconds in (
            ("starting and imports", parts["imports"]),
            ("building the cases (onnx, or the cache)", parts["cases"]),
            ("write_store (onnx-arrow's own)", parts["write"]),
            ("the rest: interpreter, the CLI's imports, summary", rest),
        ):
            print(f"    {label:<42} {seconds:>6.2f} s {seconds / wall:>5.0%}")
    return 0 if exact else 1


if __name__ == "__main__":
    sys.exit(main())
