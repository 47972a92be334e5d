"""Ctrl-C at every phase of import and export: exit 130 promptly, one line, nothing left.

See :mod:`hostile.interrupt` for the points and how each is reached; ``python -m
hostile.interrupt`` prints the time from the signal to the exit at each.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hostile.interrupt import inputs, points

#: Far above the measured times (well under a second, see the module): a hang bound,
#: not a speed goal.
PROMPTLY = 30.0

POINTS = list(points(Path("."), Path("."), Path(".")))


@pytest.fixture(scope="module")
def tried(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    work = tmp_path_factory.mktemp("interrupt")
    store, corpus = inputs(work)
    return dict(points(work, store, corpus))


@pytest.mark.parametrize("point", POINTS)
def test_ctrl_c_exits_130_at_once_with_one_line_and_leaves_nothing(tried, point: str) -> None:
    result = tried[point]()
    assert result.seconds is not None, f"still running {PROMPTLY} s after SIGINT: {result.stderr}"
    assert result.seconds < PROMPTLY
    assert result.returncode == 130, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    assert result.stderr.strip().splitlines()[-1] == "onnx-arrow: interrupted", result.stderr
    assert result.leftovers == []
