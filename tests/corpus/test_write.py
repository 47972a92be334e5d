"""The write pipeline (corpus/write.py): what a store holds, the same bytes whatever the
number of jobs, row groups of whole cases, streaming, and nothing half-written on an error
or Ctrl-C."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from onnx import TensorProto, helper, numpy_helper, save_model
from store_helpers import float_case, small_corpus, tree_bytes

from onnx_arrow.core.dtypes import dtype_of_numpy
from onnx_arrow.core.statistics import has_nan_and_inf
from onnx_arrow.corpus import (
    CorpusError,
    FolderSource,
    Store,
    export_store,
    parquet,
    write_store,
)
from onnx_arrow.corpus.options import WriteOptions
from onnx_arrow.corpus.sources import CaseRef, wheel_data_dir
from onnx_arrow.corpus.write import BackgroundWriter, RowGroup
from onnx_arrow.errors import OnnxArrowError, UnsupportedTypeError


def test_values_are_typed_by_the_model_not_the_bytes(node_store):
    _, path, _ = node_store
    table = pq.read_table(path, columns=["test_case", "role", "path", "onnx_type", "value_kind"])
    rows = table.filter(pa.compute.equal(table["test_case"], "node/test_loop16_seq_none"))
    rows = rows.to_pylist()
    values = {r["path"].rsplit("/", 1)[-1]: r for r in rows if r["role"] == "value"}
    assert values["input_2.pb"]["onnx_type"] == "optional(seq(tensor(float)))"
    assert json.loads(values["output_0.pb"]["value_kind"])[0] == "sequence"


def test_statistics_columns_are_numpys_on_every_tensor_value(node_store):
    # min, max, mean ignore NaN; NaN and Inf are counted for floats; checked per tensor file
    cases, path, _ = node_store
    source = {f.path: f.data for case in cases for f in case.files}
    columns = ["path", "onnx_type", "min", "max", "mean", "nan_count", "inf_count"]
    table = pq.read_table(path, columns=columns, filters=[("role", "=", "value")])
    checked = 0
    for row in table.to_pylist():
        if not row["onnx_type"].startswith("tensor("):
            continue
        codes = numpy_helper.to_array(TensorProto.FromString(source[row["path"]]))
        onnx_dtype = dtype_of_numpy(codes.dtype)
        if codes.dtype.kind in "OSUc":
            assert row["min"] is row["nan_count"] is None, row["path"]
            continue
        x = codes.astype(np.float64).ravel()
        nan = np.isnan(x)
        counts = (int(nan.sum()), int(np.isinf(x).sum()))
        assert (row["nan_count"], row["inf_count"]) == (
            counts if has_nan_and_inf(onnx_dtype) else (None, None)
        ), row["path"]
        kept = x[~nan]
        if not kept.size:
            assert row["min"] is row["max"] is row["mean"] is None, row["path"]
            continue
        assert (row["min"], row["max"]) == (kept.min(), kept.max()), row["path"]
        with np.errstate(invalid="ignore"):
            mean = kept.mean()
        assert row["mean"] == pytest.approx(mean, rel=1e-9, nan_ok=True), row["path"]
        checked += 1
    assert checked > 5000


def test_interrupted_import_leaves_no_store(tmp_path):
    out = tmp_path / "store.parquet"

    def cases():
        yield from FolderSource(small_corpus(tmp_path / "src"))
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_store(cases(), out)
    assert list(tmp_path.iterdir()) == [tmp_path / "src"]


def test_failed_import_keeps_the_previous_store(tmp_path):
    out = tmp_path / "store.parquet"
    write_store(FolderSource(small_corpus(tmp_path / "src")), out)
    before = out.read_bytes()
    bad = tmp_path / "src" / "node" / "test_tiny" / "test_data_set_0" / "input_0.pb"
    bad.write_bytes(b"\x08\x02\x10\x01\x4a\x03abc")  # dims [2], FLOAT, 3 bytes of raw_data
    with pytest.raises(
        OnnxArrowError, match=r"input_0\.pb: does not decode as tensor\(float\).*\(raw_data: "
    ) as info:
        write_store(FolderSource(tmp_path / "src"), out)
    assert "node/test_tiny/test_data_set_0/input_0.pb" in str(info.value)
    assert out.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src", "store.parquet"]


def test_a_failed_write_stops_the_import_and_leaves_no_store(tmp_path, monkeypatch):
    written = []

    def write_table(self, table, row_group_size=None):
        if written:
            raise OSError(28, "No space left on device")
        written.append(table.num_rows)

    monkeypatch.setattr(pq.ParquetWriter, "write_table", write_table)
    out = tmp_path / "store.parquet"
    options = WriteOptions(row_group_bytes=1)  # a row group per case
    with pytest.raises(OSError, match="No space left") as info:
        write_store(FolderSource(wheel_data_dir()), out, options=options)
    assert info.value.filename == str(out)  # the error names the store
    assert written == [written[0]]
    assert list(tmp_path.iterdir()) == []


def test_an_interrupt_while_writing_leaves_no_store(tmp_path, monkeypatch):
    calls = []

    def write_table(self, table, row_group_size=None):
        calls.append(table.num_rows)

    def interrupted(case):
        if len(calls) >= 3:  # Ctrl-C once the writer thread has written some row groups
            raise KeyboardInterrupt

    monkeypatch.setattr(pq.ParquetWriter, "write_table", write_table)
    # the float encodings chosen on the first row group: the next ones go straight to the file
    monkeypatch.setattr(parquet, "JUDGED_BYTES", 1)
    out = tmp_path / "store.parquet"
    with pytest.raises(KeyboardInterrupt):
        write_store(
            FolderSource(wheel_data_dir()),
            out,
            options=WriteOptions(row_group_bytes=1),
            progress=interrupted,
        )
    assert list(tmp_path.iterdir()) == []


def _ctrl_c_during_finish(background: BackgroundWriter) -> None:
    """Send this process a Ctrl-C 0.2 s into ``background.finish()``, which raises it."""
    main = threading.main_thread().ident
    assert main is not None
    timer = threading.Timer(0.2, signal.pthread_kill, (main, signal.SIGINT))
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        background.finish()
    timer.join()


def test_ctrl_c_while_waiting_for_the_writer_thread_waits_until_it_is_out_of_the_writer(ctrl_c):
    # On Python 3.11 a Thread.join() interrupted by KeyboardInterrupt marks the thread as
    # stopped while it still runs: the file would be closed under the writer's feet.
    inside, left = threading.Event(), threading.Event()

    def write(group):
        inside.set()
        time.sleep(0.6)  # a row group being encoded, the GIL released
        left.set()

    background = BackgroundWriter(write)
    background.write(RowGroup())
    assert inside.wait(10)
    _ctrl_c_during_finish(background)
    assert left.is_set()


@pytest.mark.parametrize("hostile", ["fifo", "dev_zero", "symlink_out"])
def test_hostile_folders_neither_hang_nor_read_without_end(tmp_path, hostile):
    root = small_corpus(tmp_path / "src")
    target = root / "node" / "test_tiny" / "test_data_set_0" / "input_1.pb"
    if hostile == "fifo":
        os.mkfifo(target)
    elif hostile == "dev_zero":
        target.symlink_to("/dev/zero")
    else:
        (tmp_path / "secret").write_bytes(b"secret")
        target.symlink_to(tmp_path / "secret")
    signal.alarm(10)
    try:
        with pytest.raises(CorpusError, match=r"input_1\.pb"):
            write_store(FolderSource(root), tmp_path / "out.parquet")
    finally:
        signal.alarm(0)
    assert not (tmp_path / "out.parquet").exists()


def test_file_size_cap(tmp_path):
    root = small_corpus(tmp_path / "src")
    with pytest.raises(CorpusError, match="exceed the limit"):
        write_store(FolderSource(root, max_file_bytes=16), tmp_path / "out.parquet")


def test_import_into_a_missing_folder_names_that_folder(tmp_path):
    missing = tmp_path / "no" / "such"
    with pytest.raises(CorpusError, match="does not exist; create it") as info:
        write_store(FolderSource(small_corpus(tmp_path / "src")), missing / "store.parquet")
    assert str(info.value).startswith(str(missing))


@pytest.mark.parametrize(
    ("argument", "junk"),
    [
        ("cases", 1),
        ("cases", "corpus"),
        ("cases", [1]),
        ("cases", pa.array([1])),
        ("out", None),
        ("out", 1),
        ("options", {"row_group_bytes": 1}),
    ],
)
def test_junk_arguments_are_refused_before_anything_is_written(tmp_path, argument, junk):
    args = {"cases": [float_case("node/a", 2)], "out": tmp_path / "store.parquet"}
    args[argument] = junk
    with pytest.raises(UnsupportedTypeError, match=rf"^write_store\({argument}\)"):
        write_store(**args)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_lazy_source_has_each_case_checked_as_it_is_read(tmp_path, jobs):
    src = small_corpus(tmp_path / "src")
    out = tmp_path / "store.parquet"

    def cases():
        yield from FolderSource(src)
        yield "node/b"

    with pytest.raises(UnsupportedTypeError, match=r"^write_store\(cases\)\[1\]: expected Case"):
        write_store(cases(), out, jobs=jobs)
    assert list(tmp_path.iterdir()) == [src]


def test_a_folder_source_is_read_by_the_workers_through_the_check(tmp_path, monkeypatch):
    loaded = []
    load = CaseRef.load

    def load_here(ref):
        loaded.append(ref.name)
        return load(ref)

    monkeypatch.setattr(CaseRef, "load", load_here)
    src = small_corpus(tmp_path / "src")
    summary = write_store(FolderSource(src), tmp_path / "store.parquet", jobs=2)
    assert summary["cases"] == 1
    assert loaded == []  # the workers read the case, not this process
    write_store(FolderSource(src), tmp_path / "again.parquet")
    assert loaded == ["node/test_tiny"]


@pytest.mark.parametrize("location", ["weights.bin", "../../outside.bin"])
def test_external_data_is_kept_as_bytes_and_never_read(tmp_path, location):
    root = small_corpus(tmp_path / "src")
    case = root / "node" / "test_tiny"
    (case / "weights.bin").write_bytes(np.array([-1.0, 2.0], np.float32).tobytes())
    (tmp_path / "outside.bin").write_bytes(b"secret")
    tensor = TensorProto(name="x", data_type=TensorProto.FLOAT, dims=[2])
    tensor.data_location = TensorProto.EXTERNAL
    tensor.external_data.add(key="location", value=location)
    (case / "test_data_set_0" / "input_0.pb").write_bytes(tensor.SerializeToString())
    summary = write_store(FolderSource(root), tmp_path / "store.parquet")
    assert any("external data" in w and "input_0.pb" in w for w in summary["warnings"])
    table = pq.read_table(tmp_path / "store.parquet", columns=["path", "role", "content"])
    contents = b"".join(c or b"" for c in table.column("content").to_pylist())
    assert b"secret" not in contents
    export_store(tmp_path / "store.parquet", tmp_path / "out")
    assert tree_bytes(tmp_path / "out") == tree_bytes(root)


@pytest.mark.parametrize("row_group_bytes", [1, 300_000, 4 << 20])
def test_the_store_is_the_same_whatever_the_number_of_jobs(tmp_path, monkeypatch, row_group_bytes):
    # small tasks, so that workers stop early and row groups are cut inside their pieces
    monkeypatch.setattr("onnx_arrow.corpus.write.TASK_CASES", 7)
    options = WriteOptions(row_group_bytes=row_group_bytes)
    one, two = tmp_path / "one.parquet", tmp_path / "two.parquet"
    seen: dict[int, list[str]] = {1: [], 2: []}
    summary = write_store(
        FolderSource(wheel_data_dir()),
        one,
        options=options,
        progress=lambda c: seen[1].append(c.name),
    )
    assert write_store(
        FolderSource(wheel_data_dir()),
        two,
        options=options,
        jobs=2,
        progress=lambda c: seen[2].append(c.name),
    ) == {**summary, "bytes": two.stat().st_size}
    assert one.read_bytes() == two.read_bytes()
    assert seen[1] == seen[2] == Store(one).cases()  # each case once, in store order
    assert Store(one).num_row_groups > (1 if row_group_bytes < (1 << 20) else 0)


def test_folder_layouts_round_trip(tmp_path):
    root = small_corpus(tmp_path / "src")
    case = root / "node" / "test_tiny"
    # a case folder inside a case folder belongs to the outer case, deep files too
    nested = case / "extra" / "inner"
    nested.mkdir(parents=True)
    (nested / "model.onnx").write_bytes((case / "model.onnx").read_bytes())
    (nested / "notes.txt").write_text("deep\n")
    # a light case (NAME.onnx, NAME_input_K.pb) beside a case folder of the same name
    light = root / "node"
    (light / "test_tiny.onnx").write_bytes((case / "model.onnx").read_bytes())
    (light / "test_tiny_input_0.pb").write_bytes(
        (case / "test_data_set_0" / "input_0.pb").read_bytes()
    )
    (light / "loose.pb").write_bytes(b"a file of no case\n")  # a value of no model: a case
    out = tmp_path / "store.parquet"
    summary = write_store(FolderSource(root), out)
    assert summary["files"] == 9
    store = Store(out)
    assert store.cases() == ["node", "node/test_tiny"]
    roles = dict(
        zip(
            *store.read_case("node/test_tiny", ["path", "role"]).to_pydict().values(),
            strict=True,
        )
    )
    assert roles["node/test_tiny/model.onnx"] == "model"
    assert roles["node/test_tiny/extra/inner/model.onnx"] == "file"
    assert roles["node/test_tiny_input_0.pb"] == "file"  # typed by no model: kept as bytes
    export_store(out, tmp_path / "dest")
    assert tree_bytes(tmp_path / "dest") == tree_bytes(root)


def test_node_suite_store_is_the_same_in_several_processes(node_store, tmp_path, monkeypatch):
    cases, path, summary = node_store
    monkeypatch.setattr("onnx_arrow.corpus.write.TASK_CASES", 50)  # cuts inside pieces
    two = tmp_path / "two.parquet"
    assert write_store(cases, two, jobs=2) == {**summary, "bytes": two.stat().st_size}
    assert two.read_bytes() == path.read_bytes()


_PEAK_MEMORY = """
import resource, sys
from pathlib import Path
from onnx_arrow.corpus import FolderSource, WriteOptions, export_store, write_store

def peak_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

def rss_mib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20

mode, small, big, work = sys.argv[1], *(Path(p) for p in sys.argv[2:5])
options = WriteOptions(row_group_bytes=1 << 20)
write_store(FolderSource(small), work / f"small-{mode}.parquet", options=options)
export_store(work / f"small-{mode}.parquet", work / f"small-{mode}")  # modules warmed up
before = max(rss_mib(), peak_mib())
if mode == "import":
    write_store(FolderSource(big), work / "big.parquet", options=options)
else:
    export_store(work / "big.parquet", work / "big-out")
print(peak_mib() - before)
"""


def _big_corpus(root: Path, cases: int, like: Path | None = None) -> Path:
    """Cases of one 1 MiB tensor each; those ``like`` has already are hard links to it."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [256, 1024])
    model = helper.make_model(helper.make_graph([], "g", [x], [x]))
    for k in range(cases):
        name = f"node/test_big_{k:03d}"
        case = root / name
        (case / "test_data_set_0").mkdir(parents=True)
        for rel in ("model.onnx", "test_data_set_0/input_0.pb"):
            if like is not None and (like / name / rel).exists():
                os.link(like / name / rel, case / rel)
        if (case / "model.onnx").exists():
            continue
        save_model(model, case / "model.onnx")
        data = (np.arange(256 * 1024, dtype=np.float32) % 97 + k).reshape(256, 1024)
        tensor = numpy_helper.from_array(data, "x").SerializeToString()
        (case / "test_data_set_0" / "input_0.pb").write_bytes(tensor)
    return root


@pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="reads Linux's /proc")
def test_import_and_export_memory_does_not_grow_with_the_corpus(tmp_path):
    # 16 and 80 cases of 1 MiB in row groups of 1 MiB: holding the corpus would cost the
    # larger one 64 MiB more; streaming costs both a few row groups and their buffers, and
    # the Parquet writer keeps each row group's metadata for the footer (about 48 KB)
    small = small_corpus(tmp_path / "small")
    few = _big_corpus(tmp_path / "few", 16)
    many = _big_corpus(tmp_path / "many", 80, like=few)
    grew = {}
    for corpus in (few, many):
        for mode in ("import", "export"):
            work = tmp_path / f"{corpus.name}-{mode}"
            work.mkdir()
            if mode == "export":
                shutil.copy(tmp_path / f"{corpus.name}-import" / "big.parquet", work)
            done = subprocess.run(
                [sys.executable, "-c", _PEAK_MEMORY, mode, str(small), str(corpus), str(work)],
                capture_output=True,
                text=True,
                check=True,
            )
            grew[corpus.name, mode] = float(done.stdout)
    for mode in ("import", "export"):
        assert grew["many", mode] - grew["few", mode] < 32, grew
    assert tree_bytes(tmp_path / "many-export" / "big-out") == tree_bytes(many)


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_large_case_is_a_row_group_of_its_own(tmp_path, jobs):
    """Reading one large case reads no other case's pages; small cases still share."""
    budget = 64 << 10
    half = budget // 2 // 4  # elements of float32 in half the budget
    sizes = [10, 10, half - 200, 10, half, 10]
    cases = [float_case(f"node/test_{k}", n) for k, n in enumerate(sizes)]
    out = tmp_path / "store.parquet"
    write_store(cases, out, options=WriteOptions(row_group_bytes=budget), jobs=jobs)
    parquet = pq.ParquetFile(out)
    groups = [
        sorted(set(parquet.read_row_group(i, columns=["test_case"]).column(0).to_pylist()))
        for i in range(parquet.num_row_groups)
    ]
    assert groups == [
        ["node/test_0", "node/test_1", "node/test_2", "node/test_3"],
        ["node/test_4"],
        ["node/test_5"],
    ]
    store = Store(out)
    for case in cases:
        ((value,),) = [list(d["inputs"].values()) for d in store.case_arrays(case.name)]
        assert value.tobytes() == case.files[1].data[-value.nbytes :]


def test_row_groups_prepared_on_several_threads_are_written_in_their_order() -> None:
    rng = random.Random(0)
    delays = [rng.uniform(0, 0.01) for _ in range(40)]
    written: list[bytes] = []
    preparing: set[int] = set()
    most = [0]
    lock = threading.Lock()

    def prepare(group: RowGroup) -> None:
        with lock:
            preparing.add(group.files)
            most[0] = max(most[0], len(preparing))
        time.sleep(delays[group.files])  # as an encoder does, the GIL released
        with lock:
            preparing.discard(group.files)
        group.encoded = b"%d" % group.files

    background = BackgroundWriter(
        lambda group: written.append(group.encoded), prepare=prepare, threads=3
    )
    for k in range(40):
        background.write(RowGroup(files=k))
        assert k + 1 - len(written) <= 2 * 3  # at most twice the threads ahead of the file
    background.finish()
    assert written == [b"%d" % k for k in range(40)]
    assert most[0] > 1  # several prepared at once


def test_a_row_group_that_fails_to_prepare_stops_the_writing_after_those_before_it() -> None:
    written: list[int] = []

    def prepare(group: RowGroup) -> None:
        time.sleep(0.002 * (group.files % 3))
        if group.files == 5:
            raise ValueError("cannot encode row group 5")

    background = BackgroundWriter(
        lambda group: written.append(group.files), prepare=prepare, threads=2
    )

    def feed() -> None:
        for k in range(20):
            background.write(RowGroup(files=k))
        background.finish()

    with pytest.raises(ValueError, match="row group 5"):
        feed()
    background.abandon()  # as write_rows does on an error: every thread has ended
    assert written == [0, 1, 2, 3, 4]


def test_ctrl_c_while_finish_waits_for_room_in_the_queue_waits_for_the_writer(ctrl_c: None) -> None:
    """A Ctrl-C while ``finish`` waits to queue its end (a row group written, another
    queued) is raised only once the writer thread has left the file, and the queued row
    group is not written: the file is never closed under the writer's feet."""
    inside, left = threading.Event(), threading.Event()
    written: list[RowGroup] = []

    def write(group: RowGroup) -> None:
        inside.set()
        time.sleep(0.6)  # a row group being encoded, the GIL released
        written.append(group)
        left.set()

    background = BackgroundWriter(write)
    first, second = RowGroup(), RowGroup()
    background.write(first)
    assert inside.wait(10)
    background.write(second)  # the queue is full now: finish() waits for room
    _ctrl_c_during_finish(background)
    assert left.is_set()
    time.sleep(0.7)
    assert written == [first]


def test_a_second_ctrl_c_while_the_writing_is_abandoned_waits_too(ctrl_c: None) -> None:
    inside = threading.Event()
    written: list[RowGroup] = []

    def write(group: RowGroup) -> None:
        inside.set()
        time.sleep(0.6)
        written.append(group)

    background = BackgroundWriter(write)
    background.write(RowGroup())
    assert inside.wait(10)
    main = threading.main_thread().ident
    assert main is not None
    timer = threading.Timer(0.2, signal.pthread_kill, (main, signal.SIGINT))
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        background.abandon()  # the Ctrl-C is raised after, not in the middle
    timer.join()
    assert len(written) == 1
