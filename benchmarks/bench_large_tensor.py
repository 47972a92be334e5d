"""Benchmark: reading one large float32 tensor ``.pb`` into memory, against ``np.fromfile``.

Three ways to read the same tensor, each in a fresh subprocess so that its peak memory is its
own:

* ``np.fromfile``: the baseline, reading the bare element bytes from a raw file;
* ``onnx.load_tensor`` + ``onnx.numpy_helper.to_array``;
* ``onnx_arrow.read_pb`` + ``onnx_arrow.to_numpy``.

Each subprocess reports the best wall time of ``--repeat`` reads (``time.perf_counter`` around
the read only) and the largest peak of extra resident memory during a read (``VmHWM`` after
resetting it through ``/proc/self/clear_refs``, minus ``VmRSS`` right before the read).  The
``onnx_arrow`` subprocess also checks that the data is 64-byte aligned and bit-identical to the
source, and times a float operation on it against the same operation on ``np.fromfile`` data
(and, for contrast, on a view at the file's odd ``raw_data`` offset).

The tensor's ``raw_data`` is placed at an offset that is not a multiple of 8.  Ratios are taken
within one run, so a noisy shared machine moves both sides of each ratio together.  Imports and
a first call with a 1 MiB tensor come before the measurements in every subprocess; the lasting
memory that first call took is printed on its own line.  Linux only (``/proc/self/status``).

Run::

    python benchmarks/bench_large_tensor.py [--mib 256] [--repeat 3]
"""

from __future__ import annotations

import argparse
import functools
import gc
import hashlib
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from _report import reset_peak, status_kib

from onnx_arrow.core._wire import encode_varint

MEMORY_BAR = 1.5  # peak extra memory below 1.5x the tensor
TIME_BAR = 2.0  # time at most 2x np.fromfile
ALIGNMENT = 64
METHODS = {
    "fromfile": "np.fromfile (baseline)",
    "onnx": "onnx.load_tensor + to_array",
    "onnx_arrow": "onnx_arrow.read_pb + to_numpy",
}


# --- the files ---------------------------------------------------------------------------------


def write_files(folder: Path, nbytes: int, stem: str = "tensor") -> dict[str, Any]:
    """Write ``<stem>.pb`` (raw_data at an offset not a multiple of 8) and ``<stem>.raw``."""
    from onnx import TensorProto

    count = nbytes // 4
    shape = (count // 1024, 1024)
    data = np.random.default_rng(0).standard_normal(count, dtype=np.float32).reshape(shape)
    for name in ("x", "xy", "xyz", "wxyz"):
        # Everything but raw_data, serialized by protobuf; raw_data (field 9) is the highest
        # field number present, so appending it gives what SerializeToString would write.
        head = TensorProto(dims=shape, data_type=TensorProto.FLOAT, name=name).SerializeToString()
        head += b"\x4a" + encode_varint(data.nbytes)  # field 9, wire type 2 (length-delimited)
        if len(head) % 8:
            break
    else:
        raise RuntimeError("no name puts raw_data at an offset that is not a multiple of 8")
    pb = folder / f"{stem}.pb"
    raw = folder / f"{stem}.raw"
    with pb.open("wb") as f:
        f.write(head)
        data.tofile(f)
    data.tofile(raw)
    return {
        "pb": str(pb),
        "raw": str(raw),
        "nbytes": data.nbytes,
        "shape": list(shape),
        "offset": len(head),
        "name": name,
        "digest": _digest(data),
    }


def _digest(a: np.ndarray[Any, Any]) -> str:
    return hashlib.blake2b(np.ascontiguousarray(a).view(np.uint8).data).hexdigest()


# --- measuring, inside a worker subprocess -----------------------------------------------------


def _measure(read: Callable[[], Any], repeat: int) -> tuple[Any, float, float, str]:
    """Best time and largest peak extra memory (bytes) of ``read()`` over ``repeat`` calls."""
    import resource

    best_time = float("inf")
    peak = 0.0
    how = "VmHWM after clear_refs"
    result = None
    for i in range(repeat):
        result = None  # free the previous result before measuring again
        gc.collect()
        resettable = reset_peak()
        before = status_kib("VmRSS")
        start = time.perf_counter()
        result = read()
        elapsed = time.perf_counter() - start
        if resettable:
            high = status_kib("VmHWM")
        else:  # the high-water mark cannot be reset: only the first read measures memory
            how = "ru_maxrss, first read only"
            high = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss if i == 0 else 0
        best_time = min(best_time, elapsed)
        peak = max(peak, (high - before) * 1024.0)
    return result, best_time, peak, how


def _float_op(a: np.ndarray[Any, Any]) -> Any:
    return (a * 2).sum()


def _best_of(fn: Callable[[], Any], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def worker(method: str, files: dict[str, Any], repeat: int) -> dict[str, Any]:
    """Measure one method.

    Imports and the first call (with a 1 MiB tensor) come before any measurement, so the
    figures are those of reading the tensor, not of initialising the libraries; what the
    first call cost is reported on its own.
    """
    import onnx
    import onnx.numpy_helper

    import onnx_arrow

    def reader(pb: str, raw: str) -> Callable[[], Any]:
        if method == "fromfile":
            return lambda: np.fromfile(raw, dtype=np.float32)
        if method == "onnx":
            return lambda: onnx.numpy_helper.to_array(onnx.load_tensor(pb))
        return lambda: onnx_arrow.to_numpy(onnx_arrow.read_pb(pb))

    pandas_at_import = "pandas" in sys.modules  # pyarrow imports it on its first pa.array()
    before = status_kib("VmRSS")
    reader(files["warm_pb"], files["warm_raw"])()
    gc.collect()
    first_call = (status_kib("VmRSS") - before) * 1024.0
    a, seconds, peak, how = _measure(reader(files["pb"], files["raw"]), repeat)
    out: dict[str, Any] = {
        "seconds": seconds,
        "peak_bytes": peak,
        "memory_from": how,
        "first_call_bytes": first_call,
        "pandas_imported": (
            "by the imports"
            if pandas_at_import
            else "by the first call"
            if "pandas" in sys.modules
            else ""
        ),
        "digest": _digest(a),
        "address_mod_64": a.ctypes.data % ALIGNMENT,
    }
    if method == "onnx_arrow":
        arr = onnx_arrow.read_pb(files["pb"])
        address = arr.storage.values.buffers()[1].address
        out["arrow_address_mod_64"] = address % ALIGNMENT
        out["zero_copy"] = bool(onnx_arrow.to_numpy(arr).ctypes.data == address)
        base = np.fromfile(files["raw"], dtype=np.float32)
        offset = files["offset"]
        odd = np.fromfile(files["pb"], dtype=np.uint8)[offset:].view(np.float32)
        op_repeat = max(repeat, 3)
        out["op_seconds"] = {
            what: _best_of(functools.partial(_float_op, data), op_repeat)
            for what, data in (
                ("read_pb data", a),
                ("np.fromfile data", base),
                (f"view at file offset {offset}, numpy aligned={odd.flags.aligned}", odd),
            )
        }
    return out


# --- the driver --------------------------------------------------------------------------------


def run_worker(method: str, files: dict[str, Any], repeat: int) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--worker", method, json.dumps(files), "--repeat", str(repeat)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode:
        sys.stderr.write(proc.stderr)
        raise SystemExit(f"the {method} subprocess failed (exit {proc.returncode})")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mib", type=int, default=256, help="tensor size in MiB (256)")
    parser.add_argument("--repeat", type=int, default=3, help="reads per method; best is kept")
    parser.add_argument("--worker", nargs=2, metavar=("METHOD", "FILES"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        method, files_json = args.worker
        print(json.dumps(worker(method, json.loads(files_json), args.repeat)))
        return 0

    with tempfile.TemporaryDirectory(prefix="bench_large_tensor_") as tmp:
        files = write_files(Path(tmp), args.mib << 20)
        warm = write_files(Path(tmp), 1 << 20, stem="warm")
        files.update(warm_pb=warm["pb"], warm_raw=warm["raw"])
        nbytes = files["nbytes"]
        print(
            f"tensor: float32 {files['shape']}, {nbytes / 2**20:.0f} MiB; name {files['name']!r}; "
            f"raw_data at file offset {files['offset']} (offset % 8 = {files['offset'] % 8}, "
            f"% 64 = {files['offset'] % 64})"
        )
        print(f"python {sys.version.split()[0]}, numpy {np.__version__}, repeat {args.repeat}")
        results = {m: run_worker(m, files, args.repeat) for m in METHODS}

    base = results["fromfile"]["seconds"]
    print()
    print(
        f"{'method':<32} {'time (s)':>9} {'x fromfile':>10} {'peak extra (MiB)':>17} "
        f"{'x tensor':>9} {'data ok':>8} {'addr%64':>8}"
    )
    for method, label in METHODS.items():
        r = results[method]
        print(
            f"{label:<32} {r['seconds']:>9.3f} {r['seconds'] / base:>10.2f} "
            f"{r['peak_bytes'] / 2**20:>17.1f} {r['peak_bytes'] / nbytes:>9.2f} "
            f"{'yes' if r['digest'] == files['digest'] else 'NO':>8} {r['address_mod_64']:>8}"
        )
    print(f"(peak memory from {results['onnx_arrow']['memory_from']})")
    print(
        "excluded above, the first call's lasting cost (1 MiB tensor, after imports): "
        + ", ".join(
            f"{m} {r['first_call_bytes'] / 2**20:.1f} MiB"
            + (f" (pandas imported {r['pandas_imported']})" if r["pandas_imported"] else "")
            for m, r in results.items()
        )
    )

    ours = results["onnx_arrow"]
    print()
    print("float op (a * 2).sum(), best time, vs the same on np.fromfile data:")
    op_base = ours["op_seconds"]["np.fromfile data"]
    for what, seconds in ours["op_seconds"].items():
        print(f"  {what:<46} {seconds:>7.3f} s {seconds / op_base:>6.2f}x")
    print(
        f"read_pb: Arrow values buffer address % 64 = {ours['arrow_address_mod_64']}, "
        f"to_numpy zero-copy: {ours['zero_copy']}"
    )

    time_ratio = ours["seconds"] / base
    memory_ratio = ours["peak_bytes"] / nbytes
    correct = ours["digest"] == files["digest"] and ours["arrow_address_mod_64"] == 0
    passed = memory_ratio < MEMORY_BAR and time_ratio <= TIME_BAR and correct
    print()
    print(
        f"bars for read_pb: memory {memory_ratio:.2f}x < {MEMORY_BAR}x tensor, "
        f"time {time_ratio:.2f}x <= {TIME_BAR}x np.fromfile, data equal and 64-byte aligned: "
        f"{'PASS' if passed else 'FAIL'}"
    )
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
