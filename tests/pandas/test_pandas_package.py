"""The package: `import onnx_arrow` never imports pandas; every public function refuses junk."""

from __future__ import annotations

import subprocess
import sys


def test_import_onnx_arrow_does_not_import_pandas() -> None:
    code = (
        "import sys, onnx_arrow, onnx_arrow.corpus; "
        "assert 'pandas' not in sys.modules, 'pandas imported'; "
        "import onnx_arrow.pandas, pandas; "
        "assert hasattr(pandas.Series([], dtype=object), 'onnx')"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=120
    )
    assert result.returncode == 0, result.stderr
