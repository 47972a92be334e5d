"""onnx's wheels: found on the package index, fetched and kept in the cache with their
sha256 (checked on every use), and their test data (``onnx/backend/test/data``) extracted
byte for byte.

Wheels are found on the package index at ``$ONNX_ARROW_INDEX_URL``, else the one pip is
configured with (:mod:`onnx_arrow.corpus.pip_index`: ``$PIP_INDEX_URL``, pip's
configuration files), else ``https://pypi.org/simple``, through its JSON API (PEP 691)
or its HTML pages (PEP 503) where it serves no JSON; of a release's wheels the smallest
is taken (any platform's: nothing is installed or built, and their test data are the
same).  A wheel is streamed to disk, hashed as it comes, checked against the sha256 the
index states and only then renamed into the cache folder
(:func:`~onnx_arrow.corpus.cache.cache_folder`, ``releases/wheels``) with its sha256
beside it; a cached file whose bytes no longer have that digest is an error that names it.
"""

from __future__ import annotations

import contextlib
import hashlib
import html.parser
import os
import re
import shutil
import stat
import tempfile
import urllib.error
import urllib.parse
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Final

from onnx_arrow.core.model import NO_FOLLOW, OPEN_FLAGS, file_kind, load_json, read_regular_file
from onnx_arrow.corpus.cache import cache_folder
from onnx_arrow.corpus.pip_index import PYPI, pip_index_url
from onnx_arrow.corpus.sources import MAX_FILE_BYTES
from onnx_arrow.errors import CorpusError, ReleaseError

__all__ = [
    "DATA_PREFIX",
    "INDEX_URL",
    "MAX_DATA_BYTES",
    "MAX_DATA_MEMBERS",
    "MAX_RECORD_BYTES",
    "WHEEL_NAME",
    "Wheel",
    "checked_digest",
    "extract_data",
    "fetch_wheel",
    "index_url",
    "read_record",
    "record_digest",
    "releases_folder",
    "sha256_of",
    "version_key",
    "write_record",
]

#: Where a wheel holds the test data.
DATA_PREFIX: Final = "onnx/backend/test/data/"
#: The package index asked when neither ``$ONNX_ARROW_INDEX_URL`` nor pip's environment
#: or configuration names one.
INDEX_URL: Final = PYPI
#: Seconds a request to the index may wait for the next bytes.
_TIMEOUT: Final = 120.0
#: Largest index page read (onnx's JSON page on PyPI is under 1 MiB).
_MAX_PAGE_BYTES: Final = 64 << 20
#: Bytes read and written at a time while a wheel streams to disk.
_BLOCK: Final = 1 << 20
#: What the index is asked for: its JSON API, else its HTML pages.
_ACCEPT: Final = "application/vnd.pypi.simple.v1+json, text/html;q=0.1"
#: The name of a wheel of onnx.
WHEEL_NAME: Final = re.compile(r"onnx-(?P<version>[^-]+)-.+\.whl")


@dataclass(frozen=True)
class Wheel:
    """A wheel of onnx on disk, its sha256, and where it came from (a url, or None)."""

    path: Path
    version: str
    sha256: str
    url: str | None = None


def index_url() -> str:
    """The package index asked for wheels (see the module docs), without a trailing ``/``."""
    given = os.environ.get("ONNX_ARROW_INDEX_URL", "").strip()
    if given:
        return given.rstrip("/")
    return pip_index_url()


def releases_folder(what: str) -> Path | None:
    base = cache_folder()
    return None if base is None else base / "releases" / what


@contextlib.contextmanager
def _open(url: str, *, accept: str | None = None) -> Iterator[Any]:
    """The response at ``url``; an error that says the index cannot be reached."""
    # imported where the index is asked (with ssl, a tenth of a second's start): an
    # import of a folder or of a release already cached never asks it
    import http.client
    import urllib.request

    request = urllib.request.Request(url, headers={"Accept": accept} if accept else {})
    try:
        response = urllib.request.urlopen(request, timeout=_TIMEOUT)
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            raise ReleaseError(f"{url}: not found on the package index (HTTP 404)") from None
        raise ReleaseError(f"{url}: the package index answered HTTP {exc.code}") from None
    except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
        reason = getattr(exc, "reason", exc)
        raise ReleaseError(
            f"cannot reach the package index at {url} ({reason}): connect to it, or use a "
            "release already cached (--offline), or a wheel on disk (@onnx=PATH.whl)"
        ) from None
    with response:
        yield response


def _index_files(version: str) -> list[dict[str, Any]]:
    """The wheels the index lists for onnx ``version`` (not yanked), as PEP 691 states
    them (``filename``, ``url``, ``hashes``, ``size`` where known)."""
    url = f"{index_url()}/onnx/"
    with _open(url, accept=_ACCEPT) as response:
        kind = response.headers.get_content_type()
        import http.client

        try:
            body = response.read(_MAX_PAGE_BYTES + 1)
        except (OSError, http.client.HTTPException) as exc:
            raise ReleaseError(f"{url}: the package index broke off its answer ({exc})") from None
    if len(body) > _MAX_PAGE_BYTES:
        raise ReleaseError(f"{url}: the index page is larger than {_MAX_PAGE_BYTES} bytes")
    files = _json_files(url, body) if kind.endswith("json") else _html_files(url, body)
    wheels = [
        f
        for f in files
        if isinstance(f.get("filename"), str)
        and f["filename"].startswith(f"onnx-{version}-")
        and f["filename"].endswith(".whl")
        and not f.get("yanked")
    ]
    if not wheels:
        known = sorted(
            {
                m.group("version")
                for f in files
                if (m := WHEEL_NAME.fullmatch(str(f.get("filename"))))
            },
            key=version_key,
        )
        near = ", ".join(known[-5:])
        raise ReleaseError(
            f"onnx {version} has no wheel on the package index {index_url()}; give a released "
            f"version (the latest: {near})"
        )
    return wheels


def _json_files(url: str, body: bytes) -> list[dict[str, Any]]:
    """The files of a JSON index page (PEP 691)."""
    try:
        doc = load_json(body, what="the index page", where=url, error=ValueError)
        return [f for f in doc["files"] if isinstance(f, dict)]
    except (ValueError, KeyError, TypeError, RecursionError):
        raise ReleaseError(
            f"{url}: not the JSON simple API (PEP 691) it says it is; point "
            "ONNX_ARROW_INDEX_URL at an index that serves it, or its HTML pages (PEP 503)"
        ) from None


class _Links(html.parser.HTMLParser):
    """The anchors of an HTML index page (PEP 503), as PEP 691 states files."""

    def __init__(self) -> None:
        super().__init__()
        self.files: list[dict[str, Any]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag != "a":
            return
        named = dict(attrs)
        href = named.get("href") or ""
        link, _, fragment = href.partition("#")
        algorithm, _, digest = fragment.partition("=")
        name = PurePosixPath(urllib.parse.urlsplit(link).path).name
        self.files.append(
            {
                "filename": urllib.parse.unquote(name),
                "url": link,
                "hashes": {algorithm: digest} if digest else {},
                "yanked": "data-yanked" in named,
            }
        )


def _html_files(url: str, body: bytes) -> list[dict[str, Any]]:
    """The files of an HTML index page (PEP 503)."""
    links = _Links()
    try:
        links.feed(body.decode("utf-8"))
        links.close()
    except UnicodeDecodeError:
        raise ReleaseError(f"{url}: the index page is neither JSON nor UTF-8 HTML") from None
    return links.files


def version_key(version: str) -> tuple[tuple[int, str], ...]:
    """A sort key of a version: ``1.10.0`` after ``1.4.1``."""
    parts = re.split(r"[.+-]", version)
    return tuple((int(p), "") if p.isdigit() else (-1, p) for p in parts)


def sha256_of(path: Path) -> str:
    """The sha256 of the regular file ``path`` (opened without blocking and without
    following a final link: a FIFO or a link in its place is an error that names it)."""
    digest = hashlib.sha256()
    try:
        fd = os.open(path, OPEN_FLAGS | NO_FOLLOW)
    except OSError as exc:
        raise ReleaseError(
            f"cannot open ({exc.strerror}); give or keep a regular file", where=str(path)
        ) from None
    with open(fd, "rb") as f:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise ReleaseError(
                f"{file_kind(mode)}, not a regular file; delete it, and it is fetched or "
                "built again",
                where=str(path),
            )
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


#: Largest file of the cache read whole: a ``.sha256``, ``.url`` or ``index.json`` file.
MAX_RECORD_BYTES: Final = 1 << 20


def read_record(path: Path) -> str | None:
    """The text of a small file of the cache (UTF-8); None if there is none.  Anything but
    a regular file (a FIFO, a link, a folder) is an error that names it, never a wait.

    Raises
    ------
    ReleaseError
        Located at ``path``: not a regular file, larger than :data:`MAX_RECORD_BYTES`, not
        UTF-8.
    """
    if not path.exists() and not path.is_symlink():
        return None
    fix = "the cache holds regular files only: delete it, and it is fetched or built again"
    try:
        data = read_regular_file(str(path), max_bytes=MAX_RECORD_BYTES, where=str(path), fix=fix)
        return data.decode("utf-8")
    except CorpusError as exc:
        raise ReleaseError(exc.message, where=str(path)) from None
    except UnicodeDecodeError:
        raise ReleaseError(f"not UTF-8 text; {fix}", where=str(path)) from None


def write_record(path: Path, text: str) -> None:
    """Write a small file of the cache whole or not at all, in place of whatever is there
    (a FIFO or a link is replaced, never written through)."""
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(tmp, path)
        tmp = ""
    finally:
        if tmp:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def checked_digest(path: Path) -> str:
    """The sha256 of a cached file, checked against the one recorded beside it."""
    record = path.with_name(path.name + ".sha256")
    text = read_record(record)
    recorded = text.split()[0] if text is not None and text.split() else None
    if recorded is None:
        raise ReleaseError(
            f"no digest recorded beside it ({record.name}); delete it, and it is fetched or "
            "built again",
            where=str(path),
        )
    got = sha256_of(path)
    if got != recorded:
        raise ReleaseError(
            f"its sha256 is {got}, not the {recorded} recorded when it was cached: the file "
            f"changed since; delete it (rm {path}), and it is fetched or built again",
            where=str(path),
        )
    return got


def record_digest(path: Path, sha256: str) -> None:
    write_record(path.with_name(path.name + ".sha256"), f"{sha256}  {path.name}\n")


def _plain_name(name: str, url: str) -> str:
    """``name``, a wheel's file name as the index states it, if it is a plain file name
    (nothing that names a folder, ``..``, a separator or a control character)."""
    if (
        not WHEEL_NAME.fullmatch(name)
        or name != PurePosixPath(name).name
        or any(c in name for c in "/\\\0")
        or any(ord(c) < 32 for c in name)
        or name.startswith(".")
    ):
        raise ReleaseError(
            f"the package index names a wheel {name!r}, not a plain file name of a wheel; "
            "point ONNX_ARROW_INDEX_URL at an index that serves onnx's own wheels",
            where=url,
        )
    return name


def fetch_wheel(version: str, *, offline: bool = False) -> Wheel:
    """A wheel of onnx ``version``: from the cache (its digest checked), else from the
    package index (checked against the sha256 the index states, then cached).

    Raises
    ------
    ReleaseError
        An unknown version, the index out of reach, ``offline`` with no wheel cached, a
        digest that differs.
    """
    folder = releases_folder("wheels")
    if folder is not None:
        cached = sorted(folder.glob(f"onnx-{version}-*.whl"))
        if cached:
            path = cached[0]
            return Wheel(path, version, checked_digest(path), _recorded_url(path))
    if offline:
        raise ReleaseError(
            f"onnx {version} is not in the cache ({folder}) and --offline forbids fetching "
            f"it: run once without --offline, or pass a wheel: @onnx=PATH/onnx-{version}-....whl"
        )
    chosen = min(_index_files(version), key=lambda f: (f.get("size") or 0, f["filename"]))
    name = _plain_name(chosen["filename"], f"{index_url()}/onnx/")
    url = chosen.get("url")
    expected = (chosen.get("hashes") or {}).get("sha256")
    if not isinstance(url, str) or not isinstance(expected, str):
        raise ReleaseError(f"the index states no url or sha256 of {name}; cannot check it")
    url = urllib.parse.urljoin(f"{index_url()}/onnx/", url)
    target_folder = folder if folder is not None else Path(tempfile.mkdtemp(prefix="onnx-arrow-"))
    target_folder.mkdir(parents=True, exist_ok=True)
    path = target_folder / name
    got = _download(url, path, expected)
    record_digest(path, got)
    write_record(path.with_name(name + ".url"), url + "\n")
    return Wheel(path, version, got, url)


def _download(url: str, path: Path, expected: str) -> str:
    """Stream ``url`` into ``path`` (a file beside it, renamed once whole and checked: a
    broken or damaged download leaves nothing), hashing as it comes; its sha256."""
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".whl", dir=path.parent)
    digest = hashlib.sha256()
    size = 0
    import http.client

    try:
        with os.fdopen(fd, "wb") as out, _open(url) as response:
            while True:
                try:
                    block = response.read(_BLOCK)
                except (OSError, http.client.HTTPException) as exc:
                    raise ReleaseError(
                        f"{path.name}: the download from {url} broke off after {size} bytes "
                        f"({exc or type(exc).__name__}); try again"
                    ) from None
                if not block:
                    break
                digest.update(block)
                try:
                    out.write(block)
                except OSError as exc:
                    raise ReleaseError(
                        f"cannot write the wheel fetched from {url} ({exc.strerror or exc}): "
                        "free some space, or point ONNX_ARROW_CACHE_DIR elsewhere",
                        where=str(path.parent),
                    ) from None
                size += len(block)
            stated = response.headers.get("Content-Length", "")
            if stated.isdigit() and int(stated) != size:
                raise ReleaseError(
                    f"{path.name}: the download from {url} broke off after {size} of its "
                    f"{stated} bytes; try again"
                )
        got = digest.hexdigest()
        if got != expected:
            raise ReleaseError(
                f"{path.name} fetched from {url} ({size} bytes) has sha256 {got}, not the "
                f"{expected} the index states: the download was damaged or changed; try again"
            )
        os.replace(tmp, path)
        tmp = ""
    finally:
        if tmp:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    return got


def _recorded_url(path: Path) -> str | None:
    text = read_record(path.with_name(path.name + ".url"))
    return None if text is None else text.strip() or None


def extract_data(wheel: str | os.PathLike[str], dest: str | os.PathLike[str]) -> list[str]:
    """Write the wheel's ``onnx/backend/test/data`` tree into the folder ``dest``, byte for
    byte; the kind folders it holds, sorted.

    Every member is checked before anything is written: at most :data:`MAX_DATA_MEMBERS`
    files of test data holding at most :data:`MAX_DATA_BYTES` together (as the archive
    states them; no member gives more than it states), each a name of its own.

    Raises
    ------
    ReleaseError
        If the file is not a zip archive, holds no test data, two members of one name,
        more test data than the bounds above, or a member whose name would write outside
        ``dest`` or that is larger than a corpus file may be.
    """
    where = os.fspath(wheel)
    root = Path(dest)
    try:
        with zipfile.ZipFile(wheel) as archive:
            members = _data_members(archive, where)
            kinds: set[str] = set()
            for member, rel in members:
                kinds.add(rel.parts[0] if len(rel.parts) > 1 else "")
                target = root.joinpath(*rel.parts)
                target.parent.mkdir(parents=True, exist_ok=True)
                with archive.open(member) as src, open(target, "wb") as out:
                    shutil.copyfileobj(src, out, 1 << 20)
    except (zipfile.BadZipFile, zipfile.LargeZipFile) as exc:
        raise ReleaseError(f"not a wheel (a zip archive): {exc}", where=where) from None
    return sorted(k for k in kinds if k)


#: Most files of test data a wheel may hold (onnx's hold a few thousand).
MAX_DATA_MEMBERS: Final = 100_000
#: Most bytes of test data a wheel may expand to (onnx's hold some tens of MiB).
MAX_DATA_BYTES: Final = 1 << 30


def _data_members(
    archive: zipfile.ZipFile, where: str
) -> list[tuple[zipfile.ZipInfo, PurePosixPath]]:
    """The members of the test data and their paths below it, every bound checked."""
    seen: set[str] = set()
    for member in archive.infolist():
        if member.filename in seen:
            raise ReleaseError(
                f"holds two members named {member.filename!r}; a wheel names each file "
                "once: pass a wheel of onnx itself",
                where=where,
            )
        seen.add(member.filename)
    members = [
        m for m in archive.infolist() if m.filename.startswith(DATA_PREFIX) and not m.is_dir()
    ]
    if not members:
        raise ReleaseError(
            f"holds no test data ({DATA_PREFIX}); onnx's wheels ship it from 1.2 on: "
            "pass a wheel of onnx itself",
            where=where,
        )
    if len(members) > MAX_DATA_MEMBERS:
        raise ReleaseError(
            f"holds {len(members)} files of test data, more than the {MAX_DATA_MEMBERS} a "
            "wheel may: pass a wheel of onnx itself",
            where=where,
        )
    total = sum(m.file_size for m in members)
    if total > MAX_DATA_BYTES:
        raise ReleaseError(
            f"its test data expand to {total} bytes, more than the {MAX_DATA_BYTES} a wheel "
            "may: pass a wheel of onnx itself",
            where=where,
        )
    checked = []
    for member in members:
        rel = PurePosixPath(member.filename[len(DATA_PREFIX) :])
        if rel.is_absolute() or ".." in rel.parts or "\\" in member.filename:
            raise ReleaseError(
                f"member {member.filename!r} names a file outside the test data",
                where=where,
            )
        if member.file_size > MAX_FILE_BYTES:
            raise ReleaseError(
                f"member {member.filename!r} holds {member.file_size} bytes, more than "
                "a corpus file may",
                where=where,
            )
        checked.append((member, rel))
    return checked
