"""The two renderers of sections: scoped HTML (tables, inline PNG pictures and their
legends) for notebooks, aligned plain text for terminals."""

from __future__ import annotations

import base64
import html as _html
from collections.abc import Sequence
from typing import Final

import numpy as np

from onnx_arrow.jupyter.colormap import COLORMAP
from onnx_arrow.jupyter.sections import Picture, Section

__all__ = ["render_html", "render_text"]

#: The display's styles, scoped to its own element.  Each selector repeats the class so
#: that it outranks the table rules of JupyterLab (``.jp-RenderedHTMLCommon td``: right
#: aligned, centred tables), classic Notebook (``.rendered_html td``) and VS Code, which
#: would otherwise set keys and values hundreds of pixels apart.
_STYLE: Final = (
    "<style>"
    ".onnx-arrow.onnx-arrow{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;"
    "font-size:12px;line-height:1.4;text-align:left}"
    ".onnx-arrow.onnx-arrow table{border-collapse:collapse;margin:2px 0;width:auto;"
    "table-layout:auto;border:none;float:none}"
    ".onnx-arrow.onnx-arrow tr,.onnx-arrow.onnx-arrow td,.onnx-arrow.onnx-arrow th{"
    "padding:1px 8px;text-align:left;vertical-align:top;border:none;background:none;"
    "line-height:inherit;max-width:none;white-space:normal}"
    ".onnx-arrow.onnx-arrow th{border-bottom:1px solid #888;font-weight:bold}"
    ".onnx-arrow.onnx-arrow .oa-sec{display:flex;gap:16px;align-items:flex-start;margin:4px 0}"
    ".onnx-arrow.onnx-arrow .oa-title{font-weight:bold}"
    ".onnx-arrow.onnx-arrow .oa-note{color:#888}"
    ".onnx-arrow.onnx-arrow figure{margin:0;text-align:left}"
    ".onnx-arrow.onnx-arrow figcaption{max-width:260px;text-align:left}"
    ".onnx-arrow.onnx-arrow img.oa-picture{image-rendering:pixelated;border:1px solid #888;"
    "max-width:none}"
    ".onnx-arrow.onnx-arrow .oa-legend{display:flex;flex-wrap:wrap;gap:4px 10px;"
    "align-items:center;margin-top:2px}"
    ".onnx-arrow.onnx-arrow .oa-bar{display:inline-block;vertical-align:middle;"
    "border:1px solid #888;margin:0 4px;width:128px;height:10px}"
    ".onnx-arrow.onnx-arrow .oa-swatch{display:inline-block;width:10px;height:10px;"
    "border:1px solid #888;margin-right:4px;vertical-align:middle}"
    "</style>"
)

#: The colour scale, low to high, as the legend's bar shows it: a CSS gradient through
#: nine of the colormap's colours (an element of the page, not another image).
_COLOR_BAR: Final = "linear-gradient(to right,{})".format(
    ",".join("#{:02x}{:02x}{:02x}".format(*COLORMAP[i]) for i in np.linspace(0, 255, 9, dtype=int))
)


def _legend(p: Picture) -> str:
    """The key under a heatmap: its scale, and the colours off the scale it shows."""
    parts = []
    if p.scale is not None:
        lo, hi = p.scale
        shared = f" ({p.scale_note})" if p.scale_note else ""
        parts.append(
            f'<span>{_e(lo)}<span class="oa-bar" role="img" aria-label="colour scale, '
            f'{_e(lo)} to {_e(hi)}{_e(shared)}" style="background:{_COLOR_BAR}"></span>'
            f"{_e(hi)}</span>"
        )
        if p.scale_note:
            parts.append(f"<span>{_e(p.scale_note)}</span>")
    for label, color in p.keys:
        parts.append(
            f'<span><span class="oa-swatch" style="background:{color}"></span>{_e(label)}</span>'
        )
    return f'<div class="oa-legend">{"".join(parts)}</div>' if parts else ""


def _e(value: object) -> str:
    return _html.escape(str(value), quote=True)


def render_html(sections: Sequence[Section]) -> str:
    parts = [_STYLE, '<div class="onnx-arrow">']
    for s in sections:
        indent = s.level * 16
        parts.append(f'<div class="oa-sec" style="margin-left:{indent}px"><div>')
        parts.append(f'<div class="oa-title">{_e(s.title)}</div>')
        if s.fields:
            rows = "".join(f"<tr><td>{_e(k)}</td><td>{_e(v)}</td></tr>" for k, v in s.fields)
            parts.append(f"<table>{rows}</table>")
        if s.table is not None:
            header, body = s.table
            head = "".join(f"<th>{_e(h)}</th>" for h in header)
            rows = "".join(
                "<tr>" + "".join(f"<td>{_e(c)}</td>" for c in row) + "</tr>" for row in body
            )
            parts.append(f"<table><tr>{head}</tr>{rows}</table>")
        if s.note:
            parts.append(f'<div class="oa-note">{_e(s.note)}</div>')
        parts.append("</div>")
        for p in ([s.picture] if s.picture is not None else []) + s.pictures:
            data = base64.b64encode(p.png).decode("ascii")
            parts.append(
                f'<figure><img class="oa-picture" src="data:image/png;base64,{data}" '
                f'width="{p.width}" height="{p.height}" alt="{_e(p.caption)}">'
                f"<figcaption>{_e(p.caption)}</figcaption>{_legend(p)}</figure>"
            )
        parts.append("</div>")
    parts.append("</div>")
    return "".join(parts)


def render_text(sections: Sequence[Section]) -> str:
    lines: list[str] = []
    for s in sections:
        pad = "  " * s.level
        lines.append(pad + s.title)
        fields = list(s.fields)
        if s.picture is not None:
            p = s.picture
            fields.append(("picture", f"{p.kind}, {p.width}x{p.height} px (in HTML)"))
        for p in s.pictures:
            fields.append(
                ("picture", f"{p.caption.split(':')[0]}, {p.width}x{p.height} px (in HTML)")
            )
        if fields:
            width = max(len(k) for k, _ in fields)
            lines += [f"{pad}  {k:<{width}}  {v}" for k, v in fields]
        if s.table is not None:
            header, body = s.table
            widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]
            for row in [header, *body]:
                cells = [c.ljust(w) for c, w in zip(row, widths, strict=True)]
                lines.append((pad + "  " + "  ".join(cells)).rstrip())
        if s.note:
            lines.append(f"{pad}  ({s.note})")
    return "\n".join(lines)
