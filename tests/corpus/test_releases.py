"""onnx releases as corpora (:mod:`onnx_arrow.corpus.releases`): from a wheel on disk (a
small wheel made here, with an ``onnx/backend/test/data`` tree), from the cache, and, where
the package index answers, from the index itself."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import field_lines
from release_helpers import cached_wheel, make_wheel, network
from store_helpers import tree_bytes

from onnx_arrow.cli import main
from onnx_arrow.corpus import Store, WriteOptions, export_store, write_store
from onnx_arrow.corpus.releases import (
    Release,
    is_release,
    open_release_store,
    parse_release,
    release_source,
)
from onnx_arrow.corpus.wheels import extract_data, fetch_wheel, index_url
from onnx_arrow.diff import diff
from onnx_arrow.errors import ReleaseError

pytestmark = pytest.mark.usefixtures("release_cache")


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
    wheel = make_wheel(tmp_path, "9.9.9")
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
    wheel = make_wheel(tmp_path, "9.9.9")
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


def test_a_built_store_is_cached_and_checked(release_cache: Path, tmp_path: Path) -> None:
    cached_wheel(release_cache, tmp_path, "9.9.9")
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
    old = make_wheel(tmp_path, "9.9.8")
    new = make_wheel(tmp_path, "9.9.9", y=3.0)
    df = diff(f"@onnx={old}", f"@onnx={new}").to_pandas()
    changed = df[df["status"] != "identical"]
    assert changed["path"].tolist() == ["simple/test_twice/test_data_set_0/output_0.pb"]
    made = df.attrs["onnx_arrow"]
    assert made["old_provenance"]["wheel"]["file"] == old.name
    assert made["new_provenance"]["onnx"] == "9.9.9"


def test_info_shows_where_a_release_came_from(
    release_cache: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cached_wheel(release_cache, tmp_path, "9.9.9")
    assert main(["info", "--offline", "@onnx==9.9.9"]) == 0
    fields = field_lines(capsys.readouterr().out)
    assert fields["provenance"] == "wheel"
    assert fields["onnx"] == "9.9.9"
    assert fields["wheel"] == "onnx-9.9.9-py3-none-any.whl"


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


@pytest.mark.slow
@network
def test_a_wheel_without_node_folder_has_its_node_suite_generated(
    release_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """onnx 1.23 on: the node suite generated by the release, in an environment of its own
    (made once: pip installs onnx 1.23.2 and the installed numpy's version into it)."""
    monkeypatch.delenv("ONNX_ARROW_INDEX_URL")
    wheel = make_wheel(tmp_path, "1.23.2", node=False)
    with release_source(f"@onnx={wheel}") as (source, prov):
        assert prov["source"] == "wheel+generated"
        assert prov["generator"]["onnx"] == "1.23.2"
        assert prov["generator"]["numpy"] == np.__version__
        cases = {case.name: case for case in source}
    assert "simple/test_twice" in cases
    assert len([n for n in cases if n.startswith("node/")]) > 1000
    assert cases["node/test_abs"].tolerance is not None


def test_commands_take_a_wheel_on_disk(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    wheel = make_wheel(tmp_path, "9.9.9")
    tree = tmp_path / "tree-9.9.9-2.0"
    assert main(["generate", f"@onnx={wheel}", str(tmp_path / "gen")]) == 0
    assert tree_bytes(tmp_path / "gen") == tree_bytes(tree)
    assert main(["verify", f"@onnx={wheel}"]) == 0
    assert "byte-identical" in capsys.readouterr().out
    assert main(["compare", f"@onnx={wheel}", "--case", "test_tiny"]) == 0
    assert field_lines(capsys.readouterr().out)["match"] == "1"
    assert main(["diff", f"@onnx={wheel}", str(tree)]) == 0
    fields = field_lines(capsys.readouterr().out)
    assert fields["old from"].startswith("onnx 9.9.9, wheel onnx-9.9.9-py3-none-any.whl")
    assert fields["new from"].startswith("onnx ")  # the folder, imported by this onnx


def test_a_compare_report_carries_the_provenance_of_its_store(tmp_path: Path) -> None:
    from onnx_arrow import compare

    wheel = make_wheel(tmp_path, "9.9.9")
    with open_release_store(f"@onnx={wheel}") as path:
        report = compare.compare(Store(path), "reference", cases=["test_tiny"]).to_pandas()
    made = report.attrs["onnx_arrow"]
    assert made["store_provenance"]["wheel"]["file"] == wheel.name
    assert made["store_provenance"]["onnx"] == "9.9.9"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (b"Traceback (most recent call last):\n", "is not JSON (Expecting value)"),
        (b'{"onnx": "1.23.2", "onnx": "9"}', "key 'onnx' appears twice"),
        (b'{"onnx": "\xff"}', "not UTF-8 text"),
        (b"[1, 2]", "is JSON of list, not an object"),
        (None, "not a regular file"),
    ],
    ids=["not JSON", "a key twice", "not UTF-8", "a list", "a FIFO"],
)
def test_a_generator_manifest_that_is_not_a_json_object_is_a_located_error(
    tmp_path: Path, text: bytes | None, says: str
) -> None:
    """What a release's generator leaves as its manifest is read through the JSON gate:
    never a traceback, never a wait on a FIFO."""
    from onnx_arrow.corpus.releases import _manifest

    path = tmp_path / "generated.json"
    if text is None:
        os.mkfifo(path)
    else:
        path.write_bytes(text)
    with pytest.raises(ReleaseError, match=re.escape(says)) as info:
        _manifest(path, "1.23.2")
    assert str(info.value).startswith(f"{path}: the manifest of onnx 1.23.2's node suite")


def test_an_index_of_stores_giving_a_release_twice_is_no_index(
    release_cache: Path, tmp_path: Path
) -> None:
    """A store index whose JSON gives one key twice (the last silently winning, with
    ``json.loads``) names no store: the store is built again and the index rewritten."""
    cached_wheel(release_cache, tmp_path, "9.9.9")
    with open_release_store("@onnx==9.9.9", offline=True) as first:
        pass
    index = first.parent / "index.json"
    (key, name), *_ = json.loads(index.read_text()).items()
    index.write_text(f'{{"{key}": "elsewhere.parquet", "{key}": "{name}"}}')
    with open_release_store("@onnx==9.9.9", offline=True) as second:
        assert second == first
    assert index.read_text().count(key) == 1
    assert json.loads(index.read_text()) == {key: name}
