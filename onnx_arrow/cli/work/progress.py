"""The progress line of a long command: a count on stderr, rewritten in place, with the
rate and the time left; silent unless stderr is a terminal."""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Callable
from types import TracebackType
from typing import Final, TextIO

__all__ = ["Progress"]

_PROGRESS_INTERVAL: Final = 0.1  # seconds between progress updates: at most 10 a second


def _is_terminal(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or closed
        return False


class Progress:
    """A count on stderr, rewritten in place at most ten times a second.

    Silent unless stderr is a terminal, so logs and pipes get nothing.  The line
    is cleared on the way out, also on an error or Ctrl-C.
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
        self.count = 0
        self._last = 0.0
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
        text = self.line(name, count=count)[: max(columns - 1, 1)]
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
