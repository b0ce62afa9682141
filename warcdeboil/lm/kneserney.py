"""Interpolated modified Kneser-Ney estimates from bounded counts, in backoff (ARPA) form.

For an n-gram ``h w`` kept in the model, with adjusted count ``a`` (see ``counts``)::

    p(w | h) = (a - D(a)) / S(h) + gamma(h) * p(w | h')       S(h): sum of a over h's n-grams
    gamma(h) = (sum of D(a) over h's kept n-grams + sum of a over its pruned ones) / S(h)

with three discounts an order (``D1``, ``D2``, ``D3+``, from its counts of counts, Chen and
Goodman's estimates) and the unigrams interpolated with the uniform distribution over the
vocabulary and ``<unk>``. ``gamma(h)`` is then the backoff weight of ``h``: an n-gram not
in the model gets ``gamma(h) * p(w | h')``, and the probabilities of a context sum to one
whatever was pruned (the mass of a pruned n-gram goes to its context's backoff, as KenLM does).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from .counts import CountTable, count_of_counts
from .keyindex import KeyIndex
from .units import UNK

__all__ = ["Level", "discounts", "estimate"]

log = logging.getLogger(__name__)

FALLBACK_DISCOUNTS = (0.5, 1.0, 1.5)  # too few counts to estimate them (tiny corpora)


@dataclass
class Level:
    """The n-grams of one order in a model, sorted by key.

    ``contexts`` and ``words`` are rows: of the n-gram's context in the order below, and of its
    last unit among the unigrams (``-1`` and the row itself for unigrams). ``logp`` is log10 of
    the probability, ``bow`` log10 of the backoff weight of the n-gram as a context (0 if none).
    """

    keys: np.ndarray
    logp: np.ndarray
    bow: np.ndarray
    contexts: np.ndarray
    words: np.ndarray

    def __post_init__(self) -> None:
        # Scoring looks keys up in batches of a few hundred: a padded directory (``keyindex``).
        self._index = KeyIndex(self.keys, pad=True)
        self.keys = self._index.keys

    def __len__(self) -> int:
        return len(self.keys)

    def rows(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Rows of ``keys`` (0 where absent) and whether each was found."""
        return self._index.rows(keys)


def discounts(n: np.ndarray) -> tuple[float, float, float]:
    """D1, D2, D3+ from the counts of counts n1..n4 (Chen and Goodman).

    >>> tuple(round(d, 3) for d in discounts(np.array([100, 40, 20, 10])))
    (0.556, 1.167, 1.889)
    """
    n1, n2, n3, n4 = (int(x) for x in n)
    if min(n1, n2, n3, n4) <= 0:
        return FALLBACK_DISCOUNTS
    y = n1 / (n1 + 2 * n2)
    found = (1 - 2 * y * n2 / n1, 2 - 3 * y * n3 / n2, 3 - 4 * y * n4 / n3)
    if not all(0 < d <= j for j, d in enumerate(found, 1)):
        return FALLBACK_DISCOUNTS
    return found


def _discount(adjusted: np.ndarray, d: tuple[float, float, float]) -> np.ndarray:
    return np.where(adjusted >= 3, d[2], np.where(adjusted == 2, d[1], d[0]))


def estimate(tables: list[CountTable], min_counts: tuple[int, ...],
             snapshot: np.ndarray | None = None) -> tuple[list[Level], list[str], list[tuple]]:
    """The model's levels, its vocabulary (units by unigram row) and the discounts per order.

    ``min_counts[k]``: n-grams of order k+1 with a smaller adjusted count are pruned, unless
    a longer kept n-gram needs them as its context or suffix. ``tables`` are consumed.

    Each n-gram's context and suffix are looked up once, as rows of the order below; the
    continuation counts, what is kept and the sums by context are then counts and sums over
    those rows (``np.bincount``), with no sort and no other search.
    """
    suffix_rows: list[np.ndarray] = [np.empty(0, np.int32)]
    context_rows: list[np.ndarray] = [np.empty(0, np.int32)]
    for k in range(1, len(tables)):
        table, below = tables[k], KeyIndex(tables[k - 1].keys)
        suffixes, suffix_found = _rows(below, table.suffixes)
        contexts, context_found = _rows(below, table.contexts)
        # An n-gram whose context or suffix was dropped from a bounded table cannot be placed.
        ok = suffix_found & context_found
        if not ok.all():
            table.keys, table.contexts = table.keys[ok], table.contexts[ok]
            table.suffixes, table.counts = table.suffixes[ok], table.counts[ok]
            suffixes, contexts = suffixes[ok], contexts[ok]
        suffix_rows.append(suffixes)
        context_rows.append(contexts)
    adjusted = _adjusted(tables, suffix_rows)
    n = snapshot if snapshot is not None else count_of_counts(adjusted)
    per_order = [discounts(row) for row in n]
    keep = [np.ones(len(t), bool) for t in tables]
    for k in range(len(tables) - 1, 0, -1):
        keep[k] &= adjusted[k] >= min_counts[k]
        if k + 1 < len(tables):
            keep[k][suffix_rows[k + 1][keep[k + 1]]] = True
            keep[k][context_rows[k + 1][keep[k + 1]]] = True
    levels = [_unigrams(tables[0], adjusted[0], per_order[0])]
    vocabulary: list[str] = tables[0].units.tolist()  # str objects already
    # The row in its level of each row of a table (-1: not kept): the unigram level has <unk>.
    at_unk = int(np.searchsorted(tables[0].keys, np.uint64(UNK)))
    level_rows = np.arange(len(tables[0]), dtype=np.int32)
    level_rows[at_unk:] += 1
    for k in range(1, len(tables)):
        levels.append(_order(tables[k], adjusted[k], keep[k], per_order[k], levels[k - 1],
                             level_rows, suffix_rows[k], context_rows[k]))
        suffix_rows[k] = context_rows[k] = adjusted[k] = np.empty(0)  # memory: done with
        level_rows = np.cumsum(keep[k], dtype=np.int32) - 1
        level_rows[~keep[k]] = -1
    return levels, vocabulary, per_order


LOOKUP_BLOCK = 1 << 18  # keys looked up at once: the search's temporaries are 40 bytes a key


def _rows(index: KeyIndex, queries: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``index.rows`` as int32, a block of queries at a time (memory: the tables are large)."""
    rows = np.empty(len(queries), np.int32)
    found = np.empty(len(queries), bool)
    for start in range(0, len(queries), LOOKUP_BLOCK):
        block = slice(start, start + LOOKUP_BLOCK)
        rows[block], found[block] = index.rows(queries[block])
    return rows, found


def _adjusted(tables: list[CountTable], suffix_rows: list[np.ndarray]) -> list[np.ndarray]:
    """``counts.adjusted_counts`` from the rows of the suffixes: the continuation count of an
    n-gram is how many n-grams of the order above have it as their suffix."""
    adjusted = []
    for k, table in enumerate(tables):
        if k + 1 == len(tables):
            adjusted.append(table.counts)
            break
        continuations = np.bincount(suffix_rows[k + 1], minlength=len(table))
        adjusted.append(np.where(continuations > 0, continuations, table.counts)
                        .astype(np.int64))
    return adjusted


def _unigrams(table: CountTable, adjusted: np.ndarray, d: tuple[float, float, float]) -> Level:
    total = float(adjusted.sum())
    cut = _discount(adjusted, d)
    gamma = float(cut.sum()) / total if total else 1.0
    size = len(table) + 1  # and <unk>
    p = (adjusted - cut) / total + gamma / size if total else np.zeros(len(table))
    at = int(np.searchsorted(table.keys, np.uint64(UNK)))
    keys = np.insert(table.keys, at, np.uint64(UNK))
    logp = np.log10(np.insert(p, at, gamma / size)).astype(np.float32)
    table.units = np.insert(table.units, at, "<unk>")
    rows = np.arange(len(keys), dtype=np.int32)
    return Level(keys, logp, np.zeros(len(keys), np.float32), np.full(len(keys), -1, np.int32),
                 rows)


def _order(table: CountTable, adjusted: np.ndarray, keep: np.ndarray,
           d: tuple[float, float, float], below: Level, below_rows: np.ndarray,
           suffix_rows: np.ndarray, context_rows: np.ndarray) -> Level:
    """The level of ``table``'s order; ``below_rows``: the row in ``below`` of each row of the
    table below, whose rows ``suffix_rows`` and ``context_rows`` are."""
    size = len(below_rows)
    # Sums by context in the table's order, as np.unique's inverse would give them.
    totals = np.bincount(context_rows, weights=adjusted, minlength=size)
    cut = _discount(adjusted, d)
    mass = np.bincount(context_rows, weights=np.where(keep, cut, adjusted), minlength=size)
    used = np.flatnonzero(totals)  # the contexts present (every adjusted count is at least 1)
    gamma = np.zeros(size)
    gamma[used] = mass[used] / totals[used]
    rows = below_rows[used]
    kept = rows >= 0
    below.bow[rows[kept]] = np.log10(np.maximum(gamma[used[kept]], 1e-300))
    # Most n-grams go (a pruned table keeps a tenth to a quarter): their rows, gathered once.
    at = np.flatnonzero(keep)
    contexts = context_rows[at]
    suffixes = below_rows[suffix_rows[at]]
    lower = np.power(10.0, below.logp[suffixes].astype(np.float64))
    p = (adjusted[at] - cut[at]) / totals[contexts] + gamma[contexts] * lower
    return Level(table.keys[at], np.log10(p).astype(np.float32), np.zeros(len(at), np.float32),
                 below_rows[contexts].astype(np.int32), below.words[suffixes].astype(np.int32))
