"""A text's units found on its code points with numpy, for scoring: the unigram rows that
``units.split_units`` and a model's dictionary of units give (``LanguageModel.unit_rows``), and
those of the character component's units (``chars.char_text``), without a Python string a unit.

Splitting a page into unit strings and looking each one up was most of what scoring it cost
(words: two thirds of ``line_log10_probs``; characters, a unit each: more than the n-gram
lookups of the character model). Here the text is one array of code points. Each code point is
looked up in tables (filled in as code points are first met, a Python call each): its kind (a
letter of a word, a unit alone, white space, the line break, or ``units.LINE``, which splitting
reads as a space but ``str.split`` does not) and its folded form (lower case, ASCII digits as
0). A word's unit is a run of word code points, or one code point alone; its key is a
polynomial hash of its folded code points mixed with its length, looked up among the same keys
of the model's vocabulary. The unit strings are never made, so neither is a wrong one: a text
whose folding is not one code point for one (a capital sigma, whose lower case depends on the
next letter; "İ", two code points lower-cased) is split into strings as before, and so is every
text of a model two of whose units' keys collide.

Knowing where each unit lies also gives a line's units with its words in reverse order (the
noise score's ``order`` signal) as a permutation of the same rows (:func:`reversed_rows`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

# The splitting rules themselves (units.py): what stands alone, the folding of digits.
from .chars import CAPITAL, SPACE
from .keyindex import KeyIndex
from .units import _DIGIT, _MARKS, _SIGMA, _UNSPACED, LINE, extend_keys

__all__ = ["CharUnits", "Found", "WordUnits", "code_points", "reversed_rows"]

# Kinds of code point.
WORD = 0  # part of a run of them: one unit
ALONE = 1  # a unit of its own (punctuation, symbols, a character of an unspaced script)
BLANK = 2  # white space (but the line break): between units and between words
BREAK = 3  # the line break
HOLE = 4  # units.LINE in the text: between units (split reads it as a space), within a word
COMPLEX = -1  # a folding that is not one code point (see the module's docstring)
_PLANE = 0x10000  # code points below this have tables; the others are looked up a text at a time
_ALONE = re.compile(f"[{_UNSPACED}{_MARKS}]")
# An odd multiplier (so invertible modulo 2**64) for the polynomial hash of a unit.
_BASE = 0x9E3779B97F4A7C15
_INVERSE = pow(_BASE, -1, 1 << 64)


def code_points(text: str) -> np.ndarray:
    """The code points of ``text`` (lone surrogates included, as the units keep them)."""
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), np.uint32)


def _kind(char: str) -> int:
    if char == "\n":
        return BREAK
    if char == LINE:
        return HOLE
    if char.isspace():
        return BLANK
    return ALONE if _ALONE.fullmatch(char) else WORD


def _fold(char: str, *, isolated: bool) -> int:
    """The code point ``char`` folds to, or COMPLEX. ``isolated``: as a unit alone (a capital
    sigma is then always "σ"); else within a word, where it depends on what follows."""
    low = _DIGIT.sub("0", char.lower())
    if len(low) != 1 or (char == _SIGMA and not isolated):
        return COMPLEX
    return ord(low)


class _Tables:
    """Per code point values, a column each (of ``dtypes``), in arrays for the Basic
    Multilingual Plane filled in as code points are met (``fill``: a Python call for each new
    one); the other planes' code points are looked up a text at a time. The first column's
    ``UNKNOWN`` marks a code point not yet met."""

    UNKNOWN = -128

    def __init__(self, fill: Callable[[int], tuple[int, ...]], dtypes: Sequence[type]) -> None:
        self._fill = fill
        self.columns: list[np.ndarray] = [np.zeros(_PLANE, dtype) for dtype in dtypes]
        self.columns[0][:] = self.UNKNOWN

    def lookup(self, points: np.ndarray) -> list[np.ndarray]:
        """Each column's values for ``points``."""
        if len(points) and int(points.max()) >= _PLANE:
            return self._astral(points)
        first = np.take(self.columns[0], points)
        unknown = first == self.UNKNOWN
        if unknown.any():
            self._learn(points[unknown])
            first = np.take(self.columns[0], points)
        return [first, *(np.take(column, points) for column in self.columns[1:])]

    def _astral(self, points: np.ndarray) -> list[np.ndarray]:
        astral = points >= _PLANE
        self._learn(points[~astral][np.take(self.columns[0], points[~astral]) == self.UNKNOWN])
        extra = np.unique(points[astral])
        found = np.array([self._fill(c) for c in extra.tolist()], np.int64).T
        index = points.astype(np.intp)
        index[astral] = _PLANE + np.searchsorted(extra, points[astral])
        return [np.take(np.concatenate([column, values.astype(column.dtype)]), index)
                for column, values in zip(self.columns, found, strict=True)]

    def _learn(self, points: np.ndarray) -> None:
        # The distinct ones by counting (the first text's are nearly all new: np.unique's hash
        # table took ten times as long).
        for point in np.flatnonzero(np.bincount(points)).tolist():
            for column, value in zip(self.columns, self._fill(point), strict=True):
                column[point] = value


def _polynomial_keys(folded: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The key of each unit ``folded[starts[i]:ends[i]]`` (code points): sum of (code point + 1)
    times BASE to its place in the unit, modulo 2**64, mixed with the unit's length (as n-gram
    keys are: ``units.extend_keys``)."""
    n = len(folded)
    powers = np.empty(n + 1, np.uint64)
    inverses = np.empty(n + 1, np.uint64)
    powers[0] = inverses[0] = 1
    if n:
        np.cumprod(np.full(n, _BASE, np.uint64), out=powers[1:])
        np.cumprod(np.full(n, _INVERSE, np.uint64), out=inverses[1:])
    sums = np.zeros(n + 1, np.uint64)
    np.cumsum((folded.astype(np.uint64) + np.uint64(1)) * powers[:-1], out=sums[1:])
    unshifted = (sums[ends] - sums[starts]) * inverses[starts]
    return extend_keys(unshifted, (ends - starts).astype(np.uint64))


@dataclass(frozen=True, slots=True)
class Found:
    """A text's units: the rows (``unit_rows(keep_empty=True)``'s: a boundary first, last and
    for each line break) and, for each row between the first and the last, its word (a number
    that grows along the text; line breaks are words of their own)."""

    rows: np.ndarray
    words: np.ndarray


class WordUnits:
    """The unigram rows of a text's units under a model whose units, by row, are the lines of
    ``vocabulary`` ("</s>" and "<unk>" among them: no text's unit is either), found on the code
    points; None where the strings' way must be taken."""

    def __init__(self, vocabulary: str, unknown: int, boundary: int) -> None:
        self._unknown = unknown
        self._boundary = boundary
        self._tables = _Tables(self._facts, (np.int8, np.int32))  # kind, fold within a word
        points = code_points(vocabulary)
        ends = np.flatnonzero(points == ord("\n"))
        starts = np.concatenate([[0], ends + 1]).astype(np.intp)
        ends = np.concatenate([ends, [len(points)]]).astype(np.intp)
        keys = _polynomial_keys(points, starts, ends)
        order = np.argsort(keys)
        self._keys = keys[order]
        self.usable = bool((self._keys[1:] != self._keys[:-1]).all())
        self._rows = order.astype(np.int64)
        self._index = KeyIndex(self._keys, pad=True)

    @staticmethod
    def _facts(point: int) -> tuple[int, int]:
        char = chr(point)
        kind = _kind(char)
        return kind, (_fold(char, isolated=False) if kind in (WORD, ALONE) else 0)

    def find(self, points: np.ndarray) -> Found | None:
        """The rows of the units of the text of ``points``, and their words; None when its
        folding is not one code point for one, or the vocabulary's keys collide."""
        if not self.usable:
            return None
        kind, fold = self._tables.lookup(points)
        if (fold == COMPLEX).any():
            return None
        word = kind == WORD
        single = (kind == ALONE) | (kind == BREAK)
        before = np.zeros(len(points), bool)  # the code point before is a word's too
        before[1:] = word[:-1]
        after = np.zeros(len(points), bool)
        after[:-1] = word[1:]
        starts = np.flatnonzero(single | (word & ~before))
        ends = np.flatnonzero(single | (word & ~after)) + 1
        rows = np.empty(len(starts) + 2, np.int64)
        rows[0] = rows[-1] = self._boundary
        if len(starts):
            at, found = self._index.rows(_polynomial_keys(fold, starts, ends))
            rows[1:-1] = np.where(found, np.take(self._rows, at, mode="clip"), self._unknown)
            rows[1:-1][np.take(kind, starts) == BREAK] = self._boundary
        # Words as str.split() finds them: runs of code points that are not white space.
        spaced = (kind == BLANK) | (kind == BREAK)
        opens = ~spaced
        opens[1:] &= spaced[:-1]
        opens |= kind == BREAK  # a line break is a word of its own
        words = np.cumsum(opens)[starts]
        return Found(rows, words)


def reversed_rows(found: Found) -> np.ndarray:
    """The rows of each line's words in reverse order (each word's units in their order; the
    line breaks where they were): what ``unit_rows`` gives of
    ``"\\n".join(" ".join(line.split()[::-1]) for line in text.split("\\n"))``."""
    middle = found.rows[1:-1]
    words = found.words
    n = len(middle)
    out = found.rows.copy()
    if not n:
        return out
    at = np.arange(n)
    breaks = middle == found.rows[0]
    # A line's units lie between two line breaks: [first, last] (empty when first > last).
    first_of_line = np.maximum.accumulate(np.where(breaks, at + 1, 0))
    last_of_line = np.minimum.accumulate(np.where(breaks, at - 1, n - 1)[::-1])[::-1]
    new_word = np.ones(n, bool)
    new_word[1:] = words[1:] != words[:-1]
    ends_word = np.ones(n, bool)
    ends_word[:-1] = new_word[1:]
    first_of_word = np.maximum.accumulate(np.where(new_word, at, 0))
    last_of_word = np.minimum.accumulate(np.where(ends_word, at, n - 1)[::-1])[::-1]
    place = first_of_line + (last_of_line - last_of_word) + (at - first_of_word)
    place[breaks] = at[breaks]
    out[1:-1][place] = middle
    return out


class CharUnits:
    """The unigram rows of ``chars.char_text(text)``'s units under a character model of
    ``vocabulary``, found on the code points of ``text``: a capital is two units (``CAPITAL``
    and the letter lower-cased), white space ``SPACE``, ``units.LINE`` none, every other code
    point one unit (folded); None where the strings' way must be taken."""

    # What a code point is: one unit, a capital (two), none, or not one code point folded.
    ONE, CAPITAL_LETTER, NONE, COMPLEX_FOLD = 1, 2, 0, -1

    def __init__(self, vocabulary: Sequence[str], unknown: int, boundary: int) -> None:
        self._index = {unit: row for row, unit in enumerate(vocabulary)
                       if unit not in ("</s>", "<unk>")}
        self._unknown = unknown
        self._boundary = boundary
        self._capital = self._row(CAPITAL)
        # What each code point is, and the row of its unit (of the letter, for a capital).
        self._tables = _Tables(self._facts, (np.int8, np.int32))

    def _row(self, unit: str) -> int:
        return self._index.get(unit, self._unknown)

    def _facts(self, point: int) -> tuple[int, int]:
        char = chr(point)
        kind = _kind(char)
        if kind == BREAK:
            return self.ONE, self._boundary
        if kind == HOLE:
            return self.NONE, 0
        if kind == BLANK:
            return self.ONE, self._row(SPACE)
        fold = _fold(char, isolated=True)
        if fold == COMPLEX:
            return self.COMPLEX_FOLD, 0
        return self.CAPITAL_LETTER if char.isupper() else self.ONE, self._row(chr(fold))

    def find(self, points: np.ndarray) -> np.ndarray | None:
        """``unit_rows(char_text(text), keep_empty=True)`` of the text of ``points`` (32-bit
        rows)."""
        what, row = self._tables.lookup(points)
        if (what < self.ONE).any():
            if (what == self.COMPLEX_FOLD).any():
                return None
            kept = what != self.NONE
            what, row = what[kept], row[kept]
        # Each capital's mark before its letter.
        middle = np.insert(row, np.flatnonzero(what == self.CAPITAL_LETTER), self._capital)
        rows = np.empty(len(middle) + 2, np.int32)
        rows[0] = rows[-1] = self._boundary
        rows[1:-1] = middle
        return rows
