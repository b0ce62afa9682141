"""A page's word codes (:func:`.words.word_code`) in a few passes of numpy over its code points.

Most pieces of text between white space are a word of letters or a number (``the``, ``2009``),
alone or with a mark before or after it (``said.``, ``(2009)``, ``“Zürich”``): their codes are
worked out for all of a page's pieces at once, from the text as an array of code points. A
word's id is a hash that such passes can compute: the polynomial of its code points
(:func:`.words.word_hash`), read for every piece off one running sum of ``code point * B**-i``.
Every other piece (``U.S.``, ``dont``, ``well-known``, Chinese, a word with a combining accent)
is split one by one and kept in :class:`WordCache`, and the codes of both are put back in the
order of the text. ``tests/test_corpus_filters.py`` holds the passes to the pieces split one by
one, on every page of ``../shared/eval`` and on generated text.

Why by hand: no tokenizer library gives these words (spaCy's English rules, measured against
datatrove), and looking up every piece in the cache took most of the filters' CPU on long pages:
on cleaneval's content texts (739 pages, 1.76 million pieces) the passes take 0.20 s against
0.38 s for the lookups once the cache is warm, 0.44 s against 0.57 s from cold.

Where the C extension :mod:`warcdeboil.corpus._words` was built, it splits and codes every piece
by the rules of :mod:`.words` instead (:func:`compiled_coder`), but those of scripts written
without spaces, which it looks up in the same cache; it is used only when it gives the oracle's
codes on a probe text, and ``WARCDEBOIL_PURE_PYTHON`` turns it off, as it does the page walks.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any, NamedTuple

import numpy as np

from .words import (
    _ABBREVIATIONS,
    _INFORMAL,
    _LAST_MARKS,
    _SYMBOLS,
    _WHOLE,
    ALPHABETIC,
    FLAG_BITS,
    HASH_BASE,
    LENGTH_BITS,
    MAX_LENGTH,
    PREFIX_MARKS,
    PROPER,
    SPACED,
    SUFFIX_MARKS,
    _keeps_period,
    ascii_word_code,
    split_chunk,
    word_code,
    word_hash,
)

__all__ = ["CACHE_SIZE", "MAX_CHARS", "CodeTables", "LoadedCoder", "WordCache", "build_coder",
           "compiled_coder", "load_coder", "page_codes"]

# A text longer than this is coded piece by piece: the tables of powers would hold 16 bytes a
# character of the longest page for the rest of the run (16 MiB here).
MAX_CHARS = 1 << 20
_UINT64 = np.uint64
# Each character's weight, summed over a piece, counts its ASCII letters, other letters (of
# scripts written with spaces) and ASCII digits, each in a field of 21 bits (a piece is at
# most MAX_CHARS long).
_FIELD_BITS = 21
_FIELD = (1 << _FIELD_BITS) - 1
_ASCII_LETTER, _OTHER_LETTER, _DIGIT = 1, 1 << _FIELD_BITS, 1 << (2 * _FIELD_BITS)
_LAST_MARKS_TEXT = "".join(sorted(_LAST_MARKS))
_ID_MASK = _UINT64(~((1 << (LENGTH_BITS + FLAG_BITS)) - 1) & ((1 << 64) - 1))
_WORD_FLAGS = _UINT64(ALPHABETIC | PROPER | SPACED)
_NUMBER_FLAGS = _UINT64(PROPER | SPACED)
# The marks the passes split off the start and the end of a piece, at most one each: those
# that split_chunk always splits off there, whatever the piece's script (a hyphen or a period
# before a digit, or "'" before a letter in English, may stay: "-30", ".5", "n't").
OPENING = "\"'([“‘«„‚‹¿¡"
CLOSING = _LAST_MARKS_TEXT + "'”’»›…"
_ALONE_SPLIT = _UINT64(1)  # no word's code: its length is 0
# A table of 2**18 bits marks the hashes of words split otherwise, checked exactly on a hit.
_SUSPECT_BITS = 18
_SUSPECT_MASK = _UINT64((1 << _SUSPECT_BITS) - 1)


def _mix(h: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser over an array (as :func:`.words.word_hash` ends)."""
    h = h ^ (h >> _UINT64(30))
    h *= _UINT64(0xBF58476D1CE4E5B9)
    h ^= h >> _UINT64(27)
    h *= _UINT64(0x94D049BB133111EB)
    return h ^ (h >> _UINT64(31))


def _case_forms(word: str) -> list[str]:
    """Every way to write an ASCII word in upper and lower case."""
    forms = [""]
    for char in word:
        forms = [form + case for form in forms for case in {char.lower(), char.upper()}]
    return forms


class CodeTables:
    """What the passes look up, built once per cache: each character's white space and letter
    weights, the powers of the hash's base, the marks' codes, and the words whose hash sends a
    piece to be split one by one (English contractions without their apostrophe in any case,
    "cannot", the abbreviations that keep their period)."""

    def __init__(self) -> None:
        chars = "".join(map(chr, range(0x10000)))
        space = np.frombuffer(bytes(map(str.isspace, chars)), np.bool_)
        alpha = np.frombuffer(bytes(map(str.isalpha, chars)), np.bool_).copy()
        for start, end in _unspaced_ranges():
            alpha[start:end] = False
        weight = np.where(alpha, _OTHER_LETTER, 0).astype(np.int64)
        for letter in range(ord("A"), ord("Z") + 1):
            weight[letter] = weight[letter + 32] = _ASCII_LETTER
        weight[ord("0"):ord("9") + 1] = _DIGIT
        # 0xFFFF stands for every character above the BMP (the code points are clipped to it):
        # neither white space nor a letter, so the piece is split one by one.
        self.space = space
        self.weight = weight
        # The marks split off a word's edges that the passes split (each a word of its own).
        self.mark_codes = np.zeros(0x10000, np.uint64)
        for mark in OPENING + CLOSING:
            self.mark_codes[ord(mark)] = word_code(mark)
        self.opening = np.zeros(0x10000, np.bool_)
        self.opening[[ord(mark) for mark in OPENING]] = True
        self.closing = np.zeros(0x10000, np.bool_)
        self.closing[[ord(mark) for mark in CLOSING]] = True
        suspects = {form for word in _INFORMAL for form in _case_forms(word)}
        suspects |= {word for word in _WHOLE if word.isalpha()} | set(_ABBREVIATIONS)
        hashes = [word_hash(word) for word in suspects]
        self.suspect_hashes = np.array(sorted(hashes), np.uint64)
        self.suspect = np.zeros(1 << _SUSPECT_BITS, np.bool_)
        self.suspect[[h & ((1 << _SUSPECT_BITS) - 1) for h in hashes]] = True
        # A character standing alone -> its code when split_chunk keeps it whole (0: unknown
        # yet, or split otherwise: _ALONE_SPLIT).
        self._alone = np.zeros(0x10000, np.uint64)
        self._powers = np.ones(1, np.uint64)
        self._inverse_powers = np.ones(1, np.uint64)

    def alone_codes(self, chars: np.ndarray) -> np.ndarray:
        """The code of each character as a piece of its own, 0 where split_chunk would not give
        it alone (a character of a script written without spaces may be folded)."""
        codes = self._alone[chars]
        for char in set(chars[codes == 0].tolist()):
            piece = chr(char)
            whole = char != 0xFFFF and split_chunk(piece) == (piece,)
            self._alone[char] = word_code(piece) if whole else _ALONE_SPLIT
        if not codes.all():
            codes = self._alone[chars]
        return np.where(codes == _ALONE_SPLIT, _UINT64(0), codes)

    def powers(self, size: int) -> tuple[np.ndarray, np.ndarray]:
        """``B**i`` and ``B**-i`` (mod 2**64) for i < size, grown by doubling."""
        if len(self._powers) < size:
            grown = 1 << (size - 1).bit_length()
            self._powers = _running_powers(HASH_BASE, grown)
            self._inverse_powers = _running_powers(pow(HASH_BASE, -1, 1 << 64), grown)
        return self._powers, self._inverse_powers


def _running_powers(base: int, size: int) -> np.ndarray:
    """base**0 .. base**(size-1), each mod 2**64."""
    powers = np.full(size, base, np.uint64)
    powers[0] = 1
    return np.cumprod(powers, out=powers)  # unsigned products wrap: mod 2**64


def _unspaced_ranges() -> list[tuple[int, int]]:
    """The ranges of :data:`~warcdeboil.lm.units.UNSPACED` below 0x10000, as (start, end)."""
    from ..lm.units import UNSPACED

    ranges = []
    i = 0
    while i < len(UNSPACED):
        if i + 2 < len(UNSPACED) and UNSPACED[i + 1] == "-":
            ranges.append((ord(UNSPACED[i]), ord(UNSPACED[i + 2]) + 1))
            i += 3
        else:
            ranges.append((ord(UNSPACED[i]), ord(UNSPACED[i]) + 1))
            i += 1
    return ranges


def page_codes(text: str, tables: CodeTables,
               pieces: Mapping[str, bytes]) -> np.ndarray:
    """The codes of the words of ``text`` (:func:`.words.word_code`) as one ``uint64`` array.

    The passes code the pieces of two forms: one character standing alone (``—``), and a
    *body*, with at most one mark of :data:`OPENING` before it and one of :data:`CLOSING` after
    it (``said.``, ``(2009)``, ``“Zürich”``), where the body is a word of letters of a script
    written with spaces, or a number of ASCII digits. The other pieces are looked up in ``pieces``
    (the cache's: piece -> its words' codes)."""
    lookup = pieces.__getitem__
    points = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), np.uint32)
    size = len(points)
    clipped = np.minimum(points, 0xFFFF)
    in_piece = ~tables.space[clipped]
    edges = np.diff(in_piece.view(np.int8), prepend=np.int8(0), append=np.int8(0))
    starts = np.flatnonzero(edges == 1)
    ends = np.flatnonzero(edges == -1)
    if not len(starts):
        return np.zeros(0, np.uint64)
    lengths = ends - starts
    longer = lengths > 1
    first, last = clipped[starts], clipped[ends - 1]
    opened = tables.opening[first] & longer
    closed = tables.closing[last] & (lengths > 1 + opened)
    body_starts = starts + opened
    body_ends = ends - closed
    body_lengths = body_ends - body_starts
    sums = np.zeros(size + 1, np.int64)
    np.cumsum(tables.weight[clipped], out=sums[1:])
    weights = sums[ends] - sums[starts]  # the marks weigh nothing: the body's weights
    ascii_letters = weights & _FIELD
    letters = (ascii_letters + ((weights >> _FIELD_BITS) & _FIELD)) == body_lengths
    number = (weights >> (2 * _FIELD_BITS)) == body_lengths
    powers, inverse = tables.powers(size)
    hash_sums = np.zeros(size + 1, np.uint64)
    np.cumsum(points * inverse[:size], out=hash_sums[1:])
    hashes = _mix((hash_sums[body_ends] - hash_sums[body_starts]) * powers[body_ends - 1])
    simple = letters | number
    # Words split otherwise (see CodeTables), and initials ("J."): split one by one.
    candidates = np.flatnonzero(tables.suspect[(hashes & _SUSPECT_MASK).astype(np.intp)])
    if len(candidates):
        suspects = tables.suspect_hashes
        hits = hashes[candidates]
        at = np.minimum(np.searchsorted(suspects, hits), len(suspects) - 1)
        simple[candidates[suspects[at] == hits]] = False
    simple &= ~((body_lengths == 1) & (last == ord(".")) & closed & (ascii_letters == 1))
    # A character standing alone that is not a letter or a digit: its code from the table.
    alone = np.flatnonzero(~longer & ~simple)
    alone_codes = tables.alone_codes(last[alone])
    found = alone_codes != 0
    counts = np.where(simple, 1 + opened + closed, 0)
    counts[alone] = found
    others = np.flatnonzero(counts == 0)
    entries = [lookup(text[start:end]) for start, end in
               zip(starts[others].tolist(), ends[others].tolist(), strict=True)]
    counts[others] = np.fromiter(map(len, entries), np.int64, len(entries)) >> 3
    at = np.zeros(len(counts) + 1, np.int64)
    np.cumsum(counts, out=at[1:])
    codes = np.empty(int(at[-1]), np.uint64)
    places = at[:-1]
    body = places[simple] + opened[simple]
    codes[body] = ((hashes[simple] & _ID_MASK)
                   | np.minimum(body_lengths[simple], MAX_LENGTH).astype(np.uint64)
                   << _UINT64(FLAG_BITS)
                   | np.where(letters[simple], _WORD_FLAGS, _NUMBER_FLAGS))
    with_opening = simple & opened
    codes[places[with_opening]] = tables.mark_codes[first[with_opening]]
    with_closing = simple & closed
    codes[body[closed[simple]] + 1] = tables.mark_codes[last[with_closing]]
    codes[places[alone[found]]] = alone_codes[found]
    if entries:
        other_counts = counts[others]
        offsets = np.repeat(places[others] - (np.cumsum(other_counts) - other_counts),
                            other_counts)
        codes[offsets + np.arange(len(offsets))] = np.frombuffer(b"".join(entries), np.uint64)
    return codes


class _Codes(dict[str, bytes]):
    """Word -> its code as 8 bytes, worked out when first asked for."""

    def __missing__(self, word: str) -> bytes:
        code = self[word] = word_code(word).to_bytes(8, sys.byteorder)
        return code


class _Generation(dict[str, bytes]):
    """Pieces split lately, each to its words' codes as 8 bytes a word; a piece missing here is
    taken from the generation before, or split (its words' codes from ``codes``, shared by the
    generations). Only the codes are kept, not the words: the filters read codes, and a lookup
    that touches two objects (the key and its bytes) stays in the processor's caches far more
    often than one that touches four."""

    def __init__(self, older: dict[str, bytes], codes: _Codes) -> None:
        super().__init__()
        self.older = older
        self.codes = codes

    def __missing__(self, chunk: str) -> bytes:
        entry = self.older.get(chunk)
        if entry is None:
            if not chunk.isascii():
                entry = b"".join(map(self.codes.__getitem__, split_chunk(chunk)))
            elif chunk.isalpha() and chunk.lower() not in _INFORMAL and chunk not in _WHOLE:
                # One word of ASCII letters (split_chunk's and word_code's answer for it,
                # without their calls).
                entry = ascii_word_code(chunk)
            elif (mark := chunk[-1]) in _LAST_MARKS and (word := chunk[:-1]).isalpha() \
                    and word.lower() not in _INFORMAL and word not in _WHOLE \
                    and (mark != "." or not _keeps_period(chunk)):
                # Such a word and a mark after it (split_chunk's first answer for ASCII).
                entry = ascii_word_code(word) + self.codes[mark]
            else:
                entry = b"".join(map(self.codes.__getitem__, split_chunk(chunk)))
        self[chunk] = entry
        return entry


# Pieces a generation holds. Two generations at most, with their words' codes: about 80 MiB
# at 2**17 when each piece also kept its words, measured on the texts of ../shared/eval in one
# stream (6,000 pages), where 2**16 took 47 MiB and 25 % more CPU (pieces seen again are split
# again), 2**15 27 MiB and 40 % more.
CACHE_SIZE = 1 << 17


class LoadedCoder(NamedTuple):
    """The compiled coder this process uses (None: the numpy passes), and the one line that
    says why."""

    coder: Any
    status: str


# The letters Python's case-insensitive matching pairs with an ASCII letter (İ, ı, ſ and the
# Kelvin sign: re.match("[a-z]", c, re.I) holds for no other character above ASCII); a piece
# holding one is split in Python, where _SUFFIX's and _ADDRESS's patterns read it.
CASE_FOLDS_TO_ASCII = "\u0130\u0131\u017f\u212a"


def _merged(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """(first, last) ranges of code points, sorted and merged where they touch."""
    merged: list[tuple[int, int]] = []
    for first, last in sorted(pairs):
        if merged and first <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(last, merged[-1][1]))
        else:
            merged.append((first, last))
    return merged


def _class_ranges(marks: str, ranges: str) -> list[tuple[int, int]]:
    """A character class as (first, last) pairs: ``marks`` each standing for itself ("-" too),
    and ``ranges`` read as a class reads them ("a-c" is a, b and c)."""
    pairs = [(ord(a), ord(b or a)) for a, _, b in re.findall(r"(.)(-(.))?", ranges, re.DOTALL)]
    return _merged([(ord(mark), ord(mark)) for mark in marks] + pairs)


def build_coder() -> Any:
    """A compiled coder with the tables of :mod:`.words` (ImportError where the extension
    was not built)."""
    # by name: the extension is no module of the source tree, and is imported only here
    words_extension = importlib.import_module("warcdeboil.corpus._words")
    deferred = [(start, end - 1) for start, end in _unspaced_ranges()]
    deferred += [(ord(c), ord(c)) for c in CASE_FOLDS_TO_ASCII]
    return words_extension.Coder(
        abbreviations=sorted(_ABBREVIATIONS), informal=_INFORMAL, whole=_WHOLE,
        last_marks=_LAST_MARKS_TEXT, prefix=_class_ranges(PREFIX_MARKS, _SYMBOLS),
        suffix=_class_ranges(SUFFIX_MARKS, _SYMBOLS), deferred=_merged(deferred))


# A text with a piece of every form the rules tell apart: the probe a compiled coder must code
# as the oracle does before a run uses it.
PROBE = ("The (well-known) U.S. firm's C.E.O., Mr. Smith, said: \"don't\" -- dont...  5km, "
         "1990-2000; end.The e.g. J. [edit] https://example.com/a www.x.org a.b@c.de "
         "example.com/path «Москва», Zürich’s naïve—test “quoted.” x:Y a,b 3^2 :) cannot "
         "北京欢迎你。 ſtraße Ké 😀word ¿Qué? ﬁne ²3 a_b ...x -30 .5 Ph.D. Jan. 16GB")


def load_coder(build: Callable[[], Any] = build_coder) -> LoadedCoder:
    """The compiled coder where it was built (``build``) and gives the oracle's codes on
    :data:`PROBE`; else None, with the reason."""
    from warcdeboil.page.walker import PURE_PYTHON

    if os.environ.get(PURE_PYTHON, "") not in ("", "0"):
        return LoadedCoder(None, f"word codes in Python ({PURE_PYTHON} is set)")
    try:
        coder = build()
    except ImportError:
        return LoadedCoder(None, "word codes in Python (the C extension was not built)")
    except (ValueError, TypeError) as error:  # tables of words.py it cannot hold
        return LoadedCoder(None, f"word codes in Python (the C extension refused the tables: "
                                 f"{error})")
    oracle = WordCache(coder=None)
    compiled = np.frombuffer(coder.codes(PROBE, _Generation({}, _Codes())), np.uint64)
    if not np.array_equal(compiled, oracle.piece_codes(PROBE)):
        return LoadedCoder(None, "word codes in Python (the C extension's answer differs)")
    return LoadedCoder(coder, "word codes in C (warcdeboil.corpus._words)")


@cache
def compiled_coder() -> LoadedCoder:
    """:func:`load_coder`'s answer, once a process."""
    return load_coder()


class WordCache:
    """The codes of a page's words (:func:`page_codes`, or the compiled coder's), and each
    piece of text that is not one plain word split once: most such pieces of a page ("(the",
    "U.S.") were seen on earlier pages, and a lookup costs a fraction of a split. Bounded: when
    the current generation holds ``CACHE_SIZE`` pieces, a new one starts, and the pieces the
    new one asks for again move over from the old one, which goes at the next turn.

    ``coder``: the compiled coder to use, None for the numpy passes; by default the one
    :func:`compiled_coder` chooses.
    """

    def __init__(self, coder: Any = ...) -> None:
        self._pieces = _Generation({}, _Codes())
        self._tables: CodeTables | None = None
        self._coder = compiled_coder().coder if coder is ... else coder

    def next_text(self) -> None:
        """Called before each text: a new generation starts there when this one is full (and
        the codes of words start again)."""
        if len(self._pieces) >= CACHE_SIZE:
            self._pieces.older = {}
            self._pieces = _Generation(self._pieces, _Codes())

    @property
    def coder(self) -> Any:
        """The compiled coder this cache codes with (None: the numpy passes); the filters ask
        it for their counts too."""
        return self._coder

    @property
    def pieces(self) -> dict[str, bytes]:
        """Piece -> its words' codes (split when first asked for)."""
        return self._pieces

    def codes(self, text: str) -> np.ndarray:
        """The codes of the words of ``text``."""
        if self._coder is not None:
            return np.frombuffer(self._coder.codes(text, self._pieces), np.uint64)
        if len(text) > MAX_CHARS:
            return self.piece_codes(text)
        if self._tables is None:
            self._tables = CodeTables()
        return page_codes(text, self._tables, self._pieces)

    def piece_codes(self, text: str) -> np.ndarray:
        """The same codes, every piece looked up in the cache (the passes' oracle)."""
        return np.frombuffer(b"".join(map(self._pieces.__getitem__, text.split())), np.uint64)
