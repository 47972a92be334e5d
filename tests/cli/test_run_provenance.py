"""What made a store of actual outputs, run as processes as users run them: ``run``
records its backend or runner and what that runs in the store's provenance; ``info``,
``compare --actual`` and the scoreboard of ``report`` name it, the scoreboard with the
corpus's onnx release and no absolute path of the machine."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import onnx
from cli_helpers import field_lines, run_cli

from onnx_arrow.compare import read_report
from onnx_arrow.corpus import Store

#: A runner that gives each input back as the output.
IDENTITY = (
    "import shutil, sys; shutil.copy(sys.argv[1] + '/input_0.pb', sys.argv[2] + '/output_0.pb')"
)


def test_a_run_store_records_the_runner_that_made_it(store: Path, tmp_path: Path) -> None:
    (tmp_path / "runners").mkdir()
    (tmp_path / "runners" / "identity.py").write_text(IDENTITY)
    runner = f"{sys.executable} runners/identity.py {{inputs}} {{outputs}} {{model}}"
    done = run_cli("run", str(store), "actual.parquet", "--runner", runner, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    made = Store(tmp_path / "actual.parquet").metadata["provenance"]
    assert made["source"] == "run"
    assert made["backend"]["name"] == "runner"
    assert made["backend"]["runs"].endswith("runners/identity.py '{inputs}' '{outputs}' '{model}'")
    assert made["expected"]["store"] == [store.name]
    assert made["onnx"] == Store(store).metadata["onnx_version"]

    info = field_lines(run_cli("info", "actual.parquet", cwd=tmp_path).stdout)
    assert info["provenance"].startswith("run (")
    assert info["backend"].startswith("runner (")
    assert "identity.py" in info["backend"]
    assert info["store"] == f"{store.name}, onnx {onnx.__version__}"
    assert "not recorded" not in info.values()

    compared = run_cli(
        "compare", str(store), "--actual", "actual.parquet", "--out", "report.parquet",
        cwd=tmp_path,
    )  # fmt: skip
    assert compared.returncode == 1  # Abs of [-1, 2] is not [-1, 2]
    assert field_lines(compared.stdout)["backend"].startswith("runner (")
    report = read_report(tmp_path / "report.parquet")
    assert report.provenance is not None
    assert report.provenance["backend"] == made["backend"]

    board = run_cli("report", "report.parquet", cwd=tmp_path)
    assert board.returncode == 0, board.stderr
    assert board.stdout.splitlines()[2] == "| | runner |"  # one report: its backend's name
    assert "report 1" not in board.stdout
    rows = {
        line.split(" | ")[0][2:]: line.split(" | ")[1].removesuffix(" |")
        for line in board.stdout.splitlines()
        if line.startswith("| ")
    }
    program = Path(sys.executable).name
    assert rows["runs"] == f"{program} runners/identity.py '{{inputs}}' '{{outputs}}' '{{model}}'"
    assert rows["corpus"] == f"onnx {onnx.__version__} (folder)"
    as_json = run_cli("report", "report.parquet", "--format", "json", cwd=tmp_path).stdout
    for text in (board.stdout, as_json):
        assert str(tmp_path) not in text
        assert str(Path(sys.executable).parent) not in text
    assert json.loads(as_json)["backends"][0]["corpus"] == rows["corpus"]


def test_a_run_store_records_the_backend_and_its_version(store: Path, tmp_path: Path) -> None:
    done = run_cli("run", str(store), str(tmp_path / "actual.parquet"))
    assert done.returncode == 0, done.stderr
    info = field_lines(run_cli("info", str(tmp_path / "actual.parquet")).stdout)
    assert info["backend"] == f"reference (onnx {onnx.__version__} ReferenceEvaluator)"
    compared = run_cli("compare", str(store), "--actual", str(tmp_path / "actual.parquet"))
    assert compared.returncode == 0, compared.stdout
    backend = field_lines(compared.stdout)["backend"]
    assert backend == f"reference (onnx {onnx.__version__} ReferenceEvaluator)"
