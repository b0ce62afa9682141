"""Blocks that copy the text kept before them: a page's article a second time, in one piece.

A page can hold its article twice: once as paragraphs, once more in one piece (a hidden
articleBody, the text of a print or share view), which the content model keeps as a long block
of prose. :func:`find_copies` says which kept blocks are such copies (see :data:`COPY_SOURCES`
for the rule); :func:`warcdeboil.page.content.copied_blocks` calls it on a page's blocks.

Two ways give the same answers. :func:`search_copies` is the rule as written: each block's
probes searched for in the text kept before it, with ``str.find``. Its work grows with the
square of a page's text, but for most pages it is the faster (a page's probes are a few dozen
searches over a few kilobytes, done in C): :func:`find_copies` takes it while its worst case
stays under :data:`SEARCH_BUDGET` characters searched, and :func:`probe_copies` beyond.

:func:`probe_copies` takes time linear in the page's text. A *probe* is a run of
:data:`COPY_PROBE_WORDS` words of a block (its words are one space apart: a block's text is
folded). The rule asks where a probe is first found, as a substring, in the text kept before its
block: the kept blocks joined by a space. A probe's inner words hold no space and lie between
two spaces, so in the joined text they are whole words; only its first word may end a longer
word and its last word start one. So the probes of every block that could be a copy are known
before the page is read, and are looked up by their inner words (a dict); the joined text is
never built: each kept block's words are read once, in order, as it joins, and each run of
words whose inner words some probe has is matched against those probes. The first match of a
probe is its first occurrence, as the runs come in text order. Each word of a page is thus
looked up once, where the search reads all the text kept so far for each block: a page of
14 MiB of short paragraphs took 77 CPU-s with the search alone, and takes 3
(benchmarks/page_size.py). The answers are the search's, but for the bound
:data:`COPY_PROBE_VARIANTS` (tests/test_copies.py checks them against each other).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence
from itertools import accumulate, compress, count, islice

__all__ = [
    "COPY_MIN_CHARS",
    "COPY_PROBES",
    "COPY_PROBE_WORDS",
    "COPY_PROBE_VARIANTS",
    "COPY_SOURCES",
    "SEARCH_BUDGET",
    "find_copies",
    "probe_copies",
    "search_copies",
]

# A kept block of at least COPY_MIN_CHARS characters goes when its first run of
# COPY_PROBE_WORDS words and all but one of its COPY_PROBES - 1 others (spread over it) are in
# the text kept before it, found there in at least COPY_SOURCES different blocks: a copy joined
# from several kept blocks, never a paragraph that a summary or a lead repeats (CleanPortalEval's
# gold keeps those; one source block was enough in a first version, and cost it 0.009 mean F1).
# On scrapinghub (one page a site) mean F1 0.932 -> 0.936 (calibration sites 0.933 -> 0.939,
# held-out 0.932 -> 0.933); dragnet, l3s-gn1, cleaneval, cleanportaleval and WCXB's held-out
# sites unchanged at the third decimal.
COPY_MIN_CHARS = 100
COPY_PROBES = 4
COPY_PROBE_WORDS = 8
COPY_SOURCES = 2

# The probes of a page that share their inner words but differ in their first or last word
# (each such probe is tried on every run of words with those inner words, until it is found):
# past this many, a further one counts as not found. It bounds the work of one run of words,
# so that a page is checked in time linear in its text whatever it repeats. On the pages of
# ../shared/eval, most pages have no two such probes; the most is 13, on a shop's listing of
# teasers that each end "... Read more at Weight Lifting Equipment Guide" (tests/test_copies.py).
COPY_PROBE_VARIANTS = 64

# The most characters search_copies may read on one page: COPY_PROBES searches for each block
# that may be a copy, each over at most all the text kept. Up to it (100 such blocks and 40,000
# characters kept) the search costs a few milliseconds at worst. On dragnet's 1,381 pages the
# search took 0.07 CPU-s where the probes take 0.27 (in one process; benchmarks/speed.py,
# content JSONL, median of 5: 250 -> 266 pages a CPU-second).
SEARCH_BUDGET = 1 << 24

_INNER = COPY_PROBE_WORDS - 2  # the words of a probe between its first and its last
_NEVER = 0  # the probe number of a probe past COPY_PROBE_VARIANTS: never looked for


def _probe_runs(text: str) -> list[list[str]] | None:
    """The COPY_PROBES runs of COPY_PROBE_WORDS words of ``text`` that are its probes, spread
    evenly from its start to its end; None for a text of too few words to have any."""
    words = text.split(" ")
    if len(words) <= COPY_PROBE_WORDS:
        return None
    span = len(words) - COPY_PROBE_WORDS
    return [words[first:first + COPY_PROBE_WORDS]
            for first in (k * span // (COPY_PROBES - 1) for k in range(COPY_PROBES))]


def _is_copy(sources: Iterable[int]) -> bool:
    """The rule, from the block each probe was first found in (0: not found), read in probe
    order and no further than needed: the first probe and all but one of the others are found,
    in COPY_SOURCES blocks or more."""
    found: set[int] = set()
    misses = 0
    for source in sources:
        if source:
            found.add(source)
        elif not found:  # the first probe is not found
            return False
        else:
            misses += 1
            if misses > 1:
                return False
    return len(found) >= COPY_SOURCES


class _Probes:
    """The probes of a page's blocks, numbered from 1 (equal probes share a number): each
    one's first and last word, its inner words, the block its first occurrence starts in (a
    number that differs between blocks; 0 while it is not found), and how many probes of blocks
    not yet judged it stands for. ``wanted``: the numbers of the probes still looked for, by
    their inner words. Parallel lists, not an object a probe: a page has up to four probes a
    block, 57,000 blocks in a page of 14 MB of short paragraphs."""

    def __init__(self) -> None:
        # A number, or a list of them for probes that differ in their first or last word only
        # (a list a key made the collector walk 200,000 lists: 0.6 s a page of 14 MB).
        self.wanted: dict[tuple[str, ...], int | list[int]] = {}
        self.firsts = [""]
        self.lasts = [""]
        self.inners: list[tuple[str, ...]] = [()]
        self.sources = [0]
        self.users = [0]
        # One string for equal words, so that what the probes keep is the page's vocabulary.
        self._words: dict[str, str] = {}

    def add(self, text: str) -> tuple[int, ...] | None:
        """The numbers of the probes of ``text``; None for a text of too few words to have
        any."""
        runs = _probe_runs(text)
        if runs is None:
            return None
        share = self._words.setdefault
        numbers: list[int] = []
        for run in runs:
            probe = list(map(share, run, run))
            inner = tuple(probe[1:-1])
            same = _listed(self.wanted.get(inner))
            for number in same:
                if self.firsts[number] == probe[0] and self.lasts[number] == probe[-1]:
                    break
            else:
                if len(same) >= COPY_PROBE_VARIANTS:
                    numbers.append(_NEVER)
                    continue
                number = len(self.firsts)
                self.firsts.append(probe[0])
                self.lasts.append(probe[-1])
                self.inners.append(inner)
                self.sources.append(0)
                self.users.append(0)
                self._want(inner, number)
            self.users[number] += 1
            numbers.append(number)
        return tuple(numbers)

    def is_copy(self, numbers: tuple[int, ...]) -> bool:
        """Whether the block of these probes is a copy (:func:`_is_copy`)."""
        return _is_copy(map(self.sources.__getitem__, numbers))

    def release(self, numbers: tuple[int, ...]) -> None:
        """A judged block's probes: those no later block has are looked for no more (a block's
        own probes would otherwise be found in its own text, at a cost a word)."""
        for number in numbers:
            if number == _NEVER:
                continue
            self.users[number] -= 1
            if not self.users[number]:
                self._forget(number)

    def _want(self, inner: tuple[str, ...], number: int) -> None:
        same = self.wanted.get(inner)
        if same is None:
            self.wanted[inner] = number
        elif isinstance(same, int):
            self.wanted[inner] = [same, number]
        else:
            same.append(number)

    def _forget(self, number: int) -> None:
        inner = self.inners[number]
        same = self.wanted.get(inner)
        if same == number:
            del self.wanted[inner]
        elif isinstance(same, list) and number in same:
            same.remove(number)
            self.wanted[inner] = same[0] if len(same) == 1 else same

    def match(self, inner: tuple[str, ...], first: str, last: str, end: int,
              starts: list[int]) -> None:
        """A run of words of the joined text with inner words ``inner`` (which some probe
        has), first word ``first`` and last word ``last``, the first ending at ``end``: the
        probes it holds are found there (``starts``: where each kept block starts)."""
        for number in list(_listed(self.wanted[inner])):
            head = self.firsts[number]
            if first.endswith(head) and last.startswith(self.lasts[number]):
                # The kept blocks that start at or before the probe's first character: what
                # the search over the joined text numbered its source by.
                self.sources[number] = bisect_right(starts, end - len(head))
                self._forget(number)  # found: its first occurrence is known


def _listed(same: int | list[int] | None) -> Sequence[int]:
    """The probe numbers a value of ``_Probes.wanted`` holds."""
    if same is None:
        return ()
    return (same,) if isinstance(same, int) else same


def find_copies(texts: Sequence[str], chars: Sequence[int], keep: Sequence[bool]) -> list[bool]:
    """Which kept texts copy the text kept before them from several blocks (see
    :data:`COPY_SOURCES`); the first copy of a text stays. ``texts``: the blocks' texts, their
    words one space apart; ``chars``: their characters other than spaces.

    >>> a = "The pier reopened on Monday after a winter of repairs to its deck and rails."
    >>> b = "Boats can moor again at its end, and the cafe opens its doors in April this year."
    >>> find_copies([a, b, a + " " + b], [70, 70, 140], [True, True, True])
    [False, False, True]
    """
    kept = list(compress(texts, keep))
    checked = sum(n >= COPY_MIN_CHARS for n in compress(chars, keep))
    if checked * COPY_PROBES * (len(kept) + sum(map(len, kept))) <= SEARCH_BUDGET:
        return search_copies(texts, chars, keep)
    return probe_copies(texts, chars, keep)


def search_copies(texts: Sequence[str], chars: Sequence[int],
                  keep: Sequence[bool]) -> list[bool]:
    """:func:`find_copies`' answers from a search for each probe in the text kept so far (the
    rule as written; time quadratic in the page's text)."""
    copied = [False] * len(texts)
    joined = ""
    starts: list[int] = []  # where each kept block's space is in the joined text
    for i, (text, n, ok) in enumerate(zip(texts, chars, keep, strict=True)):
        if not ok:
            continue
        if n >= COPY_MIN_CHARS and joined and _found_in(text, joined, starts):
            copied[i] = True
            continue
        starts.append(len(joined))
        joined += " " + text
    return copied


def _found_in(text: str, joined: str, starts: list[int]) -> bool:
    """Whether ``text`` copies ``joined`` (:func:`_is_copy`), each probe searched for only
    when the rule still needs it (``starts``: where each kept block's space is)."""
    runs = _probe_runs(text)
    if runs is None:
        return False

    def source(run: list[str]) -> int:
        at = joined.find(" ".join(run))
        return bisect_right(starts, at) if at >= 0 else 0  # a kept block starts at 0

    return _is_copy(map(source, runs))


def probe_copies(texts: Sequence[str], chars: Sequence[int], keep: Sequence[bool]) -> list[bool]:
    """:func:`find_copies`' answers in time linear in the page's text (see the module's
    docstring), but for probes past :data:`COPY_PROBE_VARIANTS`."""
    probes = _Probes()
    numbers = [probes.add(text) if ok and n >= COPY_MIN_CHARS else None
               for text, n, ok in zip(texts, chars, keep, strict=True)]
    wanted = probes.wanted
    copied = [False] * len(texts)
    # The joined text is " " + the kept texts joined by " ": its words (split at each space)
    # start with an empty one. Kept: its last 7 words and where each ends (the offset of the
    # space after it), where each kept block starts (its space), and the joined text's length.
    keep_words = COPY_PROBE_WORDS - 1
    tail: list[str] = [""]
    tail_ends: list[int] = [0]
    starts: list[int] = []
    length = 0
    for i, (text, ok) in enumerate(zip(texts, keep, strict=True)):
        if not ok:
            continue
        mine = numbers[i]
        if mine is not None:
            copy = bool(starts) and probes.is_copy(mine)
            probes.release(mine)
            if copy:
                copied[i] = True
                continue
        start = length
        starts.append(start)
        length += 1 + len(text)
        if not wanted:  # every probe found or given up: no later block's answer can change
            continue
        new = text.split(" ")
        words = tail + new
        runs = len(words) - COPY_PROBE_WORDS + 1  # the runs of words that end in this text
        if runs > 0:
            # The runs' inner words, looked up with the loops in C; a run that some probe has
            # comes to Python (none in most blocks).
            inners = zip(*(islice(words, k, k + runs) for k in range(1, 1 + _INNER)),
                         strict=True)
            ends: list[int] | None = None
            for at in compress(count(), map(wanted.__contains__, inners)):
                if ends is None:  # where each word ends, once a block has a run that matches
                    ends = tail_ends + _word_ends(new, start)
                inner = tuple(words[at + 1:at + 1 + _INNER])
                if inner in wanted:  # (not all found at an earlier run of this block)
                    probes.match(inner, words[at], words[at + COPY_PROBE_WORDS - 1], ends[at],
                                 starts)
        tail_ends = (_last_ends(new, length, keep_words) if len(new) >= keep_words
                     else (tail_ends + _word_ends(new, start))[-keep_words:])
        tail = words[-keep_words:]
    return copied


def _word_ends(words: list[str], start: int) -> list[int]:
    """Where each of a block's ``words`` ends in the joined text, the block's space at
    ``start``."""
    return list(accumulate(map(_PLUS_ONE, map(len, words)), initial=start))[1:]


_PLUS_ONE = (1).__add__  # called from map() without a Python frame


def _last_ends(words: list[str], end: int, n: int) -> list[int]:
    """Where each of the last ``n`` of ``words`` ends, the last at ``end``."""
    ends: list[int] = []
    for word in reversed(words[-n:]):
        ends.append(end)
        end -= len(word) + 1
    ends.reverse()
    return ends
