"""Every notebook in notebooks/ runs from top to bottom without an error."""

from __future__ import annotations

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
    client = nbclient.NotebookClient(
        notebook,
        timeout=120,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    )
    client.execute()  # raises CellExecutionError naming the cell that failed
