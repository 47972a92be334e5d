"""What the snippets and notebooks import, and which of pyproject.toml's extras provide it."""

from __future__ import annotations

import ast
import functools
import importlib.metadata
import re
import sys
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]


def _name(requirement: str) -> str:
    """The normalized distribution name of a requirement: ``ml-dtypes`` of ``ml_dtypes>=0.5``."""
    return re.split(r"[<>=!~\[;\s]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def _project() -> dict[str, object]:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["project"]  # type: ignore[no-any-return]


def provided(extras: set[str]) -> set[str]:
    """The distributions the base install plus ``extras`` brings in by name (nested extras
    of onnx-arrow itself followed)."""
    project = _project()
    optional: dict[str, list[str]] = project["optional-dependencies"]  # type: ignore[assignment]
    names = {_name(r) for r in project["dependencies"]}  # type: ignore[attr-defined]
    todo = list(extras)
    seen: set[str] = set()
    while todo:
        extra = todo.pop()
        if extra in seen:
            continue
        seen.add(extra)
        for requirement in optional[extra]:
            if _name(requirement) == "onnx-arrow":
                todo += re.findall(r"\w+", requirement.split("[", 1)[1].split("]")[0])
            else:
                names.add(_name(requirement))
    return names


def extras_named() -> set[str]:
    return set(_project()["optional-dependencies"])  # type: ignore[arg-type]


def imported(source: str) -> set[str]:
    """The top-level modules a piece of Python imports (IPython magics left out)."""
    code = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith("%"))
    modules: set[str] = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            modules |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules.add(node.module.split(".")[0])
    return modules - set(sys.stdlib_module_names) - {"onnx_arrow"}


@functools.cache
def _distributions() -> dict[str, list[str]]:
    """The installed distributions providing each top-level module (a scan of every
    distribution's files: a second or so, done once)."""
    return importlib.metadata.packages_distributions()


def missing(source: str, extras: set[str]) -> list[str]:
    """The modules ``source`` imports that neither the base install nor ``extras`` provide."""
    distributions = _distributions()
    have = provided(extras)
    return sorted(
        module
        for module in imported(source)
        if not {_name(d) for d in distributions.get(module, [module])} & have
    )
