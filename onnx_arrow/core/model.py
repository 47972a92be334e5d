"""The internal model: what onnx-arrow's adapters build on, beside the public API.

The adapters (the corpus store, pandas, Jupyter, compare and the CLI) import from the
core only ``onnx_arrow`` itself, :mod:`onnx_arrow.errors` and this module; a test
(``tests/test_api.py``) checks it.  The core's own modules may then be split, merged
or renamed behind it.  Not public: names here may change between releases, with the
adapters changed alongside.

Each name is imported from its module when first looked up (:data:`_LAZY`), so that an
adapter pays for what it uses: reading or exporting a store imports neither onnx nor
ml_dtypes, which the conversions of messages need.

The dtype table
    :data:`DTYPES`, :class:`DType` and :class:`ArrowKind`, with :func:`dtype_of` and
    :func:`dtype_of_numpy` to look rows up (:mod:`onnx_arrow.core.dtypes`).
Kinds
    :class:`Kind` is the structure of a value (``tensor``, ``sequence(x)``,
    ``map(K, x)``, ``optional(x)``, ``sparse_tensor``), with the kind names as
    constants; :func:`kind_of_type` reads one from an ``onnx.TypeProto``,
    :func:`kind_of_arrow` from an Arrow type.
Nodes
    A value between its message and its Arrow row: :class:`Tensor` (dtype, dims,
    codes), :class:`SequenceValue`, :class:`MapValue`, :class:`OptionalValue`,
    :class:`SparseValue` (:func:`check_sparse` refuses one whose parts do not fit
    together).  :func:`python_value` gives one as numpy and Python values;
    :func:`value_message` writes such a value as the message of its declared type
    (:func:`map_pairs`, :func:`map_keys` and :func:`string_bytes` read its parts).
    :data:`NUMPY_MAX_RANK` is the highest rank such an ndarray may have.
Messages
    :func:`decode_value` splits a serialized message into its node and envelope,
    :func:`encode_value` joins them back, byte for byte; :func:`flatten` and
    :func:`assemble` turn a node into its tensors and back; :func:`decode_tensor_fast`
    is the C-parser path for plain tensors.
Arrow
    :func:`build_array` makes a column of nodes in a given Arrow type
    (:func:`arrow_type` of a declaration, :func:`infer_arrow_type` of the nodes);
    :func:`value_rows` reads the nodes back; :func:`unwrap` splits an ``onnx.message``
    column into kind, values and envelopes; :func:`as_array` takes any Arrow data,
    checked.  :func:`tensor_layout`, :func:`dtype_of_arrow`, :func:`element_type`,
    :func:`storage_type` and :func:`describe_type` answer questions about types;
    :func:`children` (:func:`child_fields`), :func:`walk` and :func:`map_type` go over
    nested Arrow types, every nested type constructor covered
    (:mod:`onnx_arrow.core.walk`).
Elements
    :func:`codes_to_storage` and :func:`storage_to_codes` convert elements between
    their ONNX codes and their Arrow storage; :func:`stacked_codes` stacks a
    fixed-shape column; :data:`Strings` and :func:`check_strings` say how STRING
    elements come out.
Declarations
    :func:`pair_files` pairs a data set's value files with the model's inputs or
    outputs (the name inside a file, else its number; :class:`Pairing`);
    :func:`contradiction` says how a value contradicts its declared type
    (:class:`Contradiction`); :func:`diagnosis` what a file that does not decode as
    its declared kind holds instead, :func:`holds_model` whether it is a model
    (:mod:`onnx_arrow.core.declarations`).
Statistics and files
    :func:`tensor_statistics`, :func:`statistics_by_dtype` and :data:`STATISTICS`;
    :func:`ulp_distance` (:class:`UlpDistance`) for the floating dtypes
    (:data:`FLOATING`; a row's :attr:`DType.is_floating`);
    :func:`as_path`, the one check of an argument that takes a path;
    :data:`OPEN_FLAGS`, :data:`NO_FOLLOW` and :func:`file_kind` for opening files
    from anyone; :func:`load_json` for JSON metadata from anyone (size, encoding and
    depth checked); :func:`read_varint` and :func:`encode_varint`, protobuf's varints,
    which Thrift's compact protocol (a Parquet footer) shares.
Messages' classes
    :class:`ModelProto` and :class:`TypeProto`, onnx's own classes, and
    :func:`onnx_version`, ``onnx.__version__``, without the cost of ``import onnx``
    (:mod:`onnx_arrow.core.protos`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from onnx_arrow._lazy import exports

if TYPE_CHECKING:
    from onnx_arrow.core._json import load_json
    from onnx_arrow.core._open import NO_FOLLOW, OPEN_FLAGS, as_path, file_kind, read_regular_file
    from onnx_arrow.core._wire import encode_varint, read_varint
    from onnx_arrow.core.arrays import build_array, infer_arrow_type, value_rows
    from onnx_arrow.core.arrow_input import as_array
    from onnx_arrow.core.codec import (
        Strings,
        check_strings,
        codes_to_storage,
        pack,
        storage_to_codes,
        unpack,
    )
    from onnx_arrow.core.containers import assemble, decode_value, encode_value, flatten
    from onnx_arrow.core.declarations import (
        Contradiction,
        Pairing,
        contradiction,
        contradiction_message,
        declared_kind,
        diagnosis,
        holds_model,
        lfs_pointer,
        pair_files,
        undeclared_tensor_type,
    )
    from onnx_arrow.core.direct import decode_tensor_fast
    from onnx_arrow.core.dtypes import (
        DECODED_FLOATS,
        DTYPES,
        ArrowKind,
        DType,
        dtype_of,
        dtype_of_numpy,
    )
    from onnx_arrow.core.element_types import dtype_of_arrow, element_type
    from onnx_arrow.core.extension_types import describe_type
    from onnx_arrow.core.graph import (
        declared_type,
        declared_type_text,
        graph_values,
        onnx_type_string,
        op_types,
        opsets,
    )
    from onnx_arrow.core.kinds import (
        MAP,
        OPTIONAL,
        SEQUENCE,
        SPARSE_TENSOR,
        TENSOR,
        Kind,
        message_class,
    )
    from onnx_arrow.core.message_type import MessageType
    from onnx_arrow.core.nodes import (
        MapValue,
        Node,
        OptionalValue,
        SequenceValue,
        SparseValue,
        check_sparse,
    )
    from onnx_arrow.core.protos import ModelProto, TypeProto, onnx_version
    from onnx_arrow.core.python_values import (
        map_keys,
        map_pairs,
        python_value,
        string_bytes,
        value_message,
    )
    from onnx_arrow.core.statistics import (
        STATISTICS,
        Statistic,
        statistics_by_dtype,
        tensor_statistics,
    )
    from onnx_arrow.core.storage_form import storage_type
    from onnx_arrow.core.tensor_arrays import stacked_codes
    from onnx_arrow.core.tensor_types import SparseTensorType, tensor_layout
    from onnx_arrow.core.tensors import MAX_ELEMENTS, NUMPY_MAX_RANK, Tensor
    from onnx_arrow.core.types import arrow_type, kind_of_arrow, kind_of_type
    from onnx_arrow.core.ulp import FLOATING, UlpDistance, ulp_distance
    from onnx_arrow.core.value_digests import value_digest
    from onnx_arrow.core.values import unwrap
    from onnx_arrow.core.walk import child_fields, children, map_type, walk

#: The names above, imported when first looked up, so that an adapter pays only for what it
#: uses (``onnx-arrow export`` and ``info`` of a store import neither onnx nor ml_dtypes):
#: ``{module: names}``; a test checks that this table and the ``TYPE_CHECKING`` block name
#: the same.
_LAZY: Final = {
    "onnx_arrow.core._json": ("load_json",),
    "onnx_arrow.core._open": (
        "NO_FOLLOW",
        "OPEN_FLAGS",
        "as_path",
        "file_kind",
        "read_regular_file",
    ),
    "onnx_arrow.core._wire": ("encode_varint", "read_varint"),
    "onnx_arrow.core.arrays": ("build_array", "infer_arrow_type", "value_rows"),
    "onnx_arrow.core.arrow_input": ("as_array",),
    "onnx_arrow.core.codec": (
        "Strings",
        "check_strings",
        "codes_to_storage",
        "pack",
        "storage_to_codes",
        "unpack",
    ),
    "onnx_arrow.core.containers": ("assemble", "decode_value", "encode_value", "flatten"),
    "onnx_arrow.core.declarations": (
        "Contradiction",
        "Pairing",
        "contradiction",
        "contradiction_message",
        "declared_kind",
        "diagnosis",
        "holds_model",
        "lfs_pointer",
        "pair_files",
        "undeclared_tensor_type",
    ),
    "onnx_arrow.core.direct": ("decode_tensor_fast",),
    "onnx_arrow.core.dtypes": (
        "DECODED_FLOATS",
        "DTYPES",
        "ArrowKind",
        "DType",
        "dtype_of",
        "dtype_of_numpy",
    ),
    "onnx_arrow.core.element_types": ("dtype_of_arrow", "element_type"),
    "onnx_arrow.core.extension_types": ("describe_type",),
    "onnx_arrow.core.graph": (
        "declared_type",
        "declared_type_text",
        "graph_values",
        "onnx_type_string",
        "op_types",
        "opsets",
    ),
    "onnx_arrow.core.kinds": (
        "MAP",
        "OPTIONAL",
        "SEQUENCE",
        "SPARSE_TENSOR",
        "TENSOR",
        "Kind",
        "message_class",
    ),
    "onnx_arrow.core.message_type": ("MessageType",),
    "onnx_arrow.core.nodes": (
        "MapValue",
        "Node",
        "OptionalValue",
        "SequenceValue",
        "SparseValue",
        "check_sparse",
    ),
    "onnx_arrow.core.python_values": (
        "map_keys",
        "map_pairs",
        "python_value",
        "string_bytes",
        "value_message",
    ),
    "onnx_arrow.core.statistics": (
        "STATISTICS",
        "Statistic",
        "statistics_by_dtype",
        "tensor_statistics",
    ),
    "onnx_arrow.core.protos": ("ModelProto", "TypeProto", "onnx_version"),
    "onnx_arrow.core.storage_form": ("storage_type",),
    "onnx_arrow.core.tensor_arrays": ("stacked_codes",),
    "onnx_arrow.core.tensor_types": ("SparseTensorType", "tensor_layout"),
    "onnx_arrow.core.tensors": ("MAX_ELEMENTS", "NUMPY_MAX_RANK", "Tensor"),
    "onnx_arrow.core.types": ("arrow_type", "kind_of_arrow", "kind_of_type"),
    "onnx_arrow.core.ulp": ("FLOATING", "UlpDistance", "ulp_distance"),
    "onnx_arrow.core.value_digests": ("value_digest",),
    "onnx_arrow.core.values": ("unwrap",),
    "onnx_arrow.core.walk": ("child_fields", "children", "map_type", "walk"),
}
__getattr__, __dir__ = exports(__name__, _LAZY)


__all__ = [
    "DECODED_FLOATS",
    "DTYPES",
    "FLOATING",
    "MAP",
    "MAX_ELEMENTS",
    "NO_FOLLOW",
    "NUMPY_MAX_RANK",
    "OPEN_FLAGS",
    "OPTIONAL",
    "SEQUENCE",
    "SPARSE_TENSOR",
    "STATISTICS",
    "TENSOR",
    "ArrowKind",
    "Contradiction",
    "DType",
    "Kind",
    "MapValue",
    "MessageType",
    "ModelProto",
    "Node",
    "OptionalValue",
    "Pairing",
    "SequenceValue",
    "SparseTensorType",
    "SparseValue",
    "Statistic",
    "Strings",
    "Tensor",
    "TypeProto",
    "UlpDistance",
    "arrow_type",
    "as_array",
    "as_path",
    "assemble",
    "build_array",
    "check_sparse",
    "check_strings",
    "child_fields",
    "children",
    "codes_to_storage",
    "contradiction",
    "contradiction_message",
    "declared_kind",
    "declared_type",
    "declared_type_text",
    "decode_tensor_fast",
    "decode_value",
    "describe_type",
    "diagnosis",
    "dtype_of",
    "dtype_of_arrow",
    "dtype_of_numpy",
    "element_type",
    "encode_value",
    "encode_varint",
    "file_kind",
    "flatten",
    "graph_values",
    "holds_model",
    "infer_arrow_type",
    "kind_of_arrow",
    "kind_of_type",
    "lfs_pointer",
    "load_json",
    "map_keys",
    "map_pairs",
    "map_type",
    "message_class",
    "onnx_type_string",
    "onnx_version",
    "op_types",
    "opsets",
    "pack",
    "pair_files",
    "python_value",
    "read_regular_file",
    "read_varint",
    "stacked_codes",
    "statistics_by_dtype",
    "storage_to_codes",
    "storage_type",
    "string_bytes",
    "tensor_layout",
    "tensor_statistics",
    "ulp_distance",
    "undeclared_tensor_type",
    "unpack",
    "unwrap",
    "value_digest",
    "value_message",
    "value_rows",
    "walk",
]
