"""Benchmark: the store's Parquet writer, two ways, side by side in one run.

* ``parts``: each row group encoded on its own (on the encoding threads, several at once)
  into a one-row-group Parquet file in memory, its float column chunks each in the
  encoding of its own data, and appended to the store file with its footer's offsets
  moved (``StoreFile``, the Thrift footer rewrite);
* ``single``: one ``pyarrow.parquet.ParquetWriter`` per store file, on the one writing
  thread, each float column in one encoding for the whole file, chosen from the data of
  the first row group (pyarrow's writer has no threads of its own to give).

Both build the cases the same way (``write_rows``, one process); what is timed is
``write_store``'s work from a folder corpus to the closed store file, in this process.
Corpora (each a folder tree on disk): the node suite of the installed onnx, 60 ReLU cases,
a large mixed corpus (``--large-gb``: noise, smooth waves and ReLU activations in turns)
and a corpus of repeated files (the same model and data set in every case).  Each side
runs ``--repeat`` times, the sides in turns; a time is the median, a ratio single over parts
of the same round (median, min, max).  The sizes of the store with every float column
in one fixed encoding are printed beside them (each written once): how far either
choice is from the better of the two on each corpus.  ``uptime``'s load is printed
before and after: the machine may be shared.

Run::

    python benchmarks/bench_store_writer.py [--large-gb 0.5] [--repeat 3] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from _report import workdir
from bench_throughput import SHAPE, large_corpus, node_corpus, relu_corpus, warm


def repeated_corpus(root: Path, cases: int = 40) -> Path:
    """``cases`` cases, each the same ReLU model and data set (a float32 input of noise and
    its output), file for file."""
    if root.exists():
        return root
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, list(SHAPE))
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, list(SHAPE))
    model = helper.make_model(
        helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y]),
        opset_imports=[helper.make_opsetid("", 17)],
    ).SerializeToString()
    data = np.random.default_rng(1).standard_normal(SHAPE, dtype=np.float32)
    blobs = {
        name: numpy_helper.from_array(value, name[:1]).SerializeToString()
        for name, value in (("input_0", data), ("output_0", np.maximum(data, 0)))
    }
    for k in range(cases):
        case = root / "repeated" / f"test_repeated_{k:03d}"
        (case / "test_data_set_0").mkdir(parents=True)
        (case / "model.onnx").write_bytes(model)
        for name, blob in blobs.items():
            (case / "test_data_set_0" / f"{name}.pb").write_bytes(blob)
    return root


def write_parts(src: Path, out: Path, options: object) -> None:
    from onnx_arrow.corpus import FolderSource
    from onnx_arrow.corpus.write import write_store

    write_store(FolderSource(src), out, options=options)  # type: ignore[arg-type]


def write_single(src: Path, out: Path, options: object) -> None:
    from onnx_arrow.corpus import FolderSource
    from onnx_arrow.corpus.parquet import SingleWriterStoreFile
    from onnx_arrow.corpus.write import RowGroup, write_rows

    with SingleWriterStoreFile(str(out), options) as writer:  # type: ignore[arg-type]

        def write(group: RowGroup) -> None:
            writer.append(group.table)

        write_rows(FolderSource(src), options, None, 1, write, encode=False)  # type: ignore[arg-type]


SIDES: dict[str, Callable[[Path, Path, object], None]] = {
    "parts": write_parts,
    "single": write_single,
}


def uptime() -> str:
    return subprocess.run(["uptime"], check=False, capture_output=True, text=True).stdout.strip()


def measure(name: str, src: Path, work: Path, repeat: int) -> None:
    from onnx_arrow.corpus.options import WriteOptions

    warm(src)
    times: dict[str, list[float]] = {side: [] for side in SIDES}
    sizes: dict[str, int] = {}
    for r in range(repeat):
        for side, run in SIDES.items():
            out = work / f"{name}-{side}-{r}.parquet"
            os.sync()
            start = time.perf_counter()
            run(src, out, WriteOptions())
            times[side].append(time.perf_counter() - start)
            sizes[side] = out.stat().st_size
            out.unlink()
    fixed = {}
    for encoding in ("BYTE_STREAM_SPLIT", "PLAIN"):
        out = work / f"{name}-{encoding}.parquet"
        write_single(src, out, WriteOptions(float_encoding=encoding))
        fixed[encoding] = out.stat().st_size
        out.unlink()
    ratios = [s / p for s, p in zip(times["single"], times["parts"], strict=True)]
    best = min(fixed.values())
    parts, single = (statistics.median(times[side]) for side in ("parts", "single"))
    print(
        f"{name:<9} time parts {parts:7.2f} s  single {single:7.2f} s  single/parts "
        f"{statistics.median(ratios):.3f}x (min {min(ratios):.3f}, max {max(ratios):.3f})"
    )
    print(
        f"{'':<9} size parts {sizes['parts'] / 2**20:8.2f} MiB  single "
        f"{sizes['single'] / 2**20:8.2f} MiB  single/parts {sizes['single'] / sizes['parts']:.3f}x"
        f"  | all BSS {fixed['BYTE_STREAM_SPLIT'] / 2**20:.2f} MiB, all PLAIN "
        f"{fixed['PLAIN'] / 2**20:.2f} MiB; parts/best {sizes['parts'] / best:.3f}x, "
        f"single/best {sizes['single'] / best:.3f}x",
        flush=True,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--large-gb", type=float, default=0.5)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", help="a folder to work in and keep (corpora are reused)")
    parser.add_argument(
        "--corpora", nargs="+", default=["node", "relu", "large", "repeated"],
        choices=["node", "relu", "large", "repeated"],
    )  # fmt: skip
    args = parser.parse_args(argv)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores; load before: {uptime()}")
    with workdir(args.keep, "bench-store-writer-") as work:
        makers = {
            "node": lambda: node_corpus(work / "node"),
            "relu": lambda: relu_corpus(work / "relu"),
            "large": lambda: large_corpus(work / "large", args.large_gb),
            "repeated": lambda: repeated_corpus(work / "repeated"),
        }
        for name in args.corpora:
            src = makers[name]()
            measure(name, src, work, args.repeat)
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    print(f"load after: {uptime()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
