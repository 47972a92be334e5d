"""Doctests that read through a consumer the test extra does not install skip, saying so,
where it is missing (the tests under tests/ mark themselves)."""

from __future__ import annotations

import importlib.util
import re

import pytest

#: Modules a doctest may import that the test extra leaves out, and why
OPTIONAL = {
    "torch": "PyTorch, the DLPack consumer of this example, is not installed (not in the "
    "test extra, whose index serves the CUDA build: pip install torch, a CPU build where one "
    "can be had; .ci/run does)",
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        test = getattr(item, "dtest", None)  # a doctest
        if test is None:
            continue
        source = "".join(example.source for example in test.examples)
        for module, why in OPTIONAL.items():
            imported = re.search(rf"^\s*(?:import|from)\b[^\n]*\b{module}\b", source, re.MULTILINE)
            if imported and importlib.util.find_spec(module) is None:
                item.add_marker(pytest.mark.skip(reason=why))
