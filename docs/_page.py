"""What every docs generator shares: write its page, or with ``--check`` say it is stale."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path


def generate_page(
    page: Path, build: Callable[[], str], *, script: str, argv: list[str] | None = None
) -> int:
    """Write ``build()`` to ``page``; with ``--check``, exit 1 if the page differs."""
    parser = argparse.ArgumentParser(description=f"Write {page.name} from the code.")
    parser.add_argument(
        "--check", action="store_true", help="exit 1 if the page is stale; write nothing"
    )
    args = parser.parse_args(argv)
    text = build()
    if args.check:
        current = page.read_text(encoding="utf-8") if page.exists() else ""
        if current != text:
            print(f"{page} is stale; run: python docs/{script}", file=sys.stderr)
            return 1
        return 0
    page.write_text(text, encoding="utf-8")
    print(f"wrote {page}")
    return 0
