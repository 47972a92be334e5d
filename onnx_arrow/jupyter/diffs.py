"""The display of one path of two stores side by side (:class:`DiffView`)."""

from __future__ import annotations

import numpy as np

from onnx_arrow.corpus.rows import StoredValue
from onnx_arrow.corpus.store import Store, as_store
from onnx_arrow.jupyter.pictures import side_by_side
from onnx_arrow.jupyter.render import render_html, render_text
from onnx_arrow.jupyter.sections import Section
from onnx_arrow.jupyter.values import value_sections

__all__ = ["DiffView", "diff_view"]


class DiffView:
    """One path of two stores side by side: each side's facts, and for a tensor of one
    shape on both sides the old, new and difference pictures (the ULP distance per element
    for floats, NaN where exactly one side is NaN; 1 where other values differ).

    Made by :func:`diff_view`; reads the path's case from both stores when displayed.
    """

    def __init__(self, old: Store, new: Store, path: str) -> None:
        self.old, self.new, self.path = old, new, path

    def _value(self, store: Store) -> StoredValue | None:
        rows = store.read_columns(["test_case", "path"], roles=["value"])
        paths = rows.column("path").to_pylist()
        if self.path not in paths:
            return None
        case = rows.column("test_case")[paths.index(self.path)].as_py()
        return next((v for v in store.values(case) if v.path == self.path), None)

    def sections(self) -> list[Section]:
        """The facts the displays show."""
        old, new = self._value(self.old), self._value(self.new)
        head = Section(
            f"diff of {self.path!r}",
            [("old", str(self.old.path)), ("new", str(self.new.path))],
        )
        out = [head]
        arrays = []
        for side, value in (("old", old), ("new", new)):
            if value is None:
                out.append(Section(f"{side}: no value at this path", level=1))
                continue
            array = value.to_numpy(strings="bytes")
            sections = value_sections(array, f"{side} ({value.onnx_type})", level=1)
            for section in sections:
                section.picture = None  # shown below, beside the other side's
            out += sections
            arrays.append(array)
        if len(arrays) == 2 and all(isinstance(a, np.ndarray) for a in arrays):
            out.append(side_by_side(arrays[0], arrays[1], ("old", "new")))
        return out

    def _repr_html_(self) -> str:
        return render_html(self.sections())

    def __repr__(self) -> str:
        return render_text(self.sections())


def diff_view(old: Store | str, new: Store | str, path: str) -> DiffView:
    """A displayable comparison of one path of two stores (see :class:`DiffView`): a
    row of :func:`onnx_arrow.diff.diff`'s report, shown."""
    return DiffView(
        as_store(old, where="diff_view(old)"),
        as_store(new, where="diff_view(new)"),
        path,
    )
