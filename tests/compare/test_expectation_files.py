"""Expectation files read as projects keep them: onnx-arrow's lines with conditions and
reasons, onnxruntime's filters and overrides files as onnxruntime's own script reads them."""

from __future__ import annotations

import json
import pickle
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import onnx
import onnx.defs
import pytest
from compare_helpers import cli
from hostile.harness import Case, Expect, run_cases

from onnx_arrow import compare as cmp
from onnx_arrow.compare.expectation_files import (
    ONNXRUNTIME_LISTS,
    Pattern,
    highest_opset,
    parse_clauses,
    read_patterns,
    supports_device,
)
from onnx_arrow.compare.plans import searched_names
from onnx_arrow.corpus import NodeSuiteSource, Store

DATA = Path(__file__).parents[1] / "data" / "onnxruntime"
FILTERS = DATA / "onnx_backend_test_series_filters.jsonc"
OVERRIDES = DATA / "onnx_backend_test_series_overrides.jsonc"


def _script_lists(device: str, bits: int) -> list[str]:
    """The lists onnxruntime's onnx_backend_test_series.py applies, written out as it
    writes them (its if-chain), to check the table the reader keeps."""
    lists = ["current_failing_tests"]
    lists += ["current_failing_tests_x86"] if bits == 32 else []
    for name, test in (
        ("DNNL", "DNNL"),
        ("NNAPI", "NNAPI"),
        ("OPENVINO_GPU", "OPENVINO_GPU"),
        ("OPENVINO_CPU_FP32", "OPENVINO_CPU"),
        ("OPENVINO_CPU_FP16", "OPENVINO_CPU"),
        ("OPENVINO_NPU", "OPENVINO_NPU"),
        ("OPENVINO_opset18", "OPENVINO"),
        ("MIGRAPHX", "MIGRAPHX"),
        ("WEBGPU", "WEBGPU"),
        ("QNN", "QNN"),
    ):
        if supports_device(device, test):
            lists.append(f"current_failing_tests_{name}")
    if supports_device(device, "DML") and not supports_device(device, "GPU"):
        lists.append("current_failing_tests_pure_DML")
    return [
        *lists,
        "tests_with_pre_opset7_dependencies",
        "unsupported_usages",
        "failing_permanently",
        "test_with_types_disabled_due_to_binary_size_concerns",
    ]


def _script_entries(device: str, bits: int, opset: int) -> list[str]:
    """The regexes onnxruntime's script excludes, as its load_jsonc and apply_filters
    give them."""
    code = [line.split("//")[0] for line in FILTERS.read_text().splitlines()]
    filters = json.loads("\n".join(code))
    out = []
    for name in _script_lists(device, bits):
        for entry in filters[name]:
            if isinstance(entry, list):
                if re.match(entry[0], f"opset{opset}") is not None:
                    out.append(entry[1])
            else:
                out.append(entry)
    return out


@pytest.mark.parametrize(
    ("device", "bits"),
    [("CPU", 64), ("CPU", 32), ("CPU-DNNL", 64), ("CPU-DML", 64), ("GPU-DML", 64)],
)
def test_the_lists_of_onnxruntimes_filters_file_for_each_provider(device: str, bits: int) -> None:
    patterns = cmp.Expectations.read(FILTERS, provider=device, bits=bits)
    assert patterns.xfail == []
    assert patterns.tolerance == []
    assert patterns.skip[0] == "(FLOAT16)"  # the script's own
    assert patterns.skip[1:] == _script_entries(device, bits, 28)
    assert {p.group for p in patterns.skip[1:]} == set(_script_lists(device, bits))


def test_every_entry_keeps_its_line_and_its_comment() -> None:
    lines = FILTERS.read_text().splitlines()
    patterns = cmp.Expectations.read(FILTERS, provider="CPU-DNNL", bits=32).skip[1:]
    for p in patterns:
        assert isinstance(p, Pattern)
        file, line = p.where.rsplit(":", 1)
        assert file == str(FILTERS)
        text = lines[int(line) - 1]
        assert json.dumps(str(p)) in text
        if "//" in text:
            assert p.reason == text.split("//", 1)[1].strip()
    by_text = {str(p): p for p in patterns}
    assert by_text["^test_adam"].reason.startswith("NOT_IMPLEMENTED : Could not find")
    # no comment of its own: the comment above its run
    assert by_text["^test_gru_batchwise_cpu"].reason == (
        "Following tests are for opset 14 ops and are not yet implemented in ORT"
    )
    # nor above its run: its list's
    assert (
        by_text["^test_adagrad"].reason == "Tests that are failing temporarily and should be fixed"
    )
    assert by_text["^test_AvgPool1d"].reason.startswith("ORT first supported opset 7")
    assert repr(by_text["^test_adam"]).startswith(
        f"'^test_adam' ({FILTERS}:{by_text['^test_adam'].where.rsplit(':')[-1]} "
        "current_failing_tests: NOT_IMPLEMENTED"
    )


def test_the_skips_agree_with_the_scripts_on_every_node_test_name() -> None:
    """The script excludes ``(FLOAT16)`` and the joined regex of its lists, searched in
    onnx's test name (``test_abs_cpu``); compare skips what its patterns find."""
    opset = onnx.defs.onnx_opset_version()
    joined = re.compile("(" + "|".join(_script_entries("CPU", 64, opset)) + ")")
    patterns = cmp.Expectations.read(FILTERS).for_corpus(onnx.__version__)
    names = [case.name for case in NodeSuiteSource()]
    assert len(names) > 1500
    theirs = {
        n for n in names if re.search("(FLOAT16)", f"{n[5:]}_cpu") or joined.search(f"{n[5:]}_cpu")
    }
    ours = {n for n in names if patterns.skips(n) is not None}
    assert ours == theirs
    assert 300 < len(ours) < len(names)


def test_the_overrides_file_gives_every_test_its_tolerances() -> None:
    patterns = cmp.Expectations.read(OVERRIDES)
    assert patterns.skip == []
    assert patterns.xfail == []
    assert patterns.tolerance[0] == ("^test_dft$", 1e-3, 1e-3)
    assert ("^test_stft$", 1e-3, 1e-4) in patterns.tolerance
    assert patterns.tolerance[-1] == (".*", 1e-3, 1e-5)  # rtol_default, atol_default
    assert patterns.tolerance[-1][0].where == f"{OVERRIDES}:2"
    # the exact test name: not test_dft_axis (its own entry), not node/test_dftx
    assert patterns.tolerance_for("node/test_dft", None, 0, 0) == (
        1e-3,
        1e-3,
        "pattern '^test_dft$'",
    )
    assert patterns.tolerance_for("node/test_dftx", None, 0, 0) == (1e-3, 1e-5, "pattern '.*'")


def test_opset_pairs_are_matched_as_the_script_matches_them(tmp_path: Path) -> None:
    path = tmp_path / "filters.jsonc"
    path.write_text(
        "{\n"
        "    // known failures\n"
        '    "current_failing_tests": [\n'
        '        ["opset1[0-9]", "^test_abs"], // gone since opset 20\n'
        '        ["opset2", "^test_add"],\n'
        '        "^test_string"\n'
        "    ],\n"
        '    "failing_permanently_nodejs_binding": [["opset10", "^test_add"]]\n'
        "}\n"
    )
    patterns = cmp.Expectations.read(path)
    assert [str(p) for p in patterns.skip] == [
        "(FLOAT16)",
        "^test_abs",
        "^test_add",
        "^test_string",
    ]
    assert [str(c) for c in patterns.skip[1].when] == ["opset~opset1[0-9]"]
    assert patterns.skip[1].reason == "gone since opset 20"
    assert patterns.skip[2].reason == "known failures"
    # re.match of the opset regex against opset<N>: 'opset2' matches opset2x too
    assert [str(p) for p in patterns.for_corpus("1.13.1").skip] == [
        "(FLOAT16)",
        "^test_abs",
        "^test_string",
    ]
    assert [str(p) for p in patterns.for_corpus("1.16.0").skip] == [
        "(FLOAT16)",
        "^test_add",
        "^test_string",
    ]
    with pytest.raises(cmp.CompareError, match="does not record the onnx release"):
        patterns.for_corpus(None)
    assert highest_opset("1.13.1") == 18
    assert highest_opset("1.16.2") == 21
    assert highest_opset(onnx.__version__) == onnx.defs.onnx_opset_version()
    with pytest.raises(cmp.CompareError, match=r"onnx 9\.1 is not in onnx\.helper\.VERSION_TABLE"):
        highest_opset("9.1")


def test_onnx_arrows_own_lines_take_conditions_and_reasons(tmp_path: Path) -> None:
    path = tmp_path / "expected.txt"
    path.write_text(
        "# Abs is new in this backend\n"
        "skip test_abs when opset>=21 provider=CPU\n"
        "skip test_add when provider=DML  # DML only\n"
        "xfail test_string_concat when onnx<1.16 # fixed in onnx 1.16\n"
        "tolerance test_cast=0.5,0 when onnx=1.23 opset<=28\n"
        "tolerance test_range ulp=4 when bits=64\n"
        "skip test_size#literal\n"
    )
    patterns = cmp.Expectations.read(path)
    assert [str(p) for p in patterns.skip] == ["test_abs", "test_size#literal"]
    abs_ = patterns.skip[0]
    assert (abs_.where, abs_.reason, [str(c) for c in abs_.when]) == (
        f"{path}:2",
        "Abs is new in this backend",
        ["opset>=21"],  # the provider settled as the file was read
    )
    assert patterns.xfail[0].reason == "fixed in onnx 1.16"
    on_dml = cmp.Expectations.read(path, provider="GPU-DML").skip
    assert on_dml == ["test_add", "test_size#literal"]  # not a CPU build: no test_abs
    for version, skip, xfail, tolerance in (
        ("1.23.2", ["test_abs", "test_size#literal"], [], ["test_cast"]),
        ("1.15.0", ["test_size#literal"], ["test_string_concat"], []),
    ):
        applied = patterns.for_corpus(version)
        assert applied.skip == skip
        assert applied.xfail == xfail
        assert [t[0] for t in applied.tolerance] == tolerance
        assert applied.ulp == [("test_range", 4)]
    assert cmp.Expectations.read(path, bits=32).ulp == []
    for bad, message in (
        ("skip x when opset>>3\n", "line 1: condition 'opset>>3': expected opset, onnx"),
        ("skip x when onnx~1\n", "line 1: condition 'onnx~1'"),
        ("skip x when opset=new\n", "line 1: condition 'opset=new'"),
        ("skip when opset=3\n", "line 1: expected 'skip REGEX'"),
    ):
        path.write_text(bad)
        with pytest.raises(cmp.CompareError, match=re.escape(message)):
            cmp.Expectations.read(path)
    assert [str(c) for c in parse_clauses("opset>=18, onnx<1.17 provider=DML")] == [
        "opset>=18",
        "onnx<1.17",
        "provider=DML",
    ]


def test_a_json_file_that_is_none_of_the_kinds_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonc"
    for text, message in (
        ('{"lists": {"a": 1}}', "expected onnx-arrow's patterns JSON"),
        ('{"current_failing_tests": [1]}', "list 'current_failing_tests': expected regexes"),
        ('{"current_failing_tests": ["("]}', "list 'current_failing_tests': '(' is not a regular"),
        ('{"rtol_default": 1e-3}', "atol_default, rtol_overrides, atol_overrides missing"),
        ("[1, 2]", "expected onnx-arrow's patterns JSON"),
    ):
        path.write_text(text)
        with pytest.raises(cmp.CompareError, match=re.escape(message)) as err:
            read_patterns(path)
        assert str(path) in str(err.value)


def test_devices_as_onnxruntimes_backend_names_them() -> None:
    assert supports_device("CPU", "CPU")
    assert not supports_device("CPU", "GPU")
    assert supports_device("GPU", "CUDA")
    assert supports_device("GPU-DML", "DML")
    assert supports_device("CPU-OPENVINO_CPU_FP32", "OPENVINO")  # a prefix, as the script tests
    assert set(ONNXRUNTIME_LISTS) >= set(_script_lists("CPU-DNNL", 32))


def test_a_pattern_keeps_where_it_came_from_across_processes() -> None:
    p = Pattern(
        "^test_x", where="f.jsonc:3", group="g", reason="why", when=parse_clauses("opset>3")
    )
    back = pickle.loads(pickle.dumps(p))
    assert (back, back.where, back.group, back.reason, back.when) == (
        "^test_x",
        "f.jsonc:3",
        "g",
        "why",
        p.when,
    )
    assert str(p).__class__ is str
    assert json.dumps([p]) == '["^test_x"]'


def test_a_skip_and_an_xfail_say_why(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "onnx_backend_test_series_filters.jsonc"
    path.write_text(
        '{\n    "current_failing_tests": [\n'
        '        "^test_abs", // NOT_IMPLEMENTED\n'
        '        ["opset1", "^test_add"]\n    ]\n}\n'
    )
    df = cmp.compare(
        store, cases=["test_abs", "test_add"], patterns=cmp.Expectations.read(path)
    ).to_pandas()
    rows = {r.case: r for r in df.itertuples()}
    assert rows["node/test_abs"].detail == (
        f"skip pattern '^test_abs' ({path}:3 current_failing_tests: NOT_IMPLEMENTED)"
    )
    assert rows["node/test_add"].status == "match"  # opset 28: 'opset1' does not match it
    df = cmp.compare(
        store, cases=["test_abs"], patterns=cmp.Expectations.read(path).running_skips()
    ).to_pandas()
    assert df["status"].tolist() == ["xpass"]
    assert "NOT_IMPLEMENTED" in df["detail"].iloc[0]
    code, out, _ = cli("compare", str(store.path), "--case", "test_a*", "--patterns", str(path))
    assert code == 0
    assert "entries that matched no failing case (can be removed): 0" in out
    assert "(skip entries that find cases are judged with --run-skipped)" in out
    code, out, _ = cli(
        "compare", str(store.path), "--case", "test_a*", "--patterns", str(path), "--run-skipped"
    )
    assert code == 0
    assert "entries that matched no failing case (can be removed): 1" in out
    assert f"  {path}:3 [current_failing_tests] xfail '^test_abs': its case passes" in out


def test_searched_names() -> None:
    assert searched_names("light/test_x") == ("light/test_x", "test_x", "test_x_cpu")


def test_onnxruntimes_files_drive_onnxruntime_over_a_few_cases(store: Store) -> None:
    pytest.importorskip("onnxruntime")
    patterns = cmp.Expectations.read(FILTERS) + cmp.Expectations.read(OVERRIDES)
    cases = ["test_abs", "test_add", "test_cast_FLOAT_to_BFLOAT16", "test_string_concat"]
    df = cmp.compare(
        store, cmp.backend_named("onnxruntime"), cases=cases, patterns=patterns
    ).to_pandas()
    rows = {r.case: r for r in df.itertuples()}
    skipped = rows["node/test_cast_FLOAT_to_BFLOAT16"]
    assert skipped.status == "skipped"
    assert skipped.detail.startswith("skip pattern '(FLOAT16)' (onnx_backend_test_series.py:")
    for case in ("node/test_abs", "node/test_add", "node/test_string_concat"):
        row = rows[case]
        assert (row.status, row.tolerance) == ("match", "pattern '.*'")
    assert (rows["node/test_abs"].rtol, rows["node/test_abs"].atol) == (1e-3, 1e-5)


# --- limits, linear reading, strict text ----------------------------------------------------


def _real_entries() -> list[str]:
    """The entry lines of onnxruntime's real filters file (its regexes, commas dropped)."""
    lines = FILTERS.read_text().splitlines()
    return [line.split("//")[0].strip().rstrip(",") for line in lines if line.strip()[:2] == '"^']


def _filters(path: Path, n: int) -> Path:
    """A legal filters file of ``n`` entries in one run of one list: the real entries,
    numbered apart, under a comment block."""
    real = _real_entries()
    entries = [f'{real[i % len(real)][:-1]}_{i}"' for i in range(n)]
    path.write_text(
        '{\n    // what fails\n    // and why\n    "current_failing_tests": [\n        '
        + ",\n        ".join(entries)
        + "\n    ]\n}\n"
    )
    return path


def _calls(read: Callable[[], object]) -> int:
    """How many calls (of Python and C functions) ``read`` makes: its work, counted."""
    count = 0

    def profile(frame: object, event: str, arg: object) -> None:
        nonlocal count
        count += event in ("call", "c_call")

    sys.setprofile(profile)
    try:
        read()
    finally:
        sys.setprofile(None)
    return count


def test_reading_a_filters_file_takes_work_linear_in_its_entries(tmp_path: Path) -> None:
    """The work of reading 2N entries is twice that of N, not four times (the comment
    above an entry's run was found by walking back over the run from each entry)."""
    work = {}
    for n in (1000, 2000):
        path = _filters(tmp_path / f"{n}.jsonc", n)
        work[n] = _calls(lambda path=path: read_patterns(path))
        assert len(read_patterns(path).skip) == n + 1
    assert work[2000] < 2.3 * work[1000], work


def test_a_comment_block_is_joined_once_for_its_run(tmp_path: Path) -> None:
    """Every entry below a block shares its reason, one string: a block of B lines over a
    run of N entries is B + N work, not B * N."""
    block = "".join(f"# reason line {i}\n" for i in range(3000))
    lines = tmp_path / "lines.txt"
    lines.write_text(block + "".join(f"skip ^test_{i}$\n" for i in range(3000)))
    jsonc = _filters(tmp_path / "f.jsonc", 3000)
    for path, reason in ((lines, "reason line 0 reason line 1 "), (jsonc, "what fails and why")):
        reasons = [p.reason for p in read_patterns(path).skip if p.where]
        assert len(reasons) == 3000
        assert str(reasons[0]).startswith(reason)
        assert len({id(r) for r in reasons}) == 1


@pytest.mark.slow  # compare in four child processes; the linear work is counted above
def test_hostile_expectation_files_end_in_time(store: Store, tmp_path: Path) -> None:
    """Files that took minutes or hours (a 1.5 MB line, 12,000 entries) end in a child
    process under the hostile suite's memory cap and a minute's timeout (four times what
    the slowest, compare over the 12,000 patterns, takes on a loaded machine): read, or
    refused by line."""

    def file(name: str, text: str) -> Callable[[Path], dict[str, Any]]:
        def build(root: Path) -> dict[str, Any]:
            (root / name).write_text(text)
            argv = ["compare", str(store.path), "--case", "test_abs", "--patterns"]
            return {"argv": [*argv, str(root / name)]}

        return build

    n = 1_500_000
    cases = [
        Case("patterns", name, "cli", build, Expect(rc=rc, where=where))
        for name, build, rc, where in (
            ("spaces", file("spaces.txt", "skip x" + " " * n + "y\n"), 1, "spaces.txt: line 1"),
            ("whens", file("whens.txt", "skip x" + " when" * (n // 5) + "\n"), 1, "whens.txt"),
            ("comments", file("comments.txt", "#\n" * 700_000 + "skip x\n"), 0, None),
            (
                "filters",
                lambda root: file("f.jsonc", _filters(root / "f0", 12_000).read_text())(root),
                0,
                None,
            ),
        )
    ]
    outcomes = run_cases(cases, tmp_path, timeout=60)
    problems = {k: o.problem for k, o in outcomes.items() if o.problem}
    assert not problems


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("skip ^test_t{1,99999999999}$\n", "repetition count 99999999999 is more than the 1000"),
        ("skip ^test_t{1001}\n", "repetition count 1001 is more than the 1000"),
        ("xfail x{2,3000}y\n", "repetition count 3000"),
        ("skip " + "(" * 5000 + ")" * 5000 + "\n", "is not a regular expression (it nests"),
        ("skip " + "a" * 16_385 + "\n", "is 16385 characters long, more than the 16384"),
        ("tolerance x ulp=1180591620717411303424\n", "ULP budget 1180591620717411303424 is more"),
        ("tolerance x ulp=" + "9" * 5000 + "\n", "(5000 digits) is more than 9223372036854775807"),
        ("skip x when onnx<1.x.y\n", "condition 'onnx<1.x.y': onnx's value must be a release"),
        ("skip x when onnx>=1.16-rc1\n", "condition 'onnx>=1.16-rc1'"),
        ("skip x when opset>=1_8\n", "opset's value must be a whole number, not '1_8'"),
        ("skip x when opset>=٣\n", "opset's value must be a whole number"),
        ("skip x when bits=16\n", "bits's value must be 32 or 64"),
        ("skip x when provider=DML<\n", "provider's value must be a provider name"),
        ("skip x when version=3\n", "condition 'version=3': expected opset, onnx"),
        ("skip x when opset~(\n", "condition 'opset~(': regular expression '(' is not a regular"),
        ('{"skip": ["a{1,99999}"]}', "skip: 'a{1,99999}': repetition count 99999"),
        ('{"xfail": ["a", "("]}', "xfail: '(' is not a regular expression"),
        ('{"tolerance": {"x": {"ulp": 1180591620717411303424}}}', "ULP budget 1180591620717"),
        ('{"current_failing_tests": [["opset{1,5000}", "x"]]}', "opset pattern 'opset{1,5000}'"),
        ('{\n  "skip": ["a"],\n  "xfail": [],\n  "skip": ["b"]\n}', "line 4: key 'skip' appears"),
        (
            '{\n  "rtol_default": 0, "atol_default": 0,\n  "rtol_overrides": {"t": 1},\n'
            '  "atol_overrides": {\n    "t": 1,\n    "u": 1,\n    "t": 2\n  }\n}',
            "line 7: key 't' appears twice in one object",
        ),
    ],
    ids=lambda v: repr(v)[:24],
)
def test_what_passes_a_limit_or_a_form_is_a_located_error(
    tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / ("x.jsonc" if text.startswith("{") else "x.txt")
    path.write_text(text)
    with pytest.raises(cmp.CompareError, match=re.escape(message)) as err:
        read_patterns(path)
    assert str(err.value).startswith(f"{path}: ")
    if not text.startswith("{"):
        assert str(err.value).startswith(f"{path}: line 1: ")


def test_a_filters_file_with_a_list_twice_is_refused_at_the_second(tmp_path: Path) -> None:
    path = tmp_path / "filters.jsonc"
    lines = FILTERS.read_text().splitlines()
    second = next(i for i, line in enumerate(lines) if '"unsupported_usages"' in line)
    lines[second] = lines[second].replace("unsupported_usages", "current_failing_tests")
    path.write_text("\n".join(lines))
    with pytest.raises(cmp.CompareError, match="key 'current_failing_tests' appears twice"):
        read_patterns(path)
    with pytest.raises(cmp.CompareError, match=f"line {second + 1}: key"):
        read_patterns(path)


@pytest.mark.parametrize("suffix", ["txt", "json", "jsonc"])
def test_a_file_that_is_not_utf8_is_refused_at_its_line(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"x.{suffix}"
    good = {"txt": b"skip a\nskip b\n", "json": b'{"skip": [\n"a",\n"b"]}', "jsonc": b""}
    data = FILTERS.read_bytes() if suffix == "jsonc" else good[suffix]
    at = data.index(b"b", data.index(b"\n", data.index(b"\n") + 1) if suffix == "jsonc" else 0)
    path.write_bytes(data[:at] + b"\xff" + data[at:])
    with pytest.raises(cmp.CompareError, match=r"byte b'\\xff' is not UTF-8") as err:
        read_patterns(path)
    line = data.count(b"\n", 0, at) + 1
    assert str(err.value).startswith(f"{path}: line {line}: ")


def test_a_file_past_the_size_or_entry_limit_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "x.txt"
    path.write_text("skip x\n" + "#" * (4 << 20))
    with pytest.raises(cmp.CompareError, match="bytes exceed the limit of 4194304") as err:
        read_patterns(path)
    assert str(err.value).startswith(f"{path}: ")
    path.write_text("".join(f"skip {i}\n" for i in range(100_001)))
    with pytest.raises(cmp.CompareError, match="line 100001: more than 100000 entries"):
        read_patterns(path)
    for lists in ('{"skip": [%s]}', '{"current_failing_tests": [%s]}'):
        path.write_text(lists % ",\n".join(f'"{i}"' for i in range(100_001)))
        with pytest.raises(cmp.CompareError, match="more than 100000 entries") as err:
            read_patterns(path)
        assert str(err.value).startswith(f"{path}: ")
    # the real files are far inside the limits
    assert 100 * len(_real_entries()) < 100_000
    assert 50 * FILTERS.stat().st_size < 4 << 20


def test_a_pattern_given_in_code_or_as_an_option_is_checked_too(store: Store) -> None:
    for skip in ("^test_t{1,99999999999}$", "^test_t{1,2000}$"):
        with pytest.raises(cmp.CompareError, match=r"pattern '\^test_t\{1,\d+\}\$': repetition"):
            cmp.Expectations(skip=[skip])
    with pytest.raises(cmp.CompareError, match="max_ulp is 1180591620717411303424; give"):
        cmp.Expectations(ulp=[("x", 2**70)])
    code, _, err = cli("compare", str(store.path), "--case", "test_abs", "--skip", "x{99999}")
    assert code == 1
    assert "pattern 'x{99999}': repetition count 99999 is more than the 1000" in err
    assert "Traceback" not in err
    assert cmp.Expectations(skip=["^test_(abs|neg){1,2}[{]9999}$"]).skip  # a count of 2
