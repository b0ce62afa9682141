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

from .counts import CountTable, adjusted_counts, count_of_counts
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
        # A directory of the keys by their top bits (keys are hashes: uniform), one or two keys
        # a bucket, and a binary search of fixed steps from the start of the key's bucket: the
        # keys after its bucket are all larger, so no step needs the bucket's end. Scoring a
        # page is numpy calls on a few hundred keys, so few calls matter more than few reads
        # (600 keys in 2.4 million: searchsorted 91 µs, a search in each bucket with its
        # bounds 71 µs, this one 45 µs; 0.11 µs a key in large batches).
        n = len(self.keys)
        self._bits = max(int(n).bit_length() - 1, 0)
        self._shift = np.uint64(64 - self._bits)
        self._steps: list[int] = []
        if self._bits:
            edges = np.arange(1 << self._bits, dtype=np.uint64) << self._shift
            offsets = np.searchsorted(self.keys, edges)
            self._offsets = (offsets - 1).astype(np.int32)  # the search starts before it
            widest = int(np.diff(np.append(offsets, n)).max())
            self._steps = [1 << s for s in reversed(range(widest.bit_length()))]
            padded = np.empty(n + (1 << len(self._steps)), np.uint64)
            padded[:n] = self.keys
            padded[n:] = np.uint64(2**64 - 1)
            self._padded = padded
            self.keys = padded[:n]

    def __len__(self) -> int:
        return len(self.keys)

    def rows(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Rows of ``keys`` (0 where absent) and whether each was found."""
        n = len(self.keys)
        if not n:
            return np.zeros(len(keys), np.int64), np.zeros(len(keys), bool)
        if not self._bits:
            at = np.searchsorted(self.keys, keys)
            at[at >= n] = 0
            return at, self.keys[at] == keys
        at = self._offsets[(keys >> self._shift).astype(np.intp)].astype(np.intp)
        padded = self._padded
        for step in self._steps:  # the last key at most ``keys``
            probe = at + step
            at = np.where(padded[probe] <= keys, probe, at)
        np.maximum(at, 0, out=at)
        found = padded[at] == keys
        found &= at < n
        at[~found] = 0
        return at, found


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


def _isin_sorted(values: np.ndarray, sorted_keys: np.ndarray) -> np.ndarray:
    if not len(sorted_keys):
        return np.zeros(len(values), bool)
    at = np.searchsorted(sorted_keys, values)
    at[at == len(sorted_keys)] = 0
    return sorted_keys[at] == values


def _discount(adjusted: np.ndarray, d: tuple[float, float, float]) -> np.ndarray:
    return np.where(adjusted >= 3, d[2], np.where(adjusted == 2, d[1], d[0]))


def estimate(tables: list[CountTable], min_counts: tuple[int, ...],
             snapshot: np.ndarray | None = None) -> tuple[list[Level], list[str], list[tuple]]:
    """The model's levels, its vocabulary (units by unigram row) and the discounts per order.

    ``min_counts[k]``: n-grams of order k+1 with a smaller adjusted count are pruned, unless
    a longer kept n-gram needs them as its context or suffix. ``tables`` are consumed.
    """
    # An n-gram whose context or suffix was dropped from a bounded table cannot be placed.
    for k in range(1, len(tables)):
        table, below = tables[k], tables[k - 1].keys
        ok = _isin_sorted(table.suffixes, below) & _isin_sorted(table.contexts, below)
        if not ok.all():
            table.keys, table.contexts = table.keys[ok], table.contexts[ok]
            table.suffixes, table.counts = table.suffixes[ok], table.counts[ok]
    adjusted = adjusted_counts(tables)
    n = snapshot if snapshot is not None else count_of_counts(tables)
    per_order = [discounts(row) for row in n]
    keep = [np.ones(len(t), bool) for t in tables]
    for k in range(len(tables) - 1, 0, -1):
        keep[k] &= adjusted[k] >= min_counts[k]
        if k + 1 < len(tables):
            longer = tables[k + 1]
            keep[k] |= _isin_sorted(tables[k].keys, np.unique(longer.suffixes[keep[k + 1]]))
            keep[k] |= _isin_sorted(tables[k].keys, np.unique(longer.contexts[keep[k + 1]]))
    levels = [_unigrams(tables[0], adjusted[0], per_order[0])]
    vocabulary = [str(unit) for unit in tables[0].units.tolist()]
    for k in range(1, len(tables)):
        levels.append(_order(tables[k], adjusted[k], keep[k], per_order[k], levels[k - 1]))
    return levels, vocabulary, per_order


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
           d: tuple[float, float, float], below: Level) -> Level:
    contexts, inverse = np.unique(table.contexts, return_inverse=True)
    totals = np.bincount(inverse, weights=adjusted)
    cut = _discount(adjusted, d)
    mass = np.bincount(inverse, weights=np.where(keep, cut, adjusted))
    gamma = mass / totals
    at, found = below.rows(contexts)
    below.bow[at[found]] = np.log10(np.maximum(gamma[found], 1e-300))
    rows_of_suffix, _ = below.rows(table.suffixes[keep])
    inverse = inverse[keep]
    lower = np.power(10.0, below.logp[rows_of_suffix].astype(np.float64))
    p = (adjusted[keep] - cut[keep]) / totals[inverse] + gamma[inverse] * lower
    context_rows, _ = below.rows(table.contexts[keep])
    return Level(table.keys[keep], np.log10(p).astype(np.float32),
                 np.zeros(int(keep.sum()), np.float32), context_rows.astype(np.int32),
                 below.words[rows_of_suffix].astype(np.int32))
