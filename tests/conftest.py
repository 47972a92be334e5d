"""Shared fixtures: the node test suite that the installed onnx builds, as messages."""

from __future__ import annotations

import contextlib
import signal
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from onnx import TypeProto


@dataclass(frozen=True)
class NodeValue:
    """One value of one data set of a node test case, serialized as onnx's writer does."""

    case: str
    data_set: int
    io: str  # "input" or "output"
    index: int
    type: TypeProto
    serialized: bytes
    value: Any  # as the case generator gives it: an ndarray, a list, a dict, None or a message


@pytest.fixture(scope="session")
def node_values() -> list[NodeValue]:
    """Every value of the node suite (onnx.backend.test.loader.load_node_model_tests)."""
    from onnx.backend.test.loader import load_node_model_tests

    from onnx_arrow.core.model import value_message  # as the corpus writes the node suite

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = load_node_model_tests()
    out = []
    for case in cases:
        graph = case.model.graph
        for n, (inputs, outputs) in enumerate(case.data_sets):
            for io, values, infos in (
                ("input", inputs, graph.input),
                ("output", outputs, graph.output),
            ):
                for k, value in enumerate(values):
                    info = infos[k]
                    out.append(
                        NodeValue(
                            case.name,
                            n,
                            io,
                            k,
                            info.type,
                            value_message(value, info.name, info.type).SerializeToString(),
                            value,
                        )
                    )
    return out


@contextlib.contextmanager
def _deadline(seconds: int = 5) -> Iterator[None]:
    """Fail with TimeoutError instead of hanging when a call blocks (a FIFO, /dev/zero)."""

    def _timeout(signum: int, frame: Any) -> None:
        raise TimeoutError(f"blocked for more than {seconds} s")

    previous = signal.signal(signal.SIGALRM, _timeout)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture
def deadline() -> Callable[..., contextlib.AbstractContextManager[None]]:
    """``with deadline(seconds):`` turns a hang into a TimeoutError."""
    return _deadline
