"""Tracing a case: its model run on two backends a chunk of intermediate values at a time,
each value compared as ``compare`` compares an output (the case's tolerance, or a ULP
budget), the rows written to a trace store as they come, and the verdict found.

Peak memory is one chunk's values (on both sides) and their rows, never the model's
every value at once: a backend is given the model with one chunk as its outputs, and what
it gives is written and let go before the next chunk runs.  Each chunk is a run of the
model (up to the values asked for: a runtime that prunes runs less), so ``chunk`` trades
time for memory.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Unpack

import onnx
from onnx import ModelProto

import onnx_arrow
from onnx_arrow.compare.backends import Backend, BackendLike, describe_backend, resolve_backend
from onnx_arrow.compare.plans import Plan, PlanSettings, plan_of, plan_provenance
from onnx_arrow.compare.report import store_digest
from onnx_arrow.compare.runs import DataSetRun, data_sets_of, kept_message
from onnx_arrow.compare.similarity import Diff, compare_value, detail_text
from onnx_arrow.core.model import graph_values
from onnx_arrow.corpus.store import Store, as_store
from onnx_arrow.errors import CompareError
from onnx_arrow.reports import Report
from onnx_arrow.trace.exposed import run_chunk
from onnx_arrow.trace.plan import TracePlan, plan_trace
from onnx_arrow.trace.repro import check_repro_folder, write_repro
from onnx_arrow.trace.store import TracedValue, TraceWriter, describe_value, read_trace
from onnx_arrow.trace.verdict import ValueSummary, Verdict, find_verdict

__all__ = ["DEFAULT_CHUNK", "Trace", "case_feed", "checked_chunk", "checked_outputs", "trace"]

#: Values exposed at once unless ``chunk`` says otherwise.
DEFAULT_CHUNK = 64


@dataclass
class Trace:
    """A trace written: where, its verdict and the description its metadata keeps."""

    path: Path
    verdict: Verdict
    metadata: dict[str, Any] = field(repr=False)
    #: The folder of the repro case, if one was asked for and written.
    repro: Path | None = None

    def report(self, columns: Sequence[str] | None = None) -> Report:
        """The trace store's rows (``columns`` of them, all by default) as a report of
        kind ``trace``, its provenance the trace's metadata (the store and its digest,
        the backends, the rule, the plan, the verdict)."""
        rows, metadata = read_trace(self.path, columns)
        return Report.of(rows, {"kind": "trace", **metadata})


def case_feed(
    store: Store, case: str, data_set: int | None
) -> tuple[DataSetRun, ModelProto, dict[str, Any]]:
    """The data set ``data_set`` of ``case`` (its first when None), the case's model and the
    inputs the data set feeds.

    Raises
    ------
    CompareError
        If the case has no model, no such data set, or an input the store kept as bytes.
    """
    runs = list(data_sets_of(store, case))
    usable = [r for r in runs if r.model is not None and r.skipped is None]
    if data_set is not None:
        usable = [r for r in usable if r.data_set == data_set]
    if not usable:
        why = "; ".join(sorted({r.skipped for r in runs if r.skipped})) or "no data set matches"
        asked = "" if data_set is None else f" data set {data_set}"
        have = sorted(r.data_set for r in runs if r.data_set is not None)
        raise CompareError(
            f"case {case!r}{asked} cannot be traced: {why} (its data sets: {have or 'none'})",
            where=str(store.path),
        )
    run = usable[0]
    model = run.model
    if model is None:  # usable runs have one; said for the type checker
        raise CompareError(f"case {case!r} has no model", where=str(store.path))
    unfed = [p for (io, _), p in sorted(run.kept_as_bytes.items()) if io == "input"]
    if unfed:
        raise CompareError(kept_message(unfed[0]), where=str(store.path))
    names = [i.name for i in graph_values(model, "input")]
    feed = {
        names[k] if k < len(names) else f"input_{k}": v.to_numpy()
        for k, v in sorted(run.inputs.items())
    }
    feed.update(run.made_inputs)
    return run, model, feed


def checked_outputs(run: DataSetRun, model: ModelProto) -> list[str]:
    """The graph outputs of ``model`` that the data set ``run`` checks: those it has an
    expected value for (or a file kept as bytes, an error of its own)."""
    kept = {k for io, k in run.kept_as_bytes if io == "output"}
    return [
        info.name
        for k, info in enumerate(graph_values(model, "output"))
        if k in run.expected or k in kept
    ]


def trace(
    store: Store | str | os.PathLike[str],
    case: str,
    backend: BackendLike,
    out: str | os.PathLike[str],
    *,
    against: BackendLike = None,
    data_set: int | None = None,
    chunk: int = DEFAULT_CHUNK,
    repro: str | os.PathLike[str] | None = None,
    plan: Plan | None = None,
    progress: Callable[[str], None] | None = None,
    runtime: str | None = None,
    **settings: Unpack[PlanSettings],
) -> Trace:
    """Trace ``case`` of ``store`` on ``backend`` (A) against ``against`` (B, the
    reference evaluator unless given): every value its main graph's nodes make, exposed
    ``chunk`` at a time, run on both, compared and written to the trace store ``out``.

    Parameters
    ----------
    store
        A corpus store, or its path.
    case
        The case's name (``node/test_abs``).
    backend, against
        Anything :func:`~onnx_arrow.compare.resolve_backend` takes.
    out
        The trace store to write (Parquet); replaced if it exists.
    data_set
        Which data set to feed (N of ``test_data_set_N``); the case's first when None.
    chunk
        Values exposed (and held) at once.
    repro
        A folder to write the first divergent node to, as a case of its own (see
        :func:`~onnx_arrow.trace.repro.write_repro`); nothing is written when no node
        diverges.
    plan, **settings
        How values are judged, as ``compare`` judges an output (a
        :class:`~onnx_arrow.compare.Plan`, or its settings as keywords: ``rtol``,
        ``atol``, ``max_ulp``, ``ulp_floor``, tolerance and ULP patterns); its skip,
        xfail and keep_actual settings do not apply to a trace.
    progress
        Called with ``chunk K of N`` as each chunk of values is traced.
    runtime
        ``NAME==VERSION``: the runtime ``backend`` runs (a runner's, whose command says no
        version), recorded in the trace's provenance as compare records it.

    Returns
    -------
    Trace
        Where it was written, and its verdict.

    Raises
    ------
    CompareError
        If the case cannot be traced (no model, no such data set) or an argument is bad
        (the repro folder is not new or empty, among them).
    TraceError
        If a backend cannot run the model with its intermediate values as outputs.
    """
    store = as_store(store, where="trace(store)")
    side_a = resolve_backend(backend)
    side_b = resolve_backend(against)
    name_a = describe_backend(side_a, runtime)
    name_b = describe_backend(side_b)
    chunk = checked_chunk(chunk)
    judged = plan_of(plan, settings, where="trace")
    if repro is not None:
        check_repro_folder(repro)
    run, model, feed = case_feed(store, case, data_set)
    nodes = plan_trace(model)
    expect = judged.expectations(store.metadata.get("onnx_version"))
    rtol, atol, source = expect.tolerance_for(case, run.tolerance, judged.rtol, judged.atol)
    budget = expect.ulp_for(case, judged.max_ulp, source)
    ulp_floor = judged.ulp_floor
    writer = TraceWriter(out)
    started = time.perf_counter()
    try:
        summaries = _trace_chunks(
            nodes, feed, (side_a, name_a["name"]), (side_b, name_b["name"]), writer,
            case=case, data_set=run.data_set, chunk=chunk, rule=(rtol, atol, budget, ulp_floor),
            progress=progress,
        )  # fmt: skip
        verdict = find_verdict(nodes, summaries, checked_outputs(run, model))
        chunks = sum(1 for _ in nodes.chunks(chunk))
        metadata = {
            **_provenance(store),
            "case": case,
            "data_set": run.data_set,
            "backend": name_a,
            "against": name_b,
            "rule": "ulp" if budget is not None else "tolerance",
            "rtol": rtol,
            "atol": atol,
            "tolerance_source": source,
            "max_ulp": None if budget is None else budget[0],
            "ulp_floor": ulp_floor,
            "nodes": len(nodes.nodes),
            "values": len(nodes.values),
            "chunk": chunk,
            "chunks": chunks,
            "untyped": [v for v in nodes.values if nodes.types.get(v) is None],
            "untraced": nodes.untraced,
            "seconds": round(time.perf_counter() - started, 3),
            "verdict": verdict.to_json(),
            "plan": plan_provenance(judged.rules(store.metadata.get("onnx_version")), [case]),
        }
        writer.close(metadata)
    except BaseException:
        writer.abort()
        raise
    result = Trace(Path(out), verdict, metadata)
    if repro is not None and verdict.position is not None:
        result.repro = write_repro(repro, nodes, verdict.position, feed, side_b, name_b["name"])
    return result


def _provenance(store: Store) -> dict[str, Any]:
    """What a trace says it was made from (as a compare report says it)."""
    return {
        "kind": "trace",
        "onnx_arrow_version": onnx_arrow.__version__,
        "onnx_version": onnx.__version__,
        "store": [str(p) for p in store.parts],
        "store_digest": store_digest(store),
        "store_onnx_version": store.metadata.get("onnx_version"),
        "store_created_by": store.metadata.get("created_by"),
    }


def _trace_chunks(
    plan: TracePlan,
    feed: dict[str, Any],
    a: tuple[Backend, str],
    b: tuple[Backend, str],
    writer: TraceWriter,
    *,
    case: str,
    data_set: int | None,
    chunk: int,
    rule: tuple[float, float, tuple[int, str] | None, float],
    progress: Callable[[str], None] | None,
) -> dict[str, ValueSummary]:
    rtol, atol, budget, ulp_floor = rule
    max_ulp = None if budget is None else budget[0]
    summaries: dict[str, ValueSummary] = {}
    where = {v: (n, k) for n in plan.nodes for k, v in enumerate(n.outputs)}
    chunks = list(plan.chunks(chunk))
    for k, names in enumerate(chunks):
        what = (
            f"{len(names)} of its values (chunk {k + 1} of {len(chunks)}: "
            f"{names[0]!r} .. {names[-1]!r})"
        )
        got_a = run_chunk(a[0], a[1], plan, names, feed, what)
        got_b = run_chunk(b[0], b[1], plan, names, feed, what)
        rows: list[TracedValue] = []
        for name, value_a, value_b in zip(names, got_a, got_b, strict=True):
            diff = compare_value(value_b, value_a, rtol, atol, max_ulp=max_ulp, ulp_floor=ulp_floor)
            node, index = where[name]
            summary = _summary(name, diff, value_b)
            summaries[name] = summary
            agree = not any(summaries[i].diverges for i in node.inputs if i in summaries)
            common = {
                "case": case,
                "data_set": data_set,
                "position": node.position,
                "node": node.name,
                "op_type": node.op_type,
                "output_index": index,
                "value": name,
                "status": diff.status,
                "diverges": summary.diverges,
                "inputs_agree": agree,
                "rule": "ulp" if diff.by_ulp else "tolerance",
                "rtol": rtol,
                "atol": atol,
                "max_ulp_budget": max_ulp,
                "max_abs_error": diff.max_abs,
                "max_rel_error": diff.max_rel,
                "max_ulp": diff.max_ulp,
                "max_ulp_index": diff.max_ulp_index,
                "n_beyond": diff.beyond,
                "worst_index": summary.worst_index,
                "worst_backend": summary.worst_backend,
                "worst_against": summary.worst_against,
                "detail": summary.detail,
            }
            for side, backend_name, value in (
                ("backend", a[1], value_a),
                ("against", b[1], value_b),
            ):
                fields = {**common, "side": side, "backend": backend_name}
                rows.append(TracedValue(fields, value))
        writer.write(rows)
        del got_a, got_b, rows
        if progress is not None:
            progress(f"chunk {k + 1} of {len(chunks)}")
    return summaries


def _summary(name: str, diff: Diff, value_b: Any) -> ValueSummary:
    worst = diff.worst
    described = describe_value(value_b)
    return ValueSummary(
        name,
        diff.status,
        diff.status != "match",
        dtype=described.get("dtype"),
        shape=described.get("shape"),
        max_abs_error=diff.max_abs,
        max_rel_error=diff.max_rel,
        max_ulp=diff.max_ulp,
        max_ulp_index=diff.max_ulp_index,
        worst_index=None if worst is None else worst[1],
        worst_backend=None if worst is None else worst[3],
        worst_against=None if worst is None else worst[2],
        detail=detail_text(diff.details),
    )


def checked_chunk(chunk: object) -> int:
    """``chunk`` as a number of values, refused unless a whole number of 1 or more."""
    if isinstance(chunk, bool) or not isinstance(chunk, int) or chunk < 1:
        raise CompareError(f"chunk is {chunk!r}; expected a whole number of values of 1 or more")
    return chunk
