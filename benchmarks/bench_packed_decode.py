"""Benchmark: peak memory of reading a large packed-int32 ``.pb``, against its decoded size.

A ``TensorProto`` whose data is in ``int32_data`` (packed varints, as onnx's writer
stores INT32 and smaller integer types when not using ``raw_data``) is legal at any
size, and its decoded size is 4 bytes a value whatever the bytes a value takes in the
file.  Two files are made, ``--mb`` (100) MB each: small values (one byte a value: the
decoded data is 4x the file) and negative values (ten bytes a value: 0.4x).  Each is
read in a fresh subprocess, after the imports, by

* onnx-arrow: ``onnx_arrow.read_pb(path)`` then ``onnx_arrow.to_numpy``;
* the baseline: ``onnx.load_tensor(path)`` then ``onnx.numpy_helper.to_array``.

The figure is the peak extra resident memory of the call (``VmHWM`` after it, reset with
``/proc/self/clear_refs`` before it, minus ``VmRSS`` before it) as a multiple of the
decoded size; the file's own bytes, which both read whole, are part of it.  Linux only.
The two decoded arrays are checked equal (exit status 1 if not).

Run::

    python benchmarks/bench_packed_decode.py [--mb 100]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

_CHILD = r"""
import json, sys, time
import numpy as np
import onnx
from onnx import numpy_helper
import onnx_arrow

def status(key):
    return [int(l.split()[1]) * 1024 for l in open("/proc/self/status") if l.startswith(key)][0]

side, path = sys.argv[1], sys.argv[2]
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")
before = status("VmRSS")
start = time.perf_counter()
if side == "onnx-arrow":
    values = onnx_arrow.to_numpy(onnx_arrow.read_pb(path))[0]
else:
    values = numpy_helper.to_array(onnx.load_tensor(path))
seconds = time.perf_counter() - start
peak = status("VmHWM") - before
digest = __import__("hashlib").blake2b(values.tobytes(), digest_size=16).hexdigest()
print(json.dumps({"peak": peak, "decoded": values.nbytes, "seconds": seconds, "digest": digest}))
"""


def _write(path: Path, mb: int, negative: bool) -> None:
    import numpy as np
    from onnx import TensorProto

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from onnx_arrow.core._wire import encode_len, encode_varints

    per_value = 10 if negative else 1
    n = mb * 1_000_000 // per_value
    rng = np.random.default_rng(0)
    values = rng.integers(1, 100, n).astype(np.int32)
    payload = encode_varints(-values if negative else values)
    header = TensorProto(data_type=TensorProto.INT32, dims=[n]).SerializeToString()
    path.write_bytes(header + encode_len(5, len(payload)) + payload)


def _measure(side: str, path: Path) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, side, str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[-1] if out.stderr else "failed"}
    return dict(json.loads(out.stdout))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=100)
    args = parser.parse_args()
    status = 0
    print(f"{'file':<26} {'side':<11} {'decoded MB':>10} {'peak MB':>9} {'x decoded':>9} {'s':>7}")
    with tempfile.TemporaryDirectory() as tmp:
        for negative in (False, True):
            name = f"{args.mb} MB, {'negative' if negative else 'small'} values"
            path = Path(tmp) / "input_0.pb"
            _write(path, args.mb, negative)
            results = {side: _measure(side, path) for side in ("baseline", "onnx-arrow")}
            for side, r in results.items():
                if "error" in r:
                    print(f"{name:<26} {side:<11} failed: {r['error']}")
                    continue
                ratio = r["peak"] / r["decoded"]
                print(
                    f"{name:<26} {side:<11} {r['decoded'] / 1e6:>10.0f} {r['peak'] / 1e6:>9.0f} "
                    f"{ratio:>9.2f} {r['seconds']:>7.2f}"
                )
            digests = {r.get("digest") for r in results.values() if "error" not in r}
            if len(digests) > 1:
                print(f"{name}: the two sides decoded different values")
                status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
