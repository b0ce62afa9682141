"""Locality-sensitive hashing of MinHash signatures: candidate pairs, then confirmed pairs.

A signature of ``bands * rows`` positions is cut into ``bands`` bands; two pages whose
signatures agree on every position of at least one band share a bucket and are a candidate
pair. A pair of Jaccard similarity ``s`` becomes a candidate with probability
``1 - (1 - s**rows)**bands`` (the S-curve); each candidate is then confirmed (:func:`confirms`)
when the fraction of equal positions over the *whole* signature reaches
:data:`CONFIRM_THRESHOLD`, or when it reaches :data:`CONTAINED_JACCARD` and the smaller text
lies almost whole (:data:`CONTAINMENT`) inside the larger: a print or syndicated copy keeps the
article and loses the comments and extras that template removal leaves on the original.

Bucket keys (band, 64-bit hash of the band, page) go through an external sort
(:class:`~.spill.SortedSpill`): whatever the number of pages, memory holds one run of keys and
at most :data:`MAX_BUCKET_KEPT` page numbers of the bucket being read. In a bucket of more than
that, each further page is paired with the first :data:`MAX_BUCKET_KEPT` (which are paired among
themselves): every page still meets the others through them, and the union-find joins it.

What the banding implies with the defaults (b = 32 bands of r = 4 rows, threshold 0.7): the
probability that a pair of similarity s is *not* a candidate (a missed duplicate) and that it
is one (extra confirmation work, rejected by the threshold):

=====  ====================  ===================
s      P(candidate)          P(missed)
=====  ====================  ===================
0.3    0.229                 0.771
0.5    0.873                 0.127
0.6    0.9882                0.0118
0.7    0.99985               1.5e-4
0.8    1 - 4.7e-8            4.7e-8
0.9    1 - 1e-16             ~0
=====  ====================  ===================

(A contained copy, confirmed from 0.5, is a candidate with probability 0.873 at 0.5, 0.988 at
0.6.) Integrated over s uniform in [0, t) and [t, 1] (as datasketch reports them), the banding's
false-positive rate (candidates below the threshold, all rejected by the confirmation) is 0.458
and its false-negative rate (pairs at or above it never compared) is 8.0e-6: see
:func:`error_rates`. The confirmation itself errs only near the threshold: the estimate's
standard error is ``sqrt(s(1-s)/128)``, 0.04 at s = 0.7.
"""

from __future__ import annotations

import struct
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from xxhash import xxh3_64_intdigest

from .minhash import NUM_PERM
from .spill import DEFAULT_RUN_ITEMS, SortedSpill

__all__ = [
    "BANDS",
    "CONFIRM_THRESHOLD",
    "CONTAINED_JACCARD",
    "CONTAINMENT",
    "MAX_BUCKET_KEPT",
    "ROWS",
    "LshParams",
    "bucket_keys",
    "bucket_pairs",
    "candidate_pairs",
    "candidate_pairs_in_memory",
    "confirmed_pairs",
    "confirms",
    "detection_probability",
    "error_rates",
]

# 32 bands of 4 rows use the 128 positions of a signature. The S-curve's midpoint,
# (1/b)**(1/r) = 0.42, sits well below the threshold, so that pairs at the threshold are almost
# never missed (1.5e-4 at 0.7); the price is more candidates between 0.4 and 0.7, which cost one
# comparison of two signatures each. 16 x 8 would miss 21 % of the pairs at 0.7.
BANDS = 32
ROWS = 4
# A pair is a duplicate when its estimated Jaccard similarity of 5-word shingles is at least
# this. Chosen on the generated crawl (scripts/make_dup_crawl.py) and the 1381 dragnet pages,
# template removed: an article with one paragraph added scores 0.78-0.95; distinct pages of one
# template score below 0.55, except where a page's own text is a line or two and what the
# template removal leaves is shared (3 dragnet pairs at 0.73-0.93: photo posts, Amazon reviews
# with a shared listing; the other 3 pairs above 0.7 are real copies). 0.7 leaves room both
# ways for the estimate's standard error (0.04). See benchmarks/results/dedup-2026-11-24.md.
CONFIRM_THRESHOLD = 0.7
# A pair below CONFIRM_THRESHOLD is still a duplicate when its estimated Jaccard is at least
# CONTAINED_JACCARD and the smaller page's shingles are at least CONTAINMENT inside the larger.
# On the generated crawl, print and syndicated copies scored J 0.59-0.69 with containment
# 0.93-0.99 (the original keeps comments and related links that are not template); the
# negatives that are contained whole (?page=2 of an article: its second half) score J <= 0.45,
# since a copy that is at least half of the other has J >= 0.5 when contained.
CONTAINED_JACCARD = 0.5
CONTAINMENT = 0.9
# Page numbers kept per bucket while it is read (see the module docstring).
MAX_BUCKET_KEPT = 32

_KEY = struct.Struct(">HQ")  # band, hash of the band's rows: the bucket
_PAGE = struct.Struct(">Q")


@dataclass(frozen=True, slots=True)
class LshParams:
    bands: int = BANDS
    rows: int = ROWS
    threshold: float = CONFIRM_THRESHOLD
    contained_jaccard: float = CONTAINED_JACCARD
    containment: float = CONTAINMENT

    def __post_init__(self) -> None:
        if self.bands < 1 or self.rows < 1:
            raise ValueError(f"bands and rows must be positive, not {self.bands} x {self.rows}")
        if not 0.0 < self.threshold <= 1.0:
            raise ValueError(f"threshold must be in (0, 1], not {self.threshold}")


def detection_probability(similarity: float, bands: int = BANDS, rows: int = ROWS) -> float:
    """P(a pair of Jaccard ``similarity`` shares a bucket): the S-curve ``1-(1-s^r)^b``.

    >>> round(detection_probability(0.7), 5)
    0.99985
    """
    return 1.0 - (1.0 - similarity**rows) ** bands


def error_rates(threshold: float = CONFIRM_THRESHOLD, bands: int = BANDS, rows: int = ROWS,
                steps: int = 10_000) -> tuple[float, float]:
    """The banding's (false-positive, false-negative) rates for ``threshold``.

    False positive: mean P(candidate) for s uniform on [0, threshold); false negative: mean
    P(not a candidate) for s uniform on [threshold, 1] (midpoint rule, ``steps`` points each).
    """
    low = (np.arange(steps) + 0.5) / steps * threshold
    high = threshold + (np.arange(steps) + 0.5) / steps * (1.0 - threshold)
    false_positive = float(np.mean(1.0 - (1.0 - low**rows) ** bands))
    false_negative = float(np.mean((1.0 - high**rows) ** bands))
    return false_positive, false_negative


def _band_hashes(signature: np.ndarray, params: LshParams) -> list[int]:
    width = params.bands * params.rows
    if len(signature) < width:
        raise ValueError(f"signature of {len(signature)} positions, banding needs {width}")
    rows = np.ascontiguousarray(signature[:width]).reshape(params.bands, params.rows)
    return [xxh3_64_intdigest(row.tobytes()) for row in rows]


def _bucket_pairs(members: Iterable[int]) -> Iterator[tuple[int, int]]:
    """Pairs of one bucket, members in ascending order (see MAX_BUCKET_KEPT)."""
    kept: list[int] = []
    for page in members:
        for other in kept:
            yield other, page
        if len(kept) < MAX_BUCKET_KEPT:
            kept.append(page)


def bucket_keys(signature: np.ndarray, params: LshParams | None = None) -> list[bytes]:
    """The buckets a signature falls in, one a band (band number and hash of its rows): the
    keys :func:`candidate_pairs` sorts, for an engine that groups them by shuffling."""
    params = params or LshParams()
    return [_KEY.pack(band, digest)
            for band, digest in enumerate(_band_hashes(signature, params))]


def bucket_pairs(members: Iterable[int]) -> Iterator[tuple[int, int]]:
    """The candidate pairs of one bucket, its members in ascending order (the choice
    :func:`candidate_pairs` makes in a bucket larger than :data:`MAX_BUCKET_KEPT`)."""
    return _bucket_pairs(members)


def candidate_pairs(signatures: Iterable[tuple[int, np.ndarray]], work_dir: Path,
                    params: LshParams | None = None, *, run_items: int = DEFAULT_RUN_ITEMS,
                    stats: dict[str, int] | None = None) -> Iterator[tuple[int, int]]:
    """Candidate pairs ``(a, b)``, ``a < b``, of pages sharing a bucket, in bounded memory.

    ``signatures`` gives ``(page number, signature)``; a pair may be yielded once per band it
    shares. Run files go to ``work_dir`` and are removed once merged. ``stats``, when given,
    receives the spill's ``runs`` and ``peak_items``.
    """
    params = params or LshParams()
    spill = SortedSpill(work_dir, run_items=run_items, prefix="lsh")
    for page, signature in signatures:
        for band, digest in enumerate(_band_hashes(signature, params)):
            record = _KEY.pack(band, digest) + _PAGE.pack(page)
            spill.add(record, record)
    current = b""
    members: list[int] = []
    for record in spill.sorted():
        bucket, page = record[: _KEY.size], _PAGE.unpack_from(record, _KEY.size)[0]
        if bucket != current:
            current, members = bucket, []
        # Records of a bucket come in page order (the page is the last part of the key).
        for other in members:
            yield other, page
        if len(members) < MAX_BUCKET_KEPT:
            members.append(page)
    if stats is not None:
        stats["runs"] = spill.runs
        stats["peak_items"] = spill.peak_items


def candidate_pairs_in_memory(signatures: Iterable[tuple[int, np.ndarray]],
                              params: LshParams | None = None) -> set[tuple[int, int]]:
    """The same candidate pairs as :func:`candidate_pairs`, with dictionaries (a reference)."""
    params = params or LshParams()
    buckets: dict[tuple[int, int], list[int]] = defaultdict(list)
    for page, signature in signatures:
        for band, digest in enumerate(_band_hashes(signature, params)):
            buckets[band, digest].append(page)
    pairs: set[tuple[int, int]] = set()
    for members in buckets.values():
        pairs.update(_bucket_pairs(sorted(members)))
    return pairs


def confirms(similarity: float, size_a: int, size_b: int, params: LshParams | None = None) -> bool:
    """Whether a pair of estimated Jaccard ``similarity``, of ``size_a`` and ``size_b``
    shingles, is a duplicate (see :data:`CONTAINED_JACCARD`).

    The containment of the smaller set in the larger follows from Jaccard and the sizes:
    ``|A & B| = J (|A| + |B|) / (1 + J)``.

    >>> confirms(0.75, 100, 100), confirms(0.6, 100, 100), confirms(0.6, 70, 100)
    (True, False, True)
    """
    params = params or LshParams()
    if similarity >= params.threshold:
        return True
    if similarity < params.contained_jaccard or min(size_a, size_b) <= 0:
        return False
    shared = similarity * (size_a + size_b) / (1.0 + similarity)
    return shared / min(size_a, size_b) >= params.containment


def confirmed_pairs(candidates: Iterable[tuple[int, int]], signatures: np.ndarray,
                    sizes: np.ndarray, params: LshParams | None = None,
                    ) -> Iterator[tuple[int, int, float]]:
    """Candidates that :func:`confirms`, with their estimated similarity.

    ``signatures`` (pages x positions) and ``sizes`` (shingles a page) are indexed by page
    number (an ``np.memmap`` keeps them on disk).
    """
    width = signatures.shape[1] if signatures.ndim == 2 else NUM_PERM
    for first, second in candidates:
        similarity = np.count_nonzero(signatures[first] == signatures[second]) / width
        if confirms(similarity, int(sizes[first]), int(sizes[second]), params):
            yield first, second, similarity
