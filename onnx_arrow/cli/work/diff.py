"""``onnx-arrow diff``: two corpora compared path by path: the paths by status, the
changes by kind of case, and the largest float drifts."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from onnx_arrow.cli._shared import EXIT_DATA_ERROR, EXIT_OK, MAX_LISTED, print_error
from onnx_arrow.cli.work._shared import check_file_target, print_fields
from onnx_arrow.cli.work.progress import Progress
from onnx_arrow.corpus.releases import is_release, source_text
from onnx_arrow.diff import DEFAULT_CORPUS, STATUSES, diff, equivalent

__all__ = ["run"]


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Diff OLD and NEW; exit status 1 unless they are equivalent."""
    for side in (args.old, args.new):
        if not is_release(side) and not Path(side).exists():
            args.subparser.error(
                f"{side}: no such store or folder (or {DEFAULT_CORPUS}, @onnx, @onnx==VERSION)"
            )
    if args.out is not None:
        reading = [Path(p) for p in (args.old, args.new) if not is_release(p)]
        check_file_target(Path(args.out), force=args.force, what="the report", reading=reading)
    with Progress("comparing", "cases", start="reading both sides") as progress:
        report = diff(args.old, args.new, progress=progress.step, offline=args.offline)
    if args.out is not None:
        from onnx_arrow.compare import write_report  # the compare package imports onnx

        write_report(report, args.out)
    df = report.to_pandas()
    ok = equivalent(df, max_ulp=args.max_ulp, accept=args.accept)
    counts = df["status"].value_counts()
    lines: list[tuple[str, object]] = [("paths", len(df))]
    lines += [(f"  {s}", int(counts.get(s, 0))) for s in STATUSES if counts.get(s, 0)]
    old_cases = df.loc[df["status"] != "added", "case"].nunique()
    new_cases = df.loc[df["status"] != "removed", "case"].nunique()
    lines += [("cases", f"{old_cases} old, {new_cases} new")]
    made = report.provenance or {}
    for side in ("old", "new"):
        lines.append((f"{side} from", source_text(made.get(f"{side}_provenance"))))
    print_fields(lines, out)
    changed = df[~ok]
    if len(changed):
        kinds = changed["case"].str.split("/").str[0]
        by_kind = changed.groupby([kinds, "status"]).size()
        print("\nnot equivalent, by kind of case and status:", file=out)
        for (kind, status), n in by_kind.items():
            print(f"  {kind:<20} {status:<15} {n}", file=out)
    drifts = df[df["status"] == "float-drift"].sort_values("max_ulp", ascending=False)
    if len(drifts):
        bands = ((1, "1"), (2, "2"), (4, "3-4"), (16, "5-16"), (1024, "17-1024"))
        ulps = drifts["max_ulp"].astype("int64")
        print("\nfloat drifts by largest ULP distance:", file=out)
        low = 0
        for high, label in bands:
            print(f"  {label:<10} {int(((ulps > low) & (ulps <= high)).sum())}", file=out)
            low = high
        print(f"  {'> 1024':<10} {int((ulps > low).sum())}", file=out)
        print(f"\nlargest float drifts (up to {MAX_LISTED}):", file=out)
        for row in drifts.head(MAX_LISTED).itertuples():
            print(f"  {int(row.max_ulp):>12} ULP  {row.path}", file=out)
    if args.out is not None:
        print(f"\nreport: {args.out} (a row per path)", file=out)
    few = min(old_cases, new_cases) < args.min_cases
    if few:
        print_error(f"a side has fewer than {args.min_cases} cases (--min-cases)")
    return EXIT_DATA_ERROR if len(changed) or few else EXIT_OK
