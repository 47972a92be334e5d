"""Pages rendered by headless Chromium: what a browser computes, and a screenshot.

A probe script added to the page measures the elements it is asked about after layout
and writes the result into the DOM, which ``--dump-dom`` prints.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

#: Layout facts of every display in a page: each table's cells, where its keys and values
#: sit, and the page text outside code blocks.
PROBE = """
<script>
window.addEventListener("load", () => {
  const tables = [...document.querySelectorAll(".onnx-arrow table")].map((table) => {
    const host = table.closest(".onnx-arrow").parentElement.getBoundingClientRect();
    const rows = [...table.rows].map((row) => [...row.cells].map((cell) => {
      const box = cell.getBoundingClientRect();
      return {align: getComputedStyle(cell).textAlign, left: box.left, right: box.right,
              text: cell.textContent};
    }));
    return {left: table.getBoundingClientRect().left - host.left, rows};
  });
  const prose = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const node = walker.currentNode;
    if (!node.parentElement.closest("pre, code, script, style")) prose.push(node.textContent);
  }
  const out = document.createElement("pre");
  out.id = "probe-result";
  out.textContent = JSON.stringify({tables, prose: prose.join(" ")});
  document.body.appendChild(out);
});
</script>
"""


def chromium() -> str:
    """The headless browser, or skip (Debian: apt-get install chromium)."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path is not None:
            return path
    pytest.skip("needs Chromium (Debian: apt-get install chromium)")


def _run(page: Path, *flags: str) -> str:
    result = subprocess.run(
        [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         "--window-size=1200,1600", *flags, page.as_uri()],
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return result.stdout


def measure(page: Path) -> dict[str, Any]:
    """Render ``page`` (an HTML file) with the probe and give what it measured."""
    probed = page.with_name(page.stem + ".probed.html")
    text = page.read_text(encoding="utf-8")
    # nothing from the network: a page's CDN scripts would only wait for a timeout
    text = re.sub(r"<script[^>]+src=\"https?://[^\"]*\"[^>]*>\s*</script>", "", text)
    probed.write_text(text.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    dom = _run(probed, "--virtual-time-budget=10000", "--dump-dom")
    found = re.search(r'<pre id="probe-result">(.*?)</pre>', dom, re.DOTALL)
    assert found is not None, "the probe did not run"
    return json.loads(html.unescape(found.group(1)))  # type: ignore[no-any-return]


def screenshot(page: Path, out: Path) -> Path:
    """A PNG of ``page`` as Chromium draws it."""
    _run(page, f"--screenshot={out}")
    assert out.is_file()
    assert out.stat().st_size > 0
    return out
