"""``onnx-arrow info``: what a ``.pb`` value file, a model, a corpus store or a case
folder holds, and the renderers of each as ``key  value`` lines."""

from __future__ import annotations

import argparse
import os
import re
import stat
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TextIO

from google.protobuf.message import DecodeError

import onnx_arrow
from onnx_arrow.cli._shared import EXIT_OK
from onnx_arrow.cli.work._shared import (
    DataError,
    bytes_text,
    print_fields,
    reading,
    tree_files,
)
from onnx_arrow.core.model import (
    declared_type,
    declared_type_text,
    describe_type,
    dtype_of,
    dtype_of_numpy,
    graph_values,
    holds_model,
    opsets,
    pair_files,
    read_regular_file,
    undeclared_tensor_type,
)
from onnx_arrow.corpus import Case, CorpusFile, Store
from onnx_arrow.corpus.facts import store_facts
from onnx_arrow.corpus.releases import is_release, open_release_store, provenance_lines
from onnx_arrow.corpus.sources import (
    MAX_FILE_BYTES,
    CorpusError,
    folder_model,
    value_slot,
    value_slots,
)
from onnx_arrow.errors import DeclarationWarning, ExternalDataError, OnnxArrowError
from onnx_arrow.text import printable, statistics

if TYPE_CHECKING:
    from onnx import ModelProto, TypeProto

__all__ = ["run"]

_VALUE_FILE: Final = re.compile(r"(input|output)_(\d+)\.pb")
_DATA_SET: Final = re.compile(r"test_data_set_\d+")


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Describe PATH: a store, a case folder, a model or a .pb value file."""
    if is_release(args.path):
        with open_release_store(args.path, offline=args.offline) as store_path:
            return _info_store(store_path, out)
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
    if _model_file(folder) is not None:
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


# --- a value file and a model --------------------------------------------------


def _info(
    path: str, model: str | None, input_key: str | None, output_key: str | None, out: TextIO
) -> int:
    if model is not None:
        # run has checked that --model comes with --input or --output
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
    model of the case folder it sits in (``model.onnx``, or its one ``NAME.onnx``), paired
    as import pairs it (by the name inside the file, else K); None for a file outside one."""
    m = _VALUE_FILE.fullmatch(path.name)
    if m is None or not _DATA_SET.fullmatch(path.parent.name):
        return None
    folder = path.parent.parent
    model_file = _model_file(folder)
    if model_file is None:
        return None
    io, number = m.group(1), int(m.group(2))
    model = _read_model(str(model_file))
    siblings = {}
    for entry in path.parent.iterdir():
        found = _VALUE_FILE.fullmatch(entry.name)
        if found is not None and found.group(1) == io:
            siblings[int(found.group(2))] = _read_file(entry)
    pairing = pair_files(io, model, siblings)[number]
    index = pairing.index
    type_proto = None if index is None else declared_type(model, io, index)
    how = "" if pairing.name is None or index == number else ", named by the file"
    if index is not None and type_proto is None:
        type_proto = undeclared_tensor_type(siblings[number])
        how += f", which declares no type for {io} {index}: read as the TensorProto it holds"
    if index is None or type_proto is None:
        why = pairing.reason or (
            f"the model declares no type for {io} {index}, and the file is no TensorProto"
        )
        raise DataError(
            f"{path}: its case folder's model {model_file}: {why}; pass --model MODEL.onnx "
            "--input K (or --output K) to type it"
        )
    name = graph_values(model, io)[index].name
    return f"{model_file}: {io} {index} {name!r} (its case folder's model{how})", type_proto


def _model_file(folder: Path) -> Path | None:
    """The model of a case folder, as import finds it: ``model.onnx``, or its one
    ``NAME.onnx`` beside ``test_data_set_N`` folders."""
    try:
        entries = list(folder.iterdir())
    except OSError:
        return None
    owner = folder_model(
        [e.name for e in entries if not e.is_dir()], [e.name for e in entries if e.is_dir()]
    )
    return folder / owner if owner else None


def _read_file(path: Path) -> bytes:
    try:
        return read_regular_file(str(path), max_bytes=MAX_FILE_BYTES, where=str(path))
    except CorpusError as exc:
        raise DataError(str(exc)) from None


def _info_value(path: str, declared: str | None, type_proto: TypeProto | None, out: TextIO) -> int:
    try:
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always", DeclarationWarning)
            arr = onnx_arrow.read_pb(path, type_proto, base_dir=Path(path).parent, exact=True)
    except OnnxArrowError as exc:
        if type_proto is None and _is_readable(path) and holds_model(_read_file(Path(path))):
            raise DataError(str(exc)) from None  # read_pb says so, with the fix
        if type_proto is None and _is_readable(path) and not isinstance(exc, ExternalDataError):
            # the bytes, not the file, are the problem: say what was tried and what to do
            raise DataError(_not_a_tensor(path, exc)) from None
        raise (exc if path in str(exc) else exc.at(path)) from None
    message = onnx_arrow.from_arrow(arr)[0]
    value = onnx_arrow.to_pylist(arr, strings="bytes")[0]
    lines: list[tuple[str, object]] = [("file", path)]
    lines.append(("typed by", declared or "(no model: read as a TensorProto)"))
    lines.append(("name", message.name or "(none)"))
    if type_proto is not None and any(issubclass(w.category, DeclarationWarning) for w in said):
        lines.append(
            (
                "contradicts",
                f"the declared {declared_type_text(type_proto)}: read with its own type",
            )
        )
    if type_proto is not None and type_proto.WhichOneof("value") != "tensor_type":
        lines += [
            ("declared", declared_type_text(type_proto)),
            ("value", _describe(value, type_proto)),
            ("arrow", describe_type(arr.value.type)),
        ]
        print_fields(lines, out)
        return EXIT_OK
    row = dtype_of_numpy(value.dtype)
    lines += [
        ("dtype", f"{row.name} ({row.onnx})"),
        ("dims", str(list(value.shape))),
        ("arrow", describe_type(arr.value.type)),
        ("elements", str(value.size)),
    ]
    lines += statistics(value)
    print_fields(lines, out)
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
        ("model", f"{path}, {bytes_text(os.path.getsize(path))}"),
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
    print_fields(lines, out)
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
            (
                f"  {k} {info.name}",
                declared_type_text(info.type) if info.HasField("type") else "no type declared",
            )
            for k, info in enumerate(infos)
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
        raise DataError(f"{model_path}: graph has no {io} {key!r}; its {io}s are {listed}")
    return f"{model_path}: {io} {index} {names[index]!r}", infos[index].type


def _read_model(path: str) -> ModelProto:
    """The model in a file; a FIFO or device is an error, never a hang."""
    # A path named on the command line may be a symlink (read_regular_file refuses one,
    # as a corpus must not hold any): the file it names is read, with the same checks.
    try:
        data = read_regular_file(
            os.path.realpath(path),
            max_bytes=MAX_FILE_BYTES,
            where=path,
            fix="pass an .onnx model file",
        )
    except CorpusError as exc:
        raise DataError(str(exc)) from None
    from onnx_arrow.core.model import ModelProto  # a model or a value file: parsed by protobuf

    try:
        return ModelProto.FromString(data)
    except DecodeError as exc:
        raise DataError(f"{path}: not an ONNX model: {exc}") from None


# --- a store and a case folder ------------------------------------------------


def _info_store(path: Path, out: TextIO) -> int:
    store = Store(path)
    with reading(path):
        facts = store_facts(store)
    lines: list[tuple[str, object]] = [
        ("store", path),
        ("format", facts.format),
        ("created by", facts.created_by),
        ("size", bytes_text(facts.nbytes)),
        ("parts", f"{len(store.parts)} (a dataset store)" if store.path.is_dir() else 1),
        ("row groups", facts.row_groups),
        ("rows", facts.rows),
        ("cases", facts.cases),
    ]
    lines += [(f"  {kind or '(no kind)'}", n) for kind, n in facts.kinds]
    roles = facts.roles
    lines.append(("files", facts.files))
    lines += [(f"  {role}", roles[role]) for role in ("model", "value", "file") if role in roles]
    if facts.copies:
        lines.append(
            (
                "  copies",
                f"{facts.copies} files stored once, as copies of a file of the same bytes "
                f"({bytes_text(facts.copied_bytes)} not stored again)",
            )
        )
    lines.append(("element rows", roles.get("element", 0)))
    lines.append(("tensors", f"{facts.tensors} (value and element rows, by dtype)"))
    lines += [(f"  {name}", n) for name, n in facts.dtypes.items()]
    if facts.contradicting:
        lines.append(
            (
                "contradicting",
                f"{facts.contradicting} values hold another type than their model declares "
                "(kept as they are; the declared column says what is declared)",
            )
        )
    made = store.metadata.get("provenance")
    if isinstance(made, dict) and made.get("source") == "run":
        lines += _run_lines(made)
    else:
        lines += provenance_lines(made)
    print_fields(lines, out)
    return EXIT_OK


def _run_lines(made: dict[str, Any]) -> list[tuple[str, object]]:
    """What made a store of actual outputs (``run``): its backend, the store of its
    models and inputs, and the run."""
    backend = made.get("backend")
    backend = backend if isinstance(backend, dict) else {}
    expected = made.get("expected")
    expected = expected if isinstance(expected, dict) else {}
    stores = ", ".join(str(p) for p in expected.get("store") or []) or "(not recorded)"
    return [
        ("provenance", "run (the outputs of a backend, the models and inputs of a store)"),
        ("  backend", printable(f"{backend.get('name')} ({backend.get('runs')})")),
        ("  store", f"{stores}, onnx {expected.get('onnx')}"),
        ("  store digest", expected.get("store_digest")),
        ("  run by", f"onnx-arrow {made.get('onnx_arrow')}, Python {made.get('python')}"),
        ("  run at", made.get("run_at")),
    ]


def _info_case(folder: Path, out: TextIO) -> int:
    model_file = _model_file(folder)
    if model_file is None:
        return _info_case_without_model(folder, out)
    model = _read_model(str(model_file))
    rels = [rel for rel in tree_files(folder) if rel != model_file.name]
    # the value files are paired with the model as import pairs them: their bytes are read
    layout = Case("", "", [], model_file.name)
    files = [CorpusFile(rel, _read_file(folder / rel)) for rel in rels if value_slot(layout, rel)]
    slots = value_slots(Case("", "", files, model_file.name), model)
    lines: list[tuple[str, object]] = [
        ("case", folder),
        ("model", f"{model_file.name}, {bytes_text(model_file.stat().st_size)}"),
        ("ir_version", model.ir_version),
        ("opsets", opsets(model)),
    ]
    lines += _io_lines(model)
    data_sets: dict[int | None, list[tuple[tuple[bool, int], str, str, str]]] = {}
    others: list[tuple[str, object]] = []
    for rel in rels:
        slot = slots.get(rel)
        if slot is None:
            others.append((f"  {rel}", bytes_text(os.lstat(folder / rel).st_size)))
            continue
        if slot.index is None:
            name, text = "", f"{slot.reason}: kept as a file"
        else:
            name, text = _value_text(folder, rel, model, slot.io, slot.index)
        order = (slot.io != "input", slot.number)
        data_sets.setdefault(slot.data_set, []).append((order, Path(rel).name, name, text))
    names = max((len(v[2]) for values in data_sets.values() for v in values), default=0)
    for n in sorted(data_sets, key=lambda n: -1 if n is None else n):
        no_outputs = all(order[0] is False for order, *_ in data_sets[n])
        lines.append(
            (
                f"test_data_set_{n}" if n is not None else "values",
                "no expected outputs: compare and run skip it" if no_outputs else "",
            )
        )
        lines += [
            (f"  {file}", f"{name:<{names}}  {text}")
            for _, file, name, text in sorted(data_sets[n])
        ]
    if others:
        lines.append(("other files", len(others)))
        lines += others
    print_fields(lines, out)
    return EXIT_OK


def _info_case_without_model(folder: Path, out: TextIO) -> int:
    """A case folder whose model is missing (data sets, or a ``data.json``): its files, as
    import stores them, and why nothing in it can be run; any other folder is refused."""
    try:
        entries = list(folder.iterdir())
    except OSError as exc:
        raise DataError(f"{folder}: cannot be listed ({exc.strerror or exc})") from None
    files = [e.name for e in entries if not e.is_dir()]
    owner = folder_model(files, [e.name for e in entries if e.is_dir()])
    if owner is None:
        raise DataError(
            f"{folder}: a folder without a model (model.onnx, or one NAME.onnx beside "
            "test_data_set_N folders) or data sets; info takes a case folder, a store "
            "(.parquet) or a .pb file"
        )
    rels = list(tree_files(folder))
    lines: list[tuple[str, object]] = [
        ("case", folder),
        (
            "model",
            "none: import stores its files as they are, and compare and run report it "
            "skipped (put its model beside its data sets as model.onnx to type them)",
        ),
        ("files", len(rels)),
    ]
    lines += [(f"  {rel}", bytes_text(os.lstat(folder / rel).st_size)) for rel in rels]
    print_fields(lines, out)
    return EXIT_OK


def _value_text(folder: Path, rel: str, model: ModelProto, io: str, index: int) -> tuple[str, str]:
    """The graph name of a value file and its dtype and shape, read as the model declares."""
    type_proto = declared_type(model, io, index)
    infos = graph_values(model, io)
    path = folder / rel
    if type_proto is None:  # read as import reads it: the TensorProto it holds, if it is one
        type_proto = undeclared_tensor_type(_read_file(path))
        if type_proto is None:
            return "", f"the model declares no type for {io} {index}, and it is no TensorProto"
    try:
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always", DeclarationWarning)
            arr = onnx_arrow.read_pb(path, type_proto, base_dir=path.parent, follow_symlinks=False)
    except OnnxArrowError as exc:
        raise (exc if str(path) in str(exc) else exc.at(str(path))) from None
    value = onnx_arrow.to_pylist(arr, strings="bytes")[0]
    text = _describe(value, type_proto)
    if any(issubclass(w.category, DeclarationWarning) for w in said):
        text += f" (contradicts the declared {declared_type_text(type_proto)})"
    return infos[index].name, text


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
