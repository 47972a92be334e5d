"""A dataset store of releases: each onnx release imported into a folder of its own,
``onnx_version=VERSION`` (``import --partition-by onnx_version``, then ``--append``), which
DuckDB, Polars and pyarrow read as an ``onnx_version`` column of the whole folder, and each
a store of its own (:func:`release_stores`); and the question it answers: which expected
outputs changed from one release to the next (:data:`CHANGES_SQL`, :func:`release_changes`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Final

from onnx_arrow.corpus.arguments import check_path
from onnx_arrow.corpus.wheels import version_key
from onnx_arrow.errors import ReleaseError

__all__ = ["CHANGES_SQL", "VERSION_FOLDER", "release_changes", "release_stores"]

#: The folder of one release in a dataset store of releases (``import --partition-by
#: onnx_version``): Hive's ``key=value``, which DuckDB, Polars and pyarrow read as a column.
VERSION_FOLDER: Final = "onnx_version={}"

#: DuckDB's query of a dataset store of releases (``{store}``: its folder): the expected
#: outputs that changed from one release to the next, per case, in release order (a
#: case's outputs compared by the digest of their files' bytes).
CHANGES_SQL: Final = """\
WITH outputs AS (
  SELECT onnx_version, test_case, path, digest,
         list_transform(string_split(onnx_version, '.'),
                        lambda x: coalesce(TRY_CAST(x AS INTEGER), -1)) AS release
  FROM read_parquet('{store}/*/*.parquet', hive_partitioning = true,
                    hive_types = {{'onnx_version': VARCHAR}})
  WHERE io = 'output' AND role IN ('value', 'file') AND data_set IS NOT NULL
),
steps AS (
  SELECT *, lag(digest) OVER (PARTITION BY path ORDER BY release) AS digest_before,
            lag(onnx_version) OVER (PARTITION BY path ORDER BY release) AS previous
  FROM outputs
)
SELECT test_case, previous, onnx_version, count(*) AS outputs_changed
FROM steps
WHERE digest_before IS NOT NULL AND digest_before <> digest
GROUP BY ALL
ORDER BY min(release), test_case"""


def release_stores(folder: str | os.PathLike[str]) -> dict[str, Any]:
    """The releases of a dataset store of releases, each as a
    :class:`~onnx_arrow.corpus.Store`, in release order (``1.4.1`` before ``1.10.0``)."""
    from onnx_arrow.corpus.store import Store

    root = Path(check_path(folder, where="release_stores(folder)"))
    found = (
        {
            sub.name.split("=", 1)[1]: sub
            for sub in root.iterdir()
            if sub.is_dir() and sub.name.startswith(VERSION_FOLDER.format(""))
        }
        if root.is_dir()
        else {}
    )
    if not found:
        raise ReleaseError(
            "holds no onnx_version=VERSION folder: not a dataset store of releases (import "
            "--partition-by onnx_version @onnx==VERSION FOLDER makes one)",
            where=str(root),
        )
    return {v: Store(found[v]) for v in sorted(found, key=version_key)}


def release_changes(folder: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """What ``CHANGES_SQL`` answers, without DuckDB, and with the operators each case's
    model holds: per case whose expected outputs changed from one release to the next,
    ``case``, ``op_types``, ``previous``, ``onnx_version`` and ``outputs_changed``."""
    from onnx_arrow.core.model import op_types

    check_path(folder, where="release_changes(folder)")
    stores = release_stores(folder)
    before: dict[str, bytes] = {}
    previous: str | None = None
    out: list[dict[str, Any]] = []
    for version, store in stores.items():
        table = store.read_columns(
            ["test_case", "path", "io", "data_set", "digest"], roles=["value", "file"]
        ).to_pylist()
        now = {
            r["path"]: (r["test_case"], r["digest"])
            for r in table
            if r["io"] == "output" and r["data_set"] is not None
        }
        changed: dict[str, int] = {}
        for path, (case, digest) in now.items():
            old = before.get(path)
            if old is not None and old != digest:
                changed[case] = changed.get(case, 0) + 1
        for case in sorted(changed):
            ops = ", ".join(op_types(store.model(case)))
            out.append(
                {
                    "case": case,
                    "op_types": ops,
                    "previous": previous,
                    "onnx_version": version,
                    "outputs_changed": changed[case],
                }
            )
        before = {path: digest for path, (_, digest) in now.items()}
        previous = version
    return out
