"""A case of a store as one object: :class:`StoredCase`, its model, its data sets by one
rule, the files the store kept as bytes (each with why), the inputs onnx's runner makes
for a model test without input files, its declarations and its own tolerance.

Built from the rows of one case, once: :meth:`Store.case
<onnx_arrow.corpus.Store.case>` from the row groups it reads, and
:func:`~onnx_arrow.corpus.cases_from_rows` from rows an engine hands back, by the same
functions here, so the two cannot drift.

The rule of the data sets: a data set per ``test_data_set_N`` folder (numbered N), and
one more, numbered None and listed first, of the values outside any such folder (a
``light/`` model's ``NAME_output_0.pb`` beside ``NAME.onnx``).  A data set of that kind
with expected outputs and no input files is fed as onnx's backend test runner feeds it:
inputs it makes (:attr:`CaseDataSet.made_inputs`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from onnx_arrow.core.model import contradiction, declared_type, graph_values, lfs_pointer
from onnx_arrow.corpus.arguments import check_model, checked_items
from onnx_arrow.corpus.digest import check_digest
from onnx_arrow.corpus.format import TOLERANCE_COLUMNS
from onnx_arrow.corpus.npz import BUNDLE_NAME, read_bundle, read_npy
from onnx_arrow.corpus.rows import StoredValue, contradictions
from onnx_arrow.corpus.sources import (
    Case,
    CorpusError,
    CorpusFile,
    Slot,
    Tolerance,
    value_slot,
    value_slots,
)

if TYPE_CHECKING:
    from onnx import ModelProto

__all__ = [
    "CASE_COLUMNS",
    "CaseDataSet",
    "CaseHead",
    "KeptFile",
    "StoredCase",
    "case_data_sets",
    "case_tolerance",
    "complete_case",
    "kept_message",
    "parse_model_row",
    "read_case_head",
]

#: A ``test_data_set_N`` folder on a file's path.
_DATA_SET: Final = re.compile(r"(?:^|/)test_data_set_(\d+)/[^/]+$")
#: The columns of a case's rows that :func:`read_case_head` and :func:`complete_case`
#: read besides the values' own (``declared`` where the rows have it).
CASE_COLUMNS: Final = (
    "test_case", "kind", "path", "role", "content", *TOLERANCE_COLUMNS,
    "onnx_type", "shape", "declared",
)  # fmt: skip


def kept_message(path: str) -> str:
    """Why a value file the store kept as bytes is neither fed nor compared."""
    return (
        f"{path} was kept as bytes at import (it does not decode as the model declares), "
        "so it cannot be fed or compared; fix the file, or the model's declared type"
    )


@dataclass(frozen=True)
class KeptFile:
    """A file of a case that the store keeps as its bytes (a ``file`` row), and why.

    ``data_set``, ``io`` and ``index`` say which value of which data set it was meant to
    be, for a value file paired with the model's input or output ``index``; None for
    any other file (``data.json``, a value file paired with nothing).
    """

    path: str
    reason: str
    content: pa.Buffer = field(repr=False)
    data_set: int | None = None
    io: str | None = None
    index: int | None = None

    @property
    def data(self) -> bytes:
        """The file, byte for byte."""
        return self.content.to_pybytes()


@dataclass
class CaseDataSet:
    """One data set of a case: its stored values by the model's input and output index.

    ``number`` is N of ``test_data_set_N``, None for the values outside any such folder.
    ``kept_as_bytes`` names, by ``(io, index)``, the value files of the data set the
    store kept as bytes (never fed, never compared: an error each).  ``made_inputs`` are
    the inputs onnx's runner makes for a data set with expected outputs and no input
    files (``light/``), by graph input name, read-only; ``unmade`` says why none could be
    made where the runner makes none.
    """

    number: int | None
    inputs: dict[int, StoredValue] = field(default_factory=dict)
    expected: dict[int, StoredValue] = field(default_factory=dict)
    kept_as_bytes: dict[tuple[str, int], str] = field(default_factory=dict)
    made_inputs: dict[str, Any] = field(default_factory=dict, repr=False)
    unmade: str | None = None

    def arrays(self, model: ModelProto) -> dict[str, dict[str, Any]]:
        """``{"inputs": {name: value}, "outputs": {name: value}}`` as numpy values, named
        as ``model``'s graph names them (see :func:`case_data_sets`), the made inputs
        among the inputs."""
        out: dict[str, dict[str, Any]] = {"inputs": {}, "outputs": {}}
        for io, values in (("input", self.inputs), ("output", self.expected)):
            names = [v.name for v in graph_values(model, io)]
            for k, value in sorted(values.items()):
                out[f"{io}s"][names[k] if k < len(names) else f"{io}_{k}"] = value.to_numpy()
        out["inputs"].update(self.made_inputs)
        return out


@dataclass
class StoredCase:
    """One case of a store, read once: its model, data sets, kept files and tolerance.

    ``values`` are every value of the case in store order; ``sets`` arranges them by
    data set (see the module's rule), each with its kept files and made inputs;
    :meth:`data_sets` gives them as numpy values as :meth:`Store.case_arrays
    <onnx_arrow.corpus.Store.case_arrays>` does.  ``kept`` lists every file the store
    keeps as bytes with why; ``contradictions`` what each value that contradicts its
    declared type holds (the words of
    :class:`~onnx_arrow.errors.DeclarationWarning`).  ``tolerance`` is the case's own,
    None when its source stated none.
    """

    name: str
    kind: str | None
    model: ModelProto | None
    values: list[StoredValue] = field(default_factory=list)
    tolerance: Tolerance | None = None
    sets: list[CaseDataSet] = field(default_factory=list)
    kept: list[KeptFile] = field(default_factory=list)
    contradictions: list[str] = field(default_factory=list)
    #: The model's path and its bytes as stored (None for a case without a model).
    model_path: str | None = None
    model_content: pa.Buffer | None = field(default=None, repr=False)

    def data_sets(self) -> list[dict[str, dict[str, Any]]]:
        """Per data set, ``{"inputs": {name: value}, "outputs": {name: value}}`` as numpy
        values, named as the model's graph names them (see :func:`case_data_sets`), the
        inputs onnx's runner makes for a ``light/`` model among the inputs.  Files the
        store kept as bytes are not among them: ``sets`` names them, ``kept`` says why."""
        if self.model is None:
            raise CorpusError("the case has no model", where=self.name)
        model = self.model
        return [data_set.arrays(model) for data_set in self.sets]

    @property
    def no_model(self) -> str:
        """Why the case has no model, in words (the case is skipped)."""
        for kept in self.kept:
            if kept.path.endswith(".onnx") and lfs_pointer(kept.content) is not None:
                return f"its model {kept.reason}"
        return "the case has no model"

    @property
    def model_file(self) -> CorpusFile | None:
        """The model's file byte for byte as stored (the parsed model need not serialize
        back to the same bytes)."""
        if self.model_path is None or self.model_content is None:
            return None
        return CorpusFile(self.model_path, self.model_content.to_pybytes())


def case_data_sets(
    model: ModelProto, values: Iterable[StoredValue]
) -> list[dict[str, dict[str, Any]]]:
    """The values of a case's data sets, per data set, named as ``model``'s graph names
    them (``input_K`` is the K-th graph input that is not an initializer): tensors as
    ndarrays, sequences as lists, optionals as a value or None, maps as dicts.  A value
    the graph has no name for is named ``input_K`` / ``output_K``.  The data sets are
    those of :class:`StoredCase` (the values outside a ``test_data_set_N`` folder first,
    as their own data set), with the inputs onnx's runner makes for one without input
    files.

    Raises
    ------
    UnsupportedTypeError
        If ``model`` is not a ``ModelProto``, or ``values`` not an iterable of
        :class:`~onnx_arrow.corpus.StoredValue` (a value is checked as it is read).
    """
    model = check_model(model, where="case_data_sets(model)")
    values = checked_items(
        values, StoredValue, what="StoredValue objects", where="case_data_sets(values)"
    )
    sets = _arranged(model, values, {}, "")
    return [data_set.arrays(model) for data_set in sets]


def case_tolerance(rows: pa.Table | pa.RecordBatch, *, where: str) -> Tolerance | None:
    """A case's own tolerances from the ``rtol`` and ``atol`` columns of its rows.

    Raises
    ------
    CorpusError
        If the rows disagree, or a tolerance is not a finite number of 0 or more.
    """
    stated = []
    for name in TOLERANCE_COLUMNS:
        distinct = pc.unique(rows.column(name)).to_pylist()
        if len(distinct) > 1:
            raise CorpusError(
                f"the case's rows disagree on {name} ({distinct[:3]}); it is the same on "
                "every row of a case: import the corpus again",
                where=where,
            )
        stated.append(distinct[0] if distinct else None)
    if stated == [None, None]:
        return None
    try:
        return Tolerance(*stated)
    except CorpusError as exc:
        raise exc.at(where) from None


@dataclass
class CaseHead:
    """What a case's rows say before its values are decoded: its kind, tolerance and
    model (parsed), and its rows' paths, roles and contents (as Arrow, not copied)."""

    name: str
    rows: pa.Table
    where: str
    kind: str | None
    tolerance: Tolerance | None
    model: ModelProto | None
    model_row: int | None
    roles: list[str]


def read_case_head(name: str, rows: pa.Table | pa.RecordBatch, *, where: str) -> CaseHead:
    """The kind, tolerance and model of the case ``name`` from its rows (the
    :data:`CASE_COLUMNS`, in store order); ``where`` locates errors (``STORE: CASE``).

    Raises
    ------
    CorpusError
        If the rows disagree on a tolerance, or the model row has no content or does not
        parse.
    """
    table = rows if isinstance(rows, pa.Table) else pa.Table.from_batches([rows])
    tolerance = case_tolerance(table, where=where)
    kinds = table.column("kind")
    kind = kinds[0].as_py() if len(kinds) else None
    roles: list[str] = table.column("role").to_pylist()
    model_row = roles.index("model") if "model" in roles else None
    model = None if model_row is None else parse_model_row(table, model_row, where=where)
    return CaseHead(name, table, where, kind, tolerance, model, model_row, roles)


def complete_case(head: CaseHead, values: list[StoredValue]) -> StoredCase:
    """The case of ``head`` with its ``values`` (decoded from the same rows): its data
    sets, its kept files with why, its declarations."""
    rows, model = head.rows, head.model
    content = rows.column("content")
    files = {i: rows.column("path")[i].as_py() for i, r in enumerate(head.roles) if r == "file"}
    model_path = None if head.model_row is None else rows.column("path")[head.model_row].as_py()
    slots: dict[str, Slot] = {}
    if files and model is not None:
        layout = Case(head.name, "", [], model_path)
        wanted = [
            CorpusFile(p, content[i].as_py() or b"")
            for i, p in files.items()
            if value_slot(layout, p)
        ]
        slots = value_slots(Case(head.name, "", wanted, model_path), model)
    decoded = {(v.data_set, v.io, v.index) for v in values}
    kept: list[KeptFile] = []
    bundled: list[StoredValue] = []  # values of a bundle (io.npz) or of .npy files
    by_set: dict[int | None, dict[tuple[str, int], str]] = {}
    for i, path in files.items():
        slot = slots.get(path)
        if slot is not None:  # a data set of its own even if every file of it was kept
            by_set.setdefault(slot.data_set, {})
        if slot is not None and slot.index is not None:
            if (slot.data_set, slot.io, slot.index) in decoded:
                reason = (
                    f"{path} names the model's {slot.io} {slot.index}, which the data set "
                    "holds decoded from another file: it is kept as bytes, not used"
                )
                kept.append(KeptFile(path, reason, _buffer(content, i)))
                continue
            by_set.setdefault(slot.data_set, {})[slot.io, slot.index] = path
            data = _buffer(content, i)
            kept.append(
                KeptFile(path, kept_message(path), data, slot.data_set, slot.io, slot.index)
            )
        elif slot is not None:
            said = f" ({slot.reason})" if slot.reason else ""
            why = f"{path} is paired with none of the model's {slot.io}s{said}"
            kept.append(KeptFile(path, why, _buffer(content, i)))
        elif model is not None and path == f"{head.name}/{BUNDLE_NAME}":
            bundle = read_bundle(content[i].as_py(), model, case=head.name, path=path)
            bundled += [*bundle.inputs.values(), *bundle.expected.values()]
            why = f"{path} is read as a data set (a bundle, as tract keeps its cases)"
            if bundle.unused:
                why += f"; its arrays of no input or output: {', '.join(bundle.unused)}"
            kept.append(KeptFile(path, why, _buffer(content, i)))
        elif model is not None and path.endswith(".npy"):
            found = _DATA_SET.search(path)
            data_set = None if found is None else int(found[1])
            value = read_npy(
                content[i].as_py(), model, case=head.name, path=path, data_set=data_set
            )
            bundled += [] if value is None else [value]
            why = (
                f"{path} is read as the model's {value.io} {value.index} ({value.name!r})"
                if value is not None
                else f"{path} names none of the model's inputs or outputs"
            )
            kept.append(KeptFile(path, why, _buffer(content, i)))
        else:
            pointer = lfs_pointer(_buffer(content, i))
            why = (
                pointer
                if pointer is not None
                else "the case has no model to type its values"
                if model is None
                else "not a value file of a data set (test_data_set_N/input_K.pb, "
                "output_K.pb, or NAME_input_K.pb beside a light/ model NAME.onnx)"
            )
            kept.append(KeptFile(path, f"{path}: {why}", _buffer(content, i)))
    sets = [] if model is None else _arranged(model, [*values, *bundled], by_set, head.name)
    return StoredCase(
        head.name,
        head.kind,
        model,
        values,
        head.tolerance,
        sets,
        kept,
        _checked_contradictions(head, values),
        model_path,
        None if head.model_row is None else content[head.model_row].as_buffer(),
    )


def _checked_contradictions(head: CaseHead, values: list[StoredValue]) -> list[str]:
    """What the ``declared`` column says each value contradicting its declaration holds,
    each claim checked: a row that says its value contradicts the model must name the type
    the model declares for it, and its value must contradict that type.

    Raises
    ------
    CorpusError
        Located at the row's file and the column: a claim the model or the value belies
        (a forged or damaged ``declared`` column).
    """
    rows, model = head.rows, head.model
    if "declared" not in rows.column_names or rows.column("declared").null_count == len(rows):
        return []
    said = {
        path: declared
        for path, role, declared in zip(
            rows.column("path").to_pylist(),
            head.roles,
            rows.column("declared").to_pylist(),
            strict=True,
        )
        if declared is not None
    }
    for value in values:
        claim = said.pop(value.path, None)
        if claim is None:
            continue
        type_proto = declared_type(model, value.io, value.index)
        clash = None if type_proto is None else contradiction(type_proto, value.node, value.kind)
        if clash is None or clash.declared != claim:
            truth = (
                "the value is what the model declares"
                if clash is None
                else f"the model declares {clash.declared}"
            )
            raise CorpusError(
                f"column 'declared' says the value contradicts the declared {claim}, but "
                f"{truth}: the column does not describe this case's data and model (forged, "
                "or damaged); import the case again",
                where=f"{head.where}: {value.path}",
            )
    if said:  # a claim on a row that is no value
        raise CorpusError(
            "column 'declared' holds a declaration on a row that holds no value decoded "
            "by a model: the column does not describe this case (forged, or damaged); "
            "import the case again",
            where=f"{head.where}: {next(iter(said))}",
        )
    return contradictions(rows)


def _arranged(
    model: ModelProto,
    values: Iterable[StoredValue],
    kept: dict[int | None, dict[tuple[str, int], str]],
    case: str,
) -> list[CaseDataSet]:
    """The data sets of a case by the module's rule, made inputs made."""
    sets: dict[int | None, CaseDataSet] = {
        n: CaseDataSet(n, kept_as_bytes=k) for n, k in kept.items()
    }
    for value in values:
        data_set = sets.get(value.data_set)
        if data_set is None:
            data_set = sets[value.data_set] = CaseDataSet(value.data_set)
        (data_set.inputs if value.io == "input" else data_set.expected)[value.index] = value
    fed = graph_values(model, "input")
    for data_set in sets.values():
        if (
            data_set.number is None
            and not data_set.inputs
            and data_set.expected
            and fed
            and not data_set.kept_as_bytes
        ):
            # a model test with expected outputs and no input files (light/): onnx's
            # runner feeds it inputs it makes, and so does every reader of the case
            try:
                data_set.made_inputs = _made_inputs(model, case)
            except NotImplementedError as exc:
                data_set.unmade = f"no input files, and onnx's runner makes none for it: {exc}"
    return [sets[n] for n in sorted(sets, key=lambda n: -1 if n is None else n)]


def _made_inputs(model: ModelProto, case: str) -> dict[str, Any]:
    """The inputs onnx's backend test runner makes for a model test without input files
    (its ``Runner.generate_dummy_data``, not random), read-only as stored values are."""
    from onnx.backend.test.runner import Runner

    made = {}
    for x in graph_values(model, "input"):
        value = Runner.generate_dummy_data(x, seed=0, name=case, random=False)
        if isinstance(value, np.ndarray):
            value.setflags(write=False)
        made[x.name] = value
    return made


def _buffer(column: pa.ChunkedArray, i: int) -> Any:
    """Row ``i`` of a ``content`` column without copying (b"" for a null)."""
    buffer = column[i].as_buffer()
    return pa.py_buffer(b"") if buffer is None else buffer


def parse_model_row(rows: pa.Table, row: int, *, where: str) -> ModelProto:
    """The model of row ``row`` of a case's rows (``path`` and ``content``), parsed;
    ``where`` is the case (``STORE: CASE``), errors name the model's path after it.

    Where the rows have a ``digest`` column, the model's bytes are checked against it as
    a value's file is, so that a model changed after the store was written is refused.

    Raises
    ------
    CorpusError
        If the row has no content, it is not the file imported (its digest), or it does
        not parse.
    """
    content = rows.column("content")[row].as_py()
    path = rows.column("path")[row].as_py()
    if content is None:
        raise CorpusError("the model row has no content", where=f"{where}: {path}")
    if "digest" in rows.column_names:
        check_digest(content, rows.column("digest")[row].as_py(), where=f"{where}: {path}")
    from onnx_arrow.core.model import ModelProto

    try:
        return ModelProto.FromString(content)
    except Exception as exc:  # protobuf's DecodeError
        raise CorpusError(f"the model does not parse ({exc})", where=f"{where}: {path}") from None
