"""The Arrow types of tensor columns: fixed shape, variable shape, variable rank, sparse.

Canonical Arrow types come first: ``arrow.fixed_shape_tensor`` for tensors whose
rows share a shape and ``arrow.variable_shape_tensor`` (read, never written: pyarrow
registers it in C++ only) for rows that differ.  Where Arrow has nothing that fits,
onnx-arrow's own, all carrying JSON metadata with a ``version`` key:

``onnx.fixed_shape_tensor``
    the layout of ``arrow.fixed_shape_tensor`` for onnx-arrow's own element types.
    A tensor column never nests an ``onnx.<dtype>`` inside a canonical type (a reader
    without onnx-arrow would drop it without a trace): its tensor type holds the plain
    storage and records the ``data_type`` itself.
``onnx.variable_shape_tensor``
    the layout of ``arrow.variable_shape_tensor`` for every element type.
``onnx.variable_rank_tensor``
    rows whose ranks differ: ``struct<data: list<T>, shape: list<int32>>``.
``onnx.sparse_tensor``
    ``struct<shape: list<int64>, values, indices>``, as a ``SparseTensorProto`` holds them.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Sequence
from typing import Any, Final, Literal, NamedTuple

import numpy as np
import pyarrow as pa

from onnx_arrow.core.dtypes import DType
from onnx_arrow.core.element_types import (
    DTYPE_BY_NAME,
    OnnxElementType,
    element_storage,
    element_type,
    own_dtype,
)
from onnx_arrow.core.extension_metadata import CDataHolder, c_schema_metadata
from onnx_arrow.core.json_extension import (
    JsonExtensionType,
    check_readable,
    expect_params,
    expect_storage,
)
from onnx_arrow.core.tensor_codes import fixed_codes, null_row_error, validity
from onnx_arrow.core.tensors import numpy_shape
from onnx_arrow.errors import ArrowLayoutError, UnsupportedTypeError

__all__ = [
    "CANONICAL_FIXED_SHAPE",
    "CANONICAL_VARIABLE_SHAPE",
    "OnnxFixedShapeTensorType",
    "OnnxTensorArray",
    "SparseTensorType",
    "TensorLayout",
    "VariableRankTensorType",
    "VariableShapeTensorType",
    "canonical_variable_shape_tensor",
    "fixed_shape_tensor",
    "ragged_from_storage",
    "ragged_storage",
    "sparse_tensor_type",
    "stored",
    "tensor_layout",
    "variable_rank_tensor",
    "variable_shape_tensor",
]


CANONICAL_VARIABLE_SHAPE: Final = "arrow.variable_shape_tensor"
CANONICAL_FIXED_SHAPE: Final = "arrow.fixed_shape_tensor"


def fixed_shape_tensor(value_type: pa.DataType, shape: tuple[int, ...]) -> pa.DataType:
    """The fixed-shape tensor type of ``value_type`` and ``shape`` (row-major).

    ``arrow.fixed_shape_tensor`` for the element types Arrow has (BOOL as
    ``arrow.bool8``, STRING as ``binary``), ``onnx.fixed_shape_tensor`` over plain
    storage for onnx-arrow's own (bfloat16, the float8s ...).

    >>> import pyarrow as pa
    >>> from onnx_arrow.core.dtypes import dtype_of
    >>> fixed_shape_tensor(pa.float32(), (2, 3)).extension_name
    'arrow.fixed_shape_tensor'
    >>> bf16 = fixed_shape_tensor(element_type(dtype_of("BFLOAT16")), (2, 3))
    >>> bf16.extension_name, bf16.storage_type
    ('onnx.fixed_shape_tensor', FixedSizeListType(fixed_size_list<item: float>[6]))
    """
    if isinstance(value_type, OnnxElementType):
        return OnnxFixedShapeTensorType(value_type.dtype, shape)
    return pa.fixed_shape_tensor(value_type, list(shape))


class OnnxFixedShapeTensorType(JsonExtensionType):
    """``onnx.fixed_shape_tensor``: rows of one shape, of an element type Arrow lacks.

    The layout of ``arrow.fixed_shape_tensor`` (``fixed_size_list<T>[size]``,
    row-major) over the plain storage of the element (float32 for bfloat16 and the
    float8s, int8 / uint8 for the sub-byte integers, ``fixed_size_list<float>[2]`` for
    complex), with the ONNX ``data_type`` and the ``shape`` in its own metadata.  The
    whole meaning is in this one type: a reader that does not know it keeps its
    storage, the exact numbers, and (pyarrow) its name and metadata in the field, and
    never half of it.
    """

    _name = "onnx.fixed_shape_tensor"

    def __init__(self, dtype: DType, shape: Sequence[int]) -> None:
        storage = pa.list_(pa.field("item", element_storage(dtype)), math.prod(shape))
        super().__init__(storage, {"data_type": dtype.name, "shape": list(shape)})

    @property
    def dtype(self) -> DType:
        """The ONNX dtype of the elements."""
        return DTYPE_BY_NAME[self._params["data_type"]]

    @property
    def shape(self) -> list[int]:
        """The shape every row has."""
        return list(self._params["shape"])

    @property
    def value_type(self) -> pa.DataType:
        """The Arrow type of one element (the storage holds its plain storage)."""
        return element_type(self.dtype)

    @classmethod
    def _from_params(
        cls, storage_type: pa.DataType, params: dict[str, Any]
    ) -> OnnxFixedShapeTensorType:
        expect_params(cls._name, params, {"data_type", "shape"})
        row = own_dtype(cls._name, params)
        shape = params.get("shape")
        if row is None or not (
            isinstance(shape, list) and all(type(d) is int and d > 0 for d in shape)
        ):
            raise ArrowLayoutError(
                f"metadata must hold data_type and shape, a list of positive ints; got {params!r}",
                where=cls._name,
            )
        made = cls(row, shape)
        expect_storage(cls._name, storage_type, made.storage_type)
        return made

    def __arrow_ext_class__(self) -> type[pa.ExtensionArray]:
        return OnnxTensorArray


class OnnxTensorArray(pa.ExtensionArray):  # type: ignore[misc]
    """An ``onnx.fixed_shape_tensor`` array."""

    def to_numpy_ndarray(self) -> np.ndarray:
        """The rows as one ndarray ``(rows, *shape)`` of the ONNX dtype (``ml_dtypes``).

        Raises
        ------
        ArrowLayoutError
            If the array's buffers are inconsistent or its type's layout was wrong.
        NotRepresentableError
            If a row is null (an absent value): the rows are then not one ndarray.
        """
        try:
            self.validate(full=True)
        except (pa.ArrowInvalid, pa.ArrowException) as exc:
            raise ArrowLayoutError(
                f"the Arrow data is malformed and cannot be read safely ({exc}); rebuild it "
                "with its writer, or check the file it came from"
            ) from exc
        check_readable(self.type)
        if self.null_count:
            raise null_row_error(validity(self).index(False))
        shape = numpy_shape(
            (len(self), *self.type.shape),
            what="an ndarray of the rows",
            dtype=np.dtype(self.type.dtype.numpy),
        )
        return fixed_codes(self, self.type.dtype).reshape(shape)


class _RaggedTensorType(JsonExtensionType):
    """Storage ``struct<data: list<T>, shape: ...<int32>>``, one row per tensor.

    For an element type of onnx-arrow's own, ``data`` holds its plain storage and
    the metadata its ``data_type``, as :class:`OnnxFixedShapeTensorType` does.
    """

    @property
    def value_type(self) -> pa.DataType:
        """The Arrow type of one element."""
        row = own_dtype(self._name, self._params)
        if row is not None:
            return element_type(row)
        return self.storage_type.field("data").type.value_type

    @classmethod
    def _check_data_type(cls, storage_type: pa.DataType, params: dict[str, Any]) -> None:
        row = own_dtype(cls._name, params)
        if row is not None:
            expect_storage(
                cls._name, storage_type.field("data").type.value_type, element_storage(row)
            )


class VariableShapeTensorType(_RaggedTensorType):
    """The ``arrow.variable_shape_tensor`` layout for element types pyarrow's C++ refuses.

    Same storage and metadata keys as the canonical type (``uniform_shape``); used
    for BOOL, STRING, COMPLEX and onnx-arrow's own element types.
    """

    _name = "onnx.variable_shape_tensor"

    @property
    def ndim(self) -> int:
        """The rank every row shares."""
        return int(self.storage_type.field("shape").type.list_size)

    @property
    def uniform_shape(self) -> list[int | None] | None:
        """Sizes that every row shares (``None`` where rows differ), if recorded."""
        shape = self._params.get("uniform_shape")
        return None if shape is None else list(shape)

    @classmethod
    def _from_params(
        cls, storage_type: pa.DataType, params: dict[str, Any]
    ) -> VariableShapeTensorType:
        expect_params(cls._name, params, {"uniform_shape", "data_type"})
        ndim = _ragged_storage_ndim(cls._name, storage_type, fixed_rank=True)
        uniform = params.get("uniform_shape")
        _check_uniform_shape(cls._name, uniform, ndim)
        cls._check_data_type(storage_type, params)
        return cls(storage_type, params)


class VariableRankTensorType(_RaggedTensorType):
    """Tensors whose ranks differ from row to row: ``shape`` is ``list<int32>``."""

    _name = "onnx.variable_rank_tensor"

    @classmethod
    def _from_params(
        cls, storage_type: pa.DataType, params: dict[str, Any]
    ) -> VariableRankTensorType:
        expect_params(cls._name, params, {"data_type"})
        _ragged_storage_ndim(cls._name, storage_type, fixed_rank=False)
        cls._check_data_type(storage_type, params)
        return cls(storage_type, params)


def _ragged_storage_ndim(name: str, storage: pa.DataType, *, fixed_rank: bool) -> int:
    shape_kind = "fixed_size_list<int32>[ndim]" if fixed_rank else "list<int32>"
    expected = f"struct<data: list<T>, shape: {shape_kind}>"
    if not pa.types.is_struct(storage) or [f.name for f in storage] != ["data", "shape"]:
        raise ArrowLayoutError(f"storage must be {expected}, got {storage}", where=name)
    data, shape = storage.field("data").type, storage.field("shape").type
    if not (pa.types.is_list(data) or pa.types.is_large_list(data)):
        raise ArrowLayoutError(f"storage must be {expected}, got {storage}", where=name)
    shape_ok = (
        pa.types.is_fixed_size_list(shape)
        if fixed_rank
        else pa.types.is_list(shape) or pa.types.is_large_list(shape)
    ) and shape.value_type == pa.int32()
    if not shape_ok:
        raise ArrowLayoutError(f"storage must be {expected}, got {storage}", where=name)
    return int(shape.list_size) if fixed_rank else -1


def _check_uniform_shape(name: str, uniform: object, ndim: int) -> None:
    if uniform is None:
        return
    if (
        not isinstance(uniform, list)
        or len(uniform) != ndim
        or not all(d is None or (type(d) is int and d >= 0) for d in uniform)
    ):
        raise ArrowLayoutError(
            f"uniform_shape must be a list of {ndim} non-negative ints or nulls, got {uniform!r}",
            where=name,
        )


def ragged_storage(value_type: pa.DataType, ndim: int | None) -> pa.DataType:
    shape = pa.list_(pa.int32(), ndim) if ndim is not None else pa.list_(pa.int32())
    return pa.struct([pa.field("data", pa.list_(stored(value_type))), pa.field("shape", shape)])


def stored(value_type: pa.DataType) -> pa.DataType:
    """The type a tensor type stores elements of ``value_type`` as: onnx-arrow's own
    element types as their plain storage (the tensor type records the dtype), any
    other as itself."""
    return value_type.storage_type if isinstance(value_type, OnnxElementType) else value_type


def _ragged_params(value_type: pa.DataType, params: dict[str, Any]) -> dict[str, Any]:
    if isinstance(value_type, OnnxElementType):
        return {**params, "data_type": value_type.dtype.name}
    return params


def _canonical_accepts(value_type: pa.DataType) -> bool:
    return not isinstance(value_type, pa.BaseExtensionType) and (
        pa.types.is_integer(value_type) or pa.types.is_floating(value_type)
    )


def _canonical_field(storage_type: pa.DataType, uniform: list[int | None] | None) -> pa.Field:
    params: dict[str, Any] = {} if uniform is None else {"uniform_shape": uniform}
    metadata = {
        "ARROW:extension:name": CANONICAL_VARIABLE_SHAPE,
        "ARROW:extension:metadata": json.dumps(params),
    }
    return pa.field("", storage_type, metadata=metadata)


@functools.lru_cache(maxsize=256)
def _canonical_variable_shape(
    value_type: pa.DataType, ndim: int, uniform: tuple[int | None, ...] | None
) -> pa.DataType:
    storage_type = ragged_storage(value_type, ndim)
    empty = pa.nulls(0, storage_type)
    field = _canonical_field(storage_type, None if uniform is None else list(uniform))
    return pa.array(CDataHolder(empty, field)).type


def variable_shape_tensor(
    value_type: pa.DataType, ndim: int, uniform_shape: list[int | None] | None = None
) -> pa.DataType:
    """The variable-shape tensor type onnx-arrow writes: ``onnx.variable_shape_tensor``.

    The storage and metadata of the canonical ``arrow.variable_shape_tensor``
    (``uniform_shape``), under onnx-arrow's own name and Python class, for every
    element type.  pyarrow registers the canonical type in C++ only, and measured with
    pyarrow 26 that type does not fit: it takes integers and floats only, refuses the
    ``large_list`` storage Polars hands back, and pickles but does not unpickle (so a
    table holding it cannot go to a Ray or Dask worker).  Columns of the canonical
    type are still read (:func:`tensor_layout`; :func:`canonical_variable_shape_tensor`
    makes one).

    >>> import pyarrow as pa
    >>> variable_shape_tensor(pa.float32(), 2).extension_name
    'onnx.variable_shape_tensor'
    """
    if uniform_shape is not None:
        _check_uniform_shape("variable_shape_tensor", uniform_shape, ndim)
    params = {} if uniform_shape is None else {"uniform_shape": list(uniform_shape)}
    return VariableShapeTensorType(
        ragged_storage(value_type, ndim), _ragged_params(value_type, params)
    )


def canonical_variable_shape_tensor(
    value_type: pa.DataType, ndim: int, uniform_shape: list[int | None] | None = None
) -> pa.DataType:
    """pyarrow's C++ ``arrow.variable_shape_tensor`` (integers and floats), as other
    writers make it; onnx-arrow reads it and writes :func:`variable_shape_tensor`.

    >>> import pyarrow as pa
    >>> canonical_variable_shape_tensor(pa.float32(), 2).extension_name
    'arrow.variable_shape_tensor'
    """
    if not _canonical_accepts(value_type):
        raise UnsupportedTypeError(
            f"arrow.variable_shape_tensor takes integer and float elements only, not {value_type}"
        )
    uniform = None if uniform_shape is None else tuple(uniform_shape)
    return _canonical_variable_shape(value_type, ndim, uniform)


def variable_rank_tensor(value_type: pa.DataType) -> VariableRankTensorType:
    """The type for tensors whose ranks differ between rows."""
    return VariableRankTensorType(ragged_storage(value_type, None), _ragged_params(value_type, {}))


class TensorLayout(NamedTuple):
    """How a tensor type stores its rows, and the Arrow type of one element.

    ``layout`` is ``fixed`` (``arrow.fixed_shape_tensor``), ``variable`` (a
    variable-shape tensor, canonical or onnx-arrow's) or ``rank``
    (``onnx.variable_rank_tensor``).
    """

    layout: Literal["fixed", "variable", "rank"]
    value_type: pa.DataType


def tensor_layout(arrow_type: pa.DataType) -> TensorLayout | None:
    """The layout and element type of a tensor type; None for any other type.

    >>> import pyarrow as pa
    >>> tensor_layout(variable_rank_tensor(pa.int64()))
    TensorLayout(layout='rank', value_type=DataType(int64))
    >>> tensor_layout(pa.list_(pa.int64())) is None
    True
    """
    name = getattr(arrow_type, "extension_name", None)
    if name == CANONICAL_FIXED_SHAPE or isinstance(arrow_type, OnnxFixedShapeTensorType):
        return TensorLayout("fixed", arrow_type.value_type)
    if isinstance(arrow_type, VariableShapeTensorType):
        return TensorLayout("variable", arrow_type.value_type)
    # the canonical variable-shape type has no Python class: recognised by its name only
    if name == CANONICAL_VARIABLE_SHAPE:
        return TensorLayout("variable", arrow_type.storage_type.field("data").type.value_type)
    if isinstance(arrow_type, VariableRankTensorType):
        return TensorLayout("rank", arrow_type.value_type)
    return None


def ragged_from_storage(arrow_type: pa.DataType, storage: pa.Array) -> pa.Array:
    """Wrap a ``struct<data, shape>`` storage array into ``arrow_type``."""
    if isinstance(arrow_type, JsonExtensionType):
        return pa.ExtensionArray.from_storage(arrow_type, storage)
    field = pa.field("", storage.type, metadata=c_schema_metadata(arrow_type))
    return pa.array(CDataHolder(storage, field))


class SparseTensorType(JsonExtensionType):
    """``onnx.sparse_tensor``: ``struct<shape: list<int64>, values, indices>``.

    ``values`` is a rank-1 variable-shape tensor (``[NNZ]``), ``indices`` an int64
    variable-rank tensor holding ``[NNZ]`` linear or ``[NNZ, rank]`` coordinates,
    exactly as the ``SparseTensorProto`` stored them.
    """

    _name = "onnx.sparse_tensor"

    def __init__(self, storage_type: pa.DataType) -> None:
        super().__init__(storage_type, {})

    @property
    def value_type(self) -> pa.DataType:
        """The Arrow type of one element of ``values``."""
        layout = tensor_layout(self.storage_type.field("values").type)
        assert layout is not None
        return layout.value_type

    @classmethod
    def _from_params(cls, storage_type: pa.DataType, params: dict[str, Any]) -> SparseTensorType:
        expect_params(cls._name, params, set())
        names = [f.name for f in storage_type] if pa.types.is_struct(storage_type) else []
        if names != ["shape", "values", "indices"]:
            raise ArrowLayoutError(
                "storage must be struct<shape: list<int64>, values: tensor, indices: tensor>, "
                f"got {storage_type}",
                where=cls._name,
            )
        return cls(storage_type)


def sparse_tensor_type(value_type: pa.DataType) -> SparseTensorType:
    """``onnx.sparse_tensor`` whose values have elements of Arrow type ``value_type``."""
    return SparseTensorType(
        pa.struct(
            [
                pa.field("shape", pa.list_(pa.int64())),
                pa.field("values", variable_shape_tensor(value_type, 1)),
                pa.field("indices", variable_rank_tensor(pa.int64())),
            ]
        )
    )
