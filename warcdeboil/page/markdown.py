"""Content blocks as Markdown (CommonMark): headings, lists, quotes, code, tables, emphasis.

Link targets are not kept (the marked text holds link extents, not addresses), so link text is
plain text. Characters that Markdown would read as markup at the start of a line are escaped.

>>> from warcdeboil.page.content import split_blocks
>>> marked = ("\\ufdd6Title\\ufdd2Some \\ufddfbold\\ufddf text\\ufdd2"
...           "\\ufddbone\\ufdd2\\ufddbtwo\\ufdd2")
>>> print(render(split_blocks(marked)), end="")
## Title
<BLANKLINE>
Some **bold** text
<BLANKLINE>
- one
- two
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .content import KIND_CODE, KIND_ITEM, KIND_QUOTE, Block
from .dom import CELL, EMPHASIS, LINK_CLOSE, LINK_OPEN, STRONG

__all__ = ["render"]

_LINE_START = re.compile(r"^([#>+\-*=]|\d+[.)]\s)")
_SPECIAL = re.compile(r"([\\`*_\[\]<|])")


def _inline(marked: str) -> str:
    """A block's text with emphasis as Markdown, other marks dropped, markup escaped."""
    text = _SPECIAL.sub(r"\\\1", " ".join(marked.split()))
    text = text.replace(LINK_OPEN, "").replace(LINK_CLOSE, "")
    for mark, fence in ((STRONG, "**"), (EMPHASIS, "*")):
        if mark in text:
            text = _pair(text, mark, fence)
    text = " ".join(text.split())
    return _LINE_START.sub(r"\\\1", text)


def _pair(text: str, mark: str, fence: str) -> str:
    """Replace paired marks by the fence around non-empty text; drop unpaired or empty ones."""
    pieces = text.split(mark)
    out = [pieces[0]]
    for i in range(1, len(pieces), 2):
        inner = pieces[i].strip()
        out.append(f"{fence}{inner}{fence} " if inner else " ")
        if i + 1 < len(pieces):
            out.append(pieces[i + 1])
    return "".join(out)


def _cells(marked: str) -> list[str]:
    return [_inline(cell) for cell in marked.split(CELL) if cell.strip()]


def render(blocks: Iterable[Block]) -> str:
    """The blocks as one Markdown document."""
    lines: list[str] = []
    previous = -1  # kind of the previous block, -2 after a table row
    for block in blocks:
        if CELL in block.marked and block.kind == 0:
            row = _cells(block.marked)
            if previous != -2:
                if lines:
                    lines.append("")
                lines.append("| " + " | ".join(row) + " |")
                lines.append("|" + " --- |" * len(row))
            else:
                lines.append("| " + " | ".join(row) + " |")
            previous = -2
            continue
        text = _inline(block.marked)
        if not text:
            continue
        kind = block.kind
        if kind == KIND_ITEM:
            if previous != KIND_ITEM and lines:
                lines.append("")
            lines.append(f"- {text}")
        else:
            if lines:
                lines.append("")
            if 1 <= kind <= 6:
                lines.append("#" * kind + " " + text)
            elif kind == KIND_QUOTE:
                lines.append(f"> {text}")
            elif kind == KIND_CODE:
                lines.append("```")
                lines.append(" ".join(block.text.split()))
                lines.append("```")
            else:
                lines.append(text)
        previous = kind
    return "\n".join(lines) + ("\n" if lines else "")
