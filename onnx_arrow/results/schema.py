"""The schema of a results store: the run columns every row carries beside a compare
report's columns, their values taken from what a report says it was made from and with,
the identity of a run (what makes two runs the same run) and the metadata of a part."""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import re
from collections.abc import Mapping
from typing import Any, Final

import pyarrow as pa

from onnx_arrow.compare.backends import portable_command
from onnx_arrow.compare.report import REPORT_SCHEMA

__all__ = [
    "IDENTITY_COLUMNS",
    "OPTION_KEYS",
    "RESULTS_FORMAT",
    "RESULTS_METADATA_KEY",
    "RESULTS_SCHEMA",
    "RUN_COLUMNS",
    "RUN_SCHEMA",
    "portable_provenance",
    "run_key",
    "run_values",
]

#: The format of the results stores this version writes, in each part's metadata
#: (``results_format``); a part of a later format is refused, naming the onnx-arrow that
#: wrote it.
RESULTS_FORMAT: Final = 1

#: The key of a part's Parquet metadata that holds, as JSON, the part's
#: ``results_format``, its run's ``run_id`` and ``run_key``, its ``rows`` and the whole
#: provenance of the report the run came from (``report``).
RESULTS_METADATA_KEY: Final = "onnx_arrow.results"

#: The run columns, first in every row, the same on every row of a run.
RUN_SCHEMA: Final = pa.schema(
    [
        ("run_id", pa.string()),
        ("run_key", pa.string()),
        ("attempt", pa.int64()),
        ("runtime", pa.string()),
        ("runtime_version", pa.string()),
        ("execution_provider", pa.string()),
        ("runner_command", pa.string()),
        ("backend", pa.string()),
        ("corpus_onnx_version", pa.string()),
        ("corpus_digest", pa.string()),
        ("options", pa.string()),
        ("platform", pa.string()),
        ("onnx_arrow_version", pa.string()),
        ("date", pa.timestamp("ms", tz="UTC")),
    ]
)

#: The names of :data:`RUN_SCHEMA`.
RUN_COLUMNS: Final = tuple(RUN_SCHEMA.names)

#: The schema of every part: the run columns, then a compare report's
#: (:data:`~onnx_arrow.compare.REPORT_SCHEMA`).
RESULTS_SCHEMA: Final = pa.schema([*RUN_SCHEMA, *REPORT_SCHEMA])

#: What makes a run the run it is: two runs of these values (the corpus by its digest,
#: the runtime, its version, provider or runner, the options) and one ``attempt`` are one
#: run; its digest is the ``run_key``.
IDENTITY_COLUMNS: Final = (
    "corpus_digest", "runtime", "runtime_version", "execution_provider", "runner_command",
    "backend", "options", "attempt",
)  # fmt: skip

#: The keys of a compare report's provenance that say how it judged (its plan, the cases
#: asked for, the timeout): the ``options`` column, as canonical JSON.
OPTION_KEYS: Final = (
    "cases", "skip", "xfail", "tolerance", "ulp", "rtol", "atol", "max_ulp", "ulp_floor",
    "keep_actual", "timeout", "missing",
)  # fmt: skip

# onnxruntime's version and providers in what an older report says it ran
_ORT_RUNS: Final = re.compile(r"onnxruntime (\S+)(?: \(([^;)]*))?")


def _canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def run_key(values: Mapping[str, Any]) -> str:
    """The digest of a run's identity (:data:`IDENTITY_COLUMNS` of ``values``):
    BLAKE2b-128 of their canonical JSON, as hex."""
    identity = {name: values.get(name) for name in IDENTITY_COLUMNS}
    return hashlib.blake2b(_canonical(identity).encode(), digest_size=16).hexdigest()


def _runtime(backend: Mapping[str, Any], made: Mapping[str, Any]) -> tuple[Any, Any]:
    """The runtime and its version a report's ``backend`` names; for a report written
    before reports said them, read from the backend's name and what it runs."""
    if "runtime" in backend:
        return backend.get("runtime"), backend.get("runtime_version")
    name, runs = backend.get("name"), str(backend.get("runs") or "")
    if name == "reference":
        found = re.match(r"onnx (\S+) ReferenceEvaluator", runs)
        return "onnx.reference", found[1] if found else made.get("onnx_version")
    if name == "onnxruntime":
        found = _ORT_RUNS.match(runs)
        return "onnxruntime", found[1] if found else None
    return (name if isinstance(name, str) and name != "runner" else None), None


def _provider(backend: Mapping[str, Any]) -> str | None:
    providers = backend.get("providers")
    if isinstance(providers, list) and all(isinstance(p, str) for p in providers):
        return ",".join(providers)
    if backend.get("name") == "onnxruntime":
        found = _ORT_RUNS.match(str(backend.get("runs") or ""))
        if found and found[2]:
            return ",".join(p.strip() for p in found[2].split(","))
    return None


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def _portable_path(path: object) -> object:
    if not isinstance(path, str) or not os.path.isabs(path):
        return path
    here = os.path.abspath(os.getcwd())
    inside = os.path.commonpath([here, os.path.abspath(path)]) == here
    return os.path.relpath(path, here) if inside else os.path.basename(path.rstrip("/"))


def portable_provenance(made: Mapping[str, Any]) -> dict[str, Any]:
    """A report's provenance with no path of this machine, as a part keeps it: the files
    of its stores (``store``, ``actual``) relative to the working folder where they lie
    under it, else by name; a runner's command as :func:`portable_command` gives it; a
    joined report's sources each so."""
    out = dict(made)
    for key in ("store", "actual"):
        if isinstance(out.get(key), list):
            out[key] = [_portable_path(p) for p in out[key]]
    backend = out.get("backend")
    if isinstance(backend, Mapping) and backend.get("name") == "runner":
        runs = backend.get("runs")
        out["backend"] = {
            **backend,
            "runs": portable_command(runs) if isinstance(runs, str) else runs,
        }
    if isinstance(out.get("sources"), list):
        out["sources"] = [
            portable_provenance(s) if isinstance(s, Mapping) else s for s in out["sources"]
        ]
    return out


def run_values(
    made: Mapping[str, Any], *, attempt: int, run_id: str, date: datetime.datetime
) -> dict[str, Any]:
    """The run columns of a run whose report says ``made`` (its provenance): the runtime
    and its version (:func:`~onnx_arrow.compare.backends.describe_backend`), the
    execution providers or the runner's command (each absolute path made relative to the
    working folder, or its last name: no home or temporary folder), the corpus's onnx
    release and digest, the options (:data:`OPTION_KEYS`), the platform and onnx-arrow's
    version; with ``run_key`` (:func:`run_key`) of them and ``attempt``."""
    backend = made.get("backend")
    backend = backend if isinstance(backend, Mapping) else {}
    runtime, version = _runtime(backend, made)
    runner = None
    if backend.get("name") == "runner" and isinstance(backend.get("runs"), str):
        runner = portable_command(backend["runs"])
    values: dict[str, Any] = {
        "run_id": run_id,
        "attempt": attempt,
        "runtime": _text(runtime),
        "runtime_version": _text(version),
        "execution_provider": _provider(backend),
        "runner_command": runner,
        "backend": _text(backend.get("name")),
        "corpus_onnx_version": _text(made.get("store_onnx_version")),
        "corpus_digest": _text(made.get("store_digest")),
        "options": _canonical({k: made.get(k) for k in OPTION_KEYS if k in made}),
        "platform": _text(made.get("platform")),
        "onnx_arrow_version": _text(made.get("onnx_arrow_version")),
        "date": date.astimezone(datetime.timezone.utc).replace(microsecond=0),
    }
    values["run_key"] = run_key(values)
    return {name: values[name] for name in RUN_COLUMNS}
