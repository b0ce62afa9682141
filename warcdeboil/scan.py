"""Pass 1: stream one archive, parse each HTML page once, write its index and page-store entries."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .dom import analyse, page_signature
from .errors import InputError, RecordError
from .index import IndexEntry, RunWriter
from .pages import PageLimits, html_page
from .pagestore import PageEntry, PageStoreWriter
from .reader import WarcRecord, iter_records
from .sitekey import SiteKeyer, SiteKeyMode, url_sort_key
from .tally import Tally

__all__ = ["ScanJob", "scan_file"]

log = logging.getLogger(__name__)

PROGRESS_EVERY = 256
UNADDRESSABLE = (
    "records share gzip members or zstd frames, so random access is impossible: "
    "`warcdeboil recompress` rewrites the file one member per record"
)


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
    limits: PageLimits
    fail_fast: bool = False  # --on-error fail: the first bad record stops the run
    structure: bool = False  # analyse pages with structure marks (content mode, JSONL, Markdown)


def record_problem(
    tally: Tally, path: str, record: WarcRecord, reason: str, fail: bool, *, seen: bool = False
) -> None:
    """Count a problem and log it with file and offset (unless an earlier pass ``seen`` it
    already: each is logged once), or stop the run on ``fail``."""
    if fail:
        raise RecordError(reason, path=path, offset=record.offset)
    tally.problem(reason)
    if not seen:
        log.warning("%s@%d: %s", path, record.offset, reason)


def scan_file(job: ScanJob, progress: Callable[[int], None] | None = None) -> Tally:
    """Index every HTML page of one archive. Bad records are counted (or, with ``fail_fast``,
    raised); an input that cannot be read at all is counted as one problem of the input."""
    tally = Tally(job.path)
    keyer = SiteKeyer(job.site_key)
    runs = RunWriter(Path(job.index_dir), job.file_id, job.partitions, job.run_bytes)
    unaddressable = 0
    try:
        with PageStoreWriter(Path(job.page_store)) as store:
            for ordinal, record in enumerate(iter_records(job.path)):
                tally.records += 1
                if progress is not None and tally.records % PROGRESS_EVERY == 0:
                    progress(PROGRESS_EVERY)
                if record.error is not None:
                    record_problem(tally, job.path, record, record.error, job.fail_fast)
                    if not record.headers:
                        tally.skipped += 1
                        continue
                if not record.addressable and not record.error:
                    unaddressable += 1
                try:
                    page = None if record.error else html_page(record, job.limits)
                except RecordError as exc:
                    record_problem(tally, job.path, record, exc.reason, job.fail_fast)
                    page = None
                if page is None:
                    tally.carried += 1
                    continue
                tally.cleaned += 1
                text = analyse(page.markup, structure=job.structure)
                store.add(PageEntry(
                    ordinal, record.offset, record.length, page.url, record.record_id,
                    record.get("WARC-Date") or "", page.charset, len(page.body), text,
                ))
                site = keyer(page.url)
                if not site:
                    continue
                runs.add(IndexEntry(
                    site, url_sort_key(page.url), job.file_id, record.offset, record.length,
                    page.url, page_signature(text),
                ))
                tally.indexed += 1
    except InputError as exc:
        if job.fail_fast:
            raise
        tally.problem(str(exc).split(": ", 1)[-1])
        log.error("%s", exc)
    runs.flush()
    if unaddressable:
        # Not a failure (every record was read), but the file is not standard: say so.
        tally.problems[UNADDRESSABLE] += unaddressable
        log.warning("%s: %d records: %s", job.path, unaddressable, UNADDRESSABLE)
    if progress is not None:
        progress(tally.records % PROGRESS_EVERY)
    return tally
