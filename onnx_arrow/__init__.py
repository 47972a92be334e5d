"""onnx-arrow: ONNX values as Apache Arrow data, exactly, both ways.

>>> import numpy as np
>>> import onnx_arrow
>>> from onnx import numpy_helper
>>> t = numpy_helper.from_array(np.eye(2, dtype=np.float32), "x")
>>> arr = onnx_arrow.to_arrow([t])  # the canonical Arrow column
>>> arr.type.extension_name, onnx_arrow.to_numpy(arr).shape
('arrow.fixed_shape_tensor', (1, 2, 2))
>>> exact = onnx_arrow.to_arrow([t], exact=True)  # names and encoding kept too
>>> onnx_arrow.from_arrow(exact)[0].SerializeToString() == t.SerializeToString()
True
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

# first: a Ctrl-C while the command line imports its dependencies exits quietly (see there)
import onnx_arrow._startup  # noqa: F401
from onnx_arrow._lazy import exports, register_with
from onnx_arrow.errors import (
    ArrowLayoutError,
    DeclarationWarning,
    ExternalDataError,
    InvalidMessageError,
    InvalidTensorError,
    NotRepresentableError,
    OnnxArrowError,
    OnnxArrowWarning,
    UnsupportedTypeError,
)

if TYPE_CHECKING:
    from onnx_arrow.core.dlpack import to_dlpack
    from onnx_arrow.core.dtypes import DTYPES, DType, dtype_of
    from onnx_arrow.core.files import read_pb
    from onnx_arrow.core.message_type import MessageType
    from onnx_arrow.core.storage import from_portable, from_storage, to_portable, to_storage
    from onnx_arrow.core.tensor_types import (
        SparseTensorType,
        VariableRankTensorType,
        VariableShapeTensorType,
    )
    from onnx_arrow.core.types import arrow_type, onnx_type
    from onnx_arrow.core.values import (
        from_arrow,
        from_arrow_scalar,
        to_arrow,
        to_arrow_scalar,
        to_numpy,
        to_pylist,
    )

#: The names above, imported when first looked up: ``{module: names}`` (a test checks
#: that this table and the ``TYPE_CHECKING`` block name the same).
_LAZY: Final = {
    "onnx_arrow.core.dlpack": ("to_dlpack",),
    "onnx_arrow.core.dtypes": ("DTYPES", "DType", "dtype_of"),
    "onnx_arrow.core.files": ("read_pb",),
    "onnx_arrow.core.message_type": ("MessageType",),
    "onnx_arrow.core.storage": ("from_portable", "from_storage", "to_portable", "to_storage"),
    "onnx_arrow.core.tensor_types": (
        "SparseTensorType",
        "VariableRankTensorType",
        "VariableShapeTensorType",
    ),
    "onnx_arrow.core.types": ("arrow_type", "onnx_type"),
    "onnx_arrow.core.values": (
        "from_arrow",
        "from_arrow_scalar",
        "to_arrow",
        "to_arrow_scalar",
        "to_numpy",
        "to_pylist",
    ),
}
__getattr__, __dir__ = exports(__name__, _LAZY)

# The Arrow extension types are registered with pyarrow as soon as pyarrow is imported (now,
# if it is), so that a Parquet file or IPC stream read after ``import onnx_arrow`` comes
# back typed, while a process that never imports pyarrow (``onnx-arrow --version``) never
# pays for it; the conversions import onnx (and ml_dtypes) when first looked up.
register_with("pyarrow", "onnx_arrow.core.extension_types", package=__name__)

__version__ = "0.1.0.dev0"

__all__ = [
    "DTYPES",
    "ArrowLayoutError",
    "DType",
    "DeclarationWarning",
    "ExternalDataError",
    "InvalidMessageError",
    "InvalidTensorError",
    "MessageType",
    "NotRepresentableError",
    "OnnxArrowError",
    "OnnxArrowWarning",
    "SparseTensorType",
    "UnsupportedTypeError",
    "VariableRankTensorType",
    "VariableShapeTensorType",
    "__version__",
    "arrow_type",
    "dtype_of",
    "from_arrow",
    "from_arrow_scalar",
    "from_portable",
    "from_storage",
    "onnx_type",
    "read_pb",
    "to_arrow",
    "to_arrow_scalar",
    "to_dlpack",
    "to_numpy",
    "to_portable",
    "to_pylist",
    "to_storage",
]
