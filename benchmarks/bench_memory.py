"""Benchmark: onnx_arrow.to_arrow / from_arrow against numpy_helper and against one memory copy.

One run measures four things, each against its baseline, and prints the ratios side by side:

1. to Arrow, many small tensors: ``--small`` (50,000) float32 [3, 4] ``TensorProto`` messages
   from seeded random data, named, made twice: with ``numpy_helper.from_array`` (data in
   ``raw_data``) and with ``helper.make_tensor`` (data in ``float_data``, the typed field).
   Baseline: ``numpy_helper.to_array`` on each message, ``np.stack``, then
   ``pa.FixedShapeTensorArray.from_numpy_ndarray``; onnx-arrow: ``to_arrow(messages)``
   (bar: at most 1x);
2. back, many small tensors: baseline the same maker (``numpy_helper.from_array(row, name)``
   or ``helper.make_tensor``) on each row of the stacked ndarray (given for free, names too);
   onnx-arrow ``from_arrow(array)`` on what ``to_arrow(messages)`` made, in each mode
   (bar: at most 1x);
3. one large float32 tensor (``--large-mib``, 256 MiB: shape [64, 1024, 1024]) to Arrow:
   baseline one memory copy of its data (``np.copy`` of its ndarray); onnx-arrow
   ``to_arrow([tensor])`` (bar: at most 2x);
4. the same tensor back: ``from_arrow(array)`` against the same copy (bar: at most 2x).

Times are the median of ``--repeat`` calls of each side (``time.perf_counter``; min and max
printed beside), the two sides of a measure taking turns (baseline, onnx-arrow, baseline,
...) after one untimed call of each, so a noisy shared machine moves both sides of a ratio
together; results are freed between calls, untimed.

For 3 and 4, the peak extra resident memory of one onnx-arrow call is also measured, as a
multiple of the tensor's size (bar: below 1.5x; for scale, the same for one ``np.copy``).
Each is measured in a fresh subprocess, which makes one first call with a 1 MiB tensor (so
imports and first-call setup are not counted), builds its input, resets its high-water mark
(``/proc/self/clear_refs``) and reports ``VmHWM`` after the call minus ``VmRSS`` before it.
``VmHWM`` is the counter ``ru_maxrss`` reads, but reset after the build: a bare ``ru_maxrss``
delta misses the call's peak when building the input peaked higher (a ``TensorProto`` built
from an ndarray holds the data twice for a while), and in a child started by ``subprocess``
it starts at the parent's peak (printed, not used).  Where the kernel refuses the reset, the
call runs in a fork of the subprocess instead, whose ``ru_maxrss`` starts at its resident
size.  Linux only (``/proc/self/status``).

If ``to_arrow`` takes an ``exact`` keyword (``inspect.signature``), 1 and 3 are measured with
``exact=False`` and with ``exact=True``, one row each; otherwise in its default mode only.
All calls into onnx_arrow go through ``candidate_to_arrow`` and ``candidate_from_arrow``.

Once per run, untimed, the round trip is checked for each mode: ``from_arrow(to_arrow(m))``
gives messages whose ``SerializeToString()`` equals the input's for a sample (required for
the exact modes), and whose ndarrays equal the input's bit for bit (all of them); a failed
check makes the exit status 1.  Times are reported against their bars, never asserted.

Run::

    python benchmarks/bench_memory.py [--repeat 5] [--small 50000] [--large-mib 256] [--skip-large]
"""

from __future__ import annotations

import argparse
import functools
import gc
import inspect
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import onnx
import pyarrow as pa
from _report import Row, print_table, reset_peak, status_kib
from onnx import TensorProto, helper, numpy_helper

import onnx_arrow

SMALL_BAR = 1.0  # small tensors, both ways: at most as long as numpy_helper
LARGE_BAR = 2.0  # one large tensor, both ways: at most 2x one memory copy
MEMORY_BAR = 1.5  # peak extra memory below 1.5x the large tensor
SAMPLE = 1000  # messages whose bytes are compared in the round-trip check
SMALL_SHAPE = (3, 4)


# --- the calls into onnx_arrow: adapt these when its API changes ---------------------------------


def to_arrow_modes() -> dict[str, dict[str, Any]]:
    """The modes of ``to_arrow`` to measure: ``{label: keyword arguments}``.

    With no ``exact`` keyword, the bare call only (the default mode, exact as of writing);
    with one, ``exact=False`` and ``exact=True``, the default marked.
    """
    exact = inspect.signature(onnx_arrow.to_arrow).parameters.get("exact")
    if exact is None:
        return {"default": {}}
    return {
        f"exact={value}" + (", default" if value is exact.default else ""): {"exact": value}
        for value in (False, True)
    }


def mode_is_exact(mode: dict[str, Any]) -> bool:
    """Whether ``from_arrow(to_arrow(m, **mode))`` must give ``m`` back byte for byte."""
    return bool(mode.get("exact", True))


def candidate_to_arrow(messages: Sequence[TensorProto], **mode: Any) -> Any:
    # to_arrow in its exact/default mode: `mode` is empty (the bare call, the default, which
    # is exact) unless to_arrow has an `exact` keyword; then it is {"exact": False} or
    # {"exact": True}, one row each (see to_arrow_modes).
    return onnx_arrow.to_arrow(messages, **mode)


def candidate_from_arrow(array: Any) -> list[Any]:
    return onnx_arrow.from_arrow(array)


# --- the inputs and the baselines ----------------------------------------------------------------


#: How the small tensors hold their data, and the function a user makes each with: in
#: ``raw_data`` (``numpy_helper.from_array``) or in the typed field ``float_data``
#: (``helper.make_tensor``, as onnx's helper stores a list or an ndarray by default).
MAKERS: dict[str, Callable[[np.ndarray[Any, Any], str], TensorProto]] = {
    "raw_data": numpy_helper.from_array,
    "float_data": lambda row, name: helper.make_tensor(name, TensorProto.FLOAT, row.shape, row),
}


def make_small(
    count: int, form: str = "raw_data"
) -> tuple[np.ndarray[Any, Any], list[str], list[TensorProto]]:
    """``count`` float32 [3, 4] tensors: the stacked data, their names, the messages, the
    data in the field ``form`` names."""
    data = np.random.default_rng(0).standard_normal((count, *SMALL_SHAPE), dtype=np.float32)
    names = [f"t{i}" for i in range(count)]
    make = MAKERS[form]
    messages = [make(row, name) for row, name in zip(data, names, strict=True)]
    return data, names, messages


def large_shape(mib: int) -> tuple[int, int, int]:
    """A float32 shape of ``mib`` MiB: [64, 1024, 1024] for 256."""
    return (mib // 4, 1024, 1024) if mib % 4 == 0 else (mib, 256, 1024)


def make_large(mib: int) -> tuple[np.ndarray[Any, Any], TensorProto]:
    """One float32 tensor of ``mib`` MiB, seeded: its ndarray and its message."""
    data = np.random.default_rng(1).standard_normal(large_shape(mib), dtype=np.float32)
    return data, numpy_helper.from_array(data, "large")


def baseline_to_arrow(messages: Sequence[TensorProto]) -> pa.ExtensionArray:
    stacked = np.stack([numpy_helper.to_array(m) for m in messages])
    return pa.FixedShapeTensorArray.from_numpy_ndarray(stacked)


def baseline_from_arrow(
    stacked: np.ndarray[Any, Any], names: list[str], form: str = "raw_data"
) -> list[TensorProto]:
    make = MAKERS[form]
    return [make(row, name) for row, name in zip(stacked, names, strict=True)]


# --- checking the round trip (untimed) -----------------------------------------------------------


def _same_bits(a: np.ndarray[Any, Any], b: np.ndarray[Any, Any]) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return bool(
        np.array_equal(
            np.ascontiguousarray(a).view(np.uint8), np.ascontiguousarray(b).view(np.uint8)
        )
    )


def check_round_trip(
    what: str,
    messages: list[TensorProto],
    expected: np.ndarray[Any, Any],
    label: str,
    mode: dict[str, Any],
) -> bool:
    """Check ``from_arrow(to_arrow(messages))`` in one mode and print a 'checked' line.

    ``expected`` holds the messages' values, one row per message.
    """
    back = candidate_from_arrow(candidate_to_arrow(messages, **mode))
    count = len(back) == len(messages)
    picks = range(0, len(messages), max(1, len(messages) // SAMPLE)) if count else range(0)
    same = sum(back[i].SerializeToString() == messages[i].SerializeToString() for i in picks)
    values = count and _same_bits(np.stack([numpy_helper.to_array(m) for m in back]), expected)
    exact = mode_is_exact(mode)
    passed = count and values and (same == len(picks) or not exact)
    print(
        f"checked {what} ({label}): {len(back)} messages back from {len(messages)}; "
        f"SerializeToString equal for {same} of {len(picks)} sampled "
        f"({'required' if exact else 'not required, not exact'}); ndarray values equal bit "
        f"for bit: {'yes' if values else 'NO'} -> {'ok' if passed else 'FAILED'}"
    )
    return passed


# --- timing --------------------------------------------------------------------------------------


def median_of_pair(
    baseline: Callable[[], Any], candidate: Callable[[], Any], repeat: int
) -> tuple[float, float]:
    """Median wall times of ``baseline()`` and ``candidate()``, called in turns (their min
    and max printed).

    One untimed round of both comes first; each result is freed, untimed, before the next
    call, so no call pays for the previous one's memory.
    """
    times: list[list[float]] = [[], []]
    for round_ in range(repeat + 1):
        for side, fn in enumerate((baseline, candidate)):
            gc.collect()
            start = time.perf_counter()
            result = fn()
            elapsed = time.perf_counter() - start
            del result
            if round_:
                times[side].append(elapsed)
    spread = ", ".join(
        f"{who} {statistics.median(t):.3f} [{min(t):.3f}-{max(t):.3f}] s"
        for who, t in zip(("baseline", "onnx-arrow"), times, strict=True)
    )
    print(f"  {repeat} rounds in turns, median [min-max]: {spread}")
    return statistics.median(times[0]), statistics.median(times[1])


# --- peak memory, inside a worker subprocess -----------------------------------------------------


def _maxrss_bytes() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024.0  # KiB on Linux


def _peak_in_fork(fn: Callable[[], Any]) -> float:
    """Peak extra memory of ``fn()`` run in a fork, whose ru_maxrss starts at its RSS."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        status = 1
        try:
            os.close(read)
            before = _maxrss_bytes()
            fn()
            os.write(write, str(_maxrss_bytes() - before).encode())
            status = 0
        finally:
            os._exit(status)
    os.close(write)
    with os.fdopen(read) as f:
        text = f.read()
    _, status = os.waitpid(pid, 0)
    if status:
        raise RuntimeError(f"the measuring fork failed (status {status})")
    return float(text)


def peak_extra(fn: Callable[[], Any]) -> dict[str, Any]:
    """Peak extra resident memory (bytes) of one ``fn()``, and how it was measured."""
    gc.collect()
    maxrss_before = _maxrss_bytes()
    if not reset_peak():
        return {"peak": _peak_in_fork(fn), "how": "ru_maxrss of a fork", "maxrss_delta": None}
    before = status_kib("VmRSS")
    result = fn()
    peak = (status_kib("VmHWM") - before) * 1024.0
    maxrss_delta = _maxrss_bytes() - maxrss_before
    del result
    return {
        "peak": peak,
        "how": "VmHWM after clear_refs",
        "maxrss_delta": maxrss_delta,
        "maxrss": maxrss_before,
    }


def worker(kind: str, mib: int, mode: dict[str, Any]) -> dict[str, Any]:
    """Peak memory of one call: ``copy`` (np.copy), ``to_arrow`` (in ``mode``), ``from_arrow``.

    A first call with a 1 MiB tensor comes first; its lasting memory is part of the baseline.
    """

    def prepare(size: int) -> Any:
        data, tensor = make_large(size)
        if kind == "copy":
            return data
        del data
        if kind == "to_arrow":
            return [tensor]
        return candidate_to_arrow([tensor])  # from_arrow's input, as to_arrow(messages) makes

    call: Callable[[Any], Any] = {
        "copy": np.copy,
        "to_arrow": functools.partial(candidate_to_arrow, **mode),
        "from_arrow": candidate_from_arrow,
    }[kind]
    call(prepare(1))
    value = prepare(mib)
    return peak_extra(functools.partial(call, value))


def run_worker(kind: str, mib: int, mode: dict[str, Any] | None = None) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--worker", kind, "--large-mib", str(mib)]
    cmd += ["--mode", json.dumps(mode or {})]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode:
        sys.stderr.write(proc.stderr)
        raise SystemExit(f"the {kind} memory subprocess failed (exit {proc.returncode})")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


# --- the report ----------------------------------------------------------------------------------


# --- the measures --------------------------------------------------------------------------------


def run_small(count: int, repeat: int, rows: list[Row]) -> bool:
    """Measures 1 and 2, for each form of the small tensors; returns whether the round-trip
    checks passed."""
    passed = True
    for form in MAKERS:
        passed = _run_small_form(count, repeat, rows, form) and passed
        gc.collect()
    return passed


def _run_small_form(count: int, repeat: int, rows: list[Row], form: str) -> bool:
    print(f"\n[{count:,} small float32 {list(SMALL_SHAPE)} tensors, data in {form}]")
    start = time.perf_counter()
    data, names, messages = make_small(count, form)
    print(f"made in {time.perf_counter() - start:.2f} s")
    modes = to_arrow_modes()
    passed = True
    for label, mode in modes.items():  # every mode checked and printed, even after a failure
        passed = check_round_trip(f"small, {form}", messages, data, label, mode) and passed

    for label, mode in modes.items():
        t_base, t_ours = median_of_pair(
            functools.partial(baseline_to_arrow, messages),
            functools.partial(candidate_to_arrow, messages, **mode),
            repeat,
        )
        print(
            f"to Arrow ({label}): numpy_helper + np.stack + FixedShapeTensorArray {t_base:.3f} s, "
            f"to_arrow {t_ours:.3f} s ({t_ours / count * 1e6:.2f} us per message)"
        )
        rows.append(
            Row(f"1. to Arrow, {count:,} small, {form} ({label})", t_base, t_ours, "s", SMALL_BAR)
        )

    made_with = "numpy_helper.from_array" if form == "raw_data" else "helper.make_tensor"
    for label, mode in modes.items():
        array = candidate_to_arrow(messages, **mode)  # from_arrow's input
        t_base, t_ours = median_of_pair(
            functools.partial(baseline_from_arrow, data, names, form),
            functools.partial(candidate_from_arrow, array),
            repeat,
        )
        print(
            f"back ({label}): {made_with} per row {t_base:.3f} s, from_arrow {t_ours:.3f} s "
            f"({t_ours / count * 1e6:.2f} us per message)"
        )
        rows.append(
            Row(f"2. back, {count:,} small, {form} ({label})", t_base, t_ours, "s", SMALL_BAR)
        )
    return passed


def run_large(mib: int, repeat: int, rows: list[Row]) -> bool:
    """Measures 3 and 4, with peak memory; returns whether the round-trip checks passed."""
    shape = list(large_shape(mib))
    print(f"\n[one float32 {shape} tensor, {mib} MiB]")
    start = time.perf_counter()
    data, tensor = make_large(mib)
    nbytes = float(data.nbytes)
    print(f"made with numpy_helper.from_array in {time.perf_counter() - start:.2f} s")
    modes = to_arrow_modes()
    passed = True
    for label, mode in modes.items():
        passed = check_round_trip("large", [tensor], data[np.newaxis], label, mode) and passed
    copy = functools.partial(np.copy, data)
    memory: dict[str, dict[str, Any]] = {}

    for label, mode in modes.items():
        t_base, t_ours = median_of_pair(
            copy, functools.partial(candidate_to_arrow, [tensor], **mode), repeat
        )
        memory[f"to_arrow ({label})"] = run_worker("to_arrow", mib, mode)
        print(
            f"to Arrow ({label}): np.copy {t_base:.3f} s, to_arrow {t_ours:.3f} s "
            f"({nbytes / t_ours / 2**30:.2f} GiB/s); peak extra memory "
            f"{memory[f'to_arrow ({label})']['peak'] / nbytes:.2f}x the tensor"
        )
        rows.append(
            Row(f"3. to Arrow, one {mib} MiB tensor ({label})", t_base, t_ours, "s", LARGE_BAR)
        )

    # context: protobuf hands raw_data out only as a new bytes object, one copy made with
    # Python's allocator (numpy's own copy gets huge pages): the floor of any reader of the
    # message in memory, and of any writer too (a TensorProto takes bytes only, and copies)
    t_base, t_floor = median_of_pair(copy, lambda: tensor.raw_data, repeat)
    print(f"floor: np.copy {t_base:.3f} s, reading message.raw_data once {t_floor:.3f} s")
    rows.append(Row("   context: message.raw_data read once", t_base, t_floor, "s"))

    array = candidate_to_arrow([tensor])  # the bare call: from_arrow's input
    t_base, t_ours = median_of_pair(copy, functools.partial(candidate_from_arrow, array), repeat)
    memory["from_arrow"] = run_worker("from_arrow", mib)
    print(
        f"back: np.copy {t_base:.3f} s, from_arrow {t_ours:.3f} s "
        f"({nbytes / t_ours / 2**30:.2f} GiB/s); peak extra memory "
        f"{memory['from_arrow']['peak'] / nbytes:.2f}x the tensor"
    )
    rows.append(Row(f"4. back, one {mib} MiB tensor", t_base, t_ours, "s", LARGE_BAR))
    # the floor of any writer: a TensorProto takes raw_data as bytes only (not a memoryview
    # or bytearray) and copies it into its own memory, so the data is copied twice, to
    # bytes and into the message, whatever makes it
    t_base, t_floor = median_of_pair(
        copy, lambda: TensorProto(raw_data=data.tobytes(), dims=data.shape), repeat
    )
    print(f"floor: np.copy {t_base:.3f} s, TensorProto(raw_data=ndarray.tobytes()) {t_floor:.3f} s")
    rows.append(Row("   floor: TensorProto(raw_data=ndarray.tobytes())", t_base, t_floor, "s"))

    memory["np.copy"] = run_worker("copy", mib)
    for what, m in memory.items():
        bar = None if what == "np.copy" else MEMORY_BAR
        label = f"peak extra memory / tensor: {what}" + (" (for scale)" if bar is None else "")
        rows.append(Row(label, nbytes, m["peak"], "B", bar, strict=True))
    hows = sorted({m["how"] for m in memory.values()})
    print(f"peak memory from {', '.join(hows)}, in a fresh subprocess per call")
    naive = [(w, m) for w, m in memory.items() if m["maxrss_delta"] is not None]
    if naive:
        print(
            "not used: the bare ru_maxrss delta of the same calls, "
            + ", ".join(f"{w} {m['maxrss_delta'] / 2**20:.1f} MiB" for w, m in naive)
            + f" (ru_maxrss was already {naive[0][1]['maxrss'] / 2**20:.0f} MiB before the call)"
        )
    return passed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--repeat", type=int, default=5, help="calls per side; the median is kept (5)"
    )
    parser.add_argument("--small", type=int, default=50_000, help="small tensors (50000)")
    parser.add_argument("--large-mib", type=int, default=256, help="large tensor in MiB (256)")
    parser.add_argument("--skip-large", action="store_true", help="skip measures 3 and 4")
    parser.add_argument(
        "--worker", choices=("copy", "to_arrow", "from_arrow"), help=argparse.SUPPRESS
    )
    parser.add_argument("--mode", default="{}", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, args.large_mib, json.loads(args.mode))))
        return 0
    if args.small < 1 or args.large_mib < 1:
        parser.error("--small and --large-mib must be at least 1")
    repeat = max(args.repeat, 1)

    print(
        f"python {platform.python_version()}, onnx {onnx.__version__}, pyarrow {pa.__version__}, "
        f"numpy {np.__version__}, {os.cpu_count()} CPUs; median of {repeat} calls per side, the "
        "two sides of a measure in turns"
    )
    print(f"onnx_arrow {onnx_arrow.__version__} from {os.path.dirname(onnx_arrow.__file__)}")
    print(
        f"to_arrow{inspect.signature(onnx_arrow.to_arrow)}: measured in "
        + ", ".join(to_arrow_modes())
    )
    rows: list[Row] = []
    passed = run_small(args.small, repeat, rows)
    gc.collect()
    if not args.skip_large:
        passed = run_large(args.large_mib, repeat, rows) and passed

    print()
    print_table(rows, width=60)
    bars = [r for r in rows if r.bar is not None]
    print()
    print(f"bars: {sum(bool(r.passed) for r in bars)} of {len(bars)} met")
    print(f"round-trip checks: {'all passed' if passed else 'FAILED'}")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
