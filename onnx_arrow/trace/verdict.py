"""The verdict of a trace: the first node, in topological order, whose outputs diverge
while every value it reads agrees (the node where the two backends part ways) and whose
divergence reaches a graph output the case checks (through values that diverge too), its
inputs' and outputs' worst elements, the later divergences it explains (values of nodes
that read one of its divergent outputs, directly or through other divergent values),
those it does not (nodes that diverge on their own, and what follows from them), and,
apart, the divergent values whose divergence reaches no output the case checks (a
Dropout mask nothing reads, a value whose difference a later node absorbs).
"""

from __future__ import annotations

from collections.abc import Sequence
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
    #: Values that diverge but whose divergence reaches no graph output the case checks
    #: (nothing checked reads them, or what reads them agrees again); not in ``explains``
    #: or ``unexplained``.
    unchecked: list[str] = field(default_factory=list)
    #: The graph outputs the case checks (those its data set has expected values for).
    checked: list[str] = field(default_factory=list)
    #: The node making the first value of ``unchecked`` (``#94 conv1 (Relu)``).
    first_apart: str | None = None

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
        fields.setdefault("unchecked", [])
        fields.setdefault("checked", [])
        fields.setdefault("first_apart", None)
        fields["inputs"] = [ValueSummary(**v) for v in doc.get("inputs", [])]
        fields["outputs"] = [ValueSummary(**v) for v in doc.get("outputs", [])]
        return cls(**fields)

    def lines(self) -> list[str]:
        """The verdict in words, a line each."""
        if self.position is None:
            if not self.diverging:
                return ["no value diverges"]
            outputs = ", ".join(self.checked) or "none"
            return [
                f"no divergence reaches an output the case checks ({outputs})",
                *self._unchecked_lines(),
            ]
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
        return out + self._unchecked_lines()

    def _unchecked_lines(self) -> list[str]:
        if not self.unchecked:
            return []
        shown = ", ".join(self.unchecked[:10])
        more = f" ... {len(self.unchecked) - 10} more" if len(self.unchecked) > 10 else ""
        return [
            f"diverging apart, reaching no output the case checks: "
            f"{_count(len(self.unchecked), 'value')}: {shown}{more}",
            f"  the first made by node {self.first_apart}",
        ]


def _count(n: int, what: str) -> str:
    return f"{n} {what}" if n == 1 else f"{n} {what}s"


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


def find_verdict(
    plan: TracePlan,
    summaries: dict[str, ValueSummary],
    checked: Sequence[str] | None = None,
) -> Verdict:
    """The first node of ``plan`` whose outputs diverge while its inputs agree (by
    ``summaries``, one per traced value) and whose divergence reaches one of the graph
    outputs ``checked`` (all the graph's outputs when None), and what it explains: the
    divergent values of later nodes that read one of its divergent outputs, or a value so
    explained.  Divergent values that reach no checked output are listed apart."""
    if checked is None:
        checked = [o.name for o in plan.model.graph.output]
    diverging = [v for v in plan.values if summaries[v].diverges]
    reaching = _reaching(plan, summaries, checked)
    verdict = Verdict(
        diverging=len(diverging),
        checked=list(checked),
        unchecked=[v for v in diverging if v not in reaching],
    )
    if verdict.unchecked:
        apart = plan.nodes[plan.producer[verdict.unchecked[0]]]
        verdict.first_apart = f"#{apart.position} {apart.name} ({apart.op_type})"
    for node in plan.nodes:
        if not any(o in reaching for o in node.outputs):
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
            bad = [o for o in later.outputs if o in reaching]
            if any(i in tainted for i in later.inputs):
                verdict.explains.extend(bad)
                tainted.update(o for o in later.outputs if summaries[o].diverges)
            else:
                verdict.unexplained.extend(bad)
        verdict.unexplained.extend(
            o for n in plan.nodes[: node.position] for o in n.outputs if o in reaching
        )
        break
    return verdict


def _reaching(
    plan: TracePlan, summaries: dict[str, ValueSummary], checked: Sequence[str]
) -> set[str]:
    """The divergent values whose divergence reaches a value of ``checked``: a checked
    output that diverges, and the divergent values read by a node that makes one."""
    reaching = {v for v in checked if v in summaries and summaries[v].diverges}
    for node in reversed(plan.nodes):
        if any(o in reaching for o in node.outputs):
            reaching.update(i for i in node.inputs if i in summaries and summaries[i].diverges)
    return reaching
