"""Benchmark: ``import --jobs N`` and ``compare --jobs N`` of the node suite under two
source trees of onnx-arrow (a change to its worker processes against the code before it).

Each round runs every command once under each tree, the trees' order alternating from
round to round; each run is a fresh interpreter with the tree first on ``PYTHONPATH``,
timed around ``onnx_arrow.cli.main`` (the interpreter's start and imports left out).
Printed: every round's times, wall and CPU (the command's process and the workers it
waited for), their medians and ratios (second tree over first), and the machine's load
(``uptime``) before and after.  A first round, not counted, warms the
file cache.  The stores and reports are checked to hold as many rows under both trees,
and the commands to exit with the same status (the node suite's random operators draw
new data at each import, so a store is not the same bytes twice).

Run::

    python benchmarks/bench_pool.py BEFORE_TREE AFTER_TREE [--rounds 5] [--jobs 2]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from _report import workdir

#: One command, timed in a fresh interpreter: argv in; seconds, exit status and rows out.
_TIMED = """
import json, os, resource, sys, time
import pyarrow.parquet as pq
from onnx_arrow.cli import main

def cpu():
    # this process and the workers it waited for
    used = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    return sum(u.ru_utime + u.ru_stime for u in used)

argv, out = json.loads(sys.argv[1]), sys.argv[2]
start, before = time.perf_counter(), cpu()
status = main(argv)  # compare: 1 when an output does not pass, as on the node suite
wall, used = time.perf_counter() - start, cpu() - before
assert os.path.exists(out), "the output was not written"
rows = pq.ParquetFile(out).metadata.num_rows
print(json.dumps({"wall": wall, "cpu": used, "status": status, "rows": rows}))
"""


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


def _timed(tree: Path, argv: list[str], out: Path) -> dict[str, float | str | int]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out.unlink(missing_ok=True)  # each run writes its output anew, or fails
    done = subprocess.run(
        [sys.executable, "-c", _TIMED, json.dumps(argv), str(out)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv)} under {tree} failed:\n{done.stderr}")
    result: dict[str, float | str | int] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before", type=Path, help="source tree of the baseline")
    parser.add_argument("after", type=Path, help="source tree measured against it")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--keep", help="work in this folder and leave it")
    args = parser.parse_args()
    trees = {"before": args.before.resolve(), "after": args.after.resolve()}
    jobs = str(args.jobs)
    print(f"trees: before {trees['before']}, after {trees['after']}; jobs {jobs}")
    print(f"load before: {_uptime()}")
    with workdir(args.keep, "bench-pool-") as work:
        store = work / "node.parquet"
        commands = {
            f"import --jobs {jobs}": lambda out: [
                "import", "--jobs", jobs, "--case", "node/*", "--force", str(out),
            ],
            f"compare --jobs {jobs}": lambda out: [
                "compare", str(store), "--jobs", jobs, "--out", str(out),
            ],
        }  # fmt: skip
        # the store compared: the node suite, imported once by the baseline
        _timed(trees["before"], commands[f"import --jobs {jobs}"](store), store)
        times: dict[tuple[str, str], list[float]] = {}
        cpus: dict[tuple[str, str], list[float]] = {}
        outputs: dict[tuple[str, str], set[tuple[int, int]]] = {}
        for r in range(-1, args.rounds):  # round -1 warms the caches, and is not counted
            order = list(trees) if r % 2 == 0 else list(reversed(trees))
            line = []
            for command, argv in commands.items():
                for name in order:
                    out = work / f"{name}-{command.split()[0]}.parquet"
                    got = _timed(trees[name], argv(out), out)
                    if r < 0:
                        continue
                    times.setdefault((command, name), []).append(float(got["wall"]))
                    cpus.setdefault((command, name), []).append(float(got["cpu"]))
                    # the node suite's random operators draw new data at each import, and
                    # a report holds its times: the rows and exit status must agree
                    outcome = (int(got["rows"]), int(got["status"]))
                    outputs.setdefault((command, name), set()).add(outcome)
                    line.append(f"{command} {name} {float(got['wall']):.2f} s")
                    line[-1] += f" (CPU {float(got['cpu']):.2f} s)"
            if r >= 0:
                print(f"round {r + 1}: " + "; ".join(line), flush=True)
        print(f"load after: {_uptime()}")
        print(f"\n{'median of':<28} {'before':>10} {'after':>10} {'ratio':>7}")
        same = True
        for command in commands:
            for what, measured in (("wall", times), ("CPU", cpus)):
                before = statistics.median(measured[(command, "before")])
                after = statistics.median(measured[(command, "after")])
                label = f"{command} {what}"
                print(f"{label:<28} {before:>8.2f} s {after:>8.2f} s {after / before:>6.3f}x")
            if outputs[(command, "before")] != outputs[(command, "after")]:
                same = False
                print(f"  {command}: before {outputs[(command, 'before')]}")
                print(f"  {command}: after  {outputs[(command, 'after')]}")
        print("outputs: the same under both trees" if same else "outputs DIFFER between the trees")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
