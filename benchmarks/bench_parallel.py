"""Benchmark: compare over processes, Dask and Ray; engines' read tasks; dataset stores.

One run measures, each against its baseline, and prints the figures side by side:

1. ``compare`` of the node suite the installed onnx builds (onnx's reference evaluator),
   serial (the baseline) against ``--jobs 2``, Dask and Ray (2 workers each), each in a
   fresh subprocess.  The engine is started, and warmed by a compare of one case (the
   workers' imports), before the call is timed; that start-up is printed apart as
   "start".  The processes of ``--jobs`` are started by the call itself, timed.  Printed:
   wall time of the call; the CPU seconds the machine spent during it (``/proc/stat``:
   every process, Ray's workers included, which are no descendants of the run; anything
   else running counts too); and, for scale, the CPU of the run's process tree as
   ``os.wait4`` accounts it (the descendants it waited for).  Each report is checked
   against the serial one (random operators excepted); a difference makes the exit
   status 1.
2. Read tasks each engine makes of the default corpus as a one-file store (the baseline)
   and as a dataset store (``--partition-by kind --part-cases 500 --row-group-cases 64``):
   Dask ``read_parquet(...).npartitions`` (default, and ``split_row_groups=True``), Ray
   ``read_parquet(...).materialize().num_blocks()``, Spark ``rdd.getNumPartitions()``
   (where a Java runtime is found).
3. Import and export of a synthetic corpus made here, ``--sizes`` GB (0.5 and 2): cases of
   one float32 [1, 3, 224, 224] input and output (seeded noise, and smooth structured data:
   ramps and waves, alternating), as a dataset store (``--part-bytes 256M``) against the
   one-file store of the same corpus, each an ``onnx-arrow`` command (``cli.main``) in a
   fresh subprocess, timed around the call: MB/s of source bytes, and the peak resident
   memory of the process (``VmHWM``, reset before the call: a child's ``ru_maxrss`` starts
   at its parent's peak).  The export is checked byte for byte against the source.

Run::

    python benchmarks/bench_parallel.py [--sizes 0.5 2] [--skip-engines] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from _report import workdir

#: The compare run of one configuration, in a fresh interpreter: the engine is started
#: first (a local Dask cluster, a local Ray), then the call is timed.
_COMPARE = """
import json, sys, time

def busy():
    # CPU seconds the machine spent, every process (Ray's workers are no children of ours)
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    return (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")

import os
start = time.perf_counter()
from onnx_arrow.compare import compare
store, engine, jobs, out = sys.argv[1], sys.argv[2] or None, int(sys.argv[3]), sys.argv[4]
if engine == "dask":
    import distributed
    cluster = distributed.LocalCluster(
        n_workers=jobs, threads_per_worker=1, dashboard_address=None
    )
    client = distributed.Client(cluster)
elif engine == "ray":
    import ray
    ray.init(num_cpus=jobs, include_dashboard=False, log_to_driver=False)
compare(store, jobs=jobs, engine=engine, cases=["node/test_abs"])  # workers warm: imports
ready, before = time.perf_counter(), busy()
df = compare(store, jobs=jobs, engine=engine).to_pandas()
done, after = time.perf_counter(), busy()
df.to_pickle(out)
print(json.dumps({"start": ready - start, "wall": done - ready, "cpu": after - before,
                  "rows": len(df)}))
"""

#: An onnx-arrow command in this interpreter, its peak resident memory measured from a
#: reset high-water mark (a child's ru_maxrss starts at its parent's peak).
_CLI = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
from _report import reset_peak, status_kib
from onnx_arrow.cli import main
reset = reset_peak()
start = time.perf_counter()
code = main(sys.argv[2:])
wall = time.perf_counter() - start
print(json.dumps({"code": code, "wall": wall, "peak_kib": status_kib("VmHWM"), "reset": reset}))
"""

_RANDOM = {"Bernoulli", "RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike"}


def run_measured(args: list[str], env: dict[str, str] | None = None) -> tuple[str, Any]:
    """Run a command; its stdout and the rusage of its process tree (``os.wait4``)."""
    with tempfile.TemporaryFile() as out:
        process = subprocess.Popen(args, stdout=out, stderr=subprocess.DEVNULL, env=env)
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode()
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(args[:4])} ... exited {process.returncode}: {text[-500:]}")
    return text, usage


def compare_runs(store: Path, work: Path, engines: bool) -> tuple[list[str], bool]:
    import pandas as pd

    modes = [("serial", "", 1), ("--jobs 2", "", 2)]
    if engines:
        modes += [("dask, 2 workers", "dask", 2), ("ray, 2 CPUs", "ray", 2)]
    lines, same, serial = [], True, None
    base: dict[str, float] = {}
    for label, engine, jobs in modes:
        out = work / f"report-{jobs}-{engine or 'local'}.pkl"
        text, usage = run_measured(
            [sys.executable, "-c", _COMPARE, str(store), engine, str(jobs), str(out)]
        )
        got = json.loads(text.strip().splitlines()[-1])
        cpu = got["cpu"]
        tree = usage.ru_utime + usage.ru_stime
        df = pd.read_pickle(out)
        keep = [not (set(ops) & _RANDOM) for ops in df["op_types"]]
        df = df[keep].reset_index(drop=True)
        if serial is None:
            serial, base = df, {"wall": got["wall"], "cpu": cpu}
            verdict = "baseline"
        else:
            equal = df.equals(serial)
            same &= equal
            verdict = "same report" if equal else "REPORT DIFFERS"
        lines.append(
            f"{label:<18} {got['wall']:>7.2f} s {got['wall'] / base['wall']:>6.2f}x   "
            f"{cpu:>7.2f} s {cpu / base['cpu']:>6.2f}x   tree {tree:>6.2f} s   "
            f"start {got['start']:>5.2f} s   {got['rows']} rows, {verdict}"
        )
    return lines, same


_READ_TASKS = """
import json, sys, warnings
warnings.simplefilter("ignore")
path, engine = sys.argv[1], sys.argv[2]
if engine == "dask":
    import dask.dataframe as dd
    default = dd.read_parquet(path).npartitions
    split = dd.read_parquet(path, split_row_groups=True).npartitions
    print(json.dumps({"default": default, "split_row_groups": split}))
elif engine == "ray":
    import ray
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    print(json.dumps({"blocks": ray.data.read_parquet(path).materialize().num_blocks()}))
    ray.shutdown()
else:
    from pyspark.sql import SparkSession
    spark = SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
    spark = spark.getOrCreate()
    reader = spark.read.option("recursiveFileLookup", "true")
    print(json.dumps({"partitions": reader.parquet(path).rdd.getNumPartitions()}))
    spark.stop()
"""


def read_tasks(one: Path, dataset: Path, engines: bool) -> list[str]:
    names = ["dask"] + (["ray"] if engines else []) + (["spark"] if shutil.which("java") else [])
    lines = []
    for engine in names:
        got = {}
        for label, path in (("one file", one), ("dataset", dataset)):
            text, _ = run_measured([sys.executable, "-c", _READ_TASKS, str(path), engine])
            got[label] = json.loads(text.strip().splitlines()[-1])
        for key in got["one file"]:
            lines.append(
                f"{engine + ' ' + key:<24} {got['one file'][key]:>8} {got['dataset'][key]:>9}"
            )
    return lines


def synthetic_corpus(root: Path, gigabytes: float) -> int:
    """Cases of one float32 [1, 3, 224, 224] input and output until ``gigabytes``; bytes."""
    from onnx import TensorProto, helper, numpy_helper, save_model

    shape = (1, 3, 224, 224)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, list(shape))
    model = helper.make_model(
        helper.make_graph([helper.make_node("Neg", ["x"], ["y"])], "g", [x], [y]),
        opset_imports=[helper.make_opsetid("", 17)],
    )
    rng = np.random.default_rng(0)
    grid = np.linspace(0.0, 1.0, shape[-1], dtype=np.float32)
    total, k = 0, 0
    while total < gigabytes * 1e9:
        case = root / "synthetic" / f"test_case_{k:05d}"
        (case / "test_data_set_0").mkdir(parents=True)
        save_model(model, case / "model.onnx")
        if k % 2:
            data = rng.standard_normal(shape, dtype=np.float32)
        else:  # smooth: ramps and waves, different in every case
            waves = np.sin(grid[None, :] * (k % 17 + 1) * 6.28)
            data = (grid[:, None] * (k % 5) + waves).astype(np.float32)[None, None].repeat(3, 1)
        for name, value in (("input_0", data), ("output_0", -data)):
            blob = numpy_helper.from_array(value, name[:1]).SerializeToString()
            (case / "test_data_set_0" / f"{name}.pb").write_bytes(blob)
            total += len(blob)
        total += (case / "model.onnx").stat().st_size
        k += 1
    return total


def tree_equal(a: Path, b: Path) -> bool:
    files_a = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    return files_a == files_b and all((a / p).read_bytes() == (b / p).read_bytes() for p in files_a)


def cli_measured(args: list[str]) -> dict[str, Any]:
    """An onnx-arrow command run by :data:`_CLI`: wall seconds of the call, peak KiB."""
    here = str(Path(__file__).resolve().parent)
    text, _ = run_measured([sys.executable, "-c", _CLI, here, *args])
    got: dict[str, Any] = json.loads(text.strip().splitlines()[-1])
    if got["code"] != 0:
        raise RuntimeError(f"onnx-arrow {' '.join(args)} exited {got['code']}")
    return got


def store_runs(work: Path, sizes: list[float]) -> tuple[list[str], bool]:
    lines, exact = [], True
    for gb in sizes:
        src = work / f"synthetic-{gb:g}"
        source_bytes = synthetic_corpus(src, gb)
        mb = source_bytes / 1e6
        lines.append(f"{gb:g} GB asked, {mb:.0f} MB of files")
        for label, out, flags in (
            ("one file", work / f"one-{gb:g}.parquet", []),
            ("dataset", work / f"dataset-{gb:g}", ["--part-bytes", "256M"]),
        ):
            if out.is_dir():
                shutil.rmtree(out)
            out.unlink(missing_ok=True)
            imported = cli_measured(["import", *flags, str(src), str(out)])
            dest = work / f"export-{label.replace(' ', '-')}-{gb:g}"
            exported = cli_measured(["export", str(out), str(dest)])
            same = tree_equal(src, dest)
            exact &= same
            parts = [out] if out.is_file() else sorted(out.rglob("*.parquet"))
            size = sum(p.stat().st_size for p in parts)
            lines.append(
                f"  {label:<9} {mb / imported['wall']:>8.1f} MB/s "
                f"{imported['peak_kib'] / 1024:>6.0f} MiB {mb / exported['wall']:>9.1f} MB/s "
                f"{exported['peak_kib'] / 1024:>6.0f} MiB  {len(parts)} parts, "
                f"{size / 1e6:.1f} MB  {'byte for byte' if same else 'EXPORT DIFFERS'}"
            )
            shutil.rmtree(dest)
        shutil.rmtree(src)
    return lines, exact


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=float, nargs="*", default=[0.5, 2.0])
    parser.add_argument("--skip-engines", action="store_true", help="no Dask cluster, no Ray")
    parser.add_argument("--keep", metavar="DIR", help="work in DIR and keep it")
    args = parser.parse_args(argv)
    from onnx_arrow.corpus import NodeSuiteSource, default_source, write_dataset, write_store
    from onnx_arrow.corpus.options import WriteOptions

    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs")
    ok = True
    with workdir(args.keep, "bench-parallel-") as work:
        node = work / "node"
        if not node.exists():
            write_dataset(
                NodeSuiteSource(), node, part_cases=500, options=WriteOptions(row_group_cases=64)
            )
        print("\ncompare of the node suite, reference evaluator: wall and CPU against serial")
        lines, same = compare_runs(node, work, not args.skip_engines)
        ok &= same
        print("\n".join(lines))

        one, dataset = work / "default.parquet", work / "default"
        if not one.exists():
            write_store(default_source(), one)
            write_dataset(
                default_source(),
                dataset,
                part_cases=500,
                by_kind=True,
                options=WriteOptions(row_group_cases=64),
            )
        print("\nread tasks of the default corpus        one file   dataset")
        print("\n".join(read_tasks(one, dataset, not args.skip_engines)))

        print("\nimport and export, synthetic corpus (MB/s of source bytes, peak RSS)")
        print("  store          import     peak       export     peak")
        lines, exact = store_runs(work, args.sizes)
        ok &= exact
        print("\n".join(lines))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
