"""Learning a site's template from its pages in URL order.

Each page is compared with its URL-sorted neighbour. Subtrees (candidate hashes) that a pair shares
are counted; those shared by at least ``min_occurrence`` pairs form the site profile. Two guards
keep real content out of the profile:

* pairs whose hash sets are nearly identical (intersection over union above ``max_iou``) are
  skipped: they are the same page twice and share everything, article included;
* pairs whose long text blocks largely coincide are *near-duplicates* (``/story`` and
  ``/story?page=1`` differ in a widget, so their IoU is low, yet the article is the same): they are
  not paired either. The later page is compared with the next one instead.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import groupby
from operator import attrgetter

from .dom import PageSignature
from .index import IndexEntry

__all__ = ["FitParams", "SiteProfile", "fit_site", "group_by_site", "near_duplicate"]

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


@dataclass(frozen=True, slots=True)
class FitParams:
    """Knobs of the fit."""

    max_iou: float = DEFAULT_MAX_IOU
    min_occurrence: int = DEFAULT_MIN_OCCURRENCE
    near_duplicate: float = DEFAULT_NEAR_DUPLICATE


@dataclass(frozen=True, slots=True)
class SiteProfile:
    """What was learned of one site: the hashes of its template subtrees."""

    site: str
    pages: int
    pairs: int
    hashes: frozenset[int]

    def __contains__(self, digest: object) -> bool:
        return digest in self.hashes


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
                n_pairs += 1
        previous, previous_set = page, current_set
    keep = frozenset(d for d, c in counts.items() if c >= params.min_occurrence)
    return SiteProfile(site, n_pages, n_pairs, keep)


def group_by_site(
    entries: Iterable[IndexEntry],
) -> Iterator[tuple[str, Iterator[PageSignature]]]:
    """Split the sorted index into sites, lazily: a site's pages are never all in memory."""
    for site, group in groupby(entries, key=attrgetter("site")):
        yield site, (entry.signature for entry in group)
