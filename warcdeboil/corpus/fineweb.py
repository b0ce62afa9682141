"""FineWeb's own filters: Penedo et al. 2024, "The FineWeb Datasets: Decanting the Web for the
Finest Text Data at Scale", section 3.6, and the filter FineWeb was built with (datatrove's
``FineWebQualityFilter``), which adds a fourth rule and settles a figure the paper gives twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from operator import itemgetter

from .page import PageText
from .words import SENTENCE_TERMINALS

__all__ = ["FineWebQuality", "fineweb_quality"]


@dataclass(frozen=True)
class FineWebQuality:
    """FineWeb's parameters.

    A page is flagged when at most ``min_line_punct_ratio`` of its lines end in one of
    ``end_marks`` (reason ``line_punct_ratio``); when at least ``max_short_line_ratio`` of its
    lines are shorter than ``short_line_length`` characters (``short_line_ratio``); when lines
    that repeat an earlier line hold at least ``max_char_dup_ratio`` of its characters
    (``char_dup_ratio``; section 3.6 says 0.1, the paper's appendix E and the code FineWeb was
    built with 0.01); when it has more than ``max_newlines_per_word`` line breaks a word
    (``list_ratio``; not in the paper, in FineWeb's code). A page without text is ``empty``.
    ``end_marks`` are the marks that end a sentence in any script (Unicode's Sentence_Terminal).
    """

    end_marks: str = SENTENCE_TERMINALS
    min_line_punct_ratio: float = 0.12
    short_line_length: int = 30
    max_short_line_ratio: float = 0.67
    max_char_dup_ratio: float = 0.01
    max_newlines_per_word: float = 0.3


@lru_cache(maxsize=16)
def _marks(end_marks: str) -> frozenset[str]:
    """The end marks as a set (made once, not a page)."""
    return frozenset(end_marks)


def fineweb_quality(page: PageText, rules: FineWebQuality) -> list[str]:
    """Why FineWeb's filters would drop the page (no reason: it keeps it)."""
    lines = page.lines
    if not lines:
        return ["empty"]
    reasons = []
    marks = _marks(rules.end_marks)
    ended = sum(map(marks.__contains__, map(itemgetter(-1), lines)))
    if ended / len(lines) <= rules.min_line_punct_ratio:
        reasons.append("line_punct_ratio")
    # Lines shorter than short_line_length: short_line_length > len(line).
    short = sum(map(rules.short_line_length.__gt__, map(len, lines)))
    if short / len(lines) >= rules.max_short_line_ratio:
        reasons.append("short_line_ratio")
    # Characters of the lines that repeat an earlier one: all but each distinct line's first.
    if page.line_repeats[1] / page.line_chars >= rules.max_char_dup_ratio:
        reasons.append("char_dup_ratio")
    if len(lines) - 1 > rules.max_newlines_per_word * page.word_count:
        reasons.append("list_ratio")
    return reasons
