"""Benchmark: the store's Parquet writer, its float encodings chosen from the data against
each encoding fixed, side by side in one run.

The store file is written by one ``pyarrow.parquet.ParquetWriter``, each float data column
in one encoding, byte stream split or plain, whichever compresses the file's first 8 MiB
of float data smaller (``float_encoding="auto"``, what ``import`` does); ``--float-encoding
BYTE_STREAM_SPLIT`` or ``PLAIN`` fixes one.  An earlier writer encoded each row group on
its own into a Parquet file in memory and appended it with its footer's offsets moved (a
Thrift footer rewrite), each float column chunk in the encoding of its own data; the
commit that added this benchmark measured the two side by side (its ``parts`` and
``single`` sides), and the Parquet writer stayed.

What is timed is ``write_store`` from a folder corpus to the closed store file, in this
process (cases built the same way on every side).  Corpora (each a folder tree on disk):
the node suite of the installed onnx, 60 ReLU cases, a large mixed corpus
(``--large-gb``: noise, smooth waves and ReLU activations in turns) and a corpus of
repeated files (the same model and data set in every case).  Each side runs ``--repeat``
times, the sides in turns; a time is the median, a ratio ``auto`` over the side of the
same round (median, min, max); sizes are the store's, ``auto`` over the smaller of the
two fixed encodings.  ``uptime``'s load is printed before and after: the machine may be
shared.

Run::

    python benchmarks/bench_store_writer.py [--large-gb 0.5] [--repeat 3] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _report import workdir
from bench_throughput import SHAPE, large_corpus, node_corpus, relu_corpus, warm

SIDES = ("auto", "BYTE_STREAM_SPLIT", "PLAIN")


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


def uptime() -> str:
    return subprocess.run(["uptime"], check=False, capture_output=True, text=True).stdout.strip()


def measure(name: str, src: Path, work: Path, repeat: int) -> None:
    from onnx_arrow.corpus import FolderSource
    from onnx_arrow.corpus.options import WriteOptions
    from onnx_arrow.corpus.write import write_store

    warm(src)
    times: dict[str, list[float]] = {side: [] for side in SIDES}
    sizes: dict[str, int] = {}
    for r in range(repeat):
        for side in SIDES:
            out = work / f"{name}-{side}-{r}.parquet"
            os.sync()
            start = time.perf_counter()
            write_store(FolderSource(src), out, options=WriteOptions(float_encoding=side))
            times[side].append(time.perf_counter() - start)
            sizes[side] = out.stat().st_size
            out.unlink()
    best = min(sizes["BYTE_STREAM_SPLIT"], sizes["PLAIN"])
    cells = []
    for side in SIDES[1:]:
        ratios = [a / s for a, s in zip(times["auto"], times[side], strict=True)]
        cells.append(
            f"auto/{side} {statistics.median(ratios):.3f}x ({min(ratios):.3f}-{max(ratios):.3f})"
        )
    print(f"{name:<9} time auto {statistics.median(times['auto']):6.2f} s; " + "; ".join(cells))
    print(
        f"{'':<9} size auto {sizes['auto'] / 2**20:.2f} MiB, BYTE_STREAM_SPLIT "
        f"{sizes['BYTE_STREAM_SPLIT'] / 2**20:.2f} MiB, PLAIN {sizes['PLAIN'] / 2**20:.2f} MiB; "
        f"auto/smaller {sizes['auto'] / best:.3f}x",
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
            measure(name, makers[name](), work, args.repeat)
    print(f"load after: {uptime()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
