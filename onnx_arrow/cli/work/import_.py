"""``onnx-arrow import``: a corpus into one Parquet store or a dataset store, and the
summary it prints."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TextIO

from onnx_arrow.cli._shared import EXIT_OK, PROG
from onnx_arrow.cli.work._shared import (
    DataError,
    bytes_text,
    check_file_target,
    count_cases,
    default_total,
    print_fields,
    starting,
    warnings_as_lines,
)
from onnx_arrow.cli.work.progress import Progress
from onnx_arrow.core.model import onnx_version
from onnx_arrow.corpus import (
    Case,
    FolderSource,
    WriteOptions,
    default_source,
    write_store,
)
from onnx_arrow.corpus.releases import (
    folder_provenance,
    installed_provenance,
    is_release,
    parse_release,
    release_source,
)

__all__ = ["run"]


def _default_corpus_name() -> str:
    return f"the built-in default corpus (onnx {onnx_version()}: node suite, wheel model tests)"


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Import SRC (or the default corpus) into OUT and print the summary; exit status 0."""
    with warnings_as_lines():
        return _run(args, out)


def _run(args: argparse.Namespace, out: TextIO) -> int:
    with contextlib.ExitStack() as stack:
        return _import(args, out, stack)


def _import(args: argparse.Namespace, out: TextIO, stack: contextlib.ExitStack) -> int:
    out_path = Path(args.out)
    release = is_release(args.src) or args.src is None
    if args.partition_by == "onnx_version" and not release:
        args.subparser.error("--partition-by onnx_version takes a release: @onnx or @onnx==VERSION")
    # a release appended to a dataset store of releases, or to nothing yet, gets a folder
    by_version = release and (
        args.partition_by == "onnx_version"
        or (args.append and (_has_versions(out_path) or _starts_releases(args.src, out_path)))
    )
    as_dataset = (
        args.dataset
        or args.append
        or args.partition_by is not None
        or (args.part_bytes is not None or args.part_cases is not None)
    )
    if args.append and args.force:
        args.subparser.error("--append adds to OUT and --force replaces it: give one")
    if by_version:  # checked before any work: the release's version is in its name
        version = parse_release(args.src or "@onnx").version or onnx_version()
        out_path = _version_folder(out_path, version, force=args.force)
    elif not as_dataset:
        check_file_target(out_path, force=args.force)
    if args.src is not None and not release:
        src = Path(args.src)
        if _is_within(out_path, src):
            args.subparser.error(
                f"OUT {args.out} is inside SRC {args.src}; write the store outside the corpus"
            )
        folder = FolderSource(src, cases=args.case)
        source: Iterable[Case] = folder
        total: int | Callable[[], int | None] = count_cases(src)
        if args.case is not None:  # the cases chosen, listed now: a pattern that finds none
            total = sum(1 for _ in folder.refs())  # is refused before any work
        described = str(src)
        prov = folder_provenance(src)
    else:
        spec = parse_release(args.src or "@onnx")
        if spec.installed:
            source, prov = default_source(cases=args.case), installed_provenance()
        else:
            source, prov = stack.enter_context(
                release_source(spec, cases=args.case, offline=args.offline)
            )
        described = (
            _default_corpus_name() if spec.installed else f"onnx {prov['onnx']} ({_origin(prov)})"
        )
        if args.case is not None:
            total = _unknown
        elif spec.installed:
            total = default_total(source)
        else:
            total = count_cases(Path(getattr(source, "root", ".")))
    if args.case is not None:
        described += ", the cases matching " + ", ".join(map(repr, args.case)) + ","
    levels = (
        {}
        if args.compression_level is None
        else {
            "compression_level": args.compression_level,
            "float_compression_level": args.compression_level,
        }
    )
    options = WriteOptions(
        **levels,
        float_encoding=args.float_encoding,
        # a release's files are what it shipped: one that does not decode is kept as bytes
        keep_undecodable=args.keep_undecodable or (release and prov.get("source") != "installed"),
        row_group_cases=args.row_group_cases,
        provenance=prov,
        dedup=not args.no_dedup,
    )
    with Progress("importing", "cases", start=starting(args.src), total=total) as progress:
        step = progress.step
        if as_dataset:
            # imported here: a Parquet store's import never reads a store (Store) back
            from onnx_arrow.corpus import write_dataset

            summary = write_dataset(
                source,
                out_path,
                options=options,
                part_bytes=args.part_bytes,
                part_cases=args.part_cases,
                by_kind=True if args.partition_by == "kind" else None,  # None: as OUT's
                append=args.append and not by_version,
                replace=args.force,
                progress=lambda c: step(c.name),
                jobs=args.jobs,
            )
        else:
            summary = write_store(
                source, out_path, options=options, progress=lambda c: step(c.name), jobs=args.jobs
            )
    source_bytes = summary["source_bytes"]
    for warning in summary["warnings"]:
        print(f"{PROG}: warning: {warning}", file=sys.stderr)
    ratio = summary["bytes"] / source_bytes if source_bytes else 0.0
    lines: list[tuple[str, object]] = [
        ("  cases", summary["cases"]),
        ("  files", summary["files"]),
        ("  rows", summary["rows"]),
        ("  row groups", summary["row_groups"]),
    ]
    if as_dataset:
        parts = len(summary["parts"])
        lines.append(("  parts", f"{parts} added" if args.append else parts))
    if by_version:
        lines.append(("  onnx_version", f"{prov['onnx']} (the folder {out_path.name})"))
    lines += [
        (
            "  store size",
            bytes_text(summary["bytes"]) + (" (the parts added)" if args.append else ""),
        ),
        ("  source", bytes_text(source_bytes)),
        ("  ratio", f"{ratio:.3f} (store size / source bytes)"),
    ]
    if summary["warnings"]:
        said = len(summary["warnings"])
        lines.append(("  warnings", f"{said} file{'s' * (said != 1)}, said on stderr"))
    print(f"imported {described} into {out_path}", file=out)
    print_fields(lines, out)
    return EXIT_OK


def _origin(prov: dict[str, Any]) -> str:
    """Where a release's data came from, in a few words."""
    wheel = prov.get("wheel") or {}
    made = f"the wheel {wheel.get('file')}"
    generator = prov.get("generator")
    if generator and prov.get("source") != "installed":
        made += f", its node suite generated with numpy {generator.get('numpy')}"
    return made


def _has_versions(folder: Path) -> bool:
    """Whether a folder is a dataset store of releases (``onnx_version=V`` folders)."""
    return folder.is_dir() and any(folder.glob("onnx_version=*"))


def _starts_releases(src: str | None, folder: Path) -> bool:
    """Whether ``--append`` of ``src`` to ``folder`` starts a dataset store of releases: a
    release named by its version (not the installed onnx) appended to no store yet."""
    if src is None or parse_release(src).installed:
        return False
    return not folder.exists() or (folder.is_dir() and not any(folder.iterdir()))


def _version_folder(out: Path, version: str, *, force: bool) -> Path:
    """The folder of ``version`` in the dataset store of releases ``out`` (created if
    missing); a version it holds already is refused unless ``force``."""
    if not out.parent.is_dir():
        raise DataError(f"{out}: the folder to write it into, {out.parent}, does not exist")
    if out.exists() and not out.is_dir():
        raise DataError(f"{out}: exists and is not a folder; a dataset store of releases is one")
    from onnx_arrow.corpus.release_dataset import VERSION_FOLDER

    target = out / VERSION_FOLDER.format(version)
    if target.exists() and any(target.iterdir()) and not force:
        raise DataError(
            f"{target}: the store holds onnx {version} already; pass --force to replace it"
        )
    out.mkdir(exist_ok=True)
    return target


def _unknown() -> None:
    """The number of cases the patterns choose in the default corpus: known at the end."""


def _is_within(path: Path, folder: Path) -> bool:
    return path.resolve().is_relative_to(folder.resolve())
