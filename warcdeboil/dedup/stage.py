"""The duplicate stage of a run: between the fit and pass 2, from pass 1's page stores.

1. :func:`sign_file` (one job per input, in the worker pool): each page of the input's store
   gets its signature text (:func:`~.text.signature_text`: the page without its site's fitted
   template), then shingles and a MinHash signature, written to disk with the page's URL, date,
   record id, site, text length and payload digest (:class:`~.detect.SignatureWriter`). No HTML
   is parsed again. When the language-model stage runs too, its walk of the page stores signs
   the pages (:func:`sign_batch` with the template cuts it found for its cleaning:
   :mod:`warcdeboil.lm.stage`), and this step is skipped.
2. :func:`decide` (one process): the parts of all inputs as one run of pages, exact and near
   duplicates joined across sites (:func:`~.detect.search`), each group's kept page chosen
   (:func:`~.groups.choose_keeper`), and one side file of verdicts per input, in record order
   (:mod:`warcdeboil.dedup.verdicts`), which pass 2 reads in step with the input.
3. :func:`iter_url_groups` gives the groups afterwards, per site, for learning URL rules.

Memory: a page is never held after it is signed; the candidate pairs, the groups and the
verdicts go through external sorts of :data:`STAGE_RUN_ITEMS` records; the union-find and the
signatures are memory-mapped; what grows with the run is the array of each page's group
(8 bytes a page).
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np

from warcdeboil.page.dom import Doomed
from warcdeboil.site.fit import SiteProfile
from warcdeboil.site.pagestore import PageEntry, iter_page_store
from warcdeboil.site.profiles import ProfileReader
from warcdeboil.site.sitekey import SiteKeyer

from .cuts import find_doomed_batch
from .detect import DedupStats, PageSignatures, SignatureWriter, search
from .doomed import DoomedWriter
from .groups import choose_keeper, group_members, roots_of
from .lsh import LshParams
from .own import has_template, own_texts, same_own
from .shingles import shingle_hashes_batch
from .spill import SortedSpill
from .text import signature_text
from .verdicts import (
    DEDUP_FORMAT,
    Kind,
    SignJob,
    Verdict,
    VerdictWriter,
    signatures_dir,
    verdicts_path,
)

__all__ = ["DEDUP_FORMAT", "STAGE_KEY_RUN_ITEMS", "STAGE_RUN_ITEMS", "DedupCounts", "SignJob",
           "decide", "doomed_of", "iter_url_groups", "sign_batch", "sign_file", "signatures_dir"]

# Records (LSH bucket keys, group members, verdicts) held in memory before a sorted run is
# spilled: about 110 bytes each with Python's overhead, so under 2 MB. The stage's memory stays
# flat once a run is full (dragnet's 1,381 pages have about 47,000 bucket keys: three runs).
# With 65,536 the stage's peak RSS still grew 1.13x from dragnet to 8 times its pages, as the
# one run filled up; with 16,384 it grows 1.05x. More would only save merge passes.
STAGE_RUN_ITEMS = 1 << 14
# LSH bucket keys held before a sorted run is spilled: numpy arrays, 18 bytes a key (and as
# many again while a run is sorted), so 65,536 keys are under 2.5 MB. Dragnet's 1,381 pages
# have about 47,000 keys: one run, sorted in memory and never written (as 16,384 records, three
# runs were written and merged a key at a time: 0.1 CPU-s, a tenth of the stage).
STAGE_KEY_RUN_ITEMS = 1 << 16
# Pages signed together (what their templates remove and their shingles are found for all at
# once: numpy's cost per call is then paid once for many pages): 64 dragnet pages are about
# 1 MB of marked text.
SIGN_BATCH = 64
# Group files beside the signatures: each page's group (its root), what iter_url_groups reads.
ROOTS = "roots.npy"
_VERDICT = struct.Struct(">QIBdQ")  # page, group size, kind, similarity, kept page
_URL_ROW = struct.Struct("<IIQ")  # lengths of site and URL, group id


def sign_file(job: SignJob, progress: Callable[[int, int], None] | None = None) -> int:
    """Write the signature part of one input; the number of pages signed."""
    keyer = SiteKeyer(job.site_key)
    profiles = ProfileReader(Path(job.profiles_dir), job.partitions) if job.profiles_dir else None
    pages = 0
    batch: list[tuple[PageEntry, str, SiteProfile | None]] = []
    with ExitStack() as stack:
        if profiles is not None:
            stack.callback(profiles.close)
        writer = stack.enter_context(SignatureWriter(Path(job.directory), job.part))
        kept = (stack.enter_context(DoomedWriter(Path(job.doomed))) if job.doomed is not None
                else None)

        def sign() -> None:
            doomed = sign_batch(batch, writer)
            if kept is not None:
                for (entry, _, _), known in zip(batch, doomed, strict=True):
                    kept.add(entry.ordinal, known)
            batch.clear()

        for entry in iter_page_store(Path(job.page_store)):
            site = keyer(entry.url)
            profile = profiles.get(site) if profiles is not None and site else None
            batch.append((entry, site, profile))
            if len(batch) == SIGN_BATCH:
                sign()
            pages += 1
            if progress is not None and pages % 256 == 0:
                progress(256, 0)
        sign()
    if progress is not None and pages % 256:
        progress(pages % 256, 0)
    return pages


def doomed_of(batch: list[tuple[PageEntry, str, SiteProfile | None]]) -> list[Doomed]:
    """What each page's site template removes (:func:`~.cuts.find_doomed_batch`), for pages
    given as ``(entry, site, profile)``."""
    return find_doomed_batch(
        [entry.page for entry, _, _ in batch],
        [profile.template if profile is not None else () for _, _, profile in batch],
        [profile.template_slots if profile is not None else () for _, _, profile in batch])


def sign_batch(batch: list[tuple[PageEntry, str, SiteProfile | None]],
                writer: SignatureWriter, doomed: list[Doomed] | None = None) -> list[Doomed]:
    """Sign pages in order; what their templates remove (``doomed``, unless the caller found
    it already: the language-model stage's walk, :mod:`warcdeboil.lm.stage`), and their
    shingles, are found for all of them at once. Returns what their templates remove (for
    pass 2: :mod:`warcdeboil.dedup.doomed`)."""
    if doomed is None:
        doomed = doomed_of(batch)
    texts = [signature_text(entry.page, profile, known)
             for (entry, _, profile), known in zip(batch, doomed, strict=True)]
    for (entry, site, profile), text, shingles in zip(batch, texts, shingle_hashes_batch(texts),
                                                      strict=True):
        writer.add(text, url=entry.url, date=entry.date, digest=entry.digest,
                   ordinal=entry.ordinal, record_id=entry.record_id, site=site,
                   shingles=shingles, no_template=not has_template(profile))
    return doomed


@dataclass
class DedupCounts:
    """What the stage found (the run's summary and ``dedup.json`` keep it)."""

    pages: int = 0
    groups: int = 0  # groups of two or more pages
    exact: int = 0  # pages that are an exact copy of their group's kept page
    near: int = 0  # pages that are a near duplicate of it
    candidates: int = 0  # LSH candidate pairs compared
    confirmed: int = 0  # of them, confirmed
    # Confirmed pairs of pages of one site without template given a second look (.own), and
    # those it refused: their own texts differ.
    looked: int = 0
    refused: int = 0

    def to_dict(self) -> dict[str, int]:
        return {"pages": self.pages, "groups": self.groups, "exact": self.exact,
                "near": self.near, "candidates": self.candidates, "confirmed": self.confirmed,
                "looked": self.looked, "refused": self.refused}


def decide(dedup_dir: Path, parts: int, *, params: LshParams | None = None,
           run_items: int = STAGE_RUN_ITEMS, key_run_items: int = STAGE_KEY_RUN_ITEMS,
           pages: Sequence[SignJob] = ()) -> DedupCounts:
    """Find the groups over the signature parts ``0 .. parts-1`` and write each input's side
    file of verdicts (:func:`~.verdicts.verdicts_path` in ``dedup_dir``; an input without
    duplicates gets an empty one). ``pages``: the signing job of each part, whose page store
    and profiles the second look at two pages of one site without template reads again
    (:mod:`.own`); without them, such pairs are joined as the others."""
    work = signatures_dir(dedup_dir)
    signatures = PageSignatures(work, parts)
    stats = DedupStats()
    counts = DedupCounts()
    look = (partial(_second_look, signatures, pages, params) if len(pages) == parts and parts
            else None)
    try:
        union = search(signatures, work, params=params, run_items=run_items, stats=stats,
                       key_run_items=key_run_items, second_look=look)
        roots = roots_of(union)
        np.save(work / ROOTS, roots)
        spill = SortedSpill(work, run_items=run_items, prefix="verdicts")
        for members in group_members(union, work, run_items=run_items, roots=roots):
            group = choose_keeper(members, signatures.copy)
            counts.groups += 1
            keep_digest = signatures.digest(group.keep)
            for page in members:
                if page == group.keep:
                    kind, similarity = Kind.KEPT, 1.0
                elif keep_digest and signatures.digest(page) == keep_digest:
                    kind, similarity = Kind.EXACT, 1.0
                    counts.exact += 1
                else:
                    kind, similarity = Kind.NEAR, signatures.similarity(group.keep, page)
                    counts.near += 1
                record = _VERDICT.pack(page, len(members), kind, similarity, group.keep)
                spill.add(record[:8], record)
        del union, roots
        _write_verdicts(signatures, spill.sorted(), dedup_dir, parts)
    finally:
        signatures.close()
        (work / "parents.npy").unlink(missing_ok=True)
    counts.pages, counts.candidates, counts.confirmed = (
        stats.pages, stats.candidates, stats.confirmed)
    counts.looked, counts.refused = stats.looked, stats.refused
    return counts


def _second_look(signatures: PageSignatures, jobs: Sequence[SignJob],
                 params: LshParams | None, pairs: np.ndarray) -> list[bool]:
    """The second look (:mod:`.own`) at pairs of pages of one site without template: their
    pages read again from the page stores of their parts (those stores read through once each;
    what is held: these pages as pass 1 analysed them, a few in a crawl)."""
    wanted: dict[int, dict[int, int]] = {}  # part -> ordinal -> page
    for page in set(pairs.ravel().tolist()):
        part, _ = signatures.locate(page)
        wanted.setdefault(part, {})[int(signatures.meta(page)["ordinal"])] = page
    read: dict[int, tuple[PageEntry, SiteProfile | None]] = {}
    for part, ordinals in sorted(wanted.items()):
        job = jobs[part]
        keyer = SiteKeyer(job.site_key)
        profiles = (ProfileReader(Path(job.profiles_dir), job.partitions) if job.profiles_dir
                    else None)
        try:
            for entry in iter_page_store(Path(job.page_store)):
                page = ordinals.get(entry.ordinal)
                if page is not None:
                    site = keyer(entry.url)
                    read[page] = (entry, profiles.get(site) if profiles is not None and site
                                  else None)
        finally:
            if profiles is not None:
                profiles.close()
    return [same_own(*own_texts(read[a][0].page, read[b][0].page, read[a][1]), params)
            for a, b in pairs.tolist()]


def _write_verdicts(signatures: PageSignatures, records: Iterator[bytes], dedup_dir: Path,
                    parts: int) -> None:
    """The verdicts, in page order, cut into one side file per part (input)."""
    part = 0
    writer = VerdictWriter(verdicts_path(dedup_dir, 0)) if parts else None
    kept: dict[int, tuple[str, str, str]] = {}  # the kept pages of the groups being written
    for record in records:
        page, size, kind, similarity, keep = _VERDICT.unpack(record)
        where, _ = signatures.locate(page)
        while where > part:
            assert writer is not None
            writer.__exit__(None)
            part += 1
            writer = VerdictWriter(verdicts_path(dedup_dir, part))
        if keep not in kept:
            if len(kept) > 4096:  # a bounded cache: groups are near one another in page order
                kept.clear()
            strings = signatures.strings(keep)
            kept[keep] = (strings.url, strings.date, strings.record_id)
        ordinal = int(signatures.meta(page)["ordinal"])
        assert writer is not None
        writer.add(Verdict(ordinal, size, Kind(kind), similarity, *kept[keep]))
    while writer is not None:
        writer.__exit__(None)
        part += 1
        writer = VerdictWriter(verdicts_path(dedup_dir, part)) if part < parts else None


def iter_url_groups(work_dir: str | os.PathLike[str], *, evidence_only: bool = False
                    ) -> Iterator[tuple[str, str, int]]:
    """``(site, url, group_id)`` of every page of a run's duplicate stage, for URL-rule learning.

    With ``evidence_only``, pages whose signature text is empty (all template) are left out:
    such a page is alone in its group only because it has no text of its own, which says
    nothing about its URL (URL rules learn from the others; see :mod:`warcdeboil.urlrules`).

    ``work_dir`` is the run's work directory (``clean --work-dir``) after the stage ran (any
    ``--dedup`` but ``off``). Every HTML page the run indexed is there once, singletons included
    (a page whose URL names no site has site ``""``). Rows come sorted by site (code-point order
    of its UTF-8), then URL, then page, so one site's pages are consecutive. ``group_id`` is the
    number of the group's first page in the run (inputs in their sorted order, records in file
    order): two pages are copies of one another exactly when their ids are equal; a page alone
    has an id no other page has. Ids are the same for the same inputs on every run, for any
    ``--workers`` (not across runs of other inputs). Groups reach across sites (mirrors,
    syndication): a site's rows then hold its own members of the group only.

    Memory: one sorted run of :data:`STAGE_RUN_ITEMS` rows; the rest is spilled to disk.

    >>> import tempfile
    >>> list(iter_url_groups(Path(tempfile.gettempdir()) / "no-such-work-dir"))
    Traceback (most recent call last):
    ...
    warcdeboil.errors.WorkDirError: ...no-such-work-dir: no duplicate groups here (run clean ...)
    """
    import json

    from warcdeboil.errors import WorkDirError

    work_dir = Path(work_dir)
    dedup_dir = work_dir / "dedup"
    try:
        meta = json.loads((dedup_dir / "dedup.json").read_text(encoding="utf-8"))
        parts = int(meta["parts"])
    except (OSError, ValueError, KeyError) as exc:
        raise WorkDirError(
            f"{work_dir}: no duplicate groups here (run clean with --work-dir and --dedup "
            "mark, drop or revisit)"
        ) from exc
    work = signatures_dir(dedup_dir)
    signatures = PageSignatures(work, parts)
    roots = np.load(work / ROOTS, mmap_mode="r") if signatures.size else np.zeros(0, np.int64)
    spill = SortedSpill(work, run_items=STAGE_RUN_ITEMS, prefix="urlgroups")
    try:
        for page in range(signatures.size):
            if evidence_only and not signatures.meta(page)["has_text"]:
                continue
            strings = signatures.strings(page)
            site = strings.site.encode("utf-8", "surrogatepass")
            url = strings.url.encode("utf-8", "surrogatepass")
            key = site + b"\0" + url + b"\0" + page.to_bytes(8, "big")
            spill.add(key, _URL_ROW.pack(len(site), len(url), int(roots[page])) + site + url)
        for row in spill.sorted():
            site_len, url_len, group = _URL_ROW.unpack_from(row)
            start = _URL_ROW.size
            yield (row[start : start + site_len].decode("utf-8", "surrogatepass"),
                   row[start + site_len : start + site_len + url_len].decode(
                       "utf-8", "surrogatepass"), group)
    finally:
        signatures.close()


