"""Benchmark and proof: every onnx release from 1.4.1 to the installed one as a corpus.

For each release (``@onnx==VERSION``), in release order:

1. its wheel is fetched from the package index (the smallest of its wheels, checked
   against the sha256 the index states): the time, the wheel's size;
2. its test data are imported into one store (releases from 1.23 on generate their node
   suite first, in an environment made for them): the time, the files, the cases, the
   store's size against the data's;
3. the store is exported, and the export is compared with the release's data tree file by
   file: the wheel's ``onnx/backend/test/data`` byte for byte, and for a release that
   generates its node suite, the tree it generated too.  Any difference is printed and
   the script exits with status 1.

Then the ``diff`` of each release against the next (counts per status) as one table.

The cache is a fresh folder of the run (``--cache`` to keep one: a second run then reads
the wheels and environments from it, and its fetch times are the cache's).  Times are of
one run: fetching depends on the network, and each step runs once per release.

Run::

    python benchmarks/bench_releases.py [--releases 1.4.1 1.10.0 ...] [--cache DIR]
        [--jobs N]
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import onnx

#: The last release of each minor version from 1.4 on, with 1.10.0 and 1.14.1 (the versions
#: runtimes pin), up to the installed onnx.
RELEASES = (
    "1.4.1", "1.5.0", "1.6.0", "1.7.0", "1.8.1", "1.9.0", "1.10.0", "1.11.0", "1.12.0",
    "1.13.1", "1.14.1", "1.15.0", "1.16.2", "1.17.0", "1.18.0", "1.19.1", "1.20.1",
    "1.21.0", "1.22.0", "1.23.2",
)  # fmt: skip

#: The statuses of a diff shown as columns (the others are counted under "other").
SHOWN = (
    "identical", "same-values", "float-drift", "values-changed", "shape-changed",
    "model-changed", "file-changed", "added", "removed",
)  # fmt: skip


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(p) if p.isdigit() else -1 for p in version.split("."))


def _files(root: Path) -> Iterator[tuple[str, Path]]:
    for path in sorted(root.rglob("*")):
        if path.is_file():
            yield path.relative_to(root).as_posix(), path


def _same_tree(expected: Path, got: Path) -> list[str]:
    """The differences between two trees: paths missing or extra, bytes that differ."""
    want = dict(_files(expected))
    have = dict(_files(got))
    out = [f"missing: {p}" for p in sorted(want.keys() - have.keys())]
    out += [f"extra: {p}" for p in sorted(have.keys() - want.keys())]
    out += [
        f"different bytes: {p}"
        for p in sorted(want.keys() & have.keys())
        if want[p].read_bytes() != have[p].read_bytes()
    ]
    return out


def _release(version: str, work: Path, jobs: int) -> dict[str, Any]:
    from onnx_arrow.corpus import WriteOptions, export_store, write_store
    from onnx_arrow.corpus.releases import release_source
    from onnx_arrow.corpus.wheels import extract_data, fetch_wheel

    row: dict[str, Any] = {"version": version}
    start = time.perf_counter()
    wheel = fetch_wheel(version)
    row["fetch_s"] = time.perf_counter() - start
    row["wheel_bytes"] = wheel.path.stat().st_size
    store = work / f"onnx-{version}.parquet"
    start = time.perf_counter()
    with release_source(f"@onnx=={version}") as (source, prov):
        row["prepare_s"] = time.perf_counter() - start  # unzipped, and generated (1.23 on)
        options = WriteOptions(keep_undecodable=True, provenance=prov)
        summary = write_store(source, store, options=options, jobs=jobs)
        row["import_s"] = time.perf_counter() - start
        row["generated"] = prov.get("generator", {}).get("numpy") is not None
        tree = Path(source.root)  # type: ignore[attr-defined]
        back = work / f"export-{version}"
        export_store(store, back, jobs=jobs)
        differences = _same_tree(tree, back)
        with tempfile.TemporaryDirectory(dir=work) as tmp:
            extract_data(wheel.path, tmp)  # the wheel's own tree, byte for byte in the export
            shipped = _same_tree(Path(tmp), back)
            differences += [d for d in shipped if not d.startswith("extra: node/")]
    row.update(
        files=summary["files"],
        cases=summary["cases"],
        data_bytes=summary["source_bytes"],
        store_bytes=summary["bytes"],
        differences=differences,
        store=store,
    )
    return row


def _diffs(rows: list[dict[str, Any]]) -> list[tuple[str, dict[str, int], float]]:
    from onnx_arrow.diff import diff

    out = []
    for old, new in itertools.pairwise(rows):
        start = time.perf_counter()
        df = diff(old["store"], new["store"]).to_pandas()
        counts = {str(k): int(v) for k, v in df["status"].value_counts().items()}
        out.append((f"{old['version']} -> {new['version']}", counts, time.perf_counter() - start))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--releases", nargs="+", default=None, metavar="VERSION")
    parser.add_argument("--cache", metavar="DIR", help="the cache folder (default: a fresh one)")
    parser.add_argument("--jobs", type=int, default=1, metavar="N")
    args = parser.parse_args()
    installed = onnx.__version__
    releases = args.releases or [v for v in RELEASES if _key(v) <= _key(installed)]
    releases = sorted(dict.fromkeys(releases), key=_key)
    with tempfile.TemporaryDirectory(prefix="bench-releases-") as tmp:
        work = Path(tmp)
        os.environ["ONNX_ARROW_CACHE_DIR"] = args.cache or str(work / "cache")
        print(f"releases: {' '.join(releases)} (installed onnx {installed})\n")
        head = (
            f"{'release':<8} {'wheel':>9} {'fetch s':>8} {'import s':>9} {'files':>6} "
            f"{'cases':>6} {'data':>9} {'store':>9} {'store/data':>10}  export"
        )
        print(head)
        print("-" * len(head))
        rows = []
        failed = False
        for version in releases:
            row = _release(version, work, args.jobs)
            rows.append(row)
            same = "byte for byte" if not row["differences"] else f"{len(row['differences'])} diff"
            if row["generated"]:
                same += " (node generated)"
            print(
                f"{version:<8} {row['wheel_bytes'] / 2**20:>7.1f}MB {row['fetch_s']:>8.1f} "
                f"{row['import_s']:>9.1f} {row['files']:>6} {row['cases']:>6} "
                f"{row['data_bytes'] / 2**20:>7.1f}MB {row['store_bytes'] / 2**20:>7.1f}MB "
                f"{row['store_bytes'] / row['data_bytes']:>10.3f}  {same}",
                flush=True,
            )
            for line in row["differences"][:10]:
                print(f"    {line}")
            failed = failed or bool(row["differences"])
        print("\ndiff of consecutive releases (paths per status):\n")
        shown = list(SHOWN)
        head = f"{'releases':<17}" + "".join(f"{s[:9]:>10}" for s in shown) + f"{'other':>7}"
        head += f"{'s':>6}"
        print(head)
        print("-" * len(head))
        for pair, counts, seconds in _diffs(rows):
            other = sum(n for s, n in counts.items() if s not in shown)
            cells = "".join(f"{counts.get(s, 0):>10}" for s in shown)
            print(f"{pair:<17}{cells}{other:>7}{seconds:>6.1f}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
