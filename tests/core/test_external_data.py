"""Tests of :mod:`onnx_arrow.core.external_data`: reading, every refusal, and the races."""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from onnx import TensorProto

from onnx_arrow.core.external_data import read_external_data
from onnx_arrow.errors import ExternalDataError, OnnxArrowError

PAYLOAD = bytes(range(256)) * 3 + b"tail"
WHERE = "input_0.pb: row 0"


@pytest.fixture
def base(tmp_path: Path) -> Path:
    """A base_dir below tmp_path, so that tmp_path itself is "outside"."""
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "weights.bin").write_bytes(PAYLOAD)
    return folder


def refused(field: str, text: str) -> str:
    """A ``match`` pattern: the error names ``WHERE``, then ``field``, then contains ``text``."""
    return f"^{re.escape(WHERE)}: {re.escape(field)}: .*{re.escape(text)}"


def read(base_dir: Path | str | None, *entries: tuple[str, str], **options: Any) -> np.ndarray:
    return read_external_data(list(entries), base_dir, where=WHERE, **options)


# --- reading ---------------------------------------------------------------------------------


def test_reads_offset_length_and_checksum(base: Path) -> None:
    wanted = PAYLOAD[10:110]
    digest = hashlib.sha1(wanted).hexdigest()
    data = read(
        base,
        ("location", "weights.bin"),
        ("offset", "10"),
        ("length", "100"),
        ("checksum", digest),
        expected_length=100,
    )
    assert data.tobytes() == wanted
    assert data.dtype == np.uint8
    assert data.shape == (100,)
    assert data.ctypes.data % 64 == 0
    assert data.flags.writeable
    assert data.flags.c_contiguous


def test_checksum_is_case_insensitive(base: Path) -> None:
    digest = hashlib.sha1(PAYLOAD).hexdigest().upper()
    data = read(base, ("location", "weights.bin"), ("checksum", digest))
    assert data.tobytes() == PAYLOAD


def test_default_offset_and_length_read_the_whole_file(base: Path) -> None:
    data = read(base, ("location", "weights.bin"))
    assert data.tobytes() == PAYLOAD
    assert data.ctypes.data % 64 == 0


def test_offset_alone_reads_to_the_end(base: Path) -> None:
    data = read(base, ("location", "weights.bin"), ("offset", "700"))
    assert data.tobytes() == PAYLOAD[700:]


def test_length_alone_reads_from_the_start(base: Path) -> None:
    data = read(base, ("location", "weights.bin"), ("length", "5"))
    assert data.tobytes() == PAYLOAD[:5]


def test_leading_zeros_are_decimal(base: Path) -> None:
    data = read(base, ("location", "weights.bin"), ("offset", "010"), ("length", "0008"))
    assert data.tobytes() == PAYLOAD[10:18]


@pytest.mark.parametrize("length", [0, 1, 63, 64, 65, 255, 700])
def test_every_length_is_64_byte_aligned_and_exact(base: Path, length: int) -> None:
    data = read(base, ("location", "weights.bin"), ("offset", "3"), ("length", str(length)))
    assert data.ctypes.data % 64 == 0
    assert data.tobytes() == PAYLOAD[3 : 3 + length]


def test_empty_file(base: Path) -> None:
    (base / "empty.bin").write_bytes(b"")
    data = read(base, ("location", "empty.bin"), expected_length=0)
    assert data.shape == (0,)
    assert data.dtype == np.uint8


def test_location_in_a_subfolder_and_pathlib_base_dir(base: Path) -> None:
    (base / "data").mkdir()
    (base / "data" / "w.bin").write_bytes(b"abc")
    assert read(base, ("location", "data/w.bin")).tobytes() == b"abc"
    assert read(str(base), ("location", "./data//w.bin")).tobytes() == b"abc"


def test_symlinked_folder_inside_base_dir_is_followed(base: Path) -> None:
    (base / "real").mkdir()
    (base / "real" / "w.bin").write_bytes(b"inside")
    (base / "alias").symlink_to(base / "real", target_is_directory=True)
    assert read(base, ("location", "alias/w.bin")).tobytes() == b"inside"


def test_base_dir_may_itself_be_a_symlink(base: Path, tmp_path: Path) -> None:
    (tmp_path / "link_to_model").symlink_to(base, target_is_directory=True)
    data = read(tmp_path / "link_to_model", ("location", "weights.bin"))
    assert data.tobytes() == PAYLOAD


def test_entries_may_be_any_iterable_and_are_not_modified(base: Path) -> None:
    entries = [("location", "weights.bin"), ("length", "4")]
    before = list(entries)
    assert read_external_data(iter(entries), base).tobytes() == PAYLOAD[:4]
    assert entries == before


def test_tensor_proto_is_not_modified(base: Path) -> None:
    tensor = TensorProto(name="w", data_type=TensorProto.UINT8, dims=[4])
    tensor.data_location = TensorProto.EXTERNAL
    for key, value in [("location", "weights.bin"), ("offset", "1"), ("length", "4")]:
        entry = tensor.external_data.add()
        entry.key, entry.value = key, value
    before = tensor.SerializeToString()
    pairs = [(e.key, e.value) for e in tensor.external_data]
    assert read_external_data(pairs, base, expected_length=4).tobytes() == PAYLOAD[1:5]
    assert tensor.SerializeToString() == before
    assert not tensor.raw_data


def test_proto_entries_passed_directly_get_a_hint(base: Path) -> None:
    tensor = TensorProto(name="w")
    entry = tensor.external_data.add()
    entry.key, entry.value = "location", "weights.bin"
    with pytest.raises(ExternalDataError, match=r"external_data\[0\]: .*\(e\.key, e\.value\)"):
        read_external_data(tensor.external_data, base)


def test_reads_in_a_loop_when_the_kernel_returns_short_counts(
    base: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_preadv = os.preadv
    calls = []

    def preadv_seven(fd: int, buffers: list[memoryview], offset: int) -> int:
        calls.append(offset)
        return real_preadv(fd, [buffers[0][:7]], offset)

    monkeypatch.setattr(os, "preadv", preadv_seven)
    data = read(base, ("location", "weights.bin"), ("offset", "5"), ("length", "50"))
    assert data.tobytes() == PAYLOAD[5:55]
    assert calls == list(range(5, 55, 7))


def test_reads_without_preadv(base: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(os, "preadv")
    data = read(base, ("location", "weights.bin"), ("offset", "9"), ("length", "300"))
    assert data.tobytes() == PAYLOAD[9:309]
    assert data.ctypes.data % 64 == 0


# --- base_dir --------------------------------------------------------------------------------


def test_base_dir_none_never_falls_back_to_the_current_directory(
    base: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(base)
    with pytest.raises(ExternalDataError, match=refused("base_dir", "pass base_dir, the folder")):
        read(None, ("location", "weights.bin"))


def test_empty_base_dir_is_refused(base: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(base)
    with pytest.raises(ExternalDataError, match=refused("base_dir", "current directory")):
        read("", ("location", "weights.bin"))


@pytest.mark.parametrize("name", ["missing", "weights.bin"])
def test_base_dir_must_be_a_directory(base: Path, name: str) -> None:
    with pytest.raises(ExternalDataError, match=refused("base_dir", "not an existing directory")):
        read(base / name, ("location", "weights.bin"))


# --- keys ------------------------------------------------------------------------------------


def test_unknown_key(base: Path) -> None:
    with pytest.raises(ExternalDataError, match=refused("external_data[1].key", "'basepath'")) as e:
        read(base, ("location", "weights.bin"), ("basepath", "/"))
    assert "'location', 'offset', 'length', 'checksum'" in str(e.value)


def test_duplicate_key(base: Path) -> None:
    with pytest.raises(ExternalDataError, match=refused("external_data.offset", "appears twice")):
        read(base, ("location", "weights.bin"), ("offset", "0"), ("offset", "4"))


def test_duplicate_location(base: Path) -> None:
    (base / "other.bin").write_bytes(b"x")
    with pytest.raises(ExternalDataError, match=refused("external_data.location", "twice")):
        read(base, ("location", "weights.bin"), ("location", "other.bin"))


def test_missing_location(base: Path) -> None:
    with pytest.raises(ExternalDataError, match=refused("external_data.location", "missing")):
        read(base, ("offset", "0"), ("length", "4"))


@pytest.mark.parametrize(
    "entry", [("location",), ("location", "weights.bin", "x"), ("location", b"weights.bin")]
)
def test_entry_must_be_a_pair_of_str(base: Path, entry: Any) -> None:
    with pytest.raises(ExternalDataError, match=refused("external_data[0]", "(key, value)")):
        read(base, entry)


# --- location --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("location", "problem"),
    [
        ("", "is empty"),
        ("weights.bin\0.txt", "NUL byte"),
        ("sub\\weights.bin", "backslash"),
        ("..\\weights.bin", "backslash"),
        ("C:/weights.bin", "Windows drive"),
        ("c:weights.bin", "Windows drive"),
        ("//server/share/weights.bin", "absolute path"),
        ("..", "'..' component"),
        ("../outside.bin", "'..' component"),
        ("sub/../../outside.bin", "'..' component"),
        ("sub/../weights.bin", "'..' component"),
    ],
)
def test_location_syntax_is_refused(
    base: Path, tmp_path: Path, location: str, problem: str
) -> None:
    (tmp_path / "outside.bin").write_bytes(b"secret")
    (base / "sub").mkdir()
    with pytest.raises(ExternalDataError, match=refused("external_data.location", problem)):
        read(base, ("location", location))


def test_absolute_location_is_refused_even_inside_base_dir(base: Path) -> None:
    location = str(base / "weights.bin")
    with pytest.raises(ExternalDataError, match=refused("external_data.location", "absolute")):
        read(base, ("location", location))


def test_missing_file(base: Path) -> None:
    with pytest.raises(ExternalDataError, match=refused("external_data.location", "not exist")):
        read(base, ("location", "nothing.bin"))


def test_symlink_to_a_file_outside(base: Path, tmp_path: Path) -> None:
    (tmp_path / "secret.bin").write_bytes(b"secret")
    (base / "w.bin").symlink_to(tmp_path / "secret.bin")
    with pytest.raises(ExternalDataError, match=refused("external_data.location", "outside")):
        read(base, ("location", "w.bin"))


def test_symlink_inside_to_inside_is_still_refused(base: Path) -> None:
    (base / "alias.bin").symlink_to(base / "weights.bin")
    with pytest.raises(ExternalDataError, match=refused("external_data.location", "symbolic link")):
        read(base, ("location", "alias.bin"))


def test_relative_symlink_inside_to_inside_is_still_refused(base: Path) -> None:
    (base / "alias.bin").symlink_to("weights.bin")
    with pytest.raises(ExternalDataError, match=refused("external_data.location", "symbolic link")):
        read(base, ("location", "alias.bin"))


def test_symlinked_folder_leading_out(base: Path, tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "w.bin").write_bytes(b"secret")
    (base / "data").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    with pytest.raises(ExternalDataError, match=refused("external_data.location", "outside")):
        read(base, ("location", "data/w.bin"))


def test_hard_link_from_outside(base: Path, tmp_path: Path) -> None:
    (tmp_path / "secret.bin").write_bytes(b"secret")
    os.link(tmp_path / "secret.bin", base / "w.bin")
    with pytest.raises(ExternalDataError, match=refused("external_data.location", "2 hard links")):
        read(base, ("location", "w.bin"))


def test_hard_link_inside_refuses_both_names(base: Path) -> None:
    os.link(base / "weights.bin", base / "copy.bin")
    for name in ("weights.bin", "copy.bin"):
        with pytest.raises(ExternalDataError, match=refused("external_data.location", "hard link")):
            read(base, ("location", name))


def test_fifo_is_refused_without_blocking(base: Path, deadline) -> None:
    os.mkfifo(base / "pipe")
    with (
        deadline(),
        pytest.raises(ExternalDataError, match=refused("external_data.location", "FIFO")),
    ):
        read(base, ("location", "pipe"))


def test_symlink_to_dev_zero_is_refused(base: Path, deadline) -> None:
    (base / "zeros.bin").symlink_to("/dev/zero")
    with (
        deadline(),
        pytest.raises(ExternalDataError, match=refused("external_data.location", "outside")),
    ):
        read(base, ("location", "zeros.bin"))


def test_directory_is_refused(base: Path) -> None:
    (base / "folder").mkdir()
    with pytest.raises(ExternalDataError, match=refused("external_data.location", "a directory")):
        read(base, ("location", "folder"))
    with pytest.raises(ExternalDataError, match=refused("external_data.location", "a directory")):
        read(base, ("location", "."))


# --- races: the file changes between the checks and the read ----------------------------------


def _before_open(monkeypatch: pytest.MonkeyPatch, target: Path, action: Callable[[], None]) -> None:
    """Run ``action`` once, just before ``os.open`` opens ``target``."""
    real_open = os.open

    def swapping_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if os.fspath(path) == os.path.realpath(target):
            monkeypatch.setattr(os, "open", real_open)
            action()
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", swapping_open)


def test_file_replaced_before_open(base: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = base / "weights.bin"
    (base / "other.bin").write_bytes(PAYLOAD)
    _before_open(monkeypatch, target, lambda: os.replace(base / "other.bin", target))
    with pytest.raises(ExternalDataError, match=refused("external_data.location", "replaced")):
        read(base, ("location", "weights.bin"))


def test_fifo_swapped_in_before_open_does_not_block(
    base: Path, monkeypatch: pytest.MonkeyPatch, deadline
) -> None:
    target = base / "weights.bin"

    def to_fifo() -> None:
        target.unlink()
        os.mkfifo(target)

    _before_open(monkeypatch, target, to_fifo)
    with (
        deadline(),
        pytest.raises(ExternalDataError, match=refused("external_data.location", "FIFO")),
    ):
        read(base, ("location", "weights.bin"))


def test_symlink_swapped_in_before_open_is_not_followed(
    base: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = base / "weights.bin"
    (tmp_path / "secret.bin").write_bytes(PAYLOAD)

    def to_symlink() -> None:
        target.unlink()
        target.symlink_to(tmp_path / "secret.bin")

    _before_open(monkeypatch, target, to_symlink)
    with pytest.raises(ExternalDataError, match=refused("external_data.location", "weights.bin")):
        read(base, ("location", "weights.bin"))


def test_opens_read_only_without_following_or_blocking(
    base: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_open = os.open
    seen: list[int] = []

    def spying_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        seen.append(flags)
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", spying_open)
    read(base, ("location", "weights.bin"))
    assert len(seen) == 1
    required = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    assert seen[0] & required == required
    assert seen[0] & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC) == 0


def test_file_shrinking_while_read_is_a_short_read(
    base: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_fstat = os.fstat

    def fstat_then_truncate(fd: int) -> os.stat_result:
        result = real_fstat(fd)
        os.truncate(base / "weights.bin", 100)
        return result

    monkeypatch.setattr(os, "fstat", fstat_then_truncate)
    with pytest.raises(ExternalDataError, match=refused("external_data.location", "50 of 700")):
        read(base, ("location", "weights.bin"), ("offset", "50"), ("length", "700"))


# --- offset and length -----------------------------------------------------------------------


BAD_INTEGERS = ["-1", "+1", " 1", "1 ", "1.0", "0x10", "", "1_0", "1e3", "\u0661", "\uff11"]


@pytest.mark.parametrize("value", BAD_INTEGERS)
def test_offset_must_be_plain_decimal_digits(base: Path, value: str) -> None:
    with pytest.raises(ExternalDataError, match=refused("external_data.offset", "ASCII digits")):
        read(base, ("location", "weights.bin"), ("offset", value))


@pytest.mark.parametrize("value", BAD_INTEGERS)
def test_length_must_be_plain_decimal_digits(base: Path, value: str) -> None:
    with pytest.raises(ExternalDataError, match=refused("external_data.length", "ASCII digits")):
        read(base, ("location", "weights.bin"), ("length", value))


def test_absurdly_long_offset(base: Path) -> None:
    with pytest.raises(ExternalDataError, match=refused("external_data.offset", "5000 digits")):
        read(base, ("location", "weights.bin"), ("offset", "9" * 5000))


def test_offset_plus_length_past_the_end(base: Path) -> None:
    size = len(PAYLOAD)
    with pytest.raises(ExternalDataError, match=refused("external_data.length", f"{size} bytes")):
        read(base, ("location", "weights.bin"), ("offset", "1"), ("length", str(size)))
    # the last byte exactly is fine
    assert read(base, ("location", "weights.bin"), ("offset", str(size - 1))).tobytes() == b"l"
    assert read(base, ("location", "weights.bin"), ("offset", str(size))).shape == (0,)


def test_offset_past_the_end_without_length(base: Path) -> None:
    offset = str(len(PAYLOAD) + 1)
    with pytest.raises(ExternalDataError, match=refused("external_data.offset", "past the end")):
        read(base, ("location", "weights.bin"), ("offset", offset))


def test_expected_length_mismatch_is_refused_before_touching_the_file(base: Path) -> None:
    # the file does not exist: the length error must come first
    with pytest.raises(ExternalDataError, match=refused("external_data.length", "need 8")):
        read(base, ("location", "nothing.bin"), ("length", "4"), expected_length=8)


def test_expected_length_mismatch_with_default_length_is_refused_before_reading(
    base: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_read(*args: Any) -> int:
        raise AssertionError("read before checking expected_length")

    monkeypatch.setattr(os, "preadv", no_read)
    with pytest.raises(ExternalDataError, match=refused("external_data.length", "need 8")):
        read(base, ("location", "weights.bin"), ("offset", "4"), expected_length=8)


def test_max_bytes_is_checked_before_touching_the_file(base: Path) -> None:
    with pytest.raises(ExternalDataError, match=refused("external_data.length", "max_bytes=10")):
        read(base, ("location", "nothing.bin"), ("length", "11"), max_bytes=10)


def test_max_bytes_with_default_length_is_checked_before_allocating(
    base: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_alloc(*args: Any, **kwargs: Any) -> np.ndarray:
        raise AssertionError("allocated before checking max_bytes")

    monkeypatch.setattr(np, "empty", no_alloc)
    with pytest.raises(ExternalDataError, match=refused("external_data.length", "max_bytes=10")):
        read(base, ("location", "weights.bin"), max_bytes=10)


def test_max_bytes_is_inclusive(base: Path) -> None:
    data = read(base, ("location", "weights.bin"), max_bytes=len(PAYLOAD))
    assert data.tobytes() == PAYLOAD


@pytest.mark.parametrize(
    ("option", "value"),
    [("max_bytes", -1), ("max_bytes", True), ("expected_length", -1), ("expected_length", 4.0)],
)
def test_limits_must_be_non_negative_integers(base: Path, option: str, value: Any) -> None:
    with pytest.raises(ExternalDataError, match=refused(option, "non-negative integer")):
        read(base, ("location", "weights.bin"), **{option: value})


def test_numpy_integer_limits_are_accepted(base: Path) -> None:
    data = read(
        base,
        ("location", "weights.bin"),
        ("length", "4"),
        expected_length=np.int64(4),
        max_bytes=np.uint32(4),
    )
    assert data.tobytes() == PAYLOAD[:4]


# --- checksum --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "checksum",
    [
        "",
        "abc",
        "g" * 40,
        "a" * 39,
        "a" * 41,
        " " + "a" * 39,
        hashlib.sha256(PAYLOAD).hexdigest(),
        hashlib.md5(PAYLOAD).hexdigest(),
    ],
)
def test_checksum_format(base: Path, checksum: str) -> None:
    with pytest.raises(ExternalDataError, match=refused("external_data.checksum", "40 hex")):
        read(base, ("location", "weights.bin"), ("checksum", checksum))


def test_checksum_mismatch_names_both_digests(base: Path) -> None:
    claimed = hashlib.sha1(b"something else").hexdigest()
    actual = hashlib.sha1(PAYLOAD[:16]).hexdigest()
    with pytest.raises(ExternalDataError, match=refused("external_data.checksum", actual)) as e:
        read(base, ("location", "weights.bin"), ("length", "16"), ("checksum", claimed))
    assert claimed in str(e.value)


# --- the error itself ------------------------------------------------------------------------


def test_error_location_and_types(base: Path) -> None:
    with pytest.raises(ExternalDataError) as e:
        read(base, ("location", "../x"))
    assert e.value.where == f"{WHERE}: external_data.location"
    assert str(e.value).startswith(f"{WHERE}: external_data.location: '../x'")
    assert isinstance(e.value, ValueError)
    assert isinstance(e.value, OnnxArrowError)


def test_error_without_where_starts_with_the_field(base: Path) -> None:
    with pytest.raises(ExternalDataError) as e:
        read_external_data([("location", "weights.bin"), ("offset", "x")], base)
    assert e.value.where == "external_data.offset"
    assert str(e.value).startswith("external_data.offset: 'x' is not")
