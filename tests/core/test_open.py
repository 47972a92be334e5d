"""Opening files from anyone: the confined, size-capped read of a regular file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from onnx_arrow.core._open import read_regular_file
from onnx_arrow.errors import CorpusError

#: A cap no file here comes near.
_CAP = 1 << 20


def test_a_regular_file_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "f.pb"
    path.write_bytes(b"x" * 100_000)
    assert read_regular_file(str(path), max_bytes=_CAP, where="f.pb") == b"x" * 100_000
    path.write_bytes(b"")
    assert read_regular_file(str(path), max_bytes=_CAP, where="f.pb") == b""


def test_what_is_not_a_regular_file_is_refused_saying_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match=r"^gone\.pb: cannot open \(No such file or directory\);"):
        read_regular_file(str(tmp_path / "gone.pb"), max_bytes=_CAP, where="gone.pb")
    (tmp_path / "real.pb").write_bytes(b"12345")
    os.symlink(tmp_path / "real.pb", tmp_path / "link.pb")
    with pytest.raises(CorpusError, match=r"^link\.pb: cannot open .*; a corpus holds regular"):
        read_regular_file(str(tmp_path / "link.pb"), max_bytes=_CAP, where="link.pb")
    with pytest.raises(CorpusError, match=r"^d: .*not a regular file; remove it, please$"):
        read_regular_file(str(tmp_path), max_bytes=_CAP, where="d", fix="remove it, please")
    with pytest.raises(CorpusError, match=r"^real\.pb: 5 bytes exceed the limit of 4 per file$"):
        read_regular_file(str(tmp_path / "real.pb"), max_bytes=4, where="real.pb")
    assert read_regular_file(str(tmp_path / "real.pb"), max_bytes=5, where="r") == b"12345"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_is_refused_without_blocking(tmp_path: Path, deadline: object) -> None:
    os.mkfifo(tmp_path / "pipe.pb")
    with deadline(5), pytest.raises(CorpusError, match=r"not a regular file"):  # type: ignore[operator]
        read_regular_file(str(tmp_path / "pipe.pb"), max_bytes=_CAP, where="pipe.pb")
