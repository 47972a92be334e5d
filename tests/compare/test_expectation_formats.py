"""Other runtimes' expectation files read as patterns, and refused where they are not
what their project writes: burn-onnx's expectations.toml and IREE's config JSON."""

from __future__ import annotations

from pathlib import Path

import pytest

from onnx_arrow import compare as cmp
from onnx_arrow.compare.expectation_formats import burn_name, iree_name, text_kind
from onnx_arrow.errors import CompareError

DATA = Path(__file__).parents[1] / "data"


def test_burn_statuses_as_patterns() -> None:
    read = cmp.Expectations.read(DATA / "burn-onnx" / "expectations.toml")
    assert read.skip == []
    assert read.xfail == [
        "^node/test_adagrad$",
        "^node/test_adagrad_multiple$",
        "^node/test_adam$",
        "^node/test_adam_multiple$",
    ]
    first = read.xfail[0]
    assert repr(first).startswith("'^node/test_adagrad$' (")
    assert "expectations.toml:38 skip-codegen: model contains 1 custom op(s)" in repr(first)


def test_iree_lists_as_patterns() -> None:
    read = cmp.Expectations.read(DATA / "iree" / "onnx_ops_cpu_llvm_sync.json")
    assert read.skip[0] == "^node/test_dequantizelinear$"
    assert "onnx_ops_cpu_llvm_sync.json:11 skip_compile_tests" in repr(read.skip[0])
    assert len(read.xfail) == 5 + 19
    assert "^node/test_pow$" in read.xfail


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '[test_a]\nstatus = "passes"\n',
            r"line 1: \[test_a\] status is 'passes'; expected one of",
        ),
        ('[test_a]\nstatus = "pass"\nwontfix = "yes"\n', "wontfix must be a boolean"),
        ('[test_a]\nreason = "no status"\n', "status is None"),
        ('test_a = "pass"\n', "'test_a' is not a table"),
        ('[test_a]\nstatus = "pass"\n[test_a]\n', "not TOML"),
        ('[test_a]\nstatus = "pass\n', "not TOML"),
    ],
)
def test_a_bad_burn_file_is_refused(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "expectations.toml"
    path.write_text(text)
    with pytest.raises(CompareError, match=message) as caught:
        cmp.Expectations.read(path)
    assert caught.value.where == str(path)


def test_a_bad_iree_list_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text('{"config_name": "x", "expected_run_failures": [1]}')
    with pytest.raises(CompareError, match="expected_run_failures must be a list of test folders"):
        cmp.Expectations.read(path)


def test_names_each_runtime_gives_a_case() -> None:
    assert burn_name("node/test_abs") == "test_abs"
    assert burn_name("real/test_densenet121") is None  # burn's file: the node suite alone
    assert iree_name("node/test_abs") == "onnx/node/generated/test_abs"
    assert text_kind("# c\n[test_abs]\n") == "toml"
    assert text_kind('[\n  "a"\n]') == "json"
    assert text_kind("# c\nskip test_abs\n") == "lines"
