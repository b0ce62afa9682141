"""The noise score of a line: how far it lies, on the most telling of five signals, outside
what lines of real text look like under the same model.

Each signal is a statistic of a line under the word model or the character model, larger for
noisier lines:

- ``context``: minus the t statistic of how much the n-gram context raises each word's
  probability above its plain frequency (log10 p(w | context) - log10 f(w), clipped to
  [-1, 1.5], mean over the line divided by its standard error). Sentences get help from their
  context; word salad and shuffled words, made of the same common words, do not.
- ``rare words``: the share of the line's words the model gives p below 1e-3 (keyword lists,
  menus, random strings).
- ``characters``: the character model's log10 perplexity (random strings, markup debris).
- ``worst characters``: the surprise (-log10 p) of the line's two least likely characters in
  their context (mojibake's "â€™", navigation's "Home | News").
- ``rarest character``: the surprise of the line's rarest character by plain frequency (a
  character the language hardly uses: mojibake, symbols).

What "real" looks like is measured when the model is trained: a sample of the training texts is
held out of the counts (``HOLD_OUT_EVERY``, up to ``CALIBRATION_LINES`` lines), scored by the
finished model, and each signal's values on those lines are kept, apart for short and long lines
(``SHORT_UNITS``). A line's surprise on a signal is -log10 of the share of held-out lines of its
length group at least as extreme (past their top ``TAIL``, an exponential tail with that top's
mean excess as its scale). The noise score is one minus the smallest share: no weights fitted on
made-up noise, so it follows the language and the crawl the model was trained on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .chars import char_text

if TYPE_CHECKING:
    from .model import LanguageModel

__all__ = ["CALIBRATION_LINES", "HOLD_OUT_EVERY", "SIGNALS", "Calibration", "line_signals"]

SIGNALS = ("context", "rare words", "characters", "worst characters", "rarest character")
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
_MIN_GROUP = 20  # a length group with fewer held-out lines borrows all of them


def _per_line(rows: np.ndarray) -> tuple[np.ndarray, int]:
    line = np.cumsum(rows[:-1] == rows[0]) - 1  # the line of each predicted unit
    return line, (int(line[-1]) + 1 if len(line) else 0)


def _lowest(line: np.ndarray, values: np.ndarray, lines: int, k: int) -> np.ndarray:
    """The sum of the ``k`` lowest values of each line."""
    order = np.lexsort((values, line))
    first = np.searchsorted(line[order], np.arange(lines))
    rank = np.arange(len(order)) - first[line[order]]
    return np.bincount(line[order], weights=np.where(rank < k, values[order], 0.0),
                       minlength=lines)


def word_signals(model: LanguageModel, text: str) -> np.ndarray:
    """``context`` and ``rare words`` of each line of ``text``, and its number of units."""
    rows = model.unit_rows(text, keep_empty=True)
    logp = model._log10_probs(rows)
    line, lines = _per_line(rows)
    units = np.bincount(line, minlength=lines)
    gain = np.clip(logp - model.frequencies[rows[1:]], *_CLIP)
    mean = np.bincount(line, weights=gain, minlength=lines) / units
    square = np.bincount(line, weights=gain * gain, minlength=lines) / units
    spread = np.sqrt(np.maximum(square - mean * mean, 1e-3))
    rare = np.bincount(line, weights=logp < -3.0, minlength=lines) / units
    return np.column_stack([-mean / spread * np.sqrt(units), rare, units - 1])


def char_signals(chars: LanguageModel, text: str) -> np.ndarray:
    """``characters``, ``worst characters`` and ``rarest character`` of each line."""
    rows = chars.unit_rows(char_text(text), keep_empty=True)
    logp = chars._log10_probs(rows)
    line, lines = _per_line(rows)
    units = np.bincount(line, minlength=lines)
    rarest = np.zeros(lines)
    np.minimum.at(rarest, line, chars.frequencies[rows[1:]])
    return np.column_stack([-np.bincount(line, weights=logp, minlength=lines) / units,
                            -_lowest(line, logp, lines, 2), -rarest])


def line_signals(model: LanguageModel, text: str) -> tuple[np.ndarray, np.ndarray]:
    """The five ``SIGNALS`` of each line of ``text`` (one row a line, empty lines included),
    and each line's number of word units; ``model`` must have a character component."""
    assert model.chars is not None
    words = word_signals(model, text)
    return np.hstack([words[:, :2], char_signals(model.chars, text)]), words[:, 2]


@dataclass
class Calibration:
    """Each signal's sorted values on held-out real lines, short ones (``groups[0]``) apart
    from the others (``groups[1]``): arrays of shape (signals, lines)."""

    groups: tuple[np.ndarray, np.ndarray]

    @classmethod
    def fit(cls, signals: np.ndarray, units: np.ndarray) -> Calibration:
        short = units < SHORT_UNITS
        groups = []
        for chosen in (short, ~short):
            if chosen.sum() < _MIN_GROUP:
                chosen = np.ones(len(units), bool)
            groups.append(np.sort(signals[chosen].T, axis=1).astype(np.float32))
        return cls((groups[0], groups[1]))

    def surprises(self, signals: np.ndarray, units: np.ndarray) -> np.ndarray:
        """-log10 of the share of held-out lines at least as extreme, a column a signal: the
        held-out lines' own shares up to their top ``TAIL``, an exponential tail fitted to
        that top beyond it (the top of a crawl's text holds junk of its own: a tail drawn
        from its largest value would make every line past it look alike)."""
        out = np.empty(signals.shape)
        long = units >= SHORT_UNITS
        for group, chosen in zip(self.groups, (~long, long), strict=True):
            if not chosen.any():
                continue
            n = group.shape[1]
            start = min(int(n * (1 - TAIL)), n - 1)
            for s, values in enumerate(group):
                x = signals[chosen, s]
                share = 1.0 - np.searchsorted(values, x, side="right") / (n + 1)
                edge = float(values[start])
                scale = max(float(values[start:].mean()) - edge, 1e-6)
                tail = (1.0 - start / (n + 1)) * np.exp(-np.maximum(x - edge, 0.0) / scale)
                share = np.where(x > edge, np.minimum(share, tail), share)
                out[chosen, s] = -np.log10(np.maximum(share, 1e-300))
        return out

    def scores(self, signals: np.ndarray, units: np.ndarray) -> np.ndarray:
        """One minus the smallest share of held-out lines as extreme, over the signals."""
        if not len(signals):
            return np.zeros(0)
        return 1.0 - np.power(10.0, -self.surprises(signals, units).max(axis=1))

    def arrays(self, prefix: str) -> dict[str, np.ndarray]:
        return {f"{prefix}short": self.groups[0], f"{prefix}long": self.groups[1]}

    @classmethod
    def read(cls, data: Any, prefix: str) -> Calibration:
        """The calibration ``arrays`` wrote, from a loaded numpy archive."""
        return cls((np.asarray(data[f"{prefix}short"], np.float32),
                    np.asarray(data[f"{prefix}long"], np.float32)))
