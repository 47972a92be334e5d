"""A case's data set kept as one numpy bundle, as tract keeps its cases: ``model.onnx``
beside ``io.npz``, whose arrays are the model's inputs and expected outputs by graph name
(``tract model.onnx --input-from-bundle io.npz run --assert-output-bundle io.npz``).

The bundle is stored as the file it is (an export gives it back byte for byte); a reader
of the case takes its data set from it: an array named as a graph input is fed, one named
as a graph output is expected, any other is listed as unused.  The bytes come from
someone else, so they are read bounded: a zip of at most :data:`MAX_MEMBERS` ``.npy``
members, no pickles, and every member's header checked against its size before numpy
allocates what the header declares.
"""

from __future__ import annotations

import functools
import io
import re
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any, Final

import numpy as np
from numpy.lib import format as npy_format

from onnx_arrow.core.model import decode_value, graph_values, onnx_type_string
from onnx_arrow.corpus.rows import StoredValue
from onnx_arrow.errors import CorpusError

if TYPE_CHECKING:
    from onnx import ModelProto

__all__ = ["BUNDLE_NAME", "MAX_MEMBERS", "Bundle", "read_bundle", "read_npy"]

#: The file name of a case's bundle in the layout tract keeps.
BUNDLE_NAME: Final = "io.npz"
#: ``input_K`` / ``output_K``: a value file named by its number.
_NUMBERED: Final = re.compile(r"(input|output)_(\d{1,6})")
#: Most arrays a bundle may hold (a model's inputs and outputs).
MAX_MEMBERS: Final = 4096


@dataclass
class Bundle:
    """The values of a bundle, by the model's input and output index, and the names of
    the arrays the model has no input or output for."""

    inputs: dict[int, StoredValue] = field(default_factory=dict)
    expected: dict[int, StoredValue] = field(default_factory=dict)
    unused: list[str] = field(default_factory=list)


def read_bundle(data: bytes, model: ModelProto, *, case: str, path: str) -> Bundle:
    """The data set a bundle holds for ``model``, its arrays named as the model's graph
    names its inputs and outputs; a located :class:`CorpusError` for a bundle that is no
    zip of ``.npy`` arrays, holds a pickle, or declares more than a member holds."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        members = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise CorpusError(f"not a numpy bundle (.npz): {exc}", where=path) from None
    if len(members) > MAX_MEMBERS:
        raise CorpusError(
            f"{len(members)} arrays; a bundle holds at most {MAX_MEMBERS}", where=path
        )
    slots = {
        value.name: (io_, k)
        for io_ in ("input", "output")
        for k, value in enumerate(graph_values(model, io_))
    }
    bundle = Bundle()
    for member in members:
        name = member.filename.removesuffix(".npy")
        where = f"{path}: {member.filename}"
        if not member.filename.endswith(".npy") or member.is_dir():
            raise CorpusError("not a .npy array; a bundle holds .npy arrays only", where=where)
        array = _array(functools.partial(archive.open, member), member.file_size, where)
        slot = slots.get(name)
        if slot is None:
            bundle.unused.append(name)
            continue
        value = _value(array, name, case=case, path=path, data_set=None, slot=slot, where=where)
        (bundle.inputs if slot[0] == "input" else bundle.expected)[slot[1]] = value
    return bundle


def read_npy(
    data: bytes, model: ModelProto, *, case: str, path: str, data_set: int | None
) -> StoredValue | None:
    """The value of a ``.npy`` file of a case, for the model's input or output its name
    (``x.npy``), or in a ``test_data_set_N`` folder its ``input_K.npy`` / ``output_K.npy``,
    names; None for a file that names none (it is kept as it is)."""
    stem = path.rsplit("/", 1)[-1].removesuffix(".npy")
    slot = None
    for io_ in ("input", "output"):
        names = [value.name for value in graph_values(model, io_)]
        numbered = _NUMBERED.fullmatch(stem)
        if stem in names:
            slot = (io_, names.index(stem))
        elif data_set is not None and numbered and numbered[1] == io_:
            k = int(numbered[2])
            slot = (io_, k) if k < len(names) else slot
    if slot is None:
        return None
    array = _array(lambda: io.BytesIO(data), len(data), path)
    name = graph_values(model, slot[0])[slot[1]].name
    return _value(array, name, case=case, path=path, data_set=data_set, slot=slot, where=path)


def _value(
    array: np.ndarray[Any, Any],
    name: str,
    *,
    case: str,
    path: str,
    data_set: int | None,
    slot: tuple[str, int],
    where: str,
) -> StoredValue:
    """An array as the stored value of the model's input or output ``slot``."""
    from onnx import helper, numpy_helper

    proto = numpy_helper.from_array(array, name)
    node, envelope, kind = decode_value(proto.SerializeToString(), "tensor", where=where)
    onnx_type = onnx_type_string(helper.make_tensor_type_proto(proto.data_type, None))
    return StoredValue(case, path, data_set, *slot, name, onnx_type, kind, node, envelope)


def _array(opened: Callable[[], IO[bytes]], size: int, where: str) -> np.ndarray[Any, Any]:
    """One ``.npy`` array (``opened`` opens it; ``size`` its bytes), its header checked
    against its size before numpy reads it."""
    try:
        with opened() as stream:
            version = npy_format.read_magic(stream)
            read_header = (
                npy_format.read_array_header_1_0
                if version == (1, 0)
                else npy_format.read_array_header_2_0
            )
            shape, fortran, dtype = read_header(stream)
            header = stream.tell()
            if dtype.hasobject:
                raise CorpusError("holds Python objects (a pickle); refused", where=where)
            declared = int(np.prod(shape, dtype=object)) * dtype.itemsize
            if header + declared != size:
                raise CorpusError(
                    f"its header declares {declared} bytes of {dtype} {list(shape)}, but the "
                    f"file holds {size - header}",
                    where=where,
                )
        with opened() as stream:
            array = npy_format.read_array(stream, allow_pickle=False)
    except (ValueError, OSError, zipfile.BadZipFile, EOFError) as exc:
        raise CorpusError(f"not a readable .npy array: {exc}", where=where) from None
    if fortran:
        array = np.ascontiguousarray(array)
    array.setflags(write=False)
    return array
