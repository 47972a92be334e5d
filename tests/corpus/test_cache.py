"""The node-suite cache: reused when valid, rebuilt when anything about it is off."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from onnx_arrow.corpus import NodeSuiteSource
from onnx_arrow.corpus import cache as cache_module
from onnx_arrow.corpus.cache import cache_folder, cached_cases, suite_key

_CASES = [
    (
        "node/test_a",
        "node",
        [("node/test_a/model.onnx", b"model a"), ("node/test_a/x.pb", b"")],
        "node/test_a/model.onnx",
        {"tolerance": [0.001, 1e-07]},
    ),
    (
        "node/test_b",
        "node",
        [("node/test_b/model.onnx", b"\x00\xffb" * 100)],
        "node/test_b/model.onnx",
        {},
    ),
]


class Builds:
    """A build function that counts its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self) -> list[tuple[str, str, list[tuple[str, bytes]], str, dict[str, Any]]]:
        self.calls += 1
        return [(n, k, list(f), m, dict(x)) for n, k, f, m, x in _CASES]


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ONNX_ARROW_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_built_once_then_read(folder: Path) -> None:
    build = Builds()
    assert cached_cases(build) == _CASES
    (written,) = folder.iterdir()
    assert written.name.startswith(f"node-suite-onnx-{suite_key()['onnx']}-")
    assert cached_cases(build) == _CASES
    assert build.calls == 1


@pytest.mark.parametrize("where", ["magic", "length", "manifest", "data", "truncated"])
def test_damaged_file_is_rebuilt(folder: Path, where: str) -> None:
    build = Builds()
    cached_cases(build)
    (path,) = folder.iterdir()
    blob = bytearray(path.read_bytes())
    if where == "magic":
        blob[0] ^= 1
    elif where == "length":
        blob[len(cache_module._MAGIC)] ^= 0xFF
    elif where == "manifest":
        blob[len(cache_module._MAGIC) + 9] ^= 1
    elif where == "data":
        blob[-1] ^= 1
    else:
        del blob[-5:]
    path.write_bytes(bytes(blob))
    assert cached_cases(build) == _CASES
    assert build.calls == 2
    assert cached_cases(build) == _CASES  # written again, valid
    assert build.calls == 2


def test_other_versions_are_other_files(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    build = Builds()
    cached_cases(build)
    key = {**suite_key(), "numpy": "0.0"}
    monkeypatch.setattr(cache_module, "suite_key", lambda: key)
    cached_cases(build)
    assert build.calls == 2
    assert len(list(folder.iterdir())) == 2


def test_a_key_that_does_not_match_its_file_is_rebuilt(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file renamed to another key's name is not taken for it."""
    build = Builds()
    cached_cases(build)
    (path,) = folder.iterdir()
    key = {**suite_key(), "pillow": "0.0"}
    monkeypatch.setattr(cache_module, "suite_key", lambda: key)
    path.rename(folder / cache_module._file_name(key))
    cached_cases(build)
    assert build.calls == 2


def test_off(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ONNX_ARROW_CACHE_DIR", "off")
    assert cache_folder() is None
    build = Builds()
    cached_cases(build)
    cached_cases(build)
    assert build.calls == 2


def test_default_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("ONNX_ARROW_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_folder() == tmp_path / "onnx-arrow"


def test_unwritable_folder_builds(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_bytes(b"")
    monkeypatch.setenv("ONNX_ARROW_CACHE_DIR", str(blocker / "cache"))
    build = Builds()
    assert cached_cases(build) == _CASES
    assert cached_cases(build) == _CASES
    assert build.calls == 2
    assert blocker.read_bytes() == b""


def test_node_suite_from_the_cache_is_the_built_one(folder: Path) -> None:
    built = list(NodeSuiteSource(cache=False))
    assert any(case.tolerance is not None for case in built)
    assert list(NodeSuiteSource()) == built  # written to the cache
    assert len(list(folder.iterdir())) == 1
    assert list(NodeSuiteSource()) == built  # read from it
