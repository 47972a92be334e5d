"""A Ctrl-C while the command line is still starting ends it like one later does.

Importing onnx and ml_dtypes takes the first second or so of every ``onnx-arrow``
command that runs (``--help`` and a usage error import neither; a command imports them
once its arguments have parsed).  Python's own handler turns a Ctrl-C there into a
``KeyboardInterrupt`` traceback from deep inside one of them.  When the process was
started as the command line (the ``onnx-arrow`` script, ``python -m onnx_arrow``),
importing this module, the first thing the package does, installs a handler that
prints ``onnx-arrow: interrupted`` and exits with status 130 at once instead; the command
line puts Python's handler back as it starts (:func:`restore_interrupt`), so that
from then on Ctrl-C unwinds normally and cleans up.  Imported as a library, this
module changes nothing.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from types import FrameType

__all__ = ["restore_interrupt"]

_SCRIPT_NAMES = frozenset({"onnx-arrow", "onnx-arrow.exe"})
_MODULES = frozenset({"onnx_arrow", "onnx_arrow.cli", "onnx_arrow.__main__"})


def _started_as_command_line() -> bool:
    argv = list(getattr(sys, "orig_argv", ()))
    if "-m" in argv:
        return argv[argv.index("-m") + 1 : argv.index("-m") + 2] in ([m] for m in _MODULES)
    return os.path.basename(sys.argv[0]) in _SCRIPT_NAMES if sys.argv else False


def _interrupted(signum: int, frame: FrameType | None) -> None:
    # nothing is written before the command starts, so nothing needs cleaning up; an
    # exception would wait for the extension being initialised (ml_dtypes: a second)
    sys.stderr.write("onnx-arrow: interrupted\n")
    sys.stderr.flush()
    os._exit(128 + signal.SIGINT)


def restore_interrupt() -> None:
    """Put Python's own Ctrl-C handler back if the start-up one is still installed."""
    if signal.getsignal(signal.SIGINT) is _interrupted:
        signal.signal(signal.SIGINT, signal.default_int_handler)


if (
    threading.current_thread() is threading.main_thread()
    and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    and _started_as_command_line()
):
    signal.signal(signal.SIGINT, _interrupted)
