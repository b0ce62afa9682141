"""Gopher's quality and repetition filters: Rae et al. 2021, "Scaling Language Models: Methods,
Analysis & Insights from Training Gopher", appendix A (MassiveWeb's quality filter, A.1.1, and
repetition removal, table A1).

Each filter returns the reasons it would drop a page, empty when it keeps it. ``docs/quality.md``
says what each rule means and where this reading of the paper differs from datatrove's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from operator import methodcaller
from typing import NamedTuple

import numpy as np

from .page import PageText

__all__ = ["GopherQuality", "GopherRepetition", "gopher_quality", "gopher_repetition"]


@dataclass(frozen=True)
class GopherQuality:
    """The quality filter's parameters, the paper's values by default.

    A page is flagged when it has fewer than ``min_words`` or more than ``max_words`` words
    (reasons ``few_words``, ``many_words``); when its words' mean length is below
    ``min_mean_word_length`` or above ``max_mean_word_length`` characters (``short_words``,
    ``long_words``); when it has more than ``max_hash_ratio`` hash signs or
    ``max_ellipsis_ratio`` ellipses a word (``hash_ratio``, ``ellipsis_ratio``); when more than
    ``max_bullet_lines`` of its lines start with one of ``bullets`` (``bullet_lines``) or more
    than ``max_ellipsis_lines`` end with an ellipsis (``ellipsis_lines``); when fewer than
    ``min_alpha_words`` of its words have a letter (``alpha_words``); when fewer than
    ``min_stop_words`` of ``stop_words`` occur in it (``stop_words``), in lower case,
    capitalised or in capitals (with ``stop_words_any_case`` false: only as listed).
    ``stop_words_by_language`` gives other words for pages of a language (ISO 639-1 code).
    """

    min_words: int = 50
    max_words: int = 100_000
    min_mean_word_length: float = 3.0
    max_mean_word_length: float = 10.0
    max_hash_ratio: float = 0.1
    max_ellipsis_ratio: float = 0.1
    bullets: str = "•-"
    max_bullet_lines: float = 0.9
    max_ellipsis_lines: float = 0.3
    min_alpha_words: float = 0.8
    stop_words: tuple[str, ...] = ("the", "be", "to", "of", "and", "that", "have", "with")
    min_stop_words: int = 2
    stop_words_any_case: bool = True
    stop_words_by_language: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


_ELLIPSES = ("...", "…")
_ENDS_IN_ELLIPSIS = methodcaller("endswith", _ELLIPSES)


def gopher_quality(page: PageText, rules: GopherQuality) -> list[str]:
    """Why Gopher's quality filter would drop the page (no reason: it keeps it)."""
    reasons = []
    alphabetic, proper, spaced, spaced_chars = page.counts
    if proper < rules.min_words:
        reasons.append("few_words")
    if proper > rules.max_words:
        reasons.append("many_words")
    # Characters a word of a script written with spaces: a character of Chinese or Thai is a
    # word here, and its one character says nothing of the page (docs/quality.md).
    if spaced:
        mean = spaced_chars / spaced
        if mean < rules.min_mean_word_length:
            reasons.append("short_words")
        if mean > rules.max_mean_word_length:
            reasons.append("long_words")
    words = page.word_count
    if words:
        text = page.text
        if text.count("#") / words > rules.max_hash_ratio:
            reasons.append("hash_ratio")
        if (text.count("...") + text.count("…")) / words > rules.max_ellipsis_ratio:
            reasons.append("ellipsis_ratio")
    lines = page.lines
    if lines:
        bullets = tuple(rules.bullets)
        if bullets and sum(map(methodcaller("startswith", bullets), lines)) / len(lines) \
                > rules.max_bullet_lines:
            reasons.append("bullet_lines")
        if sum(map(_ENDS_IN_ELLIPSIS, lines)) / len(lines) > rules.max_ellipsis_lines:
            reasons.append("ellipsis_lines")
    if words and alphabetic / words < rules.min_alpha_words:
        reasons.append("alpha_words")
    stop_words = rules.stop_words_by_language.get(page.language, rules.stop_words)
    if rules.min_stop_words and _stop_words_found(page, stop_words, rules.stop_words_any_case) \
            < rules.min_stop_words:
        reasons.append("stop_words")
    return reasons


def _stop_words_found(page: PageText, stop_words: tuple[str, ...], any_case: bool) -> int:
    """How many of the stop words occur: as listed, or also capitalised or in capitals."""
    forms, width = _forms(stop_words, any_case)
    return int(page.present(forms).reshape(-1, width).any(axis=1).sum())


@lru_cache(maxsize=64)
def _forms(stop_words: tuple[str, ...], any_case: bool) -> tuple[tuple[str, ...], int]:
    """The forms of the stop words looked for, each word's together, and how many a word has
    (the same few lists on every page: worked out once)."""
    words = tuple(dict.fromkeys(stop_words))
    if not any_case:
        return words, 1
    return tuple(form for word in words for form in (word, word.capitalize(), word.upper())), 3


@dataclass(frozen=True)
class GopherRepetition:
    """The repetition filter's parameters: table A1 of the paper by default.

    A page is flagged when more than ``max_dup_line_frac`` of its lines repeat an earlier line
    (reason ``dup_line_frac``), or those repeats hold more than ``max_dup_line_char_frac`` of
    its characters (``dup_line_char_frac``); the same for paragraphs (``dup_para_frac``,
    ``dup_para_char_frac``); when the most frequent n-gram of words, for n = 2, 3, 4, covers more
    than ``max_top_N_gram`` of the characters (``top_N_gram``); when the n-grams that repeat an
    earlier one, for n = 5 to 10, cover more than ``max_dup_N_gram`` of them (``dup_N_gram``).
    Those repeats are taken from the left, each that does not overlap the one taken before;
    with ``dup_ngrams_union``, every word inside any of them counts instead (the paper allows
    both readings). A page without text is flagged ``empty``.

    In Chinese, Japanese and Thai a word is a character (:mod:`.words`), and an n-gram of n
    characters spans fewer words than the n the rules are written for: the n-grams are then of
    ``unspaced_chars_per_word`` units a word, rounded (1.9: the rules' 5 words are 10 characters),
    on a page of mixed scripts in proportion to its words proper of those scripts. 1 counts a
    character as a word.
    """

    max_dup_line_frac: float = 0.30
    max_dup_para_frac: float = 0.30
    max_dup_line_char_frac: float = 0.20
    max_dup_para_char_frac: float = 0.20
    max_top_2_gram: float = 0.20
    max_top_3_gram: float = 0.18
    max_top_4_gram: float = 0.16
    max_dup_5_gram: float = 0.15
    max_dup_6_gram: float = 0.14
    max_dup_7_gram: float = 0.13
    max_dup_8_gram: float = 0.12
    max_dup_9_gram: float = 0.11
    max_dup_10_gram: float = 0.10
    dup_ngrams_union: bool = False
    # Characters a word of Chinese and Japanese: 1.88 on the Japanese pages of ../shared/eval as
    # datatrove's Japanese tokenizer (spaCy with Sudachi) splits them (1,982 characters in 1,053
    # words); Chinese words (jieba's) are about as long.
    unspaced_chars_per_word: float = 1.9

    def top(self) -> dict[int, float]:
        return {2: self.max_top_2_gram, 3: self.max_top_3_gram, 4: self.max_top_4_gram}

    def dup(self) -> dict[int, float]:
        return {5: self.max_dup_5_gram, 6: self.max_dup_6_gram, 7: self.max_dup_7_gram,
                8: self.max_dup_8_gram, 9: self.max_dup_9_gram, 10: self.max_dup_10_gram}


def gopher_repetition(page: PageText, rules: GopherRepetition) -> list[str]:
    """Why Gopher's repetition filter would drop the page (no reason: it keeps it)."""
    if not page.lines:
        return ["empty"]
    reasons = []
    chars = page.chars
    for kind, items, (repeats, repeat_chars), max_frac, max_char_frac in (
            ("para", page.paragraphs, page.paragraph_repeats, rules.max_dup_para_frac,
             rules.max_dup_para_char_frac),
            ("line", page.lines, page.line_repeats, rules.max_dup_line_frac,
             rules.max_dup_line_char_frac)):
        if repeats / len(items) > max_frac:
            reasons.append(f"dup_{kind}_frac")
        if repeat_chars / chars > max_char_frac:
            reasons.append(f"dup_{kind}_char_frac")
    reasons += _ngram_reasons(page, rules)
    return reasons


# n-gram keys: key(w1..wn) = key(w1..wn-1) * _MULTIPLIER + id(wn), wrapping at 2**64. Two
# different n-grams of a page share a key with a chance of about 2**-64 (an odd multiplier
# from the golden ratio, as splitmix64's).
_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)
# The compiled n-gram rules take n-grams of fewer words than this (they come to 19 at most with
# the defaults).
_COMPILED_MAX = 256
_COMPILED_MAX_WORDS = 1 << 29  # and count places in 32 bits


class _RuleLengths(NamedTuple):
    """The n-gram rules at the lengths a page counts (m): n -> m, the top and the repeated
    n-gram rules by m, with their n and limit, and as the compiled rules take them."""

    units: dict[int, int]
    top: dict[int, tuple[int, float]]
    dup: dict[int, tuple[int, float]]
    compiled: tuple[list[tuple[int, int, float]], list[tuple[int, float]]]
    reasons: dict[int, str]


@lru_cache(maxsize=256)
def _rule_lengths(rules: GopherRepetition, scale: float) -> _RuleLengths:
    """The rules at ``scale`` words a word (most pages: 1; worked out once for each)."""
    # int(x + 0.5): units grow by at least one when n does (round() ties to even).
    units = {n: max(n, int(n * scale + 0.5)) for n in range(2, 11)}
    top = {units[n]: (n, limit) for n, limit in rules.top().items()}
    dup = {units[n]: (n, limit) for n, limit in rules.dup().items()}
    compiled = ([(m, n, limit) for m, (n, limit) in top.items()],
                [(m, limit) for m, (_, limit) in dup.items()])
    reasons = {**{m: f"top_{n}_gram" for m, (n, _) in top.items()},
               **{m: f"dup_{n}_gram" for m, (n, _) in dup.items()}}
    return _RuleLengths(units, top, dup, compiled, reasons)


def _ngram_reasons(page: PageText, rules: GopherRepetition) -> list[str]:
    """The n-gram rules, on the words' ids. Most pages are far from every threshold: each rule
    first bounds its figure from cheap counts, and counts exactly only when the bound passes.
    ``m`` is an n-gram's length in words as counted (:func:`_rule_lengths`), ``n`` the rule's:
    more than n on a page whose words proper are characters of a script written without
    spaces."""
    size, chars = page.word_count, page.chars
    if size < 2 or chars == 0:
        return []
    reasons = []
    _, proper, spaced, _ = page.counts
    share = (proper - spaced) / proper if proper else 0.0
    lengths_of = _rule_lengths(rules, 1 + (rules.unspaced_chars_per_word - 1) * share)
    top, dup = lengths_of.top, lengths_of.dup
    if page.coder is not None and max([*top, *dup]) < _COMPILED_MAX \
            and size < _COMPILED_MAX_WORDS:
        # The same bounds and counts in C (warcdeboil.corpus._words), this function the oracle.
        flagged = page.coder.ngram_flags(page.codes, chars, *lengths_of.compiled,
                                         rules.dup_ngrams_union)
        return [lengths_of.reasons[m] for m in flagged]
    ids, lengths = page.word_ids, page.word_lengths
    ends = np.zeros(size + 1, np.int64)
    np.cumsum(lengths, out=ends[1:])
    keys = ids
    dup_left = sorted(dup)
    most = size  # how often the most frequent n-gram occurs, at most
    with np.errstate(over="ignore"):
        for m in range(2, min(max([*top, *dup]), size) + 1):
            keys = keys[:-1] * _MULTIPLIER + ids[m - 1:]
            words_chars = ends[m:] - ends[:-m]  # each n-gram's words' characters
            longest = int(words_chars.max())
            if m in top:
                # No n-gram occurs more often than the most frequent shorter one: count only
                # when that many of the longest n-gram would pass the threshold. The spaces
                # written between its n words count too.
                n, limit = top[m]
                if most * (longest + n - 1) / chars > limit:
                    most, covered = _top_chars(keys, words_chars + (n - 1), limit * chars)
                    if covered / chars > limit:
                        reasons.append(f"top_{n}_gram")
            if m in dup_left:
                # Characters of the words (not the spaces) of the n-grams that repeat an
                # earlier one, at most: so many repeats, each as long as the longest n-gram.
                ranked = np.sort(keys)
                repeats = int(np.count_nonzero(ranked[1:] == ranked[:-1]))
                bound = repeats * longest
                lowest = min(dup[k][1] for k in dup_left)
                if bound / chars > lowest:
                    at = _repeats_at(keys)
                    bound = int(lengths[_covered(at, m, size)].sum())
                # What repeats at m + 1 words repeats at m: no longer n-gram counts more
                # characters than the words covered now, so once those are under every
                # threshold left, stop.
                if bound / chars <= lowest:
                    dup_left = []
                else:
                    n, limit = dup[m]
                    counted = bound if rules.dup_ngrams_union else _left_to_right(at, m, ends)
                    if counted / chars > limit:
                        reasons.append(f"dup_{n}_gram")
                    dup_left.remove(m)
            if not dup_left and m >= max(top, default=0):
                break
    return reasons


def _top_chars(keys: np.ndarray, spans: np.ndarray, enough: float) -> tuple[int, int]:
    """How often the most frequent n-gram occurs, and the characters of all its occurrences (of
    n-grams as frequent, the first in the text), as written: its words and a space between each
    two (``spans``). Where even the longest n-gram so often stays under ``enough``, which is
    first does not matter: the longest stands for it."""
    ranked = np.sort(keys)
    runs = np.diff(np.flatnonzero(np.concatenate(([True], ranked[1:] != ranked[:-1], [True]))))
    best = int(runs.max())
    if best * int(spans.max()) <= enough:
        return best, best * int(spans.max())
    if best == 1:  # every n-gram once: the first of them
        return 1, int(spans[0])
    wanted = ranked[np.cumsum(runs)[runs == best] - 1]
    found = keys == wanted[0] if len(wanted) == 1 else np.isin(keys, wanted)
    return best, best * int(spans[int(np.argmax(found))])


def _repeats_at(keys: np.ndarray) -> np.ndarray:
    """Where n-grams occur again after their first occurrence, in the order of the text (a
    stable sort puts each n-gram's first occurrence first)."""
    order = np.argsort(keys, kind="stable")
    ranked = keys[order]
    return np.sort(order[1:][ranked[1:] == ranked[:-1]])


def _covered(starts: np.ndarray, n: int, size: int) -> np.ndarray:
    """Which of ``size`` words lie in at least one of the n-grams starting at ``starts``."""
    edges = np.bincount(starts, minlength=size + 1) - np.bincount(starts + n, minlength=size + 1)
    return np.cumsum(edges[:-1]) > 0


def _left_to_right(repeats: np.ndarray, n: int, ends: np.ndarray) -> int:
    """Characters of the repeated n-grams taken from the left, each one that does not overlap
    the one taken before it."""
    counted = 0
    free = 0  # the first word the next n-gram taken may start at
    for start in repeats.tolist():
        if start >= free:
            counted += int(ends[start + n] - ends[start])
            free = start + n
    return counted
