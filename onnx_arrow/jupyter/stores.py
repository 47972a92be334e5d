"""Displays of a store and of one of its cases: the store's facts, and a case's model,
declared inputs and outputs and values by data set (:class:`CaseView`)."""

from __future__ import annotations

from onnx import ModelProto

from onnx_arrow.core.model import declared_type_text, graph_values, op_types, opsets
from onnx_arrow.corpus.facts import store_facts
from onnx_arrow.corpus.rows import StoredValue
from onnx_arrow.corpus.store import Store, as_store
from onnx_arrow.jupyter.render import render_html, render_text
from onnx_arrow.jupyter.sections import Section
from onnx_arrow.jupyter.values import MAX_ITEMS, value_sections
from onnx_arrow.text import size

__all__ = ["CaseView", "case_view", "store_sections"]


def store_sections(store: Store) -> list[Section]:
    facts = store_facts(store)
    head = Section(
        f"onnx-arrow store {store.path.name!r}",
        [
            ("path", str(store.path)),
            ("format", facts.format),
            ("created by", facts.created_by),
            ("size", size(facts.nbytes)),
            ("row groups", str(facts.row_groups)),
            ("rows", str(facts.rows)),
            ("cases", str(facts.cases)),
            ("files", str(facts.files)),
            ("tensors", str(facts.tensors)),
        ],
    )
    cases = Section(
        "cases by kind",
        table=(["kind", "cases"], [[kind or "(none)", str(n)] for kind, n in facts.kinds]),
        level=1,
    )
    roles = facts.roles
    file_rows = [[r, str(roles[r])] for r in ("model", "value", "file", "element") if r in roles]
    roles_section = Section("rows by role", table=(["role", "rows"], file_rows), level=1)
    dtype_section = Section(
        "tensors by dtype",
        table=(
            ["dtype", "tensors", "elements"],
            [[name, str(n), str(facts.elements.get(name, 0))] for name, n in facts.dtypes.items()],
        ),
        level=1,
    )
    return [head, cases, roles_section, dtype_section]


class CaseView:
    """A case of a store, displayed: :func:`html` in notebooks, :func:`text` in ``repr``.

    Made by :func:`case_view`; reads the case when displayed.
    """

    def __init__(self, store: Store, case: str) -> None:
        self.store = store
        self.case = case

    def sections(self) -> list[Section]:
        """The facts the displays show."""
        model: ModelProto = self.store.model(self.case)
        head = Section(
            f"case {self.case!r}",
            [("store", str(self.store.path)),
             ("operators", ", ".join(op_types(model)) or "(none)"),
             ("opsets", opsets(model))],
        )  # fmt: skip
        declared = Section(
            "declared inputs and outputs",
            table=(
                ["io", "index", "name", "type"],
                [
                    [io, str(k), info.name, declared_type_text(info.type)]
                    for io in ("input", "output")
                    for k, info in enumerate(graph_values(model, io))
                ],
            ),
            level=1,
        )
        out = [head, declared]
        by_set: dict[int | None, list[StoredValue]] = {}
        for value in self.store.values(self.case):
            by_set.setdefault(value.data_set, []).append(value)
        order = sorted(by_set, key=lambda n: -1 if n is None else n)
        for n in order[:MAX_ITEMS]:
            values = sorted(by_set[n], key=lambda v: (v.io != "input", v.index))
            out.append(Section("values" if n is None else f"test_data_set_{n}", level=1))
            for value in values:
                name = value.name or f"{value.io} {value.index}"
                sections = value_sections(
                    value.to_numpy(strings="bytes"), f"{value.io} {name!r}", level=2
                )
                sections[0].fields.insert(0, ("onnx type", value.onnx_type))
                out += sections
        if len(order) > MAX_ITEMS:
            head.note = f"the first {MAX_ITEMS} of {len(order)} data sets are shown"
        return out

    def _repr_html_(self) -> str:
        return render_html(self.sections())

    def __repr__(self) -> str:
        return render_text(self.sections())


def case_view(store: Store | str, case: str) -> CaseView:
    """A displayable view of one case of ``store`` (a :class:`Store` or its path)."""
    store = as_store(store, where="case_view(store)")
    return CaseView(store, case)
