"""Charts as inline SVG: drawn by the browser from the page itself, nothing to fetch."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

__all__ = ["bar_chart", "share_bar"]

_ROW = 26  # pixels per bar
_LABEL = 190  # pixels for the labels left of the bars
_WIDTH = 820


def bar_chart(rows: Sequence[tuple[str, int, str, str]], title: str) -> str:
    """Horizontal bars: (label, value, colour, text after the bar) per row, scaled to the
    largest value."""
    if not rows:
        return ""
    top = max(value for _, value, _, _ in rows) or 1
    span = _WIDTH - _LABEL - 290  # room for the longest note after the bar
    height = _ROW * len(rows) + 6
    parts = [f'<svg class="chart" role="img" viewBox="0 0 {_WIDTH} {height}" '
             f'width="{_WIDTH}" height="{height}" xmlns="http://www.w3.org/2000/svg">'
             f"<title>{escape(title)}</title>"]
    for k, (label, value, colour, note) in enumerate(rows):
        y = 3 + k * _ROW
        width = max(1.0, span * value / top) if value else 0.0
        parts.append(
            f'<text x="{_LABEL - 8}" y="{y + 16}" text-anchor="end">{escape(label)}</text>'
            f'<rect x="{_LABEL}" y="{y + 3}" width="{width:.1f}" height="{_ROW - 8}" '
            f'fill="{colour}"><title>{escape(label)}: {escape(note)}</title></rect>'
            f'<text x="{_LABEL + width + 6:.1f}" y="{y + 16}">{escape(note)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def share_bar(parts: Sequence[tuple[str, int, str]], width: int = 220) -> str:
    """One bar split by share: (name, value, colour) per part; a name and share per part's
    tooltip."""
    total = sum(value for _, value, _ in parts)
    if not total:
        return ""
    out = [f'<svg class="share" viewBox="0 0 {width} 12" width="{width}" height="12" '
           'xmlns="http://www.w3.org/2000/svg">']
    x = 0.0
    for name, value, colour in parts:
        if not value:
            continue
        w = width * value / total
        out.append(f'<rect x="{x:.2f}" y="0" width="{w:.2f}" height="12" fill="{colour}">'
                   f"<title>{escape(name)}: {value / total:.0%}</title></rect>")
        x += w
    out.append("</svg>")
    return "".join(out)
