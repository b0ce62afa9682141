"""Duplicate groups: union-find over confirmed pairs, and the page each group keeps.

The keep rule (:func:`keep_order`): of the copies of one page, keep the one with the **most
text** (a copy cut short or stripped is the worse one), then the **earliest capture** (the
original before its mirrors and re-crawls), then the **shortest URL**, then the smallest URL
in code-point order (``http://a.com/x`` before ``http://a.com/x?utm_source=feed``). Every key is
a property of the page itself, so the choice does not depend on the order pages were read.

Memory: the union-find is one int64 array of parents, 8 bytes a page; given ``path`` it is a
memory-mapped file, so what stays in RAM is what the operating system caches. Groups are read
back with an external sort of (root, page) records (:func:`group_members`), never a dict of all
groups; reading them holds each page's root and two flags, 10 bytes a page (10 MB for a
million pages), the one cost that grows with the run. Exact duplicates (equal payload
digests) are grouped by the same external sort (:func:`exact_groups`), without any signature.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .spill import DEFAULT_RUN_ITEMS, SortedSpill

__all__ = [
    "Copy", "DuplicateGroup", "UnionFind", "choose_keeper", "exact_groups", "group_members",
    "keep_order", "roots_of",
]

_PAGE = struct.Struct(">Q")
_ROOT_PAGE = struct.Struct(">QQ")


@dataclass(frozen=True, slots=True)
class Copy:
    """What the keep rule looks at in one page."""

    page: int
    url: str
    text_chars: int
    date: str = ""  # WARC-Date (ISO 8601 sorts as text); "" (unknown) sorts last


def keep_order(copy: Copy) -> tuple[int, int, str, int, str]:
    """Sort key: the copy a group keeps comes first (see the module docstring).

    >>> copies = [Copy(1, "http://a.com/x?utm_source=feed", 900, "2024-01-01T00:00:00Z"),
    ...           Copy(2, "http://a.com/x", 900, "2024-01-01T00:00:00Z"),
    ...           Copy(3, "http://mirror.org/x", 900, "2023-05-01T00:00:00Z")]
    >>> min(copies, key=keep_order).page
    3
    """
    return (-copy.text_chars, 0 if copy.date else 1, copy.date, len(copy.url), copy.url)


@dataclass(frozen=True, slots=True)
class DuplicateGroup:
    """Pages that are copies of one another: ``keep`` stays, ``drop`` are its duplicates."""

    keep: int
    drop: tuple[int, ...]


class UnionFind:
    """Disjoint sets over pages ``0 .. size-1`` (path halving, union by smaller root)."""

    def __init__(self, size: int, path: Path | None = None) -> None:
        if path is None:
            self.parent = np.arange(size, dtype=np.int64)
        else:
            mapped = np.lib.format.open_memmap(path, mode="w+", dtype=np.int64, shape=(size,))
            mapped[:] = np.arange(size, dtype=np.int64)
            # A plain ndarray over the same mapping: np.memmap's __getitem__ is a Python method,
            # 7x the cost of an element read, and find reads one element at a time.
            self.parent = mapped.view(np.ndarray)

    def find(self, page: int) -> int:
        """The root of ``page``'s set; each step points a page at its grandparent (halving)."""
        parent = self.parent
        while True:
            up = int(parent[page])
            if up == page:
                return page
            grand = int(parent[up])
            parent[page] = grand
            page = grand

    def union(self, first: int, second: int) -> bool:
        """Join two sets; False when they were one already."""
        a, b = self.find(first), self.find(second)
        if a == b:
            return False
        # The smaller root wins: roots, and so group order, do not depend on pair order.
        if b < a:
            a, b = b, a
        self.parent[b] = a
        return True


def roots_of(union_find: UnionFind) -> np.ndarray:
    """Each page's root: the smallest page of its set (int64, 8 bytes a page)."""
    size = len(union_find.parent)
    return np.fromiter((union_find.find(page) for page in range(size)), dtype=np.int64,
                       count=size)


def group_members(union_find: UnionFind, work_dir: Path, *,
                  run_items: int = DEFAULT_RUN_ITEMS,
                  roots: np.ndarray | None = None) -> Iterator[list[int]]:
    """Each set of two or more pages, pages ascending, sets by their smallest page
    (``roots``: :func:`roots_of` the union-find, when the caller has it already)."""
    size = len(union_find.parent)
    if roots is None:
        roots = roots_of(union_find)
    joined = roots != np.arange(size)
    in_group = joined.copy()
    in_group[roots[joined]] = True
    spill = SortedSpill(work_dir, run_items=run_items, prefix="groups")
    for page in np.flatnonzero(in_group):
        record = _ROOT_PAGE.pack(int(roots[page]), int(page))
        spill.add(record, record)
    yield from _runs_of_equal_prefix(spill.sorted(), 8)


def _runs_of_equal_prefix(records: Iterator[bytes], prefix: int) -> Iterator[list[int]]:
    """Groups of consecutive records sharing their first ``prefix`` bytes: their page numbers
    (the last 8 bytes), for groups of two or more."""
    current = b""
    members: list[int] = []
    for record in records:
        head = record[:prefix]
        if head != current:
            if len(members) > 1:
                yield members
            current, members = head, []
        members.append(_PAGE.unpack_from(record, len(record) - _PAGE.size)[0])
    if len(members) > 1:
        yield members


def exact_groups(digests: Iterable[tuple[int, bytes]], work_dir: Path, *,
                 run_items: int = DEFAULT_RUN_ITEMS) -> Iterator[list[int]]:
    """Pages with equal payload digests: each set of two or more, pages ascending.

    ``digests`` gives ``(page number, digest)``; digests of any one length (e.g. the 20 bytes of
    a ``sha1:`` WARC-Payload-Digest).
    """
    spill = SortedSpill(work_dir, run_items=run_items, prefix="exact")
    width = None
    for page, digest in digests:
        if width is None:
            width = len(digest)
        elif len(digest) != width:
            raise ValueError(f"digest of {len(digest)} bytes among digests of {width}")
        record = digest + _PAGE.pack(page)
        spill.add(record, record)
    yield from _runs_of_equal_prefix(spill.sorted(), width or 0)


def choose_keeper(members: Iterable[int], copy_of: Callable[[int], Copy]) -> DuplicateGroup:
    """The group of ``members`` under the keep rule; ``copy_of`` describes a page."""
    ordered = sorted((copy_of(page) for page in members), key=keep_order)
    return DuplicateGroup(ordered[0].page, tuple(sorted(c.page for c in ordered[1:])))
