"""The store read by Apache Spark (a real local session): rows, numbers and bytes as written."""

from __future__ import annotations

import fnmatch
import shutil
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from spark_helpers import end_spark_jvm

from onnx_arrow.corpus import NodeSuiteSource, write_store

pytest.importorskip("pyspark", reason="pyspark is not installed (pip install pyspark)")
if shutil.which("java") is None:
    pytest.skip("Spark needs a Java runtime: no `java` on PATH", allow_module_level=True)

from pyspark.sql import SparkSession

#: Two case sets, one store each; the one-file store holds both.
A_CASES = ("node/test_abs*", "node/test_cast_FLOAT_to_FLOAT16")
B_CASES = ("node/test_sequence*", "node/test_optional*")

#: Spark logs through log4j2 from the JVM's start: errors only.
_LOG4J = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = stderr
appender.stderr.type = Console
appender.stderr.name = stderr
appender.stderr.target = SYSTEM_ERR
appender.stderr.layout.type = PatternLayout
appender.stderr.layout.pattern = %p %c: %m%n
"""


@pytest.fixture(scope="module")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkSession]:
    tmp = tmp_path_factory.mktemp("spark")
    (tmp / "log4j2.properties").write_text(_LOG4J)
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("onnx-arrow-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.warehouse.dir", str(tmp / "warehouse"))
        .config(
            "spark.driver.extraJavaOptions",
            f"-Dlog4j2.configurationFile={tmp.as_uri()}/log4j2.properties",
        )
    )
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "PySpark does not yet fully support", FutureWarning)
        session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    yield session
    end_spark_jvm()


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """``one``: a one-file store of both case sets; ``folder``: a.parquet and b.parquet."""
    patterns = A_CASES + B_CASES
    cases = [c for c in NodeSuiteSource() if any(fnmatch.fnmatchcase(c.name, p) for p in patterns)]
    tmp = tmp_path_factory.mktemp("stores")
    paths = {"one": tmp / "one.parquet", "folder": tmp / "folder"}
    write_store(cases, paths["one"])
    paths["folder"].mkdir()
    for name, chosen in (("a", A_CASES), ("b", B_CASES)):
        part = [c for c in cases if any(fnmatch.fnmatchcase(c.name, p) for p in chosen)]
        assert part
        write_store(part, tmp / f"{name}.parquet")
        shutil.copy(tmp / f"{name}.parquet", paths["folder"] / f"{name}.parquet")
    return paths


def _bits(values: Any) -> np.ndarray:
    """float32 bit patterns (Spark hands a float column over as Python floats, widened)."""
    return np.asarray(values, dtype=np.float32).view(np.uint32)


def _by_key(rows: list[dict[str, Any]], column: str) -> dict[tuple[str, str], Any]:
    out = {(r["path"], r["element"]): r[column] for r in rows}
    assert len(out) == len(rows)  # (path, element) names one tensor
    return out


def test_one_file_rows_and_cases(spark: SparkSession, stores: dict[str, Path]) -> None:
    table = pq.read_table(stores["one"], columns=["test_case"])
    frame = spark.read.parquet(str(stores["one"]))
    assert frame.count() == table.num_rows > 0
    assert frame.select("test_case").distinct().count() == len(pc.unique(table["test_case"]))


@pytest.mark.parametrize(
    ("dtype", "column"), [("FLOAT", "data_float"), ("FLOAT16", "data_float16")]
)
def test_float_data_is_bit_exact(
    spark: SparkSession, stores: dict[str, Path], dtype: str, column: str
) -> None:
    columns = ["path", "element", "dtype", column]
    table = pq.read_table(stores["one"], columns=columns)
    table = table.filter(pc.equal(table["dtype"], dtype))
    expected = _by_key(table.to_pylist(), column)
    assert expected
    frame = spark.read.parquet(str(stores["one"])).where(f"dtype = '{dtype}'")
    got = _by_key([r.asDict() for r in frame.select(*columns).collect()], column)
    assert got.keys() == expected.keys()
    for key, values in expected.items():
        np.testing.assert_array_equal(_bits(got[key]), _bits(values), err_msg=str(key))
    if dtype == "FLOAT":  # node/test_abs's x is a 3x4x5 float tensor
        assert len(got[("node/test_abs/test_data_set_0/input_0.pb", "")]) == 60


def test_model_content_is_the_same_bytes(spark: SparkSession, stores: dict[str, Path]) -> None:
    path = "node/test_abs/model.onnx"
    table = pq.read_table(stores["one"], columns=["path", "role", "content"])
    table = table.filter(pc.equal(table["path"], path))
    expected = table.column("content").to_pylist()
    frame = spark.read.parquet(str(stores["one"])).where(f"path = '{path}'")
    rows = frame.select("role", "content").collect()
    assert [r.role for r in rows] == ["model"]
    assert [bytes(r.content) for r in rows] == expected
    assert expected[0]


def test_a_folder_of_two_stores_is_one_frame(spark: SparkSession, stores: dict[str, Path]) -> None:
    files = sorted(stores["folder"].iterdir())
    assert [f.name for f in files] == ["a.parquet", "b.parquet"]
    counts = [pq.read_metadata(f).num_rows for f in files]
    frame = spark.read.parquet(str(stores["folder"]))
    assert frame.count() == sum(counts) == pq.read_metadata(stores["one"]).num_rows
    cases = [set(pq.read_table(f, columns=["test_case"])["test_case"].to_pylist()) for f in files]
    assert not cases[0] & cases[1]
    assert frame.select("test_case").distinct().count() == len(cases[0] | cases[1])


def test_rows_spark_hands_back_decode_exactly(spark: SparkSession, tmp_path: Path) -> None:
    """Spark widens unsigned integers (uint8 to smallint, uint64 to decimal(20,0)) and
    shuffles rows; the decoder narrows them back exactly, in the case's own order."""
    from store_helpers import same

    from onnx_arrow.corpus import REQUIRED_COLUMNS, Store, cases_from_rows

    patterns = ("node/test_bitshift_*", "node/test_sequence_insert_at_back", "node/test_abs")
    cases = [c for c in NodeSuiteSource() if any(fnmatch.fnmatchcase(c.name, p) for p in patterns)]
    path = tmp_path / "store.parquet"
    write_store(cases, path)
    frame = spark.read.parquet(str(path)).select(*REQUIRED_COLUMNS)
    assert dict(frame.dtypes)["data_uint64"] == "array<decimal(20,0)>"
    rows = frame.repartition(3).toArrow()  # shuffled
    store = Store(path)
    decoded = cases_from_rows(rows, where="spark")
    assert sorted(c.name for c in decoded) == sorted(store.cases())
    for case in decoded:
        assert same(case.data_sets(), store.case_arrays(case.name)), case.name


def test_portable_nan_bits_through_sparks_writer_are_refused(
    spark: SparkSession, tmp_path: Path
) -> None:
    """20 FLOAT tensors [NaN, -NaN, 1.0] in a portable table, written again by Spark's own
    Parquet writer: a located error, by default (float digests) and with the full digests
    alike, never other bits (Spark's writer rewrites every NaN to 0x7fc00000; this session
    serves the store's tests too, so no JVM of its own)."""
    import pyarrow as pa

    import onnx_arrow
    from onnx_arrow.errors import ArrowLayoutError

    bits = np.array([0x7FC00000, 0xFFC00000, 0x3F800000], np.uint32).view(np.float32)
    from onnx import numpy_helper

    table = pa.table({"x": onnx_arrow.to_arrow([numpy_helper.from_array(bits)] * 20)})
    for digest in (False, True):
        first, copied = tmp_path / f"first-{digest}.parquet", tmp_path / f"spark-{digest}"
        pq.write_table(onnx_arrow.to_portable(table, digest=digest), first)
        spark.read.parquet(str(first)).write.parquet(str(copied))
        read = pq.read_table(copied)
        with pytest.raises(ArrowLayoutError, match="NaN payloads and signs") as caught:
            onnx_arrow.from_portable(read)
        assert caught.value.where is not None
        assert caught.value.where.startswith("column 'x', row ")
