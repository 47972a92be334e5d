"""What every ``onnx-arrow`` command shares: the program's name and exit statuses, the
parser class and the pieces its commands' parsers are built of (argument types, the
--jobs and backend options), and the one-line error message.

Imported by ``onnx-arrow --help``, so it imports nothing heavy: neither onnx nor
ml_dtypes nor the store.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from collections.abc import Callable
from typing import Any, Final, Protocol, TextIO, TypeAlias

from onnx_arrow.parallel import ENGINES

PROG: Final = "onnx-arrow"
EXIT_OK: Final = 0
EXIT_DATA_ERROR: Final = 1
EXIT_USAGE: Final = 2
EXIT_INTERRUPTED: Final = 130  # 128 + SIGINT, as shells report it

#: Differences, op types and drifts a command lists before a count of the rest.
MAX_LISTED: Final = 20

#: Seconds a backend may spend on one data set unless --timeout says otherwise: far above
#: the slowest case of the default corpus (onnx.reference on light/light_inception_v2,
#: under a minute here), so that a model that never ends cannot hang a run.
DEFAULT_TIMEOUT: Final = 600.0

#: What a command does once its arguments have parsed: its exit status, given the
#: arguments and the stream its report goes to.
Command: TypeAlias = Callable[[argparse.Namespace, TextIO], int]


class CommandModule(Protocol):
    """A command's module: light, so that every one is imported to build the parser."""

    def register(self, commands: Any) -> None:
        """Add the command's sub-parser to ``commands`` (``add_subparsers``'s action)."""

    def load(self) -> Command:
        """Import the command's work (onnx, the store ...) and return it."""


class UsageError(Exception):
    """Raised by argparse instead of exiting, so ``main`` returns the code."""


class Parser(argparse.ArgumentParser):
    """argparse's parser, but a usage error raises :class:`UsageError` after printing."""

    def error(self, message: str) -> Any:  # argparse declares NoReturn
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise UsageError(message)


def print_error(message: str) -> None:
    """``onnx-arrow: error: message`` on one line of stderr."""
    print(f"{PROG}: error: {' '.join(message.split())}", file=sys.stderr)


def add_command(
    commands: Any, name: str, help_text: str, description: str, epilog: str | None = None
) -> argparse.ArgumentParser:
    """A command's sub-parser; a command reports a usage error through ``args.subparser``."""
    parser: argparse.ArgumentParser = commands.add_parser(
        name,
        help=help_text,
        description=textwrap.fill(description, 79),  # the raw formatter keeps the epilog's lines
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.set_defaults(subparser=parser)
    return parser


def tolerance(text: str) -> float:
    """An argparse type: a finite number of 0 or more (an rtol, an atol or a ULP floor)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"{text} is not a finite number of 0 or more")
    return value


def whole_number(low: int, high: int | None = None, *, what: str = "") -> Callable[[str], int]:
    """An argparse type: a whole number from ``low`` to ``high`` (no upper bound if None)."""
    bounds = f"{low} or more" if high is None else f"{what}{low} to {high}"

    def parse(text: str) -> int:
        try:
            number = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if number < low or (high is not None and number > high):
            raise argparse.ArgumentTypeError(f"{number} is not {bounds}")
        return number

    return parse


positive = whole_number(1)


def jobs_option(parser: argparse.ArgumentParser, what: str) -> None:
    """--jobs N, ``what`` saying what the processes do."""
    parser.add_argument(
        "--jobs", type=positive, default=1, metavar="N", help=f"{what} (default: %(default)s)"
    )


#: What --backend takes, as ``run``, ``compare`` and ``matrix`` say it.
BACKEND_HELP: Final = (
    "reference (onnx.reference.ReferenceEvaluator, the default), onnxruntime, "
    "MODULE / MODULE:NAME: a module or object with onnx's backend interface (prepare, "
    "and a rep's run), such as onnxruntime.backend, or a callable (model, inputs); or "
    "PACKAGE==VERSION[:MODULE[:NAME]]: that version from the package index, run in a "
    "virtual environment made for it and cached (onnxruntime==1.20.1; more pins "
    "after commas: onnxruntime==1.16.3,numpy==1.26.4)"
)


def backend_options(parser: argparse.ArgumentParser) -> Any:
    """--backend (in a group --actual can join), and :func:`running_options`."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--backend", default=None, metavar="BACKEND", help=BACKEND_HELP)
    running_options(parser)
    return group


def running_options(parser: argparse.ArgumentParser) -> None:
    """--case, --timeout, --jobs, --engine and --backend-logs: which cases a backend
    runs, and where and how."""
    parser.add_argument(
        "--case",
        action="append",
        metavar="PATTERN",
        help="only the cases matching this glob (node/test_add*, or test_add* without the "
        "kind folder); repeat for more",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        metavar="SECONDS",
        help="record a data set the backend spends longer on as an error (default: "
        f"{DEFAULT_TIMEOUT:g}; 0: no limit)",
    )
    jobs_option(parser, "run the cases in N processes of this machine (or N workers of --engine)")
    parser.add_argument(
        "--engine",
        choices=ENGINES,
        help="run on local processes, Dask (the current client, or a local cluster of "
        "--jobs workers) or Ray (the running one, or a local one of --jobs CPUs); the "
        "result is the same as one process's",
    )
    parser.add_argument(
        "--in-process",
        action="store_true",
        help="run the backend in this process (for a debugger or a profiler), not in a "
        "worker process, the default: unprotected, its crash, sys.exit or stray thread ends "
        "or holds the command; not with --jobs above 1, --engine or --runner",
    )
    parser.add_argument(
        "--backend-logs",
        action="store_true",
        help="let the backend log as it does by default (onnxruntime's warnings and errors "
        "on stderr); without it only fatal messages reach stderr, and every failure is "
        "recorded with its message",
    )


def settle_timeout(args: argparse.Namespace) -> None:
    """--timeout as a backend takes it: :data:`DEFAULT_TIMEOUT` when not given, None (no
    limit) for 0; anything else but a number of seconds up to a week
    (:data:`~onnx_arrow.compare.deadlines.MAX_TIMEOUT`) is a usage error."""
    from onnx_arrow.compare.deadlines import MAX_TIMEOUT  # run after parsing: not light

    if args.timeout is None:
        args.timeout = DEFAULT_TIMEOUT
    elif args.timeout == 0:
        args.timeout = None
    elif not args.timeout > 0:
        args.subparser.error(f"--timeout {args.timeout} is not a number of seconds of 0 or more")
    elif not args.timeout <= MAX_TIMEOUT:  # 1e10, inf
        args.subparser.error(
            f"--timeout {args.timeout:g} is more than {MAX_TIMEOUT} seconds (a week); give "
            "at most that, or 0 for no limit"
        )


def rule_options(parser: argparse.ArgumentParser, *, rtol_default_of: str) -> None:
    """--rtol, --atol, --max-ulp and --ulp-floor: the rule a value is judged by, as
    ``compare`` and ``trace`` both take it; ``rtol_default_of`` says which cases the
    default tolerances judge."""
    parser.add_argument(
        "--rtol",
        type=tolerance,
        default=1e-3,
        help=f"relative tolerance of {rtol_default_of} (default: %(default)s)",
    )
    parser.add_argument(
        "--atol",
        type=tolerance,
        default=1e-7,
        help="absolute tolerance, like --rtol (default: %(default)s)",
    )
    parser.add_argument(
        "--max-ulp",
        type=whole_number(0),
        metavar="N",
        help="judge floats by ULPs, not --rtol/--atol: an element passes within N ULPs of "
        "the expected one (0: bit-exact, NaN equal to NaN, -0.0 equal to +0.0); a "
        "--tolerance pattern still applies to the cases it finds",
    )
    parser.add_argument(
        "--ulp-floor",
        type=tolerance,
        default=0.0,
        metavar="X",
        help="under a ULP budget, an element also passes where 0 is expected and |actual| "
        "<= X (default: %(default)s)",
    )


def onnxruntime_options(parser: argparse.ArgumentParser) -> None:
    """--providers and --session-option, of --backend onnxruntime."""
    parser.add_argument(
        "--providers",
        metavar="EP[,EP...]",
        help="with --backend onnxruntime: its execution providers, in order (default: "
        "CPUExecutionProvider); one that is not available is an error naming those that are",
    )
    parser.add_argument(
        "--session-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="with --backend onnxruntime: set an onnxruntime.SessionOptions attribute "
        "(intra_op_num_threads=1, graph_optimization_level=ORT_ENABLE_BASIC), or a session "
        "configuration entry (a KEY with a dot); repeat for more",
    )


#: What a command that takes a corpus by name says of ``@onnx==VERSION``.
RELEASES_HELP: Final = (
    "@onnx is the installed onnx's corpus; @onnx==VERSION a release's (its wheel's test "
    "data, fetched from the package index and cached; from 1.23 on its node suite generated "
    "by that release, numpy pinned by @onnx==VERSION,numpy==N); @onnx=PATH.whl a wheel on disk"
)


def offline_option(parser: argparse.ArgumentParser) -> None:
    """--offline: an ``@onnx==VERSION`` corpus from the cache or a wheel on disk only, and
    a ``--backend PACKAGE==VERSION``'s environment from the cache only."""
    parser.add_argument(
        "--offline",
        action="store_true",
        help="take @onnx==VERSION from the cache (or @onnx=PATH.whl), and a --backend "
        "PACKAGE==VERSION's environment, from the cache only; never ask the package index",
    )
