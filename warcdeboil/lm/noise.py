"""The noise score of a line: how far it lies, on the most telling of four tests, outside
what lines of real text look like under the same model.

Each signal is a statistic of a line under the word model or the character model, larger for
noisier lines:

- ``context``: minus the t statistic of how much the n-gram context raises each word's
  probability above its plain frequency (log10 p(w | context) - log10 f(w), clipped to
  [-1, 1.5], mean over the line divided by its standard error, the spread of the line's gains
  taken as at least 0.3). Sentences get help from their context; word salad and shuffled
  words, made of the same common words, do not. The floor keeps a short line whose words all
  miss the help evenly (a headline of word pairs the model never saw: "Poll: Vista gets vote
  of no confidence") from a t statistic as large as a long shuffled line's; with the floor of
  versions 3 to 5, ``context, versions 3 to 5`` (a spread of at least 0.03), such headlines
  outranked every menu of some crawls (benchmarks/results/perplexity-2026-11-25e.md, in git
  at 784335a).
- ``order``: how much less likely the line is in its own order than with its words (the
  whitespace-separated ones, punctuation attached) in reverse order, per unit. A sentence reads
  far better forwards; shuffled words read as badly either way. Unlike ``context`` it compares
  the line with itself, so text of a domain the model knows little stays near zero.
- ``rare words``: the share of the line's words the model gives p below 1e-3 (keyword lists,
  menus, random strings).
- ``characters``: the character model's log10 perplexity (random strings, markup debris).
- ``worst characters``: the surprise (-log10 p) of the line's two least likely characters in
  their context (mojibake's "â€™", navigation's "Home | News").
- ``rarest character``: the surprise of the line's rarest character by plain frequency (a
  character the language hardly uses: mojibake, symbols).
- ``mojibake``: how many sequences the line holds that UTF-8 read as cp1252 or Latin-1 makes
  ("â€™", "Ã©", "Â "): a lead byte's character followed by continuation bytes' characters.
- ``rare and odd unseen words``: ``rare words``, plus how far past half of the line's words
  (its units that are not punctuation marks) are units the model never saw (``2 * share -
  1``, 0 up to half), as far as the line's characters are odd too (its ``characters`` past
  1.0, in full at 2.0: past the characters of 95 % of real English lines). A line of strings
  no text has (random characters, hashes, session ids) then reads as further out than a
  headline whose words are rare but known. Random strings split at their marks into known
  pieces ("_", "%", "x"): counted among all units their unseen share is diluted, among words
  it is whole. Names the model never saw are unseen words too ("Malwal Arop and Col Madul
  Rilpiou."), but their characters are a language's: the gate leaves them where they were
  (counted without it, such lines rose above navigation). Below half it adds nothing.
- ``no common words``: the share of the line's units (its ``</s>`` not counted) that are not
  among the language's commonest, the units that together make half of the training text
  (``LanguageModel.common_rows``: about 60 in English, "the", "of", ",", "." and the like).
  Text holds its language's function words and punctuation, even a headline ("Poll: Vista
  gets vote of no confidence", "Modi, BJP leaders discuss poll strategies"); a menu of
  concatenated items, a keyword list or a tag cloud is content words alone ("Deals Airports
  Beach Family Destinations"). Read with ``rare words``, which such lines share with
  headlines of rare words (benchmarks/results/perplexity-2026-11-25.md).
- ``context, versions 3 to 5`` and ``rare and unseen words``: the signals of older files
  (``context`` with a spread of at least 0.03; ``rare words`` plus ``2 * share - 1`` of the
  unseen share among all units, without the gate), read only for those.

What "real" looks like is measured when the model is trained: a sample of the training texts is
held out of the counts (``HOLD_OUT_EVERY``, up to ``CALIBRATION_LINES`` lines), scored by the
finished model, and each signal's values on those lines are kept, apart for short and long lines
(``SHORT_UNITS``). A line's surprise on a signal is -log10 of the share of held-out lines of its
length group at least as extreme (past their top ``TAIL``, an exponential tail with that top's
mean excess as its scale). Each of the ``TESTS`` adds up the surprises of its signals and is read
the same way, as the share of held-out lines whose sum is as large; the noise score is one minus
the smallest of the tests' shares (past the shares the held-out lines can attest, a slower
approach to 1, so that a line further out always scores higher). No weights are fitted on
made-up noise, so it follows the language and the crawl the model was trained on. Signals that
fail together on one kind of noise share a test, so that two moderate surprises count as one
large one (word order), while signals that a real line of an unfamiliar site can trip on its own
(a rare word, an odd character) are not read alone: taking the most extreme of seven single
signals flagged too many real lines.

Files of version 3 hold a calibration of the five signals of that version (``LEGACY``): they
are scored as then, by the most extreme of those five surprises. Files of versions 4, 5 and 6
hold that version's signals and tests (``VERSION_4``, ``VERSION_5``, ``VERSION_6``), and score
as then too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .points import Found, code_points, reversed_rows

if TYPE_CHECKING:
    from .model import LanguageModel

__all__ = ["CALIBRATED", "CALIBRATION_LINES", "GATE", "HOLD_OUT_EVERY", "LEGACY", "SIGNALS",
           "TESTS", "VERSION_4", "VERSION_5", "VERSION_6", "Calibration", "filter_scores",
           "line_signals", "lower_signals"]

# What ``line_signals`` computes: the signals of this version's files (``CALIBRATED``), then
# those only older files read.
SIGNALS = ("context", "order", "rare words", "characters", "worst characters",
           "rarest character", "mojibake", "rare and odd unseen words", "no common words",
           "context, versions 3 to 5", "rare and unseen words")
CALIBRATED = SIGNALS[:9]
_ODD = ("worst characters", "rarest character", "mojibake")
# The signals each test adds up (their surprises), chosen by leaving out in turn dragnet, cleaneval
# and l3s-gn1 of benchmarks/perplexity.py's second check and by its dev and test splits (git show
# 4d1ff04:benchmarks/results/perplexity-2026-11-25b.md): word order; how unlike the language's words
# the line is (its context helps a sentence of rare words); rare words alone (menus of common nouns:
# without it they fell below the bigram baseline); characters a sentence has no use for. The second
# test reads rare words with odd unseen ones, the third plain rare words (perplexity-2026-11-25d.md
# and -25e.md, at git 6b5f730 and 784335a: read there too, or as a test of their own, unseen words
# lifted real lines above navigation) with the lack of common words (perplexity-2026-11-25.md: menus
# above headlines of rare words, navigation further above sentences).
TESTS = (("context", "order"), ("context", "rare and odd unseen words", "characters"),
         ("rare words", "no common words"), _ODD)
# The signals of a version 3 calibration, scored by the most extreme of the five.
LEGACY = ("context, versions 3 to 5", "rare words", "characters", "worst characters",
          "rarest character")
# The signals and tests of a version 4 calibration (no unseen words) and of a version 5 one
# (unseen words among all units, no gate; context with the older floor), scored as then.
_OLD_CONTEXT = "context, versions 3 to 5"
VERSION_4 = ((_OLD_CONTEXT, "order", "rare words", "characters", *_ODD),
             ((_OLD_CONTEXT, "order"), (_OLD_CONTEXT, "rare words", "characters"),
              ("rare words",), _ODD))
VERSION_5 = ((*VERSION_4[0], "rare and unseen words"),
             ((_OLD_CONTEXT, "order"), (_OLD_CONTEXT, "rare and unseen words", "characters"),
              ("rare words",), _ODD))
# Version 6: the eight signals before ``no common words``, and rare words alone in the third
# test.
VERSION_6 = (SIGNALS[:8], (TESTS[0], TESTS[1], ("rare words",), _ODD))
# One text in this many is held out of training to calibrate the noise score, until this many
# lines are held out: enough for tail shares of 1 in a few thousand, and scoring them costs a
# tenth of a second (a larger sample moved no AUC in benchmarks/perplexity.py).
HOLD_OUT_EVERY = 32
CALIBRATION_LINES = 5000
# With fewer held-out lines than this the model keeps no calibration (the texts are counted
# instead) and its noise score is the older logistic (``model.NOISE_WEIGHTS``).
MIN_CALIBRATION_LINES = 200
# Lines with fewer units than this are compared with short held-out lines only (headings,
# captions and list items are not sentences, and their statistics are noisier).
SHORT_UNITS = 5
# The top share of held-out values past which a signal's tail is an exponential fitted to it.
TAIL = 0.05
_CLIP = (-1.0, 1.5)  # a word's context gain counts at most this much either way
# The spread of a line's context gains is taken as at least this (squared), and was at least
# the older one in versions 3 to 5.
_SPREAD = 0.3 ** 2
_OLD_SPREAD = 1e-3
# "rare and odd unseen words" counts the unseen words in full where the line's characters
# (log10 perplexity under the character model) reach the second value, none up to the first.
_ODD_CHARACTERS = (1.0, 2.0)
# The noise filter scores in full only the lines whose lower bound (``lower_signals``) lies
# within this many times the limit's share of held-out lines (``filter_scores``): at the default
# 0.9999, lower bounds above 0.9. Over the five sets of ../shared/eval (100,302 lines, content
# mode, the model of their gold text), every line scoring above 0.9999 was scored in full with
# a gate of 1000 or more (lower bounds above 0.8 or 0.9), 4.2 % of the characters at 1000; with
# 10,000 (0.99), one of the 71 was not (measured in-process: docs/language-model.md, "What the
# noise score costs").
GATE = 1000.0
_MIN_GROUP = 20  # a length group with fewer held-out lines borrows all of them
_LOG10_E = float(np.log10(np.e))


def _per_line(rows: np.ndarray) -> tuple[np.ndarray, int]:
    line = np.cumsum(rows[:-1] == rows[0]) - 1  # the line of each predicted unit
    return line, (int(line[-1]) + 1 if len(line) else 0)


def _two_lowest(line: np.ndarray, values: np.ndarray, lines: int) -> np.ndarray:
    """The sum of the two lowest values of each line (the lowest alone where a line has one
    value). Every line has a value (it predicts its ``</s>`` at least) and a line's values are
    contiguous: two reductions by segment, no sort."""
    starts = np.searchsorted(line, np.arange(lines))
    lowest = np.minimum.reduceat(values, starts)
    # Drop one occurrence of each line's lowest (its first), then take the lowest again.
    at = np.flatnonzero(values == lowest[line])
    # A line's positions are in order: its first is where the line changes.
    changes = np.ones(len(at), bool)
    changes[1:] = line[at][1:] != line[at][:-1]
    first = at[changes]
    rest = values.copy()
    rest[first] = np.inf
    second = np.minimum.reduceat(rest, starts)
    return lowest + np.where(np.isfinite(second), second, 0.0)


@dataclass(frozen=True, slots=True)
class Scan:
    """A text's units under a word model and their log10 p (``LanguageModel.scan``): what its
    perplexity and its noise score share. ``found``: where each unit lies
    (``points.WordUnits.find``; None where the text was split into strings); ``points``: its
    code points."""

    text: str
    points: np.ndarray
    found: Found | None
    rows: np.ndarray
    logp: np.ndarray


def word_signals(model: LanguageModel, text: str, scan: Scan | None = None, *,
                 order: bool = True) -> np.ndarray:
    """``context``, ``order``, ``rare words``, ``context, versions 3 to 5`` and ``rare and
    unseen words`` of each line of ``text``, how far past half of its words are unseen
    (``2 * share - 1``, 0 up to half), ``no common words``, and its number of units.
    ``scan``: ``model.scan(text)``, when made already; ``order`` False: ``order`` is left
    out (-inf: no surprise), the words not read backwards."""
    if scan is None:
        scan = model.scan(text)
    rows, logp = scan.rows, scan.logp
    line, lines = _per_line(rows)
    units = np.bincount(line, minlength=lines)
    gain = np.clip(logp - model.frequencies[rows[1:]], *_CLIP)
    mean = np.bincount(line, weights=gain, minlength=lines) / units
    square = np.bincount(line, weights=gain * gain, minlength=lines) / units
    variance = square - mean * mean
    rare = np.bincount(line, weights=logp < -3.0, minlength=lines) / units
    # The line's units (its </s> not among them) the vocabulary lacks: their share among all
    # units, and among those that are not punctuation marks (words).
    predicted = rows[1:]
    unseen = np.bincount(line, weights=predicted == model._unk_row, minlength=lines)
    word_units = np.bincount(line, weights=~model.mark_rows[predicted], minlength=lines) - 1
    # The units among the language's commonest, less the line's </s> when it is one of them.
    common = model.common_rows
    usual = np.bincount(line, weights=common[predicted], minlength=lines) - common[rows[0]]
    # The same lines with their words in reverse order (the same units, so the same count):
    # the units found rearranged, else the reversed text split again.
    if not order:
        backwards_gain = np.full(lines, -np.inf)
    elif scan.found is not None:  # line breaks where they were: the same line of each unit
        backwards, reverse_line = reversed_rows(scan.found), line
    else:
        backwards = model.unit_rows("\n".join(" ".join(words.split()[::-1])
                                              for words in text.split("\n")), keep_empty=True)
        reverse_line, _ = _per_line(backwards)
    if order:
        forwards = np.bincount(line, weights=logp, minlength=lines)
        reverse = np.bincount(reverse_line, weights=model._log10_probs(backwards),
                              minlength=lines)
        backwards_gain = (reverse - forwards) / units
    # (Each older signal is computed as its version did, to the last bit.)
    return np.column_stack([
        -mean / np.sqrt(np.maximum(variance, _SPREAD)) * np.sqrt(units),
        backwards_gain, rare,
        -mean / np.sqrt(np.maximum(variance, _OLD_SPREAD)) * np.sqrt(units),
        rare + np.maximum(2.0 * (unseen / np.maximum(units - 1, 1)) - 1.0, 0.0),
        np.maximum(2.0 * (unseen / np.maximum(word_units, 1)) - 1.0, 0.0),
        (units - 1 - usual) / np.maximum(units - 1, 1), units - 1])


# What UTF-8 read as cp1252 (or Latin-1) turns a character of two, three or four bytes into:
# the lead byte's character (Â-ß, à-ï, ð-ô), then one character for each continuation byte
# (0x80-0xBF: cp1252's € ‚ ƒ … Ÿ for 0x80-0x9F, or those code points themselves as Latin-1
# reads them, and U+00A0-U+00BF; U+FFFD where cp1252 has no character).
_CONTINUATION = "\u0080-\u00bf\u20ac\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030" \
                "\u0160\u2039\u0152\u017d\u2018\u2019\u201c\u201d\u2022\u2013\u2014" \
                "\u02dc\u2122\u0161\u203a\u0153\u017e\u0178\ufffd"
_MOJIBAKE = re.compile(f"[\u00c2-\u00df][{_CONTINUATION}]|[\u00e0-\u00ef][{_CONTINUATION}]{{2}}"
                       f"|[\u00f0-\u00f4][{_CONTINUATION}]{{3}}")
# The same as a table of the Basic Multilingual Plane, where every such character lies: the
# range, then the characters one by one (tests/test_lm_noise.py checks it against the pattern).
_CONTINUES = np.zeros(0x10000, bool)
_CONTINUES[0x80:0xC0] = True
_CONTINUES[[ord(c) for c in _CONTINUATION[3:]]] = True


def mojibake(text: str, lines: int, points: np.ndarray | None = None) -> np.ndarray:
    r"""How many sequences of UTF-8 read as cp1252 each of the ``lines`` lines of ``text``
    holds (``points``: its code points, when known already). On the code points: a lead
    character (U+00C2-U+00F4) followed by the continuation characters its byte calls for.
    The lead and continuation characters are apart, so no two sequences overlap and the count
    is that of ``_MOJIBAKE``'s matches.

    >>> mojibake("caf\u00c3\u00a9 ok\nit\u00e2\u20ac\u2122s na\u00efve", 2).tolist()
    [1.0, 1.0]
    """
    if points is None:
        points = code_points(text)
    found = np.zeros(lines)
    leads = np.flatnonzero((points >= 0xC2) & (points <= 0xF4))
    if not len(leads):
        return found
    n = len(points)
    lead = points[leads]
    needs = 1 + (lead >= 0xE0).astype(np.intp) + (lead >= 0xF0)
    whole = np.ones(len(leads), bool)
    for after in (1, 2, 3):
        at = leads + after
        follows = np.zeros(len(leads), bool)
        inside = at < n
        follows[inside] = _CONTINUES[np.minimum(points[at[inside]], 0xFFFF)]
        whole &= (needs < after) | follows
    breaks = np.flatnonzero(points == ord("\n"))
    found += np.bincount(np.searchsorted(breaks, leads[whole]), minlength=lines)
    return found


def char_signals(chars: LanguageModel, text: str, points: np.ndarray | None = None,
                 ) -> np.ndarray:
    """``characters``, ``worst characters`` and ``rarest character`` of each line
    (``points``: the code points of ``text``, when known already)."""
    rows = chars.char_rows(text, points)
    logp = chars._log10_probs(rows)
    line, lines = _per_line(rows)
    units = np.bincount(line, minlength=lines)
    starts = np.searchsorted(line, np.arange(lines))
    rarest = np.minimum.reduceat(chars.frequencies[rows[1:]], starts) if lines else np.zeros(0)
    return np.column_stack([-np.bincount(line, weights=logp, minlength=lines) / units,
                            -_two_lowest(line, logp, lines), -rarest])


def line_signals(model: LanguageModel, text: str, scan: Scan | None = None,
                 ) -> tuple[np.ndarray, np.ndarray]:
    """The ``SIGNALS`` of each line of ``text`` (one row a line, empty lines included), and
    each line's number of word units; ``model`` must have a character component. ``scan``:
    ``model.scan(text)``, when made already."""
    assert model.chars is not None
    if scan is None:
        scan = model.scan(text)
    words = word_signals(model, text, scan)
    chars = char_signals(model.chars, text, scan.points)
    low, high = _ODD_CHARACTERS
    odd = np.clip((chars[:, 0] - low) / (high - low), 0.0, 1.0)
    return np.hstack([words[:, :3], chars, mojibake(text, len(words), scan.points)[:, None],
                      (words[:, 2] + words[:, 5] * odd)[:, None], words[:, 6:7],
                      words[:, 3:5]]), words[:, 7]


def lower_signals(model: LanguageModel, text: str, scan: Scan | None = None,
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``line_signals`` without what costs most (the words read backwards and the character
    model: 0.2 and 0.5 CPU-s of cleaneval's 0.8): ``order``, ``characters``, ``worst
    characters`` and ``rarest character`` left out as -inf, which no held-out line is below,
    so that their surprise is 0; ``rare and odd unseen words`` taken as ``rare words`` (the
    characters not odd). Every other signal is the line's own, and a test's surprise grows
    with each of its signals: a calibration's score of these is at most the line's score.
    Also whether past half of each line's words are unseen (where the characters can add)."""
    if scan is None:
        scan = model.scan(text)
    words = word_signals(model, text, scan, order=False)
    none = np.full((len(words), 3), -np.inf)
    return (np.hstack([words[:, :3], none, mojibake(text, len(words), scan.points)[:, None],
                       words[:, 2:3], words[:, 6:7], words[:, 3:5]]), words[:, 7],
            words[:, 5] > 0)


def filter_scores(model: LanguageModel, scan: Scan, limit: float) -> np.ndarray:
    """What the noise filter at ``limit`` reads of each line of ``scan``'s text: its noise
    score where it may be near the limit, else a lower bound of it (``lower_signals``) that
    says the same of the line against the limit, or is taken to. The lower bound is exact
    above the limit (the line is dropped); at or below ``1 - GATE * (1 - limit)`` (0.9 for the
    default 0.9999) a long line without unseen words is taken to be below the limit. Short
    lines (their characters and word order tell most) and lines whose words are mostly
    unseen are scored in full; for a limit of 1 - 1 / GATE or below, every line whose lower
    bound is not above it."""
    calibration = model.calibration
    assert calibration is not None
    signals, units, unseen = lower_signals(model, scan.text, scan)
    scores = calibration.scores(signals, units)
    edge = 1.0 - GATE * (1.0 - limit)
    near = scores > edge if edge > 0.0 else np.ones(len(scores), bool)
    full = np.flatnonzero((scores <= limit) & (near | (units < SHORT_UNITS) | unseen))
    if len(full):
        lines = scan.text.split("\n")
        text = "\n".join([lines[i] for i in full.tolist()])
        exact, exact_units = line_signals(model, text)
        scores[full] = calibration.scores(exact, exact_units)
    return scores


def _fit_groups(values: np.ndarray, units: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The sorted columns of ``values`` (lines, columns) for short and for long lines, as
    arrays of shape (columns, lines); a group with too few lines takes all of them."""
    short = units < SHORT_UNITS
    groups = []
    for chosen in (short, ~short):
        if chosen.sum() < _MIN_GROUP:
            chosen = np.ones(len(units), bool)
        groups.append(np.sort(values[chosen].T, axis=1).astype(np.float32))
    return groups[0], groups[1]


def _surprises(groups: tuple[np.ndarray, np.ndarray], values: np.ndarray,
               units: np.ndarray) -> np.ndarray:
    """-log10 of the share of held-out lines at least as extreme, a column of ``values`` each:
    the held-out lines' own shares up to their top ``TAIL``, an exponential tail fitted to that top
    beyond it (the top of a crawl's text holds junk of its own: a tail drawn from its largest value
    would make every line past it look alike). Held-out lines equal to a value count as at least as
    extreme: a signal most lines share (no rare word, no mojibake) then surprises no one. Past a top
    that does not vary there is no tail to fit, and nothing to say how far is far: the share there
    is the line's own, 1 in n + 1 (ranking such lines by how far past they lie, one unit of the
    signal an e-fold, made the gold texts' own mojibake outrank random strings:
    benchmarks/results/perplexity-2026-11-25c.md, in git at 5085727). The tail is taken in
    logarithms, so however far a line lies, its surprise keeps growing."""
    out = np.empty(values.shape)
    long = units >= SHORT_UNITS
    for group, chosen in zip(groups, (~long, long), strict=True):
        if not chosen.any():
            continue
        n = group.shape[1]
        start = min(int(n * (1 - TAIL)), n - 1)
        x = values[chosen]
        below = np.column_stack([np.searchsorted(held, x[:, s], side="left")
                                 for s, held in enumerate(group)])
        surprise = -np.log10(1.0 - below / (n + 1))
        # The tails of all columns at once (a page is a few dozen lines: numpy calls are
        # the cost).
        edge = group[:, start].astype(np.float64)
        scale = group[:, start:].mean(axis=1, dtype=np.float64) - edge
        fitted = scale > 1e-6
        tail = -np.log10(1.0 - start / (n + 1)) \
            + np.maximum(x - edge, 0.0) / np.where(fitted, scale, 1.0) * _LOG10_E
        out[chosen] = np.where(fitted & (x > edge), np.maximum(surprise, tail), surprise)
    return out


def _test_sums(surprises: np.ndarray, signals: tuple[str, ...] = CALIBRATED,
               tests: tuple[tuple[str, ...], ...] = TESTS) -> np.ndarray:
    """Each of the ``tests``: the sum of its signals' surprises (a column of ``signals``
    each)."""
    return np.column_stack([surprises[:, [signals.index(name) for name in test]].sum(axis=1)
                            for test in tests])


@dataclass
class Calibration:
    """Each signal's sorted values on held-out real lines, short ones (``groups[0]``) apart
    from the others (``groups[1]``): arrays of shape (signals, lines); and each test's sums
    of surprises on the same lines (``tests``, shape (tests, lines)). ``signals`` and
    ``layout`` name the signals calibrated and the tests' signals: ``CALIBRATED`` and ``TESTS``,
    or an older file's (versions 4 to 6: ``VERSION_4`` to ``VERSION_6``; version 3: the five
    ``LEGACY`` signals and no tests)."""

    groups: tuple[np.ndarray, np.ndarray]
    tests: tuple[np.ndarray, np.ndarray] | None = None
    signals: tuple[str, ...] = CALIBRATED
    layout: tuple[tuple[str, ...], ...] = TESTS

    @classmethod
    def fit(cls, signals: np.ndarray, units: np.ndarray) -> Calibration:
        """From the ``SIGNALS`` of held-out lines (a row each) and their numbers of units: the
        ``CALIBRATED`` ones and ``TESTS``."""
        values = signals[:, :len(CALIBRATED)]
        groups = _fit_groups(values, units)
        sums = _test_sums(_surprises(groups, values, units))
        return cls(groups, _fit_groups(sums, units))

    def surprises(self, signals: np.ndarray, units: np.ndarray) -> np.ndarray:
        """-log10 of the share of held-out lines at least as extreme on each calibrated signal
        (``signals``: a column of ``SIGNALS`` each)."""
        chosen = [SIGNALS.index(name) for name in self.signals]
        return _surprises(self.groups, signals[:, chosen], units)

    def test_surprises(self, signals: np.ndarray, units: np.ndarray) -> np.ndarray:
        """-log10 of the share of held-out lines whose sum is at least as large, a column a
        test; a version 3 calibration's columns are its five signals' surprises."""
        surprises = self.surprises(signals, units)
        if self.tests is None:
            return surprises
        return _surprises(self.tests, _test_sums(surprises, self.signals, self.layout), units)

    def scores(self, signals: np.ndarray, units: np.ndarray) -> np.ndarray:
        """One minus the smallest share of held-out lines as extreme, over the tests, while
        that share is one the held-out lines can attest (1 in as many as the larger length
        group holds). Past it, the share is the tail's, which can be as small as 1e-40: one
        minus it would be 1.0 for every such line, so the score approaches 1 more slowly, as
        1 - share0 / (1 + ln 10 * (surprise - surprise0)) (the same value and slope where
        the two meet), and a line further out always scores higher."""
        if not len(signals):
            return np.zeros(0)
        surprise = self.test_surprises(signals, units).max(axis=1)
        limit = np.log10(max(group.shape[1] for group in self.groups) + 1.0)
        past = np.maximum(surprise - limit, 0.0)
        return 1.0 - np.power(10.0, -np.minimum(surprise, limit)) / (1.0 + np.log(10.0) * past)

    def arrays(self, prefix: str) -> dict[str, np.ndarray]:
        arrays = {f"{prefix}short": self.groups[0], f"{prefix}long": self.groups[1]}
        if self.tests is not None:
            arrays.update({f"{prefix}tests.short": self.tests[0],
                           f"{prefix}tests.long": self.tests[1]})
        return arrays

    @classmethod
    def read(cls, data: Any, prefix: str, version: int) -> Calibration:
        """The calibration ``arrays`` wrote, from a loaded numpy archive of that file
        ``version`` (3: five signals, no tests; 4, 5 and 6: seven, eight and eight signals,
        that version's tests)."""
        groups = (np.asarray(data[f"{prefix}short"], np.float32),
                  np.asarray(data[f"{prefix}long"], np.float32))
        tests = None
        if f"{prefix}tests.long" in data.files:
            tests = (np.asarray(data[f"{prefix}tests.short"], np.float32),
                     np.asarray(data[f"{prefix}tests.long"], np.float32))
        names, layout = {3: (LEGACY, ()), 4: VERSION_4, 5: VERSION_5,
                         6: VERSION_6}.get(version, (CALIBRATED, TESTS))
        if (tests is None) != (not layout):
            raise ValueError(f"a version {version} noise calibration "
                             f"{'without' if tests is None else 'with'} tests")
        for group in groups:
            if group.ndim != 2 or group.shape[0] != len(names):
                raise ValueError(f"a noise calibration of {group.shape[0]} signals, "
                                 f"not {len(names)}")
        for group in tests or ():
            if group.ndim != 2 or group.shape[0] != len(layout):
                raise ValueError(f"a noise calibration of {group.shape[0]} tests, "
                                 f"not {len(layout)}")
        return cls(groups, tests, names, layout)
