"""``onnx-arrow run``: a backend over every case of a store, its outputs written as a
store; and the backend the options name, which ``compare`` runs too."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any, TextIO

from onnx_arrow import compare
from onnx_arrow.cli._shared import EXIT_OK, PROG, settle_timeout
from onnx_arrow.cli.work._shared import (
    bytes_text,
    check_file_target,
    print_fields,
    warnings_as_lines,
)
from onnx_arrow.cli.work.progress import Progress
from onnx_arrow.compare.environments import (
    EnvironmentBackend,
    environment_folder,
    is_package_spec,
    parse_package_spec,
)
from onnx_arrow.compare.isolation import backend_to_run
from onnx_arrow.compare.ort import parse_session_option
from onnx_arrow.corpus import Store

__all__ = ["backend", "run"]


def backend(args: argparse.Namespace) -> Any:
    """The backend --backend names; settles --timeout (``args.timeout``) as it takes it."""
    settle_timeout(args)
    if getattr(args, "runner", None) is not None:  # a command per data set, through files
        if args.backend_logs:
            args.subparser.error(
                "--backend-logs applies to --backend; --runner's stderr is "
                "quoted in the errors it causes"
            )
        if args.providers is not None or args.session_option:
            args.subparser.error("--providers and --session-option apply to --backend onnxruntime")
        if args.in_process:
            args.subparser.error("--in-process applies to --backend; --runner runs a process")
        try:
            return compare.CommandRunner(args.runner, timeout=args.timeout)
        except compare.CompareError as exc:
            args.subparser.error(f"--runner: {exc.message}")
    if args.in_process and (args.jobs > 1 or args.engine is not None):
        args.subparser.error(
            "--in-process runs the backend in this process: not with --jobs or --engine"
        )
    if args.backend_logs:  # read by the backend where it runs: workers inherit it
        os.environ[compare.ORT_LOG_SEVERITY_VARIABLE] = str(compare.ORT_DEFAULT_LOG_SEVERITY)
    if is_package_spec(args.backend):  # a version from the index, in an environment
        return _in_environment(args)
    try:
        providers = args.providers  # "A,B": OnnxruntimeBackend splits it
        options = dict(parse_session_option(text) for text in args.session_option)
        if (providers is not None or options) and args.backend != "onnxruntime":
            args.subparser.error("--providers and --session-option apply to --backend onnxruntime")
        if providers is not None or options:
            return compare.resolve_backend(
                args.backend or "reference", providers=providers, session_options=options
            )
        return backend_to_run(
            args.backend or "reference",
            in_process=args.in_process,
            jobs=args.jobs,
            engine=args.engine,
        )
    except compare.CompareError as exc:
        args.subparser.error(exc.message)


def _in_environment(args: argparse.Namespace) -> Any:
    """The backend ``--backend PACKAGE==VERSION`` names, its environment made (said on
    stderr: pip may take a minute) or taken from the cache, and its backend started."""
    if args.providers is not None or args.session_option:
        args.subparser.error("--providers and --session-option apply to --backend onnxruntime")
    try:
        spec = parse_package_spec(args.backend)
    except compare.BackendSpecError as exc:
        args.subparser.error(exc.message)
    folder = environment_folder(spec)
    offline = bool(getattr(args, "offline", False))
    if not offline and (folder is None or not folder.exists()):
        where = "for this run (the cache is off)" if folder is None else f"once, into {folder}"
        print(
            f"{PROG}: making the environment of {spec} {where}: pip install "
            f"{' '.join(spec.requirements())}",
            file=sys.stderr,
        )
    backend = EnvironmentBackend(spec, offline=offline)
    try:
        return backend.check()
    except compare.BackendSpecError as exc:
        args.subparser.error(exc.message)


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Run the backend over STORE, write OUT and print its counts; exit status 0."""
    chosen = backend(args)
    out_path = Path(args.out)
    store = Store(args.store)
    check_file_target(out_path, force=args.force, reading=[store.path])
    total = len(compare.select_cases(store, args.case))
    with warnings_as_lines(), Progress("running", "cases", total=total) as progress:
        counts = compare.write_actual(
            store,
            chosen,
            out_path,
            cases=args.case,
            timeout=args.timeout,
            progress=progress.step,
            jobs=args.jobs,
            engine=args.engine,
            runtime=args.runtime,
            in_process=args.in_process,
        )
    print_fields(
        [
            ("store", out_path),
            ("backend", _backend_text(args)),
            ("cases", counts["cases"]),
            ("data sets", counts["data_sets"]),
            ("outputs", counts["outputs"]),
            ("backend errors", f"{counts['errors']} data sets"),
            (
                "skipped",
                f"{counts['skipped']} (cases without a model or data sets, data sets "
                "without expected outputs)",
            ),
            ("kept as bytes", f"{counts['kept_as_bytes']} files (not decodable as declared)"),
            ("size", bytes_text(counts["bytes"])),
        ],
        out,
    )
    return EXIT_OK


def _backend_text(args: argparse.Namespace) -> str:
    """What ran, for the summary: the backend's name, or the runner's command."""
    runtime = "" if args.runtime is None else f" (runtime {args.runtime})"
    if getattr(args, "runner", None) is not None:
        return f"runner {args.runner}{runtime}"
    return f"{args.backend or 'reference'}{runtime}"
