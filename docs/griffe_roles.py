"""The API reference's docstrings as Markdown: roles become links, doctests code.

The docstrings of onnx-arrow are numpydoc, read by ``help()`` and by the docs site
alike.  They name other objects with Sphinx roles (``:func:`to_arrow```), which
mkdocstrings prints as they are, and a few show doctests outside an Examples
section, which Markdown reads as nested quotes.  This Griffe extension, loaded by
``mkdocs.yml``, rewrites each docstring once the package is loaded:

* a role whose target the reference documents becomes a cross-reference,
  ``[`to_arrow`][onnx_arrow.to_arrow]``, that mkdocs-autorefs turns into a link
  (and ``mkdocs build --strict`` fails on if it does not resolve); any other role
  becomes plain code;
* a doctest outside an Examples section becomes a ``pycon`` code block, or, after
  another section (Raises ...), the start of an Examples section.

``tests/test_site.py`` checks that no role and no doctest prompt is left in the
built pages.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import griffe

#: The page whose ``::: module`` lines say which modules the reference renders.
API_PAGE = Path(__file__).parent / "api.md"
ROLE = re.compile(r":(?:py:)?(?:func|class|data|meth|mod|attr|exc|obj|const):`([^`]+)`")
_HEADING = re.compile(r"^-{3,}$")


def documented_modules() -> list[str]:
    """The modules ``api.md`` renders, in page order."""
    text = API_PAGE.read_text(encoding="utf-8")
    return re.findall(r"^::: (\S+)", text, re.MULTILINE)


class SphinxRolesToMarkdown(griffe.Extension):
    """Rewrite Sphinx roles and stray doctests in every docstring of the package."""

    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **_: Any) -> None:
        collection = loader.modules_collection
        rendered = _rendered(
            collection, [m for m in documented_modules() if m.split(".")[0] == pkg.name]
        )
        for obj in _walk(pkg):
            if obj.docstring is not None:
                text = _fence_doctests(obj.docstring.value)
                obj.docstring.value = ROLE.sub(
                    lambda m, o=obj: _reference(m.group(1), o, collection, rendered), text
                )


def _walk(obj: griffe.Object) -> Any:
    yield obj
    for member in obj.members.values():
        if not member.is_alias:
            yield from _walk(member)


def _rendered(collection: Any, modules: list[str]) -> dict[str, str]:
    """Canonical path -> the path under which the reference renders the object."""
    out: dict[str, str] = {}
    for path in modules:
        module = collection[path]
        out.setdefault(module.canonical_path, path)
        exports = set(module.exports or ())
        for name, member in module.members.items():
            if name not in exports and (member.is_alias or name.startswith("_")):
                continue
            target = _target(member)
            if target is None or not target.has_docstring:  # rendered only with one
                continue
            out.setdefault(target.canonical_path, f"{path}.{name}")
            if target.is_class:
                for sub, child in target.members.items():
                    child_target = _target(child)
                    if sub.startswith("_") or child_target is None:
                        continue
                    if child_target.has_docstring:
                        out.setdefault(f"{target.canonical_path}.{sub}", f"{path}.{name}.{sub}")
                        out.setdefault(child_target.canonical_path, f"{path}.{name}.{sub}")
    return out


def _target(member: Any) -> Any:
    try:
        return member.final_target if member.is_alias else member
    except (griffe.AliasResolutionError, griffe.CyclicAliasError):
        return None


def _reference(text: str, obj: griffe.Object, collection: Any, rendered: dict[str, str]) -> str:
    """A role's Markdown: a cross-reference where the reference has its target."""
    shown, _, explicit = text.partition(" <")
    if explicit:
        target = explicit.rstrip(">")
    else:
        target = shown.lstrip("~")
        if shown.startswith("~"):
            shown = target.rsplit(".", 1)[-1]
    target = target.lstrip(".")
    scopes = [obj.path]
    parent = obj.parent
    while parent is not None:
        scopes.append(parent.path)
        parent = parent.parent
    for candidate in [target, *(f"{scope}.{target}" for scope in scopes)]:
        try:
            found = collection[candidate]
        except KeyError:
            continue
        resolved = _target(found)
        if resolved is not None and resolved.canonical_path in rendered:
            return f"[`{shown}`][{rendered[resolved.canonical_path]}]"
    return f"`{shown}`"


def _fence_doctests(text: str) -> str:
    """Doctest blocks outside an Examples section as ``pycon`` code blocks."""
    lines = text.splitlines()
    out: list[str] = []
    section = ""
    i = 0
    while i < len(lines):
        line = lines[i]
        if i + 1 < len(lines) and _HEADING.match(lines[i + 1].strip()) and line.strip():
            section = line.strip()
        if line.startswith(">>>") and section not in ("", "Examples"):
            # after a Raises (or other) section, unindented: the docstring's examples
            out += ["Examples", "--------"]
            section = "Examples"
        if line.lstrip().startswith(">>>") and section != "Examples":
            indent = line[: len(line) - len(line.lstrip())]
            block: list[str] = []
            while i < len(lines) and lines[i].strip():
                block.append(lines[i])
                i += 1
            out += [f"{indent}```pycon", *block, f"{indent}```"]
            continue
        out.append(line)
        i += 1
    return "\n".join(out)
