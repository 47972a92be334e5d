"""The display model: what every view describes (titled sections of facts, tables and
pictures) and both renderers, HTML and text, read."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Picture", "Section"]


@dataclass
class Picture:
    """A PNG picture of a value, with its caption, size and legend."""

    png: bytes
    caption: str
    width: int
    height: int
    kind: str = "heatmap"
    #: A heatmap's colour scale: its lowest and highest finite value.
    scale: tuple[str, str] | None = None
    #: What the scale is shared with, said in the legend: ``one scale for old and new``.
    scale_note: str | None = None
    #: The colours off the scale the picture shows: (label, "#rrggbb").
    keys: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class Section:
    """One titled block of facts; :func:`html` and :func:`text` both render it."""

    title: str
    fields: list[tuple[str, str]] = field(default_factory=list)
    table: tuple[list[str], list[list[str]]] | None = None
    picture: Picture | None = None
    note: str | None = None
    level: int = 0
    #: Pictures shown side by side (a diff's old, new and difference), each captioned.
    pictures: list[Picture] = field(default_factory=list)
