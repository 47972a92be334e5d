"""What a hostile case does, run inside the child process (:mod:`hostile.child`).

Each action takes JSON arguments (paths made by :mod:`hostile.families` and
:mod:`hostile.readers`) and calls one public entry point the way a user would:
:func:`onnx_arrow.read_pb`, the ``onnx-arrow`` command line (``main``, in process),
:class:`onnx_arrow.corpus.Store`, the Arrow entry points on data read from an IPC file or
built in memory (the ``build_*`` functions), the pandas adapter, and the readers of what
comes back from elsewhere: a store's rows handed to ``cases_from_rows`` as engines hand
them, ``from_portable``, :func:`onnx_arrow.diff.diff` and compare reports.  An action
returns a small dict, or raises: the child reports either.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
from onnx import ModelProto, TensorProto, numpy_helper

import onnx_arrow


def read_pb(
    path: str, model: str | None = None, io: str = "input", index: int = 0, back: bool = True
) -> dict:
    declared = None
    if model is not None:
        graph = ModelProto.FromString(Path(model).read_bytes()).graph
        declared = (graph.input if io == "input" else graph.output)[index].type
    array = onnx_arrow.read_pb(path, declared, base_dir=Path(path).parent, exact=True)
    if back:
        onnx_arrow.from_arrow(array)
    return {"rows": len(array)}


def cli(argv: list[str]) -> dict:
    from onnx_arrow.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(argv)
    return {"rc": rc, "stdout": out.getvalue()[-2000:], "stderr": err.getvalue()[-2000:]}


def store(path: str, op: str, case: str | None = None, dest: str | None = None) -> dict:
    from onnx_arrow.corpus import Store

    s = Store(path)
    if op == "open":
        return {"cases": len(s.cases())}
    if op == "values":
        return {"values": sum(1 for _ in s.values())}
    if op == "files":
        return {"files": sum(1 for _ in s.files())}
    name = case if case is not None else s.cases()[0]
    if op == "model":
        s.model(name)
    elif op == "case_arrays":
        s.case_arrays(name)
    elif op == "case_table":
        s.case_table(name)
    elif op == "export":
        assert dest is not None
        return s.export(dest)
    else:
        raise ValueError(f"unknown store op {op!r}")
    return {}


def _apply(array: Any, op: str) -> dict:
    if op == "from_arrow":
        onnx_arrow.from_arrow(array)
    elif op == "to_numpy":
        onnx_arrow.to_numpy(array)
    elif op == "to_pylist":
        onnx_arrow.to_pylist(array)
    elif op == "to_pandas":
        import onnx_arrow.pandas as oap

        oap.to_pandas(array)
    elif op == "cases_from_rows":
        from onnx_arrow.corpus import cases_from_rows

        cases_from_rows(array)
    else:
        raise ValueError(f"unknown op {op!r}")
    return {}


def ipc(path: str, op: str) -> dict:
    """Read the first column of an Arrow IPC file (as another engine wrote it), then ``op``."""
    with pa.memory_map(path) as source:
        table = pa.ipc.open_file(source).read_all()
    return _apply(table if op == "cases_from_rows" else table.column(0), op)


def built(builder: str, op: str) -> dict:
    """Build an array in memory with ``build_<builder>``, then ``op``."""
    return _apply(globals()[f"build_{builder}"](), op)


def call(name: str, **kwargs: Any) -> dict:
    """Run ``case_<name>``: a case that is its own whole action."""
    result = globals()[f"case_{name}"](**kwargs)
    return result if isinstance(result, dict) else {}


# --- arrays built by hand ------------------------------------------------------------------


def _exact_float_tensors(n: int = 2) -> pa.ExtensionArray:
    tensors = [numpy_helper.from_array(np.full(2, i, np.float32), f"t{i}") for i in range(n)]
    return onnx_arrow.to_arrow(tensors, exact=True)


def _with_envelope(array: pa.ExtensionArray, envelope: pa.Array) -> pa.ExtensionArray:
    storage = array.storage
    struct = pa.StructArray.from_arrays(
        [storage.field("value"), envelope], fields=list(storage.type)
    )
    return pa.ExtensionArray.from_storage(array.type, struct)


def _binary_with_offsets(offsets: list[int], data: bytes) -> pa.Array:
    return pa.Array.from_buffers(
        pa.binary(),
        len(offsets) - 1,
        [None, pa.py_buffer(np.array(offsets, np.int32).tobytes()), pa.py_buffer(data)],
    )


def build_envelope_offsets_backwards() -> pa.Array:
    """An ``onnx.message`` envelope whose offsets go backwards (a forged buffer)."""
    return _with_envelope(_exact_float_tensors(), _binary_with_offsets([0, 40, 3], b"\x00" * 8))


def build_string_tensor_offsets_backwards() -> pa.Array:
    strings = onnx_arrow.to_arrow([numpy_helper.from_array(np.array([b"a", b"bc"], object))])
    bad = _binary_with_offsets([0, 1 << 20, 2], b"abc")
    storage = pa.FixedSizeListArray.from_arrays(bad, 2)
    return pa.ExtensionArray.from_storage(strings.type, storage)


def _variable_shape(shape: list[int], data: list[float], uniform: Any = None) -> pa.Array:
    tensors = [
        numpy_helper.from_array(np.ones(2, np.float32)),
        numpy_helper.from_array(np.ones(3, np.float32)),
    ]
    good = onnx_arrow.to_arrow(tensors)
    vtype = good.type
    if uniform is not None:
        from onnx_arrow.core.tensor_types import variable_shape_tensor

        vtype = variable_shape_tensor(pa.float32(), 1, uniform_shape=uniform)
    storage = pa.StructArray.from_arrays(
        [
            pa.array([data], pa.list_(pa.float32())),
            pa.FixedSizeListArray.from_arrays(pa.array(shape, pa.int32()), len(shape)),
        ],
        fields=list(good.type.storage_type),
    )
    return pa.ExtensionArray.from_storage(vtype, storage)


def build_variable_shape_negative_dims() -> pa.Array:
    return _variable_shape([-1], [])


def build_variable_shape_against_uniform_shape() -> pa.Array:
    return _variable_shape([3], [1.0, 2.0, 3.0], uniform=[2])


def build_variable_shape_data_against_shape() -> pa.Array:
    return _variable_shape([5], [1.0, 2.0])


def build_bool8_value_7() -> pa.Array:
    good = onnx_arrow.to_arrow([numpy_helper.from_array(np.array([True, False]))])
    items = pa.ExtensionArray.from_storage(pa.bool8(), pa.array([7, 0], pa.int8()))
    return pa.ExtensionArray.from_storage(good.type, pa.FixedSizeListArray.from_arrays(items, 2))


def build_envelope_with_dims() -> pa.Array:
    """An exact tensor row whose envelope carries ``dims`` (the value holds the dims)."""
    good = _exact_float_tensors(1)
    envelope = TensorProto(name="t0", data_type=TensorProto.FLOAT, dims=[7]).SerializeToString()
    return _with_envelope(good, pa.array([envelope], pa.binary()))


def build_envelope_garbage() -> pa.Array:
    return _with_envelope(_exact_float_tensors(1), pa.array([b"\xff\xff\xff"], pa.binary()))


def build_envelope_null_value() -> pa.Array:
    good = _exact_float_tensors(2)
    storage = good.storage
    value = storage.field("value")
    nulled = pa.ExtensionArray.from_storage(
        value.type,
        pa.FixedSizeListArray.from_arrays(value.storage.values, 2, mask=pa.array([False, True])),
    )
    struct = pa.StructArray.from_arrays(
        [nulled, storage.field("envelope")], fields=list(storage.type)
    )
    return pa.ExtensionArray.from_storage(good.type, struct)


def build_sparse_indices_out_of_range() -> pa.Array:
    """A sparse tensor of dims [1] whose indices are 0 and 1 (its dims forged smaller)."""
    from onnx import helper

    values = numpy_helper.from_array(np.array([1.0, 2.0], np.float32), "v")
    indices = numpy_helper.from_array(np.array([0, 1], np.int64), "i")
    good = onnx_arrow.to_arrow([helper.make_sparse_tensor(values, indices, [4])])
    storage = good.storage
    fields = [storage.field(i) for i in range(storage.type.num_fields)]
    fields[0] = pa.array([[1]], storage.type.field(0).type)
    struct = pa.StructArray.from_arrays(fields, fields=list(storage.type))
    return pa.ExtensionArray.from_storage(good.type, struct)


# --- whole cases ------------------------------------------------------------------------------


def case_from_pandas_broadcast_view() -> None:
    import pandas as pd

    import onnx_arrow.pandas as oap

    view = np.broadcast_to(np.float32(0), (1 << 41,))
    oap.from_pandas(pd.Series([view], dtype=object))


def case_from_pandas_masked_array() -> dict:
    import pandas as pd

    import onnx_arrow.pandas as oap

    cell = np.ma.MaskedArray(np.array([1.0, 2.0], np.float32), mask=[False, True])
    array = oap.from_pandas(pd.Series([cell], dtype=object))
    return {"stored": onnx_arrow.to_numpy(array).tolist()}


def case_declared_shape_overflows() -> None:
    from onnx import TensorProto as T
    from onnx import helper

    declared = helper.make_tensor_type_proto(T.FLOAT, [1 << 40, 1 << 40, 1 << 40])
    onnx_arrow.to_arrow([numpy_helper.from_array(np.ones(1, np.float32))], declared)


def case_arrow_type_of_a_huge_shape() -> None:
    from onnx import TensorProto as T
    from onnx import helper

    onnx_arrow.arrow_type(helper.make_tensor_type_proto(T.FLOAT, [1 << 62, 1 << 62]))


# --- the harness's own check: what a crash, a hang and a foreign error look like ----------


def crash() -> None:
    import os
    import signal

    os.kill(os.getpid(), signal.SIGSEGV)


def hang() -> None:
    import time

    time.sleep(3600)


def foreign() -> None:
    empty: list[int] = []
    empty.pop()


# --- external data inside containers -------------------------------------------------------


def _external_tensor(location: str) -> TensorProto:
    t = TensorProto(name="x", data_type=TensorProto.FLOAT, dims=[2])
    t.data_location = TensorProto.EXTERNAL
    entry = t.external_data.add()
    entry.key, entry.value = "location", location
    return t


def case_external_data_in_a_map(base_dir: str) -> None:
    m = numpy_helper.from_dict({1: np.ones(2, np.float32)}, "m")
    m.values.tensor_values[0].CopyFrom(_external_tensor("../outside.bin"))
    onnx_arrow.to_arrow([m], base_dir=base_dir)


def case_external_data_in_sparse_values(base_dir: str) -> None:
    from onnx import helper

    indices = numpy_helper.from_array(np.array([0, 1], np.int64))
    sparse = helper.make_sparse_tensor(_external_tensor("/etc/passwd"), indices, [4])
    onnx_arrow.to_arrow([sparse], base_dir=base_dir)


def build_message_kind_against_storage() -> pa.Array:
    """An ``onnx.message`` column whose metadata says sequence over a tensor's storage, as
    read from IPC (pyarrow keeps the type as read)."""
    import json

    good = _exact_float_tensors(1)
    meta = json.loads(good.type.__arrow_ext_serialize__())
    meta["kind"] = ["sequence", ["tensor"]]
    field = pa.field(
        "v",
        good.type.storage_type,
        metadata={
            b"ARROW:extension:name": b"onnx.message",
            b"ARROW:extension:metadata": json.dumps(meta).encode(),
        },
    )
    table = pa.Table.from_arrays([good.storage], schema=pa.schema([field]))
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    return pa.ipc.open_file(sink.getvalue()).read_all().column(0)


# --- what readers of stores, engines' rows, portable tables and reports are handed -----------


def _parts(path: Path) -> list[Path]:
    return sorted(path.rglob("*.parquet")) if path.is_dir() else [path]


def rows_of_store(path: str) -> dict:
    """The rows of each part of a store, as an engine hands a part to a worker, to
    :func:`~onnx_arrow.corpus.cases_from_rows`; then all of them at once, as an engine that
    reads the whole folder does (where the parts share one schema)."""
    import pyarrow.parquet as pq

    from onnx_arrow.corpus import cases_from_rows

    tables = [(p, pq.read_table(p)) for p in _parts(Path(path))]
    cases = 0
    for part, table in tables:
        cases += len(cases_from_rows(table, where=str(part)))
    if len({t.schema.remove_metadata() for _, t in tables}) == 1:
        whole = pa.concat_tables([t for _, t in tables])
        return {"cases": len(cases_from_rows(whole, where=path))}
    return {"cases": cases}


def _engine_rows(path: str, engine: str) -> Any:
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    if engine == "pandas":  # a Dask partition of the default (numpy) backend
        return table.to_pandas()
    if engine == "pandas-arrow":  # a Dask partition read with dtype_backend="pyarrow"
        import pandas as pd

        return table.to_pandas(types_mapper=pd.ArrowDtype)
    return table


def rows(path: str, engine: str = "pyarrow") -> dict:
    """The rows of a file, as ``engine`` hands them over, to ``cases_from_rows``, and every
    value of every case decoded."""
    from onnx_arrow.corpus import cases_from_rows

    cases = cases_from_rows(_engine_rows(path, engine), where=Path(path).name)
    for stored in cases:
        for value in stored.values:
            value.to_numpy(strings="bytes")
    return {"cases": sorted(c.name for c in cases)}


def rows_by_case(path: str) -> dict:
    """Each case's rows, sliced from the table as a partition keeps the row group's
    buffers, to ``cases_from_rows`` on their own: which cases read and which are refused."""
    import pyarrow.parquet as pq

    from onnx_arrow.corpus import cases_from_rows
    from onnx_arrow.errors import OnnxArrowError

    table = pq.read_table(path)
    names = table.column("test_case").to_pylist()
    read, refused = [], []
    start = 0
    while start < len(names):
        end = start
        while end < len(names) and names[end] == names[start]:
            end += 1
        try:
            for stored in cases_from_rows(table.slice(start, end - start), where="slice"):
                for value in stored.values:
                    value.to_numpy(strings="bytes")
            read.append(names[start])
        except OnnxArrowError:
            refused.append(names[start])
        start = end
    return {"read": read, "refused": refused}


def portable(path: str, expected: str, schema: str | None = None) -> dict:
    """A Parquet file (or folder of them) of :func:`onnx_arrow.to_portable` tables, read
    back as an engine reads it (``pq.read_table``), typed again by ``from_portable`` (with
    the schema from the IPC file ``schema`` where given) and its values compared with the
    ``.npz`` file ``expected`` (the first column's values, as to_numpy gives them)."""
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    recorded = None
    if schema is not None:
        with pa.memory_map(schema) as source:
            recorded = pa.ipc.open_file(source).schema
    back = onnx_arrow.from_portable(table, recorded)
    got = onnx_arrow.to_numpy(back.column(0))
    with np.load(expected, allow_pickle=False) as saved:
        want = [saved[f"arr_{k}"] for k in range(len(saved.files))]
    if len(got) != len(want):
        return {"same": False}
    pairs = zip(got, want, strict=True)
    same = all(np.asarray(g).dtype == w.dtype and np.array_equal(g, w) for g, w in pairs)
    return {"same": bool(same)}


def diff(old: str, new: str) -> dict:
    """:func:`onnx_arrow.diff.diff` of two corpora: the statuses it gives."""
    from onnx_arrow.diff import diff as diff_

    return {"statuses": sorted(set(diff_(old, new).to_pandas()["status"]))}


def report(path: str, store: str | None = None) -> dict:
    """Row 0 of the compare report file ``path`` shown as Jupyter shows it, as text."""
    from onnx_arrow.jupyter import report_view, text

    text(report_view(path, 0, store=store))
    return {}


def read_report(path: str) -> dict:
    """The compare report file ``path`` read back as a report, and as a DataFrame."""
    from onnx_arrow.compare.report import read_report as read

    return {"rows": len(read(path).to_pandas())}


# --- runners and the release cache (the folders onnx-arrow owns) ----------------------------


def runner(command: str, scratch: str, modes: list[str] | None = None) -> dict:
    """A :class:`~onnx_arrow.compare.CommandRunner` of ``command`` on an Abs model (its
    temporary folders in ``scratch``); the modes of ``modes`` after, and the folders it
    left there (made removable again first: the command may have locked one)."""
    import subprocess
    import tempfile

    from onnx import helper

    from onnx_arrow.compare import CommandRunner

    graph = helper.make_graph(
        [helper.make_node("Abs", ["x"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    tempfile.tempdir = scratch
    try:
        values = CommandRunner(command, timeout=10)(model, {"x": np.ones(3, np.float32)})
    finally:
        tempfile.tempdir = None
        after = {p: oct(os.stat(p).st_mode & 0o777) for p in modes or []}
        left = sorted(os.listdir(scratch))
        subprocess.run(["chattr", "-R", "-i", scratch], capture_output=True, check=False)
        for name in left:
            shutil.rmtree(Path(scratch, name), ignore_errors=True)
        if any(mode != oct(0o755) for mode in after.values()):
            raise AssertionError(f"the modes changed outside: {after}")
    return {"outputs": len(values), "left": left}


def release(op: str, cache: str, wheel: str | None = None, name: str | None = None) -> dict:
    """In the release cache ``cache``: ``store``, the cached store of ``@onnx==9.9.9``;
    ``wheel``, the cached wheel of onnx 9.9.9; ``fetch``, onnx 9.9.9 fetched from a package
    index on this machine that serves ``wheel`` under the file name ``name``."""
    os.environ["ONNX_ARROW_CACHE_DIR"] = cache
    os.environ["ONNX_ARROW_INDEX_URL"] = "http://127.0.0.1:9/simple"
    from onnx_arrow.corpus.releases import open_release_store
    from onnx_arrow.corpus.wheels import fetch_wheel

    if op == "store":
        with open_release_store("@onnx==9.9.9", offline=True) as path:
            return {"path": str(path)}
    if op == "wheel":
        return {"path": str(fetch_wheel("9.9.9", offline=True).path)}
    from release_helpers import LocalIndex

    class Renamed(LocalIndex):
        def page(self) -> tuple[bytes, str]:
            body, kind = super().page()
            return body.replace(Path(str(wheel)).name.encode(), str(name).encode(), 1), kind

    index = Renamed()
    try:
        index.add(Path(str(wheel)))
        os.environ["ONNX_ARROW_INDEX_URL"] = index.url
        return {"path": str(fetch_wheel("9.9.9").path)}
    finally:
        index.close()


def wheel_data(wheel: str, dest: str) -> dict:
    """The test data of ``wheel`` extracted into ``dest``."""
    from onnx_arrow.corpus.wheels import extract_data

    return {"kinds": extract_data(wheel, dest)}


def node_suite_cache(cache: str) -> dict:
    """The node suite's cases through its cache file in ``cache`` (built as none when the
    cache has no valid file), and what its file is after."""
    import stat

    os.environ["ONNX_ARROW_CACHE_DIR"] = cache
    from onnx_arrow.corpus.cache import _file_name, cached_cases, suite_key

    cases = cached_cases(list)
    mode = os.lstat(Path(cache, _file_name(suite_key()))).st_mode
    return {"cases": len(cases), "regular": stat.S_ISREG(mode)}
