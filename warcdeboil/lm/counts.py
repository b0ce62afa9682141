"""N-gram counts in tables of bounded size, built from text a chunk at a time with numpy.

Each order has one table: sorted 64-bit keys, and for every key its context's key (the n-gram
without its last unit), its suffix's key (without its first unit) and its count. A chunk of
text is hashed to unit ids, turned into the keys of every order at once, counted with a sort,
and merged into the tables by binary search (no sort of the whole table). A table that grows
past its capacity drops its rarest entries, as word2vec reduces its vocabulary: every entry
counted at most ``threshold`` times goes, and the threshold rises by one each time, until a
quarter of the table is free. Memory is therefore bounded by the capacities, whatever the
amount of text; the price is that n-grams rarer than the final threshold are undercounted or
absent, which is where a compact model would prune them anyway.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from .units import BOUNDARY, LINE, distinct_ids, extend_keys, split_units

__all__ = ["CountTable", "NgramCounts", "adjusted_counts", "count_of_counts"]

DEFAULT_CAPACITY = 1 << 22  # entries a table (32 bytes each: 128 MiB): see README, Perplexity
# Units the vocabulary holds: each also keeps its text (about 70 bytes more), and a crawl's types
# beyond its million commonest are mostly names, numbers and debris.
DEFAULT_VOCABULARY = 1 << 20


@dataclass
class CountTable:
    """The counts of one order, sorted by key."""

    order: int
    capacity: int
    keys: np.ndarray = field(default_factory=lambda: np.empty(0, np.uint64))
    contexts: np.ndarray = field(default_factory=lambda: np.empty(0, np.uint64))
    suffixes: np.ndarray = field(default_factory=lambda: np.empty(0, np.uint64))
    counts: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    units: np.ndarray = field(default_factory=lambda: np.empty(0, object))  # order 1 only
    threshold: int = 0  # entries counted this often or less were dropped at least once
    pruned: int = 0     # times the table was pruned

    def __len__(self) -> int:
        return len(self.keys)

    def merge(self, keys: np.ndarray, contexts: np.ndarray, suffixes: np.ndarray,
              counts: np.ndarray, units: np.ndarray | None = None) -> None:
        """Add a chunk's counts (its keys sorted and distinct)."""
        at = np.searchsorted(self.keys, keys)
        known = at < len(self.keys)
        known[known] = self.keys[at[known]] == keys[known]
        np.add.at(self.counts, at[known], counts[known])
        new = ~known
        if not new.any():
            return
        where = at[new]
        self.keys = np.insert(self.keys, where, keys[new])
        self.contexts = np.insert(self.contexts, where, contexts[new])
        self.suffixes = np.insert(self.suffixes, where, suffixes[new])
        self.counts = np.insert(self.counts, where, counts[new])
        if units is not None:
            self.units = np.insert(self.units, where, units[new])
        if len(self.keys) > self.capacity:
            self.prune()

    def prune(self) -> None:
        """Drop the rarest entries until at most three quarters of the capacity are used."""
        keep = np.ones(len(self.keys), dtype=bool)
        while int(keep.sum()) > self.capacity * 3 // 4:
            self.threshold += 1
            keep &= self.counts > self.threshold
            if self.order == 1:
                keep |= self.keys == np.uint64(BOUNDARY)
        self.pruned += 1
        self.keys, self.contexts = self.keys[keep], self.contexts[keep]
        self.suffixes, self.counts = self.suffixes[keep], self.counts[keep]
        if self.order == 1:
            self.units = self.units[keep]


class NgramCounts:
    """Counts of every order up to ``order``, fed with text; memory bounded by ``capacity``
    entries per order above 1 and ``vocabulary`` units."""

    def __init__(self, order: int = 3, capacity: int = DEFAULT_CAPACITY,
                 vocabulary: int = DEFAULT_VOCABULARY) -> None:
        if order < 1 or capacity < 4 or vocabulary < 4:
            raise ValueError("order must be at least 1, capacity and vocabulary at least 4")
        self.order = order
        self.tables = [CountTable(k, vocabulary if k == 1 else capacity)
                       for k in range(1, order + 1)]
        self.units_seen = 0  # units and line ends counted (the words of the training text)
        # Counts of counts (n1..n4 per order) just before the first pruning, for the discounts:
        # after it, the rare counts they are made of are no longer all there.
        self.snapshot: np.ndarray | None = None

    def add_texts(self, texts: Iterable[str], chunk_chars: int = 4 << 20) -> None:
        """Count texts (one sentence a line), batched into chunks of about ``chunk_chars``."""
        batch: list[str] = []
        size = 0
        for text in texts:
            for piece in _pieces(text, chunk_chars):
                batch.append(piece)
                size += len(piece)
                if size >= chunk_chars:
                    self.add_text("\n".join(batch))
                    batch, size = [], 0
        if batch:
            self.add_text("\n".join(batch))

    def add_text(self, text: str) -> None:
        """Count one chunk of text."""
        found = split_units(text)
        if not found:
            return
        ids = distinct_ids(found)
        ids[LINE] = BOUNDARY
        units = np.empty(len(found) + 2, dtype=np.uint64)
        units[0] = units[-1] = BOUNDARY
        units[1:-1] = np.fromiter(map(ids.__getitem__, found), np.uint64, count=len(found))
        repeated = np.zeros(len(units), dtype=bool)
        repeated[1:] = (units[1:] == BOUNDARY) & (units[:-1] == BOUNDARY)
        units = units[~repeated]
        self.units_seen += len(units) - 1
        names = {value: key for key, value in ids.items()}
        names[BOUNDARY] = "</s>"
        self._count(units, names)

    def _count(self, units: np.ndarray, names: dict[int, str]) -> None:
        positions = np.arange(len(units))
        boundary = np.where(units == BOUNDARY, positions, 0)
        last_boundary = np.maximum.accumulate(boundary)  # at or before each position
        since = np.empty(len(units), dtype=np.int64)  # units since the boundary before i
        since[0] = 0
        since[1:] = positions[1:] - last_boundary[:-1]
        previous = units
        zeros = np.zeros(len(units), dtype=np.uint64)
        for table in self.tables:
            k = table.order
            if k == 1:
                keys, contexts, suffixes = units, zeros, zeros
            else:
                keys = np.zeros(len(units), dtype=np.uint64)
                keys[1:] = extend_keys(previous[:-1], units[1:])
                contexts = np.zeros(len(units), dtype=np.uint64)
                contexts[1:] = previous[:-1]
                suffixes = previous
            # An n-gram may start at a boundary (<s>) but not hold one inside it.
            valid = since >= k - 1
            valid[0] = False
            self._merge(table, keys[valid], contexts[valid], suffixes[valid], names)
            previous = keys

    def _merge(self, table: CountTable, keys: np.ndarray, contexts: np.ndarray,
               suffixes: np.ndarray, names: dict[int, str]) -> None:
        order = np.argsort(keys)  # equal keys are the same n-gram: any of them will do
        keys = keys[order]
        first = np.ones(len(keys), dtype=bool)
        first[1:] = keys[1:] != keys[:-1]
        starts = np.flatnonzero(first)
        counts = np.diff(np.append(starts, len(keys))).astype(np.int64)
        picked = order[starts]
        distinct = keys[starts]
        units = None
        if table.order == 1:
            units = np.array([names[int(key)] for key in distinct.tolist()], dtype=object)
        if self.snapshot is None and len(table) + len(distinct) > table.capacity:
            self.snapshot = count_of_counts(self.tables)
        table.merge(distinct, contexts[picked], suffixes[picked], counts, units)


def _pieces(text: str, size: int) -> list[str]:
    """A text cut at line ends into pieces of about ``size`` characters (a chunk's arrays are
    what training holds besides its tables: one huge page must not make one huge chunk)."""
    if len(text) <= size:
        return [text]
    pieces, start = [], 0
    while start < len(text):
        end = text.find("\n", start + size)
        end = len(text) if end < 0 else end
        pieces.append(text[start:end])
        start = end + 1
    return pieces


def adjusted_counts(tables: list[CountTable]) -> list[np.ndarray]:
    """Kneser-Ney's counts: below the highest order, how many distinct units precede an
    n-gram (its continuation count), and its own count where nothing can precede it (it starts
    at a line's start, or every longer n-gram holding it was pruned)."""
    adjusted = []
    for k, table in enumerate(tables):
        if k + 1 == len(tables):
            adjusted.append(table.counts)
            break
        suffixes, continuations = np.unique(tables[k + 1].suffixes, return_counts=True)
        at = np.searchsorted(suffixes, table.keys).clip(0, max(len(suffixes) - 1, 0))
        found = suffixes[at] == table.keys if len(suffixes) else np.zeros(len(table), bool)
        adjusted.append(np.where(found, continuations[at] if len(suffixes) else 0,
                                 table.counts).astype(np.int64))
    return adjusted


def count_of_counts(tables: list[CountTable]) -> np.ndarray:
    """n1..n4 of each order's adjusted counts, shape (order, 4)."""
    return np.array([np.bincount(np.minimum(counts, 5), minlength=6)[1:5]
                     for counts in adjusted_counts(tables)], dtype=np.int64)
