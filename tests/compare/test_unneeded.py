"""The entries of expectation files a report shows can be removed."""

from __future__ import annotations

from pathlib import Path

from compare_helpers import RAISES

from onnx_arrow import compare as cmp
from onnx_arrow.corpus import Store


def test_the_entries_that_matched_no_failing_case(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "expected.txt"
    path.write_text(
        "# known failures\n"
        f"xfail {RAISES}\n"
        "xfail test_abs  # fixed since\n"
        "xfail test_nothing_like_it\n"
        "skip test_add\n"
        "skip test_gone_long_ago\n"
        "skip test_string_concat when onnx<1.10\n"  # not this corpus's: not judged
        "tolerance test_no_such=0.1,0\n"
        "tolerance test_abs ulp=2\n"
        "skip ^test_abs_cuda\n"  # the CUDA test of a case: not judged on this run
    )
    patterns = cmp.Expectations.read(path)
    cases = [RAISES, "test_abs", "test_add", "test_string_concat"]
    df = cmp.compare(
        store, cases=cases, patterns=patterns, tolerance={"never": (0.1, 0.0)}
    ).to_pandas()
    table = cmp.unneeded_entries(df, patterns, store.metadata["onnx_version"])
    assert list(table.columns) == list(cmp.UNNEEDED_COLUMNS)
    rows = [(r.where, r.kind, r.pattern, r.why) for r in table.itertuples()]
    assert rows == [
        (f"{path}:6", "skip", "test_gone_long_ago", "finds no case"),
        (f"{path}:3", "xfail", "test_abs", "its case passes"),
        (f"{path}:4", "xfail", "test_nothing_like_it", "finds no case"),
        (f"{path}:8", "tolerance", "test_no_such", "finds no case"),
    ]
    assert table["reason"].tolist() == [
        "known failures",
        "fixed since",
        "known failures",
        "known failures",
    ]
    # the skips run: a skip whose case passes can go too
    ran = patterns.running_skips()
    df = cmp.compare(store, cases=cases, patterns=ran).to_pandas()
    table = cmp.unneeded_entries(df, ran, store.metadata["onnx_version"])
    assert df.loc[df["case"] == "node/test_add", "status"].tolist() == ["xpass"]
    assert table.loc[table["pattern"] == "test_add", "why"].item() == "its case passes"
