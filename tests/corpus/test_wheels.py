"""onnx's wheels (:mod:`onnx_arrow.corpus.wheels`): fetched from the package index where it
answers, kept in the cache with their digest, their test data extracted byte for byte."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from release_helpers import cached_wheel, make_wheel, network

from onnx_arrow.corpus.releases import (
    release_source,
)
from onnx_arrow.corpus.wheels import DATA_PREFIX, extract_data, fetch_wheel
from onnx_arrow.errors import ReleaseError

pytestmark = pytest.mark.usefixtures("release_cache")


def test_a_wheel_without_test_data_is_refused(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path, "9.9.9", data=False)
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


def test_a_cached_wheel_serves_offline(release_cache: Path, tmp_path: Path) -> None:
    path = cached_wheel(release_cache, tmp_path, "9.9.9")
    wheel = fetch_wheel("9.9.9", offline=True)
    assert wheel.path == path
    with release_source("@onnx==9.9.9", offline=True) as (source, prov):
        assert [case.name for case in source] == ["node/test_tiny", "simple/test_twice"]
        assert prov["wheel"]["sha256"] == wheel.sha256


def test_a_cached_wheel_whose_digest_differs_is_an_error(
    release_cache: Path, tmp_path: Path
) -> None:
    path = cached_wheel(release_cache, tmp_path, "9.9.9")
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


@network
def test_an_unknown_version_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ONNX_ARROW_INDEX_URL")
    monkeypatch.delenv("PIP_INDEX_URL", raising=False)
    with pytest.raises(ReleaseError, match="has no wheel on the package index"):
        fetch_wheel("0.0.42")
