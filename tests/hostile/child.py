"""Runs hostile cases one after another in this process: ``python -m hostile.child``.

Reads ``{"timeout": seconds, "cases": [{"id", "action", "args"}, ...]}`` as JSON on
stdin; for each case prints a ``start`` line, runs the action of :mod:`hostile.actions`,
and prints a ``done`` line with what happened (returned, raised what, exit status,
stderr, warnings).  The parent (:mod:`hostile.harness`) sets the memory cap before
this process starts and tells a crash or a hang from the last ``start`` line.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import sys
import time
import traceback
import warnings
from typing import Any

# the cap first, so that what the imports take counts too
_CAP = int(os.environ.get("HOSTILE_MEMORY", "0"))
if _CAP:
    resource.setrlimit(resource.RLIMIT_AS, (_CAP, _CAP))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

from hostile import actions  # noqa: E402


class CaseTimeout(BaseException):
    """The case ran past its timeout (a hang)."""


def _alarm(signum: int, frame: Any) -> None:
    raise CaseTimeout


def _run(case: dict[str, Any], timeout: int) -> dict[str, Any]:
    out: dict[str, Any] = {"id": case["id"], "event": "done"}
    start = time.monotonic()
    signal.alarm(timeout)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = getattr(actions, case["action"])(**case["args"])
        out["status"] = "ok"
        out["result"] = result if isinstance(result, dict) else {}
    except CaseTimeout:
        out["status"] = "hang"
        caught = []
    except BaseException as exc:  # what it raised is the result
        out["status"] = "raised"
        out["type"] = type(exc).__qualname__
        out["mro"] = [c.__qualname__ for c in type(exc).__mro__]
        out["message"] = str(exc)
        out["traceback"] = "".join(traceback.format_exception(exc))[-3000:]
        caught = []
    finally:
        signal.alarm(0)
    out["warnings"] = [[w.category.__qualname__, str(w.message)] for w in caught]
    out["seconds"] = round(time.monotonic() - start, 3)
    return out


def main() -> None:
    request = json.load(sys.stdin)
    signal.signal(signal.SIGALRM, _alarm)
    report = sys.__stdout__
    assert report is not None
    for case in request["cases"]:
        print(json.dumps({"id": case["id"], "event": "start"}), file=report, flush=True)
        print(json.dumps(_run(case, request["timeout"])), file=report, flush=True)


if __name__ == "__main__":
    main()
