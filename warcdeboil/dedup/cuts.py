"""What a site's template removes from pages, found with numpy, many pages at a time.

:func:`warcdeboil.page.dom.find_doomed` walks a page's role marks in Python, one mark at a time (a
dragnet page has 185 of them): it was half of the cost of the duplicate stage's signature text.
:func:`find_doomed_batch` gives the very same answers for a batch of pages from whole-array
operations over their bytes joined (one page at a time, numpy's cost per call ate the gain).
:mod:`warcdeboil.page.dom` keeps the reference, which pass 2 runs in the main process (that never
imports numpy); the tests compare the two on real pages.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np

from warcdeboil.page.dom import (
    BLOCK_SPLIT,
    MAX_SLOT_SHARE,
    ROLE_CLOSE,
    ROLE_MAIN,
    ROLE_OPEN,
    ROLES,
    Doomed,
    PageText,
)

__all__ = ["find_doomed_batch", "longest_block"]

# Marks are three bytes, EF B7 xx (U+FDD0..U+FDEF are EF B7 90..AF); their last byte tells them
# apart. Both tables below are read off dom's definitions, so the two cannot drift apart.
_LEAD, _SECOND = 0xEF, 0xB7
# Role marks: OPEN, CLOSE of role 0, then of role 1 ...
_ROLE_FIRST, _ROLE_LAST = ROLE_OPEN[0].encode()[-1], ROLE_CLOSE[-1].encode()[-1]
# Last bytes of the marks that end a text block (dom's BLOCK_SPLIT).
_BLOCK_MARK = np.array([0x90 <= low <= 0xAF and BLOCK_SPLIT.fullmatch(chr(0xFDD0 + low - 0x90))
                        is not None for low in range(256)], dtype=bool)
_MARK_BYTES = 3
_BETWEEN = b"\n"  # between two pages' bytes when a batch is joined: no mark spans it


def _marks(data: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each mark of ``data`` starts, and its last byte."""
    leads = np.flatnonzero(data[:-2] == _LEAD)
    leads = leads[data[leads + 1] == _SECOND]
    return leads, data[leads + 2]


def longest_block(marked: bytes) -> int:
    """:func:`warcdeboil.page.dom._longest_block`: where the first longest text block of the marked
    text starts, -1 when every block is empty."""
    starts, last = _marks(np.frombuffer(marked, dtype=np.uint8))
    marks = starts[_BLOCK_MARK[last]]
    piece_starts = np.concatenate(([0], marks + _MARK_BYTES))
    sizes = np.concatenate((marks, [len(marked)])) - piece_starts
    longest = int(sizes.argmax())  # the first of the longest, as dom's list.index
    return int(piece_starts[longest]) if sizes[longest] > 0 else -1


def find_doomed_batch(pages: Sequence[PageText], templates: Sequence[Collection[int]],
                      slots: Sequence[Collection[int]]) -> list[Doomed]:
    """:func:`warcdeboil.page.dom.find_doomed` of each page with its site's template and slots: the
    same candidates, the same slots in the same order."""
    candidates = [
        {i for i, digest in enumerate(page.hashes) if digest and digest in template}
        if template else set()
        for page, template in zip(pages, templates, strict=True)
    ]
    found = _doomed_slots(pages, slots)
    return [Doomed(c, s) for c, s in zip(candidates, found, strict=True)]


def _doomed_slots(pages: Sequence[PageText], slots: Sequence[Collection[int]]
                  ) -> list[list[tuple[int, int, int]]]:
    """:func:`warcdeboil.page.dom._doomed_slots` of each page: the role elements whose slot is in
    the page's ``slots``, as (start, end, ordinal), in the order of their closing marks."""
    found: list[list[tuple[int, int, int]]] = [[] for _ in pages]
    # Which of each page's slots are the site's: pages with none are left out of the batch.
    members: list[np.ndarray] = []
    chosen: list[int] = []
    for number, (text, site_slots) in enumerate(zip(pages, slots, strict=True)):
        if site_slots and text.slots:
            member = np.fromiter(map(site_slots.__contains__, text.slots), dtype=bool,
                                 count=len(text.slots))
            if member.any():
                members.append(member)
                chosen.append(number)
    if not chosen:
        return found
    texts = [pages[n].marked for n in chosen]
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    begin = np.zeros(len(texts), dtype=np.int64)  # each page's first byte in the joined bytes
    np.cumsum(lengths[:-1] + len(_BETWEEN), out=begin[1:])
    data = np.frombuffer(_BETWEEN.join(texts), dtype=np.uint8)
    starts, last = _marks(data)
    is_role = (last >= _ROLE_FIRST) & (last <= _ROLE_LAST)
    positions = starts[is_role]
    page, first_marks = _owners(begin, positions)  # each role mark's page, each page's first
    code = last[is_role].astype(np.int64) - _ROLE_FIRST
    role, closing = np.divmod(code, 2)
    opening = closing == 0
    # Each opening mark's number among its page's (its slot's place in page.slots).
    opened = np.concatenate(([0], np.cumsum(opening)))  # openings before each mark, and all
    ordinals = opened[1:] - 1 - opened[first_marks][page]
    # Main-role elements opened before each mark: an element holding one is never doomed.
    main_opens = opening & (role == ROLE_MAIN)
    mains_before = np.cumsum(main_opens) - main_opens
    opens, closes = _pairs(page * ROLES + role, opening)
    if not len(opens):
        return found
    owner = page[opens]
    ends = positions[closes] + _MARK_BYTES
    begins = positions[opens]
    ks = ordinals[opens]
    counts = np.fromiter(map(len, members), dtype=np.int64, count=len(members))
    inside = ks < counts[owner]
    member_at = np.zeros(len(members), dtype=np.int64)
    np.cumsum(counts[:-1], out=member_at[1:])
    all_members = np.concatenate(members)
    doomed = inside.copy()
    doomed[inside] = all_members[member_at[owner[inside]] + ks[inside]]
    doomed &= (ends - begins) <= MAX_SLOT_SHARE * lengths[owner]
    doomed &= mains_before[closes] <= mains_before[opens]
    kept = np.flatnonzero(doomed)
    if not len(kept):
        return found
    # Not an element holding its page's longest text block.
    longest = _longest_blocks(starts[_BLOCK_MARK[last]], begin, lengths)
    spans = longest[owner[kept]]
    kept = kept[~((begins[kept] < spans) & (spans < ends[kept]))]
    kept = kept[np.argsort(closes[kept], kind="stable")]  # pages in order, closings in order
    offset = begin[owner[kept]]
    rows = zip(owner[kept].tolist(), (begins[kept] - offset).tolist(),
               (ends[kept] - offset).tolist(), ks[kept].tolist(), strict=True)
    for n, start, end, k in rows:
        found[chosen[n]].append((start, end, k))
    return found


def _owners(begin: np.ndarray, at: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The page of each of the sorted places ``at`` (pages start at ``begin``, the first at
    0), and the first of them in each page (a search per page, not one per place)."""
    firsts = np.searchsorted(at, begin)
    return np.repeat(np.arange(len(begin)), np.diff(firsts, append=len(at))), firsts


def _longest_blocks(marks: np.ndarray, begin: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """:func:`longest_block` of each page of a joined batch, where it is in the joined bytes
    (-1: none): ``marks`` are where the block marks start, ``begin`` and ``lengths`` where each
    page starts and its length."""
    # Each text block runs from a page's start or a mark's end to a mark or a page's end: in
    # text order, the n-th start and the n-th end are one block's.
    ends = begin + lengths
    block_starts = np.insert(marks + _MARK_BYTES, np.searchsorted(marks, begin), begin)
    sizes = np.insert(marks, np.searchsorted(marks, ends), ends) - block_starts
    page, page_first = _owners(begin, block_starts)  # each page has a block
    longest = np.flatnonzero(sizes == np.maximum.reduceat(sizes, page_first)[page])
    first = longest[np.searchsorted(page[longest], np.arange(len(begin)))]
    return np.where(sizes[first] > 0, block_starts[first], -1)


def _pairs(group: np.ndarray, opening: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The opening and closing marks (their numbers) of every element, the marks of each
    ``group`` (a page's role) paired as a stack pairs them: a closing mark with no element of
    its group open is passed over, an element never closed has no pair.

    With depth counted from the group's start (an opening's depth before it, a closing's after
    it), an element's two marks are at one depth and no mark between them is: the marks at one
    depth pair where an opening is followed by a closing. A closing passed over is the first
    mark at a depth below all before it, so it pairs with nothing.
    """
    index = np.argsort(group, kind="stable")  # by group, in text order within a group
    if not len(index):
        return index, index
    group, step = group[index], np.where(opening[index], 1, -1)
    depth = np.cumsum(step)
    starts = np.empty(len(group), dtype=bool)
    starts[0] = True
    np.not_equal(group[1:], group[:-1], out=starts[1:])
    first = np.flatnonzero(starts)
    depth -= (depth[first] - step[first])[np.cumsum(starts) - 1]  # from each group's start
    level = depth - (step > 0)
    order = np.lexsort((index, level, group))
    index, group, level, step = index[order], group[order], level[order], step[order]
    match = ((step[:-1] > 0) & (step[1:] < 0) & (level[:-1] == level[1:])
             & (group[:-1] == group[1:]))
    return index[:-1][match], index[1:][match]
