"""Pass 2: stream one archive again, in its order, remove each page's site template, write output.

One output file per input, records in the input's order. ``warc`` opens with its own warcinfo
and carries every record; records that are not cleaned HTML pages keep their bytes (copied
compressed when the codec is unchanged), but for revisits of a page cleaned above them (see
:mod:`warcdeboil.output.provenance`); the revisits it cannot resolve, and its cleaned pages, go
to its links files for :mod:`warcdeboil.output.relink`. ``text`` writes a warcinfo, then one
WET-style ``conversion`` record per page; ``jsonl`` one object per page. The formats are
:mod:`warcdeboil.output`'s sinks; this module reads the input and feeds them. The page of a
record the reader could not read whole is in the text outputs, marked truncated, as in pass 1's
store; WARC output writes such a record as it survives
(:func:`~warcdeboil.warc.recompress.repaired_record`).

:func:`apply_file` serves both engines: profiles come from a lookup function (the local engine's
SQLite store, or the Spark engine's profiles of the sites a file holds), and pages come from pass
1's page store when there is one, else from parsing the records again (same result, byte for byte).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from warcdeboil.dedup.doomed import DoomedReader
from warcdeboil.dedup.verdicts import DedupMode, Kind, Verdict, VerdictReader
from warcdeboil.errors import ConfigError, InputError, RecordError, WorkDirError
from warcdeboil.output.formats import OutputFormat, needs_structure
from warcdeboil.output.jsonl import JsonlSink, page_fields
from warcdeboil.output.relink import LinkLog
from warcdeboil.output.scoring import ScoringSink
from warcdeboil.output.sink import PageResult, Sink
from warcdeboil.output.warc import WarcSink
from warcdeboil.output.wet import TextSink
from warcdeboil.page.dom import Doomed, analyse, without_structure
from warcdeboil.page.favor import Favor
from warcdeboil.page.html import HtmlPage, PageLimits, payload_sha1
from warcdeboil.site.clean import Mode, PageCleaning, clean_for_warc, clean_page
from warcdeboil.site.fit import SiteProfile
from warcdeboil.site.pagestore import PageEntry, iter_page_store, page_entry
from warcdeboil.site.profiles import ProfileReader
from warcdeboil.site.sitekey import SiteKeyer, SiteKeyMode
from warcdeboil.warc.compression import Codec
from warcdeboil.warc.reader import Span, WarcRecord, iter_selected, open_archive
from warcdeboil.warc.tally import Tally
from warcdeboil.warc.writer import AtomicFile
from warcdeboil.warc.zstdio import train_dictionary

from .madewith import side_path
from .meter import Meter, Report, input_bytes
from .scan import no_records, read_page, record_problem, record_repairs, unaddressable_counted

if TYPE_CHECKING:
    # Imported where used: a template-mode run (WARC output, no --lm, no URL rules) needs none.
    from warcdeboil.corpus.settings import QualitySettings
    from warcdeboil.lm.scoring import LmSettings
    from warcdeboil.page.language import Guess

__all__ = ["ApplyJob", "OutputFormat", "ProfileLookup", "apply_file", "page_fields"]

log = logging.getLogger(__name__)
# Why a page's record is written as it was in WARC output (warcdeboil.page.charset).

# A zstd dictionary is trained on at most this much of each input (zstd's own advice is about
# a hundred times the dictionary size in samples; its default dictionary size is 110 KiB).
DICTIONARY_BYTES = 110 << 10
DICTIONARY_SAMPLE_RECORDS = 2000
DICTIONARY_SAMPLE_BYTES = 16 << 20


ProfileLookup = Callable[[str], "SiteProfile | None"]
"""``lookup(site)``: the profile learned for a site, or None."""


@dataclass(frozen=True, slots=True)
class ApplyJob:
    """Everything a worker needs to clean one file (picklable)."""

    path: str
    output: str
    format: OutputFormat
    codec: Codec
    profiles_dir: str | None
    partitions: int
    site_key: SiteKeyMode
    limits: PageLimits
    page_store: str | None = None  # pass 1's store for this file, when there is one
    zstd_dictionary: bool = False  # train a zstd dictionary on this file's own records
    fail_fast: bool = False  # --on-error fail
    mode: Mode = Mode.TEMPLATE
    spans: Sequence[Span] | None = None  # only the records at these (offset, length); None: all
    problems_logged: bool = False  # pass 1 read the same records and logged their problems
    settings: tuple[tuple[str, str], ...] = ()  # options named in the output's warcinfo
    links: str | None = None  # WARC output: where its links files go (see relink.LinkLog)
    lm: LmSettings | None = None  # --lm: perplexity scores, and its filters
    verdicts: str | None = None  # the duplicate stage's side file for this input
    dedup: DedupMode = DedupMode.OFF  # what to do with the duplicates it names
    doomed: str | None = None  # what the duplicate stage found each page's template removes
    cleaned_store: str | None = None  # the pages of page_store as the stage before pass 2
    # cleaned them (lm.stage): written from there, not cleaned again
    scores_store: str | None = None  # their perplexities as that stage scored them (buckets)
    url_rules: str | None = None  # rules learned in the run: JSONL says each url_canonical
    made_with: bytes | None = None  # the record of its options, written beside it (.madewith)
    redact_pii: bool = False  # --redact-pii: addresses replaced before the text sink sees them
    language_model: str = ""  # --language-model; "": lid.176's small model
    quality: QualitySettings | None = None  # --quality-filters (text outputs)
    excluded: str | None = None  # --excluded: where this input's pages left out are listed
    drop_headline: bool = False  # --drop-headline: content mode's text without the headline
    favor: Favor = Favor.BALANCED  # --favor: content mode's operating point

    @property
    def structure(self) -> bool:
        return needs_structure(self.format, self.mode)


def apply_file(
    job: ApplyJob,
    progress: Report | None = None,
    *,
    profiles: ProfileLookup | None = None,
) -> Tally:
    """Clean one archive into ``job.output`` (atomically). An input that cannot be read at all
    is counted as a problem and gets no output; the run goes on.

    Profiles come from ``profiles`` when given, else from the store in ``job.profiles_dir``.
    """
    tally = Tally(job.path, job.output)
    meter = None if progress is None else Meter(
        progress, input_bytes(job.path, job.spans), selected=job.spans is not None)
    try:
        _apply(job, tally, meter, profiles)
    except InputError as exc:
        if job.fail_fast:
            raise
        tally.problem(str(exc).split(": ", 1)[-1])
        tally.output = ""
        log.error("%s", exc)
    if meter is not None:
        meter.finish()
    return tally


def _apply(
    job: ApplyJob, tally: Tally, meter: Meter | None, lookup: ProfileLookup | None,
) -> None:
    keyer = SiteKeyer(job.site_key)
    # The model is loaded once for the file, before its first record is read.
    scorer = None
    if job.lm is not None:
        from warcdeboil.lm.scoring import PageScorer  # numpy and the model only with --lm

        scorer = PageScorer(job.lm, load=job.scores_store is None)
    store = None
    if lookup is None and job.profiles_dir:
        store = ProfileReader(Path(job.profiles_dir), job.partitions)
        lookup = store.get
    source, in_codec = open_archive(job.path, random_access=job.spans is not None)
    try:
        output = Path(job.output)
        beside = (side_path(output), job.made_with) if job.made_with is not None else None
        with AtomicFile(output, beside) as out, _excluded_file(job) as excluded:
            sink = _make_sink(job, out, in_codec, source)
            # Wrapped inside out: the language model's filters, then the quality filters (on the
            # text as written, before redaction, as FineWeb's pipeline orders them), then the
            # redaction of addresses, then the format.
            if job.redact_pii:
                from warcdeboil.output.pii import RedactingSink

                sink = RedactingSink(sink, tally, job.language_model)
            if job.quality is not None:
                from warcdeboil.output.quality import QualitySink  # only with --quality-filters

                sink = QualitySink(sink, job.quality, tally, job.path, excluded,
                                   job.language_model)
            if scorer is not None:
                stored = None
                if job.scores_store is not None and not scorer.needs_lines:
                    from warcdeboil.lm.stage import read_scores

                    stored = read_scores(Path(job.scores_store))
                sink = ScoringSink(sink, scorer, tally, stored)
            try:
                _fill(job, sink, keyer, lookup, tally, meter)
            except BaseException:
                sink.discard()
                raise
    finally:
        source.close()
        if store is not None:
            store.close()


def _excluded_file(job: ApplyJob) -> AbstractContextManager[BinaryIO | None]:
    """Where the job lists the pages it leaves out (--excluded), or nothing."""
    return open(job.excluded, "wb") if job.excluded is not None else nullcontext()


def _fill(
    job: ApplyJob, sink: Sink, keyer: SiteKeyer, lookup: ProfileLookup | None, tally: Tally,
    meter: Meter | None,
) -> None:
    """Every record (or stored page) of the input through ``sink``, which is then closed."""
    verdicts = None
    if job.verdicts is not None and job.dedup is not DedupMode.OFF:
        verdicts = VerdictReader(Path(job.verdicts))
    # What the duplicate stage found each page's template removes (pass 2 need not find it).
    doomed = (DoomedReader(Path(job.doomed)) if job.doomed is not None
              and job.cleaned_store is None and Path(job.doomed).exists() else None)
    if job.page_store is not None and job.format is not OutputFormat.WARC:
        # Text outputs need only what pass 1 stored: the archive is not read again.
        from warcdeboil.lm.cleaned import (
            iter_cleaned_store,  # content mode's store (text outputs only)
        )
        from warcdeboil.page.language import Guess

        cleaned = (iter_cleaned_store(Path(job.cleaned_store)) if job.cleaned_store is not None
                   else None)
        for entry in map(partial(_as_output_needs, job), iter_page_store(Path(job.page_store))):
            cleaning = guess = known = None
            if cleaned is not None:
                made = next(cleaned, None)
                if made is None or made[0] != entry.ordinal:
                    raise WorkDirError(f"{job.cleaned_store}: does not match its page store: "
                                       "delete the work directory")
                cleaning = PageCleaning(made[2], made[3], made[4])
                guess = Guess(made[5], made[6])
            elif doomed is not None and entry.page.structured == job.structure:
                known = doomed.get(entry.ordinal)
            _emit(entry, None, None, keyer, lookup, sink, tally, job, verdicts, cleaning, guess,
                  known)
            if meter is not None:  # pages only: the records between count at the end
                meter.record(entry.offset, entry.length)
    else:
        _apply_records(job, keyer, lookup, sink, tally, meter, verdicts, doomed)
    sink.close()


def _apply_records(
    job: ApplyJob,
    keyer: SiteKeyer,
    lookup: ProfileLookup | None,
    sink: Sink,
    tally: Tally,
    meter: Meter | None,
    verdicts: VerdictReader | None = None,
    doomed: DoomedReader | None = None,
) -> None:
    stored = (map(partial(_as_output_needs, job), iter_page_store(Path(job.page_store)))
              if job.page_store is not None else None)
    pending: PageEntry | None = next(stored, None) if stored is not None else None
    seen = stored is not None or job.problems_logged
    records = unaddressable_counted(iter_selected(job.path, job.spans), job.path, tally, seen=seen)
    for ordinal, record in enumerate(records):
        tally.records += 1
        if ordinal == 0:
            sink.begin(record)
        if meter is not None:
            meter.record(record.offset, record.length)
        record_repairs(tally, job.path, record, job.fail_fast, seen=seen)
        if record.error is not None:
            record_problem(tally, job.path, record, record.error, job.fail_fast, seen=seen)
            if not record.headers:
                tally.skipped += 1  # nothing that can be written as a record
                continue
            if sink.keeps_records:  # WARC output: the record as it survives, not cleaned
                tally.carried += 1
                sink.repaired(record)
                continue
        page = read_page(record, job.limits, tally, job.path, job.fail_fast, seen=seen)
        if page is None:
            tally.carried += 1
            sink.carry(record)
            continue
        if sink.keeps_records and not page.decoded_surely:
            # The page's charset is unsure (its text may hold replacement characters or a
            # wrong guess): the record keeps its own bytes rather than be written as that text.
            # Counted by read_page, as for every format.
            tally.carried += 1
            sink.carry(record)
            continue
        while stored is not None and pending is not None and pending.ordinal < ordinal:
            pending = next(stored, None)
        known = None
        if pending is not None and pending.ordinal == ordinal:
            entry = pending
            known = (doomed.get(ordinal) if doomed is not None
                     and entry.page.structured == job.structure else None)
        else:
            entry = page_entry(ordinal, record, page,
                               analyse(page.markup, structure=job.structure), payload_sha1(page))
        _emit(entry, record, page, keyer, lookup, sink, tally, job, verdicts, known=known)
    if tally.records == 0 and not tally.problems and job.spans is None:
        no_records(tally, job.path, seen=seen)


def _as_output_needs(job: ApplyJob, entry: PageEntry) -> PageEntry:
    """The stored page as this output's format and mode analyse it: pass 1 analyses with
    structure marks for the duplicate stage too (``Options.structure``), and an output that
    needs none (WARC, template-mode text) is written as from a page analysed without them."""
    if entry.page.structured and not job.structure:
        return replace(entry, page=without_structure(entry.page))
    return entry


def _emit(
    entry: PageEntry,
    record: WarcRecord | None,
    page: HtmlPage | None,
    keyer: SiteKeyer,
    lookup: ProfileLookup | None,
    sink: Sink,
    tally: Tally,
    job: ApplyJob,
    verdicts: VerdictReader | None = None,
    cleaning: PageCleaning | None = None,
    guess: Guess | None = None,
    known: Doomed | None = None,
) -> None:
    """``cleaning``: the page as the stage before pass 2 cleaned it, ``guess`` its text's
    language as that stage identified it; ``known``: what its template removes, as the
    duplicate stage found it."""
    verdict = verdicts.get(entry.ordinal) if verdicts is not None else None
    if verdict is not None and verdict.duplicate and _dedup_done(
            entry, record, page, verdict, sink, tally, job.dedup):
        return
    site = keyer(entry.url)
    profile = lookup(site) if lookup is not None and site else None
    html = None
    if sink.wants_html and page is not None:
        (cleaned, content, removed_blocks), html = clean_for_warc(
            page.markup, entry.page, profile, job.mode, known
        )
        tally.html_bytes_after += len(html)
    else:
        if cleaning is None:  # else the stage before pass 2 cleaned it already, the same way
            cleaning = clean_page(entry.page, profile, job.mode, known, entry.url,
                                  drop_headline=job.drop_headline, favor=job.favor)
        cleaned, content, removed_blocks = cleaning
        tally.text_chars += len(cleaned.text)
    tally.cleaned += 1
    tally.removed_subtrees += cleaned.removed
    tally.removed_slots += cleaned.slots
    tally.removed_blocks += removed_blocks
    tally.html_bytes_before += entry.html_bytes_before
    sink.page(PageResult(entry, site, cleaned, content, duplicate=verdict, language=guess),
              record, page, html)


def _dedup_done(
    entry: PageEntry, record: WarcRecord | None, page: HtmlPage | None, verdict: Verdict,
    sink: Sink, tally: Tally, dedup: DedupMode,
) -> bool:
    """Count a duplicate page; True when ``dedup`` has dealt with it (dropped, or written as
    a revisit), False when it is to be cleaned and written as any page."""
    exact = verdict.kind is Kind.EXACT
    if exact:
        tally.duplicates_exact += 1
    else:
        tally.duplicates_near += 1
    if dedup is DedupMode.DROP:
        tally.cleaned += 1  # cleaned pages not written, as --max-page-perplexity counts them
        tally.html_bytes_before += entry.html_bytes_before
        if exact:
            tally.dropped_duplicate_exact += 1
        else:
            tally.dropped_duplicate_near += 1
        return True
    # Options accept revisit for WARC output only: its sink is the one that writes records.
    if (dedup is DedupMode.REVISIT and exact and isinstance(sink, WarcSink)
            and record is not None and page is not None and page.response is not None
            and entry.digest):
        tally.cleaned += 1
        tally.html_bytes_before += entry.html_bytes_before
        tally.revisits_written += 1
        sink.revisit(record, page, entry, verdict)
        return True
    return False


def _make_sink(job: ApplyJob, out: BinaryIO, in_codec: Codec, source: BinaryIO) -> Sink:
    dictionary = None
    if job.zstd_dictionary and job.codec is Codec.ZSTD and job.format in (
        OutputFormat.WARC, OutputFormat.TEXT,
    ):
        dictionary = _train_on(job.path, job.spans)
    settings = job.settings + (job.lm.warcinfo_fields() if job.lm is not None else ())
    if job.redact_pii:
        settings += (("redact-pii", "yes"),)
    if job.quality is not None:
        settings += tuple(job.quality.record_values())
    names = (os.path.basename(job.path.rstrip("/")), os.path.basename(job.output), settings)
    if job.format is OutputFormat.WARC:
        links = LinkLog(Path(job.links)) if job.links else None
        return WarcSink(out, job.codec, in_codec, source, dictionary, names, links)
    if job.format is OutputFormat.TEXT:
        return TextSink(out, job.codec, dictionary, names, job.language_model)
    rules = None
    if job.url_rules is not None:  # loaded by each worker, once for its input
        from warcdeboil.urlrules import UrlRules  # only runs with --url-rules

        rules = UrlRules.load(job.url_rules)
    # Parquet output is JSONL's objects as rows: the same sink, with its settings in the file.
    kind: type[JsonlSink] = JsonlSink
    extra: dict[str, object] = {}
    if job.format is OutputFormat.PARQUET:
        from warcdeboil.output.parquet import ParquetSink  # pyarrow: Parquet output only

        kind, extra = ParquetSink, {"settings": settings}
    return kind(out, job.codec, job.path, markdown=job.format is OutputFormat.MARKDOWN,
                duplicates=job.dedup is not DedupMode.OFF, rules=rules,
                language_model=job.language_model, **extra)


def _train_on(path: str, spans: Sequence[Span] | None) -> bytes | None:
    """A zstd dictionary trained on the first records of ``path`` (None when too few)."""
    samples: list[bytes] = []
    size = 0
    try:
        for record in iter_selected(path, spans):
            if record.spill is not None:
                continue  # a block too long to hold is no sample of the file's records
            sample = record.to_bytes()
            samples.append(sample)
            size += len(sample)
            if len(samples) >= DICTIONARY_SAMPLE_RECORDS or size >= DICTIONARY_SAMPLE_BYTES:
                break
    except RecordError:
        pass  # train on what was readable; the apply reports the damage
    try:
        return train_dictionary(samples, DICTIONARY_BYTES)
    except ConfigError as exc:
        log.warning("%s: no zstd dictionary: %s", path, exc)
        return None
