"""The index pip is configured with (:mod:`onnx_arrow.corpus.pip_index`), read from its
files and environment: each answer checked against pip's own ``pip config list``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from onnx_arrow.corpus.pip_index import PYPI, pip_index_url

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the files' places of Linux"
)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder and XDG folders of the test's own, no pip setting in the environment."""
    for name in ("PIP_INDEX_URL", "PIP_CONFIG_FILE", "ONNX_ARROW_INDEX_URL", "VIRTUAL_ENV"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))
    monkeypatch.setenv("XDG_CONFIG_DIRS", f"{tmp_path / 'xdg1'}{os.pathsep}{tmp_path / 'xdg2'}")
    return tmp_path


def _pips_answer() -> str:
    """The index-url ``pip install`` takes, from ``pip config list``: the environment's,
    else the ``install`` section's, else the ``global`` one's."""
    done = subprocess.run(
        [sys.executable, "-m", "pip", "config", "list"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    found = dict(re.findall(r"^([^=\n]+)\.index-url='(.*)'$", done.stdout, re.MULTILINE))
    return next((found[s] for s in (":env:", "install", "global") if s in found), PYPI)


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


USER = "home/.config/pip/pip.conf"
LEGACY = "home/.pip/pip.conf"


@pytest.mark.parametrize(
    ("files", "environment", "expected"),
    [
        ({"xdg1/pip/pip.conf": "[global]\nindex-url = http://a/simple/"}, {}, "http://a/simple"),
        (
            {
                "xdg1/pip/pip.conf": "[global]\nindex-url = http://a/",
                "xdg2/pip/pip.conf": "[global]\nindex-url = http://b/",
                USER: "[global]\nindex-url = http://user/",
            },
            {},
            "http://user",
        ),
        (
            {LEGACY: "[global]\nindex-url = http://legacy/", USER: "[global]\ntimeout = 5"},
            {},
            "http://legacy",
        ),
        (
            {
                LEGACY: "[global]\nindex-url = http://legacy/",
                USER: "[global]\nindex_url = http://u",
            },
            {},
            "http://u",
        ),
        (
            {
                "xdg1/pip/pip.conf": "[install]\nindex-url = http://install/",
                USER: "[global]\nindex-url = http://user/",
            },
            {},
            "http://install",
        ),
        (
            {USER: "[global]\nindex-url = http://user/", "given.conf": "[global]\ntimeout = 9"},
            {"PIP_CONFIG_FILE": "given.conf"},
            PYPI,
        ),
        (
            {
                "xdg1/pip/pip.conf": "[global]\nindex-url = http://a/",
                "given.conf": "[global]\nindex-url = http://company/simple",
            },
            {"PIP_CONFIG_FILE": "given.conf"},
            "http://company/simple",
        ),
        ({USER: "[global]\nindex-url = http://user/"}, {"PIP_CONFIG_FILE": os.devnull}, PYPI),
        (
            {"given.conf": "[install]\nindex-url = http://company/"},
            {"PIP_CONFIG_FILE": "given.conf", "PIP_INDEX_URL": "http://env/simple"},
            "http://env/simple",
        ),
    ],
    ids=[
        "global",
        "user over global",
        "legacy user",
        "user over legacy",
        "install section",
        "a given file hides the user's",
        "a given file last",
        "devnull",
        "environment",
    ],
)
def test_the_index_is_the_one_pip_takes(
    home: Path,
    monkeypatch: pytest.MonkeyPatch,
    files: dict[str, str],
    environment: dict[str, str],
    expected: str,
) -> None:
    for name, text in files.items():
        _write(home / name, text + "\n")
    for name, value in environment.items():
        monkeypatch.setenv(
            name, value if value == os.devnull or "://" in value else str(home / value)
        )
    if (Path(sys.prefix) / "pip.conf").is_file() or "index-url" in _etc_pip_conf():
        pytest.skip("this machine's own pip.conf (/etc, the environment's) names an index")
    assert pip_index_url() == expected
    assert pip_index_url() == _pips_answer().rstrip("/")


def _etc_pip_conf() -> str:
    try:
        return Path("/etc/pip.conf").read_text()
    except OSError:
        return ""
