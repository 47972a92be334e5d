"""docs/runtime-teams.md: its GitHub Actions recipe is valid YAML that keeps the results
store between runs, and every onnx-arrow command it (and the page) runs is valid usage of
the real parser."""

from __future__ import annotations

import functools
import re
import shlex
from pathlib import Path
from typing import Any

import pytest

from onnx_arrow.cli import COMMANDS, _parser

PAGE = Path(__file__).resolve().parents[1] / "docs" / "runtime-teams.md"

#: Commands the recipe runs that this onnx-arrow does not have yet (the static site is
#: documented on its own page): checked against the parser as soon as it has them.
COMING = frozenset({"site"})


def _blocks(language: str) -> list[str]:
    """The page's fenced blocks of ``language``, list items' (indented) ones too."""
    text = PAGE.read_text(encoding="utf-8")
    found = re.findall(rf"^( *)```{language}\n(.*?)^\1```$", text, re.MULTILINE | re.DOTALL)
    return [re.sub(rf"^{indent}", "", body, flags=re.MULTILINE) for indent, body in found]


def _commands(script: str) -> list[list[str]]:
    """The onnx-arrow command lines of a shell script, continuation lines joined and
    command substitutions (``$(...)``) given a value, as the shell would."""
    joined = script.replace("\\\n", " ")
    lines = [line.strip() for line in joined.splitlines()]
    return [
        shlex.split(re.sub(r"\$\([^)]*\)", "1.0", line), comments=True)
        for line in lines
        if line.startswith("onnx-arrow ")
    ]


@functools.cache
def _parsed() -> Any:
    """The real parser, built once."""
    return _parser()


def _check_usage(argv: list[str]) -> bool:
    """Whether ``argv`` was checked (False: a command still to come)."""
    if argv[1] not in COMMANDS:
        assert argv[1] in COMING, f"onnx-arrow has no command {argv[1]!r}: {argv}"
        return False
    _parsed().parse_args(argv[1:])  # UsageError (after its message) on bad usage
    return True


@pytest.fixture(scope="module")
def workflow() -> dict[Any, Any]:
    yaml = pytest.importorskip("yaml")
    (block,) = _blocks("yaml")
    loaded = yaml.safe_load(block)
    assert isinstance(loaded, dict)
    return loaded


def _steps(workflow: dict[Any, Any]) -> list[dict[str, Any]]:
    return [step for job in workflow["jobs"].values() for step in job.get("steps", [])]


def test_the_recipe_runs_nightly_and_keeps_the_store_as_an_artifact(
    workflow: dict[Any, Any],
) -> None:
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare on as true
    assert triggers["schedule"][0]["cron"].split()[2:] == ["*", "*", "*"]  # every day
    steps = _steps(workflow)
    uses = {step["uses"].split("@")[0]: step for step in steps if "uses" in step}
    upload = uses["actions/upload-artifact"]["with"]
    run = "\n".join(step.get("run", "") for step in steps)
    # the store the last run uploaded is taken back under the name it is uploaded with,
    # where the matrix appends to it, and what is uploaded is that folder
    download = re.search(r"gh run download \S+ --name ([^\s;]+) --dir ([^\s;]+)", run)
    assert download is not None
    assert (download[1], download[2].rstrip("/")) == (upload["name"], upload["path"].rstrip("/"))
    (matrix,) = [argv for argv in _commands(run) if argv[1] == "matrix"]
    assert matrix[2].rstrip("/") == upload["path"].rstrip("/")
    # kept and published even when a pair failed the matrix step
    assert uses["actions/upload-artifact"]["if"] == "always()"
    (site,) = [argv for argv in _commands(run) if argv[1] == "site"]
    assert site[2] == matrix[2]
    assert uses["actions/upload-pages-artifact"]["with"]["path"] == site[3]
    assert "actions/deploy-pages" in uses


def test_every_command_of_the_page_is_valid_usage(workflow: dict[Any, Any]) -> None:
    scripts = [step.get("run", "") for step in _steps(workflow)] + _blocks("sh")
    commands = [argv for script in scripts for argv in _commands(script)]
    checked = [argv[1] for argv in commands if _check_usage(argv)]
    assert {"matrix", "results", "compare"} <= set(checked)


def test_a_bad_option_would_be_caught() -> None:
    from onnx_arrow.cli._shared import UsageError

    with pytest.raises(UsageError):
        _check_usage(["onnx-arrow", "matrix", "results/", "--corpus", "@onnx", "--no-such"])
    with pytest.raises(AssertionError, match="no command 'sitemap'"):
        _check_usage(["onnx-arrow", "sitemap", "results/"])
