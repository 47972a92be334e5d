"""``onnx-arrow compare``: a backend's outputs (or a store of them) against a store's
expected outputs.  Its arguments here; its work in :mod:`onnx_arrow.cli.work.compare`,
imported only to run it.
"""

from __future__ import annotations

import argparse
from typing import Any, Final

from onnx_arrow.cli._shared import (
    MAX_LISTED,
    Command,
    add_command,
    backend_options,
    offline_option,
    onnxruntime_options,
    rule_options,
    whole_number,
)
from onnx_arrow.cli.run import runner_option, runtime_option

_EPILOG: Final = """\
examples:
  onnx-arrow compare corpus.parquet
      run onnx's reference evaluator and compare
  onnx-arrow compare corpus.parquet --actual ort.parquet --out report.parquet
      compare with the outputs 'onnx-arrow run' wrote; a row per output to Parquet
  onnx-arrow compare --backend onnxruntime --rtol 1e-4 --case test_abs corpus.parquet
  onnx-arrow compare corpus.parquet --runner 'node run.js {model} {inputs} {outputs}'
      a runtime that is not Python, a command per data set through files
  onnx-arrow compare corpus.parquet --backend onnxruntime --session-option intra_op_num_threads=1
      onnxruntime with a SessionOptions attribute set (--providers for execution providers)
  onnx-arrow compare corpus.parquet --backend onnxruntime.backend
      any backend with onnx's interface: MODULE, or MODULE:NAME (a Backend subclass)

  onnx-arrow compare corpus.parquet --patterns skips.txt --xfail 'test_dft' --strict
      onnx BackendTest-style regexes: skip cases, expect failures (an xpass fails)
  onnx-arrow compare corpus.parquet --tolerance 'test_dft=1e-2,1e-4'
      the cases a regex finds with tolerances of their own
  onnx-arrow compare corpus.parquet --backend onnxruntime --run-skipped --patterns F.jsonc
      onnxruntime's own expectation files (F: onnx_backend_test_series_filters.jsonc,
      and its overrides file, --patterns again), the skips run: which entries can go
  onnx-arrow compare corpus.parquet --runner 'node run.js {model} {inputs} {outputs}' \
      --runtime onnxruntime-node==1.22.0 --results results/
      the run added to a results store, under the runtime and version it ran
  onnx-arrow compare corpus.parquet --max-ulp 0
      bit-exactness: every float equal to the expected one, code for code
  onnx-arrow compare corpus.parquet --max-ulp 4 --ulp-floor 1e-30
      within 4 ULPs, or |actual| <= 1e-30 where 0 is expected

Tolerances: a case is compared with the first --tolerance (or --patterns) pattern that
finds it, else with its own as the store keeps them (onnx's TestCase, the case's
data.json), else with --rtol and --atol; each report row says which (its rtol, atol and
tolerance columns), and the element furthest beyond it (worst_index, worst_expected,
worst_actual).

ULPs: each row of floats gives its largest ULP distance (max_ulp, max_ulp_index),
counted on the dtype's own codes as 'diff' counts it (complex part by part).  --max-ulp
N, or a 'tolerance REGEX ulp=N' line of --patterns, makes ULPs the verdict: an element
passes within N ULPs, or within --ulp-floor of an expected 0; two NaNs are equal.  A
pattern's budget wins over tolerances; --max-ulp over all but a pattern's tolerance.
Each row says which rule judged it (rule: tolerance or ulp; from where: tolerance).

Expectation files: the summary lists the entries of --patterns files that matched no
failing case ("can be removed"), by file and line: a pattern that finds no case, an
xfail pattern (or, with --run-skipped, a skip pattern) whose cases all pass.

Updating an expectation file: --update-expectations FILE writes FILE again as the run
showed (an entry whose cases all pass or that finds no case removed, a failing case
added with its cause); --check prints the change as a diff and exits 1 if there is one.

Statuses: match, mismatch (beyond |a - e| <= atol + rtol * |e|; integers and strings
exactly), nan_mismatch, dtype_mismatch, shape_mismatch, error (the backend raised, or
an expected value was kept as bytes at import), skipped (a case without a model or
data sets, or a --skip pattern's), xfail (a failure of an --xfail case), xpass (an
--xfail case that passed).  Exit status 0 if every output matches (skipped, xfail and,
without --strict, xpass aside) and at least one was compared, 1 if not or a store
cannot be read, 2 bad usage."""


def _pattern_tolerance(text: str) -> tuple[str, float, float]:
    # imported only once a --tolerance is given: --help does not need it
    from onnx_arrow.compare import CompareError, parse_tolerance

    try:
        return parse_tolerance(text)
    except CompareError as exc:
        raise argparse.ArgumentTypeError(exc.message) from None


def judging_options(parser: argparse.ArgumentParser) -> None:
    """--skip, --xfail, --tolerance, --patterns, --provider, --run-skipped, --keep-actual
    and :func:`rule_options`: which cases run and how their outputs are judged (the
    plan), as ``compare`` and ``matrix`` take them."""
    parser.add_argument(
        "--skip",
        action="append",
        default=[],
        metavar="REGEX",
        help="do not run the cases it finds (re.search in node/test_x, test_x and "
        "test_x_cpu, as onnx's BackendTest.exclude); repeat for more",
    )
    parser.add_argument(
        "--xfail",
        action="append",
        default=[],
        metavar="REGEX",
        help="cases known to fail: their failures are xfail, a pass xpass; repeat for more",
    )
    parser.add_argument(
        "--tolerance",
        action="append",
        default=[],
        type=_pattern_tolerance,
        metavar="REGEX=RTOL,ATOL",
        help="compare the cases it finds with these tolerances, over their own (as --skip "
        "finds them; the first that finds a case applies); repeat for more",
    )
    parser.add_argument(
        "--patterns",
        metavar="FILE",
        help="more patterns from a file, after those given: lines 'skip REGEX', 'xfail "
        "REGEX', 'tolerance REGEX=RTOL,ATOL' or 'tolerance REGEX ulp=N', each with 'when "
        "CLAUSES' (opset>=18 onnx<1.17 provider=DML) and '# reason' if need be; JSON "
        '{"skip": [...], "xfail": [...], "tolerance": {REGEX: [RTOL, ATOL], REGEX: {"ulp": '
        "N}}}; or onnxruntime's onnx_backend_test_series_filters.jsonc or "
        "onnx_backend_test_series_overrides.jsonc as they are; repeat for more",
        action="append",
        default=[],
    )
    parser.add_argument(
        "--provider",
        default="CPU",
        metavar="DEVICE",
        help="the onnxruntime build whose lists of onnxruntime's filters file apply, as "
        "onnxruntime.get_device() names it (CPU, GPU, CPU-DNNL, GPU-DML...), and the "
        "provider that 'when provider=NAME' lines of --patterns test (default: %(default)s)",
    )
    parser.add_argument(
        "--run-skipped",
        action="store_true",
        help="run the cases the skip patterns find, as xfail cases, to list the skip "
        "entries that are no longer needed",
    )
    parser.add_argument(
        "--keep-actual",
        choices=("failed", "all", "none"),
        default="failed",
        help="whose actual values the report keeps, as .pb bytes in its actual column: of "
        "the outputs that differ (default), all or none",
    )
    rule_options(
        parser,
        rtol_default_of="a case that states none of its own (onnx's TestCase, data.json) "
        "and that no --tolerance finds",
    )


def register(commands: Any) -> None:
    """Add ``compare`` and its arguments."""
    cmp = add_command(
        commands,
        "compare",
        "compare a backend's outputs with a store's expected outputs",
        "Run a backend over STORE (or take the outputs of a store written by 'onnx-arrow "
        "run' with --actual) and compare every output with the expected one, as onnx's "
        "backend test runner does.  Prints what made the actual outputs and the outputs by "
        "status, then the first failing outputs (--show), the errors by cause and the 20 op "
        "types with the most outputs that do not match.",
        _EPILOG,
    )
    cmp.add_argument(
        "store",
        metavar="STORE",
        help="a Parquet store written by import, or a release, @onnx==VERSION (its store, "
        "built once and cached)",
    )
    offline_option(cmp)
    which_actual = backend_options(cmp)
    runner_option(which_actual)
    runtime_option(cmp)
    onnxruntime_options(cmp)
    which_actual.add_argument(
        "--actual", metavar="ACTUAL", help="a store of actual outputs written by 'onnx-arrow run'"
    )
    judging_options(cmp)
    cmp.add_argument(
        "--update-expectations",
        metavar="FILE",
        help="write FILE again with what the run showed: entries that no longer fail or "
        "find no case removed, new failures added with their cause as the reason, the rest "
        "kept byte for byte; FILE is read as --patterns too (onnx-arrow's patterns, "
        "onnxruntime's filters JSONC, burn-onnx's expectations.toml, IREE's config JSON, "
        "tract's manifests)",
    )
    cmp.add_argument(
        "--check",
        action="store_true",
        help="with --update-expectations: write nothing, print what would change, and exit "
        "1 if FILE is stale (for CI)",
    )
    cmp.add_argument(
        "--strict", action="store_true", help="an xpass fails the run, as pytest's strict xfail"
    )
    cmp.add_argument(
        "--all-cases",
        action="store_true",
        help="with --actual: an expected case ACTUAL does not hold is an error (default: left "
        "out, and counted)",
    )
    cmp.add_argument(
        "--show",
        type=whole_number(0),
        default=MAX_LISTED,
        metavar="N",
        help="print the first N failing outputs, a line each: case, output, status, worst "
        "element (expected, actual, ULPs) or the error's cause (default: %(default)s; 0: none)",
    )
    cmp.add_argument(
        "--out", metavar="REPORT.parquet", help="write the row per output to this Parquet file"
    )
    cmp.add_argument("--force", action="store_true", help="replace REPORT.parquet if it exists")
    cmp.add_argument(
        "--results",
        metavar="RESULTS",
        help="add the run to this results store (a folder of Parquet parts, made if "
        "missing; 'onnx-arrow results RESULTS' reads it), atomically; a run of the same "
        "corpus, runtime, version and options already there is not added again",
    )
    cmp.add_argument(
        "--again",
        action="store_true",
        help="with --results: add the run even if one of its "
        "identity is there (as its next attempt)",
    )


def load() -> Command:
    """The command's work, imported now (onnx, the store and the backend with it)."""
    from onnx_arrow.cli.work.compare import run

    return run
