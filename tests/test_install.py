"""The README's test install on a fresh machine: the test extra, resolved from the package
index alone, brings no CUDA build (no ``nvidia-*`` package)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from release_helpers import network

ROOT = Path(__file__).resolve().parents[1]
#: pip's settings that change where packages come from (this machine's own wheels)
SOURCES = ("PIP_FIND_LINKS", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_NO_INDEX")


@pytest.mark.slow
@network
def test_the_test_extra_brings_no_nvidia_package(tmp_path: Path) -> None:
    """``pip install --dry-run --report`` of ``.[test]`` with pip's configuration files
    left out (``PIP_CONFIG_FILE=os.devnull``): what a new Linux x86_64 machine installs."""
    env = {k: v for k, v in os.environ.items() if k not in SOURCES and k != "PIP_CONSTRAINT"}
    env["PIP_CONFIG_FILE"] = os.devnull
    report = tmp_path / "report.json"
    pip = [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet"]
    done = subprocess.run(
        [*pip, "--report", str(report), f"{ROOT}[test]"],
        capture_output=True,
        text=True,
        env=env,
        timeout=1800,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    names = {item["metadata"]["name"].lower() for item in json.loads(report.read_text())["install"]}
    assert {"onnx-arrow", "pytest", "onnxruntime"} <= names
    assert not {n for n in names if n.startswith("nvidia")}
    assert "torch" not in names
