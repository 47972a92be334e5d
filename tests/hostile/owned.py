"""Hostile cases against the folders onnx-arrow owns: a runner's temporary folder, whose
command may put links where onnx-arrow reads or removes, and the release cache.

Each runner case's command is a Python script run as ``--runner`` runs one; an outside
folder beside the work root is what it must never read, write or change the mode of.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa

from hostile.families import _float_tensor, _fresh
from hostile.harness import Case, Expect

CASES: list[Case] = []


def _outside(root: Path, name: str) -> Path:
    """A folder outside, mode 0755, holding an ``output_0.pb`` the model would accept."""
    out = root / "outside" / name
    out.mkdir(parents=True, exist_ok=True)
    out.chmod(0o755)
    output = _float_tensor((3,), "y").SerializeToString()
    (out / "output_0.pb").write_bytes(output)
    (out / "case" / "test_data_set_0").mkdir(parents=True, exist_ok=True)
    (out / "case" / "test_data_set_0" / "output_0.pb").write_bytes(output)
    return out


def _runner_case(name: str, placeholders: str, body: str, expect: Expect) -> None:
    """A case running ``body`` (Python; ``OUTSIDE`` is the outside folder, ``argv`` the
    command's arguments) as the runner ``python SCRIPT {model} PLACEHOLDERS``."""

    def build(root: Path) -> dict[str, Any]:
        outside = _outside(root, name)
        script = _fresh(root, f"runners/{name}") / "run.py"
        script.write_text(
            "import os, shutil, subprocess, sys\n"
            f"OUTSIDE = {str(outside)!r}\n"
            "argv = sys.argv\n" + body
        )
        return {
            "command": f"{sys.executable} {script} {{model}} {placeholders}",
            "scratch": str(_fresh(root, f"scratch/{name}")),
            "modes": [str(outside)],
        }

    CASES.append(Case("confinement", name, "runner", build, expect, guard=(f"outside/{name}",)))


_runner_case(
    "runner-outputs-folder-linked-out",
    "{outputs}",
    "os.rmdir(argv[2]); os.symlink(OUTSIDE, argv[2])\n",
    Expect("RunnerError", "the folder outputs is a link"),
)
_runner_case(
    "runner-data-set-folder-linked-out",
    "{inputs}",
    "shutil.rmtree(argv[2]); os.symlink(OUTSIDE, argv[2])\n",
    Expect("RunnerError", "the folder case/test_data_set_0 is a link"),
)
_runner_case(
    "runner-case-folder-linked-out",
    "{inputs}",
    "case = os.path.dirname(argv[2]); shutil.rmtree(case)\nos.symlink(OUTSIDE + '/case', case)\n",
    Expect("RunnerError", "the folder case is a link"),
)
# the first removal fails on a folder the command locked (immutable for root, else
# read-only); the second must not change the mode of what a link in the folder names
_runner_case(
    "runner-removal-through-a-link",
    "{outputs}",
    "shutil.copy(OUTSIDE + '/output_0.pb', argv[2])\n"
    "locked = os.path.join(os.getcwd(), 'locked'); os.mkdir(locked)\n"
    "os.symlink(OUTSIDE, os.path.join(locked, 'link'))\n"
    "if subprocess.run(['chattr', '+i', locked], capture_output=True).returncode:\n"
    "    os.chmod(locked, 0o500)\n",
    Expect(result={"outputs": 1}),
)
_runner_case(
    "runner-stderr-a-fifo",
    "{outputs}",
    "os.unlink('stderr.txt'); os.mkfifo('stderr.txt'); sys.exit(2)\n",
    Expect("RunnerError", "exited with status 2"),
)


# --- the release cache ------------------------------------------------------------------------


def _cache(root: Path, name: str) -> Path:
    return _fresh(root, f"caches/{name}")


def _cached_wheel(root: Path, name: str) -> Path:
    """A cache holding a wheel of onnx 9.9.9 with its sha256, as a fetch leaves it."""
    from release_helpers import cached_wheel

    cache = _cache(root, name)
    cached_wheel(cache, _fresh(root, f"wheels/{name}"), "9.9.9")
    return cache


def _store_index_outside(root: Path) -> dict[str, Any]:
    import importlib.metadata

    cache = _cache(root, "store-index-outside")
    stores = cache / "releases" / "stores"
    stores.mkdir(parents=True)
    outside = _outside(root, "release-store-index-outside")
    store = outside / "evil.parquet"
    store.write_bytes(b"PAR1")
    digest = hashlib.sha256(store.read_bytes()).hexdigest()
    (outside / "evil.parquet.sha256").write_text(f"{digest}  evil.parquet\n")
    python = f"{sys.version_info[0]}.{sys.version_info[1]}"
    key = f"9.9.9||{importlib.metadata.version('numpy')}|{python}"
    name = "../../../../outside/release-store-index-outside/evil.parquet"
    (stores / "index.json").write_text(json.dumps({key: name}))
    return {"op": "store", "cache": str(cache)}


CASES.append(
    Case(
        "confinement",
        "release-store-index-outside",
        "release",
        _store_index_outside,
        Expect("ReleaseError", "index.json"),
        guard=("outside/release-store-index-outside",),
    )
)


def _index_name_climbs(root: Path) -> dict[str, Any]:
    from release_helpers import make_wheel

    cache = _cache(root, "index-name-climbs")
    (cache / "releases" / "wheels" / "onnx-9.9.9-x").mkdir(parents=True)
    _outside(root, "release-index-name-climbs")
    wheel = make_wheel(_fresh(root, "wheels/index-name-climbs"), "9.9.9")
    name = "onnx-9.9.9-x/../../../../../outside/release-index-name-climbs/"
    name += "onnx-9.9.9-py3-none-any.whl"
    return {"op": "fetch", "cache": str(cache), "wheel": str(wheel), "name": name}


CASES.append(
    Case(
        "confinement",
        "release-index-file-name-climbs",
        "release",
        _index_name_climbs,
        Expect("ReleaseError", "not a plain file name"),
        guard=("outside/release-index-name-climbs",),
    )
)


def _record_a_fifo(suffix: str) -> Any:
    def build(root: Path) -> dict[str, Any]:
        cache = _cached_wheel(root, f"record-fifo{suffix}")
        record = cache / "releases" / "wheels" / f"onnx-9.9.9-py3-none-any.whl{suffix}"
        record.unlink(missing_ok=True)
        os.mkfifo(record)
        return {"op": "wheel", "cache": str(cache)}

    return build


for _suffix in (".sha256", ".url"):
    CASES.append(
        Case(
            "fifo",
            f"release-cached-wheel{_suffix}",
            "release",
            _record_a_fifo(_suffix),
            Expect("ReleaseError", f"onnx-9.9.9-py3-none-any.whl{_suffix}: a FIFO"),
        )
    )


# --- wheels that say how much ------------------------------------------------------------------


def _wheel(root: Path, name: str, members: Any) -> dict[str, Any]:
    """A wheel of onnx 9.9.9 whose members are ``members(archive)``'s, and the folder the
    case must leave empty."""
    import zipfile

    from onnx_arrow.corpus.wheels import DATA_PREFIX

    folder = _fresh(root, f"wheels/{name}")
    path = folder / "onnx-9.9.9-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        archive.writestr("onnx/__init__.py", "")
        members(archive, DATA_PREFIX)
    return {"wheel": str(path), "dest": str(_fresh(root, f"wheel-out/{name}"))}


def _bomb(archive: Any, prefix: str) -> None:
    """Five members of 230 MiB of zeros each: a wheel of about 1 MiB expanding to 1.1 GiB."""
    block = bytes(1 << 20)
    for k in range(5):
        with archive.open(f"{prefix}node/test_zeros/test_data_set_0/input_{k}.pb", "w") as out:
            for _ in range(230):
                out.write(block)


def _many(archive: Any, prefix: str) -> None:
    for k in range(100_001):
        archive.writestr(f"{prefix}node/test_many/test_data_set_0/input_{k}.pb", b"")


def _twice(archive: Any, prefix: str) -> None:
    import warnings

    name = f"{prefix}node/test_twice/test_data_set_0/input_0.pb"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile says it is a duplicate: that is the case
        archive.writestr(name, b"first")
        archive.writestr(name, b"second")


for _name, _family, _members, _says in (
    ("wheel-expands-past-the-total", "huge", _bomb, "expand to 1205862400 bytes"),
    ("wheel-of-too-many-members", "huge", _many, "holds 100001 files of test data"),
    ("wheel-member-named-twice", "names", _twice, "holds two members named"),
):
    CASES.append(
        Case(
            _family,
            _name,
            "wheel_data",
            lambda root, n=_name, m=_members: _wheel(root, n, m),
            Expect("ReleaseError", _says),
            guard=(f"wheel-out/{_name}",),
        )
    )


# --- rows a store holds (left from the earlier campaigns) ---------------------------------------


def _shape(shape: list[int], data: list[float] | None = None) -> Any:
    """The tensor input's ``shape`` forged (and its elements, where given)."""

    def change(t: Any) -> Any:
        from hostile.families import _row, _set

        i = _row(t, path_end="input_0.pb")
        t = _set(t, "shape", i, shape)
        return t if data is None else _set(t, "data_float", i, data)

    return change


def _model_changed(t: Any) -> Any:
    """The tensor case's model row: a model that parses, of other bytes than the digest's."""
    from onnx import ModelProto

    from hostile.families import _row, _set

    i = _row(t, path_end="model.onnx", role="model")
    model = ModelProto.FromString(t.column("content")[i].as_py())
    model.producer_name = "forged"
    return _set(t, "content", i, model.SerializeToString())


def _forged_case(name: str, change: Any, action: str, args: dict[str, Any], says: str) -> None:
    def build(root: Path) -> dict[str, Any]:
        from hostile.families import _dest, _forged

        path = str(_forged(root, name, change))
        extra = {"dest": _dest(root, name)} if args.get("op") == "export" else {}
        return {"path": path, **args, **extra}

    CASES.append(
        Case(
            "store-forged", name, action, build, Expect("CorpusError", says), guard=("forged-out",)
        ),
    )


_NEGATIVE = "the tensor row's shape [-2, -3] holds a dim below 0"
_ZERO = "declares more than 1099511627776 elements along its non-zero dims"
for _op in ("case_arrays", "case_table", "export"):
    _forged_case(
        f"shape-negative-dims-{_op}",
        _shape([-2, -3]),
        "store",
        {"op": _op, "case": "node/test_tensor"},
        _NEGATIVE,
    )
    _forged_case(
        f"shape-of-zero-elements-past-numpy-{_op}",
        _shape([1 << 40, 1 << 40, 0], []),
        "store",
        {"op": _op, "case": "node/test_tensor"},
        _ZERO,
    )
_forged_case("shape-negative-dims-rows", _shape([-2, -3]), "rows", {}, _NEGATIVE)
_forged_case(
    "model-row-changed-rows",
    _model_changed,
    "rows",
    {},
    "node/test_tensor/model.onnx: the file rebuilt from the rows is not the file imported",
)
_forged_case(
    "model-row-changed-case",
    _model_changed,
    "store",
    {"op": "model", "case": "node/test_tensor"},
    "node/test_tensor/model.onnx: the file rebuilt from the rows is not the file imported",
)


# --- bounds of what a command line says --------------------------------------------------------


def _timeout(value: str, command: str) -> Any:
    def build(root: Path) -> dict[str, Any]:
        from hostile.families import store_file

        argv = [command, str(store_file(root)), "--timeout", value, "--case", "node/test_tensor"]
        if command == "run":
            argv.append(str(_fresh(root, f"timeout-out/{command}-{value}") / "out.parquet"))
        return {"argv": argv}

    return build


for _command in ("compare", "run"):
    for _value in ("1e10", "inf"):
        CASES.append(
            Case(
                "bounds",
                f"{_command}-timeout-{_value}",
                "cli",
                _timeout(_value, _command),
                # a usage error, as --timeout -1 and nan are
                Expect(rc=2, where="is more than 604800 seconds (a week)"),
            )
        )


def _report_forged(column: str, values: Any) -> Any:
    def build(root: Path) -> dict[str, Any]:
        from hostile.readers import _column, _report_table, _report_with

        table = _report_table(root)
        typed = pa.list_(pa.int64()) if column == "ulp_histogram" else pa.int64()
        forged = _column(table, column, pa.array(values, typed))
        return {"path": _report_with(root, f"bounds-{column}-{values}", forged, None)}

    return build


for _column_name, _values, _says in (
    ("n_elements", [-5], "row 0 has a negative n_elements"),
    ("nan_mismatches", [-1], "row 0 has a negative nan_mismatches"),
    ("n_beyond_tolerance", [-(1 << 40)], "row 0 has a negative n_beyond_tolerance"),
    ("ulp_histogram", [[1, 2, 3]], "row 0 has a ulp_histogram whose length is not the 66"),
    ("ulp_histogram", [[0] * 65 + [-3]], "row 0 has a negative count in its ulp_histogram"),
):
    for _action in ("read_report", "report"):
        CASES.append(
            Case(
                "bounds",
                f"report-{_column_name}-{len(str(_values))}-{_action}",
                _action,
                _report_forged(_column_name, _values),
                Expect("CompareError", _says),
            )
        )


def _node_suite_cache_fifo(root: Path) -> dict[str, Any]:
    from onnx_arrow.corpus.cache import _file_name, suite_key

    cache = _cache(root, "node-suite-fifo")
    os.mkfifo(cache / _file_name(suite_key()))
    return {"cache": str(cache)}


CASES.append(
    Case(
        "fifo",
        "node-suite-cache-file",
        "node_suite_cache",
        _node_suite_cache_fifo,
        Expect(result={"cases": 0, "regular": True}),
    )
)
