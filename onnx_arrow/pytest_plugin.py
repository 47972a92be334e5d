"""A pytest plugin that runs a backend over a corpus store, so a backend's existing test job
runs a frozen corpus: ``pytest --onnx-store STORE --onnx-backend SPEC``.

One test item per case of the store, its name the case's (``node/test_abs``, so ``-k``
selects cases), each comparing the backend's outputs with the expected ones as
``onnx-arrow compare`` does.  The skip and xfail patterns of ``--onnx-patterns FILE``
(compare's ``--patterns`` file, read by the same reader) mark the items ``skip`` and
``xfail`` (strict as pytest's ``xfail_strict`` says); its tolerances and ULP budgets
apply; after the run the entries of that file the run shows are not needed are listed,
as ``compare`` lists them, and ``--onnx-update-expectations FILE`` writes the file again
as ``compare --update-expectations`` does (``--onnx-check-expectations``: writes
nothing and fails the session when the file is stale).  A failure shows the report's
row of each output that does not pass: the status, the rule and tolerance used and where
it came from, the worst element with the expected and actual values, and the backend's
error.

``--onnx-backend`` takes what ``compare --backend`` takes (``reference``, ``onnxruntime``,
``MODULE`` or ``MODULE:NAME`` of a backend with onnx's interface, ``PACKAGE==VERSION`` in
an environment made for it); ``--onnx-runner
COMMAND`` runs a command per data set instead.  Registered as the ``pytest11`` entry
point ``onnx_arrow``: without ``--onnx-store`` it only adds its options, and imports
nothing of onnx-arrow's adapters, onnx or pandas.
"""

from __future__ import annotations

import glob
import importlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import pytest

__all__ = [
    "CaseItem",
    "StoreFile",
    "pytest_addoption",
    "pytest_collection_modifyitems",
    "pytest_configure",
    "pytest_sessionfinish",
    "pytest_terminal_summary",
]

#: Seconds a backend may spend on one data set unless --onnx-timeout says otherwise (as
#: ``onnx-arrow compare``).
DEFAULT_TIMEOUT: Final = 600.0


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add the ``--onnx-*`` options."""
    group = parser.getgroup("onnx-arrow", "onnx-arrow: a backend over a corpus store")
    group.addoption(
        "--onnx-store",
        metavar="STORE",
        help="run a test per case of this onnx-arrow corpus store (onnx-arrow import)",
    )
    group.addoption(
        "--onnx-backend",
        metavar="SPEC",
        help="the backend: reference (the default), onnxruntime, or MODULE / MODULE:NAME of "
        "a backend with onnx's interface (prepare, and a rep's run), as compare --backend",
    )
    group.addoption(
        "--onnx-patterns",
        metavar="FILE",
        help="skip, xfail and tolerance patterns, as compare --patterns reads them",
    )
    group.addoption(
        "--onnx-runner",
        metavar="COMMAND",
        help="run this command per data set instead of a backend, as compare --runner",
    )
    group.addoption(
        "--onnx-update-expectations",
        metavar="FILE",
        help="write FILE again with what the run showed, as compare --update-expectations "
        "(read as --onnx-patterns too)",
    )
    group.addoption(
        "--onnx-check-expectations",
        action="store_true",
        help="with --onnx-update-expectations: write nothing, show what would change, and "
        "fail the session if FILE is stale",
    )
    group.addoption(
        "--onnx-in-process",
        action="store_true",
        default=None,
        help="run the backend in pytest's process (for a debugger), not in a worker process, "
        "the default: unprotected, its crash or sys.exit ends the session, as compare "
        "--in-process",
    )
    group.addoption(
        "--onnx-timeout",
        type=float,
        metavar="SECONDS",
        help=f"a data set the backend spends longer on is an error (default: "
        f"{DEFAULT_TIMEOUT:g}; 0: no limit)",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Check the options and open the store, only when ``--onnx-store`` is given."""
    if config.getoption("onnx_store") is None:
        options = (
            "onnx_backend",
            "onnx_patterns",
            "onnx_runner",
            "onnx_in_process",
            "onnx_timeout",
            "onnx_update_expectations",
        )
        for option in options:
            if config.getoption(option) is not None:
                flag = "--" + option.replace("_", "-")
                raise pytest.UsageError(f"{flag} applies to --onnx-store STORE; give a store")
        return
    if config.getoption("onnx_check_expectations") and not config.getoption(
        "onnx_update_expectations"
    ):
        raise pytest.UsageError("--onnx-check-expectations applies to --onnx-update-expectations")
    config.stash[_RUN] = _Run.from_config(config)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """The entries of the patterns file the run shows are not needed, and the file
    written again (or checked) as asked: after the cases ran, before the summary."""
    run = session.config.stash.get(_RUN, None)
    if run is None or run.patterns is None or not run.rows:
        return
    from onnx_arrow.errors import OnnxArrowError

    try:
        run.lines, stale = run.expectations_summary(session.config)
    except OnnxArrowError as exc:
        run.lines, stale = [f"onnx-arrow: {exc}"], True
    if stale and session.exitstatus == 0:
        session.exitstatus = 1


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Print what :func:`pytest_sessionfinish` found of the expectation file."""
    run = terminalreporter.config.stash.get(_RUN, None)
    if run is None or not run.lines:
        return
    terminalreporter.section("onnx-arrow expectations")
    for line in run.lines:
        terminalreporter.write_line(line)


@pytest.hookimpl(tryfirst=True)  # before -k and -m deselect: they apply to cases too
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Add an item per case of the store (after the tests pytest collected itself)."""
    run = config.stash.get(_RUN, None)
    if run is None:
        return
    path = Path(run.store.path).resolve()
    try:
        nodeid = path.relative_to(config.rootpath).as_posix()
    except ValueError:  # a store outside the rootdir: its absolute path
        nodeid = path.as_posix()
    store = StoreFile.from_parent(session, path=path, nodeid=nodeid)
    store.run = run
    # collected as pytest collects a file: counted, and an error a collection error
    report = store.ihook.pytest_make_collect_report(collector=store)
    session.ihook.pytest_collectreport(report=report)
    if report.passed:
        items.extend(node for node in report.result if isinstance(node, pytest.Item))


class _CaseFailed(Exception):
    """A case's outputs that do not pass, as the report's rows say."""

    def __init__(self, case: str, rows: list[dict[str, Any]], total: int, backend: str) -> None:
        self.case = case
        self.rows = rows
        self.total = total
        self.backend = backend
        super().__init__(self.text())

    def text(self) -> str:
        """The rows as lines: status, rule and tolerance, worst element, error."""
        count = f"{len(self.rows)} of {self.total} outputs"
        lines = [f"{self.case}: {count} do not pass (backend {self.backend})"]
        for row in self.rows:
            lines += _row_lines(row)
        return "\n".join(lines)


class _Run:
    """What the options ask for: the store, the backend, the patterns, the timeout."""

    def __init__(
        self,
        store: Any,
        backend: Any,
        expect: Any,
        timeout: float | None,
        patterns: str | None = None,
        in_process: bool = False,
    ) -> None:
        self.store = store
        self.backend = backend
        self.expect = expect
        self.timeout = timeout
        self.patterns = patterns
        self.in_process = in_process
        self.rows: list[dict[str, Any]] = []  # of the cases run, as compare gives them
        self.lines: list[str] = []

    def expectations_summary(self, config: pytest.Config) -> tuple[list[str], bool]:
        """The lines that list the unneeded entries and the update of the file, and
        whether the session fails for a stale file (with --onnx-check-expectations)."""
        import pandas as pd

        from onnx_arrow import compare
        from onnx_arrow.compare.expectation_update import update_expectations, write_update

        df = pd.DataFrame(self.rows)
        onnx_version = self.store.metadata.get("onnx_version")
        table = compare.unneeded_entries(df, self.expect, onnx_version)
        lines = [f"entries that matched no failing case (can be removed): {len(table)}"]
        for row in table.itertuples():
            group = f" [{row.group}]" if row.group else ""
            lines.append(f"  {row.where}{group} {row.kind} {row.pattern!r}: {row.why}")
        path = config.getoption("onnx_update_expectations")
        if path is None:
            return lines, False
        update = update_expectations(
            path, df, self.store.cases(), provider="CPU", onnx_version=onnx_version
        )
        check = config.getoption("onnx_check_expectations")
        if not update.stale:
            return [*lines, f"expectation file {path}: as the run showed, nothing to change"], False
        lines.append(f"expectation file {path} {'would change' if check else 'changed'}:")
        lines += [f"  removed {x}" for x in update.removed]
        lines += [f"  added {x}" for x in update.added]
        if check:
            return [*lines, *update.diff().splitlines()], True
        write_update(update)
        return lines, False

    @classmethod
    def from_config(cls, config: pytest.Config) -> _Run:
        from onnx_arrow import compare
        from onnx_arrow.compare.deadlines import check_timeout
        from onnx_arrow.corpus import Store
        from onnx_arrow.errors import OnnxArrowError

        try:
            store = Store(config.getoption("onnx_store"))
            patterns = config.getoption("onnx_patterns")
            update = config.getoption("onnx_update_expectations")
            if update is not None and patterns not in (None, update):
                raise pytest.UsageError(
                    "--onnx-update-expectations FILE is read as the patterns file: give it "
                    "alone, or the same file to --onnx-patterns"
                )
            patterns = update or patterns
            expect = (
                compare.Expectations() if patterns is None else compare.Expectations.read(patterns)
            )
            timeout = config.getoption("onnx_timeout")
            if timeout is not None and not timeout >= 0:
                raise pytest.UsageError(f"--onnx-timeout {timeout}: give seconds, 0 or more")
            timeout = DEFAULT_TIMEOUT if timeout is None else (timeout or None)
            check_timeout(timeout)  # 1e10, inf: an error of the options, before any case
            in_process = bool(config.getoption("onnx_in_process"))
            backend = _backend(config, timeout, in_process)
        except OnnxArrowError as exc:
            raise pytest.UsageError(f"onnx-arrow: {exc}") from None
        return cls(store, backend, expect, timeout, patterns, in_process)

    def compare(self, case: str) -> list[dict[str, Any]]:
        """The report's rows of ``case``: the backend run, the outputs compared with the
        patterns' tolerances (its skips and xfails are the items' marks)."""
        from onnx_arrow import compare

        plain = compare.Expectations(tolerance=self.expect.tolerance, ulp=self.expect.ulp)
        df = compare.compare(
            self.store,
            self.backend,
            plan=compare.Plan(patterns=plain),
            cases=[glob.escape(case)],
            timeout=self.timeout,
            in_process=self.in_process,
        ).to_pandas()
        rows: list[dict[str, Any]] = df[df["case"] == case].to_dict("records")
        self.rows += self.expect.applied(case, rows)  # as compare's report has them
        return rows


_RUN: Final = pytest.StashKey[_Run]()


def _backend(config: pytest.Config, timeout: float | None, in_process: bool) -> Any:
    """The backend the options name: a spec loaded and checked in a worker process unless
    --onnx-in-process (:mod:`onnx_arrow.compare.isolation`)."""
    from onnx_arrow.compare.isolation import backend_to_run

    spec, command = config.getoption("onnx_backend"), config.getoption("onnx_runner")
    if command is None:
        return backend_to_run(spec or "reference", in_process=in_process)
    if spec is not None:
        raise pytest.UsageError("give --onnx-backend or --onnx-runner, not both")
    if in_process:
        raise pytest.UsageError("--onnx-in-process applies to --onnx-backend, not --onnx-runner")
    try:
        runner = importlib.import_module("onnx_arrow.compare.runner")
    except ImportError as exc:
        raise pytest.UsageError(
            f"--onnx-runner needs onnx_arrow.compare.runner, which this onnx-arrow does not "
            f"have ({exc}); upgrade onnx-arrow, or give --onnx-backend"
        ) from None
    return runner.CommandRunner(command, timeout=timeout)


class StoreFile(pytest.File):
    """The store, as the collector of its cases."""

    run: _Run

    def collect(self) -> Iterator[CaseItem]:
        """An item per case, marked from the skip and xfail patterns."""
        from onnx_arrow import compare

        expect = self.run.expect
        # the xfail patterns found as the skip patterns are: the same rule, in compare
        xfails = compare.Expectations(skip=expect.xfail)
        for case in compare.select_cases(self.run.store):
            item = CaseItem.from_parent(self, name=case)
            if (pattern := expect.skips(case)) is not None:
                item.add_marker(pytest.mark.skip(reason=f"skip pattern {pattern!r}"))
                self.run.rows.append({"case": case, "status": "skipped"})  # not run, there
            elif (pattern := xfails.skips(case)) is not None:
                item.add_marker(pytest.mark.xfail(reason=f"xfail pattern {pattern!r}"))
            yield item


class CaseItem(pytest.Item):
    """One case of the store: passes when every output matches."""

    parent: StoreFile

    def runtest(self) -> None:
        """Compare the case; skip it where compare skips it (no model, no data sets)."""
        from onnx_arrow import compare
        from onnx_arrow.compare.backends import describe_backend

        rows = self.parent.run.compare(self.name)
        failed = [r for r in rows if r["status"] not in compare.PASSING]
        if failed:
            backend = describe_backend(self.parent.run.backend)["name"]
            raise _CaseFailed(self.name, failed, len(rows), backend)
        if rows and all(r["status"] == "skipped" for r in rows):
            pytest.skip(str(rows[0].get("detail") or "skipped by compare"))

    def repr_failure(
        self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None
    ) -> str | Any:
        """The report's rows for a case that failed; pytest's own report otherwise."""
        if isinstance(excinfo.value, _CaseFailed):
            return excinfo.value.text()
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int, str]:
        """The store (line 0: pytest reports a skip at a line), and the case."""
        return self.path, 0, f"case {self.name}"


def _present(value: Any) -> bool:
    """Whether a report cell holds a value (None, NaN and pandas' NA do not)."""
    if value is None:
        return False
    try:
        return bool(value == value)  # noqa: PLR0124 - False for NaN
    except TypeError:  # pandas' NA
        return False
    except ValueError:  # an array: a value
        return True


def _row_lines(row: dict[str, Any]) -> list[str]:
    """One report row as the lines of a failure."""

    def get(key: str) -> Any:
        value = row.get(key)
        return value if _present(value) else None

    where = f"data set {get('data_set')}" if get("data_set") is not None else "no data set"
    lines = [f"output {get('index')} {get('name')!r} ({where}): {row['status']}"]
    if get("rule") == "ulp":
        lines.append(
            f"  rule: ulp, budget {get('ulp_budget')} ULPs, floor {get('ulp_floor')} "
            f"({get('tolerance')})"
        )
    elif get("rtol") is not None:
        rule = f"rtol={get('rtol')} atol={get('atol')} ({get('tolerance')})"
        lines.append(f"  rule: tolerance {rule}")
    numbers = [
        f"{label} {get(key)}"
        for key, label in (
            ("max_abs_error", "max abs error"),
            ("max_rel_error", "max rel error"),
            ("n_beyond_tolerance", "elements beyond tolerance"),
            ("max_ulp", "max ULP"),
        )
        if get(key) is not None
    ]
    if numbers:
        lines.append("  " + ", ".join(numbers))
    if get("worst_index") is not None or get("worst_expected") is not None:
        lines.append(
            f"  worst element {get('worst_index')}: expected {get('worst_expected')}, "
            f"actual {get('worst_actual')}"
        )
    for key, label in (("dtype_expected", "dtype"), ("shape_expected", "shape")):
        actual = get(key.replace("expected", "actual"))
        if get(key) is not None and actual is not None and get(key) != actual:
            lines.append(f"  {label}: expected {get(key)}, actual {actual}")
    for key in ("detail", "error"):
        if get(key):
            lines.append(f"  {key}: {get(key)}")
    return lines
