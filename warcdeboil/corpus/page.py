"""One page's text as the quality filters read it: its lines, paragraphs and words, each worked
out once, when a filter first asks, and shared by the filters that follow.

A *line* is a line of the text with the white space at its ends taken off; blank lines are not
lines (they end paragraphs). A *paragraph* is a run of lines between blank lines. The page's
*characters* are those of its lines and one line break between each two: trailing white space
and blank lines do not change any figure.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from functools import lru_cache
from itertools import chain, repeat
from typing import Any, Generic, TypeVar

import numpy as np

from .codes import WordCache
from .words import (
    ALPHABETIC,
    FLAG_BITS,
    LENGTH_BITS,
    MAX_LENGTH,
    PROPER,
    SPACED,
    iter_words,
    split_chunk,
    word_id,
)

__all__ = ["PageText", "cached_property", "folded", "folded_phrases"]

_FLAGS = np.uint64((1 << FLAG_BITS) - 1)
_BLANK_LINES = re.compile("\n\n+")
_T = TypeVar("_T")


class cached_property(Generic[_T]):  # noqa: N801 (named as the functools one it stands for)
    """functools.cached_property without its lock (Python 3.11 takes one at every first read,
    which cost a page of the filters about 1 µs a figure): the value is computed at the first
    read and kept in the page's ``__dict__``, where later reads find it. A page is read by
    one thread."""

    def __init__(self, function: Callable[[Any], _T]) -> None:
        self.function = function
        self.name = function.__name__
        self.__doc__ = function.__doc__

    def __get__(self, page: Any, owner: type | None = None) -> _T:
        if page is None:
            return self  # type: ignore[return-value]
        value = page.__dict__[self.name] = self.function(page)
        return value


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
        # The compiled coder (warcdeboil.corpus._words) where the cache has one: it also
        # counts, and the repetition rules ask it for their n-grams.
        self.coder = cache.coder
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
    def line_chars(self) -> int:
        """Characters of the lines."""
        return sum(map(len, self.lines))

    @cached_property
    def chars(self) -> int:
        """Characters of the lines, with one line break between each two."""
        return self.line_chars + max(len(self.lines) - 1, 0)

    @cached_property
    def line_repeats(self) -> tuple[int, int]:
        """Lines that repeat an earlier line, and their characters (Gopher's and FineWeb's
        rules both ask)."""
        return _repeats(self.lines, self.line_chars)

    @cached_property
    def paragraph_repeats(self) -> tuple[int, int]:
        """Paragraphs that repeat an earlier paragraph, and their characters."""
        return _repeats(self.paragraphs, sum(map(len, self.paragraphs)))

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
        if self.coder is not None:
            return self.coder.counts(self.codes)
        flags = (self.codes & _FLAGS).astype(np.uint8)
        spaced = (flags & (PROPER | SPACED)) == (PROPER | SPACED)
        return (int(np.count_nonzero(flags & ALPHABETIC)), int(np.count_nonzero(flags & PROPER)),
                int(np.count_nonzero(spaced)), int(self.word_lengths[spaced].sum()))

    @cached_property
    def folded_text(self) -> bytes:
        """:func:`folded` of the text, made once for every phrase looked for."""
        return folded(self.text)

    def contains_folded(self, phrases: tuple[str, ...]) -> tuple[bool, ...]:
        """Which of ``phrases`` occur in the text, ASCII letters compared in any case."""
        text = self.folded_text
        return tuple(phrase in text for phrase in folded_phrases(phrases))

    def iter_words(self, text: str) -> Iterator[str]:
        """The words of ``text`` (:func:`.words.iter_words`), split as they are asked for; by
        the compiled coder where the cache has one."""
        if self.coder is None:
            return iter_words(text)
        return chain.from_iterable(map(self.coder.split, text.split(), repeat(split_chunk)))

    def present(self, words: tuple[str, ...]) -> np.ndarray:
        """Which of ``words`` occur in the page."""
        wanted = _word_ids(words)
        if self.coder is not None:
            return np.frombuffer(self.coder.present(self.codes, wanted), np.bool_)
        if not self.word_count:
            return np.zeros(len(words), bool)
        ids = np.sort(self.word_ids)
        at = np.minimum(np.searchsorted(ids, wanted), len(ids) - 1)
        return ids[at] == wanted


def folded(text: str) -> bytes:
    """The text's UTF-8 with ASCII letters in lower case: what phrases of ASCII are looked for
    in, in any case, at a fraction of the cost of ``str.lower``."""
    return text.encode("utf-8", "surrogatepass").lower()


@lru_cache(maxsize=64)
def folded_phrases(phrases: tuple[str, ...]) -> tuple[bytes, ...]:
    """:func:`folded` of each phrase (the rules' few lists, folded once)."""
    return tuple(map(folded, phrases))


def _repeats(items: list[str], chars: int) -> tuple[int, int]:
    """How many items repeat an earlier one, and their characters (of ``chars`` in all): all
    items but the first of each distinct one."""
    distinct = set(items)
    return len(items) - len(distinct), chars - sum(map(len, distinct))


@lru_cache(maxsize=64)
def _word_ids(words: tuple[str, ...]) -> np.ndarray:
    """The ids of a list of words (the filters' stop words: the same few lists on every
    page, hashed once)."""
    return np.array([word_id(word) for word in words], np.uint64)
