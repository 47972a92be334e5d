"""The package index pip is configured with, read as pip reads it: its environment and its
configuration files, without running pip (an environment made by another installer may
have none) and without importing it.

The index is ``$PIP_INDEX_URL``, else ``index-url`` of the ``[install]`` section, else of
the ``[global]`` section, of pip's configuration files (pip's documented locations, read in
pip's order, a later file's value over an earlier one's):

* the global files: ``pip/pip.conf`` under each folder of ``$XDG_CONFIG_DIRS`` (default
  ``/etc/xdg``), then ``/etc/pip.conf``;
* the user's: ``~/.pip/pip.conf``, then ``pip/pip.conf`` under ``$XDG_CONFIG_HOME`` (default
  ``~/.config``), unless ``$PIP_CONFIG_FILE`` names a file that exists;
* the environment's: ``pip.conf`` in ``sys.prefix`` (a virtual environment's own);
* ``$PIP_CONFIG_FILE``; set to ``os.devnull``, no file is read at all.

Windows and macOS keep the global and user files elsewhere (``%APPDATA%\\pip\\pip.ini``,
``~/Library/Application Support/pip``); those are read there too.
"""

from __future__ import annotations

import configparser
import os
import sys
from pathlib import Path
from typing import Final

__all__ = ["PYPI", "pip_config_files", "pip_index_url"]

#: The index pip asks when nothing names another
PYPI: Final = "https://pypi.org/simple"
#: The sections whose ``index-url`` ``pip install`` takes, the weaker first
_SECTIONS: Final = ("global", "install")


def pip_config_files() -> list[Path]:
    """The configuration files pip reads, in its order (a later one's values win), those
    that exist."""
    given = os.environ.get("PIP_CONFIG_FILE")
    if given == os.devnull:
        return []
    name = "pip.ini" if sys.platform == "win32" else "pip.conf"
    home = Path.home()
    if sys.platform == "win32":
        program_data = os.environ.get("PROGRAMDATA", r"C:\ProgramData")
        global_files = [Path(program_data) / "pip" / name]
        appdata = os.environ.get("APPDATA", str(home / "AppData" / "Roaming"))
        user_files = [home / "pip" / name, Path(appdata) / "pip" / name]
    elif sys.platform == "darwin":
        global_files = [Path("/Library/Application Support/pip") / name]
        support = home / "Library" / "Application Support" / "pip"
        user = support if support.is_dir() else home / ".config" / "pip"
        user_files = [home / ".pip" / name, user / name]
    else:
        dirs = os.environ.get("XDG_CONFIG_DIRS") or "/etc/xdg"
        global_files = [Path(d) / "pip" / name for d in dirs.split(os.pathsep) if d]
        global_files.append(Path("/etc") / name)
        config_home = os.environ.get("XDG_CONFIG_HOME") or str(home / ".config")
        user_files = [home / ".pip" / name, Path(config_home) / "pip" / name]
    files = list(global_files)
    if not (given and Path(given).exists()):
        files += user_files
    files.append(Path(sys.prefix) / name)
    if given:
        files.append(Path(given))
    return [f for f in files if f.is_file()]


def pip_index_url() -> str:
    """The index ``pip install`` asks (see the module docs), without a trailing ``/``.

    A configuration file that cannot be read or parsed is passed over, as pip itself
    refuses to run with it and says why; the index is then that of the others."""
    given = os.environ.get("PIP_INDEX_URL", "").strip()
    if given:
        return given.rstrip("/")
    found: dict[str, str] = {}
    for path in pip_config_files():
        parser = configparser.RawConfigParser()
        try:
            parser.read(path, encoding="utf-8")
        except (OSError, UnicodeDecodeError, configparser.Error):
            continue
        for section in _SECTIONS:
            if not parser.has_section(section):
                continue
            for key, value in parser.items(section):
                # pip's names: --index-url, index-url and index_url are one
                if key.lstrip("-").replace("_", "-") == "index-url" and value.strip():
                    found[section] = value.strip()
    for section in reversed(_SECTIONS):
        if section in found:
            return found[section].rstrip("/")
    return PYPI
