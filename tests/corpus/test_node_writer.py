"""The node suite written by a release alone (:mod:`onnx_arrow.corpus.node_writer`): the
same bytes as the node suite onnx-arrow builds of the installed onnx."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper

from onnx_arrow.core.model import value_message
from onnx_arrow.corpus import NodeSuiteSource, node_writer


@pytest.mark.parametrize(
    ("value", "declared"),
    [
        (np.arange(6, dtype=np.float32).reshape(2, 3), helper.make_tensor_type_proto(1, [2, 3])),
        (
            [np.zeros(2, np.int64), np.ones(1, np.int64)],
            helper.make_sequence_type_proto(helper.make_tensor_type_proto(7, None)),
        ),
        (
            np.array([1.5], np.float32),
            helper.make_optional_type_proto(helper.make_tensor_type_proto(1, [1])),
        ),
    ],
)
def test_a_value_is_written_as_the_corpus_writes_it(value: object, declared: object) -> None:
    info = helper.make_value_info("v", declared)  # type: ignore[arg-type]
    expected = value_message(value, "v", declared).SerializeToString()  # type: ignore[arg-type]
    assert node_writer._value_bytes(value, info) == expected


def test_a_tensor_proto_is_written_as_it_is() -> None:
    tensor = helper.make_tensor("t", TensorProto.FLOAT, [1], [2.0])
    info = helper.make_value_info("t", helper.make_tensor_type_proto(1, [1]))
    assert node_writer._value_bytes(tensor, info) == tensor.SerializeToString()


def test_the_script_asks_for_its_folder() -> None:
    done = subprocess.run(
        [sys.executable, node_writer.__file__], capture_output=True, text=True, check=False
    )
    assert done.returncode == 2
    assert "usage" in done.stderr


@pytest.mark.slow
def test_the_suite_it_writes_is_the_node_suite(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, node_writer.__file__, str(tmp_path)], capture_output=True, check=True
    )
    manifest = json.loads((tmp_path / node_writer.MANIFEST).read_text())
    assert int(done.stdout) == manifest["cases"]
    expected = {f.path: f.data for case in NodeSuiteSource() for f in case.files}
    written = {
        p.relative_to(tmp_path).as_posix(): p.read_bytes()
        for p in (tmp_path / "node").rglob("*")
        if p.is_file()
    }
    assert written == expected
    case = next(iter(NodeSuiteSource()))
    assert manifest["tolerances"][case.name] == [case.tolerance.rtol, case.tolerance.atol]
