"""onnx releases as corpora (:mod:`onnx_arrow.corpus.releases`): from a wheel on disk (a
small wheel made here, with an ``onnx/backend/test/data`` tree), from the cache, and, where
the package index answers, from the index itself."""

from __future__ import annotations

import os
import shutil
import socket
import zipfile
from pathlib import Path

import duckdb
import numpy as np
import polars as pl
import pytest
from cli_helpers import field_lines
from onnx import TensorProto, helper, numpy_helper, save_model
from store_helpers import small_corpus, tree_bytes

from onnx_arrow.cli import main
from onnx_arrow.corpus import Store, WriteOptions, export_store, write_store
from onnx_arrow.corpus.release_dataset import CHANGES_SQL, release_changes, release_stores
from onnx_arrow.corpus.releases import (
    Release,
    is_release,
    open_release_store,
    parse_release,
    release_source,
)
from onnx_arrow.corpus.wheels import DATA_PREFIX, extract_data, fetch_wheel, index_url
from onnx_arrow.diff import diff
from onnx_arrow.errors import CorpusError, ReleaseError


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache folder of the test's own, and an index nobody answers at (loopback)."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("ONNX_ARROW_CACHE_DIR", str(folder))
    monkeypatch.setenv("ONNX_ARROW_INDEX_URL", "http://127.0.0.1:9/simple")
    return folder


def _tree(root: Path, *, y: float = 2.0) -> Path:
    """A data tree: node/test_tiny (small_corpus) and simple/test_twice, whose expected
    output is ``y``."""
    small_corpus(root)
    case = root / "simple" / "test_twice"
    (case / "test_data_set_0").mkdir(parents=True)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])
    out = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])
    graph = helper.make_graph([helper.make_node("Add", ["x", "x"], ["y"])], "g", [x], [out])
    save_model(helper.make_model(graph), case / "model.onnx")
    for name, value in (("input_0", 1.0), ("output_0", y)):
        data = numpy_helper.from_array(np.array([value], np.float32), name[:1].replace("i", "x"))
        (case / "test_data_set_0" / f"{name}.pb").write_bytes(data.SerializeToString())
    return root


def _wheel(folder: Path, version: str, *, y: float = 2.0, data: bool = True) -> Path:
    """A wheel of 'onnx VERSION': a zip holding the data tree under onnx/backend/test/data."""
    tree = _tree(folder / f"tree-{version}-{y}", y=y)
    path = folder / f"onnx-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("onnx/__init__.py", f"__version__ = {version!r}\n")
        if data:
            for file in sorted(tree.rglob("*")):
                if file.is_file():
                    archive.write(file, DATA_PREFIX + file.relative_to(tree).as_posix())
    return path


# --- names --------------------------------------------------------------------------------


def test_names_of_releases_parse() -> None:
    assert parse_release("@onnx").installed
    assert parse_release("@default").installed
    assert parse_release("@onnx==1.14.1") == Release("1.14.1")
    assert parse_release("@onnx==1.23.2,numpy==2.3.1") == Release("1.23.2", "2.3.1")
    assert str(parse_release("@onnx==1.23.2,numpy==2.3.1")) == "@onnx==1.23.2,numpy==2.3.1"
    assert is_release("@onnx==1.4.1")
    assert not is_release("corpus.parquet")
    assert not is_release(None)


def test_a_local_wheel_is_named_by_its_file(tmp_path: Path) -> None:
    wheel = _wheel(tmp_path, "9.9.9")
    assert parse_release(f"@onnx={wheel}") == Release("9.9.9", None, wheel)


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("@onnx==", "is not a release"),
        ("@onnx~=1.4", "is not a release"),
        ("@onnx=missing/onnx-1.4.1-py3-none-any.whl", "no such wheel file"),
        ("@onnx=some.zip", "not a wheel of onnx"),
    ],
)
def test_a_bad_name_is_refused(name: str, says: str) -> None:
    with pytest.raises(ReleaseError, match=says):
        parse_release(name)


# --- a wheel on disk ----------------------------------------------------------------------


def test_a_wheel_imports_and_exports_byte_for_byte(tmp_path: Path) -> None:
    wheel = _wheel(tmp_path, "9.9.9")
    with release_source(f"@onnx={wheel}") as (source, prov):
        assert prov["onnx"] == "9.9.9"
        assert prov["source"] == "wheel"
        assert prov["kinds"] == ["node", "simple"]
        assert prov["wheel"]["file"] == wheel.name
        assert len(prov["wheel"]["sha256"]) == 64
        out = tmp_path / "s.parquet"
        write_store(source, out, options=WriteOptions(provenance=prov))
    store = Store(out)
    assert store.metadata["onnx_version"] == "9.9.9"
    assert store.metadata["provenance"]["wheel"]["file"] == wheel.name
    export_store(out, tmp_path / "back")
    assert tree_bytes(tmp_path / "back") == tree_bytes(tmp_path / "tree-9.9.9-2.0")


def test_a_wheel_without_test_data_is_refused(tmp_path: Path) -> None:
    wheel = _wheel(tmp_path, "9.9.9", data=False)
    with pytest.raises(ReleaseError, match="holds no test data"):
        extract_data(wheel, tmp_path / "out")


def test_a_file_that_is_not_a_zip_is_refused(tmp_path: Path) -> None:
    wheel = tmp_path / "onnx-9.9.9-py3-none-any.whl"
    wheel.write_bytes(b"not a zip")
    with pytest.raises(ReleaseError, match="not a wheel"):
        extract_data(wheel, tmp_path / "out")


def test_a_member_outside_the_data_is_refused(tmp_path: Path) -> None:
    wheel = tmp_path / "onnx-9.9.9-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr(DATA_PREFIX + "../../../escape.txt", b"x")
    with pytest.raises(ReleaseError, match="outside the test data"):
        extract_data(wheel, tmp_path / "out")
    assert not (tmp_path / "escape.txt").exists()


# --- the cache ----------------------------------------------------------------------------


def _cached_wheel(cache: Path, tmp_path: Path, version: str) -> Path:
    """A wheel put into the cache as a fetch leaves it: with its sha256 beside it."""
    import hashlib

    folder = cache / "releases" / "wheels"
    folder.mkdir(parents=True)
    path = Path(shutil.copy(_wheel(tmp_path, version), folder))
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    path.with_name(path.name + ".sha256").write_text(f"{digest}  {path.name}\n")
    return path


def test_a_cached_wheel_serves_offline(cache: Path, tmp_path: Path) -> None:
    path = _cached_wheel(cache, tmp_path, "9.9.9")
    wheel = fetch_wheel("9.9.9", offline=True)
    assert wheel.path == path
    with release_source("@onnx==9.9.9", offline=True) as (source, prov):
        assert [case.name for case in source] == ["node/test_tiny", "simple/test_twice"]
        assert prov["wheel"]["sha256"] == wheel.sha256


def test_a_cached_wheel_whose_digest_differs_is_an_error(cache: Path, tmp_path: Path) -> None:
    path = _cached_wheel(cache, tmp_path, "9.9.9")
    with path.open("ab") as f:
        f.write(b"changed")
    with pytest.raises(ReleaseError, match="recorded when it was cached") as info:
        fetch_wheel("9.9.9", offline=True)
    assert str(path) in str(info.value)


def test_offline_without_the_release_cached_is_an_error() -> None:
    with pytest.raises(ReleaseError, match="--offline forbids fetching"):
        fetch_wheel("1.4.1", offline=True)


def test_an_index_out_of_reach_is_an_error() -> None:
    with pytest.raises(ReleaseError, match="cannot reach the package index"):
        fetch_wheel("1.4.1")


def test_a_built_store_is_cached_and_checked(cache: Path, tmp_path: Path) -> None:
    _cached_wheel(cache, tmp_path, "9.9.9")
    with open_release_store("@onnx==9.9.9", offline=True) as first:
        assert Store(first).cases() == ["node/test_tiny", "simple/test_twice"]
    with open_release_store("@onnx==9.9.9", offline=True) as second:
        assert second == first  # the cached store, not built again
    with first.open("r+b") as f:
        f.seek(100)
        f.write(b"\0\0\0\0")
    with pytest.raises(ReleaseError, match="changed since"):
        open_release_store("@onnx==9.9.9", offline=True).__enter__()


# --- diff, info, and a dataset store of releases -------------------------------------------


def test_diff_of_two_releases_carries_their_provenance(tmp_path: Path) -> None:
    old = _wheel(tmp_path, "9.9.8")
    new = _wheel(tmp_path, "9.9.9", y=3.0)
    df = diff(f"@onnx={old}", f"@onnx={new}")
    changed = df[df["status"] != "identical"]
    assert changed["path"].tolist() == ["simple/test_twice/test_data_set_0/output_0.pb"]
    made = df.attrs["onnx_arrow"]
    assert made["old_provenance"]["wheel"]["file"] == old.name
    assert made["new_provenance"]["onnx"] == "9.9.9"


def test_info_shows_where_a_release_came_from(
    cache: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _cached_wheel(cache, tmp_path, "9.9.9")
    assert main(["info", "--offline", "@onnx==9.9.9"]) == 0
    fields = field_lines(capsys.readouterr().out)
    assert fields["provenance"] == "wheel"
    assert fields["onnx"] == "9.9.9"
    assert fields["wheel"] == "onnx-9.9.9-py3-none-any.whl"


def test_releases_in_one_dataset_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "releases"
    wheels = [_wheel(tmp_path, "9.9.8"), _wheel(tmp_path, "9.10.0", y=3.0)]
    first = ["import", "--partition-by", "onnx_version", f"@onnx={wheels[0]}", str(out)]
    assert main(first) == 0
    assert main(["import", "--append", f"@onnx={wheels[1]}", str(out)]) == 0
    capsys.readouterr()
    assert sorted(p.name for p in out.iterdir()) == ["onnx_version=9.10.0", "onnx_version=9.9.8"]
    # a release held already is refused
    assert main(["import", "--append", f"@onnx={wheels[1]}", str(out)]) == 1
    assert "holds onnx 9.10.0 already" in capsys.readouterr().err
    stores = release_stores(out)
    assert list(stores) == ["9.9.8", "9.10.0"]  # in version order
    assert stores["9.10.0"].metadata["provenance"]["onnx"] == "9.10.0"
    with pytest.raises(CorpusError, match="open one release"):
        Store(out)
    # the query of the docs: which cases' expected outputs changed, and when
    changes = duckdb.sql(CHANGES_SQL.format(store=out)).fetchall()
    assert changes == [("simple/test_twice", "9.9.8", "9.10.0", 1)]
    assert release_changes(out) == [
        {
            "case": "simple/test_twice",
            "op_types": "Add",
            "previous": "9.9.8",
            "onnx_version": "9.10.0",
            "outputs_changed": 1,
        }
    ]
    frame = pl.read_parquet(out, hive_partitioning=True, hive_schema={"onnx_version": pl.String})
    assert sorted(set(frame["onnx_version"])) == ["9.10.0", "9.9.8"]


# --- the package index ----------------------------------------------------------------------


def _index_answers() -> bool:
    """Whether the real package index answers (the tests below skip when not)."""
    try:
        socket.create_connection(("pypi.org", 443), timeout=5).close()
    except OSError:
        return False
    return True


network = pytest.mark.skipif(
    os.environ.get("ONNX_ARROW_NO_NETWORK") is not None or not _index_answers(),
    reason="the package index is out of reach",
)


@pytest.mark.slow
@network
def test_a_release_from_the_index_exports_its_wheel_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ONNX_ARROW_INDEX_URL")
    monkeypatch.delenv("PIP_INDEX_URL", raising=False)
    wheel = fetch_wheel("1.4.1")  # 5 MB, the smallest wheel of the oldest release tested
    assert index_url() == "https://pypi.org/simple"
    assert wheel.url is not None
    assert main(["import", "@onnx==1.4.1", str(tmp_path / "s.parquet")]) == 0
    assert main(["export", str(tmp_path / "s.parquet"), str(tmp_path / "back")]) == 0
    extract_data(wheel.path, tmp_path / "wheel")
    assert tree_bytes(tmp_path / "back") == tree_bytes(tmp_path / "wheel")


@network
def test_an_unknown_version_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ONNX_ARROW_INDEX_URL")
    monkeypatch.delenv("PIP_INDEX_URL", raising=False)
    with pytest.raises(ReleaseError, match="has no wheel on the package index"):
        fetch_wheel("0.0.42")


@pytest.mark.slow
@network
def test_a_wheel_without_node_folder_has_its_node_suite_generated(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """onnx 1.23 on: the node suite generated by the release, in an environment of its own
    (made once: pip installs onnx 1.23.2 and the installed numpy's version into it)."""
    monkeypatch.delenv("ONNX_ARROW_INDEX_URL")
    wheel = tmp_path / "onnx-1.23.2-py3-none-any.whl"
    tree = _tree(tmp_path / "tree")
    shutil.rmtree(tree / "node")
    with zipfile.ZipFile(wheel, "w") as archive:
        for file in sorted(tree.rglob("*")):
            if file.is_file():
                archive.write(file, DATA_PREFIX + file.relative_to(tree).as_posix())
    with release_source(f"@onnx={wheel}") as (source, prov):
        assert prov["source"] == "wheel+generated"
        assert prov["generator"]["onnx"] == "1.23.2"
        assert prov["generator"]["numpy"] == np.__version__
        cases = {case.name: case for case in source}
    assert "simple/test_twice" in cases
    assert len([n for n in cases if n.startswith("node/")]) > 1000
    assert cases["node/test_abs"].tolerance is not None
