"""Every notebook in notebooks/ runs from top to bottom without an error."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


def test_notebooks_found() -> None:
    names = {p.stem for p in NOTEBOOKS}
    assert {"quickstart", "node_suite", "compare_backend"} <= names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs(path: Path, tmp_path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    assert all(not c.get("outputs") for c in notebook.cells if c.cell_type == "code"), (
        f"{path.name} is saved with outputs; clear them"
    )
    here, temp = tmp_path / "here", tmp_path / "temp"
    here.mkdir()
    temp.mkdir()
    client = nbclient.NotebookClient(
        notebook,
        timeout=120,
        kernel_name="python3",
        resources={"metadata": {"path": str(here)}},
    )
    # the kernel's temporary directory is one of its own, to see what it leaves there
    env = {**os.environ, "TMPDIR": str(temp), "TEMP": str(temp), "TMP": str(temp)}
    client.execute(env=env)  # raises CellExecutionError naming the cell that failed
    # run where it sits, a notebook leaves nothing in the clone
    assert not list(here.iterdir()), f"{path.name} wrote {sorted(here.iterdir())}"
    # and removes what it wrote in the temporary directory
    assert not list(temp.iterdir()), f"{path.name} left {sorted(temp.iterdir())}"


#: The extra the README names for the notebooks.
NOTEBOOKS_EXTRA = "notebooks"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_imports_come_with_the_extra_the_readme_names(path: Path) -> None:
    from extras import missing

    readme = (path.parents[1] / "README.md").read_text(encoding="utf-8")
    assert f"'.[{NOTEBOOKS_EXTRA}]'" in readme or f"`{NOTEBOOKS_EXTRA}`" in readme
    notebook = nbformat.read(path, as_version=4)
    source = "\n".join(c.source for c in notebook.cells if c.cell_type == "code")
    assert not missing(source, {NOTEBOOKS_EXTRA}), f"{path.name}: add them to [{NOTEBOOKS_EXTRA}]"


@pytest.mark.slow
def test_notebooks_run_in_a_new_environment_of_that_extra_alone() -> None:
    """The notebooks run where only onnx-arrow and the ``notebooks`` extra are installed
    (a virtual environment built by ``notebooks/run_in_fresh_env.py`` once per dependency
    spec, outside the clone, with this onnx-arrow installed into it again each run)."""
    import subprocess
    import sys

    script = NOTEBOOKS[0].parent / "run_in_fresh_env.py"
    result = subprocess.run(
        [sys.executable, str(script), "--keep-env"],
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    assert result.stdout.count("ran ") == len(NOTEBOOKS)
