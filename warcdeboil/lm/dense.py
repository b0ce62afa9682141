"""n-gram lookups of a small model by rows: each order's n-grams in a table indexed by their
context's row (in the order below) and their last unit's row, so that the row of the n-gram
ending at each unit of a text is one gather from the row of its context, with no key hashed
and no search. What ``LanguageModel._log10_probs`` computes, to the last bit, faster.

The tables hold (rows of the order below + 1) x (unigrams) entries of 4 bytes each: that fits
a character model (English: 160 units, 42 MB for orders 2 to 5), not a word model. A model whose
tables would exceed ``DENSE_BYTES`` is scored by its hashed keys (``keyindex``) instead.

Every n-gram's context is itself in the model (the backoff form: ``Level.contexts``), so an
n-gram whose context is absent is absent: the chain of rows stops there.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .kneserney import Level

__all__ = ["DENSE_BYTES", "DenseLevels"]

# The memory a model's tables may take. The character model of 4 M units of English text
# (benchmarks/lm_cost.py's model) takes 42 MB; its lookups then cost half as much as by keys
# (0.21 against 0.41 CPU-s for dragnet's cleaned text, measured).
DENSE_BYTES = 48 << 20


class DenseLevels:
    """The tables of a model's orders 2 and up (see the module's docstring)."""

    def __init__(self, levels: Sequence[Level]) -> None:
        """``levels``: a model's, up to the first empty one (the longer ones are not read)."""
        self.levels = levels
        self.width = len(levels[0])
        self.tables: list[np.ndarray] = []
        for below, level in zip(levels, levels[1:], strict=False):
            # Entry (context row + 1) * width + unit row: the n-gram's row + 1; 0 where absent
            # (context row -1, the first block, is no context).
            table = np.zeros((len(below) + 1) * self.width, np.int32)
            table[(level.contexts.astype(np.int64) + 1) * self.width + level.words] = \
                np.arange(1, len(level) + 1, dtype=np.int32)
            self.tables.append(table)
        # The longest order's log10 p by row + 1 (the first: no such n-gram, backed off).
        self._top = np.concatenate([[np.nan], levels[-1].logp]).astype(levels[-1].logp.dtype)

    @staticmethod
    def usable(levels: Sequence[Level]) -> Sequence[Level]:
        """The levels the tables are made of (up to the first empty one: ``_log10_probs``
        reads no longer one), or none when they would take more than ``DENSE_BYTES``."""
        used = list(levels)
        for k, level in enumerate(levels):
            if not len(level):
                used = used[:k]
                break
        width = len(used[0]) if used else 0
        size = sum((len(below) + 1) * width * 4 for below in used[:-1])
        return used if len(used) >= 2 and size <= DENSE_BYTES else []

    def log10_probs(self, rows: np.ndarray) -> np.ndarray:
        """``LanguageModel._log10_probs`` of unigram rows ``rows`` (a boundary's first)."""
        n = len(rows)
        boundary = rows == rows[0]
        # In 32 bits (the tables hold fewer than 2**31 entries): half the memory to go through.
        unit = rows[1:].astype(np.int32, copy=False)
        width = np.int32(self.width)
        # The row + 1 of the n-gram of each order ending at each position (0: absent), from
        # the row of its context ending at the position before. From order 3 on, a context
        # that holds a line boundary past its first unit reaches over the line: absent.
        inner = (~boundary[:-1]).astype(np.int32)
        found: list[np.ndarray] = []
        context = rows[:-1].astype(np.int32) + np.int32(1)
        for k, table in enumerate(self.tables, 2):
            if k > 2:
                context = found[-1][:-1] * inner
            at = np.zeros(n, np.int32)
            np.take(table, context * width + unit, out=at[1:])
            found.append(at)
        result = np.take(self._top, found[-1][1:]).astype(np.float64)
        rest = np.flatnonzero(found[-1][1:] == 0)
        if len(rest):
            result[rest] = self._backoff(rows, found, boundary, rest)
        return result

    def _backoff(self, rows: np.ndarray, found: list[np.ndarray], boundary: np.ndarray,
                 rest: np.ndarray) -> np.ndarray:
        """log10 p of the predicted positions ``rest`` (``rows[rest + 1]``) whose longest
        n-gram is not in the model, order after order as ``_log10_probs`` adds it up."""
        levels = self.levels
        at = rest + 1
        positions = np.arange(len(rows))
        last = np.maximum.accumulate(np.where(boundary, positions, 0))
        since = at - last[rest]  # units since the boundary before each one
        result = np.take(levels[0].logp, rows[at]).astype(np.float64)
        below_rows = rows[rest]  # the context's row in the order below, unigrams first
        below_hit = np.ones(len(rest), bool)
        for k in range(2, len(levels) + 1):
            level, below = levels[k - 1], levels[k - 2]
            row = found[k - 2][at] - 1
            hit = row >= 0
            valid = since >= k - 1
            context_bow = np.where(below_hit, np.take(below.bow, below_rows, mode="clip"), 0.0)
            result = np.where(hit, np.take(level.logp, row, mode="clip"),
                              np.where(valid, result + context_bow, result))
            below_rows, below_hit = found[k - 2][rest] - 1, found[k - 2][rest] > 0
        return result
