"""What the benchmarks share: the table of ratios they print, the median and range of
rounds, the peak-memory probes their worker subprocesses read, and their work folder.
Imported by the scripts beside it, never by onnx_arrow."""

from __future__ import annotations

import contextlib
import statistics
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path


@contextlib.contextmanager
def workdir(keep: str | None, prefix: str) -> Iterator[Path]:
    """The folder a benchmark works in: ``keep`` (made if missing, left after), else a
    temporary folder named ``prefix...``, deleted after."""
    if keep is not None:
        Path(keep).mkdir(parents=True, exist_ok=True)
        yield Path(keep)
        return
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        yield Path(tmp)


@dataclass
class Row:
    """One measure: the baseline and onnx-arrow side by side, from the same run."""

    measure: str
    baseline: float
    ours: float
    unit: str  # "s" or "B"
    bar: float | None = None  # ratio must be <= bar (< bar when strict)
    strict: bool = False

    @property
    def ratio(self) -> float:
        return self.ours / self.baseline

    @property
    def passed(self) -> bool | None:
        if self.bar is None:
            return None
        return self.ratio < self.bar if self.strict else self.ratio <= self.bar


def spread(values: list[float], digits: int = 3) -> str:
    """``median [min-max]`` of the rounds' values."""
    return (
        f"{statistics.median(values):.{digits}f} "
        f"[{min(values):.{digits}f}-{max(values):.{digits}f}]"
    )


def _amount(value: float, unit: str) -> str:
    return f"{value:.3f} s" if unit == "s" else f"{value / 2**20:.2f} MiB"


def print_table(rows: list[Row], width: int = 48) -> None:
    """The rows as a table: measure, baseline, onnx-arrow, ratio, bar, PASS or FAIL."""
    print(
        f"{'measure':<{width}} {'baseline':>11} {'onnx-arrow':>11} {'ratio':>8} {'bar':>7} "
        f"{'result':>6}"
    )
    for r in rows:
        bar = "" if r.bar is None else f"{'<' if r.strict else '<='}{r.bar:g}x"
        result = {None: "", True: "PASS", False: "FAIL"}[r.passed]
        print(
            f"{r.measure:<{width}} {_amount(r.baseline, r.unit):>11} "
            f"{_amount(r.ours, r.unit):>11} {r.ratio:>7.2f}x {bar:>7} {result:>6}"
        )


def status_kib(key: str) -> int:
    """A field of /proc/self/status in KiB (VmRSS, VmHWM ...)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"{key} missing from /proc/self/status")


def reset_peak() -> bool:
    """Reset VmHWM to the current RSS; False where the kernel does not allow it."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return False
    return True
