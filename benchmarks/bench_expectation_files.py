"""Reading onnxruntime-style filters files: the reader of a base commit (``git show``) against
this tree's, on files of 1,000, 2,000 and 12,000 entries made from the real filters file's
entries (numbered apart, one run of one list under a comment block).

Each round reads the file with both, in turns; the table gives the medians.  The base
reader walked back over an entry's run from each entry, so its time grows with the square
of the entries where this one's grows with the entries (measured, load 7 on two cores:
1.5 s, 8.0 s and 294 s against 0.08 s, 0.19 s and 0.73 s).

Usage::

    python benchmarks/bench_expectation_files.py [--base 73f3d93] [--rounds 3]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

from _report import Row, print_table

from onnx_arrow.compare import expectation_files

ROOT = Path(__file__).resolve().parents[1]
FILTERS = ROOT / "tests" / "data" / "onnxruntime" / "onnx_backend_test_series_filters.jsonc"


def _base_reader(base: str, folder: Path) -> ModuleType:
    """The expectation-file reader of commit ``base``, imported under a name of its own."""
    source = subprocess.run(
        ["git", "show", f"{base}:onnx_arrow/compare/expectation_files.py"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout
    (folder / "base_reader.py").write_text(source)
    spec = importlib.util.spec_from_file_location("base_reader", folder / "base_reader.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["base_reader"] = module
    spec.loader.exec_module(module)
    return module


def _filters(path: Path, n: int) -> None:
    real = [
        line.split("//")[0].strip().rstrip(",")
        for line in FILTERS.read_text().splitlines()
        if line.strip()[:2] == '"^'
    ]
    entries = [f'{real[i % len(real)][:-1]}_{i}"' for i in range(n)]
    path.write_text(
        '{\n    // what fails\n    "current_failing_tests": [\n        '
        + ",\n        ".join(entries)
        + "\n    ]\n}\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default="73f3d93", help="the commit whose reader is the baseline")
    parser.add_argument("--rounds", type=int, default=3, help="rounds (12,000 entries: one)")
    args = parser.parse_args()
    print("uptime:", os.popen("uptime").read().strip())
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-expectation-files-") as tmp:
        folder = Path(tmp)
        base = _base_reader(args.base, folder)
        for n in (1000, 2000, 12000):
            path = folder / f"filters-{n}.jsonc"
            _filters(path, n)
            times: dict[str, list[float]] = {"base": [], "ours": []}
            for _ in range(args.rounds if n < 10_000 else 1):
                for side, module in (("base", base), ("ours", expectation_files)):
                    start = time.perf_counter()
                    found = module.read_patterns(path)
                    times[side].append(time.perf_counter() - start)
                    assert len(found.skip) == n + 1
            kb = path.stat().st_size // 1000
            rows.append(
                Row(
                    f"read a filters file of {n} entries ({kb} KB)",
                    statistics.median(times["base"]),
                    statistics.median(times["ours"]),
                    "s",
                )
            )
    print_table(rows)


if __name__ == "__main__":
    main()
