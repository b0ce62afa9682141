"""Pass 1: stream one archive, parse each HTML page once, write its index and page-store entries."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .dom import analyse, page_signature
from .errors import RecordError
from .index import IndexEntry, RunWriter
from .pages import html_page
from .pagestore import PageEntry, PageStoreWriter
from .reader import iter_records
from .sitekey import SiteKeyer, SiteKeyMode, url_sort_key

__all__ = ["ScanJob", "ScanStats", "scan_file"]

log = logging.getLogger(__name__)

PROGRESS_EVERY = 256


@dataclass(frozen=True, slots=True)
class ScanJob:
    """Everything a worker needs to scan one file (picklable)."""

    path: str
    file_id: int
    index_dir: str
    page_store: str
    partitions: int
    run_bytes: int
    site_key: SiteKeyMode
    max_page_bytes: int


@dataclass(slots=True)
class ScanStats:
    """What one scan saw."""

    path: str
    records: int = 0
    pages: int = 0
    indexed: int = 0
    errors: Counter[str] = field(default_factory=Counter)

    def merge(self, other: ScanStats) -> None:
        self.records += other.records
        self.pages += other.pages
        self.indexed += other.indexed
        self.errors.update(other.errors)


def scan_file(job: ScanJob, progress: Callable[[int], None] | None = None) -> ScanStats:
    """Index every HTML page of one archive; bad records are counted, never raised."""
    stats = ScanStats(job.path)
    keyer = SiteKeyer(job.site_key)
    runs = RunWriter(Path(job.index_dir), job.file_id, job.partitions, job.run_bytes)
    with PageStoreWriter(Path(job.page_store)) as store:
        try:
            for ordinal, record in enumerate(iter_records(job.path)):
                stats.records += 1
                if progress is not None and stats.records % PROGRESS_EVERY == 0:
                    progress(PROGRESS_EVERY)
                try:
                    page = html_page(record, max_bytes=job.max_page_bytes)
                except RecordError as exc:
                    stats.errors[exc.reason] += 1
                    log.warning("%s@%d: %s", job.path, record.offset, exc.reason)
                    continue
                if page is None:
                    continue
                stats.pages += 1
                text = analyse(page.markup)
                store.add(PageEntry(
                    ordinal, record.offset, record.length, page.url, record.record_id,
                    record.get("WARC-Date") or "", page.charset, len(page.body), text,
                ))
                site = keyer(page.url)
                if not site or not record.addressable:
                    continue
                runs.add(IndexEntry(
                    site, url_sort_key(page.url), job.file_id, record.offset, record.length,
                    page.url, page_signature(text),
                ))
                stats.indexed += 1
        except RecordError as exc:
            # The reader cannot go on in this file: what was read before the damage is kept.
            stats.errors[exc.reason] += 1
            log.warning("%s", exc)
    runs.flush()
    if progress is not None:
        progress(stats.records % PROGRESS_EVERY)
    return stats
