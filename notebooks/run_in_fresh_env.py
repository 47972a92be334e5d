"""Run every notebook here in a new virtual environment that has only onnx-arrow and the
``notebooks`` extra the README names for them, and check that none leaves a file behind.

    python notebooks/run_in_fresh_env.py

The test suite runs it (``tests/test_notebooks.py``), beside checking that the notebooks
import nothing the extra does not bring and running them in the test environment.  It
builds the environment a user would: about 2 minutes 20 seconds to install and 45 seconds
to run the three notebooks, measured here with an empty pip cache.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXTRA = "notebooks"

RUN = """
import sys
from pathlib import Path

import nbclient
import nbformat

folder = Path(sys.argv[1])
for path in sorted(folder.glob("*.ipynb")):
    notebook = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(notebook, timeout=600, kernel_name="python3").execute()
    print(f"ran {path.name}")
left = sorted(p.name for p in folder.iterdir() if p.suffix != ".ipynb")
if left:
    sys.exit(f"the notebooks left files behind: {left}")
"""


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="onnx-arrow-notebooks-") as tmp:
        env, work = Path(tmp) / "env", Path(tmp) / "notebooks"
        work.mkdir()
        for path in (ROOT / "notebooks").glob("*.ipynb"):
            (work / path.name).write_bytes(path.read_bytes())
        start = time.monotonic()
        subprocess.run([sys.executable, "-m", "venv", str(env)], check=True)
        python = str(env / "bin" / "python")
        subprocess.run([python, "-m", "pip", "install", "--quiet", f"{ROOT}[{EXTRA}]"], check=True)
        installed = time.monotonic()
        # the kernel is this environment's own Python: nothing from outside it is importable
        result = subprocess.run([python, "-c", RUN, str(work)], cwd=work, check=False)
        done = time.monotonic()
        print(f"install {installed - start:.0f} s, notebooks {done - installed:.0f} s")
        return result.returncode


if __name__ == "__main__":
    sys.exit(main())
