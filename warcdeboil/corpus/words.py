"""A page's words as the quality filters count them: by script.

Where a script puts spaces between words, the text is cut at white space and each piece is split
again where punctuation stands at its edges: ``"(Hello,"`` is ``(``, ``Hello`` and ``,``. A mark
standing alone is a word of its own here, as it is a unit of the language model
(:mod:`warcdeboil.lm.units`); the rules that count *words* proper keep those with a letter or a
digit (:func:`is_word`). Punctuation inside a word stays in it (``3.50``, ``U.S.``,
``example.com``, ``B-400``) but for a few places where English splits: a hyphen or a slash before
a letter (``well-known`` is three words), English clitics (``don't`` is ``do`` and ``n't``,
``it's`` is ``it`` and ``'s``), a unit after a number (``5km``), a period that ends a word
but not an abbreviation (``Mr.``, ``Jan.``) or initials (``J.``, ``e.g.``).

These splitting rules were chosen so that the counts Rae et al.'s rules depend on (words, marks,
words with a letter) come out as spaCy's English tokenizer gives them, the tokenizer datatrove
runs the same rules with; ``benchmarks/quality_filters.py`` measures how close.

Chinese, Japanese, Thai, Lao, Khmer and Myanmar are written without spaces: each of their
characters is a word, the unit the language model uses for them
(:data:`~warcdeboil.lm.units.UNSPACED`), and their marks are words of their own.

>>> split_chunk('"Well-known,')
('"', 'Well', '-', 'known', ',')
>>> split_chunk("don't")
('do', "n't")
>>> split_chunk("(U.S.)")
('(', 'U.S.', ')')
>>> split_chunk("北京欢迎你。")
('北', '京', '欢', '迎', '你', '。')
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from itertools import chain

from ..lm import units

__all__ = ["ALPHABETIC", "FLAG_BITS", "HASH_BASE", "ID_BITS", "LENGTH_BITS", "MAX_LENGTH",
           "PROPER", "SENTENCE_TERMINALS", "SPACED", "ascii_word_code", "is_word",
           "iter_words", "split_chunk", "unspaced", "word_code", "word_hash", "word_id"]

# The marks that end a sentence in any script: Unicode's Sentence_Terminal property, as the
# ``regex`` module (2026.11.19) lists it with \p{Sentence_Terminal}, written out as ranges.
_TERMINAL_RANGES = (
    "\u0021\u002e\u003f\u0589\u061d-\u061f\u06d4\u0700-\u0702\u07f9\u0837\u0839\u083d-\u083e"
    "\u0964-\u0965\u104a-\u104b\u1362\u1367-\u1368\u166e\u1735-\u1736\u17d4-\u17d5\u1803\u1809"
    "\u1944-\u1945\u1aa8-\u1aab\u1b4e-\u1b4f\u1b5a-\u1b5b\u1b5e-\u1b5f\u1b7d-\u1b7f\u1c3b-\u1c3c"
    "\u1c7e-\u1c7f\u2024\u203c-\u203d\u2047-\u2049\u2cf9-\u2cfb\u2e2e\u2e3c\u2e53-\u2e54"
    "\u2e60-\u2e61\u3002\ua4ff\ua60e-\ua60f\ua6f3\ua6f7\ua876-\ua877\ua8ce-\ua8cf\ua92f"
    "\ua9c8-\ua9c9\uaa5d-\uaa5f\uaaf0-\uaaf1\uabeb\ufe12\ufe15-\ufe16\ufe52\ufe56-\ufe57\uff01"
    "\uff0e\uff1f\uff61\U00010a56-\U00010a57\U00010f55-\U00010f59\U00010f86-\U00010f89"
    "\U00011047-\U00011048\U000110be-\U000110c1\U00011141-\U00011143\U000111c5-\U000111c6"
    "\U000111cd\U000111de-\U000111df\U00011238-\U00011239\U0001123b-\U0001123c\U000112a9"
    "\U000113d4-\U000113d5\U0001144b-\U0001144c\U000115c2-\U000115c3\U000115c9-\U000115d7"
    "\U00011641-\U00011642\U0001173c-\U0001173e\U00011944\U00011946\U00011a42-\U00011a43"
    "\U00011a9b-\U00011a9c\U00011c41-\U00011c42\U00011ef7-\U00011ef8\U00011f43-\U00011f44"
    "\U00016a6e-\U00016a6f\U00016af5\U00016b37-\U00016b38\U00016b44\U00016d6e-\U00016d6f"
    "\U00016e98\U0001bc9f\U0001da88")


def _expand(ranges: str) -> str:
    """Every character of a character class's ranges ("a-c" is "abc")."""
    return "".join(chr(c) for a, _, b in re.findall(r"(.)(-(.))?", ranges, re.DOTALL)
                   for c in range(ord(a), ord(b or a) + 1))


SENTENCE_TERMINALS = _expand(_TERMINAL_RANGES)

# Symbols split off a word's edges (as punctuation is): the commonest of them and emoji.
_SYMBOLS = "©®™°\u2600-\u27bf\U0001f300-\U0001faff"
# The single marks split off the start of a piece and off its end (besides the symbols).
PREFIX_MARKS = "\"'`«‘’“”„‚‹¡¿$£€¥₹§#*&%=|,;:!?([{<–—_"
SUFFIX_MARKS = "\"'`»’”›),;:!?]}>%#*|–—_-"
# Marks split off the start of a piece, one at a time: ellipses and dashes whole, a hyphen only
# before what is not a letter or digit ("-via" stays a word), a period before no digit (".5").
_PREFIX = re.compile(
    rf"\.\.+|…|--+|[{re.escape(PREFIX_MARKS)}{_SYMBOLS}]|-(?![^\W_])|\.(?![0-9])")
# Marks split off the end, one at a time, and English clitics.
_SUFFIX = re.compile(
    r"(?:\.\.+|…|--+"
    r"|(?<=[^\W_])(?:n['’]t|['’](?:s|m|d|ll|ve|re))"
    rf"|[{re.escape(SUFFIX_MARKS)}{_SYMBOLS}]|\.)$", re.IGNORECASE)
# A number and its unit written together: "5km", "16GB", "8pm".
_UNIT = re.compile(r"([0-9][0-9.,]*)(km|cm|mm|m|kg|mg|g|oz|ft|mph|kb|mb|gb|am|pm|GB|MB|TB|KB|G|K)")
# Where a word is split inside: ellipses; dashes before a letter; arithmetic between digits
# ("1990-2000"); ":<>=/" before a letter ("Note:This"); a comma between letters; a period
# between a lower-case and an upper-case letter ("end.The").
_INFIX = re.compile(
    r"(\.\.+|…|(?<=[^\W_])(?:--+|[-–—~])(?=[^\W\d_])|(?<=[0-9])[-+*^](?=[0-9-])"
    r"|(?<=[^\W_])[:<>=/](?=[^\W\d_])|(?<=[^\W\d_]),(?=[^\W\d_])|(?<=[a-z])\.(?=[A-Z]))")
# A web address (with its scheme, "www." or a path after a domain) or an e-mail address is one
# word.
_ADDRESS = re.compile(r"(?:https?://|www\.)\S+$|[^\W_][\w.+-]*@[\w-]+(?:\.[\w-]+)+$"
                      r"|(?:[^\W_][\w-]*\.)+[a-z]{2,}/\S*$", re.IGNORECASE)
# Words whose final period is part of them: English abbreviations (titles, months, companies,
# US states), a single letter ("J.") and initials ("U.S.", "e.g.", "Ph.D.").
_ABBREVIATIONS = frozenset({
    "Mr", "Mrs", "Ms", "Dr", "St", "Jr", "Gen", "Gov", "Sen", "Rep", "Rev", "Prof", "Mt", "vs",
    "Corp", "Co", "Ltd", "Inc", "Bros", "Jan", "Feb", "Mar", "Apr", "Jun", "Jul", "Aug", "Sep",
    "Sept", "Oct", "Nov", "Dec", "Ala", "Ariz", "Ark", "Calif", "Colo", "Conn", "Del", "Fla",
    "Ga", "Ill", "Ind", "Kan", "Ky", "La", "Md", "Mass", "Mich", "Minn", "Miss", "Mo", "Mont",
    "Neb", "Nev", "Okla", "Ore", "Pa", "Tenn", "Va", "Wash", "Wis", "Wyo",
})
_INITIALS = re.compile(r"[A-Za-z]\.|(?:[A-Za-z]{1,2}\.){2,}")
# Pieces that are words as they stand: emoticons, and a few English words split in two.
_WHOLE: dict[str, tuple[str, ...]] = {
    "cannot": ("can", "not"), "Cannot": ("Can", "not"), "and/or": ("and/or",), "''": ("''",),
    ":)": (":)",), ":(": (":(",), ";)": (";)",), ":-)": (":-)",), ";-)": (";-)",),
    ":D": (":D",), ":P": (":P",), "<3": ("<3",), "):": ("):",),
}
# English contractions written without their apostrophe ("dont"): where the second word starts.
_INFORMAL = {"dont": 2, "didnt": 3, "doesnt": 4, "isnt": 2, "wasnt": 3, "cant": 2, "wont": 2,
             "couldnt": 5, "wouldnt": 5, "shouldnt": 6, "arent": 3, "havent": 4, "im": 1,
             "thats": 4, "gonna": 3, "gotta": 3}
_UNSPACED = re.compile(f"[{units.UNSPACED}]")
_DIGITS = frozenset("0123456789")
# Marks that _SUFFIX always splits off the end of a word of letters.
_LAST_MARKS = frozenset(",;:!?)\".")


def unspaced(text: str) -> bool:
    """Whether ``text`` holds a character of a script written without spaces.

    >>> unspaced("Bangkok กรุงเทพ"), unspaced("Zürich")
    (True, False)
    """
    return _UNSPACED.search(text) is not None


def is_word(token: str) -> bool:
    """A word proper: a token with a letter or a digit (not a mark standing alone).

    >>> is_word("n't"), is_word("3"), is_word("..."), is_word("—")
    (True, True, False, False)
    """
    return token.isalnum() or any(map(str.isalnum, token))


def _keeps_period(piece: str) -> bool:
    return piece[:-1] in _ABBREVIATIONS or _INITIALS.fullmatch(piece) is not None


def _inner(piece: str) -> list[str]:
    """The words of a piece with nothing left to split at its edges."""
    if piece.isalnum():  # no mark to split at
        cut = _INFORMAL.get(piece.lower()) if piece.isalpha() else None
        return [piece[:cut], piece[cut:]] if cut else [piece]
    if _address(piece):
        return [piece]
    return [part for part in _INFIX.split(piece) if part]


def split_chunk(chunk: str) -> tuple[str, ...]:
    """The words of one piece of text without white space (see the module's docstring)."""
    if chunk.isascii():
        if chunk.isalpha():  # most pieces: one word
            cut = _INFORMAL.get(chunk.lower())
            return (chunk[:cut], chunk[cut:]) if cut else _WHOLE.get(chunk, (chunk,))
        # A word and one mark after it ("word,"), the next commonest.
        word, mark = chunk[:-1], chunk[-1]
        if mark in _LAST_MARKS and word.isalpha() and word.lower() not in _INFORMAL \
                and word not in _WHOLE and (mark != "." or not _keeps_period(chunk)):
            return word, mark
        if (framed := _framed(chunk)) is not None:
            return framed
    elif unspaced(chunk):
        return tuple(units.unfolded_units(chunk)[0])
    elif chunk.isalpha():
        return (chunk,)
    return _split_marks(chunk)


def _split_marks(chunk: str) -> tuple[str, ...]:
    """split_chunk's general case: marks split off the edges one at a time, then inside."""
    if chunk in _WHOLE:
        return _WHOLE[chunk]
    head: list[str] = []
    tail: list[str] = []
    while chunk:
        if chunk in _WHOLE:
            head.extend(_WHOLE[chunk])
            return (*head, *reversed(tail))
        suffix = _suffix(chunk)
        if suffix is None and _address(chunk):
            break
        # Every prefix starts with a mark, every unit after a digit: most pieces need neither.
        prefix = None if chunk[0].isalnum() else _PREFIX.match(chunk)
        if prefix and prefix.end() < len(chunk):
            head.append(prefix.group())
            chunk = chunk[prefix.end():]
            continue
        if suffix and suffix.start() > 0:
            mark = suffix.group()
            if mark == "." and _keeps_period(chunk):
                break
            tail.append(mark)
            chunk = chunk[:suffix.start()]
            continue
        if chunk[0] in _DIGITS and (number := _UNIT.fullmatch(chunk)):
            tail.append(number.group(2))
            chunk = number.group(1)
            continue
        break
    return (*head, *(_inner(chunk) if chunk else ()), *reversed(tail))


# An ASCII word (or words joined by single hyphens: "well-known") with at most one opening mark
# before it and closing marks after it, a period only first among them: ``(word``, ``"word,"``,
# ``well-known.)``. The loop of split_chunk splits every such mark off alone and the hyphens
# between the words (_INFIX), but for a period of an abbreviation, and English words split in
# two (_INFORMAL, _WHOLE); _framed gives the same words in one match.
_FRAMED = re.compile(r"([\"'(]?)([A-Za-z]+(?:-[A-Za-z]+)*)(\.?[,;:!?)\"']*)")


def _framed(chunk: str) -> tuple[str, ...] | None:
    """split_chunk's words of an ASCII piece of :data:`_FRAMED`'s form, else None."""
    found = _FRAMED.fullmatch(chunk)
    if found is None:
        return None
    opening, core, closing = found.groups()
    if "-" in core:
        words = core.split("-")
        inner = [part for word in words for part in ("-", word)][1:]
    elif core.lower() in _INFORMAL or core in _WHOLE:
        return None
    else:
        inner = [core]
    if closing[:1] == "." and _keeps_period(core + "."):
        return None
    return (*opening, *inner, *closing)


def _suffix(chunk: str) -> re.Match[str] | None:
    """_SUFFIX's match at the end of ``chunk``. Only runs of dots or dashes are longer than
    four characters: for a piece ending otherwise, its last four are enough to search."""
    if chunk[-1] in ".-":
        return _SUFFIX.search(chunk)
    return _SUFFIX.search(chunk, max(len(chunk) - 4, 0))


def _address(piece: str) -> bool:
    """A web or e-mail address (every form of it holds "." or "@" or ":")."""
    return ("." in piece or "@" in piece or ":" in piece) and _ADDRESS.match(piece) is not None


# Each word of a page is one 64-bit code, so that numpy reads a page's words in one pass: its id
# (the top ID_BITS bits of its hash) above its length in characters (up to MAX_LENGTH) above
# three flags. Two different words of a page share an id with a chance of about
# (distinct words)^2 / 2^46: one in 280 million pages of 500 distinct words.
ALPHABETIC, PROPER, SPACED = 1, 2, 4  # a letter; a letter or a digit (not a mark); not unspaced
FLAG_BITS = 3
LENGTH_BITS = 16
ID_BITS = 64 - LENGTH_BITS - FLAG_BITS
MAX_LENGTH = (1 << LENGTH_BITS) - 1  # a longer word counts this many characters
_ASCII_WORD = ALPHABETIC | PROPER | SPACED
# A word's hash is the polynomial of its code points in this base, mod 2**64, mixed by
# splitmix64's finaliser: a polynomial so that numpy can hash every word of a page from one
# running sum (:mod:`.codes`); the base is odd, so it has an inverse mod 2**64.
HASH_BASE = 0x100000001B3
_MASK64 = (1 << 64) - 1


def word_hash(word: str) -> int:
    """A word's 64-bit hash (see :data:`HASH_BASE`)."""
    h = 0
    for point in map(ord, word):
        h = (h * HASH_BASE + point) & _MASK64
    h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9 & _MASK64
    h = (h ^ (h >> 27)) * 0x94D049BB133111EB & _MASK64
    return h ^ (h >> 31)


def word_id(word: str) -> int:
    """A word's id: the top ID_BITS bits of its hash."""
    return word_hash(word) >> (64 - ID_BITS)


def word_code(word: str) -> int:
    """A word's code: its id, length and flags (see above)."""
    if word.isalpha():
        flags = ALPHABETIC | PROPER
    else:
        flags = ((ALPHABETIC if any(map(str.isalpha, word)) else 0)
                 | (PROPER if is_word(word) else 0))
    if word.isascii() or not unspaced(word):
        flags |= SPACED
    return (word_id(word) << LENGTH_BITS | min(len(word), MAX_LENGTH)) << FLAG_BITS | flags


def ascii_word_code(word: str) -> bytes:
    """:func:`word_code` of a word of ASCII letters, as 8 bytes."""
    return ((word_id(word) << LENGTH_BITS | min(len(word), MAX_LENGTH))
            << FLAG_BITS | _ASCII_WORD).to_bytes(8, sys.byteorder)


def iter_words(text: str) -> Iterator[str]:
    """The words of ``text``, piece by piece, split as they are asked for (a reader that stops
    early splits no more).

    >>> list(iter_words("It's 5km, Mr. Smith..."))
    ['It', "'s", '5', 'km', ',', 'Mr.', 'Smith', '...']
    """
    return chain.from_iterable(map(split_chunk, text.split()))
