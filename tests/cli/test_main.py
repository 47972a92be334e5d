"""The ``onnx-arrow`` entry point (:mod:`onnx_arrow.cli`): usage errors, --help and
--version, what starting imports, and Ctrl-C."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from fresh_python import fresh_python

import onnx_arrow
import onnx_arrow.cli.work.generate
import onnx_arrow.cli.work.progress
from onnx_arrow.cli import main
from onnx_arrow.corpus import FolderSource


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["bogus"],
        ["info"],
        ["example", "extra"],
        ["info", "x.pb", "--model", "m.onnx"],
        ["info", "x.pb", "--input", "0"],
        ["info", "x.pb", "--model", "m.onnx", "--input", "0", "--output", "0"],
    ],
    ids=repr,
)
def test_bad_usage_exits_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "usage: onnx-arrow" in err
    assert "Traceback" not in err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"onnx-arrow {onnx_arrow.__version__}"


def test_help_in_process(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "examples:" in out
    assert "onnx-arrow info" in out


def test_python_dash_m_help() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "onnx_arrow", "--help"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: onnx-arrow")


def test_interrupted_import_exits_130_and_leaves_no_store(
    corpus: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    def interrupt(self: object, name: str) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(onnx_arrow.cli.work.progress.Progress, "step", interrupt)
    assert main(["import", str(corpus), str(tmp_path / "corpus.parquet")]) == 130
    assert capsys.readouterr().err == "onnx-arrow: interrupted\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src"]
    monkeypatch.setattr(
        onnx_arrow.cli.work.generate, "NodeSuiteSource", lambda: FolderSource(corpus)
    )
    assert main(["generate", str(tmp_path / "suite")]) == 130
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src"]


@pytest.mark.parametrize("command", ["import", "export", "verify", "generate", "info", "example"])
def test_every_command_has_help_with_examples(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([command, "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: onnx-arrow {command}")
    assert re.search(r"^examples?:$", out, re.MULTILINE)
    assert f"onnx-arrow {command}" in out.split("example", 1)[1]


@pytest.mark.parametrize(
    "argv",
    [
        ["import"],
        ["import", "a", "b", "c"],
        ["import", "--compression-level", "x", "out.parquet"],
        ["export", "store.parquet"],
        ["verify", "a", "b"],
        ["generate"],
    ],
    ids=repr,
)
def test_bad_corpus_usage_exits_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "usage: onnx-arrow" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    "args", [["--help"], ["import", "--help"], ["import", "--bogus"], ["export"]]
)
def test_help_and_usage_errors_import_nothing_they_do_not_need(args: list[str]) -> None:
    """Starting takes what ``import onnx_arrow`` takes: not onnx (nor ml_dtypes through it),
    the commands, an adapter, an engine, an evaluator or the worker processes' modules."""
    heavy = ["onnx", "ml_dtypes", "onnx_arrow.cli.work", "pandas", "multiprocessing"]
    heavy += ["polars", "duckdb"]
    heavy += ["onnx.reference", "IPython", "dask", "ray", "pyspark"]
    code = (
        "import contextlib, io, sys\n"
        "from onnx_arrow.cli import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):\n"
        "    try:\n"
        f"        main({args!r})\n"
        "    except SystemExit:\n"
        "        pass\n"
        f"print(sorted(m for m in {heavy!r} if m in sys.modules))\n"
    )
    result = fresh_python(code)
    assert result.stdout.strip() == "[]"


def _narrow_store(tmp_path: Path) -> tuple[Path, Path]:
    """A corpus whose inputs are bfloat16 and float8 tensors, and its store."""
    import ml_dtypes
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper

    src = tmp_path / "narrow"
    case = src / "node" / "test_narrow"
    (case / "test_data_set_0").mkdir(parents=True)
    arrays = {
        "input_0": np.array([1.5, -2.0, np.inf], dtype=ml_dtypes.bfloat16),
        "input_1": np.array([0.5, -448.0, 3.0], dtype=ml_dtypes.float8_e4m3fn),
        "output_0": np.array([1.0, 2.0, 3.0], dtype=np.float32),
    }
    protos = {name: numpy_helper.from_array(a, name[0] + name[-1]) for name, a in arrays.items()}
    infos = {
        name: helper.make_tensor_value_info(p.name, p.data_type, [3]) for name, p in protos.items()
    }
    graph = helper.make_graph([], "g", [infos["input_0"], infos["input_1"]], [infos["output_0"]])
    onnx.save_model(helper.make_model(graph), case / "model.onnx")
    for name, proto in protos.items():
        (case / "test_data_set_0" / f"{name}.pb").write_bytes(proto.SerializeToString())
    store = tmp_path / "narrow.parquet"
    assert main(["import", str(src), str(store)]) == 0
    return src, store


def test_info_export_and_diff_of_stores_import_neither_onnx_nor_ml_dtypes(
    store: Path, tmp_path: Path
) -> None:
    """The commands that read stores start as fast as Python and pyarrow: in a fresh
    process, ``info`` of a store, ``export`` and ``diff`` of two stores import neither
    onnx nor ml_dtypes (about a second); nor does the export of a store of bfloat16 and
    float8 values, whose elements ml_dtypes holds (a file is rebuilt from their bits),
    which gives every file back byte for byte.  An export and ``info`` import no pandas
    either (which pyarrow imports on its first conversion of a Python value or to numpy,
    and with its dataset modules)."""
    other = tmp_path / "other.parquet"
    other.write_bytes(store.read_bytes())
    again = tmp_path / "again"
    src, narrow = _narrow_store(tmp_path)
    runs = [
        ["export", str(store), str(tmp_path / "out")],
        ["export", str(narrow), str(tmp_path / "narrow-out")],
        ["info", str(store)],
        ["diff", str(store), str(other)],
    ]
    code = (
        "import contextlib, io, sys\n"
        "from onnx_arrow.cli import main\n"
        "out = io.StringIO()\n"
        f"for argv in {runs!r}:\n"
        "    with contextlib.redirect_stdout(out):\n"
        "        assert main(argv) == 0, (argv, out.getvalue())\n"
        "    heavy = ['onnx', 'ml_dtypes'] + ['pandas'] * (argv[0] in ('export', 'info'))\n"
        "    print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    result = fresh_python(code)
    assert result.stdout.splitlines() == ["[]"] * 4
    # as a user runs it
    ran = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "onnx_arrow", "export", str(store), str(again)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stderr
    imported = {line.rpartition("|")[2].strip() for line in ran.stderr.splitlines()}
    assert {"pyarrow", "pyarrow.lib"} <= imported
    # nor, in one process, multiprocessing (the worker pool's)
    heavy = ("onnx", "ml_dtypes", "pandas", "multiprocessing")
    assert not {m for m in imported if m.partition(".")[0] in heavy}
    # nor the conversions to Arrow types and the message classes, which it never uses
    unused = {"onnx_arrow.core.arrays", "onnx_arrow.core.types", "onnx_arrow.core.protos"}
    assert not unused & imported
    assert (tmp_path / "out" / "node" / "test_tiny" / "README").read_text() == "not a value\n"
    files = sorted(p.relative_to(src) for p in src.rglob("*.*"))
    back = tmp_path / "narrow-out"
    assert files == sorted(p.relative_to(back) for p in back.rglob("*.*"))
    for rel in files:
        assert (back / rel).read_bytes() == (src / rel).read_bytes(), rel
