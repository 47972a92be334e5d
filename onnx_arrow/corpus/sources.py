"""Where test corpora come from: a folder tree, or the node suite the installed onnx builds.

A corpus is a tree of files.  Its cases are found by layout:

* a folder holding ``model.onnx`` is a case; its values are
  ``test_data_set_N/input_K.pb`` and ``output_K.pb`` (``node/``, ``simple/``,
  ``pytorch-converted/``, ``pytorch-operator/`` in onnx's wheel);
* a folder holding one ``NAME.onnx`` and ``test_data_set_N/`` folders beside it is a
  case named by the folder, as runtimes keep their cases (KInference, onnx2c);
* a folder holding ``data.json`` and no model is a case without data sets (``real/``),
  and so is one holding ``test_data_set_N/`` folders and no model: its files are
  stored as they are, and a comparison reports it skipped, saying why;
* a ``NAME.onnx`` file with ``NAME_input_K.pb`` / ``NAME_output_K.pb`` beside it is
  a case (``light/``).

A case folder owns every file below it, a deeper ``model.onnx`` included; the ``.pb``
files of other folders form a case named after their folder, and their other files
(``README.md``, ``run_all.sh`` beside the cases) belong to no case: they are left out,
with one warning naming them.  Every file of a case that is not a model or a value is
kept as it is, and so is a model that is a Git LFS pointer (a checkout without Git LFS:
the case is stored without a model, with a warning).  A value file is for the graph input
or output whose name its message carries, else for the one its number K is
(:func:`value_slots`, as onnxruntime's runner pairs them); which message a ``.pb``
holds comes from the type the model declares there, never from the bytes; where the
model declares none, it is read as onnx's runner reads it, a ``TensorProto``.

Files are read defensively: regular files only (a FIFO, a device or a symlink is
refused, so nothing hangs or reads without end), each capped in size.  Symbolic links
are never followed: one inside a case folder is refused when the case is read, and one
where cases are looked for (a link to a case folder) is skipped, with a warning that
says so (an error, if no case is left).

A source can take some of its cases only: those whose names match glob patterns
(:func:`case_matches`, as ``compare --case`` takes them).
"""

from __future__ import annotations

import functools
import heapq
import math
import operator
import os
import re
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeVar

from onnx_arrow.core.model import (
    lfs_pointer,
    load_json,
    pair_files,
    read_regular_file,
)
from onnx_arrow.corpus.arguments import check_path, checked_items
from onnx_arrow.corpus.names import case_matches, check_name, check_patterns, unmatched_patterns
from onnx_arrow.corpus.options import check_count
from onnx_arrow.errors import CorpusError, OnnxArrowWarning

if TYPE_CHECKING:
    from onnx import ModelProto

__all__ = [
    "MAX_FILE_BYTES",
    "Case",
    "CaseRef",
    "CorpusError",
    "CorpusFile",
    "FolderSource",
    "MergedSource",
    "NodeSuiteSource",
    "Slot",
    "Tolerance",
    "case_matches",
    "case_refs",
    "check_name",
    "check_patterns",
    "checked_cases",
    "default_source",
    "folder_model",
    "tolerance_of",
    "value_slot",
    "value_slots",
    "wheel_data_dir",
]

#: Largest single file a corpus may hold (2 GiB, protobuf's own message limit).
MAX_FILE_BYTES: Final = 2 << 30

_DATA_SET_VALUE: Final = re.compile(r"test_data_set_(\d+)/(input|output)_(\d+)\.pb")
_LIGHT_VALUE: Final = re.compile(r"(.+)_(input|output)_(\d+)\.pb")


@dataclass(frozen=True)
class CorpusFile:
    """One file of a corpus: its path relative to the corpus root, and its bytes."""

    path: str
    data: bytes


@dataclass(frozen=True)
class Tolerance:
    """A case's own tolerances, as its source states them (None where it states none).

    onnx's backend test runner compares a case's outputs with ``rtol`` / ``atol`` from
    its ``TestCase`` (the node suite built in memory) or from the ``data.json`` of its
    folder (model tests such as ``real/``), 1e-3 / 1e-7 where neither says.
    """

    rtol: float | None = None
    atol: float | None = None

    def __post_init__(self) -> None:
        for name in ("rtol", "atol"):
            value = getattr(self, name)
            if value is not None and not (
                isinstance(value, int | float) and not isinstance(value, bool)
                and math.isfinite(value) and value >= 0
            ):  # fmt: skip
                raise CorpusError(f"{name} is {value!r}; a tolerance is a finite number >= 0")


@dataclass
class Case:
    """A test case: its files, and the model whose graph types its values.

    ``name`` is the case folder relative to the root (``node/test_abs``); ``kind``
    the kind folder it sits in (``node``), empty when there is none.  ``tolerance`` is
    the case's own, from a source that states it apart from the files (onnx's
    ``TestCase``); otherwise :func:`tolerance_of` reads it from the case's
    ``data.json``.
    """

    name: str
    kind: str
    files: list[CorpusFile] = field(default_factory=list)
    model_path: str | None = None
    tolerance: Tolerance | None = None

    def load(self) -> Case:
        """The case itself (a :class:`CaseRef` reads its files here)."""
        return self

    @functools.cached_property
    def model_pointer(self) -> str | None:
        """What a model file that is a Git LFS pointer is, in words; None otherwise."""
        found = (f.data for f in self.files if f.path == self.model_path)
        return lfs_pointer(next(found, b""))

    def model(self) -> ModelProto | None:
        """The parsed model (without its weights' external data), if the case has one;
        None for a Git LFS pointer in its place (see :attr:`model_pointer`)."""
        if self.model_path is None or self.model_pointer is not None:
            return None
        data = next(f.data for f in self.files if f.path == self.model_path)
        from onnx_arrow.core.model import ModelProto

        try:
            return ModelProto.FromString(data)
        except Exception as exc:  # protobuf's DecodeError and friends
            raise CorpusError(
                f"does not parse as an ONNX model ({exc})", where=self.model_path
            ) from None


#: The file of a case folder that states its tolerances (onnx's ``load_model_tests``).
TOLERANCE_FILE: Final = "data.json"
#: Largest ``data.json`` read for its tolerances (onnx's are under 200 bytes).
_MAX_TOLERANCE_FILE: Final = 1 << 20
#: How a ``data.json`` url names a file of onnx's own test data.
_ONNX_DATA_URL: Final = "onnx/backend/test/data/"


def tolerance_of(case: Case) -> Tolerance | None:
    """The case's own tolerances: ``case.tolerance``, else the ``rtol`` / ``atol`` keys of
    its folder's ``data.json`` as onnx's loader reads them; None when neither states any.

    Raises
    ------
    CorpusError
        If ``data.json`` is not a JSON object, or states a tolerance that is not a
        finite number of 0 or more (onnx's loader would fail on it too).

    A ``light/`` model's tolerances are those of the ``real/`` test that names it by
    url (:class:`FolderSource` finds it); its case carries them as ``case.tolerance``.
    """
    if case.tolerance is not None:
        return case.tolerance
    path = f"{case.name}/{TOLERANCE_FILE}" if case.name else TOLERANCE_FILE
    data = next((f.data for f in case.files if f.path == path), None)
    if data is None:
        return None
    return _stated_tolerance(data, path)


def _stated_tolerance(data: bytes, path: str) -> Tolerance | None:
    """The ``rtol`` / ``atol`` a ``data.json`` states (None if it states neither)."""
    if len(data) > _MAX_TOLERANCE_FILE:
        raise CorpusError(
            f"{len(data)} bytes; a {TOLERANCE_FILE} states a case's tolerances in a few "
            "hundred: remove it or cut it down",
            where=path,
        )
    doc = load_json(data, what="the case's data.json", where=path, error=CorpusError)
    if not isinstance(doc, dict):
        raise CorpusError(f"holds a JSON {type(doc).__name__}, not an object", where=path)
    if "rtol" not in doc and "atol" not in doc:
        return None
    try:
        return Tolerance(doc.get("rtol"), doc.get("atol"))
    except CorpusError as exc:
        raise exc.at(path) from None


def value_slot(case: Case, path: str) -> tuple[int | None, str, int] | None:
    """``(data_set, "input"|"output", index)`` for a value file of the case, else None."""
    if not path.endswith(".pb") or case.model_path is None:
        return None
    slot = _data_set_slot(path[len(case.name) + 1 :] if case.name else path)
    if slot is not None:
        return slot
    if not _is_folder_model(case.model_path):
        m = _LIGHT_VALUE.fullmatch(Path(path).name)
        stem = Path(case.model_path).stem
        if m is not None and m.group(1) == stem:
            return None, m.group(2), int(m.group(3))
    return None


@dataclass(frozen=True)
class Slot:
    """What a value file of a case is for: its data set (None outside one), ``io``, its
    number K (``input_K.pb``), and ``index``, the model's input or output it is paired
    with (see :func:`~onnx_arrow.core.declarations.pair_files`), None for none
    (``reason`` says why)."""

    data_set: int | None
    io: str
    number: int
    index: int | None
    name: str | None = None
    reason: str | None = None

    @property
    def what(self) -> str:
        """The declaration in words: ``output 1`` (``'output_probability'``, named by the
        file as output_0.pb)."""
        text = f"{self.io} {self.index}"
        if self.name is not None and self.index != self.number:
            text += f" {self.name!r}, which the file names (its number is {self.number})"
        return text


def value_slots(case: Case, model: ModelProto | None) -> dict[str, Slot]:
    """The value files of ``case``, by path, each with what it is for in ``model`` (its
    parsed model): the files of each data set paired with the model's inputs and outputs
    by the name inside them, else by their number, as onnxruntime's test runner pairs
    them.  Empty for a case without a model (its files are kept as files)."""
    if model is None:
        return {}
    groups: dict[tuple[int | None, str], dict[int, CorpusFile]] = {}
    for f in case.files:
        slot = value_slot(case, f.path)
        if slot is not None:
            groups.setdefault((slot[0], slot[1]), {})[slot[2]] = f
    out: dict[str, Slot] = {}
    for (data_set, io), files in groups.items():
        pairs = pair_files(io, model, {k: f.data for k, f in files.items()})
        for k, f in files.items():
            p = pairs[k]
            out[f.path] = Slot(data_set, io, k, p.index, p.name, p.reason)
    return out


def _is_folder_model(path: str) -> bool:
    """Whether a model is a case folder's ``model.onnx`` (not a ``light/`` ``NAME.onnx``)."""
    return path == "model.onnx" or path.endswith("/model.onnx")


@functools.lru_cache(maxsize=4096)
def _data_set_slot(rel: str) -> tuple[int, str, int] | None:
    """The slot of ``test_data_set_N/input_K.pb`` (the same few names recur in every case)."""
    m = _DATA_SET_VALUE.fullmatch(rel)
    return None if m is None else (int(m.group(1)), m.group(2), int(m.group(3)))


def _listed(folder: str, where: str) -> list[os.DirEntry[str]]:
    """The entries of a corpus folder, or an error at ``where`` that says why it cannot be
    listed (no permission, gone since)."""
    try:
        with os.scandir(folder) as entries:
            return list(entries)
    except OSError as exc:
        raise CorpusError(
            f"the folder cannot be listed ({exc.strerror or exc})", where=where
        ) from None


@dataclass(frozen=True)
class CaseRef:
    """A case of a corpus folder, not read yet: what a worker needs to read it.

    ``paths`` are files known to belong to the case; ``folders`` are subfolders
    whose whole trees belong to it, listed only when the case is loaded.
    """

    root: str
    name: str
    model_path: str | None
    paths: tuple[str, ...]
    folders: tuple[str, ...] = ()
    max_file_bytes: int = MAX_FILE_BYTES
    #: The ``data.json`` of another case that states this case's tolerances (a ``real/``
    #: test naming this ``light/`` model by url), read with it.
    tolerance_file: str | None = None

    def load(self) -> Case:
        """Read the case's files (regular files only, each capped), sorted by path."""
        kind = self.name.split("/", 1)[0] if "/" in self.name else ""
        root, cap = self.root.rstrip("/") + "/", self.max_file_bytes
        files = [
            CorpusFile(p, read_regular_file(root + p, max_bytes=cap, where=p)) for p in self.paths
        ]
        stack = list(self.folders)
        while stack:
            folder = stack.pop()
            for entry in _listed(root + folder, folder):
                rel = f"{folder}/{entry.name}"
                check_name(entry.name, rel)
                if entry.is_dir(follow_symlinks=False):
                    stack.append(rel)
                else:
                    data = read_regular_file(entry.path, max_bytes=cap, where=rel)
                    files.append(CorpusFile(rel, data))
        files.sort(key=operator.attrgetter("path"))
        tolerance = None
        if self.tolerance_file is not None:
            data = read_regular_file(
                root + self.tolerance_file, max_bytes=_MAX_TOLERANCE_FILE, where=self.tolerance_file
            )
            tolerance = _stated_tolerance(data, self.tolerance_file)
        return Case(self.name, kind, files, self.model_path, tolerance)


class FolderSource:
    """The cases of a corpus folder, in sorted order, read one case at a time.

    A symbolic link where cases are looked for is skipped with an
    :class:`~onnx_arrow.errors.OnnxArrowWarning` naming it (``skipped`` lists them once
    the folder is listed); a folder with no case but such links is an error that says so.

    Parameters
    ----------
    root
        The corpus folder (kind folders, case folders, or one case).
    max_file_bytes
        Largest file accepted; a larger one is an error naming it.
    cases
        Glob patterns: only the cases one of them matches (see :func:`case_matches`);
        a pattern that matches no case is an error when the folder is listed.  None
        (the default): every case.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        max_file_bytes: int = MAX_FILE_BYTES,
        cases: Iterable[str] | None = None,
    ):
        self.root = Path(check_path(root, where="FolderSource(root)"))
        self.max_file_bytes = check_count(max_file_bytes, where="FolderSource(max_file_bytes)")
        self.cases = check_patterns(cases, where="FolderSource(cases)")
        #: The number of cases, known once the folder is listed (for progress).
        self.count: int | None = None
        #: The symbolic links skipped, relative to the root, known once it is listed.
        self.skipped: list[str] = []
        #: The files beside the cases that belong to none, left out, known once listed.
        self.left_out: list[str] = []
        self._warned = self._warned_left_out = False
        if not self.root.is_dir():
            raise CorpusError("not a folder; pass a corpus folder", where=str(root))

    def __iter__(self) -> Iterator[Case]:
        for ref in self.refs():
            yield ref.load()

    def refs(self) -> Iterator[CaseRef]:
        """The cases, in sorted order, not read yet (a worker process can read them).

        The folder is listed down to the case folders; what lies below a case folder
        is listed when the case is loaded.
        """
        root = os.fspath(self.root)
        layout = self._layout()
        named = self._named_models(layout)
        top = _listed(root, root)
        case_folder = (
            folder_model(
                [e.name for e in top if not e.is_dir(follow_symlinks=False)],
                [e.name for e in top if e.is_dir(follow_symlinks=False)],
            )
            is not None
        )
        if case_folder and "" in layout:
            # the folder is one case: it is named after the folder, whose parent is the root
            whole = self.root.resolve()
            root, name = os.fspath(whole.parent), whole.name
            model, paths, folders = layout[""]
            layout = {
                name: (
                    None if model is None else f"{name}/{model}",
                    [f"{name}/{p}" for p in paths],
                    [f"{name}/{f}" for f in folders],
                )
            }
            named = {f"{name}/{m}": f"{name}/{d}" for m, d in named.items()}
        self._say_skipped(any(_is_case(model, paths) for model, paths, _ in layout.values()))
        if self.left_out and not self._warned_left_out:  # said once, as the links are
            count = len(self.left_out)
            shown = ", ".join(self.left_out[:3]) + (", ..." if count > 3 else "")
            why = f"({shown}): in a folder that is no case, only models and values make cases"
            if not layout:
                no = "no case (no model.onnx, NAME.onnx, data.json or .pb) in the folder, only"
                raise CorpusError(f"{no} {count} file(s) {why}", where=root)
            self._warned_left_out = True
            warn = f"{self.root}: {count} file(s) beside the cases left out {why}"
            warnings.warn(warn, OnnxArrowWarning, stacklevel=2)
        if self.cases is not None:
            unmatched_patterns(self.cases, sorted(layout), where=str(self.root))
            layout = {
                name: found
                for name, found in layout.items()
                if any(case_matches(name, p) for p in self.cases)
            }
        self.count = len(layout)
        for name, (model, paths, folders) in sorted(layout.items()):
            yield CaseRef(
                root,
                name,
                model,
                tuple(paths),
                tuple(folders),
                self.max_file_bytes,
                None if model is None else named.get(model),
            )

    def _say_skipped(self, any_case: bool) -> None:
        """Say which symbolic links the listing skipped: a warning (once), or the error of
        a folder that holds no case but links."""
        if not self.skipped:
            return
        count = len(self.skipped)
        shown = ", ".join(self.skipped[:3]) + (", ..." if count > 3 else "")
        links = "1 symbolic link" if count == 1 else f"{count} symbolic links"
        why = (
            f"{links} skipped ({shown}): a corpus is read without following links, so "
            "that nothing outside it is read; import the folder a link points to, or copy "
            "it in"
        )
        if not any_case:
            raise CorpusError(f"no case in the folder or below it; {why}", where=str(self.root))
        if not self._warned:  # once, however often the folder is listed
            self._warned = True
            warnings.warn(f"{self.root}: {why}", OnnxArrowWarning, stacklevel=3)

    def _named_models(
        self, layout: dict[str, tuple[str | None, list[str], list[str]]]
    ) -> dict[str, str]:
        """Model path -> the ``data.json`` of a model test without a model of its own that
        names it by ``url``, as onnx's runner finds a ``real/`` test's model in
        ``light/`` (``"url": "onnx/backend/test/data/light/light_vgg19.onnx"``).  A
        ``data.json`` that does not parse names nothing here (its own case says why)."""
        models = {m for m, _, _ in layout.values() if m is not None}
        out: dict[str, str] = {}
        for name, (model, paths, _) in layout.items():
            path = f"{name}/{TOLERANCE_FILE}" if name else TOLERANCE_FILE
            if model is not None or path not in paths:
                continue
            try:
                data = read_regular_file(
                    os.path.join(self.root, path), max_bytes=_MAX_TOLERANCE_FILE, where=path
                )
                url = load_json(data, what="data.json", where=path, error=CorpusError).get("url")
            except (CorpusError, AttributeError):
                continue
            if isinstance(url, str) and url.startswith(_ONNX_DATA_URL):
                target = url[len(_ONNX_DATA_URL) :]
                if target in models:
                    out.setdefault(target, path)
        return out

    def _layout(self) -> dict[str, tuple[str | None, list[str], list[str]]]:
        """Case name -> (model path, files, subfolders whose trees belong to the case).

        A folder holding ``model.onnx`` or ``data.json`` is a case that owns every
        file below it.  Other folders are listed further; their own files are
        ``light/`` cases (``NAME.onnx`` with ``NAME_input_K.pb`` beside it) or, for
        the rest, a case named after the folder.  Symlinks (to files or folders)
        are never followed: in a case folder they are listed, so that reading them is
        refused with a clear error; elsewhere they are skipped (``skipped``).
        """
        out: dict[str, tuple[str | None, list[str], list[str]]] = {}
        skipped: list[str] = []
        self.left_out = []

        def add(name: str, model: str | None, paths: list[str], folders: list[str]) -> None:
            if name not in out:
                out[name] = (model, paths, folders)
                return
            # a case folder and a NAME.onnx beside it, both called NAME: one case, the
            # folder's model.onnx types it and the other files are kept as they are
            known, known_paths, known_folders = out[name]
            keep = known if known is not None and _is_folder_model(known) else model
            out[name] = (keep or known, known_paths + paths, known_folders + folders)

        stack = [("", os.fspath(self.root))]
        while stack:
            rel, folder = stack.pop()
            prefix = rel + "/" if rel else ""
            dirs: list[tuple[str, str]] = []
            names: list[str] = []
            links: set[str] = set()
            for entry in _listed(folder, rel or str(self.root)):
                check_name(entry.name, prefix + entry.name)
                if entry.is_dir(follow_symlinks=False):
                    dirs.append((prefix + entry.name, entry.path))
                else:
                    names.append(entry.name)
                    if entry.is_symlink():
                        links.add(entry.name)
            owner = folder_model(names, [d.rsplit("/", 1)[-1] for d, _ in dirs])
            if owner is not None:
                model = prefix + owner if owner else None
                add(rel, model, [prefix + n for n in names], [d for d, _ in dirs])
                continue
            stack += dirs
            skipped += (prefix + n for n in links)
            names = [n for n in names if n not in links]
            # NAME.onnx with NAME_input_K.pb / NAME_output_K.pb beside it (the light/ layout)
            present = set(names)
            light: dict[str, list[str]] = {}
            for n in names:
                m = _LIGHT_VALUE.fullmatch(n)
                if m is not None and m.group(1) + ".onnx" in present:
                    light.setdefault(m.group(1), []).append(prefix + n)
            rest = set(names)
            for n in names:
                if n.endswith(".onnx"):
                    stem = n[: -len(".onnx")]
                    files = [prefix + n, *light.get(stem, [])]
                    add(prefix + stem, prefix + n, files, [])
                    rest.difference_update(f[len(prefix) :] for f in files)
            # files beside the cases that are neither models nor values (README.md,
            # run_all.sh) are no case: left out, said once (``left_out``)
            self.left_out += (prefix + n for n in rest if not n.endswith(".pb"))
            if values := sorted(n for n in rest if n.endswith(".pb")):
                add(rel, None, [prefix + n for n in values], [])
        self.skipped = sorted(skipped)
        self.left_out.sort()
        return out


_DATA_SET_FOLDER: Final = re.compile(r"test_data_set_\d+")


def folder_model(files: Iterable[str], folders: Iterable[str]) -> str | None:
    """The model of a folder that is one case, by the names of its files and subfolders:
    ``model.onnx``; else its one ``NAME.onnx`` when ``test_data_set_N`` folders sit beside
    it (the layout runtimes keep: KInference, onnx2c); ``""`` for a case without a model
    file (a ``data.json``, a model test whose model onnx downloads, or data sets with no
    model beside them: its files are stored as they are); None for a folder that is no
    case by itself (several ``NAME.onnx`` are each a case of their own).

    >>> folder_model(["rf_iris.onnx"], ["test_data_set_0", "test_data_set_1"])
    'rf_iris.onnx'
    >>> folder_model(["notes.txt"], ["test_data_set_0"])
    ''
    >>> folder_model(["a.onnx", "b.onnx"], ["test_data_set_0"]) is None
    True
    """
    files = list(files)
    if "model.onnx" in files:
        return "model.onnx"
    models = [n for n in files if n.endswith(".onnx")]
    data_sets = any(_DATA_SET_FOLDER.fullmatch(d) for d in folders)
    if len(models) == 1 and data_sets:
        return models[0]
    if TOLERANCE_FILE in files or (data_sets and not models):
        return ""
    return None


def _is_case(model: str | None, paths: list[str]) -> bool:
    """Whether a folder's files make a test case: a model, or a ``data.json`` (a model
    test whose model onnx downloads, ``real/``)."""
    return model is not None or any(
        p == TOLERANCE_FILE or p.endswith("/" + TOLERANCE_FILE) for p in paths
    )


class NodeSuiteSource:
    """The node test suite that the installed onnx builds in memory, as corpus files.

    Values are serialized the way onnx's own test-data writer does
    (``onnx.backend.test.cmd_tools.generate_data``), so writing them out gives
    the classic folder layout, byte for byte.  The suite is built once per onnx
    version and read from the cache after (see the module ``onnx_arrow.corpus.cache``);
    ``cache=False`` builds it every time.
    """

    kind: Final = "node"
    #: The number of cases, known once iteration has built the suite (for progress).
    count: int | None = None

    def __init__(self, *, cache: bool = True) -> None:
        self.cache = cache

    def __iter__(self) -> Iterator[Case]:
        if not self.cache:
            yield from self._build()
            return
        from onnx_arrow.corpus.cache import cached_cases

        def parts() -> Iterator[tuple[str, str, list[tuple[str, bytes]], str, dict[str, Any]]]:
            for case in self._build():
                files = [(f.path, f.data) for f in case.files]
                tolerance = case.tolerance
                facts = {} if tolerance is None else {"tolerance": [tolerance.rtol, tolerance.atol]}
                yield case.name, case.kind, files, case.model_path or "", facts

        for name, kind, files, model_path, facts in cached_cases(parts):
            stated = facts.get("tolerance")
            tolerance = None if stated is None else Tolerance(*stated)
            corpus_files = [CorpusFile(p, d) for p, d in files]
            yield Case(name, kind, corpus_files, model_path, tolerance)

    def _build(self) -> Iterator[Case]:
        from onnx.backend.test.loader import load_node_model_tests

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the generators warn about overflows they mean
            cases = load_node_model_tests()
        self.count = len(cases)
        for case in sorted(cases, key=lambda c: c.name):
            yield self._case(case)

    def _case(self, case: object) -> Case:
        from onnx_arrow.core.model import value_message  # builds messages: imports onnx

        name = f"{self.kind}/{case.name}"  # type: ignore[attr-defined]
        model = case.model  # type: ignore[attr-defined]
        files = [CorpusFile(f"{name}/model.onnx", model.SerializeToString())]
        for n, (inputs, outputs) in enumerate(case.data_sets):  # type: ignore[attr-defined]
            for io, values, infos in (
                ("input", inputs, model.graph.input),
                ("output", outputs, model.graph.output),
            ):
                for k, value in enumerate(values):
                    data = value_message(value, infos[k].name, infos[k].type).SerializeToString()
                    files.append(CorpusFile(f"{name}/test_data_set_{n}/{io}_{k}.pb", data))
        files.sort(key=lambda f: f.path)
        tolerance = Tolerance(float(case.rtol), float(case.atol))  # type: ignore[attr-defined]
        return Case(name, self.kind, files, f"{name}/model.onnx", tolerance)


#: A case as a source hands it out: read, or a reference a worker reads.
R = TypeVar("R", bound="Case | CaseRef")


class MergedSource:
    """Several sources whose cases are each sorted by name, merged into one sorted stream.

    Each source is checked as :func:`checked_cases` does: anything that is not a source
    (an iterable of :class:`Case` or :class:`CaseRef`) is refused here.  With ``cases``
    (glob patterns, see :func:`case_matches`), only the cases one of them matches; a
    pattern that matched no case is an error once the stream has ended.
    """

    def __init__(self, *sources: Iterable[Case], cases: Iterable[str] | None = None) -> None:
        self.sources = sources
        self.cases = check_patterns(cases, where="MergedSource(cases)")
        self._checked = [
            checked_cases(s, where=f"MergedSource(sources[{k}])") for k, s in enumerate(sources)
        ]

    def __iter__(self) -> Iterator[Case]:
        return self._selected(heapq.merge(*self._checked, key=lambda case: case.name))

    def refs(self) -> Iterator[Case | CaseRef]:
        """The cases, merged by name, as each source hands them out (see :func:`case_refs`)."""
        merged = heapq.merge(*(case_refs(s) for s in self._checked), key=lambda ref: ref.name)
        return self._selected(merged)

    def _selected(self, refs: Iterator[R]) -> Iterator[R]:
        """The cases ``cases`` matches; a pattern that matched none is refused at the end."""
        if self.cases is None:
            yield from refs
            return
        matched: set[str] = set()
        first: str | None = None
        for ref in refs:
            first = first or ref.name
            hits = {p for p in self.cases if case_matches(ref.name, p)}
            if hits:
                matched |= hits
                yield ref
        missing = tuple(p for p in self.cases if p not in matched)
        if missing:
            unmatched_patterns(missing, [] if first is None else [first], where=None)


def case_refs(source: Iterable[Case]) -> Iterator[Case | CaseRef]:
    """A source's cases as references a worker process can load, where the source has them."""
    refs = getattr(source, "refs", None)
    return refs() if callable(refs) else iter(source)


#: What a source holds, as the errors of :func:`checked_cases` say.
_CASES: Final = "Case or CaseRef objects (a source such as FolderSource(folder))"


def checked_cases(cases: object, *, where: str) -> Iterable[Case]:
    """``cases`` as a source (an iterable of :class:`Case` or :class:`CaseRef`), checked.

    Anything else is refused at once, and so is a list or tuple holding anything
    else; a lazy source has each case checked as it is read, by ``iter`` and by
    :func:`case_refs` alike (a source's own ``refs`` are kept).  Errors are located
    at ``where`` (the argument, as ``write_store(cases)``) and the case's position.
    """
    checked = checked_items(cases, (Case, CaseRef), what=_CASES, where=where)
    if checked is cases:
        return checked  # type: ignore[return-value]  # a list or tuple, checked whole
    return _CheckedSource(cases, where)  # type: ignore[arg-type]


@dataclass(frozen=True)
class _CheckedSource:
    """A lazy source whose cases are checked as they are read (see :func:`checked_cases`)."""

    source: Iterable[Case | CaseRef]
    where: str

    def __iter__(self) -> Iterator[Case]:
        return self._checked(iter(self.source))  # type: ignore[return-value]

    def refs(self) -> Iterator[Case | CaseRef]:
        return self._checked(case_refs(self.source))  # type: ignore[arg-type]

    def _checked(self, items: Iterator[Case | CaseRef]) -> Iterator[Case | CaseRef]:
        return iter(checked_items(items, (Case, CaseRef), what=_CASES, where=self.where))


def wheel_data_dir() -> Path:
    """The model test folders that ship in the onnx wheel (``onnx/backend/test/data``)."""
    import onnx.backend.test

    return Path(onnx.backend.test.__file__).parent / "data"


def default_source(*, cases: Iterable[str] | None = None) -> MergedSource:
    """The built-in default corpus: the installed onnx's node suite plus its wheel's model
    kinds; with ``cases`` (glob patterns, see :func:`case_matches`), the cases they match."""
    return MergedSource(NodeSuiteSource(), FolderSource(wheel_data_dir()), cases=cases)
