"""What each ``onnx-arrow`` command does, once :mod:`onnx_arrow.cli` has parsed its
arguments: :data:`COMMANDS` maps a command's name to its function of those arguments
and the output stream, returning the exit status.

Apart from the parser so that ``onnx-arrow --help`` and a usage error import neither
onnx nor ml_dtypes nor the store's modules; ``main`` imports this module only to run a
command.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import stat
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Final, TextIO

import ml_dtypes
import numpy as np
import onnx
import pyarrow as pa
import pyarrow.compute as pc
from google.protobuf.message import DecodeError
from onnx import ModelProto, TensorProto, TypeProto, helper, numpy_helper

import onnx_arrow
from onnx_arrow._summary import DECODED_FLOATS, opsets, size, statistics, store_facts
from onnx_arrow.cli import (
    DEFAULT_TIMEOUT,
    EXIT_DATA_ERROR,
    EXIT_OK,
    MAX_LISTED,
    PROG,
    print_error,
)
from onnx_arrow.core.model import ArrowKind, DType, describe_type, dtype_of, dtype_of_numpy
from onnx_arrow.corpus import (
    Case,
    CorpusFile,
    FolderSource,
    NodeSuiteSource,
    Store,
    WriteOptions,
    default_source,
    export_store,
    write_dataset,
    write_store,
)
from onnx_arrow.corpus.rows import declared_type_text
from onnx_arrow.corpus.sources import (
    CorpusError,
    declared_type,
    graph_values,
    read_regular_file,
    value_slot,
)
from onnx_arrow.corpus.tree import check_file_target, write_tree
from onnx_arrow.errors import ExternalDataError, OnnxArrowError

__all__ = ["COMMANDS", "example_tensors"]


class _DataError(OnnxArrowError):
    """A problem with the user's files that no other onnx-arrow error names (an output
    that exists, a model that does not parse): ``main`` prints it as one line and exits
    with status 1."""


_PREVIEW_ELEMENTS: Final = 6
_PROGRESS_INTERVAL: Final = 0.1  # seconds between progress updates: at most 10 a second
_VALUE_FILE: Final = re.compile(r"(input|output)_(\d+)\.pb")
_DATA_SET: Final = re.compile(r"test_data_set_\d+")


# --- example --------------------------------------------------------------------


def example_tensors() -> list[TensorProto]:
    """The built-in example: six small tensors, made the ways ONNX tools make them."""
    image = numpy_helper.from_array(
        (np.arange(12, dtype=np.float32) / 8).reshape(1, 3, 2, 2), "image"
    )
    image.doc_string = "an NCHW image batch"
    token_ids = helper.make_tensor("token_ids", TensorProto.INT64, [5], [101, 7592, 2088, 999, 102])
    weights = numpy_helper.from_array(
        np.array([[0.5, -1.25], [3.140625, np.inf]], dtype=ml_dtypes.bfloat16), "weights"
    )
    scales = numpy_helper.from_array(
        np.array([0.5, -2.0, 448.0, np.nan], dtype=ml_dtypes.float8_e4m3fn), "scales"
    )
    mask = helper.make_tensor(
        "mask", TensorProto.BOOL, [2, 3], [True, False, True, True, True, False]
    )
    labels = numpy_helper.from_array(
        np.array([b"cat", "caf\u00e9".encode(), b"\xff\xfe"], dtype=object), "labels"
    )
    return [image, token_ids, weights, scales, mask, labels]


def _example(out: TextIO) -> int:
    tensors = example_tensors()
    print(f"{PROG} {onnx_arrow.__version__}: built-in example, TensorProto -> Arrow", file=out)
    arrays = []
    for tensor in tensors:
        arr = onnx_arrow.to_arrow([tensor], exact=True)
        arrays.append(arr)
        row = dtype_of(tensor.data_type)
        values = onnx_arrow.to_pylist(arr, strings="bytes")[0]
        print(file=out)
        print(f"{tensor.name}", file=out)
        print(f"  onnx   {row.name} {list(tensor.dims)}", file=out)
        print(f"  arrow  {describe_type(arr.value.type)}", file=out)
        print(f"  values {_preview(values, row)}", file=out)
    print(file=out)
    identical = 0
    for tensor, arr in zip(tensors, arrays, strict=True):
        back = onnx_arrow.from_arrow(arr)
        if len(back) == 1 and back[0].SerializeToString() == tensor.SerializeToString():
            identical += 1
        else:
            print(f"{tensor.name}: the round trip changed the message", file=out)
    print(f"round trip: {identical}/{len(tensors)} byte-identical", file=out)
    return EXIT_OK if identical == len(tensors) else EXIT_DATA_ERROR


def _preview(values: np.ndarray[Any, Any], row: DType) -> str:
    flat = values.reshape(-1)
    shown = [_format_element(x, row) for x in flat[:_PREVIEW_ELEMENTS]]
    if flat.size > _PREVIEW_ELEMENTS:
        shown.append(f"... ({flat.size} elements)")
    return "[" + ", ".join(shown) + "]"


def _format_element(x: Any, row: DType) -> str:
    if row.arrow_kind is ArrowKind.BINARY:
        return repr(bytes(x))
    if row.arrow_kind is ArrowKind.BOOL8:
        return str(bool(x))
    if row.arrow_kind is ArrowKind.COMPLEX:
        return str(complex(x))
    if row.arrow_kind in DECODED_FLOATS:
        return str(np.float32(x))  # exact: every such value is a float32
    if row.is_floating:
        return str(x)  # numpy's shortest repr that reads back as the same value
    return str(int(x))


# --- info -----------------------------------------------------------------------


def _info(
    path: str, model: str | None, input_key: str | None, output_key: str | None, out: TextIO
) -> int:
    if model is not None:
        # _run_info has checked that --model comes with --input or --output
        io, key = ("input", input_key) if input_key is not None else ("output", output_key)
        declared, type_proto = _declared_type(model, io, key or "")
        return _info_value(path, declared, type_proto, out)
    if Path(path).suffix == ".onnx":
        return _info_model(path, out)
    found = _case_folder_type(Path(path))
    if found is not None:
        return _info_value(path, *found, out)
    return _info_value(path, None, None, out)


def _case_folder_type(path: Path) -> tuple[str, TypeProto] | None:
    """The declared type of ``test_data_set_N/input_K.pb`` (or ``output_K.pb``) from the
    ``model.onnx`` of the case folder it sits in; None for a file outside one."""
    m = _VALUE_FILE.fullmatch(path.name)
    model_file = path.parent.parent / "model.onnx"
    if m is None or not _DATA_SET.fullmatch(path.parent.name) or not model_file.is_file():
        return None
    io, index = m.group(1), int(m.group(2))
    model = _read_model(str(model_file))
    type_proto = declared_type(model, io, index)
    if type_proto is None:
        raise _DataError(
            f"{path}: its case folder's model {model_file} declares no {io} {index}; pass "
            "--model MODEL.onnx --input K (or --output K) to type it"
        )
    name = graph_values(model, io)[index].name
    return f"{model_file}: {io} {index} {name!r} (its case folder's model)", type_proto


def _info_value(path: str, declared: str | None, type_proto: TypeProto | None, out: TextIO) -> int:
    try:
        arr = onnx_arrow.read_pb(path, type_proto, base_dir=Path(path).parent, exact=True)
    except OnnxArrowError as exc:
        if type_proto is None and _is_readable(path) and not isinstance(exc, ExternalDataError):
            # the bytes, not the file, are the problem: say what was tried and what to do
            raise _DataError(_not_a_tensor(path, exc)) from None
        raise (exc if path in str(exc) else exc.at(path)) from None
    message = onnx_arrow.from_arrow(arr)[0]
    value = onnx_arrow.to_pylist(arr, strings="bytes")[0]
    lines: list[tuple[str, object]] = [("file", path)]
    lines.append(("typed by", declared or "(no model: read as a TensorProto)"))
    lines.append(("name", message.name or "(none)"))
    if type_proto is not None and type_proto.WhichOneof("value") != "tensor_type":
        lines += [
            ("declared", declared_type_text(type_proto)),
            ("value", _describe(value, type_proto)),
            ("arrow", describe_type(arr.value.type)),
        ]
        _print_fields(lines, out)
        return EXIT_OK
    row = dtype_of_numpy(value.dtype)
    lines += [
        ("dtype", f"{row.name} ({row.onnx})"),
        ("dims", str(list(value.shape))),
        ("arrow", describe_type(arr.value.type)),
        ("elements", str(value.size)),
    ]
    lines += statistics(value)
    _print_fields(lines, out)
    return EXIT_OK


def _not_a_tensor(path: str, exc: OnnxArrowError) -> str:
    """What to say of a file that does not read as a TensorProto, with how to type it."""
    fix = (
        "a .pb of a sequence, map, optional or sparse tensor is read as the type a model "
        "declares: run info on its case folder, put it at test_data_set_N/ in one, or pass "
        "--model MODEL.onnx --input K (or --output K)"
    )
    if _looks_like_text(path):
        return (
            f"{path}: a text file, not a protobuf message; info takes a .pb value file, a "
            ".onnx model, a store (.parquet) or a case folder"
        )
    detail = str(exc).replace(f"{path}: ", "", 1)
    return f"{path}: not a TensorProto, which info reads a .pb as without a model ({detail}); {fix}"


def _is_readable(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode) and os.access(path, os.R_OK)
    except OSError:
        return False


def _looks_like_text(path: str) -> bool:
    """Whether a file starts with printable UTF-8 text (protobuf tags are mostly not)."""
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 3:  # not just a character cut at the end of the head
            return False
        text = head[: exc.start].decode("utf-8")
    return bool(text) and all(c.isprintable() or c in "\t\n\r" for c in text)


def _info_model(path: str, out: TextIO) -> int:
    """A model's declared inputs and outputs, opsets and operators."""
    model = _read_model(path)
    lines: list[tuple[str, object]] = [
        ("model", f"{path}, {_size(os.path.getsize(path))}"),
        ("ir_version", model.ir_version),
        ("producer", f"{model.producer_name} {model.producer_version}".strip() or "(none)"),
        ("opsets", opsets(model)),
    ]
    lines += _io_lines(model)
    counts: dict[str, int] = {}
    for node in model.graph.node:
        op = f"{node.domain}.{node.op_type}" if node.domain else node.op_type
        counts[op] = counts.get(op, 0) + 1
    lines.append(("nodes", len(model.graph.node)))
    lines.append(("operators", ", ".join(f"{op} {n}" for op, n in sorted(counts.items()))))
    lines.append(("initializers", len(model.graph.initializer)))
    if model.functions:
        lines.append(("functions", ", ".join(f.name for f in model.functions)))
    _print_fields(lines, out)
    return EXIT_OK


def _io_lines(model: ModelProto) -> list[tuple[str, object]]:
    """A line per declared input and output, as info shows a model and a case."""
    lines: list[tuple[str, object]] = []
    for io in ("input", "output"):
        infos = graph_values(model, io)
        weights = len(model.graph.input) - len(infos) if io == "input" else 0
        left_out = f" (and {weights} initializers listed as inputs)" if weights else ""
        lines.append((f"{io}s", f"{len(infos)}{left_out}"))
        lines += [
            (f"  {k} {info.name}", declared_type_text(info.type)) for k, info in enumerate(infos)
        ]
    return lines


def _declared_type(model_path: str, io: str, key: str) -> tuple[str, TypeProto]:
    model = _read_model(model_path)
    infos = graph_values(model, io)
    names = [info.name for info in infos]
    if key in names:
        index = names.index(key)
    elif key.isdigit() and int(key) < len(names):
        index = int(key)
    else:
        listed = ", ".join(f"{i}: {n!r}" for i, n in enumerate(names)) or "none"
        raise _DataError(f"{model_path}: graph has no {io} {key!r}; its {io}s are {listed}")
    return f"{model_path}: {io} {index} {names[index]!r}", infos[index].type


def _read_model(path: str) -> ModelProto:
    """The model in a file; a FIFO or device is an error, never a hang."""
    # A path named on the command line may be a symlink (read_regular_file refuses one,
    # as a corpus must not hold any): the file it names is read, with the same checks.
    try:
        data = read_regular_file(os.path.realpath(path), where=path, fix="pass an .onnx model file")
    except CorpusError as exc:
        raise _DataError(str(exc)) from None
    try:
        return ModelProto.FromString(data)
    except DecodeError as exc:
        raise _DataError(f"{path}: not an ONNX model: {exc}") from None


# --- progress -------------------------------------------------------------------


def _is_terminal(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or closed
        return False


class _Progress:
    """A count on stderr, rewritten in place at most ten times a second.

    Silent unless stderr is a terminal, so logs and pipes get nothing.  The line
    is cleared on the way out, also on an error or Ctrl-C.
    """

    def __init__(
        self,
        verb: str,
        unit: str,
        *,
        start: str = "",
        total: int | Callable[[], int | None] | None = None,
    ) -> None:
        self.verb = verb
        self.unit = unit
        self.start = start
        self.total = total
        self.stream = sys.stderr
        self.enabled = _is_terminal(self.stream)
        self.count = 0
        self._last = 0.0
        self._width = 0
        self._first = 0.0  # when the first step came: the rate counts from there

    def __enter__(self) -> _Progress:
        if self.enabled:
            self._show(self.start, count=False)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self.enabled and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()

    def step(self, name: str) -> None:
        """Count one more case or file; ``name`` is shown beside the count."""
        self.count += 1
        if self.count == 1:
            self._first = time.monotonic()
        if self.enabled and time.monotonic() - self._last >= _PROGRESS_INTERVAL:
            self._show(name)

    def line(self, name: str, *, count: bool = True) -> str:
        """The progress line: ``importing: 120 of 2042 cases, 85/s, 23 s left  node/test_abs``."""
        if not count:
            return f"{self.verb}: {name}".rstrip()
        total = self.total() if callable(self.total) else self.total
        counted = f"{self.count}" if total is None else f"{self.count} of {total}"
        counted += f" {self.unit}"
        elapsed = time.monotonic() - self._first
        if self.count > 1 and elapsed > 0:
            rate = (self.count - 1) / elapsed
            counted += f", {rate:.0f}/s" if rate >= 10 else f", {rate:.1f}/s"
            if total is not None and total > self.count and rate > 0:
                counted += f", {_duration((total - self.count) / rate)} left"
        return f"{self.verb}: {counted}  {name}".rstrip()

    def _show(self, name: str, *, count: bool = True) -> None:
        columns = shutil.get_terminal_size().columns
        text = self.line(name, count=count)[: max(columns - 1, 1)]
        self.stream.write("\r" + text.ljust(self._width))
        self.stream.flush()
        self._width = len(text)
        self._last = time.monotonic()


def _duration(seconds: float) -> str:
    """``42 s``, ``3 min 5 s``, ``1 h 2 min``."""
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60} s"
    return f"{whole // 3600} h {whole % 3600 // 60} min"


def _starting(src: str | None) -> str:
    """What the first seconds go to: the node suite is built whole before its first case."""
    return "building the node suite of the installed onnx" if src is None else f"reading {src}"


def _size(nbytes: int) -> str:
    """A size in bytes, and in KiB, MiB or GiB when large: ``7271830 bytes (6.9 MiB)``."""
    return f"{nbytes} bytes" if nbytes < 1024 else f"{nbytes} bytes ({size(nbytes)})"


def _print_fields(lines: Sequence[tuple[str, object]], out: TextIO) -> None:
    width = max(len(key) for key, _ in lines)
    for key, value in lines:
        print(f"{key:<{width}}  {value}".rstrip(), file=out)


# --- import ---------------------------------------------------------------------


def _default_corpus_name() -> str:
    return f"the built-in default corpus (onnx {onnx.__version__}: node suite, wheel model tests)"


def _run_import(args: argparse.Namespace, out: TextIO) -> int:
    out_path = Path(args.out)
    if args.src is not None:
        src = Path(args.src)
        if _is_within(out_path, src):
            args.subparser.error(
                f"OUT {args.out} is inside SRC {args.src}; write the store outside the corpus"
            )
        source: Iterable[Case] = FolderSource(src)
        total: int | Callable[[], int | None] = _count_cases(src)
        described = str(src)
    else:
        source = default_source()
        total = _default_total(source)
        described = _default_corpus_name()
    as_dataset = (
        args.dataset
        or args.append
        or args.partition_by is not None
        or (args.part_bytes is not None or args.part_cases is not None)
    )
    if args.append and args.force:
        args.subparser.error("--append adds to OUT and --force replaces it: give one")
    if not as_dataset:
        _check_file_target(out_path, force=args.force)
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
        keep_undecodable=args.keep_undecodable,
        row_group_cases=args.row_group_cases,
    )
    with _Progress("importing", "cases", start=_starting(args.src), total=total) as progress:
        step = progress.step
        if as_dataset:
            summary = write_dataset(
                source,
                out_path,
                options=options,
                part_bytes=args.part_bytes,
                part_cases=args.part_cases,
                by_kind=args.partition_by == "kind",
                append=args.append,
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
    lines += [
        ("  store size", _size(summary["bytes"]) + (" (the parts added)" if args.append else "")),
        ("  source", _size(source_bytes)),
        ("  ratio", f"{ratio:.3f} (store size / source bytes)"),
    ]
    if summary["warnings"]:
        lines.append(("  warnings", f"{len(summary['warnings'])} files kept as bytes (on stderr)"))
    print(f"imported {described} into {out_path}", file=out)
    _print_fields(lines, out)
    return EXIT_OK


def _count_cases(src: Path) -> int:
    """The number of cases of a corpus folder, listed before any work; a folder that
    holds no case (no ``model.onnx``, ``NAME.onnx`` or ``data.json``) is an error."""
    refs = list(FolderSource(src).refs())
    if not refs:
        raise _DataError(
            f"{src}: the folder is empty; pass a corpus folder (case folders, each with "
            "a model.onnx and test_data_set_N/ folders) or a case folder"
        )
    if all(ref.model_path is None and not _has_data_json(ref.paths) for ref in refs):
        raise _DataError(
            f"{src}: no model.onnx (nor NAME.onnx) in the folder or below it, so no test "
            "case: pass a corpus folder (case folders, each with a model.onnx and "
            "test_data_set_N/ folders) or a case folder"
        )
    return len(refs)


def _has_data_json(paths: Sequence[str]) -> bool:
    """Whether a case lists a ``data.json`` (a model that onnx downloads, ``real/``)."""
    return any(p == "data.json" or p.endswith("/data.json") for p in paths)


def _default_total(source: Iterable[Case]) -> Callable[[], int | None]:
    """The number of cases of the default corpus, known once the node suite is built."""
    parts = getattr(source, "sources", ())

    def total() -> int | None:
        counts = [getattr(p, "count", None) for p in parts]
        return None if not counts or None in counts else sum(c or 0 for c in counts)

    return total


def _is_within(path: Path, folder: Path) -> bool:
    return path.resolve().is_relative_to(folder.resolve())


def _check_file_target(
    out_path: Path, *, force: bool, what: str = "the store", reading: Sequence[Path] = ()
) -> None:
    """Refuse OUT before any work: a folder, a missing folder, a file that exists (unless
    --force), or one of the files the command reads."""
    check_file_target(out_path, what=what)
    if any(out_path.resolve() == p.resolve() for p in reading):
        raise _DataError(f"{out_path}: is a file this command reads; write to another file")
    if (out_path.exists() or out_path.is_symlink()) and not force:
        raise _DataError(f"{out_path}: exists; pass --force to replace it")


# --- export and generate ------------------------------------------------------------


def _check_folder_target(dest: Path, *, force: bool) -> None:
    if not dest.parent.is_dir():
        raise _DataError(
            f"{dest}: the folder to write it into, {dest.parent}, does not exist; create it first"
        )
    if (dest.exists() or dest.is_symlink()) and not dest.is_dir():
        raise _DataError(f"{dest}: exists and is not a folder")
    if dest.is_dir() and any(dest.iterdir()) and not force:
        raise _DataError(
            f"{dest}: the folder is not empty; choose an empty folder, or pass --force to "
            "write into it"
        )


def _run_export(args: argparse.Namespace, out: TextIO) -> int:
    dest = Path(args.dest)
    store = Store(args.store)
    _check_folder_target(dest, force=args.force)
    with (
        _Progress("exporting", "files", total=_file_count(store)) as progress,
        _reading(args.store),
    ):
        counts = export_store(
            store, dest, force=args.force, progress=lambda f: progress.step(f.path), jobs=args.jobs
        )
    print(f"exported {counts['files']} files, {_size(counts['bytes'])}, to {dest}", file=out)
    return EXIT_OK


def _file_count(store: Store) -> int:
    """The files of a store (its rows but the element rows), for progress."""
    with _reading(store.path):
        roles = store.read_columns(["role"]).column("role")
    return len(roles) - (pc.sum(pc.equal(roles, "element")).as_py() or 0)


@contextlib.contextmanager
def _reading(store: str | os.PathLike[str]) -> Iterator[None]:
    """Name the store in errors pyarrow raises while reading it (a damaged page ...)."""
    try:
        yield
    except pa.ArrowException as exc:
        raise _DataError(f"{store}: cannot read the store ({exc})") from None


def _run_generate(args: argparse.Namespace, out: TextIO) -> int:
    dest = Path(args.dest)
    _check_folder_target(dest, force=args.force)
    cases = 0

    def files() -> Iterator[CorpusFile]:
        nonlocal cases
        for case in NodeSuiteSource():
            cases += 1
            yield from case.files

    with _Progress("generating", "files", start=_starting(None)) as progress:
        counts = write_tree(
            files(), dest, force=args.force, progress=lambda f: progress.step(f.path)
        )
    print(
        f"wrote {counts['files']} files, {_size(counts['bytes'])}, of {cases} node suite "
        f"cases to {dest}",
        file=out,
    )
    return EXIT_OK


# --- verify ---------------------------------------------------------------------


def _run_verify(args: argparse.Namespace, out: TextIO) -> int:
    if args.src is not None:
        src = Path(args.src)
        total: int | Callable[[], int | None] = _count_cases(src)  # checked before any work

        def source() -> Iterable[Case]:
            return FolderSource(src)

    else:
        source = default_source
    imported = source()
    if args.src is None:
        total = _default_total(imported)
    with (
        tempfile.TemporaryDirectory(prefix="onnx-arrow-verify-store-") as store_dir,
        tempfile.TemporaryDirectory(prefix="onnx-arrow-verify-tree-") as tree_dir,
    ):
        store_path = Path(store_dir) / "corpus.parquet"
        with _Progress("importing", "cases", start=_starting(args.src), total=total) as progress:
            if args.part_cases is not None:
                store_path = Path(store_dir) / "corpus"
                summary = write_dataset(
                    imported,
                    store_path,
                    part_cases=args.part_cases,
                    by_kind=True,
                    progress=lambda c: progress.step(c.name),
                    jobs=args.jobs,
                )
            else:
                summary = write_store(
                    imported, store_path, progress=lambda c: progress.step(c.name), jobs=args.jobs
                )
        tree = Path(tree_dir) / "corpus"
        files = summary["files"]
        with _Progress("exporting", "files", total=files) as progress, _reading(store_path):
            export_store(store_path, tree, progress=lambda f: progress.step(f.path), jobs=args.jobs)
        with _Progress("comparing", "files", start=_starting(args.src), total=files) as progress:
            same, differences = _compare(source(), tree, progress)
    if not differences:
        print(
            f"{same} files byte-identical after import and export; "
            f"{summary['cases']} cases, store {_size(summary['bytes'])}",
            file=out,
        )
        return EXIT_OK
    for line in differences[:MAX_LISTED]:
        print(line, file=out)
    if len(differences) > MAX_LISTED:
        print(f"... and {len(differences) - MAX_LISTED} more differences", file=out)
    print(f"{same} files byte-identical, {len(differences)} differences", file=out)
    print_error(f"{len(differences)} differences between the source and its export from the store")
    return EXIT_DATA_ERROR


def _compare(source: Iterable[Case], tree: Path, progress: _Progress) -> tuple[int, list[str]]:
    """Compare the source's files with the tree: same paths, same bytes, nothing extra."""
    exported = set(_tree_files(tree))
    same = 0
    differences: list[str] = []
    for case in source:
        for f in case.files:
            progress.step(f.path)
            if f.path not in exported:
                differences.append(f"missing from the export: {f.path}")
                continue
            exported.discard(f.path)
            got = read_regular_file(str(tree / f.path), where=f.path)
            if got == f.data:
                same += 1
            else:
                differences.append(f"different bytes: {f.path}: {_first_difference(f.data, got)}")
    differences += [f"not in the source: {p}" for p in sorted(exported)]
    return same, differences


def _tree_files(root: Path) -> Iterator[str]:
    """The files under ``root``, sorted; a symbolic link (to a file or a folder) is an
    error, as it is in a corpus: nothing outside ``root`` is listed or read."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        rel = Path(dirpath).relative_to(root).as_posix()
        for name in dirnames + filenames:
            if os.path.islink(os.path.join(dirpath, name)):
                raise _DataError(
                    f"{os.path.join(dirpath, name)}: a symbolic link; a case folder holds "
                    "regular files and folders only (import refuses it too)"
                )
        for name in sorted(filenames):
            yield name if rel == "." else f"{rel}/{name}"


def _first_difference(expected: bytes, got: bytes) -> str:
    at = next(
        (i for i, (a, b) in enumerate(zip(expected, got, strict=False)) if a != b),
        min(len(expected), len(got)),
    )
    return f"source {len(expected)} bytes, export {len(got)} bytes, first difference at byte {at}"


# --- info on a store and on a case folder -------------------------------------------


def _run_info(args: argparse.Namespace, out: TextIO) -> int:
    path = Path(args.path)
    for_pb = args.model is not None or args.input is not None or args.output is not None
    if path.is_dir() or _is_parquet(path):
        if for_pb:
            args.subparser.error("--model, --input and --output apply to a .pb file only")
        if path.is_dir() and not _is_dataset(path):
            return _info_case(path, out)
        return _info_store(path, out)
    if (args.input is not None or args.output is not None) and args.model is None:
        args.subparser.error("--input and --output need --model")
    if args.model is not None and args.input is None and args.output is None:
        args.subparser.error("--model needs --input K or --output K")
    return _info(args.path, args.model, args.input, args.output, out)


def _is_dataset(folder: Path) -> bool:
    """A folder of Parquet parts (at its top or one level down), not a case folder."""
    if (folder / "model.onnx").exists():
        return False
    return any(True for pattern in ("*.parquet", "*/*.parquet") for _ in folder.glob(pattern))


def _is_parquet(path: Path) -> bool:
    """A ``.parquet`` name, or a regular file that starts with Parquet's magic bytes."""
    if path.suffix == ".parquet":
        return True
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            return False
        with open(path, "rb") as f:
            return f.read(4) == b"PAR1"
    except OSError:
        return False


def _info_store(path: Path, out: TextIO) -> int:
    store = Store(path)
    with _reading(path):
        facts = store_facts(store)
    lines: list[tuple[str, object]] = [
        ("store", path),
        ("format", facts.format),
        ("created by", facts.created_by),
        ("size", _size(facts.nbytes)),
        ("parts", f"{len(store.parts)} (a dataset store)" if store.path.is_dir() else 1),
        ("row groups", facts.row_groups),
        ("rows", facts.rows),
        ("cases", facts.cases),
    ]
    lines += [(f"  {kind or '(no kind)'}", n) for kind, n in facts.kinds]
    roles = facts.roles
    lines.append(("files", facts.files))
    lines += [(f"  {role}", roles[role]) for role in ("model", "value", "file") if role in roles]
    lines.append(("element rows", roles.get("element", 0)))
    lines.append(("tensors", f"{facts.tensors} (value and element rows, by dtype)"))
    lines += [(f"  {name}", n) for name, n in facts.dtypes.items()]
    _print_fields(lines, out)
    return EXIT_OK


def _info_case(folder: Path, out: TextIO) -> int:
    model_file = folder / "model.onnx"
    if not model_file.exists():
        raise _DataError(
            f"{folder}: a folder without model.onnx; info takes a case folder, a store "
            "(.parquet) or a .pb file"
        )
    model = _read_model(str(model_file))
    # value_slot reads a value's slot by the case's layout; a case of only its model
    # file is that layout, the files themselves are read below
    case = Case("", "", [], "model.onnx")
    lines: list[tuple[str, object]] = [
        ("case", folder),
        ("model", f"model.onnx, {_size(model_file.stat().st_size)}"),
        ("ir_version", model.ir_version),
        ("opsets", opsets(model)),
    ]
    lines += _io_lines(model)
    data_sets: dict[int | None, list[tuple[tuple[bool, int], str, str, str]]] = {}
    others: list[tuple[str, object]] = []
    for rel in _tree_files(folder):
        if rel == "model.onnx":
            continue
        slot = value_slot(case, rel)
        if slot is None:
            others.append((f"  {rel}", _size(os.lstat(folder / rel).st_size)))
            continue
        n, io, index = slot
        name, text = _value_text(folder, rel, model, io, index)
        data_sets.setdefault(n, []).append(((io != "input", index), Path(rel).name, name, text))
    names = max((len(v[2]) for values in data_sets.values() for v in values), default=0)
    for n in sorted(data_sets, key=lambda n: -1 if n is None else n):
        lines.append((f"test_data_set_{n}" if n is not None else "values", ""))
        lines += [
            (f"  {file}", f"{name:<{names}}  {text}")
            for _, file, name, text in sorted(data_sets[n])
        ]
    if others:
        lines.append(("other files", len(others)))
        lines += others
    _print_fields(lines, out)
    return EXIT_OK


def _value_text(folder: Path, rel: str, model: ModelProto, io: str, index: int) -> tuple[str, str]:
    """The graph name of a value file and its dtype and shape, read as the model declares."""
    type_proto = declared_type(model, io, index)
    infos = graph_values(model, io)
    if type_proto is None:
        return "", f"the model declares no {io} {index}: kept as a file"
    path = folder / rel
    try:
        arr = onnx_arrow.read_pb(path, type_proto, base_dir=path.parent, follow_symlinks=False)
    except OnnxArrowError as exc:
        raise (exc if str(path) in str(exc) else exc.at(str(path))) from None
    value = onnx_arrow.to_pylist(arr, strings="bytes")[0]
    return infos[index].name, _describe(value, type_proto)


def _describe(value: Any, type_proto: TypeProto) -> str:
    """The dtype and shape of a value, through sequences, maps and optionals."""
    which = type_proto.WhichOneof("value")
    if which == "tensor_type":
        return f"{dtype_of_numpy(value.dtype).name} {list(value.shape)}"
    if which == "sequence_type":
        elem = type_proto.sequence_type.elem_type
        return f"sequence of {len(value)}" + _first_few([_describe(v, elem) for v in value])
    if which == "map_type":
        key = dtype_of(type_proto.map_type.key_type).name
        elem = type_proto.map_type.value_type
        entries = [_describe(v, elem) for _, v in value]
        return f"map of {len(value)} ({key} keys)" + _first_few(entries)
    if which == "optional_type":
        if value is None:
            return "optional, absent"
        return "optional, " + _describe(value, type_proto.optional_type.elem_type)
    if which == "sparse_tensor_type":
        values = value["values"]
        return (
            f"sparse {dtype_of_numpy(values.dtype).name} {list(value['dims'])}, "
            f"{values.size} stored values"
        )
    return type(value).__name__


def _first_few(parts: list[str], limit: int = 3) -> str:
    if not parts:
        return ""
    more = ", ..." if len(parts) > limit else ""
    return ": " + ", ".join(parts[:limit]) + more


def _run_example(args: argparse.Namespace, out: TextIO) -> int:
    return _example(out)


# --- run and compare -----------------------------------------------------------------


def _backend(args: argparse.Namespace) -> Any:
    from onnx_arrow import compare

    if args.timeout is None:
        args.timeout = DEFAULT_TIMEOUT
    elif args.timeout == 0:
        args.timeout = None
    elif not args.timeout > 0:
        args.subparser.error(f"--timeout {args.timeout} is not a number of seconds of 0 or more")
    if args.backend_logs:  # read by the backend where it runs: workers inherit it
        os.environ[compare.ORT_LOG_SEVERITY_VARIABLE] = str(compare.ORT_DEFAULT_LOG_SEVERITY)
    return compare.backend_named(args.backend or "reference")


def _run_run(args: argparse.Namespace, out: TextIO) -> int:
    from onnx_arrow import compare

    backend = _backend(args)
    out_path = Path(args.out)
    store = Store(args.store)
    _check_file_target(out_path, force=args.force, reading=[store.path])
    total = len(compare.select_cases(store, args.case))
    with _Progress("running", "cases", total=total) as progress:
        counts = compare.write_actual(
            store,
            backend,
            out_path,
            cases=args.case,
            timeout=args.timeout,
            progress=progress.step,
            jobs=args.jobs,
            engine=args.engine,
        )
    _print_fields(
        [
            ("store", out_path),
            ("backend", args.backend or "reference"),
            ("cases", counts["cases"]),
            ("data sets", counts["data_sets"]),
            ("outputs", counts["outputs"]),
            ("backend errors", f"{counts['errors']} data sets"),
            ("skipped", f"{counts['skipped']} cases (no model or no data sets)"),
            ("kept as bytes", f"{counts['kept_as_bytes']} files (not decodable as declared)"),
            ("size", _size(counts["bytes"])),
        ],
        out,
    )
    return EXIT_OK


def _run_compare(args: argparse.Namespace, out: TextIO) -> int:
    from onnx_arrow import compare

    store = Store(args.store)
    if args.all_cases and args.actual is None:
        args.subparser.error("--all-cases applies to --actual only")
    if args.actual is not None and (
        args.timeout is not None or args.engine is not None or args.jobs > 1
    ):
        args.subparser.error("--timeout, --jobs and --engine apply to a backend, not to --actual")
    if args.out is not None:
        reading = [store.path] + ([Path(args.actual)] if args.actual is not None else [])
        _check_file_target(Path(args.out), force=args.force, what="the report", reading=reading)
    plan = {
        "skip": args.skip,
        "xfail": args.xfail,
        "tolerance": {pattern: (rtol, atol) for pattern, rtol, atol in args.tolerance},
        "patterns": None if args.patterns is None else compare.Expectations.read(args.patterns),
        "keep_actual": args.keep_actual,
        "rtol": args.rtol,
        "atol": args.atol,
    }
    total = len(compare.select_cases(store, args.case))
    with _Progress("comparing", "cases", total=total) as progress:
        if args.actual is not None:
            df = compare.compare_stores(
                store,
                Store(args.actual),
                cases=args.case,
                progress=progress.step,
                missing="error" if args.all_cases else "leave_out",
                **plan,
            )
        else:
            backend = _backend(args)  # first: it settles args.timeout
            df = compare.compare(
                store,
                backend,
                cases=args.case,
                timeout=args.timeout,
                progress=progress.step,
                jobs=args.jobs,
                engine=args.engine,
                **plan,
            )
    if args.out is not None:
        compare.write_report(df, args.out)
    counts = compare.status_counts(df)
    total = len(df)
    lines: list[tuple[str, object]] = [("outputs", total)]
    lines += [(f"  {status}", n) for status, n in counts.items()]
    left_out = int(df.attrs.get("left_out", 0))
    if left_out:
        lines.append(("left out", f"{left_out} expected cases not in ACTUAL (--all-cases: errors)"))
    _print_fields(lines, out)
    table = compare.summary(df)
    table = table[table["non_match"] > 0].head(MAX_LISTED)
    if len(table):
        print(file=out)
        print(f"op types with the most outputs that do not match (up to {MAX_LISTED}):", file=out)
        columns = ["op_type", "total", "non_match"] + [
            s for s in compare.STATUSES if s not in compare.PASSING and table[s].any()
        ]
        print(table[columns].to_string(index=False), file=out)
    if args.out is not None:
        print(f"\nreport: {args.out} (a row per output)", file=out)
    failed = sum(n for status, n in counts.items() if status not in compare.PASSING)
    failed += counts["xpass"] if args.strict else 0
    if total - counts["skipped"] == 0:  # nothing compared is no pass
        print_error("no output was compared; check STORE, --case and ACTUAL")
        return EXIT_DATA_ERROR
    return EXIT_DATA_ERROR if failed else EXIT_OK


def _run_diff(args: argparse.Namespace, out: TextIO) -> int:
    from onnx_arrow import compare
    from onnx_arrow.diff import DEFAULT_CORPUS, STATUSES, diff, equivalent

    for side in (args.old, args.new):
        if side != DEFAULT_CORPUS and not Path(side).exists():
            args.subparser.error(f"{side}: no such store or folder (or {DEFAULT_CORPUS})")
    if args.out is not None:
        reading = [Path(p) for p in (args.old, args.new) if p != DEFAULT_CORPUS]
        _check_file_target(Path(args.out), force=args.force, what="the report", reading=reading)
    with _Progress("comparing", "cases", start="reading both sides") as progress:
        df = diff(args.old, args.new, progress=progress.step)
    if args.out is not None:
        compare.write_report(df, args.out)
    ok = equivalent(df, max_ulp=args.max_ulp, accept=args.accept)
    counts = df["status"].value_counts()
    lines: list[tuple[str, object]] = [("paths", len(df))]
    lines += [(f"  {s}", int(counts.get(s, 0))) for s in STATUSES if counts.get(s, 0)]
    old_cases = df.loc[df["status"] != "added", "case"].nunique()
    new_cases = df.loc[df["status"] != "removed", "case"].nunique()
    lines += [("cases", f"{old_cases} old, {new_cases} new")]
    _print_fields(lines, out)
    changed = df[~ok]
    if len(changed):
        kinds = changed["case"].str.split("/").str[0]
        by_kind = changed.groupby([kinds, "status"]).size()
        print("\nnot equivalent, by kind of case and status:", file=out)
        for (kind, status), n in by_kind.items():
            print(f"  {kind:<20} {status:<15} {n}", file=out)
    drifts = df[df["status"] == "float-drift"].sort_values("max_ulp", ascending=False)
    if len(drifts):
        bands = ((1, "1"), (2, "2"), (4, "3-4"), (16, "5-16"), (1024, "17-1024"))
        ulps = drifts["max_ulp"].astype("int64")
        print("\nfloat drifts by largest ULP distance:", file=out)
        low = 0
        for high, label in bands:
            print(f"  {label:<10} {int(((ulps > low) & (ulps <= high)).sum())}", file=out)
            low = high
        print(f"  {'> 1024':<10} {int((ulps > low).sum())}", file=out)
        print(f"\nlargest float drifts (up to {MAX_LISTED}):", file=out)
        for row in drifts.head(MAX_LISTED).itertuples():
            print(f"  {int(row.max_ulp):>12} ULP  {row.path}", file=out)
    if args.out is not None:
        print(f"\nreport: {args.out} (a row per path)", file=out)
    few = min(old_cases, new_cases) < args.min_cases
    if few:
        print_error(f"a side has fewer than {args.min_cases} cases (--min-cases)")
    return EXIT_DATA_ERROR if len(changed) or few else EXIT_OK


COMMANDS: Final[dict[str, Callable[[argparse.Namespace, TextIO], int]]] = {
    "import": _run_import,
    "export": _run_export,
    "verify": _run_verify,
    "generate": _run_generate,
    "info": _run_info,
    "example": _run_example,
    "run": _run_run,
    "compare": _run_compare,
    "diff": _run_diff,
}
