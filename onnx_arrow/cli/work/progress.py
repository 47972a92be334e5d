"""The progress line of a long command: a count on stderr with the rate and the time
left, rewritten in place on a terminal; off a terminal (a CI log, a pipe) a plain line at
most every :data:`LOG_INTERVAL` seconds, as cases complete."""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Callable
from types import TracebackType
from typing import Final, TextIO

from onnx_arrow.cli.work._shared import DataError
from onnx_arrow.text import printable

__all__ = ["LOG_INTERVAL", "LOG_INTERVAL_VARIABLE", "Progress"]

_PROGRESS_INTERVAL: Final = 0.1  # seconds between progress updates: at most 10 a second
#: Seconds between two progress lines off a terminal, unless :data:`LOG_INTERVAL_VARIABLE`
#: says otherwise: a line a CI log keeps, a run of 15 minutes in 30 lines.
LOG_INTERVAL: Final = 30.0
#: The environment variable that sets the seconds between two progress lines off a
#: terminal (0: a line per case or file).
LOG_INTERVAL_VARIABLE: Final = "ONNX_ARROW_PROGRESS_INTERVAL"


def _log_interval() -> float:
    """The seconds between two lines off a terminal: :data:`LOG_INTERVAL_VARIABLE`'s, or
    :data:`LOG_INTERVAL`."""
    text = os.environ.get(LOG_INTERVAL_VARIABLE, "").strip()
    if not text:
        return LOG_INTERVAL
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds < float("inf"):
        raise DataError(
            f"{LOG_INTERVAL_VARIABLE}={text!r}: not a number of seconds of 0 or more; give "
            f"the seconds between two progress lines in a log (default {LOG_INTERVAL:g})"
        )
    return seconds


def _is_terminal(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or closed
        return False


class Progress:
    """A count on stderr: on a terminal one line rewritten in place at most ten times a
    second, cleared on the way out (also on an error or Ctrl-C); elsewhere (a CI log, a
    pipe) a plain line of its own when a case or file completes at least
    :data:`LOG_INTERVAL` seconds after the last line (or the start), never a rewritten
    one, so that a short command prints none.
    """

    def __init__(
        self,
        verb: str,
        unit: str,
        *,
        start: str = "",
        total: int | Callable[[], int | None] | None = None,
    ) -> None:
        self.verb = verb
        self.unit = unit
        self.start = start
        self.total = total
        self.stream = sys.stderr
        self.enabled = _is_terminal(self.stream)
        #: Seconds between plain lines off a terminal (None on a terminal).
        self.log_interval = None if self.enabled else _log_interval()
        self.count = 0
        self._last = 0.0 if self.enabled else time.monotonic()
        self._width = 0
        self._first = 0.0  # when the first step came: the rate counts from there

    def __enter__(self) -> Progress:
        if self.enabled:
            self._show(self.start, count=False)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self.enabled and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()

    def step(self, name: str) -> None:
        """Count one more case or file; ``name`` is shown beside the count."""
        self.count += 1
        if self.count == 1:
            self._first = time.monotonic()
        if self.enabled and time.monotonic() - self._last >= _PROGRESS_INTERVAL:
            self._show(name)
        elif self.log_interval is not None and time.monotonic() - self._last >= self.log_interval:
            self.stream.write(printable(self.line(name)) + "\n")
            self.stream.flush()
            self._last = time.monotonic()

    def say(self, text: str) -> None:
        """A line of its own on stderr, in a log too; on a terminal above the count, which
        is cleared first and drawn again at the next step."""
        if self.enabled and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self._width = 0
        self.stream.write(printable(text) + "\n")
        self.stream.flush()

    def line(self, name: str, *, count: bool = True) -> str:
        """The progress line: ``importing: 120 of 2042 cases, 85/s, 23 s left  node/test_abs``."""
        if not count:
            return f"{self.verb}: {name}".rstrip()
        total = self.total() if callable(self.total) else self.total
        counted = f"{self.count}" if total is None else f"{self.count} of {total}"
        counted += f" {self.unit}"
        elapsed = time.monotonic() - self._first
        if self.count > 1 and elapsed > 0:
            rate = (self.count - 1) / elapsed
            counted += f", {rate:.0f}/s" if rate >= 10 else f", {rate:.1f}/s"
            if total is not None and total > self.count and rate > 0:
                counted += f", {_duration((total - self.count) / rate)} left"
        return f"{self.verb}: {counted}  {name}".rstrip()

    def _show(self, name: str, *, count: bool = True) -> None:
        columns = shutil.get_terminal_size().columns
        text = printable(self.line(name, count=count))[: max(columns - 1, 1)]
        self.stream.write("\r" + text.ljust(self._width))
        self.stream.flush()
        self._width = len(text)
        self._last = time.monotonic()


def _duration(seconds: float) -> str:
    """``42 s``, ``3 min 5 s``, ``1 h 2 min``."""
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60} s"
    return f"{whole // 3600} h {whole % 3600 // 60} min"
