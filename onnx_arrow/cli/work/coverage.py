"""``onnx-arrow coverage``: a corpus's coverage of the ONNX specification, rendered as
text, JSON or CSV, to stdout or a file."""

from __future__ import annotations

import argparse
import io
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from onnx_arrow.cli._shared import EXIT_OK
from onnx_arrow.cli.work._shared import check_file_target, print_fields, reading
from onnx_arrow.corpus.releases import is_release, open_release_store
from onnx_arrow.corpus.tree import atomic_file
from onnx_arrow.coverage import Coverage, coverage
from onnx_arrow.text import printable

__all__ = ["render", "run"]


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Count and render STORE's coverage."""
    if args.out is not None:
        reading_paths = [] if is_release(args.store) else [Path(args.store)]
        check_file_target(
            Path(args.out), force=args.force, what="the coverage", reading=reading_paths
        )
    if is_release(args.store):
        with (
            open_release_store(args.store, offline=args.offline) as store_path,
            reading(store_path),
        ):
            found = coverage(store_path, cases=args.case)
    else:
        with reading(args.store):
            found = coverage(args.store, cases=args.case)
    text = render(found, args.format)
    if args.out is None:
        out.write(text)
        return EXIT_OK
    with atomic_file(args.out, what="the coverage") as tmp:
        Path(tmp).write_text(text, encoding="utf-8")
    summary = found.summary()
    print(
        f"coverage: {args.out} ({summary['operators_covered']}/{summary['operators']} "
        f"operators, {summary['pairs_covered']}/{summary['pairs']} pairs, {args.format})",
        file=out,
    )
    return EXIT_OK


def render(found: Coverage, fmt: str) -> str:
    """The coverage as ``text`` (the figures and the uncovered lists), ``json`` (the same,
    and every operator and pair with its cases) or ``csv`` (the ``types`` table, its
    cases separated by spaces)."""
    if fmt == "json":
        made = found.summary()
        made["operator_rows"] = found.operators.to_pylist()
        made["type_rows"] = found.types.to_pylist()
        return json.dumps(made, indent=1, sort_keys=True) + "\n"
    if fmt == "csv":
        return _csv(found.types)
    if fmt == "text":
        return _text(found.summary())
    raise ValueError(f"no coverage format {fmt!r}; the formats are text, json and csv")


def _csv(table: pa.Table) -> str:
    cases = pc.binary_join(table.column("cases"), " ")
    flat = table.set_column(table.schema.get_field_index("cases"), "cases", cases)
    sink = io.BytesIO()
    pacsv.write_csv(flat.replace_schema_metadata(None), sink)
    return sink.getvalue().decode("utf-8")


def _share(part: int, whole: int) -> str:
    return f"{part} / {whole}" + (f" ({100 * part / whole:.1f}%)" if whole else "")


def _text(summary: Mapping[str, Any]) -> str:
    out = io.StringIO()
    opsets = ", ".join(f"{d} {v}" for d, v in summary["opsets"].items()) or "(none)"
    lines: list[tuple[str, object]] = [
        ("corpus", f"onnx {summary['corpus_onnx'] or '(not recorded)'}"),
        ("schemas", f"onnx {summary['schemas_onnx']} (onnx.defs)"),
        ("opsets", printable(opsets)),
        ("cases", summary["cases"]),
        ("operators", f"{_share(summary['operators_covered'], summary['operators'])} covered"),
        ("(op, type) pairs", f"{_share(summary['pairs_covered'], summary['pairs'])} covered"),
        ("unknown operators", len(summary["unknown_operators"])),
        ("disallowed types", len(summary["disallowed_types"])),
    ]
    print_fields(lines, out)
    other = summary["other_versions"]
    unknown = summary["unknown_operators"]
    sections = [
        (
            "uncovered operators",
            len(summary["uncovered_operators"]),
            [
                f"{op} (cases exercise {', '.join(other[op])})" if op in other else op
                for op in summary["uncovered_operators"]
            ],
        ),
        (
            "uncovered (operator, type) pairs",
            len(summary["uncovered_pairs"]),
            _grouped(summary["uncovered_pairs"]),
        ),
        (
            "unknown operators (no schema in the installed onnx)",
            len(unknown),
            [f"{u['operator']} ({u['schema']}, {u['cases']} cases)" for u in unknown],
        ),
        (
            "types a constraint does not allow",
            len(summary["disallowed_types"]),
            summary["disallowed_types"],
        ),
    ]
    for title, count, items in sections:
        if items:
            print(f"\n{title} ({count}):", file=out)
            for item in items:
                print(printable(f"  {item}"), file=out)
    return out.getvalue()


def _grouped(pairs: list[str]) -> list[str]:
    """``Abs-13 T tensor(int8)`` lines as one line per operator and constraint."""
    groups: dict[str, list[str]] = {}
    for pair in pairs:
        head, _, kind = pair.rpartition(" ")
        groups.setdefault(head, []).append(kind)
    return [f"{head}: {', '.join(kinds)}" for head, kinds in groups.items()]
