"""Text to units, units to 64-bit ids, and ids to n-gram keys: what training and scoring share.

A unit is a word where the script separates words with spaces, and a single character where it
does not (Chinese, Japanese, Thai, Lao, Khmer, Myanmar: no segmenter is needed offline, and
character n-grams are what Chinese and Japanese models without a dictionary use). Punctuation
marks are units of their own, so "Home | News | Sport" and "x7#k@q" read as what they are.
Text is lower-cased and every ASCII digit read as 0 (as CCNet does): a price or a date is not a new
word. Each line is a sentence: ``BOUNDARY`` stands for the line break, ``</s>`` after a line and
``<s>`` before the next.

>>> units("Le café coûte 3,50 €.")
['le', 'café', 'coûte', '0', ',', '00', '€', '.']
>>> units("北京欢迎你 ok")
['北', '京', '欢', '迎', '你', 'ok']
"""

from __future__ import annotations

import re
from collections import defaultdict
from itertools import count, repeat

import numpy as np
import xxhash

__all__ = ["BOUNDARY", "LINE", "UNK", "UNSPACED", "distinct_ids", "extend_keys", "folded",
           "folded_numbers", "marks", "numbered_units", "split_units", "token_id", "token_ids",
           "unfolded_units", "units"]

# Scripts written without spaces between words: one unit a character.
_UNSPACED = ("\u0e00-\u0eff"      # Thai, Lao
             "\u1000-\u109f"      # Myanmar
             "\u1780-\u17ff"      # Khmer
             "\u3040-\u30ff"      # Hiragana, Katakana
             "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # Han
             "\uff66-\uff9f")     # half-width Katakana
# The same ranges as a character class's body, for other modules that count by script
# (warcdeboil.corpus counts words as the model does).
UNSPACED = _UNSPACED
# Punctuation and symbols that stand alone: ASCII's, general punctuation, CJK and full-width ones.
_MARKS = ("!-/:-@\\[-`{-~\u00a1-\u00bf\u00d7\u00f7\u2000-\u206f\u20a0-\u20cf\u2190-\u23ff"
          "\u2500-\u27bf\u3000-\u303f\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65")
# Split at each such character, keeping it: then a join and str.split cut the text into units,
# 1.6 times as fast as findall with one pattern for all three kinds of unit (measured, dragnet).
_SEPARATE = re.compile(f"([{_UNSPACED}{_MARKS}])")
_DIGIT = re.compile(r"[0-9]")  # ASCII digits: a range test, 1.6 times as fast as \d
LINE = "\ue000"  # a private-use character stands for each line break while splitting


def marks() -> list[str]:
    """Every character that is a unit of its own as a punctuation mark or symbol (one pass of
    the pattern over the Basic Multilingual Plane, where all of them lie).

    >>> {"|", "»", "€"} <= set(marks()) and not {"a", "0", "é"} & set(marks())
    True
    """
    return re.findall(f"[{_MARKS}]", "".join(map(chr, range(0x10000))))


def split_units(text: str) -> list[str]:
    """The units of a text, with ``LINE`` for each line break."""
    return _split(_DIGIT.sub("0", text.lower()))


def _split(text: str) -> list[str]:
    """The units of a text as they are written (not folded: see :func:`unfolded_units`)."""
    text = text.replace(LINE, " ").replace("\n", f" {LINE} ")
    return " ".join(_SEPARATE.split(text)).split()


# The one letter whose lower case depends on its neighbours: a capital sigma ends a word as
# "ς", and "ΑΣ.Β" lowers to "ασ.β" as a whole but to "ας" as the unit "ΑΣ".
_SIGMA = "\u03a3"


def unfolded_units(text: str) -> tuple[list[str], bool]:
    """``split_units`` but for the folding (lower case, digits as 0), which is left to
    :func:`folded`: a text repeats its units, so folding each distinct unit once costs less
    than folding every character (on dragnet's text, the lower-casing and the digits' pattern
    were 0.3 of the splitting). True when the units are folded already (a capital sigma: the
    text is folded whole, as ``split_units`` folds it)."""
    if _SIGMA in text:
        return split_units(text), True
    return _split(text), False


def folded(distinct: list[str]) -> list[str]:
    """Each unit of ``unfolded_units`` lower-cased, its ASCII digits read as 0: what
    ``split_units`` would have made of it. Splitting does not depend on the folding (no
    character changes between a mark, an unspaced script's character, white space and
    anything else when lower-cased: ``tests/test_lm.py`` checks every code point).

    >>> folded(["Le", "Café", "3,50", LINE])
    ['le', 'café', '0,00', '\ue000']
    """
    return _DIGIT.sub("0", "\n".join(distinct).lower()).split("\n")


def units(text: str) -> list[str]:
    """The units of one line of text (line breaks dropped)."""
    return [unit for unit in split_units(text) if unit != LINE]


def token_id(unit: str) -> int:
    """A unit's stable 64-bit id (xxh3 of its UTF-8), the same in every process."""
    return xxhash.xxh3_64_intdigest(unit.encode("utf-8", "surrogatepass"))


def distinct_ids(found: list[str]) -> dict[str, int]:
    """``token_id`` of each distinct unit of ``found``, with no Python call a unit (maps of C
    functions: a third of the time of a call each, measured)."""
    distinct = list(dict.fromkeys(found))
    encoded = map(str.encode, distinct, repeat("utf-8"), repeat("surrogatepass"))
    return dict(zip(distinct, map(xxhash.xxh3_64_intdigest, encoded), strict=True))


def numbered_units(text: str) -> tuple[list[str], np.ndarray, np.ndarray]:
    """:func:`folded_numbers` of ``text`` and the id of each distinct unit (``BOUNDARY`` for
    ``LINE``; each hashed once)."""
    distinct, numbers = folded_numbers(text)
    encoded = map(str.encode, distinct, repeat("utf-8"), repeat("surrogatepass"))
    ids = np.fromiter(map(xxhash.xxh3_64_intdigest, encoded), np.uint64, count=len(distinct))
    ids[distinct.index(LINE)] = BOUNDARY
    return distinct, ids, numbers


def folded_numbers(text: str) -> tuple[list[str], np.ndarray]:
    """The units of ``text`` (``split_units``'): the distinct ones, in the order they first
    occur (``LINE`` among them, last if the text has no line break), and the number of each
    unit of the text among them. One pass of C over the units; each distinct unit is folded
    once (:func:`unfolded_units`)."""
    found, done = unfolded_units(text)
    raw, numbers = _numbered(found)
    if done:
        return raw, numbers
    # Units alike once folded ("The", "the") share the number of the first of them.
    distinct, merged = _numbered(folded(raw))
    return distinct, merged[numbers]


def _numbered(found: list[str]) -> tuple[list[str], np.ndarray]:
    """The distinct units of ``found`` in the order they first occur (``LINE`` added last when
    absent) and the number of each unit of ``found`` among them."""
    # A unit seen for the first time takes the next number; one seen before returns the number
    # the dictionary holds, with no new int made (a quarter less than numbering by position and
    # renumbering with numpy, measured).
    numbering: defaultdict[str, int] = defaultdict(count().__next__)
    numbers = np.fromiter(map(numbering.__getitem__, found), np.intp, count=len(found))
    numbering[LINE]  # noqa: B018 - numbered if absent
    return list(numbering), numbers


BOUNDARY = token_id("\n")  # line break: </s> when predicted, <s> as a context (never a unit)
UNK = token_id("<unk>")    # cannot come out of units(): "<" is a unit of its own


def token_ids(text: str, *, keep_empty: bool = False) -> np.ndarray:
    """Ids of the units of ``text`` with ``BOUNDARY`` for each line break, one before the first
    line and one after the last; empty lines leave no second boundary unless ``keep_empty``."""
    found = split_units(text)
    # Hash each distinct unit once: a text repeats its words, and the dictionary works in C.
    ids = distinct_ids(found)
    ids[LINE] = BOUNDARY
    array = np.empty(len(found) + 2, dtype=np.uint64)
    array[0] = array[-1] = BOUNDARY
    array[1:-1] = np.fromiter(map(ids.__getitem__, found), np.uint64, count=len(found))
    if keep_empty:
        return array
    repeated = np.zeros(len(array), dtype=bool)
    repeated[1:] = (array[1:] == BOUNDARY) & (array[:-1] == BOUNDARY)
    return array[~repeated] if repeated.any() else array


_MIX_A = np.uint64(0xBF58476D1CE4E5B9)
_MIX_B = np.uint64(0x94D049BB133111EB)
_STEP = np.uint64(0x9E3779B97F4A7C15)


def extend_keys(context: np.ndarray, last: np.ndarray) -> np.ndarray:
    """Keys of n-grams made of a context's key and the id of the unit that follows it.

    The splitmix64 finaliser of ``context * step ^ last``: a key depends on the units and their
    order only, so a key computed from text finds the entry computed from an ARPA file's words.
    """
    key = context * _STEP
    key ^= last
    key ^= key >> np.uint64(30)
    key *= _MIX_A
    key ^= key >> np.uint64(27)
    key *= _MIX_B
    key ^= key >> np.uint64(31)
    return key
