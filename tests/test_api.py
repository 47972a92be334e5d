"""The public API: a pinned ``__all__``, and a core that imports only what it declares."""

from __future__ import annotations

import ast
import compileall
import importlib
import importlib.util
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import ml_dtypes
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from fresh_python import fresh_python

import onnx_arrow

PACKAGE = Path(onnx_arrow.__file__).resolve().parent

PUBLIC = [
    "DTYPES",
    "ArrowLayoutError",
    "DType",
    "DeclarationWarning",
    "ExternalDataError",
    "InvalidMessageError",
    "InvalidTensorError",
    "MessageType",
    "NotRepresentableError",
    "OnnxArrowError",
    "OnnxArrowWarning",
    "SparseTensorType",
    "UnsupportedTypeError",
    "VariableRankTensorType",
    "VariableShapeTensorType",
    "__version__",
    "arrow_type",
    "dtype_of",
    "from_arrow",
    "from_arrow_scalar",
    "from_portable",
    "from_storage",
    "onnx_type",
    "read_pb",
    "to_arrow",
    "to_arrow_scalar",
    "to_dlpack",
    "to_numpy",
    "to_portable",
    "to_pylist",
    "to_storage",
]

#: What core may import besides the standard library and itself (``onnx_arrow._lazy``, the
#: standard library's import machinery, lets the model import its modules on first use).
CORE_THIRD_PARTY = ("numpy", "pyarrow", "onnx", "google.protobuf", "ml_dtypes")
CORE_OWN = ("onnx_arrow.core", "onnx_arrow.errors", "onnx_arrow._lazy")


def _isort_key(name: str) -> tuple[int, str]:
    """ruff's ``__all__`` order (RUF022): CONSTANTS, then Classes, then the rest."""
    if name.isupper():
        return (0, name)
    return (1, name) if name[:1].isupper() else (2, name)


def test_all_is_sorted_and_pinned() -> None:
    assert onnx_arrow.__all__ == sorted(onnx_arrow.__all__, key=_isort_key)
    assert onnx_arrow.__all__ == PUBLIC


#: The names ``onnx_arrow.compare`` exports: the reports and the plan among them.
COMPARE_PUBLIC = [
    "BACKENDS", "COMPARE_COLUMNS", "KEEP_ACTUAL", "ORT_DEFAULT_LOG_SEVERITY",
    "ORT_LOG_SEVERITY_VARIABLE", "PASSING", "REPORT_FORMAT", "REPORT_METADATA_KEY",
    "REPORT_SCHEMA", "STATUSES", "UNNEEDED_COLUMNS", "Backend", "BackendLike",
    "BackendPrepareError", "BackendSpecError", "BackendTimeoutError", "BackendUnavailableError",
    "CommandRunner", "CompareError", "DataSetRun", "Expectations", "InterfaceBackend",
    "OnnxruntimeBackend", "Pattern", "Plan", "Report", "RunnerError", "Scoreboard",
    "backend_named", "compare", "compare_stores", "concat_reports", "onnxruntime_backend",
    "parse_tolerance", "read_report", "reference_backend", "resolve_backend", "run_backend",
    "scoreboard", "select_cases", "status_counts", "summary", "unneeded_entries",
    "write_actual", "write_report",
]  # fmt: skip


def test_compare_s_all_is_sorted_and_pinned() -> None:
    from onnx_arrow import compare

    assert compare.__all__ == sorted(compare.__all__, key=_isort_key)
    assert compare.__all__ == COMPARE_PUBLIC
    for name in COMPARE_PUBLIC:
        assert getattr(compare, name, None) is not None, name


@pytest.mark.parametrize("name", PUBLIC)
def test_every_public_name_exists(name: str) -> None:
    assert getattr(onnx_arrow, name, None) is not None


def test_import_does_not_pull_in_adapters() -> None:
    """``import onnx_arrow`` imports nothing heavy: not pyarrow or numpy (the extension
    types wait for pyarrow's import), onnx (about a second here, most of it ml_dtypes), an
    adapter or an evaluator."""
    heavy = ("pyarrow", "numpy", "pandas", "polars", "duckdb", "onnx", "ml_dtypes")
    code = f"import onnx_arrow, sys; print(sorted(m for m in {heavy!r} if m in sys.modules))"
    result = fresh_python(code)
    assert result.stdout.strip() == "[]"


def test_the_command_line_answers_without_pyarrow_or_onnx() -> None:
    """``onnx-arrow --version`` and ``--help`` import neither pyarrow, numpy nor onnx: the
    extension types wait for pyarrow's import (issue: a command starts at once)."""
    code = (
        "import sys, contextlib, io\n"
        "from onnx_arrow.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['--version']); main(['--help'])\n"
        "print(sorted(m for m in ('pyarrow', 'numpy', 'onnx', 'pandas') if m in sys.modules))\n"
    )
    result = fresh_python(code)
    assert result.stdout.strip() == "[]"


@pytest.mark.parametrize(
    "first",
    [
        "import pyarrow",  # before onnx_arrow: registered by the import of onnx_arrow
        "import onnx_arrow.core.tensor_types",  # a module that imports pyarrow half-way
        "import onnx_arrow.corpus.store",
        "import onnx_arrow, pyarrow",  # after: registered by pyarrow's import
    ],
)
def test_the_extension_types_are_registered_whatever_is_imported_first(first: str) -> None:
    code = (
        f"{first}\n"
        "import onnx_arrow, pyarrow as pa, sys\n"
        "t = pa.ipc.read_schema(pa.py_buffer(bytes.fromhex(sys.argv[1]))).field('x').type\n"
        "print(t.extension_name, t.value_type.extension_name)\n"
    )
    from onnx import numpy_helper

    tensor = numpy_helper.from_array(np.array([[1.5, -2.0]], dtype=ml_dtypes.bfloat16), "x")
    schema = pa.schema([("x", onnx_arrow.to_arrow([tensor]).type)]).serialize().hex()
    result = subprocess.run(
        [sys.executable, "-c", code, schema],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["onnx.fixed_shape_tensor", "onnx.bfloat16"]


def test_import_alone_reads_extension_columns_typed(tmp_path: Path) -> None:
    """The extension types are registered by the import itself, before any conversion is
    looked up: a process that only imports onnx_arrow reads a bfloat16 tensor typed."""
    from onnx import numpy_helper

    tensor = numpy_helper.from_array(np.array([[1.5, -2.0]], dtype=ml_dtypes.bfloat16), "x")
    pq.write_table(pa.table({"x": onnx_arrow.to_arrow([tensor])}), tmp_path / "t.parquet")
    code = (
        "import sys, onnx_arrow, pyarrow.parquet as pq\n"
        # one thread: pyarrow's threaded read runs the types' deserialization on a thread of
        # its own, and a process that exits right after aborts now and then in pyarrow's
        # teardown (apache/arrow#34314; 1 to 5 runs in 40 here, 0 in 40 on one thread)
        f"t = pq.read_table({str(tmp_path / 't.parquet')!r}, use_threads=False).column('x').type\n"
        "print(t.extension_name, t.value_type.extension_name, 'onnx' in sys.modules)\n"
    )
    result = fresh_python(code)
    assert result.stdout.split() == ["onnx.fixed_shape_tensor", "onnx.bfloat16", "False"]


def _lazy_modules() -> list[str]:
    """Every module of the package that exports names lazily: it calls ``exports(...)``."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if any(
            isinstance(node, ast.Call) and ast.unparse(node.func) == "exports"
            for node in ast.walk(tree)
        ):
            parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
            found.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return found


def _type_checking_imports(module: str) -> dict[str, str]:
    """``{name: module}`` of the ``from module import name`` lines of a module's
    ``if TYPE_CHECKING:`` block, read from its source (the tests run from source)."""
    spec = importlib.util.find_spec(module)
    assert spec is not None
    assert spec.origin is not None
    where: dict[str, str] = {}
    for node in ast.parse(Path(spec.origin).read_text(encoding="utf-8")).body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom), ast.unparse(statement)
                assert statement.module is not None
                where.update((alias.name, statement.module) for alias in statement.names)
    return where


def test_the_lazy_modules_are_found() -> None:
    assert _lazy_modules() == ["onnx_arrow", "onnx_arrow.core.model", "onnx_arrow.corpus"]


@pytest.mark.parametrize("module", _lazy_modules())
def test_the_lazy_table_is_the_type_checking_block(module: str) -> None:
    """What runs (the ``_LAZY`` table) and what type checkers and the API docs read (the
    ``TYPE_CHECKING`` imports) name the same names from the same modules, once each."""
    table = importlib.import_module(module)._LAZY
    pairs = [(name, source) for source, names in table.items() for name in names]
    assert len(pairs) == len(dict(pairs)), f"{module}: a name listed twice in _LAZY"
    assert dict(pairs) == _type_checking_imports(module)


@pytest.mark.parametrize("module", _lazy_modules())
def test_lazy_exports_resolve_and_are_public(module: str) -> None:
    """Every name a module imports on first use (its TYPE_CHECKING block) is in its
    ``__all__`` and ``dir()``, and is the object its own module defines."""
    mod = importlib.import_module(module)
    lazy = _type_checking_imports(module)
    assert lazy
    assert set(lazy) <= set(mod.__all__) <= set(dir(mod))
    for name, source in lazy.items():
        assert getattr(mod, name) is getattr(importlib.import_module(source), name)
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        mod.no_such_name  # noqa: B018


def test_the_table_check_sees_a_disagreement(tmp_path: Path) -> None:
    """The check itself: a table that takes a name of the TYPE_CHECKING block from
    another module is caught."""
    package = tmp_path / "lazypkg"
    package.mkdir()
    (package / "a.py").write_text("X = 1\nY = 2\n")
    (package / "b.py").write_text("Y = 3\n")
    (package / "__init__.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from lazypkg.a import X, Y\n"
        "_LAZY = {'lazypkg.a': ('X',), 'lazypkg.b': ('Y',)}\n"
    )
    sys.path.insert(0, str(tmp_path))
    try:
        with pytest.raises(AssertionError):
            test_the_lazy_table_is_the_type_checking_block("lazypkg")
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("lazypkg", None)


def _core_files() -> list[Path]:
    return [*sorted((PACKAGE / "core").rglob("*.py")), PACKAGE / "errors.py"]


def _package_of(path: Path) -> str:
    """The package a file's relative imports resolve against (``onnx_arrow.core``)."""
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1])


def _from_module(node: ast.ImportFrom, package: str) -> str:
    """The module a ``from ... import`` names, a relative one resolved against ``package``."""
    if not node.level:
        return node.module or ""
    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def imported_modules(source: str, package: str) -> list[tuple[int, str]]:
    """Every module an ``import`` or ``from`` at any depth names, relative ones resolved."""
    out: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = _from_module(node, package)
            if module == "onnx_arrow":
                # ``from onnx_arrow import errors`` names a submodule or a re-export.
                out += [(node.lineno, f"onnx_arrow.{alias.name}") for alias in node.names]
            else:
                out.append((node.lineno, module))
    return out


def allowed_in_core(module: str) -> bool:
    if module.partition(".")[0] in sys.stdlib_module_names:
        return True
    return any(
        module == prefix or module.startswith(prefix + ".")
        for prefix in (*CORE_THIRD_PARTY, *CORE_OWN)
    )


def test_core_files_found() -> None:
    names = {p.name for p in _core_files()}
    assert {"dtypes.py", "tensors.py", "values.py", "errors.py"} <= names


@pytest.mark.parametrize("path", _core_files(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_core_imports_only_its_dependencies(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    bad = [
        f"line {line}: {module}"
        for line, module in imported_modules(source, _package_of(path))
        if not allowed_in_core(module)
    ]
    assert not bad, f"{path.name} imports outside core's dependencies: {bad}"


def test_import_checker_sees_nested_and_relative_imports() -> None:
    source = (
        "import numpy as np\n"
        "def f():\n"
        "    import pandas\n"
        "    from . import tensors\n"
        "    from ..cli import main\n"
        "    from onnx_arrow import errors\n"
        "    from google.protobuf import message\n"
    )
    modules = [m for _, m in imported_modules(source, "onnx_arrow.core")]
    assert modules == [
        "numpy",
        "pandas",
        "onnx_arrow.core",
        "onnx_arrow.cli",
        "onnx_arrow.errors",
        "google.protobuf",
    ]
    assert [allowed_in_core(m) for m in modules] == [True, False, True, False, True, True]


# --- adapters use the public API and the internal model only --------------------------------------

#: What an adapter may import of the core: the public package, its errors and the model.
ADAPTER_CORE = ("onnx_arrow", "onnx_arrow.errors", "onnx_arrow.core.model")


def _adapter_files() -> list[Path]:
    top_level = {"__init__.py", "__main__.py", "errors.py"}
    out = []
    for p in sorted(PACKAGE.rglob("*.py")):
        parts = p.relative_to(PACKAGE).parts
        if parts[0] == "corpus" or (parts[0] != "core" and "/".join(parts) not in top_level):
            out.append(p)
    return out


def _imported_names(source: str, package: str) -> list[tuple[int, str, str]]:
    """``(line, module, name)`` of every ``from ... import name``, relative ones resolved."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            module = _from_module(node, package)
            out += [(node.lineno, module, alias.name) for alias in node.names]
    return out


def test_adapter_files_found() -> None:
    names = {str(p.relative_to(PACKAGE)) for p in _adapter_files()}
    adapters = {"pandas", "jupyter", "compare", "cli"}
    assert {f"{name}/__init__.py" for name in adapters} | {"corpus/store.py"} <= names
    assert not any(name.startswith("core/") for name in names)


@pytest.mark.parametrize("path", _adapter_files(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_adapters_import_the_public_api_and_the_model_only(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    package = _package_of(path)
    bad = [
        f"line {line}: {module}"
        for line, module in imported_modules(source, package)
        if (module == "onnx_arrow.core" or module.startswith("onnx_arrow.core."))
        and module not in ADAPTER_CORE
    ]
    private = [
        f"line {line}: {module}.{name}"
        for line, module, name in _imported_names(source, package)
        if module.startswith("onnx_arrow") and name.startswith("_")
    ]
    assert not bad, f"{path.name} imports the core past its model: {bad}"
    assert not private, f"{path.name} imports private names: {private}"


def test_the_model_names_what_it_exports() -> None:
    from onnx_arrow.core import model

    assert model.__all__ == sorted(model.__all__, key=_isort_key)
    for name in model.__all__:
        assert getattr(model, name, None) is not None, name


def _import_in(path: Path, code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(path)!r}); {code}"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        cwd=path.parent,
    )


def test_lazy_exports_work_from_a_zip_archive(tmp_path: Path) -> None:
    """The exported names come from a table in the module, so a zipped package works."""
    archive = tmp_path / "onnx_arrow.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        for path in sorted(PACKAGE.rglob("*.py")):
            zipped.write(path, path.relative_to(PACKAGE.parent).as_posix())
    code = "import onnx_arrow; print(onnx_arrow.__file__, onnx_arrow.to_arrow)"
    result = _import_in(archive, code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(str(archive))


def test_a_sourceless_install_works(tmp_path: Path) -> None:
    """An install of compiled modules alone (``python -m compileall -b``, the sources
    removed): the package imports, a lazily exported name converts a tensor both ways
    byte for byte, a corpus name resolves, and the command line answers ``--help`` and
    runs its example, as the ``onnx-arrow`` script and ``python -m onnx_arrow`` run it."""
    site = tmp_path / "site"
    shutil.copytree(PACKAGE, site / "onnx_arrow", ignore=shutil.ignore_patterns("__pycache__"))
    assert compileall.compile_dir(site, legacy=True, quiet=1)
    for source in site.rglob("*.py"):
        source.unlink()
    assert not list(site.rglob("*.py"))
    assert (site / "onnx_arrow" / "_lazy.pyc").is_file()
    env = {**os.environ, "PYTHONPATH": str(site)}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, *args], env=env, capture_output=True, text=True,
            timeout=120, cwd=tmp_path, check=False,
        )  # fmt: skip

    code = (
        "import numpy as np, onnx_arrow, onnx_arrow.corpus\n"
        "from onnx import numpy_helper\n"
        "t = numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3), 'x')\n"
        "back = onnx_arrow.from_arrow(onnx_arrow.to_arrow([t], exact=True))[0]\n"
        "print(onnx_arrow.__file__)\n"
        "print(back.SerializeToString() == t.SerializeToString())\n"
        "print(onnx_arrow.corpus.WriteOptions.__module__)\n"
    )
    result = run("-c", code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [
        str(site / "onnx_arrow" / "__init__.pyc"),
        "True",
        "onnx_arrow.corpus.options",
    ]
    script = "import sys; from onnx_arrow.cli import main; sys.exit(main())"
    for command in (["-c", script, "--help"], ["-m", "onnx_arrow", "--help"]):
        result = run(*command)
        assert result.returncode == 0, result.stderr
        assert result.stdout.startswith("usage: onnx-arrow"), result.stdout
    result = run("-c", script, "example")
    assert result.returncode == 0, result.stderr
    assert "byte-identical" in result.stdout


def test_lazy_exports_work_under_pytest_s_assertion_rewriter(tmp_path: Path) -> None:
    """pytest loads the modules of a plugin's installed distribution (onnx-arrow's, for its
    pytest11 entry point) through its assertion rewriter, whose loader gives no source: the
    exported names, which come from a table in the module, resolve all the same."""
    site = tmp_path / "site"
    shutil.copytree(PACKAGE, site / "onnx_arrow", ignore=shutil.ignore_patterns("__pycache__"))
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "conftest.py").write_text(
        'import pytest\npytest.register_assert_rewrite("onnx_arrow")\n'
        "import onnx_arrow\n"
        "assert type(onnx_arrow.__loader__).__name__ == 'AssertionRewritingHook'\n"
    )
    (tests / "test_it.py").write_text(
        "import onnx_arrow\n\ndef test_it():\n    onnx_arrow.to_arrow\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:onnx_arrow",
         str(tests)],
        env={**os.environ, "PYTHONPATH": str(site)}, capture_output=True, text=True,
        timeout=120, cwd=tmp_path, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout
