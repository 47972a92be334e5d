"""Tests of onnx_arrow.coverage and ``onnx-arrow coverage``: a small store of real node
cases and made ones (a custom domain, a model-local function, an older opset, a type a
constraint does not allow), every expected row computed here from ``onnx.defs``."""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from onnx import TensorProto, defs, helper
from store_helpers import one_data_set_case

from onnx_arrow.cli import main
from onnx_arrow.corpus import NodeSuiteSource, Store, write_store
from onnx_arrow.coverage import CASE_SCHEMA, OPERATOR_SCHEMA, TYPE_SCHEMA, Coverage, coverage
from onnx_arrow.errors import CorpusError, DeclarationWarning, OnnxArrowWarning

#: Node cases whose nodes read and write graph inputs and outputs only (a variadic input,
#: two type constraints among them).
NODE_CASES = (
    "node/test_abs",
    "node/test_add",
    "node/test_cast_FLOAT_to_DOUBLE",
    "node/test_concat_1d_axis_0",
)


def _model(nodes: list[Any], opsets: dict[str, int], **more: Any) -> onnx.ModelProto:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    graph = helper.make_graph(nodes, "g", [x], [y])
    imports = [helper.make_opsetid(d, v) for d, v in opsets.items()]
    return helper.make_model(graph, opset_imports=imports, **more)


def _made_cases() -> list[Any]:
    x = np.array([-1.0, 2.0], np.float32)
    y = np.abs(x)
    custom = _model(
        [helper.make_node("MyOp", ["x"], ["y"], domain="com.example")], {"": 21, "com.example": 1}
    )
    body = helper.make_function(
        "local.fn", "LocalRelu", ["a"], ["b"], [helper.make_node("Relu", ["a"], ["b"])],
        [helper.make_opsetid("", 21)],
    )  # fmt: skip
    local = _model(
        [helper.make_node("LocalRelu", ["x"], ["y"], domain="local.fn")],
        {"": 21, "local.fn": 1},
        functions=[body],
    )
    # an intermediate name nothing declares (its type is onnx's inference's), an output
    # declared without a type (its type is its stored values')
    chain = _model(
        [helper.make_node("Abs", ["x"], ["h"]), helper.make_node("Neg", ["h"], ["y"])], {"": 21}
    )
    chain.graph.output[0].CopyFrom(helper.make_tensor_value_info("y", TensorProto.UNDEFINED, None))
    older = _model([helper.make_node("Abs", ["x"], ["y"])], {"": 6})
    return [
        one_data_set_case("made/test_custom", custom, x, y),
        one_data_set_case("made/test_local_function", local, x, y),
        one_data_set_case("made/test_chain", chain, x, -y),
        one_data_set_case("made/test_abs_opset6", older, x, y),
    ]


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, onnx.ModelProto]]:
    cases = [c for c in NodeSuiteSource() if c.name in NODE_CASES]
    assert sorted(c.name for c in cases) == sorted(NODE_CASES)
    cases += _made_cases()
    path = tmp_path_factory.mktemp("coverage") / "small.parquet"
    with pytest.warns(DeclarationWarning, match=r"test_chain/.*undefined"):
        write_store(cases, path)
    models = {c.name: onnx.load_from_string(c.files[0].data) for c in cases}
    return path, models


@pytest.fixture(scope="module")
def found(small: tuple[Path, dict[str, onnx.ModelProto]]) -> Coverage:
    return coverage(small[0])


# --- expected rows, from onnx.defs alone ---------------------------------------------------


def _type_text(type_proto: onnx.TypeProto) -> str:
    return f"tensor({TensorProto.DataType.Name(type_proto.tensor_type.elem_type).lower()})"


def _expected_node_rows(case: str, model: onnx.ModelProto) -> set[tuple[Any, ...]]:
    """(case, op_type, since_version, type_param, type) of a model whose one node reads
    and writes graph values only."""
    declared = {v.name: _type_text(v.type) for v in (*model.graph.input, *model.graph.output)}
    opset = {o.domain: o.version for o in model.opset_import}[""]
    (node,) = model.graph.node
    schema = defs.get_schema(node.op_type, opset, "")
    params = {c.type_param_str for c in schema.type_constraints}
    rows = set()
    for formals, names in ((schema.inputs, node.input), (schema.outputs, node.output)):
        for i, name in enumerate(names):
            formal = formals[min(i, len(formals) - 1)]
            if formal.type_str in params:
                rows.add(
                    (case, node.op_type, schema.since_version, formal.type_str, declared[name])
                )
    return rows


def _spec(domain: str, opset: int) -> set[tuple[str, int]]:
    """(op_type, since_version) of every operator of ``domain`` at ``opset``, not
    deprecated: the newest version of each name at or below the opset."""
    newest: dict[str, Any] = {}
    for schema in defs.get_all_schemas_with_history():
        if (
            schema.domain == domain
            and schema.since_version <= opset
            and (
                schema.name not in newest
                or newest[schema.name].since_version < schema.since_version
            )
        ):
            newest[schema.name] = schema
    return {(s.name, s.since_version) for s in newest.values() if not s.deprecated}


# --- the tables ----------------------------------------------------------------------------


def test_the_tables_have_their_documented_schemas(
    small: tuple[Path, dict[str, onnx.ModelProto]], found: Coverage
) -> None:
    assert found.cases.schema.remove_metadata() == CASE_SCHEMA
    assert found.operators.schema.remove_metadata() == OPERATOR_SCHEMA
    assert found.types.schema.remove_metadata() == TYPE_SCHEMA
    models = small[1].values()
    top = max(o.version for m in models for o in m.opset_import if o.domain == "")
    assert found.made_from == {
        "corpus_onnx": onnx.__version__,
        "schemas_onnx": onnx.__version__,
        "opsets": {"ai.onnx": top, "com.example": 1, "local.fn": 1},
    }


def test_node_cases_exercise_their_schemas_types(
    small: tuple[Path, dict[str, onnx.ModelProto]], found: Coverage
) -> None:
    _path, models = small
    expected = set()
    for case in NODE_CASES:
        expected |= _expected_node_rows(case, models[case])
    table = found.cases.filter(pc.is_in(found.cases.column("case"), pa.array(NODE_CASES)))
    got = {
        (r["case"], r["op_type"], r["since_version"], r["type_param"], r["type"])
        for r in table.to_pylist()
    }
    assert got == expected
    assert set(table.column("type_source").to_pylist()) == {"declared"}
    assert set(table.column("allowed").to_pylist()) == {True}
    assert set(table.column("schema").to_pylist()) == {"onnx"}
    # each pair of the types table lists exactly the cases that exercise it
    for case, op_type, since, param, text in expected:
        (row,) = [
            r
            for r in found.types.to_pylist()
            if (r["op_type"], r["since_version"], r["type_param"], r["type"])
            == (op_type, since, param, text)
        ]
        assert case in row["cases"]
        assert row["in_spec"] == (since == _current(op_type, found))
        assert row["case_count"] == len(row["cases"])


def _current(op_type: str, found: Coverage) -> int:
    return defs.get_schema(op_type, found.made_from["opsets"]["ai.onnx"], "").since_version


def test_the_specification_is_every_operator_at_the_corpus_opsets(found: Coverage) -> None:
    opset = found.made_from["opsets"]["ai.onnx"]
    rows = found.operators.to_pylist()
    in_spec = {
        (r["op_type"], r["since_version"])
        for r in rows
        if r["in_spec"] and r["domain"] == "ai.onnx"
    }
    assert in_spec == _spec("", opset)
    pairs = {
        (r["op_type"], r["since_version"], r["type_param"], r["type"])
        for r in found.types.to_pylist()
        if r["in_spec"] and r["domain"] == "ai.onnx"
    }
    expected = set()
    for name, since in _spec("", opset):
        schema = defs.get_schema(name, opset, "")
        for c in schema.type_constraints:
            expected |= {
                (name, since, c.type_param_str, t.replace(" ", "")) for t in c.allowed_type_strs
            }
    # the schemas spell a map's value type bare (map(string, float)): compared as tensors
    assert {p for p in pairs if "map(" not in p[3]} == {p for p in expected if "map(" not in p[3]}
    summary = found.summary()
    assert summary["operators"] == len(in_spec)  # com.example and local.fn: no schema
    covered = {(r["op_type"], r["since_version"]) for r in rows if r["in_spec"] and r["case_count"]}
    assert summary["operators_covered"] == len(covered)
    assert covered == {
        (op, _current(op, found)) for op in ("Abs", "Add", "Cast", "Concat", "Neg", "Relu")
    }
    assert f"Abs-{_current('Abs', found)}" not in summary["uncovered_operators"]
    assert f"Sin-{_current('Sin', found)}" in summary["uncovered_operators"]


def test_an_older_opset_exercises_an_older_version(found: Coverage) -> None:
    since = defs.get_schema("Abs", 6, "").since_version
    (row,) = [
        r
        for r in found.operators.to_pylist()
        if (r["op_type"], r["since_version"]) == ("Abs", since)
    ]
    assert row["cases"] == ["made/test_abs_opset6"]
    assert not row["in_spec"]
    assert found.summary()["other_versions"] == {}  # Abs is covered at its current version too


def test_an_unknown_domain_is_listed_not_dropped(found: Coverage) -> None:
    (row,) = [r for r in found.operators.to_pylist() if r["op_type"] == "MyOp"]
    assert row == {
        "domain": "com.example", "op_type": "MyOp", "since_version": None, "schema": "unknown",
        "in_spec": False, "deprecated": False, "case_count": 1, "cases": ["made/test_custom"],
    }  # fmt: skip
    (pair,) = [r for r in found.types.to_pylist() if r["op_type"] == "MyOp"]
    assert (pair["type"], pair["schema"], pair["cases"]) == (None, "unknown", ["made/test_custom"])
    assert {"operator": "com.example::MyOp", "schema": "unknown", "cases": 1} in found.summary()[
        "unknown_operators"
    ]


def test_a_model_local_function_and_its_body(found: Coverage) -> None:
    rows = [r for r in found.cases.to_pylist() if r["case"] == "made/test_local_function"]
    assert {(r["domain"], r["op_type"], r["schema"], r["scope"]) for r in rows} == {
        ("local.fn", "LocalRelu", "local function", "graph"),
        ("ai.onnx", "Relu", "onnx", "function"),
    }
    # a function's body declares no types here, and onnx infers none there
    relu = [(r["type_param"], r["type"], r["type_source"]) for r in rows if r["op_type"] == "Relu"]
    assert relu == [("T", None, None)]
    (op,) = [r for r in found.operators.to_pylist() if r["op_type"] == "LocalRelu"]
    assert op["schema"] == "local function"
    assert op["cases"] == ["made/test_local_function"]


def test_types_come_from_declarations_then_values_then_inference(found: Coverage) -> None:
    rows = [r for r in found.cases.to_pylist() if r["case"] == "made/test_chain"]
    sources = {(r["op_type"], r["type_param"], r["type"], r["type_source"]) for r in rows}
    assert sources == {
        ("Abs", "T", "tensor(float)", "declared"),
        ("Abs", "T", "tensor(float)", "inferred"),
        ("Neg", "T", "tensor(float)", "inferred"),
        ("Neg", "T", "tensor(float)", "values"),
    }


def test_a_type_the_constraint_does_not_allow(tmp_path: Path) -> None:
    x = np.array(["a", "b"], dtype=object)
    graph = helper.make_graph(
        [helper.make_node("Abs", ["x"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.STRING, [2])],
        [helper.make_tensor_value_info("y", TensorProto.STRING, [2])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    path = tmp_path / "s.parquet"
    write_store([one_data_set_case("made/test_abs_string", model, x, x)], path)
    found = coverage(Store(path))
    since = defs.get_schema("Abs", 21, "").since_version
    assert found.summary()["disallowed_types"] == [f"Abs-{since} T tensor(string)"]
    (pair,) = [
        r for r in found.types.to_pylist() if (r["op_type"], r["type"]) == ("Abs", "tensor(string)")
    ]
    assert (pair["allowed"], pair["in_spec"], pair["cases"]) == (
        False,
        False,
        ["made/test_abs_string"],
    )


def test_an_opset_newer_than_the_installed_onnx_warns(tmp_path: Path) -> None:
    top = defs.onnx_opset_version()
    model = _model([helper.make_node("Abs", ["x"], ["y"])], {"": top + 1})
    x = np.array([-1.0, 2.0], np.float32)
    path = tmp_path / "s.parquet"
    write_store([one_data_set_case("made/test_future", model, x, np.abs(x))], path)
    with pytest.warns(OnnxArrowWarning, match=f"ai.onnx opset {top + 1}"):
        found = coverage(path)
    assert found.made_from["opsets"] == {"ai.onnx": top + 1}


def test_not_a_store_is_a_located_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"not parquet")
    with pytest.raises(CorpusError, match=r"bad\.parquet"):
        coverage(bad)


# --- the command ---------------------------------------------------------------------------


def test_the_command_prints_the_figures(
    small: tuple[Path, Any], found: Coverage, capsys: Any
) -> None:
    assert main(["coverage", str(small[0])]) == 0
    text = capsys.readouterr().out
    summary = found.summary()
    assert f"operators          {summary['operators_covered']} / {summary['operators']}" in text
    assert f"{summary['pairs_covered']} / {summary['pairs']}" in text
    assert "  com.example::MyOp (unknown, 1 cases)" in text
    assert f"uncovered operators ({len(summary['uncovered_operators'])}):" in text


def test_the_command_writes_json_and_csv(
    small: tuple[Path, Any], found: Coverage, tmp_path: Path, capsys: Any
) -> None:
    out = tmp_path / "c.json"
    assert main(["coverage", str(small[0]), "--format", "json", "-o", str(out)]) == 0
    written = json.loads(out.read_text())
    assert written["type_rows"] == found.types.to_pylist()
    assert written["pairs_covered"] == found.summary()["pairs_covered"]
    assert main(["coverage", str(small[0]), "--format", "json", "-o", str(out)]) == 1
    assert "exists; pass --force" in capsys.readouterr().err
    assert main(["coverage", str(small[0]), "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["cases"].split() for r in rows] == found.types.column("cases").to_pylist()
    assert [r["op_type"] for r in rows] == found.types.column("op_type").to_pylist()


def test_the_command_refuses_what_is_not_a_store(tmp_path: Path, capsys: Any) -> None:
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"PAR1 nothing")
    assert main(["coverage", str(bad)]) == 1
    err = capsys.readouterr().err
    assert "bad.parquet" in err
    assert err.count("\n") == 1


def test_the_cases_table_joins_a_compare_report(small: tuple[Path, Any], found: Coverage) -> None:
    from onnx_arrow.compare import compare

    report = compare(small[0], cases=["node/test_add", "made/test_custom"])
    verdicts = report.table.select(["case", "status"])
    joined = verdicts.join(found.cases.select(["case", "op_type", "type"]), "case")
    assert set(joined.column("case").to_pylist()) == {"node/test_add", "made/test_custom"}
    adds = joined.filter(pc.equal(joined.column("op_type"), "Add")).to_pylist()
    assert {(r["case"], r["status"], r["type"]) for r in adds} == {
        ("node/test_add", "match", "tensor(float)")
    }


# --- the node suite of the installed onnx --------------------------------------------------


@pytest.mark.slow
def test_the_node_suite(tmp_path: Path) -> None:
    import subprocess
    import sys

    cases = list(NodeSuiteSource())
    path = tmp_path / "node.parquet"
    write_store(cases, path)
    found = coverage(path)
    operators = {
        (r["domain"], r["op_type"], r["since_version"]): set(r["cases"])
        for r in found.operators.to_pylist()
    }
    # every node of every main graph, resolved here from onnx.defs, lists its case
    for case in cases:
        model = onnx.load_from_string(next(f.data for f in case.files if f.path == case.model_path))
        imports = {o.domain or "ai.onnx": o.version for o in model.opset_import}
        for node in model.graph.node:
            domain = node.domain or "ai.onnx"
            schema = defs.get_schema(node.op_type, imports[domain], node.domain)
            assert case.name in operators[(domain, node.op_type, schema.since_version)]
    summary = found.summary()
    opsets = summary["opsets"]
    in_spec = {
        k for k, r in zip(operators, found.operators.to_pylist(), strict=True) if r["in_spec"]
    }
    expected = {("ai.onnx", n, s) for n, s in _spec("", opsets["ai.onnx"])}
    expected |= {("ai.onnx.ml", n, s) for n, s in _spec("ai.onnx.ml", opsets["ai.onnx.ml"])}
    assert {k for k in in_spec if k[0] in ("ai.onnx", "ai.onnx.ml")} == expected
    assert summary["operators_covered"] == sum(1 for k in in_spec if operators[k])
    assert summary["unknown_operators"] == []
    # the command prints the same figures, as a user runs it
    done = subprocess.run(
        [sys.executable, "-m", "onnx_arrow", "coverage", str(path), "--format", "json"],
        capture_output=True, text=True, check=True, timeout=300,
    )  # fmt: skip
    printed = json.loads(done.stdout)
    for key in ("operators", "operators_covered", "pairs", "pairs_covered", "uncovered_pairs"):
        assert printed[key] == summary[key]
    # the installed onnx's corpus as a release (its store made in a temporary folder): the
    # node suite and the model tests of its wheel, so all the node suite covers and more
    env = {**os.environ, "ONNX_ARROW_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run(
        [sys.executable, "-m", "onnx_arrow", "coverage", "@onnx", "--format", "json"],
        capture_output=True, text=True, check=True, timeout=600, env=env,
    )  # fmt: skip
    release = json.loads(done.stdout)
    assert release["operators"] == summary["operators"]
    assert release["pairs"] == summary["pairs"]
    assert set(release["uncovered_operators"]) < set(summary["uncovered_operators"])
    assert set(release["uncovered_pairs"]) <= set(summary["uncovered_pairs"])


def test_a_domain_the_model_does_not_import(tmp_path: Path) -> None:
    model = _model([helper.make_node("Other", ["x"], ["y"], domain="com.other")], {"": 21})
    x = np.array([-1.0, 2.0], np.float32)
    path = tmp_path / "s.parquet"
    write_store([one_data_set_case("made/test_unimported", model, x, x)], path)
    (row,) = coverage(path).cases.to_pylist()
    assert (row["domain"], row["opset"], row["since_version"], row["schema"]) == (
        "com.other", None, None, "unknown",
    )  # fmt: skip


def test_a_forged_model_row_is_a_located_error(small: tuple[Path, Any], tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    table = pq.read_table(small[0])
    forged = [
        b"\xff\xff garbage" if (case, role) == ("node/test_add", "model") else content
        for case, role, content in zip(
            table.column("test_case").to_pylist(),
            table.column("role").to_pylist(),
            table.column("content").to_pylist(),
            strict=True,
        )
    ]
    index = table.schema.get_field_index("content")
    column = pa.array(forged, table.schema.field(index).type)
    bad = tmp_path / "forged.parquet"
    pq.write_table(
        table.set_column(index, table.schema.field(index), column), bad, row_group_size=10**6
    )
    with pytest.raises(CorpusError, match="node/test_add"):
        coverage(bad)


def test_cases_select_the_cases_counted(small: tuple[Path, Any], capsys: Any) -> None:
    node = coverage(small[0], cases=["node/*"])
    assert set(node.cases.column("case").to_pylist()) == set(NODE_CASES)
    assert not [r for r in node.operators.to_pylist() if r["schema"] != "onnx"]
    assert set(node.made_from["opsets"]) == {"ai.onnx"}
    assert main(["coverage", str(small[0]), "--case", "test_abs", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["cases"] == 1
    assert main(["coverage", str(small[0]), "--case", "nothing*"]) == 1
    assert "no case matches 'nothing*'" in capsys.readouterr().err


def test_force_replaces_a_link_or_a_fifo_never_writes_through_them(
    small: tuple[Path, Any], tmp_path: Path, capsys: Any
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("not onnx-arrow's\n")
    link, fifo, folder = tmp_path / "link.json", tmp_path / "fifo.json", tmp_path / "dir.json"
    link.symlink_to(outside)
    os.mkfifo(fifo)  # opened for writing, it would block: it is replaced, never opened
    folder.mkdir()
    for target in (link, fifo, folder):
        assert main(["coverage", str(small[0]), "--format", "json", "-o", str(target)]) == 1
        assert f"{target}: " in capsys.readouterr().err
    for target in (link, fifo):
        args = ["coverage", str(small[0]), "--format", "json", "-o", str(target), "--force"]
        assert main(args) == 0
        assert target.is_file()
        assert not target.is_symlink()
        assert json.loads(target.read_text())["operators"] >= 1
    assert outside.read_text() == "not onnx-arrow's\n"
    args = ["coverage", str(small[0]), "-o", str(folder), "--force"]
    assert main(args) == 1
    assert "is a folder; the coverage is one file" in capsys.readouterr().err
