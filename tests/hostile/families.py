"""The hostile cases, by family: each builds its own input and says what must happen.

Families: ``pb-truncated`` and ``pb-mutated`` (value files of every kind, cut and
with bytes changed, seeded), ``pb-declared`` (a tensor's bytes where the model
declares a sequence, optional or map), ``huge`` (sizes that claim more than the file
holds, a large legal packed-int32 file under a tight memory cap, a sparse file),
``store-forged`` (stores whose metadata, rows or bytes were forged), ``arrow-ipc`` and
``arrow-built`` (Arrow data with broken offsets and inconsistent layouts, from an IPC
file or built in memory), ``pandas``, ``confinement`` (symlinks, hard links, ``..``,
absolute and odd paths on the way in and out), ``fifo`` and ``names`` (file names
that are not UTF-8, too long, with a backslash).  The families of what readers are
handed back (dataset stores, engines' rows, portable tables, diff, report files) are in
:mod:`hostile.readers`.  Ctrl-C is tested apart
(``test_interrupt.py``): it needs the real command line in a process of its own.
"""

from __future__ import annotations

import functools
import os
import random
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from onnx import TensorProto, helper, numpy_helper, save_model

from hostile.harness import Case, Expect

# --- a small corpus with a value of every kind --------------------------------------------


def _case(root: Path, name: str, inputs: list[tuple[Any, Any]], outputs: list[tuple[Any, Any]]):
    """A case folder: a model declaring the values' types, one data set of them."""
    folder = root / "node" / name
    (folder / "test_data_set_0").mkdir(parents=True)
    infos_in = [helper.make_value_info(f"x{k}", t) for k, (t, _) in enumerate(inputs)]
    infos_out = [helper.make_value_info(f"y{k}", t) for k, (t, _) in enumerate(outputs)]
    graph = helper.make_graph([], "g", infos_in, infos_out)
    save_model(helper.make_model(graph), folder / "model.onnx")
    for io, values in (("input", inputs), ("output", outputs)):
        for k, (_, message) in enumerate(values):
            data = message.SerializeToString()
            (folder / "test_data_set_0" / f"{io}_{k}.pb").write_bytes(data)


def _float_tensor(shape: tuple[int, ...] = (2, 3), name: str = "x") -> TensorProto:
    rng = np.random.default_rng(0)
    return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)


TENSOR_T = helper.make_tensor_type_proto(TensorProto.FLOAT, None)
SEQ_T = helper.make_sequence_type_proto(TENSOR_T)
OPT_T = helper.make_optional_type_proto(TENSOR_T)
MAP_T = helper.make_map_type_proto(TensorProto.INT64, TENSOR_T)
STRING_T = helper.make_tensor_type_proto(TensorProto.STRING, None)
INT64_T = helper.make_tensor_type_proto(TensorProto.INT64, None)


def _values() -> dict[str, tuple[Any, Any]]:
    arrays = [numpy_helper.to_array(_float_tensor((n,))) for n in (1, 2, 3)]
    seq = numpy_helper.from_list(arrays[1:], "s")
    opt = numpy_helper.from_optional(arrays[1], "o")
    m = numpy_helper.from_dict({1: arrays[0], 2: arrays[1]}, "m")
    strings = numpy_helper.from_array(np.array([b"a", b"\xff", b"ccc"], object), "t")
    ints = numpy_helper.from_array(np.arange(-3, 5, dtype=np.int64), "i")
    return {
        "tensor": (TENSOR_T, _float_tensor()),
        "int64": (INT64_T, ints),
        "string": (STRING_T, strings),
        "sequence": (SEQ_T, seq),
        "optional": (OPT_T, opt),
        "map": (MAP_T, m),
    }


KINDS = ("tensor", "int64", "string", "sequence", "optional", "map")


@functools.cache
def corpus(root: Path) -> Path:
    """``root/corpus``: a case per kind of value, node/test_<kind>, input_0 and output_0."""
    out = root / "corpus"
    for kind, (t, message) in _values().items():
        _case(out, f"test_{kind}", [(t, message)], [(t, message)])
    return out


def value_file(root: Path, kind: str) -> Path:
    return corpus(root) / "node" / f"test_{kind}" / "test_data_set_0" / "input_0.pb"


def model_file(root: Path, kind: str) -> Path:
    return corpus(root) / "node" / f"test_{kind}" / "model.onnx"


@functools.cache
def store_file(root: Path) -> Path:
    """``root/store.parquet``: the corpus imported."""
    from onnx_arrow.corpus import FolderSource, WriteOptions, write_store

    out = root / "store.parquet"
    # every file whole, so that each forgery changes the payload of the row it names (the
    # copies' own hostile cases: tests/corpus/test_copies.py)
    write_store(FolderSource(corpus(root)), out, options=WriteOptions(dedup=False))
    return out


def _fresh(root: Path, name: str) -> Path:
    path = root / name
    if path.exists() or path.is_symlink():
        shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
    path.mkdir(parents=True)
    return path


def _copy_case(root: Path, kind: str, dest: Path) -> Path:
    """A corpus of one case (a copy of the corpus's ``test_<kind>``) at ``dest``."""
    shutil.copytree(corpus(root) / "node" / f"test_{kind}", dest / "node" / f"test_{kind}")
    return dest


CASES: list[Case] = []


def case(
    family: str,
    name: str,
    action: str,
    expect: Expect,
    *,
    memory: int | None = None,
    guard: tuple[str, ...] = (),
) -> Callable[[Callable[[Path], dict[str, Any]]], Callable[[Path], dict[str, Any]]]:
    def register(build: Callable[[Path], dict[str, Any]]) -> Callable[[Path], dict[str, Any]]:
        extra = {} if memory is None else {"memory": memory}
        CASES.append(Case(family, name, action, build, expect, guard=guard, **extra))
        return build

    return register


def cli_error(where: str | None = None) -> Expect:
    """The command exits 1 with one error line (naming ``where``), no traceback."""
    return Expect(rc=1, where=where)


# --- pb-truncated, pb-mutated --------------------------------------------------------------


def _read_pb_case(root: Path, kind: str, data: bytes, name: str) -> dict[str, Any]:
    path = _fresh(root, f"pb/{name}") / "input_0.pb"
    path.write_bytes(data)
    return {"path": str(path), "model": str(model_file(root, kind))}


for _kind in KINDS:
    for _cut in (1, 3, 0.5, -1):

        def _truncated(root: Path, kind: str = _kind, cut: float = _cut) -> dict[str, Any]:
            data = value_file(root, kind).read_bytes()
            n = int(len(data) * cut) if isinstance(cut, float) else cut % len(data)
            return _read_pb_case(root, kind, data[:n], f"truncated-{kind}-{cut}")

        case(
            "pb-truncated", f"{_kind}-at-{_cut}", "read_pb", Expect(clean=True, where="input_0.pb")
        )(_truncated)
    for _seed in range(4):

        def _mutated(root: Path, kind: str = _kind, seed: int = _seed) -> dict[str, Any]:
            data = bytearray(value_file(root, kind).read_bytes())
            rng = random.Random(seed)
            for _ in range(1 + seed):
                data[rng.randrange(len(data))] = rng.choice(
                    [0x00, 0xFF, 0x80, 0x7F, rng.randrange(256)]
                )
            return _read_pb_case(root, kind, bytes(data), f"mutated-{kind}-{seed}")

        case(
            "pb-mutated", f"{_kind}-seed-{_seed}", "read_pb", Expect(clean=True, where="input_0.pb")
        )(_mutated)


# --- pb-declared: a tensor's bytes where the model declares a container --------------------


def _mismatched_corpus(root: Path, kind: str) -> Path:
    """A corpus whose case declares ``kind`` for input_0 but whose file holds a tensor."""
    out = _fresh(root, f"declared/{kind}")
    declared = {"sequence": SEQ_T, "optional": OPT_T, "map": MAP_T}[kind]
    tensor = numpy_helper.from_array(np.arange(6, dtype=np.float32), "x")
    _case(out, "test_mismatch", [(declared, tensor)], [(TENSOR_T, tensor)])
    return out


for _kind in ("sequence", "optional", "map"):
    case(
        "pb-declared",
        f"{_kind}-read_pb",
        "read_pb",
        Expect(error="InvalidMessageError", where="input_0.pb"),
    )(
        lambda root, kind=_kind: {
            "path": str(
                _mismatched_corpus(root, kind) / "node/test_mismatch/test_data_set_0/input_0.pb"
            ),
            "model": str(_mismatched_corpus(root, kind) / "node/test_mismatch/model.onnx"),
        }
    )
    case("pb-declared", f"{_kind}-import", "cli", cli_error("test_data_set_0/input_0.pb"))(
        lambda root, kind=_kind: {
            "argv": [
                "import",
                str(_mismatched_corpus(root, kind)),
                str(_fresh(root, f"declared-out/{kind}") / "s.parquet"),
            ]
        }
    )
    case(
        "pb-declared",
        f"{_kind}-import-keep-undecodable",
        "cli",
        Expect(rc=0, where="input_0.pb"),
    )(
        lambda root, kind=_kind: {
            "argv": [
                "import",
                "--keep-undecodable",
                str(_mismatched_corpus(root, kind)),
                str(_fresh(root, f"declared-keep/{kind}") / "s.parquet"),
            ]
        }
    )


# --- huge: sizes claimed, sizes legal ---------------------------------------------------------


@case("huge", "packed-int32-40MB-under-1GiB", "read_pb", Expect(), memory=1 << 30)
def _packed_int32(root: Path) -> dict[str, Any]:
    n = 40_000_000  # one byte a value: 160 MB decoded
    path = _fresh(root, "huge/packed") / "input_0.pb"
    payload = np.random.default_rng(0).integers(0, 100, n, dtype=np.uint8).tobytes()
    header = TensorProto(data_type=TensorProto.INT32, dims=[n]).SerializeToString()
    from onnx_arrow.core._wire import encode_len

    path.write_bytes(header + encode_len(5, len(payload)) + payload)
    return {"path": str(path), "back": False}


def _raw_pb(root: Path, name: str, data: bytes) -> dict[str, Any]:
    path = _fresh(root, f"huge/{name}") / "input_0.pb"
    path.write_bytes(data)
    return {"path": str(path)}


case("huge", "dims-claim-2**40-elements", "read_pb", Expect("InvalidTensorError", "dims"))(
    lambda root: _raw_pb(
        root,
        "dims",
        TensorProto(
            data_type=TensorProto.FLOAT, dims=[1 << 20, 1 << 20], raw_data=b"abcd"
        ).SerializeToString(),
    )
)
case("huge", "dims-product-overflows-int64", "read_pb", Expect("InvalidTensorError", "dims"))(
    lambda root: _raw_pb(
        root,
        "overflow",
        TensorProto(
            data_type=TensorProto.FLOAT, dims=[1 << 62, 1 << 62, 4], raw_data=b"abcd"
        ).SerializeToString(),
    )
)
case("huge", "length-claims-2**60-bytes", "read_pb", Expect("InvalidMessageError", "input_0.pb"))(
    lambda root: _raw_pb(root, "len", b"\x08\x01\x10\x01\x4a" + b"\x80" * 8 + b"\x10" + b"ab")
)
case("huge", "string-count-claims-many", "read_pb", Expect("InvalidTensorError", "input_0.pb"))(
    lambda root: _raw_pb(
        root,
        "strings",
        TensorProto(
            data_type=TensorProto.STRING, dims=[1 << 39], string_data=[b"a"]
        ).SerializeToString(),
    )
)


@case(
    "huge", "external-data-length-claims-1TB", "read_pb", Expect("ExternalDataError", "input_0.pb")
)
def _external_huge(root: Path) -> dict[str, Any]:
    folder = _fresh(root, "huge/external")
    (folder / "weights.bin").write_bytes(b"\x00" * 16)
    t = TensorProto(data_type=TensorProto.FLOAT, dims=[1 << 38], data_location=TensorProto.EXTERNAL)
    for k, v in (("location", "weights.bin"), ("length", str(1 << 40))):
        entry = t.external_data.add()
        entry.key, entry.value = k, v
    (folder / "input_0.pb").write_bytes(t.SerializeToString())
    return {"path": str(folder / "input_0.pb")}


@case("huge", "sparse-1.2GB-file-import-under-2GiB", "cli", cli_error("input_0.pb"))
def _sparse_file(root: Path) -> dict[str, Any]:
    src = _copy_case(root, "tensor", _fresh(root, "huge/sparse"))
    with open(src / "node/test_tensor/test_data_set_0/input_0.pb", "r+b") as f:
        f.truncate(1_200_000_000)  # a hole: nothing on disk, 1.2 GB to read
    return {"argv": ["import", str(src), str(_fresh(root, "huge/sparse-out") / "s.parquet")]}


# --- store-forged ---------------------------------------------------------------------------


def _forged(root: Path, name: str, change: Callable[[pa.Table], pa.Table], *, meta=None) -> Path:
    table = pq.read_table(store_file(root))
    table = change(table)
    metadata = dict(table.schema.metadata or {})
    if meta is not None:
        metadata[b"onnx_arrow"] = meta(metadata[b"onnx_arrow"])
    out = _fresh(root, f"forged/{name}") / "s.parquet"
    pq.write_table(table.replace_schema_metadata(metadata), out)
    return out


def _set(table: pa.Table, column: str, row: int, value: Any) -> pa.Table:
    i = table.schema.get_field_index(column)
    values = table.column(column).to_pylist()
    values[row] = value
    return table.set_column(i, table.schema.field(i), pa.array(values, table.schema.field(i).type))


def _row(table: pa.Table, *, path_end: str, role: str = "value", case: str = "tensor") -> int:
    paths, roles = table.column("path").to_pylist(), table.column("role").to_pylist()
    for i, (p, r) in enumerate(zip(paths, roles, strict=True)):
        if p and p.endswith(path_end) and r == role and f"test_{case}/" in p:
            return i
    raise LookupError(path_end)


def _meta_json(change: Callable[[dict[str, Any]], Any]) -> Callable[[bytes], bytes]:
    import json

    def edit(raw: bytes) -> bytes:
        doc = json.loads(raw)
        return change(doc) if isinstance(change(doc), bytes) else json.dumps(change(doc)).encode()

    return edit


def _version(value: Any) -> Callable[[dict[str, Any]], dict[str, Any]]:
    return lambda doc: {**doc, "format_version": value}


for _name, _value in (("true", True), ("2.0", 2.0), ("string-2", "2")):
    case(
        "store-forged", f"format-version-{_name}", "store", Expect("CorpusError", "format version")
    )(
        lambda root, v=_value, n=_name: {
            "path": str(_forged(root, f"version-{n}", lambda t: t, meta=_meta_json(_version(v)))),
            "op": "open",
        }
    )
for _name, _raw in (
    ("deep-json", b"[" * 100_000 + b"]" * 100_000),
    ("not-utf8", b'{"format": "\xff"}'),
    ("huge-integer", b'{"format_version": ' + b"9" * 5000 + b"}"),
):
    case("store-forged", f"metadata-{_name}", "store", Expect("CorpusError", "s.parquet"))(
        lambda root, raw=_raw, n=_name: {
            "path": str(_forged(root, f"meta-{n}", lambda t: t, meta=lambda _, r=raw: r)),
            "op": "open",
        }
    )


def _dest(root: Path, name: str) -> str:
    path = root / "forged-out" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    return str(path)


def _duplicate(t: pa.Table) -> pa.Table:
    i = _row(t, path_end="input_0.pb")
    j = _row(t, path_end="output_0.pb")
    return _set(t, "path", j, t.column("path")[i].as_py())


def _envelope_with(t: pa.Table, **fields: Any) -> pa.Table:
    i = _row(t, path_end="input_0.pb")
    envelope = TensorProto.FromString(t.column("envelope")[i].as_py())
    for k, v in fields.items():
        if k == "external_data":
            envelope.data_location = TensorProto.EXTERNAL
            for key, value in v:
                e = envelope.external_data.add()
                e.key, e.value = key, value
        else:
            getattr(envelope, k).extend(v)
    return _set(t, "envelope", i, envelope.SerializeToString())


def _bool_7(t: pa.Table) -> pa.Table:
    """A BOOL tensor's element forged to 7 (a data_bool column element)."""
    i = _row(t, path_end="input_0.pb")
    t = _set(t, "dtype", i, "BOOL")
    t = _set(t, "data_float", i, None)
    return _set(t, "data_bool", i, [7, 0, 1, 0, 1, 0])


def _claims_huge_shape(t: pa.Table) -> pa.Table:
    i = _row(t, path_end="input_0.pb")
    t = _set(t, "shape", i, [1 << 20, 1 << 20, 1 << 10])
    return _set(t, "count", i, 1 << 50)


def _content_claims(t: pa.Table) -> pa.Table:
    i = _row(t, path_end="model.onnx", role="model")
    return _set(t, "nbytes", i, 1 << 40)


for _name, _change, _op, _expect in (
    ("duplicate-paths-export", _duplicate, "export", Expect("CorpusError", "input_0.pb")),
    (
        "envelope-with-dims-export",
        lambda t: _envelope_with(t, dims=[7]),
        "export",
        Expect("OnnxArrowError", "input_0.pb: envelope"),
    ),
    (
        "envelope-external-data-dotdot-export",
        lambda t: _envelope_with(t, external_data=[("location", "../../outside.bin")]),
        "export",
        Expect("OnnxArrowError", "input_0.pb: envelope"),
    ),
    (
        "null-path-export",
        lambda t: _set(t, "path", _row(t, path_end="output_0.pb"), None),
        "export",
        Expect("CorpusError", "row"),
    ),
    # a value forged to a BOOL tensor with an element 7: its file is not the one imported
    # (the digest recorded differs), refused where its values are read
    (
        "bool-value-7",
        _bool_7,
        "case_arrays",
        Expect("CorpusError", "input_0.pb: the file rebuilt from the rows is not the file"),
    ),
    ("bool-value-7-export", _bool_7, "export", Expect(clean=True)),
    (
        "shape-claims-2**50-elements",
        _claims_huge_shape,
        "case_arrays",
        Expect("CorpusError", "input_0.pb"),
    ),
    ("nbytes-claims-1TB", _content_claims, "model", Expect(clean=True)),
):
    case("store-forged", _name, "store", _expect, guard=("forged-out",))(
        lambda root, change=_change, op=_op, n=_name: {
            "path": str(_forged(root, n, change)),
            "op": op,
            "case": "node/test_tensor",
            **({"dest": _dest(root, n)} if op == "export" else {}),
        }
    )


def _bytes_forged(root: Path, name: str, change: Callable[[bytearray], bytes]) -> str:
    data = bytearray(store_file(root).read_bytes())
    out = _fresh(root, f"forged/{name}") / "s.parquet"
    out.write_bytes(change(data))
    return str(out)


for _name, _change in (
    ("truncated-half", lambda d: bytes(d[: len(d) // 2])),
    ("truncated-footer", lambda d: bytes(d[:-9]) + b"PAR1"),
    ("zeroed-middle", lambda d: bytes(d[:1000]) + b"\x00" * 4000 + bytes(d[5000:])),
):
    for _op in ("open", "case_arrays", "export"):
        case("store-forged", f"{_name}-{_op}", "store", Expect(clean=True, where="s.parquet"))(
            lambda root, change=_change, op=_op, n=_name: {
                "path": _bytes_forged(root, n, change),
                "op": op,
                "case": "node/test_tensor",
                **({"dest": _dest(root, f"{n}-{op}")} if op == "export" else {}),
            }
        )

for _seed in range(6):

    def _flipped(root: Path, seed: int = _seed) -> dict[str, Any]:
        def flip(d: bytearray) -> bytes:
            rng = random.Random(seed)
            for _ in range(8):
                d[rng.randrange(4, len(d) - 8)] ^= 1 << rng.randrange(8)
            return bytes(d)

        return {"path": _bytes_forged(root, f"flip-{seed}", flip), "op": "values"}

    case("store-forged", f"bits-flipped-seed-{_seed}", "store", Expect(clean=True))(_flipped)


# --- arrow-ipc, arrow-built --------------------------------------------------------------------

_OPS_ALL = ("from_arrow", "to_numpy", "to_pandas")

_CLEAN = Expect(clean=True)
_BUILT: dict[str, dict[str, Expect]] = {
    # what from_arrow, to_numpy and to_pandas must do; to_numpy and to_pandas read values
    # only, so an envelope they never read may be accepted
    "envelope_offsets_backwards": dict.fromkeys(_OPS_ALL, Expect("ArrowLayoutError")),
    "string_tensor_offsets_backwards": dict.fromkeys(_OPS_ALL, Expect("ArrowLayoutError")),
    "variable_shape_negative_dims": dict.fromkeys(_OPS_ALL, Expect("ArrowLayoutError", "row 0")),
    "variable_shape_against_uniform_shape": dict.fromkeys(
        _OPS_ALL, Expect("ArrowLayoutError", "uniform_shape")
    ),
    "variable_shape_data_against_shape": dict.fromkeys(
        _OPS_ALL, Expect("ArrowLayoutError", "row 0")
    ),
    # an arrow.bool8 value 7 reads as true: byte 1 in the message, never byte 7
    "bool8_value_7": dict.fromkeys(_OPS_ALL, Expect()),
    "envelope_with_dims": {
        "from_arrow": Expect("ArrowLayoutError", "row 0: envelope"),
        "to_numpy": _CLEAN,
        "to_pandas": _CLEAN,
    },
    "envelope_garbage": {
        "from_arrow": Expect("OnnxArrowError", "row 0"),
        "to_numpy": _CLEAN,
        "to_pandas": _CLEAN,
    },
    "envelope_null_value": {
        "from_arrow": Expect("OnnxArrowError", "row 1"),
        "to_numpy": _CLEAN,
        "to_pandas": _CLEAN,
    },
    "message_kind_against_storage": dict.fromkeys(
        _OPS_ALL, Expect("ArrowLayoutError", "metadata says sequence values")
    ),
    "sparse_indices_out_of_range": {
        "from_arrow": Expect("OnnxArrowError", "row 0: indices"),
        "to_numpy": Expect("OnnxArrowError"),
        "to_pandas": _CLEAN,
    },
}


def _ipc_file(root: Path, builder: str) -> str:
    from hostile import actions

    array = getattr(actions, f"build_{builder}")()
    path = root / "ipc" / f"{builder}.arrow"
    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.table({"v": array})
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    return str(path)


for _builder, _expects in _BUILT.items():
    for _op, _expect in _expects.items():
        case("arrow-built", f"{_builder}-{_op}", "built", _expect)(
            lambda root, b=_builder, op=_op: {"builder": b, "op": op}
        )
        if "offsets" in _builder:
            case("arrow-ipc", f"{_builder}-{_op}", "ipc", _expect)(
                lambda root, b=_builder, op=_op: {"path": _ipc_file(root, b), "op": op}
            )

case("pandas", "broadcast-view-2**41-elements", "call", Expect("NotRepresentableError", "row 0"))(
    lambda root: {"name": "from_pandas_broadcast_view"}
)
case("pandas", "masked-array", "call", Expect("UnsupportedTypeError", "row 0"))(
    lambda root: {"name": "from_pandas_masked_array"}
)
case(
    "arrow-built",
    "declared-shape-product-overflows",
    "call",
    Expect("NotRepresentableError", "shape"),
)(lambda root: {"name": "declared_shape_overflows"})
case("arrow-built", "arrow-type-of-a-huge-shape", "call", Expect("NotRepresentableError", "shape"))(
    lambda root: {"name": "arrow_type_of_a_huge_shape"}
)


for _name, _where in (
    ("in-a-map", "row 0: values.tensor_values[0].external_data.location"),
    ("in-sparse-values", "row 0: values.external_data.location"),
):
    case("external-data", f"escape-{_name}", "call", Expect("ExternalDataError", _where))(
        lambda root, n=_name: {
            "name": f"external_data_{n.replace('-', '_')}",
            "base_dir": str(_fresh(root, f"external/{n}")),
        }
    )


# --- confinement --------------------------------------------------------------------------------


def _outside(root: Path, name: str) -> Path:
    """``root/outside/name``: a folder outside every target, that the case must not touch."""
    out = root / "outside" / name
    out.mkdir(parents=True, exist_ok=True)
    (out / "secret.pb").write_bytes(_float_tensor().SerializeToString())
    return out


@case(
    "confinement",
    "export-force-through-symlinked-subfolder",
    "cli",
    cli_error("node"),
    guard=("outside/export-force-through-symlinked-subfolder",),
)
def _export_symlinked(root: Path) -> dict[str, Any]:
    dest = _fresh(root, "conf/export-dest")
    (dest / "node").symlink_to(
        _outside(root, "export-force-through-symlinked-subfolder"), target_is_directory=True
    )
    return {"argv": ["export", "--force", str(store_file(root)), str(dest)]}


@case(
    "confinement",
    "export-force-through-symlinked-case",
    "cli",
    cli_error("test_tensor"),
    guard=("outside/export-force-through-symlinked-case",),
)
def _export_symlinked_case(root: Path) -> dict[str, Any]:
    dest = _fresh(root, "conf/export-dest-case")
    (dest / "node").mkdir()
    (dest / "node" / "test_tensor").symlink_to(
        _outside(root, "export-force-through-symlinked-case"), target_is_directory=True
    )
    return {"argv": ["export", "--force", str(store_file(root)), str(dest)]}


@case(
    "confinement",
    "export-force-over-a-symlinked-file",
    "cli",
    Expect(rc=0),
    guard=("outside/export-force-over-a-symlinked-file",),
)
def _export_over_link(root: Path) -> dict[str, Any]:
    dest = _fresh(root, "conf/export-file-link")
    case_dir = dest / "node" / "test_tensor"
    case_dir.mkdir(parents=True)
    (case_dir / "model.onnx").symlink_to(
        _outside(root, "export-force-over-a-symlinked-file") / "secret.pb"
    )
    return {"argv": ["export", "--force", str(store_file(root)), str(dest)]}


@case(
    "confinement",
    "export-force-over-a-hard-link",
    "cli",
    Expect(rc=0),
    guard=("outside/export-force-over-a-hard-link",),
)
def _export_over_hard_link(root: Path) -> dict[str, Any]:
    dest = _fresh(root, "conf/export-hard-link")
    case_dir = dest / "node" / "test_tensor"
    case_dir.mkdir(parents=True)
    os.link(_outside(root, "export-force-over-a-hard-link") / "secret.pb", case_dir / "model.onnx")
    return {"argv": ["export", "--force", str(store_file(root)), str(dest)]}


@case(
    "confinement",
    "generate-force-through-symlinked-subfolder",
    "cli",
    cli_error("node"),
    guard=("outside/generate-force-through-symlinked-subfolder",),
)
def _generate_symlinked(root: Path) -> dict[str, Any]:
    dest = _fresh(root, "conf/generate-dest")
    (dest / "node").symlink_to(
        _outside(root, "generate-force-through-symlinked-subfolder"), target_is_directory=True
    )
    return {"argv": ["generate", "--force", str(dest)]}


@case("confinement", "info-case-value-symlinked-out", "cli", cli_error("input_0.pb"))
def _info_symlinked_value(root: Path) -> dict[str, Any]:
    src = _copy_case(root, "tensor", _fresh(root, "conf/info-case"))
    value = src / "node/test_tensor/test_data_set_0/input_0.pb"
    value.unlink()
    value.symlink_to(_outside(root, "info-case-value-symlinked-out") / "secret.pb")
    return {"argv": ["info", str(src / "node/test_tensor")]}


@case("confinement", "info-case-data-set-symlinked-out", "cli", cli_error("test_data_set_0"))
def _info_symlinked_folder(root: Path) -> dict[str, Any]:
    src = _copy_case(root, "tensor", _fresh(root, "conf/info-case-folder"))
    folder = src / "node/test_tensor/test_data_set_0"
    shutil.rmtree(folder)
    escape = _fresh(root, "outside-data-set")
    (escape / "input_0.pb").write_bytes(_float_tensor().SerializeToString())
    folder.symlink_to(escape, target_is_directory=True)
    return {"argv": ["info", str(src / "node/test_tensor")]}


for _cmd in ("import", "verify", "diff"):

    def _linked_corpus(root: Path, cmd: str = _cmd) -> dict[str, Any]:
        src = _copy_case(root, "tensor", _fresh(root, f"conf/{cmd}-src"))
        value = src / "node/test_tensor/test_data_set_0/input_0.pb"
        value.unlink()
        value.symlink_to(_outside(root, f"{cmd}-value-symlinked-out") / "secret.pb")
        argv = {
            "import": ["import", str(src), str(_fresh(root, f"conf/{cmd}-out") / "s.parquet")],
            "verify": ["verify", str(src)],
            "diff": ["diff", str(corpus(root)), str(src)],
        }[cmd]
        return {"argv": argv}

    case(
        "confinement",
        f"{_cmd}-value-symlinked-out",
        "cli",
        cli_error("input_0.pb"),
        guard=(f"outside/{_cmd}-value-symlinked-out",),
    )(_linked_corpus)


for _name, _path in (
    ("dotdot", "../escaped.pb"),
    ("absolute", "/tmp/hostile-absolute.pb"),
    ("backslash", "node\\..\\..\\escaped.pb"),
    ("nul", "node/a\x00b.pb"),
):
    case(
        "confinement",
        f"export-path-{_name}",
        "cli",
        cli_error("unsafe file path"),
        guard=("forged-out",),
    )(
        lambda root, p=_path, n=_name: {
            "argv": [
                "export",
                str(
                    _forged(
                        root,
                        f"path-{n}",
                        lambda t, p=p: _set(
                            t, "path", _row(t, path_end="model.onnx", role="model"), p
                        ),
                    )
                ),
                _dest(root, f"path-{n}"),
            ]
        }
    )


# --- fifo -------------------------------------------------------------------------------------


def _fifo(root: Path, name: str) -> Path:
    (root / "fifo").mkdir(exist_ok=True)
    path = root / "fifo" / name
    os.mkfifo(path)
    return path


case("fifo", "store-path", "store", Expect("CorpusError", "fifo.parquet"))(
    lambda root: {"path": str(_fifo(root, "fifo.parquet")), "op": "open"}
)
case("fifo", "info-store", "cli", cli_error("info-fifo.parquet"))(
    lambda root: {"argv": ["info", str(_fifo(root, "info-fifo.parquet"))]}
)
case("fifo", "info-pb", "cli", cli_error("input_0.pb"))(
    lambda root: {"argv": ["info", str(_fifo(root, "input_0.pb"))]}
)
case("fifo", "export-source", "cli", cli_error("export-fifo.parquet"))(
    lambda root: {
        "argv": ["export", str(_fifo(root, "export-fifo.parquet")), _dest(root, "fifo-export")]
    }
)
case("fifo", "diff-old", "cli", cli_error("diff-fifo.parquet"))(
    lambda root: {"argv": ["diff", str(_fifo(root, "diff-fifo.parquet")), str(store_file(root))]}
)


@case("fifo", "import-value-fifo", "cli", cli_error("input_0.pb"))
def _import_fifo(root: Path) -> dict[str, Any]:
    src = _copy_case(root, "tensor", _fresh(root, "fifo-src"))
    value = src / "node/test_tensor/test_data_set_0/input_0.pb"
    value.unlink()
    os.mkfifo(value)
    return {"argv": ["import", str(src), str(_fresh(root, "fifo-src-out") / "s.parquet")]}


@case("fifo", "info-case-value-fifo", "cli", cli_error("input_0.pb"))
def _info_case_fifo(root: Path) -> dict[str, Any]:
    src = _copy_case(root, "tensor", _fresh(root, "fifo-info-case"))
    value = src / "node/test_tensor/test_data_set_0/input_0.pb"
    value.unlink()
    os.mkfifo(value)
    return {"argv": ["info", str(src / "node/test_tensor")]}


# --- names ------------------------------------------------------------------------------------


@case("names", "import-file-name-not-utf8", "cli", cli_error("\\xff.txt: the name is not UTF-8"))
def _not_utf8(root: Path) -> dict[str, Any]:
    src = _copy_case(root, "tensor", _fresh(root, "names/utf8"))
    os.makedirs(src / "node/test_tensor", exist_ok=True)
    with open(os.path.join(os.fsencode(src / "node/test_tensor"), b"notes-\xff.txt"), "wb") as f:
        f.write(b"x")
    return {"argv": ["import", str(src), str(_fresh(root, "names/utf8-out") / "s.parquet")]}


@case("names", "import-file-name-with-backslash", "cli", cli_error("a\\b.txt: the name holds"))
def _backslash(root: Path) -> dict[str, Any]:
    src = _copy_case(root, "tensor", _fresh(root, "names/backslash"))
    (src / "node/test_tensor/a\\b.txt").write_bytes(b"x")
    return {"argv": ["import", str(src), str(_fresh(root, "names/backslash-out") / "s.parquet")]}


@case("names", "verify-file-name-with-backslash", "cli", cli_error("a\\b.txt: the name holds"))
def _verify_backslash(root: Path) -> dict[str, Any]:
    src = _copy_case(root, "tensor", _fresh(root, "names/verify-backslash"))
    (src / "node/test_tensor/a\\b.txt").write_bytes(b"x")
    return {"argv": ["verify", str(src)]}


@case("names", "export-component-too-long", "cli", cli_error("too long"), guard=("forged-out",))
def _too_long(root: Path) -> dict[str, Any]:
    def change(t: pa.Table) -> pa.Table:
        return _set(
            t,
            "path",
            _row(t, path_end="model.onnx", role="model"),
            "node/" + "a" * 300 + "/model.onnx",
        )

    return {"argv": ["export", str(_forged(root, "too-long", change)), _dest(root, "too-long")]}
