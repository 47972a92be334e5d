"""Run every notebook here in a new virtual environment that has only onnx-arrow and the
``notebooks`` extra the README names for them, and check that none leaves a file behind.

    python notebooks/run_in_fresh_env.py              # a new environment, removed after
    python notebooks/run_in_fresh_env.py --keep-env   # one built once, reused after

The slow tests run it (``python -m pytest -m slow``, in ``tests/test_notebooks.py``); the
default tests check that the notebooks import nothing the extra does not bring and run
them in the test environment.  Without ``--keep-env`` it builds the environment a user
would: about 2 minutes 20 seconds to install and 45 seconds to run the three notebooks,
measured here with an empty pip cache.  With ``--keep-env`` the environment is kept
outside the clone, in ``$XDG_CACHE_HOME/onnx-arrow-notebook-env/`` (``~/.cache`` when
unset), under a name made from the Python version and the project's dependency spec: it
is built once per spec, and each run after installs only onnx-arrow itself into it again
(without dependencies) before running the notebooks.  Deleting that folder is always safe.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the key digests the whole pyproject.toml
    tomllib = None  # type: ignore[assignment]

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


def spec_key() -> str:
    """A digest of what the environment is built from: this Python, and the project's
    dependencies and optional dependencies as pyproject.toml states them."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    spec: dict[str, object] = {"python": sys.version, "executable": sys.executable, "extra": EXTRA}
    if tomllib is None:
        spec["pyproject"] = text
    else:
        project = tomllib.loads(text)["project"]
        spec["dependencies"] = project.get("dependencies", [])
        spec["optional-dependencies"] = project.get("optional-dependencies", {})
    return hashlib.blake2b(json.dumps(spec, sort_keys=True).encode(), digest_size=8).hexdigest()


def kept_env_folder() -> Path:
    """Where ``--keep-env`` keeps its environments (never inside the clone)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(base, "onnx-arrow-notebook-env")


def build(env: Path) -> str:
    """Make a virtual environment at ``env`` with onnx-arrow and the extra; its Python."""
    subprocess.run([sys.executable, "-m", "venv", str(env)], check=True)
    python = str(env / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "--quiet", f"{ROOT}[{EXTRA}]"], check=True)
    return python


def kept_env() -> str:
    """The kept environment of this spec, built now if there is none; its Python.  It is
    built beside its final place and renamed there, so a run stopped halfway, or two runs
    at once, never leave a half-built one to be reused."""
    folder = kept_env_folder()
    env = folder / f"env-{spec_key()}"
    python = env / "bin" / "python"
    if not python.exists():
        folder.mkdir(parents=True, exist_ok=True)
        building = Path(tempfile.mkdtemp(prefix="building-", dir=folder))
        try:
            build(building / "env")
            # its Python and site-packages work from anywhere; only the pip scripts and
            # activate name the folder it was built in, and neither is used here
            os.rename(building / "env", env)
        except OSError:
            if not python.exists():  # else another run renamed its own there first
                raise
        finally:
            shutil.rmtree(building, ignore_errors=True)
    subprocess.run(
        [
            str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--force-reinstall",
            str(ROOT),
        ],
        check=True,
    )  # fmt: skip
    return str(python)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--keep-env",
        action="store_true",
        help="build the environment once per dependency spec, outside the clone, and reuse it",
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="onnx-arrow-notebooks-") as tmp:
        env, work = Path(tmp) / "env", Path(tmp) / "notebooks"
        work.mkdir()
        for path in (ROOT / "notebooks").glob("*.ipynb"):
            (work / path.name).write_bytes(path.read_bytes())
        start = time.monotonic()
        python = kept_env() if args.keep_env else build(env)
        installed = time.monotonic()
        # the kernel is this environment's own Python: nothing from outside it is importable
        result = subprocess.run([python, "-c", RUN, str(work)], cwd=work, check=False)
        done = time.monotonic()
        print(f"install {installed - start:.0f} s, notebooks {done - installed:.0f} s")
        return result.returncode


if __name__ == "__main__":
    sys.exit(main())
