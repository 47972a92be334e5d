"""The results matrix as a runtime team runs it: two onnx releases (one frozen, the
installed one) x onnxruntime in two versions from the package index + onnx's reference
evaluator + the onnxruntime-node example runner, into a results store, from a cold cache
and again warm; then where the two onnxruntime versions' verdicts part, the site built from
the store, and its index loaded in headless Chromium against a blank page.

    python benchmarks/bench_matrix.py [--case 'node/test_a*'] [--jobs 2] [--keep DIR]

Every step is the ``onnx-arrow`` command a user runs (a fresh process each), with its own
onnx-arrow cache in the work folder (``ONNX_ARROW_CACHE_DIR``), cold on the first run;
pip's download cache is the machine's.  The matrix prints each pair's time; this script
prints the wall time of each run, the sizes of the store and the site, and the Chromium
timings (medians of rounds, index and blank page in turns).
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

from _report import workdir

ROOT = Path(__file__).resolve().parents[1]
NODE_RUNNER = ROOT / "examples" / "runners" / "onnxruntime-node" / "run.js"
#: Two versions from the index (1.24.1: the one tinygrad pinned after 1.29.0 broke its CI).
VERSIONS = ("onnxruntime==1.20.1", "onnxruntime==1.24.1")


def _run(argv: list[str], env: dict[str, str], log: Path) -> tuple[float, str]:
    """One command, timed; its stdout (and stderr into ``log``)."""
    start = time.perf_counter()
    with log.open("a") as err:
        done = subprocess.run(
            argv, env=env, stdout=subprocess.PIPE, stderr=err, text=True, check=False
        )
    seconds = time.perf_counter() - start
    print(f"$ {' '.join(argv)}\n  exit {done.returncode}, {seconds:.1f} s")
    return seconds, done.stdout


def _size(path: Path) -> tuple[int, int]:
    files = [p for p in path.rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


def _chromium_load(page: Path, rounds: int) -> tuple[float, float]:
    """Medians of the seconds headless Chromium takes to load ``page`` and a blank page,
    in turns (``--dump-dom``: the page laid out and its DOM printed)."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        return float("nan"), float("nan")
    blank = page.parent / "blank.html"
    blank.write_text("<!doctype html><title>blank</title>")
    args = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom"]
    times: dict[str, list[float]] = {"index": [], "blank": []}
    for _ in range(rounds):
        for name, target in (("index", page), ("blank", blank)):
            start = time.perf_counter()
            subprocess.run([*args, target.as_uri()], capture_output=True, check=True)
            times[name].append(time.perf_counter() - start)
    return statistics.median(times["index"]), statistics.median(times["blank"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", default="node/*", help="the cases of each corpus")
    parser.add_argument("--jobs", default="2")
    parser.add_argument("--keep", metavar="DIR")
    parser.add_argument("--rounds", type=int, default=3, help="of the Chromium timing")
    args = parser.parse_args()
    with workdir(args.keep, "onnx-arrow-bench-matrix-") as work:
        env = {**os.environ, "ONNX_ARROW_CACHE_DIR": str(work / "cache")}
        log, results = work / "stderr.log", work / "results"
        cmd = [sys.executable, "-m", "onnx_arrow"]
        matrix = [
            *cmd, "matrix", str(results), "--corpus", "@onnx==1.14.1", "--corpus", "@onnx",
            "--case", args.case, "--jobs", args.jobs, "--backend", "reference",
            *[x for v in VERSIONS for x in ("--backend", v)],
            "--runner", f"node {NODE_RUNNER} {{model}} {{inputs}} {{outputs}}",
            "--runtime", "onnxruntime-node==1.30.0",
        ]  # fmt: skip
        cold, table = _run(matrix, env, log)
        print(table)
        warm, table = _run(matrix, env, log)
        print(table)
        _, changes = _run([*cmd, "results", str(results), "--changes"], env, log)
        print(changes)
        site = work / "site"
        built, _ = _run([*cmd, "site", str(results), str(site)], env, log)
        index = site / "index.html"
        loaded, blank = _chromium_load(index, args.rounds)
        files, size = _size(results)
        site_files, site_size = _size(site)
        print(f"matrix cold {cold:.1f} s, warm {warm:.1f} s ({warm / cold:.3f}x)")
        print(f"results store: {files} files, {size:,} bytes")
        print(f"site: {site_files} files, {site_size:,} bytes, built in {built:.1f} s")
        print(
            f"index in headless Chromium: {loaded:.2f} s, a blank page {blank:.2f} s "
            f"({loaded / blank:.2f}x; medians of {args.rounds} rounds in turns)"
        )


if __name__ == "__main__":
    main()
