"""``onnx-arrow matrix``: every given corpus x every given backend or runner, each pair a
compare run added to a results store.  Its arguments here; its work in
:mod:`onnx_arrow.cli.work.matrix`, imported only to run it.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any, Final

from onnx_arrow.cli._shared import (
    BACKEND_HELP,
    RELEASES_HELP,
    Command,
    add_command,
    offline_option,
    running_options,
)
from onnx_arrow.cli.compare import judging_options
from onnx_arrow.cli.run import parsed_runtime

_EPILOG: Final = """\
examples:
  onnx-arrow matrix results/ --corpus @onnx==1.14.1 --corpus @onnx \\
      --backend reference --backend onnxruntime
      two onnx releases x two runtimes: four compare runs added to results/
  onnx-arrow matrix results/ --corpus @onnx --backend onnxruntime \\
      --runner 'node run.js {model} {inputs} {outputs}' --runtime onnxruntime-node==1.22.0
      a runner beside a backend, recorded under the runtime and version its --runtime says
  onnx-arrow matrix results/ --corpus corpus.parquet --backend my_runtime.backend \\
      --case 'node/test_add*' --max-ulp 4 --jobs 4
      compare's case selection and verdict options, for every pair, on 4 processes

Pairs: every --corpus with every --backend and --runner, corpus by corpus, in the order
given.  A pair whose run the results store holds already (the same corpus digest,
runtime, version, provider or runner and options, as 'compare --results' keeps runs) is
not run again, and is listed as present: a matrix stopped half-way goes on where it
stopped when run again (--again runs and adds every pair anew, as the next attempt).

A backend that crashes or runs past --timeout on a case is no skip: compare records each
of those outputs as an error, and the run is added.  A pair that cannot run at all (its
corpus does not open, its backend does not load, compare raises) is listed as failed
with its error, nothing added for it, and the matrix goes on.

Output: a line per pair on stderr as it ends (a plain line each, in a CI log too), then a
table of the pairs: corpus, its onnx release, the runtime as given, the runtime and version
recorded, its outputs by verdict (pass: match, xpass; fail: the mismatches and xfail;
error; skipped), seconds, and added, present (not run again) or failed.  Exit status 0 if
every pair was added or present (whatever its verdicts), 1 if a pair failed or the results
store does not read, 2 bad usage."""


class _Runs(argparse.Action):
    """--backend and --runner append a runtime to ``runs`` (a ``[kind, what, runtime]``
    each, in the order given); --runtime names the runtime of the one just before it."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        runs = list(getattr(namespace, "runs", None) or [])
        if option_string == "--runtime":
            if not runs:
                parser.error(
                    f"--runtime {values} names the runtime of the --runner (or --backend) "
                    "before it; give it after one"
                )
            if runs[-1][2] is not None:
                parser.error(
                    f"two --runtime for --{runs[-1][0]} {runs[-1][1]}; give one after each "
                    "--runner or --backend"
                )
            runs[-1] = [runs[-1][0], runs[-1][1], values]
        else:
            runs.append([(option_string or "--backend").lstrip("-"), values, None])
        namespace.runs = runs


def register(commands: Any) -> None:
    """Add ``matrix`` and its arguments."""
    mtx = add_command(
        commands,
        "matrix",
        "every corpus x every backend or runner, each pair a run of a results store",
        "Run every --backend and --runner over every --corpus, as 'onnx-arrow compare' "
        "does, and add each pair's run to the results store RESULTS ('onnx-arrow results "
        "RESULTS' reads it); the pairs it holds already are skipped, so a matrix run again "
        "runs only what is missing.",
        _EPILOG,
    )
    mtx.add_argument(
        "results",
        metavar="RESULTS",
        help="the results store (a folder of Parquet parts, made if missing)",
    )
    mtx.add_argument(
        "--corpus",
        action="append",
        required=True,
        metavar="CORPUS",
        help=f"a Parquet store written by import, or a release: {RELEASES_HELP}; repeat for more",
    )
    mtx.add_argument(
        "--backend",
        action=_Runs,
        dest="runs",
        metavar="BACKEND",
        help=f"{BACKEND_HELP}; given as 'compare --backend' takes it; repeat for more",
    )
    mtx.add_argument(
        "--runner",
        action=_Runs,
        dest="runs",
        metavar="RUNNER",
        help="a command per data set, through files, as 'compare --runner' takes it ({model}, "
        "{inputs}, {outputs}, {case}); repeat for more",
    )
    mtx.add_argument(
        "--runtime",
        action=_Runs,
        dest="runs",
        type=parsed_runtime,
        metavar="NAME==VERSION",
        help="the runtime and version of the --runner just before it (its command says no "
        "version), recorded in the results store; after a --backend, over what the "
        "backend says of itself; one per --runner or --backend at most",
    )
    offline_option(mtx)
    running_options(mtx)
    judging_options(mtx)
    mtx.add_argument(
        "--again",
        action="store_true",
        help="run and add every pair, also those the results store holds (as their next attempt)",
    )


def load() -> Command:
    """The command's work, imported now (onnx, the stores and the backends with it)."""
    from onnx_arrow.cli.work.matrix import run

    return run
