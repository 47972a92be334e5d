"""Rows of the store: cases to rows and back, byte for byte, and rows that were damaged."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from onnx import (
    ModelProto,
    OptionalProto,
    TensorProto,
    TypeProto,
    helper,
    numpy_helper,
)

from onnx_arrow.core.dtypes import dtype_of
from onnx_arrow.core.kinds import Kind
from onnx_arrow.corpus.format import DATA_COLUMNS, SCHEMA, data_column
from onnx_arrow.corpus.rows import (
    VALUE_COLUMNS,
    RowBuilder,
    StoredFile,
    _flat_values,
    columns_of,
    files_from_batch,
    parse_kind,
    values_from_batch,
)
from onnx_arrow.corpus.sources import Case, CorpusError, CorpusFile, Tolerance
from onnx_arrow.errors import NotRepresentableError, OnnxArrowError


@pytest.mark.parametrize("name", sorted(DATA_COLUMNS))
def test_no_tensors_give_the_data_columns_own_element_type(name: str) -> None:
    item_type = SCHEMA.field(name).type.value_type
    values = _flat_values([], DATA_COLUMNS[name], item_type)
    assert (values.type, len(values)) == (item_type, 0)


# --- a case through rows and back ------------------------------------------------------


def _tensor_type(elem: int, shape: list[Any] | None) -> TypeProto:
    return helper.make_tensor_type_proto(elem, shape)


#: The values of the case below, by input index, with the declared types.
_X = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
_SEQ = [np.array([1, 2], np.int64), np.array([[3]], np.int64)]
_MAP = {3: np.array([1.5], np.float32)}  # numpy_helper.from_dict: a map of int64 to tensors
_HALF = np.array([np.inf, -0.0, 65504, 6e-8, np.nan], np.float16)
_TEXT = np.array([b"a", b"\xff\xfe", b""], dtype=object)


def _model() -> ModelProto:
    float_ = TensorProto.FLOAT
    inputs = [
        helper.make_tensor_value_info("x", float_, ["N", 3]),
        helper.make_tensor_sequence_value_info("s", TensorProto.INT64, None),
        helper.make_value_info(
            "m",
            helper.make_map_type_proto(TensorProto.INT64, _tensor_type(float_, None)),
        ),
        helper.make_value_info(
            "o", helper.make_optional_type_proto(_tensor_type(TensorProto.INT64, None))
        ),
        helper.make_tensor_value_info("h", TensorProto.FLOAT16, [5]),
        helper.make_tensor_value_info("t", TensorProto.STRING, [3]),
    ]
    outputs = [helper.make_tensor_value_info("y", float_, ["N", 3])]
    graph = helper.make_graph([helper.make_node("Abs", ["x"], ["y"])], "g", inputs, outputs)
    return helper.make_model(graph)


def _files(name: str = "node/test_rows") -> list[CorpusFile]:
    values = [
        numpy_helper.from_array(_X, "x"),
        numpy_helper.from_list(_SEQ, "s"),
        numpy_helper.from_dict(_MAP, "m"),  # type: ignore[arg-type]
        numpy_helper.from_optional(None, "o", OptionalProto.TENSOR),
        numpy_helper.from_array(_HALF, "h"),
        numpy_helper.from_array(_TEXT, "t"),
    ]
    files = [CorpusFile(f"{name}/model.onnx", _model().SerializeToString())]
    for k, value in enumerate(values):
        files.append(CorpusFile(f"{name}/test_data_set_0/input_{k}.pb", value.SerializeToString()))
    y = numpy_helper.from_array(np.abs(_X), "y").SerializeToString()
    files.append(CorpusFile(f"{name}/test_data_set_0/output_0.pb", y))
    files.append(CorpusFile(f"{name}/README", b"not a value\n"))
    return sorted(files, key=lambda f: f.path)


def _case(name: str = "node/test_rows", **kw: Any) -> Case:
    return Case(name, name.split("/", maxsplit=1)[0], _files(name), f"{name}/model.onnx", **kw)


def _batch(*cases: Case, keep_undecodable: bool = False) -> tuple[pa.RecordBatch, RowBuilder]:
    builder = RowBuilder(keep_undecodable=keep_undecodable)
    for case in cases:
        builder.add_case(case)
    return builder.to_batch(), builder


def test_a_case_becomes_rows_and_its_files_come_back_byte_for_byte() -> None:
    case = _case(tolerance=Tolerance(0.01, None))
    batch, builder = _batch(case)
    assert batch.schema == SCHEMA
    assert builder.warnings == []
    rows = batch.to_pydict()
    roles = list(zip(rows["path"], rows["role"], rows["element"], strict=True))
    prefix = "node/test_rows/test_data_set_0/"
    # a data set's outputs come before its inputs (see store_order)
    assert roles == [
        ("node/test_rows/README", "file", None),
        ("node/test_rows/model.onnx", "model", None),
        (prefix + "output_0.pb", "value", ""),
        (prefix + "input_0.pb", "value", ""),
        (prefix + "input_1.pb", "value", ""),
        (prefix + "input_1.pb", "element", "tensor_values[0]"),
        (prefix + "input_1.pb", "element", "tensor_values[1]"),
        (prefix + "input_2.pb", "value", ""),
        (prefix + "input_2.pb", "element", "keys"),
        (prefix + "input_2.pb", "element", "values.tensor_values[0]"),
        (prefix + "input_3.pb", "value", ""),
        (prefix + "input_4.pb", "value", ""),
        (prefix + "input_5.pb", "value", ""),
    ]
    assert rows["case_rows"] == [13] * 13
    assert rows["case_row"] == list(range(13))
    assert rows["rtol"] == [0.01] * 13
    assert rows["atol"] == [None] * 13
    assert rows["onnx_type"][3] == "tensor(float)"
    assert rows["onnx_type"][4:7] == ["seq(tensor(int64))", "tensor(int64)", "tensor(int64)"]
    assert rows["onnx_type"][7] == "map(int64,tensor(float))"
    assert rows["value_kind"][7] == '["map", "INT64", ["tensor"]]'
    assert (rows["dtype"][3], rows["shape"][3], rows["count"][3]) == ("FLOAT", [2, 3], 6)
    assert rows[data_column(dtype_of("FLOAT"))][3] == _X.ravel().tolist()
    assert rows["name"][2:5] == ["y", "x", "s"]
    assert rows["nbytes"][1] == len(case.files[1].data)
    assert builder.cases == [(13, sum(len(f.data) for f in case.files), 9, 0)]
    files = list(files_from_batch(batch, where="s.parquet"))
    assert files == [StoredFile(case.name, f.path, f.data) for f in _store_order(case.files)]


def test_values_read_back_as_numpy_helper_gives_them() -> None:
    batch, _ = _batch(_case())
    values = list(values_from_batch(batch.select(VALUE_COLUMNS), where="s.parquet"))
    assert [(v.io, v.index, v.data_set, v.name) for v in values] == [
        ("output", 0, 0, "y"),
        ("input", 0, 0, "x"),
        ("input", 1, 0, "s"),
        ("input", 2, 0, "m"),
        ("input", 3, 0, "o"),
        ("input", 4, 0, "h"),
        ("input", 5, 0, "t"),
    ]
    with pytest.raises(NotRepresentableError) as info:
        values[6].to_numpy()
    assert str(info.value) == (
        "node/test_rows/test_data_set_0/input_5.pb: STRING element 1 (b'\\xff\\xfe') is not "
        "valid UTF-8, so it has no str form; pass strings='bytes' to get the bytes exactly "
        "as stored"
    )
    y, x, s, m, o, h = (v.to_numpy() for i, v in enumerate(values) if i != 6)
    np.testing.assert_array_equal(x, _X)
    assert [a.tolist() for a in s] == [a.tolist() for a in _SEQ]
    assert list(m) == [3]
    np.testing.assert_array_equal(m[3], _MAP[3])
    assert o is None
    assert h.dtype == np.float16
    assert h.view(np.uint16).tolist() == _HALF.view(np.uint16).tolist()
    assert values[6].to_numpy(strings="bytes").tolist() == [b"a", b"\xff\xfe", b""]
    np.testing.assert_array_equal(y, np.abs(_X))
    assert not x.flags.writeable  # a view into the column
    assert values[3].kind == Kind.from_json(["map", "INT64", ["tensor"]])
    for value, f in zip(values, _store_order(_case().files)[2:], strict=True):
        assert value.to_bytes() == f.data
    assert repr(values[1]) == (
        "StoredValue(path='node/test_rows/test_data_set_0/input_0.pb', io='input', index=0, "
        "name='x', onnx_type='tensor(float)', value=FLOAT [2, 3])"
    )
    assert "value=sequence of 2)" in repr(values[2])
    assert "value=map of 1 INT64 keys)" in repr(values[3])
    assert "value=optional, absent)" in repr(values[4])


def test_values_of_some_rows_only_and_of_columns_converted_once() -> None:
    batch, _ = _batch(_case("node/a"), _case("node/b"))
    cols = columns_of(batch, where="s")
    first = list(values_from_batch(cols, where="s", rows=range(13)))
    second = list(values_from_batch(cols, where="s", rows=range(13, 26)))
    assert {v.case for v in first} == {"node/a"}
    assert {v.case for v in second} == {"node/b"}
    assert [v.to_bytes() for v in first] == [v.to_bytes() for v in second]


def test_every_float16_value_comes_back_exactly() -> None:
    every = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    name = "node/test_half"
    model = helper.make_model(
        helper.make_graph(
            [],
            "g",
            [helper.make_tensor_value_info("h", TensorProto.FLOAT16, [1 << 16])],
            [helper.make_tensor_value_info("h", TensorProto.FLOAT16, [1 << 16])],
        )
    )
    data = numpy_helper.from_array(every, "h").SerializeToString()
    case = Case(
        name,
        "node",
        [
            CorpusFile(f"{name}/model.onnx", model.SerializeToString()),
            CorpusFile(f"{name}/test_data_set_0/input_0.pb", data),
        ],
        f"{name}/model.onnx",
    )
    batch, builder = _batch(case)
    assert builder.warnings == []
    (value,) = values_from_batch(batch, where="s")
    assert value.to_numpy().view(np.uint16).tolist() == every.view(np.uint16).tolist()
    assert [f.data for f in files_from_batch(batch, where="s")][1] == data


def test_identical_files_are_decoded_once_and_stored_each() -> None:
    batch, builder = _batch(_case("node/a"), _case("node/b"))
    assert len(builder.leaves) == 8  # the tensors of one case: the other's are the same
    assert batch.num_rows == 26
    assert batch.column("case_row").to_pylist() == list(range(13)) * 2


# --- files kept as bytes ---------------------------------------------------------------


def _replace(case: Case, index: int, data: bytes) -> Case:
    path = f"{case.name}/test_data_set_0/input_{index}.pb"
    case.files = [CorpusFile(f.path, data if f.path == path else f.data) for f in case.files]
    return case


def _store_order(files: list[CorpusFile]) -> list[CorpusFile]:
    """The files of ``_case`` in the store's order: README, model, the output, the inputs."""
    return [files[0], files[1], files[-1], *files[2:-1]]


def _row(batch: pa.RecordBatch, name: str) -> int:
    """The value row of the file ``name`` (``input_0.pb``) of the case's data set 0."""
    return batch.column("path").to_pylist().index(f"node/test_rows/test_data_set_0/{name}")


def _roles(batch: pa.RecordBatch) -> dict[str, str]:
    return {
        p: r
        for p, r in zip(
            batch.column("path").to_pylist(), batch.column("role").to_pylist(), strict=True
        )
        if r != "element"
    }


def test_a_file_that_is_not_canonical_is_kept_as_bytes_with_a_warning() -> None:
    tensor = numpy_helper.from_array(_X, "x")
    tensor.ClearField("name")
    # the name (field 8) after raw_data (field 9): protobuf reads it, and writes it first
    reordered = tensor.SerializeToString() + b"\x42\x01x"
    assert TensorProto.FromString(reordered) == numpy_helper.from_array(_X, "x")
    case = _replace(_case(), 0, reordered)
    batch, builder = _batch(case)
    path = "node/test_rows/test_data_set_0/input_0.pb"
    assert builder.warnings == [
        f"{path}: not in protobuf's canonical form, so its bytes are kept as they are"
    ]
    assert _roles(batch)[path] == "file"
    assert [f.data for f in files_from_batch(batch, where="s")] == [
        f.data for f in _store_order(case.files)
    ]
    # the same bytes again are kept again, saying so
    _, builder = _batch(case, _replace(_case("node/test_again"), 0, reordered))
    assert builder.warnings[1].endswith(
        "input_0.pb: the same bytes as a file kept as they are; kept too"
    )


def test_a_file_that_does_not_decode_as_declared_is_an_error_or_kept_as_told() -> None:
    wrong = numpy_helper.from_array(np.array([1, 2], np.int64), "x").SerializeToString()
    # a sequence where the model declares a tensor
    seq = numpy_helper.from_list(_SEQ, "x").SerializeToString()
    path = "node/test_rows/test_data_set_0/input_0.pb"
    with pytest.raises(OnnxArrowError) as info:
        _batch(_replace(_case(), 0, seq))
    message = str(info.value)
    assert message.startswith(
        f"{path}: does not decode as tensor(float), the type the model declares for input 0 ("
    )
    assert message.endswith(
        "); keep_undecodable (import --keep-undecodable) keeps such a file as bytes, with a warning"
    )
    batch, builder = _batch(_replace(_case(), 0, seq), keep_undecodable=True)
    assert len(builder.warnings) == 1
    assert builder.warnings[0].startswith(f"{path}: ")
    assert builder.warnings[0].endswith("; kept as bytes")
    assert _roles(batch)[path] == "file"
    # an INT64 tensor where FLOAT is declared is a tensor still: the model does not
    # decide the element type, the file does
    batch, builder = _batch(_replace(_case(), 0, wrong))
    assert _roles(batch)[path] == "value"
    assert batch.column("dtype")[_row(batch, "input_0.pb")].as_py() == "INT64"


def test_a_value_the_model_does_not_declare_is_kept_as_bytes() -> None:
    case = _case()
    extra = CorpusFile("node/test_rows/test_data_set_0/output_1.pb", b"\x08\x01")
    case.files = sorted([*case.files, extra], key=lambda f: f.path)
    batch, builder = _batch(case)
    assert builder.warnings == [
        "node/test_rows/test_data_set_0/output_1.pb: the model declares no output 1 (1 outputs: "
        "'y') and the file's message names none of them; kept as bytes"
    ]
    assert _roles(batch)[extra.path] == "file"


def test_a_value_with_external_data_is_kept_as_bytes() -> None:
    tensor = numpy_helper.from_array(_X, "x")
    tensor.ClearField("raw_data")
    tensor.data_location = TensorProto.EXTERNAL
    entry = tensor.external_data.add()
    entry.key, entry.value = "location", "weights.bin"
    batch, builder = _batch(_replace(_case(), 0, tensor.SerializeToString()))
    path = "node/test_rows/test_data_set_0/input_0.pb"
    assert builder.warnings == [f"{path}: holds external data; kept as bytes"]
    assert _roles(batch)[path] == "file"


# --- rows that were damaged ------------------------------------------------------------


def _set(batch: pa.RecordBatch, name: str, values: Any) -> pa.RecordBatch:
    i = batch.schema.get_field_index(name)
    array = values if isinstance(values, pa.Array) else pa.array(values, batch.schema.field(i).type)
    return batch.set_column(i, batch.schema.field(i), array)


def _one_file_rows(batch: pa.RecordBatch, path: str) -> pa.RecordBatch:
    """The rows of one file of the batch (a value with its element rows)."""
    keep = pa.array([p == path for p in batch.column("path").to_pylist()])
    return batch.filter(keep)


DAMAGED = "the store is damaged or was changed after it was written: import the corpus again"


def test_a_file_whose_digest_differs_is_an_error_naming_it() -> None:
    batch, _ = _batch(_case())
    digests = batch.column("digest").to_pylist()
    digests[_row(batch, "input_0.pb")] = bytes(16)
    with pytest.raises(CorpusError) as info:
        list(files_from_batch(_set(batch, "digest", digests), where="s.parquet"))
    rebuilt = _one_file_rows(batch, "node/test_rows/test_data_set_0/input_0.pb")
    got = next(files_from_batch(rebuilt, where="s.parquet")).data
    assert str(info.value) == (
        "s.parquet: node/test_rows: node/test_rows/test_data_set_0/input_0.pb: the file "
        "rebuilt from the rows is not the file imported (its digest differs: the bytes "
        "rebuilt from the rows differ from the digest recorded at import (BLAKE2b-128 "
        f"{hashlib.blake2b(got, digest_size=16).hexdigest()}, recorded {'00' * 16})); "
        f"{DAMAGED}"
    )
    # without the digest column nothing is checked
    files = list(files_from_batch(_set(batch, "digest", digests).drop_columns("digest"), where="s"))
    assert len(files) == 9


def test_rows_that_name_no_file_or_role_are_errors() -> None:
    batch, _ = _batch(_case())
    content = batch.column("content").to_pylist()
    content[1] = None
    with pytest.raises(CorpusError, match=rf"model\.onnx: a model row has no content; {DAMAGED}"):
        list(files_from_batch(_set(batch, "content", content), where="s"))
    roles = batch.column("role").to_pylist()
    roles[_row(batch, "input_0.pb")] = "tensor"
    with pytest.raises(CorpusError, match=r"input_0\.pb: row role 'tensor' where a file starts"):
        list(files_from_batch(_set(batch, "role", roles), where="s"))
    paths = batch.column("path").to_pylist()
    paths[3] = None
    with pytest.raises(CorpusError, match=r"^s: row 3 of the row group has no path \(null\)"):
        list(files_from_batch(_set(batch, "path", paths), where="s"))
    cases = batch.column("test_case").to_pylist()
    cases[0] = None
    with pytest.raises(CorpusError, match=r"^s: row 0 of the row group has no test_case"):
        list(files_from_batch(_set(batch, "test_case", cases), where="s"))


def test_a_tensor_whose_data_does_not_fill_its_shape_is_an_error() -> None:
    batch, _ = _batch(_case())
    x = _row(batch, "input_0.pb")
    shapes = batch.column("shape").to_pylist()
    shapes[x] = [2, 4]
    with pytest.raises(CorpusError) as info:
        list(values_from_batch(_set(batch, "shape", shapes), where="s"))
    assert str(info.value) == (
        "s: node/test_rows: node/test_rows/test_data_set_0/input_0.pb: data_float holds 6 "
        f"elements but shape [2, 4] needs 8; {DAMAGED}"
    )
    dtypes = batch.column("dtype").to_pylist()
    dtypes[x] = None
    with pytest.raises(CorpusError, match=r"input_0\.pb: a tensor row has no dtype or shape"):
        list(values_from_batch(_set(batch, "dtype", dtypes), where="s"))
    dtypes[x] = "FLOAT99"
    with pytest.raises(OnnxArrowError, match=r"^s: node/test_rows: \S+input_0\.pb: .*FLOAT99"):
        list(values_from_batch(_set(batch, "dtype", dtypes), where="s"))


def test_a_value_row_without_its_envelope_or_kind_is_an_error() -> None:
    batch, _ = _batch(_case())
    x = _row(batch, "input_0.pb")
    for name, bad in (("envelope", None), ("value_kind", None), ("io", "inout")):
        column = batch.column(name).to_pylist()
        column[x] = bad
        with pytest.raises(CorpusError, match=r"a value row has no value_kind, envelope or io"):
            list(values_from_batch(_set(batch, name, column), where="s"))
    kinds = batch.column("value_kind").to_pylist()
    kinds[x] = "[not json"
    with pytest.raises(CorpusError, match=r"input_0\.pb: value_kind is not JSON.*damaged"):
        list(values_from_batch(_set(batch, "value_kind", kinds), where="s"))
    kinds[x] = '["matrix"]'
    with pytest.raises(OnnxArrowError, match=r"input_0\.pb: value_kind: \[\"matrix\"\] is not"):
        list(values_from_batch(_set(batch, "value_kind", kinds), where="s"))


def test_more_element_rows_than_the_envelope_describes_is_an_error() -> None:
    batch, _ = _batch(_case())
    # the map's value row left out, its two element rows made the sequence's
    seq, map_ = _row(batch, "input_1.pb"), _row(batch, "input_2.pb")
    damaged = batch.filter(pa.array([i != map_ for i in range(batch.num_rows)]))
    paths = damaged.column("path").to_pylist()
    paths[map_] = paths[map_ + 1] = paths[seq]
    damaged = _set(damaged, "path", paths)
    with pytest.raises(CorpusError) as info:
        list(values_from_batch(damaged, where="s", rows=range(seq, map_ + 2)))
    assert str(info.value) == (
        "s: node/test_rows: node/test_rows/test_data_set_0/input_1.pb: the value has more "
        f"element rows than its envelope describes; {DAMAGED}"
    )


def test_a_null_element_or_a_float16_that_is_not_one_is_an_error_naming_its_row() -> None:
    batch, _ = _batch(_case())
    column = data_column(dtype_of("FLOAT"))
    data = batch.column(column).to_pylist()
    x = _row(batch, "input_0.pb")
    data[x] = [None, *data[x][1:]]
    with pytest.raises(CorpusError, match=rf"input_0\.pb: {column} holds a null element"):
        list(values_from_batch(_set(batch, column, data), where="s"))
    half = data_column(dtype_of("FLOAT16"))
    wide = batch.column(half)
    if pa.types.is_float16(wide.type.value_type):
        return  # the FLOAT16 column holds float16 itself: every element it holds is one
    data = wide.to_pylist()
    row = batch.column("path").to_pylist().index("node/test_rows/test_data_set_0/input_4.pb")
    data[row] = [0.1, *data[row][1:]]
    with pytest.raises(NotRepresentableError, match=r"input_4\.pb.*is not a float16 value"):
        list(values_from_batch(_set(batch, half, data), where="s"))


def test_parse_kind_names_where_it_failed() -> None:
    assert parse_kind('["sequence", ["tensor"]]', "w") == Kind.from_json(["sequence", ["tensor"]])
    with pytest.raises(CorpusError, match=r"^row 9: value_kind is not JSON"):
        parse_kind("{", "row 9")
    with pytest.raises(OnnxArrowError, match=r"^row 9: value_kind: \[1\] is not an ONNX value"):
        parse_kind(json.dumps([1]), "row 9")


def test_files_numbered_against_their_names_are_stored_for_the_value_they_name(
    tmp_path: Any,
) -> None:
    """rf_iris and fastgelu as KInference keeps them: each value file is stored for the
    output whose name it carries, and its file written back byte for byte."""
    from layout_corpora import runtime_corpus

    from onnx_arrow.corpus.sources import FolderSource

    builder = RowBuilder()
    cases = list(FolderSource(runtime_corpus(tmp_path / "src")))
    for case in cases:
        builder.add_case(case)
    assert builder.warnings == []
    batch = builder.to_batch()
    values = {
        (v.case, v.path.rsplit("/", 1)[-1]): (v.index, v.name)
        for v in values_from_batch(batch, where="batch")
    }
    assert values[("kinference/rf_iris", "output_0.pb")] == (1, "output_probability")
    assert values[("kinference/rf_iris", "output_1.pb")] == (0, "output_label")
    assert values[("kinference/named", "output_0.pb")] == (1, "output_probability")
    assert values[("kinference/fastgelu", "output_1.pb")] == (0, "Y")
    files = {f.path: f.data for f in files_from_batch(batch, where="batch")}
    assert files == {f.path: f.data for case in cases for f in case.files}
    roles = _roles(batch)
    assert roles["kinference/no_model/test_data_set_0/output_0.pb"] == "file"


def test_a_file_of_another_kind_is_said_from_the_declaration(tmp_path: Any) -> None:
    """rf_iris's output_0.pb, renamed so that its number pairs it with output_label (a
    tensor): said to be a SequenceProto, not quoted as the dims its text would make."""
    from layout_corpora import IRIS_X, iris_model, zipmap

    seq = zipmap(IRIS_X, "probabilities").SerializeToString()
    files = [
        CorpusFile("k/rf/model.onnx", iris_model().SerializeToString()),
        CorpusFile("k/rf/test_data_set_0/output_0.pb", seq),
    ]
    case = Case("k/rf", "k", files, "k/rf/model.onnx")
    with pytest.raises(OnnxArrowError) as info:
        _batch(case)
    assert str(info.value) == (
        "k/rf/test_data_set_0/output_0.pb: does not decode as tensor(int64), the type the "
        "model declares for output 0 (it is a SequenceProto named 'probabilities', not a "
        "TensorProto); keep_undecodable (import --keep-undecodable) keeps such a file as "
        "bytes, with a warning"
    )
    _, builder = _batch(case, keep_undecodable=True)
    assert builder.warnings == [
        "k/rf/test_data_set_0/output_0.pb: does not decode as tensor(int64), the type the "
        "model declares for output 0 (it is a SequenceProto named 'probabilities', not a "
        "TensorProto); kept as bytes"
    ]


def test_values_that_contradict_their_declaration_are_stored_flagged_and_said(
    tmp_path: Any,
) -> None:
    """Stored exactly with their own type, the declaration in the declared column, and a
    DeclarationWarning in the words read_pb gives for the same file."""
    import warnings

    from layout_corpora import contradicting

    from onnx_arrow import read_pb
    from onnx_arrow.corpus import Store, write_store
    from onnx_arrow.corpus.sources import FolderSource
    from onnx_arrow.errors import DeclarationWarning

    src = contradicting(tmp_path / "src" / "contra")
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always", DeclarationWarning)
        write_store(FolderSource(tmp_path / "src"), tmp_path / "s.parquet")
    imported = sorted(str(w.message) for w in said if w.category is DeclarationWarning)
    assert imported == [
        "contra/test_data_set_0/input_0.pb: holds tensor(float) [2, 3], which contradicts "
        "the declared tensor(float) []; kept exactly with its own type",
        "contra/test_data_set_0/output_0.pb: holds seq(tensor(int64)), which contradicts the "
        "declared seq(tensor(float)); kept exactly with its own type",
    ]
    store = Store(tmp_path / "s.parquet")
    rows = store.read_columns(["path", "role", "onnx_type", "declared", "dtype", "shape"])
    flagged = {
        r["path"].rsplit("/", 1)[-1]: (r["onnx_type"], r["declared"], r["dtype"], r["shape"])
        for r in rows.to_pylist()
        if r["role"] == "value"
    }
    assert flagged == {
        "input_0.pb": ("tensor(float)", "tensor(float) []", "FLOAT", [2, 3]),
        "output_0.pb": ("seq(tensor(int64))", "seq(tensor(float))", None, None),
    }
    from onnx_arrow.corpus.facts import store_facts

    assert store_facts(store).contradicting == 2
    table = store.case_table("contra")  # typed by what the values hold
    assert table.schema.field("x").type.shape == [2, 3]
    assert table.schema.field("s").type.value_type.value_type == pa.int64()
    values = {v.path.rsplit("/", 1)[-1]: v for v in store.values("contra")}
    assert values["input_0.pb"].to_numpy().shape == (2, 3)
    assert values["output_0.pb"].to_numpy()[0].dtype == np.int64
    # read_pb, given the declaration, gives the same verdict in the same words
    model = store.model("contra")
    arrays = {}
    for name, declared in (
        ("input_0.pb", model.graph.input[0].type),
        ("output_0.pb", model.graph.output[0].type),
    ):
        path = src / "test_data_set_0" / name
        with pytest.warns(DeclarationWarning) as read:
            arrays[name] = read_pb(path, declared)
        words = str(read[0].message).replace(str(src.parent) + "/", "")
        assert words in imported
    assert arrays["input_0.pb"].type.shape == [2, 3]  # its own type, not the declared one
    assert arrays["output_0.pb"].type.value_type.value_type == pa.int64()


def test_a_model_saved_as_pb_is_named_with_the_fix(tmp_path: Any) -> None:
    """A case whose model is model.pb: its files are stored as they are, and the .pb that
    holds the model is said to, with the rename that makes it the case's model."""
    from layout_corpora import fastgelu

    from onnx_arrow.corpus.sources import FolderSource

    case = fastgelu(tmp_path / "src" / "onnx2c")
    (case / "model.onnx").rename(case / "model.pb")
    (loaded,) = FolderSource(tmp_path / "src")
    assert loaded.model_path is None
    batch, builder = _batch(loaded)
    assert builder.warnings == [
        "onnx2c/model.pb: holds an ONNX model (a ModelProto), not a value: rename it "
        "model.onnx so that it types its case's data sets; kept as a file"
    ]
    assert set(_roles(batch).values()) == {"file"}


def test_files_alike_at_both_ends_are_told_apart_and_equal_ones_decoded_once() -> None:
    """A value file is looked up among those decoded by its ends, then by all its bytes:
    files that differ only in the middle are two values, equal files one; their digests
    (computed beside, as the files are large) are theirs."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [32768])
    model = helper.make_model(helper.make_graph([], "g", [x], [x])).SerializeToString()
    base = np.arange(32768, dtype=np.float32)
    middle = base.copy()
    middle[16384] = -1.0
    builder = RowBuilder()
    for name, values in (("a", base), ("b", middle), ("c", base)):
        data = numpy_helper.from_array(values, "x").SerializeToString()
        files = [
            CorpusFile(f"{name}/model.onnx", model),
            CorpusFile(f"{name}/test_data_set_0/input_0.pb", data),
        ]
        builder.add_case(Case(name, "node", files, f"{name}/model.onnx"))
    batch = builder.to_batch()
    values = batch.filter(pa.compute.equal(batch.column("role"), "value"))
    got = [np.asarray(v, np.float32) for v in values.column("data_float").to_pylist()]
    assert [g[16384] for g in got] == [16384.0, -1.0, 16384.0]
    assert len(builder.leaves) == 2  # the third file is the first's bytes: decoded once
    digests = values.column("digest").to_pylist()
    assert digests[0] == digests[2] == hashlib.blake2b(data, digest_size=16).digest()
    assert digests[1] != digests[0]
