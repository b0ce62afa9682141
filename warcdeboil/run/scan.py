"""Pass 1: stream one archive, parse each HTML page once, and say what the fit and pass 2 need.

:func:`scan_pages` is the scan itself, shared by both engines: it yields one :class:`ScannedPage`
per HTML page (its page-store entry and its index entry) and counts every record in a tally. The
local engine's :func:`scan_file` writes those to sorted index runs and a page store; the Spark
engine turns them into rows of a distributed dataset.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from warcdeboil.errors import InputError, RecordError
from warcdeboil.page.dom import analyse, page_signature
from warcdeboil.page.html import DigestKind, HtmlPage, PageLimits, html_page, payload_digest
from warcdeboil.site.index import IndexEntry, RunWriter
from warcdeboil.site.pagestore import PageEntry, PageStoreWriter, page_entry
from warcdeboil.site.sitekey import SiteKeyer, SiteKeyMode, url_sort_key
from warcdeboil.warc.reader import Span, WarcRecord, iter_selected
from warcdeboil.warc.tally import Tally

from .meter import Meter, Report, input_bytes

__all__ = ["ScanJob", "ScanSpec", "ScannedPage", "read_page", "scan_file", "scan_pages"]

log = logging.getLogger(__name__)

NO_RECORDS = "no WARC or ARC record in the input (empty, or blank bytes only)"
UNADDRESSABLE = (
    "records share gzip members or zstd frames, so random access is impossible: "
    "`warcdeboil recompress` rewrites the file one member per record"
)


@dataclass(frozen=True, slots=True)
class ScanSpec:
    """What to scan and how, whatever the engine (picklable)."""

    path: str  # a local path or URL (see warcdeboil.warc.remote)
    file_id: int
    site_key: SiteKeyMode
    limits: PageLimits
    fail_fast: bool = False  # --on-error fail: the first bad record stops the run
    structure: bool = False  # analyse pages with structure marks (content mode, JSONL, Markdown)
    spans: Sequence[Span] | None = None  # only the records at these (offset, length); None: all
    # Each page's payload digest, which only the duplicate stage (exact copies) and its revisit
    # records read: SHA-1 for revisit records, a cheaper one where digests are only compared,
    # none for a run without the stage (SHA-1 was 1.2 G instructions on dragnet).
    digest: DigestKind = "sha1"


@dataclass(frozen=True, slots=True)
class ScanJob:
    """Everything a local worker needs to scan one file: the spec and where its results go."""

    spec: ScanSpec
    index_dir: str
    page_store: str
    partitions: int
    run_bytes: int


@dataclass(slots=True)
class ScannedPage:
    """One HTML page as pass 1 saw it."""

    entry: PageEntry  # what pass 2 needs (the local engine stores it)
    index: IndexEntry | None  # what the fit needs; None when the URL names no site


def no_records(tally: Tally, path: str, *, seen: bool = False) -> None:
    """Count an input that holds no record at all (empty, or only blank bytes) as a problem:
    it is read to the end, so the run goes on, but nothing came of it."""
    tally.problem(NO_RECORDS)
    if not seen:
        log.warning("%s: %s", path, NO_RECORDS)


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


def read_page(
    record: WarcRecord, limits: PageLimits, tally: Tally, path: str, fail: bool, *,
    seen: bool = False,
) -> HtmlPage | None:
    """The HTML page in a record that has header fields, or None (the record is carried).

    A record the reader could not read whole (``record.error``, counted already) is judged like
    any other: a page cut short by the end of the file is still a page, written and marked
    truncated (:func:`warcdeboil.warc.truncation.truncation`), as one the crawler marked
    ``WARC-Truncated`` is. A payload that does not decode is a problem counted here, but not
    again for such a record: its own problem is the cause.
    """
    try:
        return html_page(record, limits)
    except RecordError as exc:
        if record.error is None:
            record_problem(tally, path, record, exc.reason, fail, seen=seen)
        return None


def unaddressable_counted(
    records: Iterator[WarcRecord], path: str, tally: Tally, *, seen: bool = False
) -> Iterator[WarcRecord]:
    """The records, with a file whose records cannot all be read by offset counted in ``tally``
    as one problem once the reading ends (however it ends): not a failure, as every record was
    read, but the file is not standard, so it is said once, with how many records (unless
    ``seen``: pass 1 said it of the same records)."""
    unaddressable = 0
    try:
        for record in records:
            if not record.addressable and not record.error:
                unaddressable += 1
            yield record
    finally:
        if unaddressable:
            tally.problems[UNADDRESSABLE] += 1
            if not seen:
                log.warning("%s: %d records: %s", path, unaddressable, UNADDRESSABLE)


def record_repairs(
    tally: Tally, path: str, record: WarcRecord, fail: bool, *, seen: bool = False
) -> None:
    """Count what was mended while ``record`` was read (an ARC date, a gzip member cut after the
    record): problems of the input, though the record itself is read whole and used."""
    for reason in record.repairs:
        record_problem(tally, path, record, reason, fail, seen=seen)


def scan_pages(
    spec: ScanSpec, tally: Tally, progress: Report | None = None
) -> Iterator[ScannedPage]:
    """Parse every HTML page of one archive once; count every record in ``tally``.

    Bad records are counted (or, with ``fail_fast``, raised); an input that cannot be read at
    all is counted as one problem of the input, and the pages read before it stay valid.
    """
    keyer = SiteKeyer(spec.site_key)
    meter = None if progress is None else Meter(
        progress, input_bytes(spec.path, spec.spans), selected=spec.spans is not None)
    records = unaddressable_counted(iter_selected(spec.path, spec.spans), spec.path, tally)
    try:
        for ordinal, record in enumerate(records):
            tally.records += 1
            if meter is not None:
                meter.record(record.offset, record.length)
            record_repairs(tally, spec.path, record, spec.fail_fast)
            if record.error is not None:
                record_problem(tally, spec.path, record, record.error, spec.fail_fast)
                if not record.headers:
                    tally.skipped += 1
                    continue
            page = read_page(record, spec.limits, tally, spec.path, spec.fail_fast)
            if page is None:
                tally.carried += 1
                continue
            tally.cleaned += 1
            text = analyse(page.markup, structure=spec.structure)
            entry = page_entry(ordinal, record, page, text, payload_digest(page, spec.digest))
            site = keyer(page.url)
            index = None
            if site:
                index = IndexEntry(
                    site, url_sort_key(page.url), spec.file_id, record.offset, record.length,
                    page.url, page_signature(text),
                )
                tally.indexed += 1
            yield ScannedPage(entry, index)
    except InputError as exc:
        if spec.fail_fast:
            raise
        tally.problem(str(exc).split(": ", 1)[-1])
        log.error("%s", exc)
    if tally.records == 0 and not tally.problems and spec.spans is None:
        no_records(tally, spec.path)
    if meter is not None:
        meter.finish()


def scan_file(job: ScanJob, progress: Report | None = None) -> Tally:
    """Index every HTML page of one archive into sorted runs, and keep its page store."""
    tally = Tally(job.spec.path)
    runs = RunWriter(Path(job.index_dir), job.spec.file_id, job.partitions, job.run_bytes)
    with PageStoreWriter(Path(job.page_store)) as store:
        for page in scan_pages(job.spec, tally, progress):
            store.add(page.entry)
            if page.index is not None:
                runs.add(page.index)
    runs.flush()
    return tally
