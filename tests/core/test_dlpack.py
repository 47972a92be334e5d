"""DLPack: PyTorch, a real consumer, gets every dtype DLPack has, bit for bit, numpy's
dtypes zero-copy; numpy, the consumer every install has, its own dtypes zero-copy, and its
refusal of bfloat16 leaves no memory behind.

PyTorch is not in the test extra (the package index serves Linux x86_64 its CUDA build):
the tests that read through it run where it is installed (``.ci/run`` installs a build
without CUDA where one can be had) and skip, saying so, elsewhere."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import textwrap
from typing import Any

import ml_dtypes
import numpy as np
import pyarrow as pa
import pytest
from onnx import numpy_helper

import onnx_arrow
from onnx_arrow.core.dlpack import DLPACK_CODES, _capsule_pointer, _VersionedHead, to_dlpack
from onnx_arrow.errors import NotRepresentableError, UnsupportedTypeError

try:
    import torch
except ImportError:  # not in the test extra: see the module's docs
    torch = None

#: ``DLPACK_FLAG_BITMASK_READ_ONLY`` of ``dlpack.h``
_READ_ONLY = 1 << 0

needs_torch = pytest.mark.skipif(
    torch is None,
    reason="PyTorch, the DLPack consumer of bfloat16 and the float8s, is not installed "
    "(not in the test extra, whose index serves the CUDA build: pip install torch, a CPU "
    "build where one can be had; .ci/run does)",
)


def _column(values: np.ndarray[Any, Any], rows: int = 2) -> pa.Array:
    return onnx_arrow.to_arrow([numpy_helper.from_array(values) for _ in range(rows)])


#: Every float code of the exotic dtypes, NaNs of both signs and payloads included (the
#: dtype, its codes' unsigned type, PyTorch's name of it)
EXOTIC = {
    "BFLOAT16": (ml_dtypes.bfloat16, np.uint16, "bfloat16"),
    "FLOAT8E4M3FN": (ml_dtypes.float8_e4m3fn, np.uint8, "float8_e4m3fn"),
    "FLOAT8E4M3FNUZ": (ml_dtypes.float8_e4m3fnuz, np.uint8, "float8_e4m3fnuz"),
    "FLOAT8E5M2": (ml_dtypes.float8_e5m2, np.uint8, "float8_e5m2"),
    "FLOAT8E5M2FNUZ": (ml_dtypes.float8_e5m2fnuz, np.uint8, "float8_e5m2fnuz"),
    "FLOAT8E8M0": (ml_dtypes.float8_e8m0fnu, np.uint8, "float8_e8m0fnu"),
}


def _codes(dtype: Any, unsigned: type) -> np.ndarray[Any, Any]:
    if unsigned is np.uint8:
        return np.arange(256, dtype=np.uint8).view(dtype).reshape(16, 16)
    # bfloat16: a sample of every exponent, both signs, NaN payloads, infinities
    codes = np.array([0x0000, 0x8000, 0x7F80, 0xFF80, 0x7FC0, 0xFFC1, 0x7F81, 0x3F80, 0x0001])
    return np.concatenate([codes, np.arange(0, 0x10000, 97)]).astype(np.uint16).view(dtype)


@needs_torch
@pytest.mark.parametrize("name", sorted(EXOTIC))
def test_exotic_dtypes_reach_torch_bit_for_bit(name: str) -> None:
    dtype, unsigned, torch_name = EXOTIC[name]
    torch_dtype = getattr(torch, torch_name)
    values = _codes(dtype, unsigned)
    column = _column(values)
    tensor = torch.from_dlpack(to_dlpack(column))
    assert tensor.dtype == torch_dtype
    assert tuple(tensor.shape) == (2, *values.shape)
    int_type = torch.uint8 if unsigned is np.uint8 else torch.int16
    got = tensor.view(int_type).numpy().view(unsigned)
    assert np.array_equal(got[1], values.view(unsigned))
    # one value: a scalar, a row of the column
    one = torch.from_dlpack(onnx_arrow.to_dlpack(column[1]))
    assert tuple(one.shape) == values.shape
    assert np.array_equal(one.view(int_type).numpy().view(unsigned), values.view(unsigned))


@needs_torch
@pytest.mark.parametrize(
    "values",
    [
        np.arange(12, dtype=np.float32).reshape(3, 4),
        np.arange(6, dtype=np.int64),
        np.array([[0.5, -2.0]], np.float16),
        np.array([1 + 2j, -3.5j], np.complex64),
        np.array([True, False, True]),
        np.arange(4, dtype=np.uint8),
        np.float64(2.5),
    ],
    ids=lambda v: str(v.dtype),
)
def test_numpy_dtypes_reach_torch_zero_copy(values: np.ndarray[Any, Any]) -> None:
    column = _column(np.asarray(values))
    handed = to_dlpack(column)
    assert handed.zero_copy
    tensor = torch.from_dlpack(handed, copy=False)
    # asked for no copy, the tensor is over the Arrow buffer itself
    storage = column.storage.values if values.ndim else column.storage
    while pa.types.is_fixed_size_list(storage.type):  # complex: a list of two parts
        storage = storage.values
    assert (
        tensor.data_ptr() == storage.buffers()[1].address + storage.offset * storage.type.byte_width
    )
    assert np.array_equal(tensor.numpy(), onnx_arrow.to_numpy(column))
    # one value, column[1]: over the same buffer, one row in
    one = torch.from_dlpack(to_dlpack(column[1]), copy=False)
    assert one.data_ptr() == tensor[1].data_ptr()
    assert np.array_equal(one.numpy(), onnx_arrow.to_numpy(column)[1])


@needs_torch
def test_a_copy_is_refused_where_asked_for_none_and_made_where_asked() -> None:
    bf = to_dlpack(_column(np.ones(3, ml_dtypes.bfloat16)))
    assert not bf.zero_copy
    with pytest.raises(BufferError, match="copy=False"):
        bf.__dlpack__(max_version=(1, 1), copy=False)
    with pytest.raises(BufferError, match="dl_device"):
        bf.__dlpack__(dl_device=(2, 0))
    assert bf.__dlpack_device__() == (1, 0)
    floats = to_dlpack(_column(np.ones(3, np.float32)))
    copied = torch.from_dlpack(floats, copy=True)
    assert copied.data_ptr() != torch.from_dlpack(floats).data_ptr()


@needs_torch
def test_the_legacy_capsule_of_older_consumers() -> None:
    """A consumer of DLPack 0.x (no ``max_version``) gets a ``dltensor`` capsule."""
    values = np.array([1.5, -0.0, 3.0], ml_dtypes.bfloat16)
    capsule = to_dlpack(_column(values)).__dlpack__()
    assert "dltensor" in repr(capsule)
    tensor = torch.utils.dlpack.from_dlpack(capsule)
    assert np.array_equal(
        tensor.view(torch.int16).numpy().view(np.uint16)[0], values.view(np.uint16)
    )


def test_what_dlpack_has_no_code_for_is_refused_naming_to_numpy() -> None:
    for values in (np.array([1, -8], ml_dtypes.int4), np.array(["a", "b"])):
        with pytest.raises(
            UnsupportedTypeError, match=r"^data: DLPack has no type code .*to_numpy"
        ):
            to_dlpack(_column(values))
    ragged = onnx_arrow.to_arrow([numpy_helper.from_array(np.ones(n, np.float32)) for n in (1, 2)])
    with pytest.raises(NotRepresentableError, match="row 0 has shape"):
        to_dlpack(ragged)
    assert np.from_dlpack(to_dlpack(ragged[1])).shape == (2,)  # one value has one shape


def test_every_dtype_with_a_dlpack_code_is_a_dtype_of_the_table() -> None:
    """The codes are keyed by the dtype table's names; those without one are the ones
    DLPack has no code for, held as onnx-arrow holds them."""
    names = {row.name for row in onnx_arrow.DTYPES.values()}
    assert set(DLPACK_CODES) <= names
    assert names - set(DLPACK_CODES) == {
        "STRING",
        "INT4",
        "UINT4",
        "INT2",
        "UINT2",
        "FLOAT4E2M1",
        "FLOAT6E2M3",
        "FLOAT6E3M2",
    }


@needs_torch
def test_tensors_outlive_their_column_and_the_interpreter() -> None:
    """The capsule's memory is the consumer's: freed by it, also after Python has ended
    (PyTorch frees tensors then), without running any Python."""
    tensor = torch.from_dlpack(to_dlpack(_column(np.ones(4, ml_dtypes.bfloat16))))
    gc.collect()
    assert float(tensor.float().sum()) == 8.0
    script = textwrap.dedent(
        """
        import ml_dtypes, numpy as np, torch, onnx_arrow
        from onnx import numpy_helper
        column = onnx_arrow.to_arrow([numpy_helper.from_array(np.ones(3, ml_dtypes.bfloat16))])
        kept = [torch.from_dlpack(onnx_arrow.to_dlpack(column)) for _ in range(3)]
        print("ok")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert (done.returncode, done.stdout.strip()) == (0, "ok"), done.stderr


def test_numpy_reads_its_own_dtypes_zero_copy() -> None:
    """numpy, the consumer every install has, reads a float column over its Arrow buffer."""
    column = _column(np.arange(6, dtype=np.float32).reshape(2, 3))
    got = np.from_dlpack(to_dlpack(column), copy=False)
    values = column.storage.values
    assert got.ctypes.data == values.buffers()[1].address + values.offset * 4
    assert not got.flags.writeable  # the flag of DLPack 1.0, which numpy honours
    assert np.array_equal(got, onnx_arrow.to_numpy(column))


@needs_torch
def test_a_consumer_that_writes_never_writes_into_the_arrow_buffer() -> None:
    """PyTorch makes a writable tensor of a capsule flagged read-only: by default it gets a
    copy, which it may write to; asked for none, the buffer itself, flagged read-only."""
    column = _column(np.arange(6, dtype=np.float32).reshape(2, 3))
    before = onnx_arrow.to_numpy(column).copy()
    handed = to_dlpack(column)
    tensor = torch.from_dlpack(handed)
    tensor += 100
    one = torch.from_dlpack(to_dlpack(column[1]))
    one[0, 0] = -1
    np.from_dlpack(handed)[0, 0, 0] = 7
    assert np.array_equal(onnx_arrow.to_numpy(column), before)
    assert tensor.flatten()[0] == 100
    capsule = handed.__dlpack__(max_version=(1, 0), copy=False)
    head = _VersionedHead.from_address(_capsule_pointer(capsule, b"dltensor_versioned"))
    assert head.flags & _READ_ONLY
    with pytest.raises(BufferError, match="readonly"):
        handed.__dlpack__(copy=False)  # a legacy capsule cannot say it is read-only


#: The script measuring the resident memory of a process (/proc/self/status) before and
#: after 200 bfloat16 capsules of 4 MiB dropped unread, and 200 refused by numpy
_RSS_SCRIPT = textwrap.dedent(
    """
    import gc, json
    import ml_dtypes, numpy as np, onnx_arrow
    from onnx import numpy_helper

    def rss():
        with open("/proc/self/status") as f:
            return next(int(l.split()[1]) * 1024 for l in f if l.startswith("VmRSS:"))

    values = np.ones(1 << 21, ml_dtypes.bfloat16)
    handed = onnx_arrow.to_dlpack(onnx_arrow.to_arrow([numpy_helper.from_array(values)]))
    for _ in range(3):  # the allocator's first growth is not what is measured
        handed.__dlpack__(max_version=(1, 1)), handed.__dlpack__()
    gc.collect()
    start = rss()
    for _ in range(100):  # 200 capsules, versioned and legacy, dropped
        handed.__dlpack__(max_version=(1, 1)), handed.__dlpack__()
    gc.collect()
    dropped = rss()
    refused = 0
    for _ in range(200):  # a user trying numpy first: numpy has no bfloat16
        try:
            np.from_dlpack(handed)
        except (BufferError, RuntimeError, TypeError):
            refused += 1
    gc.collect()
    print(json.dumps({"capsule": values.nbytes, "dropped": dropped - start,
                      "refused": rss() - dropped, "refusals": refused}))
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_capsules_dropped_or_refused_leave_no_memory_behind() -> None:
    """Every capsule has a destructor: 200 dropped and 200 that numpy refuses leave the
    resident memory within 10 capsules of where it was (a capsule without one keeps its
    4 MiB each: 800 MiB)."""
    done = subprocess.run(
        [sys.executable, "-c", _RSS_SCRIPT],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    grown = json.loads(done.stdout)
    assert grown["refusals"] == 200
    bound = 10 * grown["capsule"]
    assert grown["dropped"] < bound, grown
    assert grown["refused"] < bound, grown
