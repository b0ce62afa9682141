"""Locality-sensitive hashing of MinHash signatures: candidate pairs, then confirmed pairs.

A signature of ``bands * rows`` positions is cut into ``bands`` bands; two pages whose
signatures agree on every position of at least one band share a bucket and are a candidate
pair. A pair of Jaccard similarity ``s`` becomes a candidate with probability
``1 - (1 - s**rows)**bands`` (the S-curve); each candidate is then confirmed (:func:`confirms`)
when the fraction of equal positions over the *whole* signature reaches
:data:`CONFIRM_THRESHOLD`, or when it reaches :data:`CONTAINED_JACCARD` and the smaller text
lies almost whole (:data:`CONTAINMENT`) inside the larger: a print or syndicated copy keeps the
article and loses the comments and extras that template removal leaves on the original; or
when the two texts have the same lead paragraph (:func:`warcdeboil.dedup.text.lead_digest`) and
the smaller lies mostly (:data:`LEAD_CONTAINMENT`) inside the larger, whatever their Jaccard: a
copy of an article that leaves out its photo captions or keeps its comments begins like it,
page 2 of it does not. Pages with the same lead also share a bucket of their own, an extra
band, so that such pairs are candidates at any similarity.

Bucket keys (band, 64-bit hash of the band, page) go through an external sort (numpy arrays
sorted a run at a time, the runs merged as the index's are): whatever the number of pages,
memory holds one run of keys and at most :data:`MAX_BUCKET_KEPT` page numbers of the bucket
being read. Keys that fit in one run are never written, and only their buckets of two pages or
more are read one by one. In a bucket of more than
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

import itertools
import struct
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from xxhash import xxh3_64_intdigest

from warcdeboil.site.index import merge_runs, write_run

from .minhash import NUM_PERM
from .spill import DEFAULT_RUN_ITEMS

__all__ = [
    "BANDS",
    "CONFIRM_THRESHOLD",
    "CONTAINED_JACCARD",
    "CONTAINMENT",
    "LEAD_CONTAINMENT",
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
# A pair is a duplicate when its estimated Jaccard similarity of 5-word shingles is at least this.
# Chosen on the generated crawl (scripts/make_dup_crawl.py) and the 1381 dragnet pages, template
# removed: an article with one paragraph added scores 0.78-0.95; distinct pages of one template
# score below 0.55, except where a page's own text is a line or two and what the template removal
# leaves is shared (3 dragnet pairs at 0.73-0.93: photo posts, Amazon reviews with a shared listing;
# the other 3 pairs above 0.7 are real copies). 0.7 leaves room both ways for the estimate's
# standard error (0.04). See git show ca1d0dc:benchmarks/results/dedup-2026-11-24.md.
CONFIRM_THRESHOLD = 0.7
# A pair below CONFIRM_THRESHOLD is still a duplicate when its estimated Jaccard is at least
# CONTAINED_JACCARD and the smaller page's shingles are at least CONTAINMENT inside the larger.
# Print and syndicated copies score J 0.6-0.7 with containment 0.93-0.99 (the original keeps
# comments and related links that are not template). ?page=2 of an article (its second half,
# contained whole) scores J up to 0.5 once link-dense blocks are left out of the signatures
# (dedup.text), and its estimate up to 0.55 (standard error 0.044): 0.5, chosen before link-dense
# blocks went, joined 1-4 such pages to their first page on the generated crawls (dragnet,
# l3s-gn1); 0.55 still joined some (dragnet: precision 0.977); 0.6 joins none. See
# benchmarks/results/dedup-2026-11-28.md.
CONTAINED_JACCARD = 0.6
CONTAINMENT = 0.9
# Pages with the same lead paragraph (dedup.text.lead_digest) are duplicates when the smaller
# lies at least this much inside the larger, at any Jaccard: an original with a photo gallery's
# captions or comments that its print copy lacks (J 0.06-0.3 on the generated crawls). 0.7, 0.8
# and 0.9 were tried on the generated crawls: 0.7 found 0-2 more pairs and no wrong one; no
# ?page=2 page shares its article's lead. The estimate of containment is noisy when J is low
# (J 0.26 +- 0.04 gives 0.86-0.98 for a copy a quarter the size of its original), hence the margin.
LEAD_CONTAINMENT = 0.7
# Page numbers kept per bucket while it is read (see the module docstring).
MAX_BUCKET_KEPT = 32

_KEY = struct.Struct(">HQ")  # band, hash of the band's rows: the bucket
_PAGE = struct.Struct(">Q")
# A bucket key and its page as one record: the bytes of _KEY then _PAGE.
_RECORD = np.dtype([("band", ">u2"), ("digest", ">u8"), ("page", ">u8")])
assert _RECORD.itemsize == _KEY.size + _PAGE.size


@dataclass(frozen=True, slots=True)
class LshParams:
    bands: int = BANDS
    rows: int = ROWS
    threshold: float = CONFIRM_THRESHOLD
    contained_jaccard: float = CONTAINED_JACCARD
    containment: float = CONTAINMENT
    lead_containment: float = LEAD_CONTAINMENT

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
    # Each band's bytes sliced from the signature's (one numpy call a page, not one a band).
    data = signature[:width].tobytes()
    step = params.rows * signature.itemsize
    return [xxh3_64_intdigest(data[at : at + step]) for at in range(0, len(data), step)]


def _bucket_pairs(members: Iterable[int]) -> Iterator[tuple[int, int]]:
    """Pairs of one bucket, members in ascending order (see MAX_BUCKET_KEPT)."""
    kept: list[int] = []
    for page in members:
        for other in kept:
            yield other, page
        if len(kept) < MAX_BUCKET_KEPT:
            kept.append(page)


def _bucket_keys(page: int, signature: np.ndarray, params: LshParams,
                 leads: Sequence[int] | np.ndarray | None) -> Iterator[tuple[int, int]]:
    """(band, digest) of each bucket a page is in: one per band, and the lead's (band
    ``params.bands``) when the page has one."""
    yield from enumerate(_band_hashes(signature, params))
    if leads is not None and leads[page]:
        yield params.bands, int(leads[page])


def bucket_keys(signature: np.ndarray, params: LshParams | None = None, *,
                lead: int = 0) -> list[bytes]:
    """The buckets a signature falls in, one a band (band number and hash of its rows), and
    its lead's when ``lead`` is not 0: the keys :func:`candidate_pairs` sorts, for an engine
    that groups them by shuffling."""
    params = params or LshParams()
    return [_KEY.pack(band, digest)
            for band, digest in _bucket_keys(0, signature, params, [lead])]


def bucket_pairs(members: Iterable[int]) -> Iterator[tuple[int, int]]:
    """The candidate pairs of one bucket, its members in ascending order (the choice
    :func:`candidate_pairs` makes in a bucket larger than :data:`MAX_BUCKET_KEPT`)."""
    return _bucket_pairs(members)


def candidate_pairs(signatures: Iterable[tuple[int, np.ndarray]], work_dir: Path,
                    params: LshParams | None = None, *, run_items: int = DEFAULT_RUN_ITEMS,
                    stats: dict[str, int] | None = None,
                    leads: Sequence[int] | np.ndarray | None = None,
                    ) -> Iterator[tuple[int, int]]:
    """Candidate pairs ``(a, b)``, ``a < b``, of pages sharing a bucket, in bounded memory.

    ``signatures`` gives ``(page number, signature)``; a pair may be yielded once per band it
    shares. ``leads``, indexed by page number, gives each page's lead digest (0: none): pages
    with the same lead share one more bucket. Run files go to ``work_dir`` and are removed once
    merged. ``stats``, when given, receives the spill's ``runs`` and ``peak_items``.
    """
    params = params or LshParams()
    keys = _KeyRuns(work_dir, run_items)
    for page, signature in signatures:
        keys.add(page, [digest for _, digest in _bucket_keys(page, signature, params, leads)])
    if not keys.runs:  # all in one run: sorted in memory
        yield from _sorted_pairs(*keys.sorted_in_memory())
    else:
        yield from _merged_pairs(keys.merged())
    if stats is not None:
        stats["runs"] = keys.runs
        stats["peak_items"] = keys.peak_items


def _merged_pairs(records: Iterator[bytes]) -> Iterator[tuple[int, int]]:
    """The pairs of key records in key order (bucket, then page: a bucket's pages ascend)."""
    for _, bucket in itertools.groupby(records, key=lambda record: record[: _KEY.size]):
        yield from _bucket_pairs(_PAGE.unpack_from(record, _KEY.size)[0] for record in bucket)


def _sorted_pairs(band: np.ndarray, digest: np.ndarray, page: np.ndarray
                  ) -> Iterator[tuple[int, int]]:
    """The pairs of keys sorted by (band, digest, page), in that order: only the buckets of
    two pages or more are read (most pages are alone in every bucket)."""
    first = np.empty(len(page), dtype=bool)  # a bucket's first key
    first[:1] = True
    first[1:] = (band[1:] != band[:-1]) | (digest[1:] != digest[:-1])
    starts = np.flatnonzero(first)
    sizes = np.diff(starts, append=len(page))
    shared = sizes > 1
    for start, size in zip(starts[shared].tolist(), sizes[shared].tolist(), strict=True):
        yield from _bucket_pairs(page[start : start + size].tolist())


class _KeyRuns:
    """Bucket keys ``(band, digest, page)`` in sorted runs of at most ``run_items`` keys, held
    as numpy arrays (18 bytes a key, where a tuple of its bytes took about 110) and sorted with
    numpy; a full run is written as the index's runs are (each key's bytes, ``_KEY`` then
    ``_PAGE``, as its sort key: :func:`~warcdeboil.site.index.write_run`) and merged as they are.
    Keys that never fill a run are never written."""

    def __init__(self, directory: Path, run_items: int) -> None:
        self.directory = directory
        self.run_items = max(1, run_items)
        self.runs = 0
        self.peak_items = 0
        self._band = np.empty(0, dtype=np.uint16)
        self._digest = np.empty(0, dtype=np.uint64)
        self._page = np.empty(0, dtype=np.uint64)
        self._held = 0
        self._paths: list[Path] = []

    def add(self, page: int, digests: list[int]) -> None:
        """One page's keys: the digests of its buckets, in band order (:func:`_bucket_keys`)."""
        at = 0
        while at < len(digests):
            take = min(len(digests) - at, self.run_items - self._held)
            if self._held + take > len(self._page):  # grown as keys come, up to a run
                size = min(self.run_items, max(2 * len(self._page), self._held + take, 1024))
                self._band = np.resize(self._band, size)
                self._digest = np.resize(self._digest, size)
                self._page = np.resize(self._page, size)
            end = self._held + take
            self._band[self._held : end] = np.arange(at, at + take)
            self._digest[self._held : end] = digests[at : at + take]
            self._page[self._held : end] = page
            self._held, at = end, at + take
            self.peak_items = max(self.peak_items, self._held)
            if self._held == self.run_items:
                self._spill()

    def sorted_in_memory(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The keys held, in key order (band, digest, page), as three arrays."""
        held = slice(0, self._held)
        order = np.lexsort((self._page[held], self._digest[held], self._band[held]))
        return self._band[order], self._digest[order], self._page[order]

    def _spill(self) -> None:
        band, digest, page = self.sorted_in_memory()
        records = np.empty(len(page), dtype=_RECORD)
        records["band"], records["digest"], records["page"] = band, digest, page
        data = records.tobytes()
        size = _RECORD.itemsize
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self.directory / f"lsh-r{self.runs:06d}.run"
        write_run(path, ((data[at : at + size],) * 2 for at in range(0, len(data), size)))
        self._paths.append(path)
        self.runs += 1
        self._held = 0

    def merged(self) -> Iterator[bytes]:
        """Every key's bytes in key order, the last run written too; run files removed once
        read."""
        if self._held:
            self._spill()
        try:
            yield from merge_runs(self._paths)
        finally:
            for path in self._paths:
                path.unlink(missing_ok=True)
            self._paths = []


def candidate_pairs_in_memory(signatures: Iterable[tuple[int, np.ndarray]],
                              params: LshParams | None = None, *,
                              leads: Sequence[int] | np.ndarray | None = None,
                              ) -> set[tuple[int, int]]:
    """The same candidate pairs as :func:`candidate_pairs`, with dictionaries (a reference)."""
    params = params or LshParams()
    buckets: dict[tuple[int, int], list[int]] = defaultdict(list)
    for page, signature in signatures:
        for band, digest in _bucket_keys(page, signature, params, leads):
            buckets[band, digest].append(page)
    pairs: set[tuple[int, int]] = set()
    for members in buckets.values():
        pairs.update(_bucket_pairs(sorted(members)))
    return pairs


def confirms(similarity: float, size_a: int, size_b: int, params: LshParams | None = None,
             *, same_lead: bool = False) -> bool:
    """Whether a pair of estimated Jaccard ``similarity``, of ``size_a`` and ``size_b``
    shingles, is a duplicate (see :data:`CONTAINED_JACCARD` and :data:`LEAD_CONTAINMENT`;
    ``same_lead``: the two pages have the same lead paragraph).

    The containment of the smaller set in the larger follows from Jaccard and the sizes:
    ``|A & B| = J (|A| + |B|) / (1 + J)``.

    >>> confirms(0.75, 100, 100), confirms(0.65, 100, 100), confirms(0.65, 72, 100)
    (True, False, True)
    >>> confirms(0.25, 25, 100), confirms(0.25, 25, 100, same_lead=True)
    (False, True)
    """
    params = params or LshParams()
    if similarity >= params.threshold:
        return True
    if min(size_a, size_b) <= 0:
        return False
    shared = similarity * (size_a + size_b) / (1.0 + similarity)
    contained = shared / min(size_a, size_b)
    if same_lead and contained >= params.lead_containment:
        return True
    return similarity >= params.contained_jaccard and contained >= params.containment


def confirmed_pairs(candidates: Iterable[tuple[int, int]], signatures: np.ndarray,
                    sizes: np.ndarray, params: LshParams | None = None,
                    leads: np.ndarray | None = None) -> Iterator[tuple[int, int, float]]:
    """Candidates that :func:`confirms`, with their estimated similarity.

    ``signatures`` (pages x positions), ``sizes`` (shingles a page) and ``leads`` (lead
    digests, 0: none) are indexed by page number (an ``np.memmap`` keeps them on disk).
    """
    width = signatures.shape[1] if signatures.ndim == 2 else NUM_PERM
    for first, second in candidates:
        similarity = np.count_nonzero(signatures[first] == signatures[second]) / width
        same_lead = leads is not None and bool(leads[first]) and leads[first] == leads[second]
        if confirms(similarity, int(sizes[first]), int(sizes[second]), params,
                    same_lead=same_lead):
            yield first, second, similarity
