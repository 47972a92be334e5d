"""What a corpus tests against what the ONNX specification allows: per operator and per
type its schema allows, the cases that exercise it, and what no case exercises.

:func:`coverage` reads a store's models (each case's, through :meth:`Store.model
<onnx_arrow.corpus.Store.model>`) and its value rows' types, and joins them with the
operator schemas of the installed onnx (``onnx.defs``).  Its :class:`Coverage` holds three
Arrow tables:

* ``cases``: a row per case, node operator and type it exercises (:data:`CASE_SCHEMA`),
  its ``case`` the store's case name as compare reports name it, so the two join;
* ``operators``: a row per operator version (:data:`OPERATOR_SCHEMA`), those of the
  specification at the corpus's opsets and any other a case exercises, with its cases;
* ``types``: a row per operator version, type constraint and allowed type
  (:data:`TYPE_SCHEMA`), the *(operator, type) pairs*, with their cases.

The rules, in one place:

* **Schemas.** A node's schema is the installed onnx's ``get_schema(op_type,
  max_inclusive_version=opset, domain)`` at the opset its model (or its model-local
  function) imports for the node's domain.  onnx keeps every version of every operator,
  so a corpus of an older release (``@onnx==1.14.1``) resolves to the versions that
  release defined; an opset newer than the installed onnx knows is warned about
  (:class:`~onnx_arrow.errors.OnnxArrowWarning`): its newest operators are unknown here.
* **The specification at the corpus's opsets.** For each domain the corpus's models import,
  at the highest opset they import it at: every operator the installed onnx defines there
  (deprecated ones left out), at the version that opset resolves to (``in_spec`` true).
  A case whose model imports an older opset exercises an older version of an operator: its
  own row, ``in_spec`` false.  Domains no model imports are not counted.
* **Types.** A node's input and output types are, in this order: the model's declared
  types (graph inputs and outputs, ``value_info``, initializers), which the runtime
  prepares the model with; for a graph input or output the model declares no element
  type for, the types of the values the case stores there (every data set's); else what
  onnx's type inference gives.  ``type_source`` says which (``declared``, ``values``,
  ``inferred``; null where none gives one, the row kept).  A value that contradicts its
  declaration (a frozen corpus's ``bfloat16`` stored as ``uint16``) does not change the
  type: the store's ``declared`` column and ``info`` say so.  A type a case exercises that
  its constraint does not allow is kept (``allowed`` false).  Formal parameters of a
  fixed type (Reshape's ``shape``) give no pair: the schema leaves no choice.  ``dtype``
  is the element type of the innermost tensor (``float`` for ``seq(tensor(float))``).
* **Unknown operators.** A node whose schema the installed onnx does not know (a custom
  domain, an operator of a model-local function) is listed, never dropped: ``schema`` is
  ``local function`` (the model defines it) or ``unknown``, its version and types null.
  Nodes inside subgraphs (If, Loop, Scan) count; nodes inside model-local functions count
  too, with types from their own ``value_info`` only (onnx infers none there).

Examples
--------
>>> import onnx_arrow.coverage as cov
>>> cov.TYPE_SCHEMA.names[:5]
['domain', 'op_type', 'since_version', 'type_param', 'type']
"""

from __future__ import annotations

import functools
import json
import os
import re
import warnings
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

import onnx
import pyarrow as pa
from onnx import FunctionProto, GraphProto, ModelProto, NodeProto, TypeProto, defs

from onnx_arrow.compare.plans import select_cases
from onnx_arrow.core.model import graph_values, onnx_type_string
from onnx_arrow.corpus.sources import check_patterns
from onnx_arrow.corpus.store import Store, as_store
from onnx_arrow.errors import OnnxArrowWarning

__all__ = [
    "CASE_SCHEMA",
    "COVERAGE_METADATA_KEY",
    "OPERATOR_SCHEMA",
    "TYPE_SCHEMA",
    "Coverage",
    "coverage",
]

#: The key of each table's schema metadata that holds what it was made from, as JSON.
COVERAGE_METADATA_KEY: Final = "onnx_arrow.coverage"

#: The name of the default domain, for ``""`` too (ONNX treats both alike).
DEFAULT_DOMAIN: Final = "ai.onnx"

#: What ``schema`` says of an operator: onnx defines it, the model defines it as a local
#: function, or neither.
SCHEMA_KINDS: Final = ("onnx", "local function", "unknown")

#: One row per case, node operator and type it exercises.
CASE_SCHEMA: Final = pa.schema(
    [
        pa.field("case", pa.string(), False, {"doc": "the store's case, as compare names it"}),
        pa.field("domain", pa.string(), False, {"doc": "the node's domain; '' is ai.onnx"}),
        pa.field("op_type", pa.string(), False),
        pa.field("opset", pa.int64(), True, {"doc": "the domain's opset the model imports"}),
        pa.field("since_version", pa.int64(), True, {"doc": "the schema's; null if unknown"}),
        pa.field("schema", pa.string(), False, {"doc": "onnx, local function or unknown"}),
        pa.field("type_param", pa.string(), True, {"doc": "the type constraint (T)"}),
        pa.field("type", pa.string(), True, {"doc": "ONNX's notation: tensor(float)"}),
        pa.field("dtype", pa.string(), True, {"doc": "the innermost tensor's element type"}),
        pa.field("allowed", pa.bool_(), True, {"doc": "whether the constraint allows type"}),
        pa.field("type_source", pa.string(), True, {"doc": "values, declared or inferred"}),
        pa.field("scope", pa.string(), False, {"doc": "graph, subgraph or function"}),
    ]
)

_CASES_FIELD: Final = pa.field("cases", pa.list_(pa.string()), False, {"doc": "sorted"})

#: One row per operator version: those of the specification, and any a case exercises.
OPERATOR_SCHEMA: Final = pa.schema(
    [
        pa.field("domain", pa.string(), False),
        pa.field("op_type", pa.string(), False),
        pa.field("since_version", pa.int64(), True),
        pa.field("schema", pa.string(), False),
        pa.field("in_spec", pa.bool_(), False, {"doc": "defined at the corpus's opset"}),
        pa.field("deprecated", pa.bool_(), False),
        pa.field("case_count", pa.int64(), False),
        _CASES_FIELD,
    ]
)

#: One row per operator version, type constraint and type: the (operator, type) pairs.
TYPE_SCHEMA: Final = pa.schema(
    [
        pa.field("domain", pa.string(), False),
        pa.field("op_type", pa.string(), False),
        pa.field("since_version", pa.int64(), True),
        pa.field("type_param", pa.string(), True),
        pa.field("type", pa.string(), True),
        pa.field("dtype", pa.string(), True),
        pa.field("schema", pa.string(), False),
        pa.field("in_spec", pa.bool_(), False),
        pa.field("allowed", pa.bool_(), True),
        pa.field("case_count", pa.int64(), False),
        _CASES_FIELD,
    ]
)


@dataclass(frozen=True)
class Coverage:
    """The coverage of a corpus: its ``cases``, ``operators`` and ``types`` tables (see the
    module), each carrying what it was made from under :data:`COVERAGE_METADATA_KEY`."""

    cases: pa.Table
    operators: pa.Table
    types: pa.Table

    @property
    def made_from(self) -> dict[str, Any]:
        """What the tables were made from: the corpus's onnx version, the onnx version of
        the schemas, and the opsets the specification is taken at."""
        metadata = self.types.schema.metadata or {}
        made: dict[str, Any] = json.loads(metadata[COVERAGE_METADATA_KEY.encode()])
        return made

    def summary(self) -> dict[str, Any]:
        """The figures, as a dict JSON writes (``coverage --format json`` prints it).

        Its keys: :attr:`made_from`'s (``corpus_onnx``, ``schemas_onnx``, ``opsets``);
        ``cases`` (the cases with a node); ``operators`` and ``operators_covered`` (the
        operator versions of the specification, and those a case exercises); ``pairs``
        and ``pairs_covered`` (its (operator, type) pairs, likewise);
        ``uncovered_operators`` (``Sin-22``, ``ai.onnx.ml::ZipMap-1``) and
        ``uncovered_pairs`` (``Abs-13 T tensor(int8)``); ``other_versions`` (for an
        uncovered operator, the older versions cases exercise); ``unknown_operators``
        (``{"operator", "schema", "cases"}`` of each operator without an onnx schema);
        ``disallowed_types`` (the pairs cases exercise that their constraint does not
        allow).
        """
        ops = self.operators.to_pylist()
        pairs = self.types.to_pylist()
        spec_ops = [o for o in ops if o["in_spec"]]
        spec_pairs = [p for p in pairs if p["in_spec"] and p["allowed"]]
        return {
            **self.made_from,
            "cases": len(set(self.cases.column("case").to_pylist())),
            "operators": len(spec_ops),
            "operators_covered": sum(1 for o in spec_ops if o["case_count"]),
            "pairs": len(spec_pairs),
            "pairs_covered": sum(1 for p in spec_pairs if p["case_count"]),
            "uncovered_operators": [_op_name(o) for o in spec_ops if not o["case_count"]],
            "other_versions": _other_versions(ops),
            "uncovered_pairs": [
                f"{_op_name(p)} {p['type_param']} {p['type']}"
                for p in spec_pairs
                if not p["case_count"]
            ],
            "unknown_operators": [
                {"operator": _op_name(o), "schema": o["schema"], "cases": o["case_count"]}
                for o in ops
                if o["schema"] != "onnx"
            ],
            "disallowed_types": [
                f"{_op_name(p)} {p['type_param']} {p['type']}"
                for p in pairs
                if p["allowed"] is False
            ],
        }


def _other_versions(ops: list[dict[str, Any]]) -> dict[str, list[str]]:
    """For each operator of the specification no case exercises, the other versions of it
    cases do exercise (a model importing an older opset): ``{"If-25": ["If-21"]}``."""
    exercised: dict[tuple[str, str], list[str]] = {}
    for o in ops:
        if o["case_count"] and not o["in_spec"] and o["since_version"] is not None:
            exercised.setdefault((o["domain"], o["op_type"]), []).append(_op_name(o))
    return {
        _op_name(o): exercised[(o["domain"], o["op_type"])]
        for o in ops
        if o["in_spec"] and not o["case_count"] and (o["domain"], o["op_type"]) in exercised
    }


def _op_name(row: Mapping[str, Any]) -> str:
    """``ai.onnx.ml::ZipMap-1``; the default domain left out: ``Add-14``."""
    name = row["op_type"]
    if row["domain"] != DEFAULT_DOMAIN:
        name = f"{row['domain']}::{name}"
    return name if row["since_version"] is None else f"{name}-{row['since_version']}"


def coverage(
    store: Store | str | os.PathLike[str], *, cases: Iterable[str] | None = None
) -> Coverage:
    """What ``store``'s cases exercise of the specification (see the module for the rules).

    Parameters
    ----------
    store
        A :class:`~onnx_arrow.corpus.Store`, or what it opens (a path).
    cases
        Only the cases matching these glob patterns (``node/*``, ``test_add*``), as
        :func:`~onnx_arrow.compare.compare` selects them; every case unless given.  The
        specification is then taken at the opsets of these cases' models.

    Raises
    ------
    CorpusError
        If the store cannot be read, a case's model does not parse or is not the one
        imported (its digest).
    CompareError
        If a pattern of ``cases`` matches no case.
    """
    opened = as_store(store, where="coverage(store)")
    patterns = check_patterns(cases, where="coverage(cases)")
    selected = select_cases(opened, patterns)
    stored = _stored_types(opened)
    with_model = set(opened.read_columns(["test_case"], roles=["model"]).column(0).to_pylist())
    exercised: list[dict[str, Any]] = []
    imported: dict[str, int] = {}
    for case in selected:
        if case not in with_model:
            continue  # files only: no operator to count
        model = opened.model(case)
        for domain, version in _imports(model.opset_import).items():
            imported[domain] = max(imported.get(domain, version), version)
        exercised += _case_rows(case, model, stored.get(case, {}))
    _warn_unknown_opsets(imported)
    made = {
        "corpus_onnx": opened.metadata.get("onnx_version"),
        "schemas_onnx": onnx.__version__,
        "opsets": dict(sorted(imported.items())),
    }
    spec = list(_spec_schemas(imported))
    return Coverage(
        cases=_table(exercised, CASE_SCHEMA, made),
        operators=_operators(spec, exercised, made),
        types=_types(spec, exercised, made),
    )


# --- the store -----------------------------------------------------------------------------


def _stored_types(store: Store) -> dict[str, dict[tuple[str, int], set[str]]]:
    """The types of the values each case stores, by ``(io, index)``: every data set's."""
    rows = store.read_columns(["test_case", "io", "index", "onnx_type"], roles=["value"])
    out: dict[str, dict[tuple[str, int], set[str]]] = {}
    columns = [rows.column(n).to_pylist() for n in ("test_case", "io", "index", "onnx_type")]
    for case, io, index, onnx_type in zip(*columns, strict=True):
        if io is not None and index is not None and onnx_type:
            out.setdefault(case, {}).setdefault((io, index), set()).add(_canonical(onnx_type))
    return out


# --- a case's nodes ------------------------------------------------------------------------


#: A value's types and where they come from: ``{name: [(type, source), ...]}``.
Types = dict[str, list[tuple[str, str]]]


def _case_rows(
    case: str, model: ModelProto, stored: Mapping[tuple[str, int], set[str]]
) -> list[dict[str, Any]]:
    """The rows of ``case``: for each node (subgraphs and local functions included), its
    schema and each type constraint's types."""
    types = _graph_types(model.graph, "declared")
    for io in ("input", "output"):
        for index, value in enumerate(graph_values(model, io)):
            found = stored.get((io, index))
            if found and value.name not in types:
                types[value.name] = [(t, "values") for t in sorted(found)]
    types.update(_inferred(model, types))
    opsets = _imports(model.opset_import)
    functions = {(_domain(f.domain), f.name): f for f in model.functions}
    rows: list[dict[str, Any]] = []
    for node, scope, node_types, node_opsets in _nodes(model.graph, types, opsets, functions):
        rows += _node_rows(case, node, scope, node_types, node_opsets, functions)
    return _distinct(rows)


def _nodes(
    graph: GraphProto,
    types: Types,
    opsets: dict[str, int],
    functions: Mapping[tuple[str, str], FunctionProto],
) -> Iterator[tuple[NodeProto, str, Types, dict[str, int]]]:
    """Every node of the graph, its subgraphs' (which see the names of the graphs around
    them) and the model-local functions' bodies, with the types its names have."""
    yield from _graph_nodes(graph, "graph", types, opsets)
    for function in functions.values():
        own = _imports(function.opset_import) or opsets
        body = {v.name: [(t, "declared")] for v in function.value_info if (t := _type(v.type))}
        for node in function.node:
            yield node, "function", body, own
            yield from _subgraph_nodes(node, body, own)


def _graph_nodes(
    graph: GraphProto, scope: str, types: Types, opsets: dict[str, int]
) -> Iterator[tuple[NodeProto, str, Types, dict[str, int]]]:
    for node in graph.node:
        yield node, scope, types, opsets
        yield from _subgraph_nodes(node, types, opsets)


def _subgraph_nodes(
    node: NodeProto, types: Types, opsets: dict[str, int]
) -> Iterator[tuple[NodeProto, str, Types, dict[str, int]]]:
    for attr in node.attribute:
        for sub in (*([attr.g] if attr.HasField("g") else []), *attr.graphs):
            yield from _graph_nodes(sub, "subgraph", types, opsets)


def _graph_types(graph: GraphProto, source: str) -> Types:
    """The types a graph and its subgraphs declare: inputs, outputs, ``value_info`` and
    initializers (names are unique in a model, subgraphs included)."""
    out: Types = {}
    for value in (*graph.input, *graph.output, *graph.value_info):
        text = _type(value.type)
        if text is not None:
            out[value.name] = [(text, source)]
    for tensor in graph.initializer:
        text = _elem_type_text(tensor.data_type)
        if text is not None:
            out.setdefault(tensor.name, [(f"tensor({text})", source)])
    for node in graph.node:
        for attr in node.attribute:
            for sub in (*([attr.g] if attr.HasField("g") else []), *attr.graphs):
                for name, found in _graph_types(sub, source).items():
                    out.setdefault(name, found)
    return out


def _inferred(model: ModelProto, declared: Types) -> Types:
    """The types onnx's type inference gives the names the model does not declare."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model, check_type=False, strict_mode=False)
    except Exception:  # onnx raises many kinds: then the declared types alone
        return {}
    found = _graph_types(inferred.graph, "inferred")
    return {name: found[name] for name in found.keys() - declared.keys()}


def _node_rows(
    case: str,
    node: NodeProto,
    scope: str,
    types: Types,
    opsets: Mapping[str, int],
    functions: Mapping[tuple[str, str], FunctionProto],
) -> list[dict[str, Any]]:
    domain = _domain(node.domain)
    opset = opsets.get(domain)
    base = {"case": case, "domain": domain, "op_type": node.op_type, "opset": opset}
    schema = _schema(node.op_type, opset, domain)
    if schema is None:
        kind = "local function" if (domain, node.op_type) in functions else "unknown"
        return [{**base, "since_version": None, "schema": kind, "scope": scope}]
    base.update(since_version=schema.since_version, schema="onnx", scope=scope)
    allowed = _allowed(schema)
    rows = []
    for param, name in _formal_names(schema, node):
        if param not in allowed:
            continue  # a fixed type: no choice to cover
        found: list[tuple[str | None, str | None]] = [*types.get(name, ())]
        for text, source in found or [(None, None)]:
            rows.append(
                {
                    **base,
                    "type_param": param,
                    "type": text,
                    "dtype": _dtype(text),
                    "allowed": None if text is None else text in allowed[param],
                    "type_source": source,
                }
            )
    return rows or [base]


def _formal_names(schema: defs.OpSchema, node: NodeProto) -> Iterator[tuple[str, str]]:
    """Each of the node's input and output names with its formal parameter's type string
    (a variadic last parameter takes the names after it); omitted optional ones skipped."""
    variadic = defs.OpSchema.FormalParameterOption.Variadic
    for formals, names in ((schema.inputs, node.input), (schema.outputs, node.output)):
        for i, name in enumerate(names):
            if not name:
                continue
            if i < len(formals):
                yield formals[i].type_str, name
            elif formals and formals[-1].option == variadic:
                yield formals[-1].type_str, name


def _distinct(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows once each (a case that runs an operator twice on one type exercises it
    once), in the order first met."""
    seen: dict[tuple[Any, ...], dict[str, Any]] = {}
    for row in rows:
        seen.setdefault(tuple(row.get(f.name) for f in CASE_SCHEMA), row)
    return list(seen.values())


# --- schemas -------------------------------------------------------------------------------


def _allowed(schema: defs.OpSchema) -> dict[str, frozenset[str]]:
    """Each type constraint of ``schema`` and the types it allows, in one spelling."""
    key = (schema.domain, schema.name, schema.since_version)
    found = _ALLOWED.get(key)
    if found is None:
        found = {
            c.type_param_str: frozenset(_canonical(t) for t in c.allowed_type_strs)
            for c in schema.type_constraints
        }
        _ALLOWED[key] = found
    return found


#: The allowed types of each schema met, by (domain, name, since_version): the installed
#: onnx's, fixed while it runs.
_ALLOWED: dict[tuple[str, str, int], dict[str, frozenset[str]]] = {}


@functools.lru_cache(maxsize=4096)
def _schema(op_type: str, opset: int | None, domain: str) -> defs.OpSchema | None:
    """The schema of ``op_type`` at ``opset`` of ``domain``, None if onnx has none."""
    if opset is None:
        return None
    try:
        return defs.get_schema(op_type, opset, "" if domain == DEFAULT_DOMAIN else domain)
    except defs.SchemaError:
        return None


def _spec_schemas(imported: Mapping[str, int]) -> Iterator[defs.OpSchema]:
    """Every operator onnx defines at each imported domain's opset, not deprecated."""
    names: dict[str, set[str]] = {}
    for every in defs.get_all_schemas_with_history():
        names.setdefault(_domain(every.domain), set()).add(every.name)
    for domain, opset in sorted(imported.items()):
        for name in sorted(names.get(domain, ())):
            schema = _schema(name, opset, domain)
            if schema is not None and not schema.deprecated:
                yield schema


def _warn_unknown_opsets(imported: Mapping[str, int]) -> None:
    known = {_domain(d): top for d, (_, top) in defs.C.schema_version_map().items()}
    for domain, opset in sorted(imported.items()):
        if domain in known and opset > known[domain]:
            warnings.warn(
                f"the corpus imports {domain} opset {opset}, the installed onnx "
                f"{onnx.__version__} knows up to {known[domain]}: operators newer than that "
                "are counted as unknown; install a newer onnx to count them",
                OnnxArrowWarning,
                stacklevel=3,
            )


# --- the tables ----------------------------------------------------------------------------


def _operators(
    spec: list[defs.OpSchema], exercised: list[dict[str, Any]], made: dict[str, Any]
) -> pa.Table:
    rows: dict[tuple[Any, ...], dict[str, Any]] = {}
    for schema in spec:
        key = (_domain(schema.domain), schema.name, schema.since_version)
        rows[key] = _aggregate(key, "onnx", True, deprecated=False)
    for row in exercised:
        key = (row["domain"], row["op_type"], row["since_version"])
        if key not in rows:
            deprecated = row["schema"] == "onnx" and _deprecated(row)
            rows[key] = _aggregate(key, row["schema"], False, deprecated=deprecated)
        rows[key]["cases"].add(row["case"])
    return _table(_finished(rows.values()), OPERATOR_SCHEMA, made)


def _types(
    spec: list[defs.OpSchema], exercised: list[dict[str, Any]], made: dict[str, Any]
) -> pa.Table:
    rows: dict[tuple[Any, ...], dict[str, Any]] = {}
    for schema in spec:
        for constraint in schema.type_constraints:
            for text in sorted({_canonical(t) for t in constraint.allowed_type_strs}):
                key: tuple[Any, ...] = (_domain(schema.domain), schema.name)
                key += (schema.since_version, constraint.type_param_str, text)
                rows[key] = _aggregate(key, "onnx", True, allowed=True)
    for row in exercised:
        key = (row["domain"], row["op_type"], row["since_version"])
        key += (row.get("type_param"), row.get("type"))
        if key not in rows:
            if row["schema"] == "onnx" and (key[3] is None or key[4] is None):
                continue  # a type no source gives: in the cases table, no pair
            rows[key] = _aggregate(key, row["schema"], False, allowed=row.get("allowed"))
        rows[key]["cases"].add(row["case"])
    return _table(_finished(rows.values()), TYPE_SCHEMA, made)


def _aggregate(key: tuple[Any, ...], schema: str, in_spec: bool, **more: Any) -> dict[str, Any]:
    names = ("domain", "op_type", "since_version", "type_param", "type")
    row = dict(zip(names, key, strict=False))
    if len(key) == 5:
        row["dtype"] = _dtype(key[4])
    return {**row, "schema": schema, "in_spec": in_spec, **more, "cases": set()}


def _finished(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    out = [{**r, "cases": sorted(r["cases"]), "case_count": len(r["cases"])} for r in rows]
    return sorted(out, key=lambda r: tuple((v is None, v) for v in _sort_key(r)))


def _sort_key(row: Mapping[str, Any]) -> tuple[Any, ...]:
    names = ("domain", "op_type", "since_version", "type_param", "type")
    return tuple(row.get(name) for name in names)


def _deprecated(row: Mapping[str, Any]) -> bool:
    schema = _schema(row["op_type"], row["opset"], row["domain"])
    return bool(schema is not None and schema.deprecated)


def _table(rows: list[dict[str, Any]], schema: pa.Schema, made: dict[str, Any]) -> pa.Table:
    metadata = {COVERAGE_METADATA_KEY: json.dumps(made, sort_keys=True)}
    columns = {f.name: [r.get(f.name) for r in rows] for f in schema}
    return pa.table(columns, schema=schema.with_metadata(metadata))


# --- types in ONNX's notation --------------------------------------------------------------


def _domain(domain: str) -> str:
    return domain or DEFAULT_DOMAIN


def _imports(opset_import: Iterable[Any]) -> dict[str, int]:
    return {_domain(o.domain): int(o.version) for o in opset_import}


def _type(type_proto: TypeProto) -> str | None:
    """A declared type in ONNX's notation; None where it says no element type."""
    if type_proto.WhichOneof("value") is None:
        return None
    text = onnx_type_string(type_proto)
    return None if "undefined" in text else text


def _elem_type_text(data_type: int) -> str | None:
    text = onnx_type_string(onnx.helper.make_tensor_type_proto(data_type, None))
    return None if "undefined" in text else text[len("tensor(") : -1]


_BARE_MAP_VALUE: Final = re.compile(r"map\((\w+),(\w+)\)")
_INNERMOST: Final = re.compile(r"(?:tensor|sparse_tensor)\((\w+)\)")


def _canonical(text: str) -> str:
    """A type in one spelling: no spaces, a map's bare value type as the tensor it means
    (the schemas write ``seq(map(string, float))`` for ``seq(map(string,tensor(float)))``)."""
    text = text.replace(" ", "")
    return _BARE_MAP_VALUE.sub(r"map(\1,tensor(\2))", text)


def _dtype(text: str | None) -> str | None:
    if text is None:
        return None
    found = _INNERMOST.findall(text)
    return found[-1] if found else None
