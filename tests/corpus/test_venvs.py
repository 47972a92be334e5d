"""Virtual environments of the cache (:mod:`onnx_arrow.corpus.venvs`): recorded by digest
when made, checked before their Python runs.  One small environment (no pip, no package)
is made per session and copied for each test that changes it; the generator
environments of ``@onnx==V`` are checked the same way."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
from release_helpers import make_wheel

from onnx_arrow.corpus.releases import release_source
from onnx_arrow.corpus.venvs import RECORD, cached_environment, verify_environment
from onnx_arrow.errors import VirtualEnvironmentError


@pytest.fixture(scope="session")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("venvs") / "env"
    cached_environment(folder, [], offline=False, what="the tests")
    return folder


@pytest.fixture
def env(made: Path, tmp_path: Path) -> Path:
    """A copy of the session's environment (its links as links), for a test to change."""
    return Path(shutil.copytree(made, tmp_path / "env", symlinks=True))


def _site(env: Path) -> Path:
    return next(env.glob("lib/python*/site-packages"))


def _forger(path: Path, marker: Path) -> None:
    """Put a program that leaves ``marker`` behind in place of ``path`` (a link)."""
    path.unlink()
    path.write_text(f"#!/bin/sh\ntouch {marker}\n", encoding="utf-8")
    path.chmod(0o755)


def test_an_environment_is_recorded_when_made_and_checked_after(made: Path) -> None:
    record = json.loads((made / RECORD).read_text(encoding="utf-8"))
    assert record["requirements"] == []
    assert record["interpreter"]["link"] == os.readlink(made / "bin" / "python")
    assert "bin/python" in record["entries"]
    assert any(name.endswith("site-packages") for name in record["entries"])
    env = verify_environment(made)
    assert env.python == made / "bin" / "python"
    assert env.packages == {}
    # the cached one is taken as it is: nothing is made again
    assert cached_environment(made, ["never-installed==1"], offline=True, what="x") == env


def test_a_replaced_python_is_refused_before_it_runs(env: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    _forger(env / "bin" / "python", marker)
    with pytest.raises(VirtualEnvironmentError) as info:
        cached_environment(env, [], offline=False, what="the tests")
    assert info.value.where == str(env / "bin" / "python")
    assert "replaced since, and is not run" in info.value.message
    assert f"rm -r {env}" in info.value.message
    assert not marker.exists()


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda env: (_site(env) / "evil.pth").write_text("import os\n"), "added lib/python"),
        (lambda env: (env / "pyvenv.cfg").write_text("home = /elsewhere\n"), "changed pyvenv.cfg"),
        (lambda env: (env / "bin" / "activate").unlink(), "removed bin/activate"),
        (
            lambda env: (
                (env / "bin" / "python3").unlink() or os.symlink("/bin/sh", env / "bin" / "python3")
            ),
            "changed bin/python3",
        ),
    ],
    ids=["pth-added", "cfg-changed", "file-removed", "link-retargeted"],
)
def test_changed_files_are_refused_and_named(env: Path, change, said: str) -> None:
    change(env)
    with pytest.raises(VirtualEnvironmentError) as info:
        verify_environment(env)
    assert info.value.where == str(env)
    assert said in info.value.message
    assert "changed since, and is not run" in info.value.message


def test_a_fifo_in_an_environment_is_an_error_not_a_wait(env: Path) -> None:
    os.mkfifo(_site(env) / "blocks")
    with pytest.raises(VirtualEnvironmentError, match="neither a file, a folder nor a link"):
        verify_environment(env)


@pytest.mark.parametrize(
    ("record", "said"),
    [
        (None, "holds no record"),
        (b"{not json", "not one onnx-arrow"),
        (b"[]", "not one onnx-arrow"),
    ],
)
def test_an_environment_without_a_good_record_is_refused(
    env: Path, record: bytes | None, said: str
) -> None:
    if record is None:
        (env / RECORD).unlink()
    else:
        (env / RECORD).write_bytes(record)
    with pytest.raises(VirtualEnvironmentError, match=said) as info:
        cached_environment(env, [], offline=False, what="the tests")
    assert info.value.where == str(env)


def test_offline_an_environment_not_cached_is_an_error_naming_it(tmp_path: Path) -> None:
    folder = tmp_path / "cache" / "missing"
    with pytest.raises(VirtualEnvironmentError, match="--offline forbids making it") as info:
        cached_environment(folder, ["onnxruntime==1.20.1"], offline=True, what="the backend x")
    assert info.value.where == str(folder)
    assert not folder.parent.exists()


def _cases_of(release: str) -> None:
    with release_source(release) as (source, prov):
        names = [case.name for case in source]
    pytest.fail(f"read {names} with provenance {prov}")


def test_a_generator_environment_whose_python_was_replaced_generates_nothing(
    made: Path, release_cache: Path, tmp_path: Path
) -> None:
    """The cached environment of onnx 1.23.0's node suite, its python replaced by a program
    that writes a forged suite: refused before it runs, so no forged case is read with
    onnx 1.23.0's provenance."""
    name = f"onnx-1.23.0-numpy-{np.__version__}-py{sys.version_info[0]}.{sys.version_info[1]}"
    env = Path(shutil.copytree(made, release_cache / "releases" / "envs" / name, symlinks=True))
    (env / "onnx-arrow-ready.json").write_text('{"onnx": "1.23.0"}\n')  # the marker of before
    forged = tmp_path / "forged.sh"
    forged.write_text(
        "#!/bin/sh\n"  # python node_writer.py DEST: a forged node suite and its manifest
        'mkdir -p "$2/node/test_forged/test_data_set_0"\n'
        'cp "$0" "$2/node/test_forged/model.onnx"\n'
        'echo \'{"onnx": "1.23.0", "numpy": "x", "python": "3.11", "tolerances": {}}\' '
        '> "$2/generated.json"\n'
        f"touch {tmp_path / 'ran'}\n",
        encoding="utf-8",
    )
    (env / "bin" / "python").unlink()
    shutil.copy(forged, env / "bin" / "python")
    (env / "bin" / "python").chmod(0o755)
    wheel = make_wheel(tmp_path, "1.23.0", node=False)
    with pytest.raises(VirtualEnvironmentError, match="replaced since") as info:
        _cases_of(f"@onnx={wheel}")
    assert info.value.where == str(env / "bin" / "python")
    assert not (tmp_path / "ran").exists()
