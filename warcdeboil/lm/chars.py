"""The character component of a language model: each line rewritten as one unit a character,
so the word model's machinery counts and scores character n-grams.

Mojibake ("â€™", "Ã©"), random strings and runs of capitalised menu words are improbable
character sequences even where every word is known. Case is kept as a mark before each capital
(the word units lower-case everything) and a space becomes ``SPACE``; line breaks stay line
breaks, so a line of text is a line of characters (``split_units`` lower-cases the letter after
the mark and reads digits as 0, as it does for words).

>>> char_text("Hi, 2 you")
'⇧ H i , ▁ 2 ▁ y o u'
"""

from __future__ import annotations

import numpy as np

__all__ = ["CAPITAL", "DEFAULT_CHAR_CAPACITY", "DEFAULT_CHAR_MIN_COUNTS", "DEFAULT_CHAR_ORDER",
           "DEFAULT_CHAR_SAMPLE", "SPACE", "char_text"]

SPACE = "\u2581"    # a space (any white space but the line break): a mark, so a unit alone
CAPITAL = "\u21e7"  # comes before a capital letter, which is then written lower-case
DEFAULT_CHAR_ORDER = 5
DEFAULT_CHAR_MIN_COUNTS = (1, 2, 2, 2, 2)
# Entries a count table of the character model (32 bytes each: 32 MiB): a quarter of the word
# model's, so that its four tables above unigrams stay within 128 MiB when 100 M words fill them
# (the benchmark's character model, 1.8 M characters of English, keeps 0.1 M 5-grams).
DEFAULT_CHAR_CAPACITY = 1 << 20
# One text in this many feeds the character model: character statistics settle on far less
# text than word statistics, and counting every character would cost twice the word model's
# training time (12.5 against 5.7 CPU-s on the benchmark's 2.4 M words). 1 in 16 was tried:
# as good on the benchmark's test split, but mojibake fell from 0.970 to 0.948 with dragnet
# left out of training (1.7 M words; benchmarks/results/perplexity-2026-11-25-languages.md).
DEFAULT_CHAR_SAMPLE = 8


def char_text(text: str) -> str:
    """``text`` with each character a unit of its own (``units.split_units`` reads it so)."""
    # In numpy, on the code points: a Python call a character took 2.7 times as long (0.38
    # against 0.14 CPU-s on dragnet's cleaned pages, measured).
    points = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), np.uint32)
    if not len(points):
        return ""
    kinds = np.zeros(int(points.max()) + 1, np.uint8)  # 1: a space, 2: a capital
    for char in set(text):
        if char != "\n" and char.isspace():
            kinds[ord(char)] = 1
        elif char.isupper():
            kinds[ord(char)] = 2
    kind = kinds[points]
    capital = kind == 2
    units = np.where(kind == 1, np.uint32(ord(SPACE)), points)
    at = np.arange(len(points)) + np.cumsum(capital)  # where each character's unit goes
    joined = np.full(2 * int(at[-1]) + 1, ord(" "), np.uint32)  # the units, a space between
    joined[2 * at] = units
    joined[2 * at[capital] - 2] = ord(CAPITAL)
    return joined.tobytes().decode("utf-32-le", "surrogatepass")
