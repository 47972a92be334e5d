"""The files of a results site on disk: names made from data that stay inside the site,
a case's files as a zip, and the site built in a temporary sibling folder, then swapped
into place with renames, so that OUT is the old site or the new one, never half of one.

* **Names.** A page or file named after data (a case, a runtime) is called by
  :func:`safe_name`: the name's letters, digits, ``.``, ``_`` and ``-`` (others as
  ``_``, 48 at most) and a digest of the whole name, so two names never share a file and
  none holds a path.  :func:`write` checks that each path stays inside the site.
* **Replacing a site.** OUT is replaced only if it is a folder this module made (it holds
  :data:`MARKER`); any other folder or file is refused.  The new site is built in
  ``.OUT.building-XXXX`` beside OUT; on success OUT is renamed to ``.OUT.old-XXXX``,
  the new one to OUT, and the old one removed.  A failure or an interrupt while building
  removes the new folder and leaves OUT as it was.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import re
import shutil
import stat
import tempfile
import uuid
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from onnx_arrow.corpus.tree import current_umask, safe_relative
from onnx_arrow.errors import CorpusError, SiteError

__all__ = ["MARKER", "building", "case_zip", "check_target", "safe_name", "write"]

#: The file every site this module builds holds: what says a folder may be replaced.
MARKER: Final = ".onnx-arrow-site"

_UNSAFE: Final = re.compile(r"[^A-Za-z0-9._-]+")
#: The date every file of a case's zip says (zip's earliest): the same case, the same bytes.
_ZIP_DATE: Final = (1980, 1, 1, 0, 0, 0)


def safe_name(name: str, suffix: str) -> str:
    """A file name for ``name``: its safe characters and a digest of it, then ``suffix``.

    >>> safe_name("node/test_abs", ".html")
    'node_test_abs-f18fa24807ce694a.html'
    """
    readable = _UNSAFE.sub("_", name).strip("._-")[:48] or "x"
    digest = hashlib.blake2b(name.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()
    return f"{readable}-{digest}{suffix}"


def write(root: Path, relative: str, data: str | bytes) -> int:
    """Write ``data`` (text as UTF-8) to ``relative`` under ``root``, a path that must
    stay inside it; return the bytes written."""
    target = (root / relative).resolve()
    if not target.is_relative_to(root.resolve()) or target == root.resolve():
        raise SiteError(f"the site's file {relative!r:.200} would leave the site", where=str(root))
    target.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    with open(target, "xb") as f:
        f.write(raw)
    return len(raw)


def case_zip(files: list[tuple[str, bytes]], *, where: str) -> bytes:
    """A zip of a case's files (their paths in the store, each checked to stay inside the
    folder it unpacks to), the same bytes for the same files."""
    sink = io.BytesIO()
    with zipfile.ZipFile(sink, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, data in sorted(files):
            try:
                safe_relative(path, where=where)
            except CorpusError as exc:
                raise SiteError(str(exc), where=where) from None
            info = zipfile.ZipInfo(path, date_time=_ZIP_DATE)
            info.external_attr = (stat.S_IFREG | 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    return sink.getvalue()


def check_target(out: Path) -> None:
    """Refuse ``out`` before any work: it exists and is not a site this module made, or
    its parent folder does not exist (a located :class:`SiteError`)."""
    where = str(out)
    if not out.absolute().parent.is_dir():
        raise SiteError("the site's parent folder does not exist", where=where)
    if not os.path.lexists(out):
        return
    if out.is_symlink() or not out.is_dir():
        raise SiteError("exists and is not a folder; the site is a folder", where=where)
    if not (out / MARKER).is_file():
        raise SiteError(
            f"exists and is not a site onnx-arrow made (no {MARKER} in it); give a new "
            "folder, or remove this one",
            where=where,
        )


@contextlib.contextmanager
def building(out: str | os.PathLike[str]) -> Iterator[Path]:
    """A new folder to build the site in; when the block ends without an error, it
    replaces ``out`` (see the module); else it is removed and ``out`` left as it was.

    Raises
    ------
    SiteError
        Before anything is made: ``out`` exists and is not a site this module made, or its
        parent folder does not exist.
    """
    path = Path(out)
    check_target(path)
    parent = path.absolute().parent
    try:
        new = Path(tempfile.mkdtemp(prefix=f".{path.name}.building-", dir=parent))
    except OSError as exc:
        raise SiteError(
            f"cannot make a folder beside the site ({exc.strerror})", where=str(path)
        ) from None
    try:
        yield new
        write(new, MARKER, "made by onnx-arrow site; replaced whole by the next build\n")
        os.chmod(new, 0o777 & ~current_umask())  # mkdtemp's 0700 is no site's to keep
        _swap(new, path)
    except BaseException:
        shutil.rmtree(new, ignore_errors=True)
        raise


def _swap(new: Path, out: Path) -> None:
    check_target(out)  # again: another build may have put something there meanwhile
    if not os.path.lexists(out):
        os.rename(new, out)
        return
    old = out.absolute().parent / f".{out.name}.old-{uuid.uuid4().hex[:12]}"
    os.rename(out, old)
    try:
        os.rename(new, out)
    except BaseException as exc:  # an interrupt too: the old site goes back in place
        if not os.path.lexists(out):
            os.rename(old, out)
        if isinstance(exc, OSError):
            raise SiteError(
                f"cannot put the new site in place ({exc.strerror})", where=str(out)
            ) from None
        raise
    shutil.rmtree(old, ignore_errors=True)
