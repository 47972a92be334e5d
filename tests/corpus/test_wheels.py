"""onnx's wheels (:mod:`onnx_arrow.corpus.wheels`): fetched from the package index where it
answers, kept in the cache with their digest, their test data extracted byte for byte."""

from __future__ import annotations

import hashlib
import os
import tracemalloc
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from release_helpers import LocalIndex, cached_wheel, make_wheel, network

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


# --- the index pip is configured with, on this machine ------------------------------------


@pytest.fixture(params=["json", "html"])
def local_index(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[LocalIndex]:
    """A package index on 127.0.0.1 (PEP 691's JSON, PEP 503's HTML) that pip's
    configuration names: a pip.conf given by ``$PIP_CONFIG_FILE``, as a company's is."""
    index = LocalIndex(html=request.param == "html")
    config = tmp_path / "pip.conf"
    config.write_text(f"[global]\ntimeout = 60\nindex-url = {index.url}/\n")
    monkeypatch.delenv("ONNX_ARROW_INDEX_URL")
    monkeypatch.delenv("PIP_INDEX_URL", raising=False)
    monkeypatch.setenv("PIP_CONFIG_FILE", str(config))
    yield index
    index.close()


def _wheels_folder(release_cache: Path) -> list[str]:
    return sorted(p.name for p in (release_cache / "releases" / "wheels").iterdir())


def test_a_wheel_comes_from_the_index_pip_is_configured_with(
    local_index: LocalIndex, release_cache: Path, tmp_path: Path
) -> None:
    served = local_index.add(make_wheel(tmp_path, "9.9.9"))
    wheel = fetch_wheel("9.9.9")
    assert local_index.asked == ["/simple/onnx/", f"/files/{served.name}"]
    assert wheel.url == f"{local_index.url.removesuffix('/simple')}/files/{served.name}"
    assert wheel.path.read_bytes() == served.read_bytes()
    assert wheel.sha256 == hashlib.sha256(served.read_bytes()).hexdigest()
    assert _wheels_folder(release_cache) == [
        served.name,
        f"{served.name}.sha256",
        f"{served.name}.url",
    ]
    with release_source("@onnx==9.9.9", offline=True) as (source, prov):
        assert [case.name for case in source] == ["node/test_tiny", "simple/test_twice"]
        assert prov["wheel"]["sha256"] == wheel.sha256


def test_a_damaged_download_is_an_error_and_leaves_nothing(
    local_index: LocalIndex, release_cache: Path, tmp_path: Path
) -> None:
    local_index.add(make_wheel(tmp_path, "9.9.9"), stated="0" * 64)
    with pytest.raises(ReleaseError, match=r"has sha256 \w+, not the 0{64} the index states"):
        fetch_wheel("9.9.9")
    assert _wheels_folder(release_cache) == []


def test_a_download_that_breaks_off_is_an_error_and_leaves_nothing(
    local_index: LocalIndex, release_cache: Path, tmp_path: Path
) -> None:
    served = local_index.add(make_wheel(tmp_path, "9.9.9"), cut=True)
    with pytest.raises(ReleaseError, match=f"^{served.name}: the download from .* broke off"):
        fetch_wheel("9.9.9")
    assert _wheels_folder(release_cache) == []


def test_a_version_the_configured_index_lacks_is_named_with_the_latest(
    local_index: LocalIndex, tmp_path: Path
) -> None:
    local_index.add(make_wheel(tmp_path, "9.9.9"))
    with pytest.raises(ReleaseError, match=r"onnx 9\.9\.8 has no wheel .* \(the latest: 9\.9\.9\)"):
        fetch_wheel("9.9.8")


def test_a_large_wheel_streams_to_disk(
    local_index: LocalIndex, release_cache: Path, tmp_path: Path
) -> None:
    """A wheel of 48 MiB is fetched holding a few MiB at most (it used to be held whole)."""
    wheel = make_wheel(tmp_path, "9.9.9")
    with zipfile.ZipFile(wheel, "a", zipfile.ZIP_STORED) as archive:
        archive.writestr("onnx/padding.bin", os.urandom(48 << 20))
    local_index.add(wheel)
    tracemalloc.start()
    try:
        fetched = fetch_wheel("9.9.9")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert fetched.path.stat().st_size == wheel.stat().st_size
    assert peak < 8 << 20, f"peak of {peak} bytes traced while fetching {wheel.stat().st_size}"
