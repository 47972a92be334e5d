"""Sources: how a corpus folder's cases are found and read, their tolerances and value slots."""

from __future__ import annotations

import json
import os
import shutil
import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from onnx import numpy_helper, save_model
from store_helpers import small_corpus, sum_model

from onnx_arrow.corpus.sources import (
    Case,
    CaseRef,
    CorpusError,
    CorpusFile,
    FolderSource,
    MergedSource,
    NodeSuiteSource,
    Tolerance,
    case_matches,
    case_refs,
    check_name,
    default_source,
    tolerance_of,
    value_slot,
    wheel_data_dir,
)
from onnx_arrow.errors import OnnxArrowWarning, UnsupportedTypeError


def _files(case: Case) -> list[str]:
    return [f.path for f in case.files]


# --- tolerances ------------------------------------------------------------------------


@pytest.mark.parametrize("value", [-1.0, float("nan"), float("inf"), True, "1e-3", [1]])
def test_a_tolerance_is_a_finite_number_of_0_or_more(value: object) -> None:
    with pytest.raises(CorpusError, match=r"^atol is .*; a tolerance is a finite number >= 0$"):
        Tolerance(1e-3, value)  # type: ignore[arg-type]
    with pytest.raises(CorpusError, match=r"^rtol is "):
        Tolerance(value)  # type: ignore[arg-type]


def test_tolerances_may_be_ints_zero_or_left_out() -> None:
    assert Tolerance(0, 1) == Tolerance(0, 1)
    assert Tolerance() == Tolerance(None, None)
    assert Tolerance(atol=1e-5).rtol is None


def _case_with(data_json: bytes | None, name: str = "real/test_x") -> Case:
    files = [] if data_json is None else [CorpusFile(f"{name}/data.json", data_json)]
    return Case(name, "real", files)


def test_a_case_states_its_tolerances_in_its_data_json() -> None:
    assert tolerance_of(_case_with(b'{"rtol": 0.01, "atol": 0}')) == Tolerance(0.01, 0)
    assert tolerance_of(_case_with(b'{"atol": 1e-5, "url": "x"}')) == Tolerance(None, 1e-5)
    assert tolerance_of(_case_with(b'{"url": "onnx/backend/test/data/light/a.onnx"}')) is None
    assert tolerance_of(_case_with(None)) is None
    # the case at the corpus root: its data.json has no folder
    root = Case("", "", [CorpusFile("data.json", b'{"rtol": 0.5}')])
    assert tolerance_of(root) == Tolerance(0.5)


def test_a_case_own_tolerance_comes_before_its_data_json() -> None:
    case = _case_with(b'{"rtol": 0.01}')
    case.tolerance = Tolerance(1e-4, 1e-6)
    assert tolerance_of(case) == Tolerance(1e-4, 1e-6)
    case.files = [CorpusFile("real/test_x/data.json", b"not even JSON")]
    assert tolerance_of(case) == Tolerance(1e-4, 1e-6)  # never read


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (b"[0.01]", r"real/test_x/data\.json: holds a JSON list, not an object"),
        (b'"x"', r"real/test_x/data\.json: holds a JSON str, not an object"),
        (b"{rtol: 1}", r"real/test_x/data\.json: the case's data\.json is not JSON"),
        (b'{"rtol": -1}', r"real/test_x/data\.json: rtol is -1; a tolerance is a finite number"),
        (b'{"atol": "small"}', r"real/test_x/data\.json: atol is 'small'"),
        (b" " * (1 << 20) + b"{}", r"real/test_x/data\.json: 1048578 bytes; a data\.json states"),
    ],
    ids=["list", "string", "not JSON", "negative", "text", "too big"],
)
def test_a_data_json_that_states_no_tolerance_well_is_an_error_naming_it(
    data: bytes, said: str
) -> None:
    with pytest.raises(CorpusError, match=said):
        tolerance_of(_case_with(data))


# --- value slots and declared types ----------------------------------------------------


def test_value_slots_of_a_case_folder() -> None:
    case = Case("node/test_a", "node", [], "node/test_a/model.onnx")
    assert value_slot(case, "node/test_a/test_data_set_0/input_0.pb") == (0, "input", 0)
    assert value_slot(case, "node/test_a/test_data_set_12/output_3.pb") == (12, "output", 3)
    for not_a_value in (
        "node/test_a/test_data_set_0/input_0.txt",
        "node/test_a/test_data_set_0/gradient_0.pb",
        "node/test_a/test_data_set_x/input_0.pb",
        "node/test_a/extra/test_data_set_0/input_0.pb",  # deeper than the case's data sets
        "node/test_a/model_input_0.pb",  # a light/ name, and this case has a model folder
    ):
        assert value_slot(case, not_a_value) is None, not_a_value
    # without a model nothing types a value, so nothing is one
    assert value_slot(Case("real/x", "real", []), "real/x/test_data_set_0/input_0.pb") is None


def test_value_slots_of_a_light_model_are_named_after_it() -> None:
    case = Case("light/light_a", "light", [], "light/light_a.onnx")
    assert value_slot(case, "light/light_a_output_0.pb") == (None, "output", 0)
    assert value_slot(case, "light/light_a_input_2.pb") == (None, "input", 2)
    assert value_slot(case, "light/light_b_output_0.pb") is None  # another model's
    assert value_slot(case, "light/light_a_output_x.pb") is None


def test_value_slots_of_a_case_at_the_root() -> None:
    case = Case("", "", [], "model.onnx")
    assert value_slot(case, "test_data_set_1/input_0.pb") == (1, "input", 0)


def test_names_a_store_cannot_hold_are_refused() -> None:
    check_name("test_abs", "node/test_abs")
    with pytest.raises(CorpusError, match=r"^node\\a: the name holds a backslash"):
        check_name("a\\b", "node\\a")
    bad = os.fsdecode(b"caf\xe9")  # Latin-1 bytes: a surrogate escape in the name
    with pytest.raises(CorpusError, match=r"^node/caf\\xe9: the name is not UTF-8"):
        check_name(bad, f"node/{bad}")


# --- a corpus folder -------------------------------------------------------------------


def _light(root: Path, name: str) -> None:
    save_model(sum_model(), root / f"{name}.onnx")
    y = numpy_helper.from_array(np.ones(2, np.float32), "y").SerializeToString()
    (root / f"{name}_output_0.pb").write_bytes(y)


def test_a_folder_source_finds_every_layout_of_case(tmp_path: Path) -> None:
    root = small_corpus(tmp_path / "corpus")
    light = root / "light"
    light.mkdir()
    _light(light, "light_a")
    (light / "README.md").write_text("about\n")
    real = root / "real" / "test_a"
    real.mkdir(parents=True)
    (real / "data.json").write_text(
        json.dumps({"url": "onnx/backend/test/data/light/light_a.onnx", "rtol": 0.25})
    )
    deep = root / "node" / "test_tiny" / "sub"
    deep.mkdir()
    save_model(sum_model(), deep / "model.onnx")  # owned by the case above it
    source = FolderSource(root)
    assert source.count is None
    left_out = r"1 file\(s\) beside the cases left out \(light/README.md\)"
    with pytest.warns(OnnxArrowWarning, match=left_out):
        cases = list(source)
    assert source.count == 3
    assert [(c.name, c.kind, c.model_path) for c in cases] == [
        ("light/light_a", "light", "light/light_a.onnx"),
        ("node/test_tiny", "node", "node/test_tiny/model.onnx"),
        ("real/test_a", "real", None),
    ]
    assert _files(cases[0]) == ["light/light_a.onnx", "light/light_a_output_0.pb"]
    assert _files(cases[1]) == [
        "node/test_tiny/README",
        "node/test_tiny/model.onnx",
        "node/test_tiny/sub/model.onnx",
        "node/test_tiny/test_data_set_0/input_0.pb",
        "node/test_tiny/test_data_set_0/output_0.pb",
    ]
    # the light/ model's tolerances are those of the real/ test that names it
    assert cases[0].tolerance == Tolerance(0.25)
    assert tolerance_of(cases[2]) == Tolerance(0.25)
    for case in cases:
        for f in case.files:
            assert (root / f.path).read_bytes() == f.data


def test_refs_load_as_the_cases_do_in_a_worker(tmp_path: Path) -> None:
    root = small_corpus(tmp_path / "corpus")
    refs = list(FolderSource(root).refs())
    assert [type(r) for r in refs] == [CaseRef]
    ref = refs[0]
    assert ref.root == str(root)
    assert set(ref.paths) == {"node/test_tiny/README", "node/test_tiny/model.onnx"}
    assert ref.folders == ("node/test_tiny/test_data_set_0",)
    assert ref.load() == next(iter(FolderSource(root)))


def test_a_case_folder_given_as_the_root_is_one_case_named_after_it(tmp_path: Path) -> None:
    root = small_corpus(tmp_path / "corpus")
    case_folder = root / "node" / "test_tiny"
    (cases,) = [list(FolderSource(case_folder))]
    assert [c.name for c in cases] == ["test_tiny"]
    assert cases[0].model_path == "test_tiny/model.onnx"
    assert "test_tiny/test_data_set_0/input_0.pb" in _files(cases[0])
    assert value_slot(cases[0], "test_tiny/test_data_set_0/input_0.pb") == (0, "input", 0)


def test_a_model_folder_and_a_model_file_of_one_name_are_one_case(tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    (root / "m").mkdir(parents=True)
    save_model(sum_model(), root / "m" / "model.onnx")
    save_model(sum_model(), root / "m.onnx")
    (case,) = list(FolderSource(root))
    assert case.name == "m"
    assert case.model_path == "m/model.onnx"  # the folder's model types the case
    assert _files(case) == ["m.onnx", "m/model.onnx"]


def test_an_empty_folder_has_no_cases(tmp_path: Path) -> None:
    source = FolderSource(tmp_path)
    assert list(source) == []
    assert source.count == 0


def test_a_folder_source_needs_a_folder(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    for path in (tmp_path / "file", tmp_path / "missing"):
        with pytest.raises(CorpusError, match=r": not a folder; pass a corpus folder$"):
            FolderSource(path)


def test_a_symlink_in_a_corpus_is_refused_when_its_case_is_read(tmp_path: Path) -> None:
    root = small_corpus(tmp_path / "corpus")
    os.symlink(root / "node" / "test_tiny" / "README", root / "node" / "test_tiny" / "link")
    (ref,) = list(FolderSource(root).refs())  # listed, not followed
    with pytest.raises(CorpusError, match=r"^node/test_tiny/link: cannot open"):
        ref.load()


def _linked_cases(tmp_path: Path) -> tuple[Path, Path]:
    """A corpus of one case, and a folder of links to its kind folder and its case."""
    root = small_corpus(tmp_path / "corpus")
    links = tmp_path / "links"
    (links / "node").mkdir(parents=True)
    (links / "node" / "test_linked").symlink_to(root / "node" / "test_tiny")
    (links / "kind").symlink_to(root / "node", target_is_directory=True)
    return root, links


def test_a_folder_of_links_to_cases_is_an_error_that_says_they_were_skipped(
    tmp_path: Path,
) -> None:
    _, links = _linked_cases(tmp_path)
    source = FolderSource(links)
    with pytest.raises(
        CorpusError,
        match=rf"^{links}: no case in the folder or below it; 2 symbolic links skipped "
        r"\(kind, node/test_linked\): a corpus is read without following links, so that "
        "nothing outside it is read; import the folder a link points to, or copy it in$",
    ):
        list(source.refs())
    assert source.skipped == ["kind", "node/test_linked"]


def test_links_beside_cases_are_skipped_with_a_warning_naming_them(tmp_path: Path) -> None:
    root, links = _linked_cases(tmp_path)
    (root / "node" / "test_kept").symlink_to(root / "node" / "test_tiny")
    source = FolderSource(root)
    with pytest.warns(OnnxArrowWarning, match=r"1 symbolic link skipped \(node/test_kept\)"):
        cases = list(source)
    assert [c.name for c in cases] == ["node/test_tiny"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert [r.name for r in source.refs()] == ["node/test_tiny"]  # said once
    assert source.skipped == ["node/test_kept"]
    shutil.copytree(root / "node" / "test_tiny", links / "node" / "test_real")
    with pytest.warns(OnnxArrowWarning, match=r"2 symbolic links skipped \(kind, node/test_l"):
        assert [r.name for r in FolderSource(links).refs()] == ["node/test_real"]


@pytest.mark.parametrize(
    ("patterns", "chosen"),
    [
        (["node/test_a*"], ["node/test_abs", "node/test_add"]),
        (["test_add", "real/*"], ["node/test_add", "real/test_r"]),
        (("*",), ["node/test_abs", "node/test_add", "node/test_sub", "real/test_r"]),
        (iter(["test_sub"]), ["node/test_sub"]),
    ],
)
def test_a_folder_source_takes_the_cases_patterns_match(
    tmp_path: Path, patterns: object, chosen: list[str]
) -> None:
    root = small_corpus(tmp_path / "corpus")
    for name in ("test_abs", "test_add", "test_sub"):
        shutil.copytree(root / "node" / "test_tiny", root / "node" / name)
    shutil.rmtree(root / "node" / "test_tiny")
    (root / "real" / "test_r").mkdir(parents=True)
    (root / "real" / "test_r" / "data.json").write_text("{}")
    source = FolderSource(root, cases=patterns)  # type: ignore[arg-type]
    assert [c.name for c in source] == chosen
    assert source.count == len(chosen)
    assert [r.name for r in source.refs()] == chosen


def test_a_pattern_that_finds_no_case_is_an_error_before_any_is_read(tmp_path: Path) -> None:
    root = small_corpus(tmp_path / "corpus")
    with pytest.raises(
        CorpusError,
        match=rf"^{root}: no case matches 'test_tiny\?\*'; the corpus's cases are named like "
        "'node/test_tiny'$",
    ):
        next(FolderSource(root, cases=["test_tiny", "test_tiny?*"]).refs())


@pytest.mark.parametrize("junk", ["test_abs", 1, [1], [b"test_abs"]])
def test_patterns_are_refused_unless_strings_in_a_collection(junk: object) -> None:
    with pytest.raises(UnsupportedTypeError, match=r"^FolderSource\(cases\).*: expected"):
        FolderSource(wheel_data_dir(), cases=junk)  # type: ignore[arg-type]
    with pytest.raises(UnsupportedTypeError, match=r"^MergedSource\(cases\).*: expected"):
        MergedSource([], cases=junk)  # type: ignore[arg-type]


def test_a_pattern_matches_the_whole_name_or_the_name_without_its_kind() -> None:
    assert case_matches("node/test_abs", "node/test_abs")
    assert case_matches("node/test_abs", "test_ab?")
    assert case_matches("node/test_abs", "*/test_abs")
    assert not case_matches("node/test_abs", "test_a")
    assert not case_matches("node/test_abs", "Node/*")
    assert case_matches("test_abs", "test_abs")


def test_merged_sources_take_the_cases_patterns_match(tmp_path: Path) -> None:
    a = [Case("node/test_a", "node"), Case("node/test_c", "node")]
    b = [Case("light/z", "light"), Case("node/test_b", "node")]
    merged = MergedSource(a, b, cases=["test_[ab]", "light/*"])
    assert [c.name for c in merged] == ["light/z", "node/test_a", "node/test_b"]
    assert [c.name for c in merged.refs()] == ["light/z", "node/test_a", "node/test_b"]
    merged = MergedSource(a, b, cases=["test_a", "test_x*"])
    cases = iter(merged)
    assert next(cases).name == "node/test_a"  # the error comes once the stream has ended
    with pytest.raises(
        CorpusError, match=r"^no case matches 'test_x\*'; the corpus's cases are named like "
    ):
        next(cases)
    with pytest.raises(CorpusError, match=r"^no case matches 'x': the corpus holds none$"):
        list(MergedSource(cases=["x"]))


def test_the_default_source_takes_patterns() -> None:
    names = [c.name for c in default_source(cases=["test_abs", "light/light_bvlc_alexnet"])]
    assert names == ["light/light_bvlc_alexnet", "node/test_abs"]


def test_a_file_over_the_limit_is_an_error_naming_it(tmp_path: Path) -> None:
    root = small_corpus(tmp_path / "corpus")
    with pytest.raises(CorpusError, match=r"^node/test_tiny/\S+: \d+ bytes exceed the limit of 20"):
        list(FolderSource(root, max_file_bytes=20))


def test_a_model_that_does_not_parse_is_an_error_naming_it() -> None:
    case = Case(
        "node/x", "node", [CorpusFile("node/x/model.onnx", b"\xff\xff")], "node/x/model.onnx"
    )
    with pytest.raises(CorpusError, match=r"^node/x/model\.onnx: does not parse as an ONNX model"):
        case.model()
    assert Case("real/x", "real", []).model() is None
    assert case.load() is case


# --- several sources -------------------------------------------------------------------


def test_merged_sources_give_their_cases_in_name_order(tmp_path: Path) -> None:
    a = [Case("node/a", "node"), Case("node/c", "node")]
    b = [Case("light/z", "light"), Case("node/b", "node")]
    merged = MergedSource(a, b)
    assert [c.name for c in merged] == ["light/z", "node/a", "node/b", "node/c"]
    assert [c.name for c in merged.refs()] == ["light/z", "node/a", "node/b", "node/c"]
    root = small_corpus(tmp_path / "corpus")
    refs = list(MergedSource(FolderSource(root), a).refs())
    assert [(type(r).__name__, r.name) for r in refs] == [
        ("Case", "node/a"),
        ("Case", "node/c"),
        ("CaseRef", "node/test_tiny"),
    ]


@pytest.mark.parametrize("junk", [1, None, "corpus", [1], [Case("node/a", "node"), "b"]])
def test_merged_sources_refuse_what_is_not_a_source_at_once(junk: object) -> None:
    with pytest.raises(UnsupportedTypeError, match=r"^MergedSource\(sources\[1\]\)") as info:
        MergedSource([Case("node/a", "node")], junk)
    assert isinstance(info.value, TypeError)
    assert "expected" in str(info.value)
    assert "Case or CaseRef" in str(info.value)


def test_merged_lazy_sources_have_each_case_checked_as_it_is_read(tmp_path: Path) -> None:
    def lazy() -> Iterator[object]:
        yield Case("node/a", "node")
        yield "node/b"

    merged = MergedSource(lazy())
    with pytest.raises(UnsupportedTypeError, match=r"^MergedSource\(sources\[0\]\)\[1\]: "):
        list(merged)
    with pytest.raises(UnsupportedTypeError, match=r"^MergedSource\(sources\[0\]\)\[1\]: "):
        list(MergedSource(lazy()).refs())
    # the sources are kept as given (their counts say the progress), their refs used
    root = small_corpus(tmp_path / "corpus")
    folder = FolderSource(root)
    merged = MergedSource(folder)
    assert merged.sources == (folder,)
    assert [type(r) for r in merged.refs()] == [CaseRef]
    assert folder.count == 1


def test_a_folder_source_takes_a_path(tmp_path: Path) -> None:
    assert FolderSource(str(tmp_path)).root == tmp_path
    for junk in (1, None, b"corpus", [tmp_path]):
        with pytest.raises(UnsupportedTypeError, match=r"^FolderSource\(root\): expected a path"):
            FolderSource(junk)


def test_case_refs_are_the_source_own_where_it_has_them(tmp_path: Path) -> None:
    cases = [Case("node/a", "node")]
    assert list(case_refs(cases)) == cases
    root = small_corpus(tmp_path / "corpus")
    assert [type(r) for r in case_refs(FolderSource(root))] == [CaseRef]


def test_the_default_source_is_the_node_suite_and_the_wheel_model_tests() -> None:
    source = default_source()
    node, folder = source.sources
    assert isinstance(node, NodeSuiteSource)
    assert node.cache
    assert isinstance(folder, FolderSource)
    assert folder.root == wheel_data_dir()
    assert {"light", "real", "simple"} <= {p.name for p in wheel_data_dir().iterdir()}


def test_a_folder_that_cannot_be_listed_is_an_error_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = small_corpus(tmp_path / "corpus")
    (ref,) = list(FolderSource(root).refs())
    shutil.rmtree(root / "node" / "test_tiny" / "test_data_set_0")  # gone since it was listed
    with pytest.raises(
        CorpusError,
        match=r"^node/test_tiny/test_data_set_0: the folder cannot be listed \(No such file",
    ):
        ref.load()
    real = os.scandir

    def refused(path: str) -> object:
        if str(path).endswith("node"):
            raise PermissionError(13, "Permission denied", path)
        return real(path)

    monkeypatch.setattr(os, "scandir", refused)
    with pytest.raises(
        CorpusError, match=r"^node: the folder cannot be listed \(Permission denied"
    ):
        list(FolderSource(root))


def test_runtime_layouts_are_cases_named_by_their_folders(tmp_path: Path) -> None:
    """A NAME.onnx beside test_data_set_N/ is one case typed by it; data sets without a
    model are one case of files; never a case per data set folder."""
    from layout_corpora import runtime_corpus

    from onnx_arrow.corpus.sources import folder_model, value_slots

    cases = {c.name: c for c in FolderSource(runtime_corpus(tmp_path / "src"))}
    assert sorted(cases) == [
        "kinference/fastgelu",
        "kinference/named",
        "kinference/no_model",
        "kinference/no_outputs",
        "kinference/rf_iris",
    ]
    named = cases["kinference/named"]
    assert named.model_path == "kinference/named/named.onnx"
    slots = value_slots(named, named.model())
    assert {Path(p).name: (s.number, s.index) for p, s in slots.items()} == {
        "input_0.pb": (0, 0),
        "output_0.pb": (0, 1),
        "output_1.pb": (1, 0),
    }
    no_model = cases["kinference/no_model"]
    assert no_model.model_path is None
    assert len(no_model.files) == 2
    assert value_slots(no_model, None) == {}
    # the folder of one such case is read as that case, as import and info read it
    alone = list(FolderSource(tmp_path / "src" / "kinference" / "named"))
    assert [(c.name, c.model_path) for c in alone] == [("named", "named/named.onnx")]
    assert folder_model(["a.onnx", "b.onnx"], ["test_data_set_0"]) is None


def test_fastgelu_output_1_named_y_is_for_the_one_output(tmp_path: Path) -> None:
    from layout_corpora import fastgelu

    from onnx_arrow.corpus.sources import value_slots

    (case,) = FolderSource(fastgelu(tmp_path / "fastgelu"))
    slot = value_slots(case, case.model())["fastgelu/test_data_set_0/output_1.pb"]
    assert (slot.data_set, slot.io, slot.number, slot.index, slot.name) == (0, "output", 1, 0, "Y")
    assert slot.what == "output 0 'Y', which the file names (its number is 1)"
