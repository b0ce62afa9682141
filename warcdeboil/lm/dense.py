"""n-gram lookups of a small model by rows: each order's n-grams in a table indexed by their
context's row (in the order below) and their last unit's row, so that the row of the n-gram
ending at each unit of a text is one gather from the row of its context, with no key hashed
and no search. What ``LanguageModel._log10_probs`` computes, to the last bit, faster.

The tables hold (rows of the order below + 1) x (columns) entries of 4 bytes each. A column is
a unit among the commonest of the training text, as many as ``DENSE_BYTES`` allows, and one
more for every other unit: the n-grams ending in such a rare unit are looked up by their keys
(``keyindex``), from the key of their context's row. A character model of English text fits
with room to spare (160 units); one of mixed text has hundreds of characters (the gold text of
../shared/eval: 642, 186 MB of tables), whose commonest 164 make 99.94 % of the text. A model
whose tables would hold fewer than ``MIN_COLUMNS`` columns (a word model) is scored by its keys
alone.

Every n-gram's context is itself in the model (the backoff form: ``Level.contexts``), so an
n-gram whose context is absent is absent: the chain of rows stops there.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .kneserney import Level
from .units import extend_keys

__all__ = ["DENSE_BYTES", "MIN_COLUMNS", "DenseLevels"]

# The memory a model's tables may take. The character model of the gold text of ../shared/eval
# (642 units) gets 81 columns, which hold all but 0.09 % of dragnet's cleaned text: its lookups
# cost 0.23 CPU-s there, by keys 0.51 to 0.62, and 48 MB (164 columns) saves nothing more on
# them but takes 0.12 CPU-s to make, against 0.045 (measured, one process a run).
DENSE_BYTES = 24 << 20
# Fewer columns than this and too many units would be looked up by keys besides the tables.
MIN_COLUMNS = 64


class DenseLevels:
    """The tables of a model's orders 2 and up (see the module's docstring)."""

    def __init__(self, levels: Sequence[Level], frequencies: np.ndarray | None = None) -> None:
        """``levels``: a model's, up to the first empty one (the longer ones are not read);
        ``frequencies``: log10 of each unigram's share of the text (else its probability),
        which orders the units for their columns."""
        self.levels = levels
        width = len(levels[0])
        rows = _table_rows(levels)
        self.width = min(width, DENSE_BYTES // (4 * rows) - 1)  # columns of units, and one more
        share = levels[0].logp if frequencies is None else frequencies
        commonest = np.argsort(-np.asarray(share, np.float64), kind="stable")[:self.width]
        # Each unigram row's column; ``self.width`` for the rest, whose entries stay 0.
        self._columns = np.full(width, self.width, np.int32)
        self._columns[commonest] = np.arange(self.width, dtype=np.int32)
        self.tables: list[np.ndarray] = []
        stride = self.width + 1
        for below, level in zip(levels, levels[1:], strict=False):
            # Entry (context row + 1) * stride + column: the n-gram's row + 1; 0 where absent
            # (context row -1, the first block, is no context) or its unit has no column.
            table = np.zeros((len(below) + 1) * stride, np.int32)
            column = self._columns[level.words]
            kept = column < self.width
            table[(level.contexts[kept].astype(np.int64) + 1) * stride + column[kept]] = \
                np.arange(1, len(level) + 1, dtype=np.int32)[kept]
            self.tables.append(table)
        # The longest order's log10 p by row + 1 (the first: no such n-gram, backed off).
        self._top = np.concatenate([[np.nan], levels[-1].logp]).astype(levels[-1].logp.dtype)

    @staticmethod
    def usable(levels: Sequence[Level]) -> Sequence[Level]:
        """The levels the tables are made of (up to the first empty one: ``_log10_probs``
        reads no longer one), or none when they would hold fewer than ``MIN_COLUMNS`` columns
        within ``DENSE_BYTES``."""
        used = list(levels)
        for k, level in enumerate(levels):
            if not len(level):
                used = used[:k]
                break
        if len(used) < 2:
            return []
        columns = min(len(used[0]), DENSE_BYTES // (4 * _table_rows(used)) - 1)
        return used if columns >= min(MIN_COLUMNS, len(used[0])) else []

    def log10_probs(self, rows: np.ndarray) -> np.ndarray:
        """``LanguageModel._log10_probs`` of unigram rows ``rows`` (a boundary's first)."""
        n = len(rows)
        boundary = rows == rows[0]
        # In 32 bits (the tables hold fewer than 2**31 entries): half the memory to go through.
        unit = rows[1:].astype(np.int32, copy=False)
        stride = np.int32(self.width + 1)
        # The row + 1 of the n-gram of each order ending at each position (0: absent), from
        # the row of its context ending at the position before. From order 3 on, a context
        # that holds a line boundary past its first unit reaches over the line: absent.
        inner = (~boundary[:-1]).astype(np.int32)
        found: list[np.ndarray] = []
        column = np.take(self._columns, unit)
        rare = np.flatnonzero(column == self.width)  # units without a column: by keys
        ids = np.take(self.levels[0].keys, np.take(unit, rare)) if len(rare) else None
        context = rows[:-1].astype(np.int32) + np.int32(1)
        for k, table in enumerate(self.tables, 2):
            if k > 2:
                context = found[-1][:-1] * inner
            at = np.zeros(n, np.int32)
            np.take(table, context * stride + column, out=at[1:])
            if ids is not None:
                self._by_keys(k, context, rare, ids, at)
            found.append(at)
        result = np.take(self._top, found[-1][1:]).astype(np.float64)
        rest = np.flatnonzero(found[-1][1:] == 0)
        if len(rest):
            result[rest] = self._backoff(rows, found, boundary, rest)
        return result

    def _by_keys(self, k: int, context: np.ndarray, rare: np.ndarray, ids: np.ndarray,
                 at: np.ndarray) -> None:
        """The rows + 1 of order ``k``'s n-grams ending at the positions ``rare`` (their units:
        ``ids``) into ``at``: each n-gram's key made from its context's (the row + 1 of the
        n-gram of the order below ending before it, ``context``; 0: absent, so is the n-gram),
        as ``_log10_probs`` makes keys, and looked up."""
        below, level = self.levels[k - 2], self.levels[k - 1]
        before = np.take(context, rare)
        known = before > 0
        if not known.any():
            return
        keys = extend_keys(np.take(below.keys, before[known] - 1), ids[known])
        row, hit = level.rows(keys)
        at[1 + rare[known]] = np.where(hit, row + 1, 0)

    def _backoff(self, rows: np.ndarray, found: list[np.ndarray], boundary: np.ndarray,
                 rest: np.ndarray) -> np.ndarray:
        """log10 p of the predicted positions ``rest`` (``rows[rest + 1]``) whose longest
        n-gram is not in the model, order after order as ``_log10_probs`` adds it up."""
        levels = self.levels
        at = rest + 1
        # Units since the boundary at or before each one's context (rows[0] is one), found for
        # these positions alone: a tenth of the text, where a running maximum over every
        # position took half of the lookups' time (measured, dragnet's characters).
        breaks = np.flatnonzero(boundary)
        since = at - np.take(breaks, np.searchsorted(breaks, rest, side="right") - 1)
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


def _table_rows(levels: Sequence[Level]) -> int:
    """The rows of the tables of ``levels`` together: each order's but the longest, and one
    more each (no context)."""
    return sum(len(below) + 1 for below in levels[:-1])
