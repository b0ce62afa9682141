"""N-gram counts in tables of bounded size, built from text a chunk at a time with numpy.

Each order has one table: sorted 64-bit keys, and for every key its context's key (the n-gram
without its last unit), its suffix's key (without its first unit) and its count. A chunk of
text is numbered by distinct unit and hashed to unit ids; unigrams are counted by number, the
keys of each higher order counted with a sort, and merged into the tables by binary search (no
sort of the whole table). A table that grows past its capacity drops its rarest entries, as
word2vec reduces its vocabulary: every entry counted at most ``threshold`` times goes, and the
threshold rises by one each time, until a quarter of the table is free. Memory is therefore
bounded by the capacities, whatever the amount of text; the price is that n-grams rarer than
the final threshold are undercounted or absent, which is where a compact model would prune
them anyway.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np

from .units import BOUNDARY, LINE, extend_keys, numbered_units

__all__ = ["CountTable", "NgramCounts", "adjusted_counts", "count_of_counts"]

DEFAULT_CAPACITY = 1 << 22  # entries a table (32 bytes each: 128 MiB): see docs/language-model.md
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
        """Add a chunk's counts (its keys sorted and distinct), which an empty table takes as
        they are (the arrays are the chunk's own)."""
        if not len(self.keys):
            self.keys, self.contexts, self.suffixes, self.counts = keys, contexts, suffixes, counts
            if units is not None:
                self.units = units
            if len(self.keys) > self.capacity:
                self.prune()
            return
        at = np.searchsorted(self.keys, keys)
        known = at < len(self.keys)
        known[known] = self.keys[at[known]] == keys[known]
        self.counts[at[known]] += counts[known]  # distinct rows: no np.add.at needed
        new = ~known
        if not new.any():
            return
        # Where each new entry goes in the merged table: before the entry now at its place,
        # after the new entries before it (np.insert's order, worked out once for all arrays).
        where = at[new]
        placed = where + np.arange(len(where))
        old = np.ones(len(self.keys) + len(where), dtype=bool)
        old[placed] = False
        self.keys = _inserted(self.keys, keys[new], placed, old)
        self.contexts = _inserted(self.contexts, contexts[new], placed, old)
        self.suffixes = _inserted(self.suffixes, suffixes[new], placed, old)
        self.counts = _inserted(self.counts, counts[new], placed, old)
        if units is not None:
            self.units = _inserted(self.units, units[new], placed, old)
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


def _inserted(array: np.ndarray, values: np.ndarray, placed: np.ndarray,
              old: np.ndarray) -> np.ndarray:
    """``array`` with ``values`` at the rows ``placed`` of the result, ``old`` marking its
    other rows."""
    result = np.empty(len(old), dtype=array.dtype)
    result[placed] = values
    result[old] = array
    return result


class NgramCounts:
    """Counts of every order up to ``order``, fed with text; memory bounded by ``capacity``
    entries per order above 1 and ``vocabulary`` units."""

    def __init__(self, order: int = 3, capacity: int = DEFAULT_CAPACITY,
                 vocabulary: int = DEFAULT_VOCABULARY,
                 keep: Callable[[list[str], np.ndarray], None] | None = None) -> None:
        """``keep``: called with each chunk of text as it is counted: its distinct units and
        the number of each of its units among them, ``LINE``'s first, last and at every line
        break (empty lines kept), so that the same text can be scored without being split
        into units again."""
        if order < 1 or capacity < 4 or vocabulary < 4:
            raise ValueError("order must be at least 1, capacity and vocabulary at least 4")
        self.order = order
        self.keep = keep
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
        distinct, ids, numbers = numbered_units(text)
        if not len(numbers):
            if self.keep is not None:  # one line without a unit: <s> </s>
                self.keep([LINE], np.zeros(2, np.intp))
            return
        line = len(distinct) - 1 if distinct[-1] == LINE else distinct.index(LINE)
        # The chunk's units by number, a boundary first and last and no two boundaries in a row.
        number = np.empty(len(numbers) + 2, dtype=np.intp)
        number[0] = number[-1] = line
        number[1:-1] = numbers
        if self.keep is not None:  # every line, the empty ones included (as scoring reads it)
            self.keep(distinct, number)
        repeated = np.zeros(len(number), dtype=bool)
        repeated[1:] = (number[1:] == line) & (number[:-1] == line)
        number = number[~repeated]
        self.units_seen += len(number) - 1
        distinct[line] = "</s>"
        self._count(number, ids, distinct)

    def _count(self, number: np.ndarray, ids: np.ndarray, names: list[str]) -> None:
        """Count the n-grams of a chunk's units, given as numbers of distinct units with their
        ids and names."""
        units = np.take(ids, number, mode="clip")  # numbers index ids: no check needed
        inner = units != BOUNDARY  # units an n-gram may hold inside it
        # Where an n-gram of the order ends: it may start at a boundary (<s>), but hold none
        # inside it; for bigrams, every position but the first.
        valid = np.ones(len(units), dtype=bool)
        valid[0] = False
        previous = units
        for table in self.tables:
            k = table.order
            if k == 1:
                # Unigrams need no sort: a count by number, then the distinct ids sorted.
                counts = np.bincount(number[1:], minlength=len(ids)).astype(np.int64)
                seen = np.flatnonzero(counts)  # all but a boundary with nothing to end
                none = np.zeros(len(seen), np.uint64)
                self._merge(table, ids[seen], counts[seen], none, none,
                            np.array(names, dtype=object)[seen])
                continue
            keys = np.zeros(len(units), dtype=np.uint64)
            keys[1:] = extend_keys(previous[:-1], units[1:])
            if k > 2:  # the n-gram ending at i holds the unit at i - k + 2 inside it
                valid[k - 1:] &= inner[1:len(units) - k + 2]
                valid[:k - 1] = False
            at = np.flatnonzero(valid)
            order, ordered = _key_order(keys[at])
            first = np.ones(len(ordered), dtype=bool)
            first[1:] = ordered[1:] != ordered[:-1]
            starts = np.flatnonzero(first)
            counts = np.diff(np.append(starts, len(ordered))).astype(np.int64)
            picked = at[order[starts]]  # one position of each n-gram: any will do
            self._merge(table, ordered[starts], counts, previous[picked - 1], previous[picked])
            previous = keys

    def _merge(self, table: CountTable, keys: np.ndarray, counts: np.ndarray,
               contexts: np.ndarray, suffixes: np.ndarray, units: np.ndarray | None = None
               ) -> None:
        """Merge a chunk's distinct n-grams (``keys`` sorted, or unigrams in any order)."""
        if units is not None:  # unigrams: their ids sorted (a chunk's distinct units are few)
            order = np.argsort(keys)
            keys, counts, units = keys[order], counts[order], units[order]
        if self.snapshot is None and len(table) + len(keys) > table.capacity:
            self.snapshot = count_of_counts(adjusted_counts(self.tables))
        table.merge(keys, contexts, suffixes, counts, units)


def _key_order(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions of ``keys`` in key order (equal keys together, in any order), and the keys in
    that order. Keys are hashes: their high bits sorted with the position packed into the low
    ones order them (``np.sort`` and two gathers: 11-18 % less time than ``np.argsort`` on
    230,000-450,000 keys, measured), but for the few keys alike in all the high bits, which a
    stable sort of the almost sorted keys then puts right."""
    n = len(keys)
    bits = max(n - 1, 1).bit_length()
    low = np.uint64((1 << bits) - 1)
    packed = keys & ~low
    packed |= np.arange(n, dtype=np.uint64)
    packed.sort()
    order = (packed & low).astype(np.intp)
    ordered = keys[order]
    if n > 1 and bool((ordered[1:] < ordered[:-1]).any()):
        fix = np.argsort(ordered, kind="stable")
        order, ordered = order[fix], ordered[fix]
    return order, ordered


def _pieces(text: str, size: int) -> list[str]:
    """A text cut at line ends into pieces of about ``size`` characters (a chunk's arrays are
    what training holds besides its tables: one huge page must not make one huge chunk), the
    pieces' lines the text's (an empty last line included: a unit store counts them)."""
    if len(text) <= size:
        return [text]
    pieces, start = [], 0
    while (end := text.find("\n", start + size)) >= 0:
        pieces.append(text[start:end])
        start = end + 1
    pieces.append(text[start:])
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


def count_of_counts(adjusted: list[np.ndarray]) -> np.ndarray:
    """n1..n4 of each order's adjusted counts (:func:`adjusted_counts`), shape (order, 4)."""
    return np.array([np.bincount(np.minimum(counts, 5), minlength=6)[1:5]
                     for counts in adjusted], dtype=np.int64)
