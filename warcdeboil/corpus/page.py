"""One page's text as the quality filters read it: its lines, paragraphs and words, each worked
out once, when a filter first asks, and shared by the filters that follow.

A *line* is a line of the text with the white space at its ends taken off; blank lines are not
lines (they end paragraphs). A *paragraph* is a run of lines between blank lines. The page's
*characters* are those of its lines and one line break between each two: trailing white space
and blank lines do not change any figure.
"""

from __future__ import annotations

import re
from functools import cached_property, lru_cache

import numpy as np

from .codes import WordCache
from .words import (
    ALPHABETIC,
    FLAG_BITS,
    LENGTH_BITS,
    MAX_LENGTH,
    PROPER,
    SPACED,
    word_id,
)

__all__ = ["PageText"]

_FLAGS = np.uint64((1 << FLAG_BITS) - 1)
_BLANK_LINES = re.compile("\n\n+")


class PageText:
    """A page's text and what the filters count in it.

    >>> page = PageText("A first line.  \\n\\nA second one\\n", WordCache())
    >>> page.lines, page.paragraphs, page.chars
    (['A first line.', 'A second one'], ['A first line.', 'A second one'], 26)
    """

    def __init__(self, text: str, cache: WordCache, language: str = "") -> None:
        self.text = text
        self.language = language
        self._cache = cache
        cache.next_text()

    @cached_property
    def _stripped(self) -> list[str]:
        """Every line of the text, blank ones too, without the white space at its ends."""
        return list(map(str.strip, self.text.splitlines()))

    @cached_property
    def lines(self) -> list[str]:
        return list(filter(None, self._stripped))

    @cached_property
    def paragraphs(self) -> list[str]:
        """Each paragraph's lines joined by line breaks: the lines joined by line breaks, cut
        where a blank line leaves two or more in a row (a stripped line holds none)."""
        joined = "\n".join(self._stripped).strip("\n")
        return _BLANK_LINES.split(joined) if joined else []

    @cached_property
    def chars(self) -> int:
        """Characters of the lines, with one line break between each two."""
        return sum(map(len, self.lines)) + max(len(self.lines) - 1, 0)

    @cached_property
    def codes(self) -> np.ndarray:
        """Each word's code (:func:`.words.word_code`), from a few passes over the text
        (:mod:`.codes`)."""
        return self._cache.codes(self.text)

    @property
    def word_count(self) -> int:
        """Words, marks standing alone included."""
        return len(self.codes)

    @cached_property
    def word_ids(self) -> np.ndarray:
        """Each word's id: the same word, the same id, within the page."""
        return self.codes >> np.uint64(LENGTH_BITS + FLAG_BITS)

    @cached_property
    def word_lengths(self) -> np.ndarray:
        return ((self.codes >> np.uint64(FLAG_BITS)) & np.uint64(MAX_LENGTH)).astype(np.int64)

    @cached_property
    def counts(self) -> tuple[int, int, int, int]:
        """Words with a letter; words proper (a letter or a digit); of those, words of scripts
        written with spaces, and their characters."""
        flags = (self.codes & _FLAGS).astype(np.uint8)
        spaced = (flags & (PROPER | SPACED)) == (PROPER | SPACED)
        return (int(np.count_nonzero(flags & ALPHABETIC)), int(np.count_nonzero(flags & PROPER)),
                int(np.count_nonzero(spaced)), int(self.word_lengths[spaced].sum()))

    def present(self, words: tuple[str, ...]) -> np.ndarray:
        """Which of ``words`` occur in the page."""
        wanted = _word_ids(words)
        if not self.word_count:
            return np.zeros(len(words), bool)
        ids = np.sort(self.word_ids)
        at = np.minimum(np.searchsorted(ids, wanted), len(ids) - 1)
        return ids[at] == wanted


@lru_cache(maxsize=64)
def _word_ids(words: tuple[str, ...]) -> np.ndarray:
    """The ids of a list of words (the filters' stop words: the same few lists on every
    page, hashed once)."""
    return np.array([word_id(word) for word in words], np.uint64)
