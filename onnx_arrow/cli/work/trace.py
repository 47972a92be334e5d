"""``onnx-arrow trace``: a case traced on two backends into a trace store, the verdict
printed (the first divergent node, its worst elements, what it explains) and, asked for,
that node written as a case folder."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path
from typing import Any, TextIO

from onnx_arrow.cli._shared import EXIT_DATA_ERROR, EXIT_OK, settle_timeout
from onnx_arrow.cli.work._shared import check_file_target, print_fields
from onnx_arrow.cli.work.progress import Progress
from onnx_arrow.compare import BackendSpecError, CommandRunner, CompareError, Plan, resolve_backend
from onnx_arrow.compare.ort import parse_session_option
from onnx_arrow.corpus import Store
from onnx_arrow.trace import trace

__all__ = ["run"]


def _plural(n: int, what: str) -> str:
    return f"{n} {what}" if n == 1 else f"{n} {what}s"


def _traced(meta: dict[str, Any]) -> str:
    """``106 values of 105 nodes, in 2 chunks``."""
    return (
        f"{_plural(meta['values'], 'value')} of {_plural(meta['nodes'], 'node')}, "
        f"in {_plural(meta['chunks'], 'chunk')}"
    )


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Trace the case, print the verdict; exit status 1 if a value diverges."""
    providers = args.providers  # "A,B": OnnxruntimeBackend splits it
    options = dict(parse_session_option(text) for text in args.session_option)
    ort = providers is not None or bool(options)
    named = args.backend.strip() if args.backend is not None else None
    if ort and "onnxruntime" not in (named, args.against.strip()):
        args.subparser.error(
            "--providers and --session-option apply to onnxruntime: name it as --backend "
            "or --against"
        )
    if args.runner is None and args.timeout is not None:
        args.subparser.error("--timeout applies to --runner")
    settle_timeout(args)
    try:
        side_a, side_b = (
            resolve_backend(name, providers=providers, session_options=options)
            if ort and name.strip() == "onnxruntime"
            else resolve_backend(name)
            for name in (args.backend or "reference", args.against)
        )
        if args.runner is not None:
            side_a = CommandRunner(args.runner, timeout=args.timeout)
    except BackendSpecError as exc:
        args.subparser.error(exc.message)
    except CompareError as exc:  # the runner's command
        args.subparser.error(f"--runner: {exc.message}")
    store = Store(args.store)
    default = args.case.strip("/").replace("/", "_") + ".trace.parquet"
    out_path = Path(args.out or default)
    check_file_target(out_path, force=args.force, what="the trace", reading=[store.path])
    with Progress("tracing", "chunks", start=f"running {args.case}") as progress:
        found = trace(
            store,
            args.case,
            side_a,
            out_path,
            against=side_b,
            data_set=args.data_set,
            chunk=args.chunk,
            repro=args.repro,
            plan=Plan(
                rtol=args.rtol, atol=args.atol, max_ulp=args.max_ulp, ulp_floor=args.ulp_floor
            ),
            progress=progress.step,
            runtime=args.runtime,
        )
    meta = found.metadata
    fed = (
        "inputs made as onnx's runner makes them"
        if meta["data_set"] is None
        else f"data set {meta['data_set']}"
    )
    rule = (
        f"ulp, at most {meta['max_ulp']} (floor {meta['ulp_floor']:g} against 0)"
        if meta["rule"] == "ulp"
        else f"rtol {meta['rtol']:g}, atol {meta['atol']:g} ({meta['tolerance_source']})"
    )
    print_fields(
        [
            ("trace", out_path),
            ("case", f"{meta['case']}, {fed}"),
            ("backend", _side(meta["backend"])),
            ("against", _side(meta["against"])),
            ("rule", rule),
            ("traced", _traced(meta)),
            ("untyped", f"{len(meta['untyped'])} (declared by name, typed by the backend)"),
            ("untraced", len(meta["untraced"])),
        ],
        out,
    )
    for line in meta["untraced"]:
        print(f"  not traced: {line}", file=out)
    print(file=out)
    for line in found.verdict.lines():
        print(line, file=out)
    if found.repro is not None:
        again = (
            f"--runner {shlex.quote(args.runner)}" if args.runner else f"--backend {args.backend}"
        )
        print(f"repro: {found.repro} (import it, then compare {again})", file=out)
    return EXIT_DATA_ERROR if found.verdict.diverging else EXIT_OK


def _side(side: dict[str, Any]) -> str:
    """A traced side in words: its name, what it runs, and the runtime given for it."""
    text = f"{side['name']} ({side['runs']})"
    if side.get("runtime_given"):
        text += f", runtime {side['runtime']}=={side['runtime_version']}"
    return text
