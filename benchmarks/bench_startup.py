"""Start-up as a user meets it: ``onnx-arrow --version`` against ``python -c "import
pyarrow"``, and ``onnx-arrow --help`` against a bare argparse program, each a fresh
process, in turns, medians and ranges of the rounds printed side by side.

    python benchmarks/bench_startup.py [--rounds 15] [--tree SRC ...]
    python benchmarks/bench_startup.py --export [--corpus DIR] [--load N] [--out DIR] [--rounds 9]

``--tree`` runs the command from other source trees too (``PYTHONPATH=SRC``, for a
before/after: the code before a change beside the code after it), each in the same turns.
The command is the ``onnx-arrow`` console script installed beside this interpreter (its
wrapper's own start-up included), else the one on PATH, else ``python -m onnx_arrow``.
Every process reads its modules' bytecode, as an installed package's (pip compiles it):
the bytecode of the source trees (and of everything else imported) is written by the
first, unrecorded round into a cache folder of the run (``PYTHONPYCACHEPREFIX``), even
where ``PYTHONDONTWRITEBYTECODE`` is set; ``--no-bytecode`` leaves both as they are, so
that a source tree without bytecode is compiled by every process.

``--export`` measures a short command whose start-up is most of it instead: ``onnx-arrow
export STORE DEST`` of the node suite (the installed onnx's, written out once, or the
corpus folder ``--corpus``) against ``zstd -d -T1 | tar -x`` of the tar.zst of the same
tree (``tar | zstd -3``), each a fresh process writing to a fresh folder, in turns, the
page cache warm and earlier outputs written back (``sync``) before each; the ratio of
each round is printed, each side's CPU time (user and system, of all its processes)
beside its wall-clock time, and beside them ``python -c "import pyarrow.parquet,
pyarrow.compute"``, what any Python reader of the store pays before its first row.
``--load N`` keeps N busy processes (one pure-Python loop each) running through the
rounds, as on a shared machine, and stops them after; ``--out DIR`` writes the outputs
there (``/dev/shm``: the disk's own noise left out of both sides).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from _report import Row, print_table, spread, workdir
from bench_throughput import node_corpus, trees_equal, warm

_BARE_HELP = "import argparse; argparse.ArgumentParser(prog='x').parse_args(['--help'])"


def _command() -> list[str]:
    """The console script pip installed beside this interpreter (not a version manager's
    shim in front of it, which adds its own start-up), else ``python -m onnx_arrow``."""
    beside = Path(sys.executable).with_name("onnx-arrow")
    found = str(beside) if beside.is_file() else shutil.which("onnx-arrow")
    return [found] if found is not None else [sys.executable, "-m", "onnx_arrow"]


def _timed(argv: list[str], env: dict[str, str]) -> float:
    return _timed_cpu(argv, env)[0]


def _timed_cpu(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """The wall-clock seconds of a run, and the CPU seconds (user and system) of its
    processes, which a loaded machine changes less."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL, cwd=os.sep)
    took = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return took, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--tree", action="append", default=[], metavar="SRC")
    parser.add_argument("--export", action="store_true", help="export vs zstd -d | tar -x")
    parser.add_argument("--corpus", metavar="DIR", help="the corpus folder --export uses")
    parser.add_argument("--load", type=int, default=0, metavar="N", help="N busy processes")
    parser.add_argument("--keep", metavar="DIR", help="work in DIR and keep it")
    parser.add_argument(
        "--no-bytecode", action="store_true", help="no cache of bytecode made for the run"
    )
    parser.add_argument(
        "--out", metavar="DIR", help="where --export's sides write (default: the work folder)"
    )
    args = parser.parse_args()
    here = str(Path(__file__).resolve().parents[1])
    trees = {"this tree": here, **{f"tree {t}": str(Path(t).resolve()) for t in args.tree}}
    cmd = _command()
    base = dict(os.environ)
    base.pop("PYTHONPATH", None)
    with tempfile.TemporaryDirectory(prefix="bench-startup-pyc-") as pyc, _busy(args.load):
        if not args.no_bytecode:
            base.pop("PYTHONDONTWRITEBYTECODE", None)
            base["PYTHONPYCACHEPREFIX"] = pyc
        if args.export:
            _export_rounds(args, trees, cmd, base)
        else:
            _start_rounds(args, trees, cmd, base)


def _start_rounds(
    args: argparse.Namespace, trees: dict[str, str], cmd: list[str], base: dict[str, str]
) -> None:
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
    print(
        f"{args.rounds} rounds in turns, fresh processes, {_bytecode(args)}; "
        f"command: {' '.join(cmd)}"
    )
    for name, times in runs.items():
        print(f"  {name:<44} median {spread(times)} s")
    rows = []
    for label in trees:
        rows.append(
            _row(runs, "python -c 'import pyarrow'", f"onnx-arrow --version ({label})", 1.0)
        )
        rows.append(_row(runs, "bare argparse --help", f"onnx-arrow --help ({label})"))
    print_table(rows)


def _row(runs: dict[str, list[float]], base: str, ours: str, bar: float | None = None) -> Row:
    """The table's row of ``ours`` over ``base``: their medians (the label without the
    command's words before the tree's)."""
    label = ours.removeprefix("onnx-arrow ").replace(" (", f" / {base} (", 1)
    return Row(label, statistics.median(runs[base]), statistics.median(runs[ours]), "s", bar=bar)


def _bytecode(args: argparse.Namespace) -> str:
    if args.no_bytecode:
        return "bytecode as the environment has it"
    return "bytecode cached by the first round"


@contextlib.contextmanager
def _busy(n: int) -> Iterator[None]:
    """``n`` processes that keep a core busy each, stopped (by their ids) on the way out."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        yield
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


def _export_rounds(
    args: argparse.Namespace, trees: dict[str, str], cmd: list[str], base: dict[str, str]
) -> None:
    for tool in ("tar", "zstd"):
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} is not installed (apt-get install {tool})")
    with workdir(args.keep, "bench-startup-") as work:
        src = Path(args.corpus) if args.corpus else node_corpus(work / "node")
        files = [p for p in src.rglob("*") if p.is_file()]
        archive, store = work / "corpus.tar.zst", work / "corpus.parquet"
        pack = f"tar -cf - -C {shlex.quote(str(src))} . | zstd -3 -T1 -q -f -o {archive}"
        subprocess.run(["bash", "-o", "pipefail", "-c", pack], check=True)
        env = {**base, "PYTHONPATH": trees["this tree"]}
        made = subprocess.run(
            [*cmd, "import", "--force", str(src), str(store)],
            check=False,
            env=env,
            capture_output=True,
        )
        if made.returncode != 0:
            raise SystemExit(made.stderr.decode())
        print(
            f"{len(files)} files, {sum(p.stat().st_size for p in files) / 1e6:.1f} MB ({src}); "
            f"tar.zst {archive.stat().st_size / 1e6:.1f} MB, store {store.stat().st_size / 1e6:.1f}"
            f" MB; {args.load} busy processes, {os.cpu_count()} CPUs, {_bytecode(args)}; "
            f"command: {' '.join(cmd)}"
        )
        outs = Path(args.out) if args.out else work / "out"
        outs.mkdir(parents=True, exist_ok=True)
        counter = iter(range(1 << 30))
        untar = "zstd -d -T1 -q -c {archive} | tar -xf - -C {dest}"

        def untar_job(dest: Path) -> tuple[list[str], dict[str, str]]:
            dest.mkdir()
            line = untar.format(archive=archive, dest=shlex.quote(str(dest)))
            return ["bash", "-o", "pipefail", "-c", line], base

        floor = "import pyarrow.parquet, pyarrow.compute"
        jobs: dict[str, Any] = {
            "zstd -d | tar -x": untar_job,
            # what any Python program that reads the store pays before its first row
            f"python -c '{floor}'": lambda dest: ([sys.executable, "-c", floor], base),
        }
        for label, tree in trees.items():
            jobs[f"onnx-arrow export ({label})"] = lambda dest, tree=tree: (
                [*cmd, "export", str(store), str(dest)],
                {**base, "PYTHONPATH": tree},
            )
        runs: dict[str, list[float]] = {}
        cpus: dict[str, list[float]] = {}
        last: dict[str, Path] = {}
        for round_ in range(args.rounds + 1):  # the first round warms up, unrecorded
            for name, job in jobs.items():
                dest = outs / f"{next(counter)}"
                while dest.exists():  # left by an earlier run in a --keep folder
                    dest = outs / f"{next(counter)}"
                argv, env = job(dest)
                warm(archive)
                warm(store)
                os.sync()  # no writeback of earlier outputs during this run
                took, cpu = _timed_cpu(argv, env)
                if round_:
                    runs.setdefault(name, []).append(took)
                    cpus.setdefault(name, []).append(cpu)
                if name in last and last[name].exists():
                    shutil.rmtree(last[name])
                last[name] = dest
        for name, dest in last.items():
            if name.startswith("python -c"):
                continue
            if not trees_equal(src, dest):
                raise SystemExit(f"{name}: the tree differs from {src}")
            shutil.rmtree(dest)
        print(
            f"{args.rounds} rounds in turns, fresh processes, every output the source tree; "
            "wall-clock time, and CPU time (user and system, all processes of the run)"
        )
        for name, times in runs.items():
            cpu = cpus[name]
            print(f"  {name:<44} median {spread(times)} s  CPU {spread(cpu)} s")
        floor_times = runs[f"python -c '{floor}'"]
        untars = runs["zstd -d | tar -x"]
        floors = [a / b for a, b in zip(floor_times, untars, strict=True)]
        print(
            f"  floor / untar, each round: {' '.join(f'{r:.2f}' for r in floors)}; "
            f"median {spread(floors, 2)}x"
        )
        rows = []
        for label in trees:
            ratios = [
                a / b
                for a, b in zip(
                    runs[f"onnx-arrow export ({label})"], runs["zstd -d | tar -x"], strict=True
                )
            ]
            print(
                f"  export / untar, each round ({label}): "
                + " ".join(f"{r:.2f}" for r in ratios)
                + f"; median {spread(ratios, 2)}x"
            )
            rows.append(_row(runs, "zstd -d | tar -x", f"onnx-arrow export ({label})", 1.2))
        print_table(rows)


if __name__ == "__main__":
    main()
