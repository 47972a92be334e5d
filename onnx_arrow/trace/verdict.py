"""The verdict of a trace: the first node, in topological order, whose outputs diverge
while every value it reads agrees (the node where the two backends part ways), its
inputs' and outputs' worst elements, the later divergences it explains (values of nodes
that read one of its divergent outputs, directly or through other divergent values) and
those it does not (nodes that diverge on their own, and what follows from them).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from onnx_arrow.trace.plan import TracePlan

__all__ = ["ValueSummary", "Verdict", "find_verdict"]


@dataclass(frozen=True)
class ValueSummary:
    """What a trace keeps of one value once its data is written: how it compared."""

    name: str
    status: str
    diverges: bool
    dtype: str | None = None
    shape: list[int] | None = None
    max_abs_error: float | None = None
    max_rel_error: float | None = None
    max_ulp: int | None = None
    max_ulp_index: str | None = None
    #: The element furthest beyond the rule: where, A's value, B's value.
    worst_index: str | None = None
    worst_backend: str | None = None
    worst_against: str | None = None
    detail: str | None = None
    #: For a value fed to the model (a graph input or initializer): the same on both sides.
    fed: bool = False


@dataclass
class Verdict:
    """Where the two backends part ways, or that they do not (``position`` None)."""

    position: int | None = None
    node: str | None = None
    op_type: str | None = None
    inputs: list[ValueSummary] = field(default_factory=list)
    outputs: list[ValueSummary] = field(default_factory=list)
    #: Values of later nodes that diverge and read a divergent value it makes, directly or
    #: through other divergent values.
    explains: list[str] = field(default_factory=list)
    #: Values that diverge and are not explained by it (nodes that diverge on their own).
    unexplained: list[str] = field(default_factory=list)
    #: Values that diverge in all (the node's own outputs included).
    diverging: int = 0

    @property
    def found(self) -> bool:
        """Whether a node was found."""
        return self.position is not None

    def to_json(self) -> dict[str, Any]:
        """The verdict as JSON, for the trace's metadata."""
        return asdict(self)

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> Verdict:
        """The verdict a trace's metadata keeps."""
        fields = dict(doc)
        fields["inputs"] = [ValueSummary(**v) for v in doc.get("inputs", [])]
        fields["outputs"] = [ValueSummary(**v) for v in doc.get("outputs", [])]
        return cls(**fields)

    def lines(self) -> list[str]:
        """The verdict in words, a line each."""
        if self.position is None:
            if self.diverging:
                return [
                    f"{self.diverging} values diverge, but none on a node whose inputs all "
                    "agree (see the trace's rows)"
                ]
            return ["no value diverges"]
        out = [f"first divergent node: #{self.position} {self.node} ({self.op_type})"]
        for role, values in (("input", self.inputs), ("output", self.outputs)):
            for v in values:
                out.append(f"  {role} {v.name}: {_summary_text(v)}")
        if self.explains:
            shown = ", ".join(self.explains[:10])
            more = f" ... {len(self.explains) - 10} more" if len(self.explains) > 10 else ""
            out.append(f"  explains {len(self.explains)} later divergences: {shown}{more}")
        if self.unexplained:
            shown = ", ".join(self.unexplained[:10])
            out.append(f"  does not explain {len(self.unexplained)}: {shown}")
        return out


def _summary_text(v: ValueSummary) -> str:
    if v.fed:
        return "fed (the same on both sides)"
    what = f"{v.status}"
    if v.dtype is not None:
        what += f", {v.dtype.lower()} {v.shape}"
    if v.max_ulp is not None:
        at = f" at {v.max_ulp_index}" if v.max_ulp_index else ""
        what += f", max {v.max_ulp} ULP{at}"
    if v.max_abs_error is not None:
        what += f", max abs error {v.max_abs_error:.3g}"
    if v.worst_index is not None:
        what += f", worst {v.worst_index}: {v.worst_backend} vs {v.worst_against}"
    return what


def find_verdict(plan: TracePlan, summaries: dict[str, ValueSummary]) -> Verdict:
    """The first node of ``plan`` whose outputs diverge while its inputs agree (by
    ``summaries``, one per traced value), and what it explains: the divergent values of
    later nodes that read one of its divergent outputs, or a value so explained."""
    diverging = [v for v in plan.values if summaries[v].diverges]
    verdict = Verdict(diverging=len(diverging))
    for node in plan.nodes:
        if not any(summaries[o].diverges for o in node.outputs):
            continue
        if any(summaries[i].diverges for i in node.inputs if i in summaries):
            continue
        verdict.position, verdict.node, verdict.op_type = node.position, node.name, node.op_type
        verdict.inputs = [
            summaries.get(i) or ValueSummary(i, "match", False, fed=True) for i in node.inputs
        ]
        verdict.outputs = [summaries[o] for o in node.outputs]
        tainted = {o for o in node.outputs if summaries[o].diverges}
        for later in plan.nodes[node.position + 1 :]:
            bad = [o for o in later.outputs if summaries[o].diverges]
            if any(i in tainted for i in later.inputs):
                verdict.explains.extend(bad)
                tainted.update(bad)
            else:
                verdict.unexplained.extend(bad)
        verdict.unexplained.extend(
            o for n in plan.nodes[: node.position] for o in n.outputs if summaries[o].diverges
        )
        break
    return verdict
