"""What the report shows, gathered in one streaming pass over a run's pages.

Pages come from pass 1's page stores (a work directory of ``clean`` or ``index``) or, for
``apply``, from the archives read again. Each page is annotated (:mod:`.annotate`) under its
site's profile and folded into its site's figures at once; nothing of a page is kept but, for
the sample, its place in its file. Memory grows with the number of sites (a few counters each and
:data:`SAMPLES_PER_SITE` places), and with what the largest sites' profiles remove (capped per
site), never with pages.
"""

from __future__ import annotations

import heapq
import json
from collections import Counter
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from xxhash import xxh3_64_intdigest

from warcdeboil.errors import ConfigError, RecordError, WorkDirError
from warcdeboil.page.content import load_model
from warcdeboil.page.dom import analyse, without_structure
from warcdeboil.page.favor import Favor
from warcdeboil.page.html import PageLimits, html_page
from warcdeboil.site.clean import Mode
from warcdeboil.site.fit import SiteProfile
from warcdeboil.site.pagestore import PageEntry, iter_page_store, page_entry, page_store_path
from warcdeboil.site.profiles import ProfileReader, profile_path
from warcdeboil.site.sitekey import SiteKeyer, SiteKeyMode
from warcdeboil.warc.reader import iter_selected

from .annotate import REASONS, AnnotatedPage, annotate

__all__ = ["ArchivePages", "Item", "PageSource", "ReportData", "SiteFigures", "StorePages",
           "collect", "site_keyer"]

# Pages shown per site, chosen by the hash of their URL (the same ones on every run).
SAMPLES_PER_SITE = 3
# Sites that get a page of their own (the largest ones) and whose removed parts are listed.
MAX_SITE_PAGES = 300
# What one site page lists of each kind of removed part, and how much of each one's text.
MAX_ITEMS = 300
MAX_ITEM_CHARS = 400
# Parts of one kind counted per site: those met first. On dragnet a profile holds at most 581
# subtrees, 482 repeated blocks and 179 slots (fewer are ever cut: nested ones go with their
# ancestor); this bounds the memory of a site whose profile would hold many more.
MAX_TRACKED_ITEMS = 4 * MAX_ITEMS


@dataclass(slots=True)
class Item:
    """One part a site's profile removed: its text (on the first page it went from, cut at
    :data:`MAX_ITEM_CHARS`) and on how many pages it went."""

    text: str
    pages: int = 0


@dataclass(frozen=True, slots=True, order=True)
class SampleRef:
    """Where a sample page is: ordered by the hash of its URL, the deterministic choice."""

    key: int
    file: int
    offset: int
    length: int


@dataclass(slots=True)
class SiteFigures:
    """What one site's pages lost."""

    site: str
    pages: int = 0
    html_bytes: int = 0  # decoded HTML of its pages
    chars: int = 0  # characters of the text blocks of its pages, before any removal
    kept_chars: int = 0
    removed_chars: Counter[str] = field(default_factory=Counter)
    removed_blocks: Counter[str] = field(default_factory=Counter)
    learned: tuple[int, int, int] | None = None  # its profile's subtrees, slots, repeated blocks
    items: dict[str, dict[int, Item]] | None = None  # by reason, then digest (largest sites)
    has_page: bool = False  # among the MAX_SITE_PAGES largest: a page of its own
    samples: list[tuple[int, SampleRef]] = field(default_factory=list)  # a heap, key negated

    def add_sample(self, ref: SampleRef) -> None:
        entry = (-ref.key, ref)
        if len(self.samples) < SAMPLES_PER_SITE:
            heapq.heappush(self.samples, entry)
        elif entry > self.samples[0]:
            heapq.heapreplace(self.samples, entry)

    def merge(self, other: SiteFigures) -> None:
        """Add the figures of the same site's pages in a later input."""
        self.pages += other.pages
        self.html_bytes += other.html_bytes
        self.chars += other.chars
        self.kept_chars += other.kept_chars
        self.removed_chars.update(other.removed_chars)
        self.removed_blocks.update(other.removed_blocks)
        if self.items is not None and other.items is not None:
            for reason, found in other.items.items():
                items = self.items.setdefault(reason, {})
                for digest, item in found.items():
                    if digest in items:
                        items[digest].pages += item.pages
                    elif len(items) < MAX_TRACKED_ITEMS:
                        items[digest] = item
        for _, ref in other.samples:
            self.add_sample(ref)

    @property
    def sample_refs(self) -> list[SampleRef]:
        return sorted(ref for _, ref in self.samples)


@dataclass(slots=True)
class ReportData:
    """Everything the report's pages are drawn from."""

    mode: Mode
    inputs: list[str]
    sites: list[SiteFigures]  # largest first (pages, then name)
    summary: dict[str, Any] | None  # the run's summary (RunSummary.to_dict), when known

    @property
    def pages(self) -> int:
        return sum(site.pages for site in self.sites)

    def total(self, name: str) -> int:
        return sum(getattr(site, name) for site in self.sites)

    def removed(self, what: str = "removed_chars") -> Counter[str]:
        total: Counter[str] = Counter()
        for site in self.sites:
            total.update(getattr(site, what))
        return total


class PageSource(Protocol):
    """The pages of a run, file by file."""

    inputs: list[str]
    site_key: SiteKeyMode | None  # how the run grouped pages into sites, when it says

    def pages_of(self, i: int) -> Iterator[PageEntry]:
        """The pages of input ``i``, in its order."""
        ...

    def pages_at(self, wanted: dict[int, list[SampleRef]]) -> Iterator[tuple[int, PageEntry]]:
        """Only the pages at these places of each input."""
        ...


class StorePages:
    """Pages from the page stores of a work directory (what ``clean`` and ``index`` leave).
    ``structure`` False: pages stored with structure marks (for the duplicate stage of a run
    whose outputs need none) are read without them, as that run's outputs were made."""

    def __init__(self, work_dir: Path, structure: bool = True) -> None:
        self._structure = structure
        try:
            meta = json.loads((work_dir / "index.json").read_text(encoding="utf-8"))
        except FileNotFoundError as exc:
            raise WorkDirError(f"{work_dir}: no index here: not a work directory of "
                               "`warcdeboil clean --work-dir` or `index`") from exc
        except (OSError, ValueError) as exc:
            raise WorkDirError(f"{work_dir}/index.json: unreadable ({exc})") from exc
        self.inputs: list[str] = [str(name) for name in meta.get("inputs", [])]
        self.site_key: SiteKeyMode | None = SiteKeyMode(meta.get("site_key", "host"))
        self._dir = work_dir / "pages"

    def pages_of(self, i: int) -> Iterator[PageEntry]:
        return map(self._as_read, iter_page_store(page_store_path(self._dir, i)))

    def pages_at(self, wanted: dict[int, list[SampleRef]]) -> Iterator[tuple[int, PageEntry]]:
        for i in sorted(wanted):
            offsets = {ref.offset for ref in wanted[i]}
            for entry in iter_page_store(page_store_path(self._dir, i)):
                if entry.offset in offsets:
                    yield i, self._as_read(entry)

    def _as_read(self, entry: PageEntry) -> PageEntry:
        if entry.page.structured and not self._structure:
            entry.page = without_structure(entry.page)
        return entry


class ArchivePages:
    """Pages read from the archives again (``apply`` keeps no page store)."""

    def __init__(self, inputs: Sequence[Path], structure: bool,
                 limits: PageLimits | None = None) -> None:
        self.inputs = [str(path) for path in inputs]
        self.site_key: SiteKeyMode | None = None  # the profiles say
        self._structure = structure
        self._limits = limits or PageLimits()

    def _entries(self, i: int, spans: list[tuple[int, int]] | None
                 ) -> Iterator[tuple[int, PageEntry]]:
        for ordinal, record in enumerate(iter_selected(self.inputs[i], spans)):
            if not record.headers:
                continue  # a damaged stretch, counted by the run itself
            try:  # a record read in part holds a page too, as in pass 1 (run.scan.read_page)
                page = html_page(record, self._limits)
            except RecordError:
                continue
            if page is None:
                continue
            yield i, page_entry(ordinal, record, page,
                                analyse(page.markup, structure=self._structure))

    def pages_of(self, i: int) -> Iterator[PageEntry]:
        return (entry for _, entry in self._entries(i, None))

    def pages_at(self, wanted: dict[int, list[SampleRef]]) -> Iterator[tuple[int, PageEntry]]:
        for i in sorted(wanted):
            yield from self._entries(i, sorted({(r.offset, r.length) for r in wanted[i]}))


class Profiles:
    """The run's profiles, looked up by site (none when the directory has none)."""

    def __init__(self, directory: Path | None) -> None:
        self._reader: ProfileReader | None = None
        self._directory = directory
        self._partitions = 0
        self.site_key: SiteKeyMode | None = None
        if directory is None or not (directory / "profiles.json").exists():
            return
        try:
            meta = json.loads((directory / "profiles.json").read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise WorkDirError(f"{directory}/profiles.json: unreadable ({exc})") from exc
        self._partitions = int(meta["partitions"])
        self.site_key = SiteKeyMode(meta["site_key"])
        self._reader = ProfileReader(directory, self._partitions)

    def largest(self) -> frozenset[str]:
        """The :data:`MAX_SITE_PAGES` sites with a profile that have the most pages: only theirs
        can be among the sites with a page of their own, so only their removed parts are kept."""
        if self._reader is None or self._directory is None:
            return frozenset()
        return _largest_profiled(self._directory, self._partitions)

    def get(self, site: str) -> SiteProfile | None:
        return self._reader.get(site) if self._reader is not None else None

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()


def _largest_profiled(directory: Path, partitions: int) -> frozenset[str]:
    import sqlite3

    sizes: list[tuple[int, str]] = []
    for partition in range(partitions):
        path = profile_path(directory, partition)
        if not path.exists():
            continue
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            for site, pages in db.execute("SELECT site, pages FROM profiles"):
                sizes.append((-int(pages), str(site)))
                if len(sizes) > 4 * MAX_SITE_PAGES:
                    sizes = heapq.nsmallest(MAX_SITE_PAGES, sizes)
        except sqlite3.Error as exc:
            raise WorkDirError(f"{path}: cannot read profiles ({exc})") from exc
        finally:
            db.close()
    return frozenset(site for _, site in heapq.nsmallest(MAX_SITE_PAGES, sizes))


def _fold(figures: SiteFigures, entry: PageEntry, annotated: AnnotatedPage) -> None:
    figures.pages += 1
    figures.html_bytes += entry.html_bytes_before
    # Kept: the characters of the text written (newlines between its blocks included), so the
    # report's total is the run's; the text of the page is that and what was removed.
    kept = len(annotated.kept_text)
    figures.kept_chars += kept
    figures.chars += kept
    # What went from this page, by (reason, digest): the lines of each, so that a subtree or
    # slot is one item with all its text, counted once a page.
    went: dict[tuple[str, int], list[str]] = {}
    for line in annotated.lines:
        if line.reason is None:
            continue
        size = len(line.text)
        figures.chars += size
        figures.removed_chars[line.reason] += size
        figures.removed_blocks[line.reason] += 1
        if figures.items is not None and line.digest:
            went.setdefault((line.reason, line.digest), []).append(line.text)
    if figures.items is None:
        return
    for (reason, digest), texts in went.items():
        items = figures.items.setdefault(reason, {})
        item = items.get(digest)
        if item is None:
            if len(items) >= MAX_TRACKED_ITEMS:
                continue  # a bound on memory: the first ones met are listed
            text = "\n".join(texts)
            if len(text) > MAX_ITEM_CHARS:
                text = text[:MAX_ITEM_CHARS] + "…"
            item = items[digest] = Item(text)
        item.pages += 1


def site_keyer(
    site_key: SiteKeyMode | None, profiles: Profiles, source: PageSource
) -> SiteKeyer:
    """Sites as the profiles were learned for them: the key given, else the profiles', else
    the run's, else hosts."""
    return SiteKeyer(site_key or profiles.site_key or source.site_key or SiteKeyMode.HOST)


@dataclass(frozen=True)
class _FileJob:
    """One input's share of the collection (picklable, for a worker process)."""

    source: PageSource
    file: int
    profiles_dir: Path | None
    mode: Mode
    site_key: SiteKeyMode | None
    largest: frozenset[str]  # the sites whose removed parts are listed (Profiles.largest)
    favor: Favor = Favor.BALANCED  # content mode's choices, as the run's
    drop_headline: bool = False


def _collect_file(job: _FileJob) -> dict[str, SiteFigures]:
    """Every page of one input annotated and counted under its site."""
    profiles = Profiles(job.profiles_dir)
    keyer = site_keyer(job.site_key, profiles, job.source)
    model = load_model() if job.mode is Mode.CONTENT else None
    sites: dict[str, SiteFigures] = {}
    try:
        for entry in job.source.pages_of(job.file):
            if model is not None and not entry.page.structured:
                raise ConfigError(
                    "these pages were read without structure marks (a run with --format warc): "
                    "their report is in template mode (--mode template)")
            site = keyer(entry.url) or ""
            profile = profiles.get(site) if site else None  # an LRU: sites come back often
            figures = sites.get(site)
            if figures is None:
                figures = sites[site] = SiteFigures(site)
                if profile is not None:
                    figures.learned = (len(profile.template), len(profile.template_slots),
                                       len(profile.repeated))
                if site in job.largest:
                    figures.items = {}
            _fold(figures, entry, annotate(entry.page, profile, job.mode, model, entry.url,
                                           favor=job.favor, drop_headline=job.drop_headline))
            key = xxh3_64_intdigest(entry.url.encode("utf-8", "surrogatepass"))
            figures.add_sample(SampleRef(key, job.file, entry.offset, entry.length))
    finally:
        profiles.close()
    return sites


def collect(
    source: PageSource, profiles_dir: Path | None, mode: Mode,
    summary: dict[str, Any] | None = None, site_key: SiteKeyMode | None = None,
    workers: int = 1, *, favor: Favor = Favor.BALANCED, drop_headline: bool = False,
) -> ReportData:
    """One pass over ``source``: every page annotated and counted under its site, the inputs
    shared among ``workers`` processes and their figures added up in the inputs' order (the
    same report for any number of workers). ``favor``, ``drop_headline``: content mode's
    choices, as the run's."""
    profiles = Profiles(profiles_dir)
    try:
        largest = profiles.largest()
    finally:
        profiles.close()
    jobs = [_FileJob(source, i, profiles_dir, mode, site_key, largest, favor, drop_headline)
            for i in range(len(source.inputs))]
    sites: dict[str, SiteFigures] = {}
    if workers > 1 and len(jobs) > 1:
        with ProcessPoolExecutor(max_workers=min(workers, len(jobs))) as pool:
            parts = pool.map(_collect_file, jobs)
            for part in parts:
                _add(sites, part)
    else:
        for job in jobs:
            _add(sites, _collect_file(job))
    ranked = sorted(sites.values(), key=lambda f: (-f.pages, f.site))
    for figures in ranked[:MAX_SITE_PAGES]:
        figures.has_page = True
    for figures in ranked[MAX_SITE_PAGES:]:
        figures.items = None  # listed on no page
        figures.samples = []
    return ReportData(mode, list(source.inputs), ranked, summary)


def _add(sites: dict[str, SiteFigures], part: dict[str, SiteFigures]) -> None:
    for site, figures in part.items():
        if site in sites:
            sites[site].merge(figures)
        else:
            sites[site] = figures


def reason_order(counts: Counter[str]) -> list[str]:
    """The reasons in the report's order, then any other."""
    return [r for r in REASONS if counts[r]] + sorted(r for r in counts if r not in REASONS)
