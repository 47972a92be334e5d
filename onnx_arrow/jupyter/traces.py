"""The display of a trace store (:class:`TraceView`): what was traced and how it was
judged, every node's divergence in topological order as a picture, the values that
diverge, and the verdict node's inputs and outputs on both backends side by side with
their ULP picture."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any, Final

import numpy as np
import pyarrow.compute as pc

from onnx_arrow.corpus.arguments import type_name
from onnx_arrow.errors import OnnxArrowError, UnsupportedTypeError
from onnx_arrow.jupyter.pictures import picture_of, side_by_side
from onnx_arrow.jupyter.render import render_html, render_text
from onnx_arrow.jupyter.sections import Section
from onnx_arrow.text import number

__all__ = ["TraceView", "trace_view"]

#: Divergent values a view lists before a count of the rest.
MAX_LISTED: Final = 20

_COLUMNS: Final = (
    "side", "position", "node", "op_type", "value", "status", "diverges", "max_ulp",
    "max_abs_error",
)  # fmt: skip


class TraceView:
    """A trace store, displayed: made by :func:`trace_view`; reads the store when shown."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        # the trace package imports the store and compare: only once a trace is shown
        from onnx_arrow.trace.store import read_trace_metadata

        if not isinstance(path, str | os.PathLike):
            raise UnsupportedTypeError(
                f"expected the path of a trace store, got {type_name(path)}",
                where="trace_view(path)",
            )
        self.path = Path(path)
        self.metadata = read_trace_metadata(self.path)

    def sections(self) -> list[Section]:
        """The facts the displays show."""
        from onnx_arrow.trace.store import read_trace
        from onnx_arrow.trace.verdict import Verdict

        meta = self.metadata
        verdict = Verdict.from_json(meta["verdict"])
        rule = (
            f"at most {meta['max_ulp']} ULP"
            if meta["rule"] == "ulp"
            else f"rtol {number(meta['rtol'])}, atol {number(meta['atol'])} "
            f"({meta['tolerance_source']})"
        )
        head = Section(
            f"trace of {meta['case']}",
            [
                ("trace", str(self.path)),
                ("backend", f"{meta['backend']['name']} ({meta['backend']['runs']})"),
                ("against", f"{meta['against']['name']} ({meta['against']['runs']})"),
                ("rule", rule),
                ("nodes", str(meta["nodes"])),
                ("values", f"{meta['values']}, in {meta['chunks']} chunks of {meta['chunk']}"),
                ("verdict", verdict.lines()[0]),
            ],
        )
        if meta["untraced"]:
            head.fields.append(("not traced", "; ".join(meta["untraced"])))
        rows, _ = read_trace(self.path, list(_COLUMNS))
        rows = rows.filter(pc.equal(rows.column("side"), "against")).to_pylist()
        out = [head, self._divergence(rows, verdict.position)]
        diverging = [r for r in rows if r["diverges"]]
        if diverging:
            shown = diverging[:MAX_LISTED]
            table = [
                [str(r["position"]), str(r["node"]), str(r["op_type"]), str(r["value"]),
                 str(r["status"]), _text(r["max_ulp"]), _text(r["max_abs_error"])]
                for r in shown
            ]  # fmt: skip
            section = Section(
                f"values that diverge: {len(diverging)}",
                table=(["#", "node", "op type", "value", "status", "max ULP", "max abs"], table),
                level=1,
            )
            if len(diverging) > len(shown):
                section.note = f"and {len(diverging) - len(shown)} more"
            out.append(section)
        if verdict.position is not None:
            out += self._verdict_values(verdict)
        return out

    def _divergence(self, rows: list[dict[str, Any]], position: int | None) -> Section:
        """Each value's largest ULP distance, node by node in topological order."""
        ulps = np.array(
            [math.nan if r["max_ulp"] is None else math.log2(1 + r["max_ulp"]) for r in rows]
        )
        section = Section("divergence by node, in topological order", level=1)
        picture = picture_of(ulps.reshape(1, -1)) if ulps.size else None
        if picture is not None:
            picture.caption = (
                f"log2(1 + max ULP) of each of the {ulps.size} values, left to right, "
                f"row by row ({picture.caption}); NaN: not floats of one dtype"
            )
            section.picture = picture
        if position is not None:
            section.note = f"the first divergent node is #{position}"
        return section

    def _verdict_values(self, verdict: Any) -> list[Section]:
        from onnx_arrow.trace.store import read_value

        out = [Section(f"the first divergent node: #{verdict.position} {verdict.node} "
                       f"({verdict.op_type})", level=1)]  # fmt: skip
        for role, values in (("input", verdict.inputs), ("output", verdict.outputs)):
            for v in values:
                fields = [("status", v.status)]
                if v.fed:
                    out.append(Section(f"{role} {v.name}: fed, the same on both sides", level=2))
                    continue
                if v.max_ulp is not None:
                    fields.append(("max ULP", f"{v.max_ulp} at {v.max_ulp_index}"))
                if v.worst_index is not None:
                    fields.append(
                        ("worst", f"{v.worst_index}: {v.worst_backend} vs {v.worst_against}")
                    )
                section = Section(f"{role} {v.name}", fields, level=2)
                out.append(section)
                try:
                    a = read_value(self.path, v.name, "backend")
                    b = read_value(self.path, v.name, "against")
                except OnnxArrowError as exc:  # a container has no data: said, not raised
                    section.note = str(exc)
                    continue
                pair = side_by_side(a, b, ("backend", "against"))
                pair.level = 3
                out.append(pair)
        return out

    def _repr_html_(self) -> str:
        return render_html(self.sections())

    def __repr__(self) -> str:
        return render_text(self.sections())


def _text(value: Any) -> str:
    return "" if value is None else number(value)


def trace_view(path: str | os.PathLike[str]) -> TraceView:
    """A displayable trace store (see :class:`TraceView`), written by
    :func:`onnx_arrow.trace.trace` or ``onnx-arrow trace``.

    Raises
    ------
    CompareError
        If the file is not a trace store.
    UnsupportedTypeError
        If ``path`` is not a path.
    """
    return TraceView(path)
