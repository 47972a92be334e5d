"""The documentation site builds without a warning, and its examples and CLI page are current."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from doc_blocks import run_block
from spark_helpers import end_spark_jvm

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
#: The pages whose Python blocks run, against a store named STORE in the working folder.
EXECUTED = ("getting-started.md", "recipes.md", "backend-testing.md", "results.md")
STORE = "corpus.parquet"
#: The pages of the site's nav, in order.
NAV = (
    "index.md",
    "getting-started.md",
    "recipes.md",
    "backend-testing.md",
    "frozen-corpora.md",
    "results.md",
    "runtime-teams.md",
    "site.md",
    "type-mapping.md",
    "store-format.md",
    "cli.md",
    "api.md",
    "layout.md",
)
#: The modules the API reference documents.
API_MODULES = (
    "onnx_arrow",
    "onnx_arrow.corpus",
    "onnx_arrow.pandas",
    "onnx_arrow.diff",
    "onnx_arrow.coverage",
    "onnx_arrow.trace",
    "onnx_arrow.results",
    "onnx_arrow.site",
)


def _blocks(page: str, language: str) -> list[str]:
    text = (DOCS / page).read_text(encoding="utf-8")
    return re.findall(rf"^```{language}\n(.*?)^```$", text, re.MULTILINE | re.DOTALL)


#: Engines whose start-up alone takes a block past ten seconds (a Ray cluster, Spark's
#: JVM): their blocks run with the slow tests; the engines themselves are tested by default
#: in tests/test_parallel.py and tests/corpus/test_spark.py.
SLOW_ENGINES = re.compile(r"^\s*(?:import|from) (?:ray|pyspark)\b", re.MULTILINE)
PYTHON_BLOCKS = [
    pytest.param(page, i, marks=[pytest.mark.slow] if SLOW_ENGINES.search(block) else [])
    for page in EXECUTED
    for i, block in enumerate(_blocks(page, "python"))
]


@pytest.fixture(scope="module")
def store_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the store the pages read, from the model tests in the onnx wheel."""
    from onnx_arrow.corpus import FolderSource, WriteOptions, write_dataset, write_store
    from onnx_arrow.corpus.sources import wheel_data_dir

    folder = tmp_path_factory.mktemp("site")
    write_store(FolderSource(wheel_data_dir()), folder / STORE)
    # the dataset store of the recipes: `import --partition-by kind --row-group-cases 16`
    write_dataset(
        FolderSource(wheel_data_dir()),
        folder / "corpus",
        by_kind=True,
        options=WriteOptions(row_group_cases=16),
    )
    return folder


@pytest.mark.parametrize("page", EXECUTED)
def test_page_has_python_examples(page: str) -> None:
    assert _blocks(page, "python")


@pytest.mark.parametrize(("page", "index"), PYTHON_BLOCKS)
def test_python_block_runs(
    page: str,
    index: int,
    store_folder: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    pytest.importorskip("duckdb")
    pytest.importorskip("polars")
    source = _blocks(page, "python")[index]
    if re.search(r"^import torch\b", source, re.MULTILINE):
        pytest.importorskip(
            "torch",
            reason="PyTorch, the DLPack consumer of this block, is not installed (not in the "
            "test extra, whose index serves the CUDA build; .ci/run installs a CPU build where "
            "one can be had)",
        )
    monkeypatch.chdir(store_folder)  # where STORE is
    try:
        wrong = run_block(source, f"docs/{page} python block {index}", {"__name__": "__docs__"})
    finally:
        end_spark_jvm()  # a Spark recipe's session: its JVM outlives session.stop()
    capsys.readouterr()
    assert not wrong, "\n".join(wrong)  # each print prints what the comment at its end says


@pytest.mark.parametrize("page", EXECUTED)
def test_command_lines_are_valid_usage(page: str) -> None:
    from onnx_arrow.cli import _parser

    lines = [line for block in _blocks(page, "sh") for line in block.splitlines()]
    commands = [shlex.split(line, comments=True) for line in lines if line.startswith("onnx-arrow")]
    assert commands
    for argv in commands:
        _parser().parse_args(argv[1:])  # raises on bad usage


def test_cli_page_has_every_command() -> None:
    from onnx_arrow.cli import COMMANDS

    page = (DOCS / "cli.md").read_text(encoding="utf-8")
    for command in COMMANDS:
        assert f"## `onnx-arrow {command}`" in page
        assert f"usage: onnx-arrow {command} " in page


def test_nav_lists_every_page() -> None:
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    nav = re.findall(r"^  - [^:\n]+: (\S+\.md)$", config, re.MULTILINE)
    assert tuple(nav) == NAV
    assert {p.name for p in DOCS.glob("*.md")} == set(NAV)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built with warnings as errors."""
    pytest.importorskip("mkdocs")
    pytest.importorskip("material")
    pytest.importorskip("mkdocstrings_handlers.python")
    out = tmp_path_factory.mktemp("site") / "site"
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "WARNING" not in output, output
    return out


def test_site_has_every_page(site: Path) -> None:
    for page in NAV:
        html = site / ("index.html" if page == "index.md" else f"{page[:-3]}/index.html")
        assert html.is_file(), page
    assert not list(site.rglob("*.py")), "the generators are not part of the site"


@pytest.mark.parametrize("module", API_MODULES)
def test_api_reference_has_every_public_function_and_class(site: Path, module: str) -> None:
    import importlib
    import inspect

    page = (site / "api" / "index.html").read_text(encoding="utf-8")
    mod = importlib.import_module(module)
    documented = [
        name
        for name in mod.__all__
        if inspect.isclass(getattr(mod, name)) or inspect.isfunction(getattr(mod, name))
    ]
    assert documented
    missing = [name for name in documented if f'id="{module}.{name}"' not in page]
    assert not missing, missing


def _api_page(site: Path) -> str:
    return (site / "api" / "index.html").read_text(encoding="utf-8")


def _prose(html: str) -> str:
    """The page without its code blocks: what a reader sees as text."""
    return re.sub(r"<pre\b.*?</pre>", "", html, flags=re.DOTALL)


def test_api_reference_leaks_no_sphinx_role_and_no_doctest_prompt(site: Path) -> None:
    prose = _prose(_api_page(site))
    roles = re.findall(r":(?:func|class|data|meth|mod|attr|exc|obj|const):", prose)
    assert not roles, roles[:5]
    assert "&gt;&gt;&gt;" not in prose  # every doctest is a code block
    assert "```" not in prose
    assert "<blockquote>" not in prose


def test_api_reference_cross_references_link(site: Path) -> None:
    page = _api_page(site)
    links = re.findall(r'<a class="autorefs autorefs-internal"[^>]*href="#([\w.]+)"', page)
    assert len(links) > 50
    ids = set(re.findall(r'id="([\w.]+)"', page))
    assert set(links) <= ids  # every link lands on a rendered object
    to_numpy = page[
        page.index('id="onnx_arrow.to_numpy"') : page.index('id="onnx_arrow.to_pylist"')
    ]
    assert 'href="#onnx_arrow.to_pylist"' in to_numpy  # "(for anything else, to_pylist)"


def test_api_reference_opens_with_the_conversions(site: Path) -> None:
    import onnx_arrow

    ids = re.findall(r'<h\d id="(onnx_arrow\.\w+)"', _api_page(site))
    assert ids[:4] == [
        f"onnx_arrow.{n}" for n in ("to_arrow", "from_arrow", "to_numpy", "to_pylist")
    ]
    listed = re.findall(r"^        - (\w+)$", (DOCS / "api.md").read_text(encoding="utf-8"), re.M)
    assert sorted(listed) == sorted(onnx_arrow.__all__)  # the page's order leaves none out


def _blocks_with_lead_in(page: str) -> list[tuple[str, str]]:
    """Each Python block of a page with the text of its section up to it."""
    text = (ROOT / page).read_text(encoding="utf-8")
    # a comment line of a code block is no heading: the fences' text is blanked first
    prose = re.sub(r"^```.*?^```$", lambda f: " " * len(f.group()), text, flags=re.M | re.S)
    out = []
    for m in re.finditer(r"^```python\n(.*?)^```$", text, re.MULTILINE | re.DOTALL):
        section = max(
            (h.start() for h in re.finditer(r"^#+ ", prose[: m.start()], re.M)), default=0
        )
        out.append((text[section : m.start()], m.group(1)))
    return out


@pytest.mark.parametrize("page", ["README.md", *(f"docs/{p}" for p in EXECUTED)])
def test_every_python_block_says_what_to_install(page: str) -> None:
    from extras import extras_named, missing

    for n, (lead_in, block) in enumerate(_blocks_with_lead_in(page)):
        named = set(re.findall(r"\.\[(\w+)\]", lead_in + block))
        named |= set(re.findall(r"the `(\w+)` extras?", lead_in))
        assert named <= extras_named(), (page, n, named)
        assert not missing(block, named), f"{page} python block {n} needs an install line"


@pytest.mark.parametrize("page", ["api", "getting-started", "recipes", "store-format"])
def test_site_pages_as_chromium_renders_them(site: Path, page: str, tmp_path: Path) -> None:
    from chromium import chromium, measure, screenshot

    chromium()
    html = site / page / "index.html"
    prose = measure(html)["prose"]
    assert not re.findall(r":(?:func|class|data|meth|mod|attr|exc|obj):", prose)
    assert ">>>" not in prose  # doctests are code blocks
    assert "```" not in prose
    keep = os.environ.get("ONNX_ARROW_SCREENSHOTS")
    shots = Path(keep) if keep else tmp_path
    shots.mkdir(parents=True, exist_ok=True)
    screenshot(html, shots / f"site-{page}.png")
