"""Names in a corpus: the file and folder names a store can hold and an export can
write back, and the cases that glob patterns (``compare --case``) select."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable

from onnx_arrow.corpus.arguments import checked_items
from onnx_arrow.errors import CorpusError

__all__ = ["case_matches", "check_name", "check_patterns", "unmatched_patterns"]


def check_name(name: str, rel: str) -> None:
    """Refuse a file or folder name that a store cannot hold or an export cannot write
    back: not UTF-8 (a store's paths are UTF-8 text), or with a backslash (a folder
    separator on Windows, refused by every export)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        shown = rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        raise CorpusError(
            "the name is not UTF-8; a store's paths are UTF-8 text: rename it", where=shown
        ) from None
    if "\\" in name:
        raise CorpusError(
            "the name holds a backslash, a folder separator on Windows that no export "
            "writes back: rename it",
            where=rel,
        )


def case_matches(name: str, pattern: str) -> bool:
    """Whether the glob ``pattern`` matches the case ``name``: the whole name
    (``node/test_abs``, ``node/test_add*``) or the name without its kind folder
    (``test_abs``), as ``compare --case`` matches.

    >>> case_matches("node/test_add_bcast", "test_add*"), case_matches("node/test_abs", "real/*")
    (True, False)
    """
    return fnmatch.fnmatchcase(name, pattern) or fnmatch.fnmatchcase(
        name.split("/", 1)[-1], pattern
    )


def check_patterns(patterns: object, *, where: str) -> tuple[str, ...] | None:
    """``patterns`` (glob patterns of case names, or None for every case) as a tuple, or an
    error at ``where`` (the argument, as ``FolderSource(cases)``)."""
    if patterns is None:
        return None
    return tuple(checked_items(patterns, str, what="glob patterns (str)", where=where))


def unmatched_patterns(
    patterns: tuple[str, ...], names: Iterable[str], *, where: str | None
) -> None:
    """Refuse a pattern that matches none of ``names``, saying what the names look like."""
    names = list(names)
    for pattern in patterns:
        if not any(case_matches(n, pattern) for n in names):
            raise CorpusError(
                f"no case matches {pattern!r}; the corpus's cases are named like {names[0]!r}"
                if names
                else f"no case matches {pattern!r}: the corpus holds none",
                where=where,
            )
