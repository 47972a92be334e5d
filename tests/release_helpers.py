"""Helpers of the tests of onnx releases as corpora (tests/corpus/test_wheels.py,
test_releases.py, test_release_dataset.py): wheels of a made-up onnx with a small
``onnx/backend/test/data`` tree, put on disk or into the cache or served by a package
index on this machine, and whether the real package index answers."""

from __future__ import annotations

import hashlib
import http.server
import json
import os
import shutil
import socket
import threading
import zipfile
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper, save_model
from store_helpers import small_corpus

from onnx_arrow.corpus.wheels import DATA_PREFIX


def data_tree(root: Path, *, y: float = 2.0) -> Path:
    """A data tree: node/test_tiny (small_corpus) and simple/test_twice, whose expected
    output is ``y``."""
    small_corpus(root)
    case = root / "simple" / "test_twice"
    (case / "test_data_set_0").mkdir(parents=True)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])
    out = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])
    graph = helper.make_graph([helper.make_node("Add", ["x", "x"], ["y"])], "g", [x], [out])
    save_model(helper.make_model(graph), case / "model.onnx")
    for name, value in (("input_0", 1.0), ("output_0", y)):
        data = numpy_helper.from_array(np.array([value], np.float32), name[:1].replace("i", "x"))
        (case / "test_data_set_0" / f"{name}.pb").write_bytes(data.SerializeToString())
    return root


def make_wheel(
    folder: Path, version: str, *, y: float = 2.0, data: bool = True, node: bool = True
) -> Path:
    """A wheel of 'onnx VERSION': a zip holding the data tree under onnx/backend/test/data
    (without its node/ folder unless ``node``: the wheels of onnx 1.23 on)."""
    tree = data_tree(folder / f"tree-{version}-{y}", y=y)
    if not node:
        shutil.rmtree(tree / "node")
    path = folder / f"onnx-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("onnx/__init__.py", f"__version__ = {version!r}\n")
        if data:
            for file in sorted(tree.rglob("*")):
                if file.is_file():
                    archive.write(file, DATA_PREFIX + file.relative_to(tree).as_posix())
    return path


# --- names --------------------------------------------------------------------------------


def cached_wheel(cache: Path, tmp_path: Path, version: str) -> Path:
    """A wheel put into the cache as a fetch leaves it: with its sha256 beside it."""
    folder = cache / "releases" / "wheels"
    folder.mkdir(parents=True)
    path = Path(shutil.copy(make_wheel(tmp_path, version), folder))
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    path.with_name(path.name + ".sha256").write_text(f"{digest}  {path.name}\n")
    return path


def _index_answers() -> bool:
    """Whether the real package index answers (the tests below skip when not)."""
    try:
        socket.create_connection(("pypi.org", 443), timeout=5).close()
    except OSError:
        return False
    return True


network = pytest.mark.skipif(
    os.environ.get("ONNX_ARROW_NO_NETWORK") is not None or not _index_answers(),
    reason="the package index is out of reach",
)


# --- a package index on this machine -------------------------------------------------------


class LocalIndex:
    """A package index on 127.0.0.1 (a real HTTP server, in a thread): onnx's page at
    ``{url}/onnx/``, in PEP 691's JSON or PEP 503's HTML, and the wheels added to it; the
    paths it was asked for, in order."""

    def __init__(self, *, html: bool = False) -> None:
        self.html = html
        self.files: dict[str, tuple[bytes, str]] = {}  # name: (bytes served, sha256 stated)
        self.cut: set[str] = set()  # files whose answer breaks off halfway
        self.asked: list[str] = []
        index = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                index.asked.append(self.path)
                if self.path == "/simple/onnx/":
                    body, kind = index.page()
                elif self.path.startswith("/files/") and self.path[7:] in index.files:
                    body, kind = index.files[self.path[7:]][0], "application/octet-stream"
                else:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.path[7:] in index.cut:
                    self.wfile.write(body[: len(body) // 2])
                    self.close_connection = True
                    return
                self.wfile.write(body)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/simple"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def add(self, wheel: Path, *, stated: str | None = None, cut: bool = False) -> Path:
        """Serve ``wheel``, stating its sha256 (or ``stated``); ``cut``: break off halfway."""
        data = wheel.read_bytes()
        self.files[wheel.name] = (data, stated or hashlib.sha256(data).hexdigest())
        if cut:
            self.cut.add(wheel.name)
        return wheel

    def page(self) -> tuple[bytes, str]:
        if self.html:
            links = "".join(
                f'<a href="../../files/{name}#sha256={digest}">{name}</a><br/>\n'
                for name, (_, digest) in self.files.items()
            )
            return f"<!DOCTYPE html><html><body>\n{links}</body></html>".encode(), "text/html"
        files = [
            {
                "filename": name,
                "url": f"../../files/{name}",
                "hashes": {"sha256": digest},
                "size": len(data),
            }
            for name, (data, digest) in self.files.items()
        ]
        doc = {"meta": {"api-version": "1.0"}, "name": "onnx", "files": files}
        return json.dumps(doc).encode(), "application/vnd.pypi.simple.v1+json"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)
