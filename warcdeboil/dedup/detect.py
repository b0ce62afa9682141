"""The whole duplicate search over a set of pages: exact, then near duplicates, then groups.

>>> import tempfile
>>> story = " ".join(f"word{i}" for i in range(60))
>>> pages = [PageText(0, "http://a.com/x?utm_source=feed", story, "2024-01-02"),
...          PageText(1, "http://a.com/x", story, "2024-01-02"),
...          PageText(2, "http://b.org/y", "another story entirely, nothing alike " * 5, "")]
>>> with tempfile.TemporaryDirectory() as tmp:
...     list(duplicate_groups(pages, Path(tmp)))
[DuplicateGroup(keep=1, drop=(0,))]
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .groups import Copy, DuplicateGroup, UnionFind, choose_keeper, exact_groups, group_members
from .lsh import LshParams, candidate_pairs, confirms
from .minhash import MinHasher
from .shingles import shingle_hashes
from .spill import DEFAULT_RUN_ITEMS
from .text import lead_digest

__all__ = ["DedupStats", "PageText", "duplicate_groups"]


@dataclass(frozen=True, slots=True)
class PageText:
    """One page as duplicate search sees it: its number, URL, template-removed text, capture
    date, and payload digest (``b""``: unknown, no exact-duplicate check)."""

    page: int
    url: str
    text: str
    date: str = ""
    digest: bytes = b""


@dataclass(slots=True)
class DedupStats:
    exact_pairs: int = 0  # pages joined by an equal payload digest
    candidates: int = 0  # LSH candidate pairs compared (pairs already joined are not)
    confirmed: int = 0  # candidates at or above the threshold
    skipped_empty: int = 0  # pages without text: never near duplicates of anything
    spill: dict[str, int] = field(default_factory=dict)


def duplicate_groups(pages: Sequence[PageText], work_dir: Path, *,
                     params: LshParams | None = None, hasher: MinHasher | None = None,
                     run_items: int = DEFAULT_RUN_ITEMS,
                     stats: DedupStats | None = None) -> Iterator[DuplicateGroup]:
    """Groups of duplicate pages, each with the page it keeps (``pages[i].page`` must be ``i``).

    Signatures and the union-find live in files of ``work_dir`` (memory-mapped), bucket keys
    and groups go through external sorts of at most ``run_items`` records in memory.
    """
    params = params or LshParams()
    hasher = hasher or MinHasher()
    stats = stats if stats is not None else DedupStats()
    work_dir.mkdir(parents=True, exist_ok=True)
    size = len(pages)
    for number, page in enumerate(pages):
        if page.page != number:
            raise ValueError(f"pages[{number}] is numbered {page.page}")
    union = UnionFind(size, work_dir / "parents.npy")
    with_digest = [(p.page, p.digest) for p in pages if p.digest]
    for members in exact_groups(with_digest, work_dir, run_items=run_items):
        for other in members[1:]:
            stats.exact_pairs += union.union(members[0], other)
    signatures = np.lib.format.open_memmap(work_dir / "signatures.npy", mode="w+",
                                           dtype=np.uint32, shape=(size, hasher.num_perm))
    # Shingles a page, repeats included (a near-exact count of the set for prose, without the
    # cost of a sort): what the containment test needs.
    sizes = np.lib.format.open_memmap(work_dir / "sizes.npy", mode="w+", dtype=np.int64,
                                      shape=(size,))
    # Each page's lead paragraph (dedup.text.lead_digest; 0: none), for the lead rule.
    leads = np.lib.format.open_memmap(work_dir / "leads.npy", mode="w+", dtype=np.uint64,
                                      shape=(size,))
    with_text = []
    for page in pages:
        shingles = shingle_hashes(page.text)
        signatures[page.page] = hasher.signature(shingles)
        sizes[page.page] = len(shingles)
        leads[page.page] = lead_digest(page.text)
        if page.text.strip():
            with_text.append(page.page)
        else:
            stats.skipped_empty += 1
    width = hasher.num_perm
    for first, second in candidate_pairs(((p, signatures[p]) for p in with_text), work_dir,
                                         params, run_items=run_items, stats=stats.spill,
                                         leads=leads):
        if union.find(first) == union.find(second):
            continue
        stats.candidates += 1
        agree = np.count_nonzero(signatures[first] == signatures[second]) / width
        same_lead = bool(leads[first]) and leads[first] == leads[second]
        if confirms(agree, int(sizes[first]), int(sizes[second]), params, same_lead=same_lead):
            stats.confirmed += 1
            union.union(first, second)

    def copy_of(number: int) -> Copy:
        page = pages[number]
        return Copy(number, page.url, len(page.text), page.date)

    for members in group_members(union, work_dir, run_items=run_items):
        yield choose_keeper(members, copy_of)
    del signatures, sizes, leads
    for name in ("signatures.npy", "sizes.npy", "leads.npy", "parents.npy"):
        (work_dir / name).unlink(missing_ok=True)
