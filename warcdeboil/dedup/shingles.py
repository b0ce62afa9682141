"""Shingles: the set of overlapping word n-grams of a text, as 64-bit hashes.

Words are runs of characters between whitespace and ASCII punctuation, lower-cased: a copy of
a page whose links are gone (a print or syndicated copy) puts no space where the original's
link ended (``BUILD 2012.`` against ``BUILD 2012 .``, the text of ``<a>BUILD 2012</a>.`` with
its inline marks as spaces), and the punctuation must not make those two different words.
Scripts written without spaces between words
(Han, Hiragana, Katakana, Thai, Lao, Khmer, Myanmar) would make a whole sentence one "word", so
each of their characters is a word of its own: a shingle of such text is then a character
n-gram, which is what near-duplicate detection for those languages uses when no word-splitter is
at hand. Hangul is written with spaces and stays word-based.

>>> tokens("Hello, World! 你好，世界 BUILD 2012 .")
['hello', 'world', '你', '好', '，', '世', '界', 'build', '2012']
>>> len(shingle_hashes("one two three four five six"))  # two 5-word shingles
2
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

__all__ = ["SHINGLE_WORDS", "shingle_hashes", "shingle_hashes_batch", "tokens", "word_hashes"]

# Words per shingle. 5 is the usual choice for near-duplicate web pages (Broder's w-shingles use
# 4-10): short enough that one changed word spoils at most 5 shingles, long enough that two
# unrelated texts share almost none. For Chinese or Japanese a 5-character shingle is about two
# or three words.
SHINGLE_WORDS = 5

# One character of a script without word spaces, or a run of other word characters.
_UNSPACED = (
    "\u0e00-\u0eff"  # Thai, Lao
    "\u1000-\u109f"  # Myanmar
    "\u1780-\u17ff"  # Khmer
    "\u3040-\u30ff"  # Hiragana, Katakana
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # Han
    "\U00020000-\U0002fa1f"  # Han, supplementary planes
)
_HAS_UNSPACED = re.compile(f"[{_UNSPACED}]").search
# Within a whitespace-separated word: one unspaced character, or a run of anything else.
_PIECE = re.compile(f"[{_UNSPACED}]|[^{_UNSPACED}]+")
# The bytes that separate words: ASCII whitespace (str.split's Unicode spaces are rare in text
# that has been through the HTML parser, which turns &nbsp; into U+00A0: kept inside words) and
# ASCII punctuation (see the module docstring). A table look-up over the bytes, as free as the
# whitespace test alone; a regular expression over the text cost 175 µs a dragnet page.
_SEPARATORS = b" \t\n\r\x0b\x0c" + bytes(c for c in range(0x21, 0x7F) if not chr(c).isalnum())
_SPACE = np.zeros(256, dtype=bool)
_SPACE[list(_SEPARATORS)] = True
_SEPARATE_TABLE = dict.fromkeys(_SEPARATORS, " ")  # for str.translate (tokens only)
_SPACE_BYTES = _SPACE.tobytes()  # for bytes.translate: byte -> 1 (a separator) or 0
# The code points of _UNSPACED, first and last of each range (all of 3 or 4 UTF-8 bytes).
_UNSPACED_RANGES = np.array([(ord(low), ord(high)) for low, high in re.findall(
    "(.)-(.)", _UNSPACED)], dtype=np.int64)
# Texts up to 2**16 bytes (all but the longest pages) take the powers of the word hash from a
# table (see _powers): 2 MiB at most for all the tables.
_TABLE_BITS = 16
_WORD_BASE = np.uint64(0x100000001B3)  # odd, so invertible modulo 2**64 (FNV's prime)
_WORD_BASE_INVERSE = np.uint64(pow(0x100000001B3, -1, 2**64))
# Mixes the hashes of the words of a shingle by position: odd 64-bit constants (arithmetic wraps).
_MIX = np.array(
    [0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0xD6E8FEB86659FD93,
     0xFF51AFD7ED558CCD, 0xC4CEB9FE1A85EC53, 0x94D049BB133111EB, 0xBF58476D1CE4E5B9],
    dtype=np.uint64,
)


def tokens(text: str) -> list[str]:
    """The words of ``text``, lower-cased, separated by whitespace and ASCII punctuation (which
    is left out); a word with characters of an unspaced script is cut into those characters and
    the runs between (punctuation of those scripts, such as ``，``, is a word)."""
    words = text.lower().translate(_SEPARATE_TABLE).split()
    if text.isascii() or not _HAS_UNSPACED(text):
        return words
    return [piece for word in words
            for piece in (_PIECE.findall(word) if _HAS_UNSPACED(word) else (word,))]


def word_hashes(text: str) -> np.ndarray:
    """A 64-bit hash of each word of ``text`` (as :func:`tokens` splits it), in order.

    Vectorised over the UTF-8 bytes: a word's hash is the polynomial ``sum((byte+1) * M**j)``
    over its bytes (arithmetic modulo 2**64), then mixed. Words of unspaced scripts are first
    cut by :func:`tokens` and re-joined with spaces, which gives them the same hashes.
    """
    lowered = text.lower()
    data = np.frombuffer(lowered.encode("utf-8", "surrogatepass"), dtype=np.uint8)
    if _has_unspaced(data):
        lowered = " ".join(tokens(lowered))
        data = np.frombuffer(lowered.encode("utf-8", "surrogatepass"), dtype=np.uint8)
    return _hash_words(data)[0]


def _hash_words(data: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The hash of each word of UTF-8 ``data`` (lower-cased, unspaced scripts cut), and where
    each word starts.

    A word's hash does not depend on where it stands, so a long text is hashed in pieces of
    whole words of at most 2**:data:`_TABLE_BITS` bytes (a longer word is a piece of its own),
    each with the tables of powers: memory in proportion to the piece, not the text (a page of
    14 MB took 500 MB at once, for the same hashes)."""
    if len(data) <= 1 << _TABLE_BITS:
        return _hash_piece(data)
    starts = _word_starts(data)
    hashes: list[np.ndarray] = []
    begin = 0
    while begin < len(data):
        # The piece ends at the last word start within reach (past ``begin``), or the next one.
        end = begin + (1 << _TABLE_BITS)
        if end < len(data):
            at = int(np.searchsorted(starts, end, side="right")) - 1
            if at < 0 or starts[at] <= begin:
                at += 1
            end = int(starts[at]) if at < len(starts) else len(data)
        hashes.append(_hash_piece(data[begin:end])[0])
        begin = end
    return np.concatenate(hashes), starts


def _word_starts(data: np.ndarray) -> np.ndarray:
    """Where each word of UTF-8 ``data`` starts: a byte inside a word after a separator (or at
    the start)."""
    # By bytes.translate: _SPACE.take turns the bytes into 8-byte indices first.
    space = np.frombuffer(data.tobytes().translate(_SPACE_BYTES), dtype=np.bool_)
    starts = ~space
    starts[1:] &= space[:-1]
    return np.flatnonzero(starts)


def _hash_piece(data: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_hash_words` of ``data`` at once."""
    inside = ~_SPACE.take(data)
    # A word starts where a byte inside follows a space (or the text's start).
    starts_mask = inside.copy()
    starts_mask[1:] &= ~inside[:-1]
    starts = np.flatnonzero(starts_mask)
    if not len(starts):
        return np.empty(0, dtype=np.uint64), starts
    powers = _powers(len(data))
    # Every byte's term, spaces' zeroed: a sum from one word's start to the next word's is then
    # the word's alone (the gathers of the bytes inside words cost more than the extra terms).
    terms = data.astype(np.uint64)
    terms += np.uint64(1)
    terms *= powers[0][: len(data)]
    terms *= inside
    sums = np.add.reduceat(terms, starts)
    # Divide out M**(offset of the word's first byte): multiply by the inverse power.
    hashes = sums * powers[1][starts]
    return _avalanche(hashes), starts


def _has_unspaced(data: np.ndarray) -> bool:
    """Whether UTF-8 ``data`` holds a character of a script without word spaces
    (:data:`_UNSPACED`), as :data:`_HAS_UNSPACED` finds them in the text."""
    return bool(len(_unspaced_at(data)))


def _unspaced_at(data: np.ndarray) -> np.ndarray:
    """Where UTF-8 ``data`` holds a character of a script without word spaces: its code points
    decoded at the lead bytes of 3- and 4-byte sequences (the only ones those scripts use), 2**16
    lead bytes at a time (a page of Chinese has one every three bytes)."""
    leads = np.flatnonzero(data >= 0xE0)
    step = 1 << _TABLE_BITS
    if len(leads) <= step:
        return _unspaced_among(data, leads)
    return np.concatenate([_unspaced_among(data, leads[at:at + step])
                           for at in range(0, len(leads), step)])


def _unspaced_among(data: np.ndarray, leads: np.ndarray) -> np.ndarray:
    """The lead bytes ``leads`` of ``data`` whose characters are of :data:`_UNSPACED`."""
    if not len(leads):
        return leads
    lead = data[leads].astype(np.int64)
    three = lead < 0xF0
    first, second, third = leads, leads + 1, leads + 2
    points = np.where(
        three,
        (lead & 0x0F) << 12 | (data[second] & 0x3F).astype(np.int64) << 6
        | (data[third] & 0x3F),
        (lead & 0x07) << 18 | (data[second] & 0x3F).astype(np.int64) << 12
        | (data[third] & 0x3F).astype(np.int64) << 6
        | (data[np.minimum(first + 3, len(data) - 1)] & 0x3F),
    )
    return leads[np.any((points[:, None] >= _UNSPACED_RANGES[:, 0])
                        & (points[:, None] <= _UNSPACED_RANGES[:, 1]), axis=1)]


def _powers(length: int) -> tuple[np.ndarray, np.ndarray]:
    """M**i and M**-i modulo 2**64 for i < at least ``length``: for a text of at most
    2**:data:`_TABLE_BITS` bytes, read-only tables computed once per size class (their two
    cumulative products were a fifth of the cost of shingling a dragnet page)."""
    if length > 1 << _TABLE_BITS:
        return _compute_powers(length)
    return _power_table(max(length - 1, 1).bit_length())


@lru_cache(maxsize=_TABLE_BITS + 1)
def _power_table(bits: int) -> tuple[np.ndarray, np.ndarray]:
    forward, backward = _compute_powers(1 << bits)
    forward.flags.writeable = backward.flags.writeable = False
    return forward, backward


def _compute_powers(length: int) -> tuple[np.ndarray, np.ndarray]:
    """M**i and M**-i modulo 2**64, i < length (numpy's unsigned products wrap)."""
    ones = np.ones(length, dtype=np.uint64)
    forward = np.cumprod(np.concatenate(([np.uint64(1)], ones[1:] * _WORD_BASE)))
    backward = np.cumprod(np.concatenate(([np.uint64(1)], ones[1:] * _WORD_BASE_INVERSE)))
    return forward, backward


def _avalanche(values: np.ndarray) -> np.ndarray:
    """A bijective mix of 64-bit values (splitmix64's finaliser), in place."""
    values ^= values >> np.uint64(30)
    values *= np.uint64(0xBF58476D1CE4E5B9)
    values ^= values >> np.uint64(27)
    values *= np.uint64(0x94D049BB133111EB)
    values ^= values >> np.uint64(31)
    return values


def shingle_hashes(text: str, width: int = SHINGLE_WORDS) -> np.ndarray:
    """The 64-bit hashes of the ``width``-word shingles of ``text`` (uint64, in text order;
    a shingle that occurs twice is there twice: MinHash does not mind, ``np.unique`` gives the set).

    A text of fewer words than ``width`` is one shingle of all its words; an empty text has
    none. Hashes are stable across processes and machines.
    """
    if width < 1 or width > len(_MIX):
        raise ValueError(f"shingle width must be 1..{len(_MIX)}, not {width}")
    words = word_hashes(text)
    if not len(words):
        return words
    span = min(width, len(words))
    count = len(words) - span + 1
    mixed = words[:count] * _MIX[0]
    for position in range(1, span):
        mixed ^= words[position : position + count] * _MIX[position]
    # xor of products is order-sensitive (each position has its own multiplier); a final mix
    # spreads the bits so that the min-hashes downstream are uniform.
    return _avalanche(mixed)


def shingle_hashes_batch(texts: Sequence[str], width: int = SHINGLE_WORDS) -> list[np.ndarray]:
    """:func:`shingle_hashes` of each text, the same values, hashed together: the texts'
    bytes joined by a space (no word spans two texts), numpy's cost per call paid once for all
    (it was half the cost of shingling a dragnet page one at a time)."""
    if width < 1 or width > len(_MIX):
        raise ValueError(f"shingle width must be 1..{len(_MIX)}, not {width}")
    encoded = [text.lower().encode("utf-8", "surrogatepass") for text in texts]
    # Texts together up to the largest table of powers (computing larger ones for each batch
    # cost a third of its time).
    out: list[np.ndarray] = []
    start = size = 0
    for end, data in enumerate(encoded):
        if end > start and size + len(data) > 1 << _TABLE_BITS:
            out += _shingle_batch(texts[start:end], encoded[start:end], width)
            start, size = end, 0
        size += len(data) + 1
    if start < len(texts):
        out += _shingle_batch(texts[start:], encoded[start:], width)
    return out


def _shingle_batch(texts: Sequence[str], encoded: list[bytes], width: int) -> list[np.ndarray]:
    """:func:`shingle_hashes_batch` of texts whose lower-cased UTF-8 is ``encoded``."""
    lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
    begin = np.zeros(len(encoded), dtype=np.int64)
    np.cumsum(lengths[:-1] + 1, out=begin[1:])
    data = np.frombuffer(b" ".join(encoded), dtype=np.uint8)
    unspaced = _unspaced_at(data)
    if len(unspaced):  # those texts' words as tokens() cuts them, then joined again
        for n in np.unique(np.searchsorted(begin, unspaced, side="right") - 1).tolist():
            encoded[n] = " ".join(tokens(texts[n].lower())).encode("utf-8", "surrogatepass")
        lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
        np.cumsum(lengths[:-1] + 1, out=begin[1:])
        data = np.frombuffer(b" ".join(encoded), dtype=np.uint8)
    words, starts = _hash_words(data)
    counts = np.diff(np.searchsorted(starts, begin), append=len(starts))  # words a text
    firsts = np.cumsum(counts) - counts
    # Shingles of full width over all the words, kept where all their words are one text's.
    full = counts >= width
    made = np.where(full, counts - width + 1, 0)
    mixed = np.empty(0, dtype=np.uint64)
    if len(words) >= width and made.any():
        count = len(words) - width + 1
        mixed = words[:count] * _MIX[0]
        for position in range(1, width):
            mixed ^= words[position : position + count] * _MIX[position]
        ends = np.cumsum(made)
        mixed = _avalanche(mixed[np.repeat(firsts - (ends - made), made)
                                 + np.arange(int(ends[-1]))])
    out: list[np.ndarray] = []
    at = 0
    for total, first in zip(counts.tolist(), firsts.tolist(), strict=True):
        if total >= width:
            out.append(mixed[at : at + total - width + 1])
            at += total - width + 1
        elif total:  # fewer words than a shingle: one shingle of them all
            short = words[first : first + total]
            value = short[:1] * _MIX[0]
            for position in range(1, total):
                value ^= short[position : position + 1] * _MIX[position]
            out.append(_avalanche(value))
        else:
            out.append(np.empty(0, dtype=np.uint64))
    return out
