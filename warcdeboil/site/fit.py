"""Learning a site's template from its pages in URL order.

Each page is compared with its URL-sorted neighbour. Subtrees (candidate hashes) that a pair shares
are counted; those shared by at least ``min_occurrence`` pairs form the site profile. Two guards
keep real content out of the profile:

* pairs whose hash sets are nearly identical (intersection over union above ``max_iou``) are
  skipped: they are the same page twice and share everything, article included;
* pairs whose long text blocks largely coincide are *near-duplicates* (``/story`` and
  ``/story?page=1`` differ in a widget, so their IoU is low, yet the article is the same): they are
  not paired either. The later page is compared with the next one instead.

Pairs also teach the site's *template slots*: the places of its pages that the page itself names as
comments, related links, sharing, navigation and the like (see
:data:`warcdeboil.page.dom.ROLE_OPEN`) and that a pair has in common — the same tag, class and id,
whatever they hold on each page. A list of the latest headlines or a page's comments differ from
page to page, so no subtree of theirs is ever shared, yet the site puts them on every page: they are
template too.

The fit also counts, over the site's pages (near-duplicates once), on how many pages each text
block occurs. A block found on many of them — "Share this article", a newsletter pitch, a
copyright line loose in the body — is the site's boilerplate even when no candidate subtree around
it is shared: those are the profile's *repeated blocks*. The count is bounded (Misra–Gries over at
most :data:`MAX_TRACKED_BLOCKS` digests), so a site of a million pages costs no more memory than a
site of a thousand.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import groupby
from operator import attrgetter

from warcdeboil.page.dom import PageSignature

from .index import IndexEntry

__all__ = [
    "BlockCounter", "FitParams", "SiteProfile", "fit_site", "group_by_site", "near_duplicate",
]

# Default guard of the original deboiler: pairs sharing more than this of their subtrees are
# the same page under two URLs.
DEFAULT_MAX_IOU = 0.95
# Share of long-text bytes two neighbours must have in common to count as near-duplicates.
# Measured on ../shared/eval/dragnet (880 neighbour pairs): 95 % share under 0.5 (distinct
# articles, sharing only long template blocks), 5 pairs share 0.8 or more (one article twice).
# Between 0.6 and 0.8 are pages whose long footers dominate: pairing them teaches the template
# (precision on sites >= 5 pages: 0.692 at 0.6, 0.696 at 0.8); l3s-gn1 and cleanportaleval have
# no pair above 0.5, so their results do not move.
DEFAULT_NEAR_DUPLICATE = 0.8
DEFAULT_MIN_OCCURRENCE = 1
# A text block is a repeated block when it occurs on at least this share of the site's pages and
# on at least REPEATED_MIN_PAGES of them. Chosen on the calibration half of ../shared/eval (sites
# with even CRC-32; template mode, text): shares 0.1, 0.2, 0.3, 0.5 gave dragnet sites >= 5 pages
# F1 0.844/0.844/0.843/0.841 against 0.827 without, l3s-gn1 0.820/0.820/0.819/0.815 against
# 0.795, cleanportaleval 0.898/0.887/0.880/0.877 against 0.872; 2 pages instead of 3 cost recall.
DEFAULT_REPEATED_SHARE = 0.1
DEFAULT_REPEATED_MIN_PAGES = 3
# Distinct block digests counted per site at once. A count is then low by at most the blocks
# counted / this: with ~200 distinct blocks a page (dragnet), by pages / 330 — far below the
# share that makes a block repeated.
MAX_TRACKED_BLOCKS = 1 << 16


@dataclass(frozen=True, slots=True)
class FitParams:
    """Knobs of the fit."""

    max_iou: float = DEFAULT_MAX_IOU
    min_occurrence: int = DEFAULT_MIN_OCCURRENCE
    near_duplicate: float = DEFAULT_NEAR_DUPLICATE
    repeated_share: float = DEFAULT_REPEATED_SHARE
    repeated_min_pages: int = DEFAULT_REPEATED_MIN_PAGES


@dataclass(frozen=True, slots=True)
class SiteProfile:
    """What was learned of one site: the hashes of its template subtrees, and the digests of the
    text blocks it repeats on many pages (:func:`warcdeboil.page.dom.block_digest`)."""

    site: str
    pages: int
    pairs: int
    hashes: frozenset[int]
    repeated: frozenset[int] = frozenset()
    slots: frozenset[int] = frozenset()

    def __contains__(self, digest: object) -> bool:
        return digest in self.hashes

    @property
    def template(self) -> frozenset[int]:
        """The subtree hashes to remove (none unless some pair taught them)."""
        return self.hashes if self.pairs else frozenset()

    @property
    def template_slots(self) -> frozenset[int]:
        """The slot digests to remove (none unless some pair taught them)."""
        return self.slots if self.pairs else frozenset()

    @property
    def useful(self) -> bool:
        """Whether applying this profile removes anything (only these are stored)."""
        return bool(self.template or self.repeated or self.template_slots)


class BlockCounter:
    """On how many pages each text block occurs, in bounded memory (Misra–Gries).

    >>> counter = BlockCounter(capacity=4)
    >>> for page in ([1, 2], [1, 3], [1, 4], [1, 5], [1, 6]):
    ...     counter.add(page)
    >>> counter.frequent(3)
    frozenset({1})
    """

    def __init__(self, capacity: int = MAX_TRACKED_BLOCKS) -> None:
        self.capacity = capacity
        self.counts: dict[int, int] = {}
        self.pages = 0

    def add(self, digests: Iterable[int]) -> None:
        self.pages += 1
        counts = self.counts
        for digest in digests:
            counts[digest] = counts.get(digest, 0) + 1
        while len(counts) > self.capacity:
            # Every count drops by one and the ones are forgotten. Each such step takes more
            # than ``capacity`` from the counts' sum, so no count is ever high, and one is low
            # by at most (blocks added) / (capacity + 1).
            counts = {d: c - 1 for d, c in counts.items() if c > 1}
        self.counts = counts

    def frequent(self, min_pages: int) -> frozenset[int]:
        return frozenset(d for d, c in self.counts.items() if c >= min_pages)


def near_duplicate(a: PageSignature, b: PageSignature, threshold: float) -> bool:
    """True when the long text blocks of two pages mostly coincide (weighted Jaccard).

    >>> from array import array
    >>> def sig(blocks):
    ...     return PageSignature(array('Q'), array('Q', blocks), array('I', [50] * len(blocks)), 0)
    >>> near_duplicate(sig([1, 2, 3]), sig([1, 2, 3, 4]), 0.6)
    True
    >>> near_duplicate(sig([1, 2, 3]), sig([1, 5, 6]), 0.6)
    False
    """
    if not a.blocks or not b.blocks:
        return False
    sizes_a = dict(zip(a.blocks, a.block_sizes, strict=True))
    shared = 0
    union = sum(a.block_sizes)
    for digest, size in zip(b.blocks, b.block_sizes, strict=True):
        if digest in sizes_a:
            shared += size
        else:
            union += size
    return union > 0 and shared / union >= threshold


def fit_site(site: str, pages: Iterable[PageSignature], params: FitParams) -> SiteProfile:
    """Learn one site's profile from its pages, given in URL order."""
    counts: Counter[int] = Counter()
    slot_counts: Counter[int] = Counter()
    blocks = BlockCounter()
    previous: PageSignature | None = None
    previous_set: set[int] = set()
    n_pages = 0
    n_pairs = 0
    for page in pages:
        n_pages += 1
        current_set = set(page.hashes)
        if previous is not None:
            if near_duplicate(previous, page, params.near_duplicate):
                continue  # keep comparing with the earlier page
            shared = previous_set & current_set
            union = len(previous_set) + len(current_set) - len(shared)
            if union and len(shared) / union <= params.max_iou:
                counts.update(shared)
                slot_counts.update(set(previous.slots).intersection(page.slots))
                n_pairs += 1
        previous, previous_set = page, current_set
        blocks.add(page.texts)
    keep = frozenset(d for d, c in counts.items() if c >= params.min_occurrence)
    slots = frozenset(d for d, c in slot_counts.items() if c >= params.min_occurrence)
    repeated: frozenset[int] = frozenset()
    if blocks.pages >= params.repeated_min_pages:
        cut = max(params.repeated_min_pages, math.ceil(params.repeated_share * blocks.pages))
        repeated = blocks.frequent(cut)
    return SiteProfile(site, n_pages, n_pairs, keep, repeated, slots)


def group_by_site(
    entries: Iterable[IndexEntry],
) -> Iterator[tuple[str, Iterator[PageSignature]]]:
    """Split the sorted index into sites, lazily: a site's pages are never all in memory."""
    for site, group in groupby(entries, key=attrgetter("site")):
        yield site, (entry.signature for entry in group)
