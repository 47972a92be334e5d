"""What the commands' work shares (:mod:`onnx_arrow.cli.work._shared`)."""

from __future__ import annotations

from pathlib import Path

import onnx_arrow
import onnx_arrow.cli.work._shared
from onnx_arrow.corpus import FolderSource


def test_default_corpus_total_is_known_once_its_sources_are_listed(corpus: Path) -> None:
    from onnx_arrow.corpus.sources import MergedSource

    case = corpus / "node" / "test_tiny"
    source = MergedSource(FolderSource(corpus), FolderSource(case))
    total = onnx_arrow.cli.work._shared.default_total(source)
    assert total() is None
    assert [c.name for c in source] == ["node/test_tiny", "test_tiny"]
    assert total() == 2
