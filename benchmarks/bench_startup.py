"""Start-up as a user meets it: ``onnx-arrow --version`` against ``python -c "import
pyarrow"``, and ``onnx-arrow --help`` against a bare argparse program, each a fresh
process, in turns, medians and ranges of the rounds printed side by side.

    python benchmarks/bench_startup.py [--rounds 15] [--tree SRC ...]

``--tree`` runs the command from other source trees too (``PYTHONPATH=SRC``, for a
before/after: the code before a change beside the code after it), each in the same turns.
The command is the ``onnx-arrow`` console script where it is on PATH (its wrapper's own
start-up included), else ``python -m onnx_arrow``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _report import Row, print_table

_BARE_HELP = "import argparse; argparse.ArgumentParser(prog='x').parse_args(['--help'])"


def _command() -> list[str]:
    found = shutil.which("onnx-arrow")
    return [found] if found is not None else [sys.executable, "-m", "onnx_arrow"]


def _timed(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL, cwd=os.sep)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--tree", action="append", default=[], metavar="SRC")
    args = parser.parse_args()
    here = str(Path(__file__).resolve().parents[1])
    trees = {"this tree": here, **{f"tree {t}": str(Path(t).resolve()) for t in args.tree}}
    cmd = _command()
    base = dict(os.environ)
    base.pop("PYTHONPATH", None)
    runs: dict[str, list[float]] = {}
    jobs: dict[str, tuple[list[str], dict[str, str]]] = {
        "python -c 'import pyarrow'": ([sys.executable, "-c", "import pyarrow"], base),
        "bare argparse --help": ([sys.executable, "-c", _BARE_HELP], base),
    }
    for label, src in trees.items():
        env = {**base, "PYTHONPATH": src}
        jobs[f"onnx-arrow --version ({label})"] = ([*cmd, "--version"], env)
        jobs[f"onnx-arrow --help ({label})"] = ([*cmd, "--help"], env)
    for argv, env in jobs.values():  # a first run of each warms the file cache
        _timed(argv, env)
    for _ in range(args.rounds):
        for name, (argv, env) in jobs.items():
            runs.setdefault(name, []).append(_timed(argv, env))
    print(f"{args.rounds} rounds in turns, fresh processes; command: {' '.join(cmd)}")
    for name, times in runs.items():
        print(
            f"  {name:<44} median {statistics.median(times):.3f} s  "
            f"[{min(times):.3f}-{max(times):.3f}]"
        )
    rows = []
    for label in trees:
        rows.append(
            Row(
                f"--version / import pyarrow ({label})",
                statistics.median(runs["python -c 'import pyarrow'"]),
                statistics.median(runs[f"onnx-arrow --version ({label})"]),
                "s",
                bar=1.0,
            )
        )
        rows.append(
            Row(
                f"--help / bare argparse ({label})",
                statistics.median(runs["bare argparse --help"]),
                statistics.median(runs[f"onnx-arrow --help ({label})"]),
                "s",
            )
        )
    print_table(rows)


if __name__ == "__main__":
    main()
