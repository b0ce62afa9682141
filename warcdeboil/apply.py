"""Pass 2: stream one archive again, in its order, remove each page's site template, write output.

One output file per input, records in the input's order. ``warc`` opens with its own warcinfo
and carries every record; records that are not cleaned HTML pages keep their bytes (copied
compressed when the codec is unchanged), but for revisits of a page cleaned above them (see
:mod:`.provenance`); the revisits it cannot resolve, and its cleaned pages, go to its links files
for :mod:`.relink`. ``text`` writes a warcinfo, then one WET-style ``conversion`` record per
page; ``jsonl`` one object per page.

:func:`apply_file` serves both engines: profiles come from a lookup function (the local engine's
SQLite store, or the Spark engine's profiles of the sites a file holds), and pages come from pass
1's page store when there is one, else from parsing the records again (same result, byte for byte).
"""

from __future__ import annotations

import enum
import json
import logging
import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, NamedTuple

from isal import igzip

from .compression import Codec
from .dom import (
    CleanText,
    Doomed,
    PageText,
    analyse,
    clean_html,
    count_repeated,
    find_doomed,
    plain_text,
    remove_repeated,
    remove_template,
)
from .doomedstore import DoomedReader
from .duplicates import DedupMode, Kind, Verdict, VerdictReader, duplicate_fields
from .errors import ConfigError, InputError, RecordError, WorkDirError
from .fit import SiteProfile
from .meter import Meter, Report, input_bytes
from .names import escape_name
from .pages import HtmlPage, PageLimits, html_page, payload_sha1
from .pagestore import PageEntry, iter_page_store
from .profiles import ProfileReader
from .provenance import (
    SOURCE_FIELD,
    Revisits,
    cleaned_headers,
    derived_id,
    field,
    revisit_of_copy,
    warcinfo_record,
)
from .reader import Span, WarcRecord, iter_selected, open_archive
from .recompress import carry_record, write_repaired
from .relink import LinkLog
from .scan import no_records, record_problem, unaddressable_counted
from .sitekey import SiteKeyer, SiteKeyMode
from .tally import Tally
from .writer import AtomicFile, WarcWriter, rebuild_record, sha1_digest
from .zstdio import train_dictionary

if TYPE_CHECKING:
    # Imported where used: a template-mode run (WARC output, no --lm, no URL rules) needs none.
    from .content import Block, Extraction
    from .language import Guess
    from .lm_filter import LmSettings, PageScore, PageScorer
    from .urlrules import UrlRules

__all__ = ["ApplyJob", "OutputFormat", "ProfileLookup", "apply_file", "page_fields"]

log = logging.getLogger(__name__)

# A zstd dictionary is trained on at most this much of each input (zstd's own advice is about
# a hundred times the dictionary size in samples; its default dictionary size is 110 KiB).
DICTIONARY_BYTES = 110 << 10
DICTIONARY_SAMPLE_RECORDS = 2000
DICTIONARY_SAMPLE_BYTES = 16 << 20
# JSONL is one gzip stream of text, deflated by ISA-L (isal, already a dependency for inflating)
# at its default level: on the dragnet eval output (6.3 MB of JSON) 0.016 CPU-s and 2.43 MB,
# where zlib's level 1 took 0.054 CPU-s for 2.54 MB (and its level 6 four times as long again).
JSONL_GZIP_LEVEL = 2
# Records copied compressed from the input are read and written a piece of this size at a time.
_COPY_CHUNK = 1 << 20
# HTTP headers that no longer describe a body we wrote plain; kept under Common Crawl's names.
_STALE_HTTP_HEADERS = {
    "content-encoding": "X-Crawler-Content-Encoding",
    "transfer-encoding": "X-Crawler-Transfer-Encoding",
    "content-length": "X-Crawler-Content-Length",
}


ProfileLookup = Callable[[str], "SiteProfile | None"]
"""``lookup(site)``: the profile learned for a site, or None."""


class OutputFormat(str, enum.Enum):
    """What pass 2 writes."""

    WARC = "warc"
    TEXT = "text"
    JSONL = "jsonl"
    MARKDOWN = "markdown"  # JSONL records with a ``markdown`` field


class Mode(str, enum.Enum):
    """What is removed: the site's template only, or everything but the main content."""

    TEMPLATE = "template"
    CONTENT = "content"


def default_mode(fmt: OutputFormat) -> Mode:
    """WARC output keeps HTML, so it keeps everything but the template; text outputs are for
    corpora, which want the main content."""
    return Mode.TEMPLATE if fmt is OutputFormat.WARC else Mode.CONTENT


def needs_structure(fmt: OutputFormat, mode: Mode) -> bool:
    """Whether pages must be analysed with structure marks (see :func:`dom.analyse`)."""
    return mode is Mode.CONTENT or fmt in (OutputFormat.JSONL, OutputFormat.MARKDOWN)


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
    # cleaned them (lm_fit): written from there, not cleaned again
    scores_store: str | None = None  # their perplexities as that stage scored them (buckets)
    url_rules: str | None = None  # rules learned in the run: JSONL says each url_canonical

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
        from .lm_filter import PageScorer  # numpy and the model only with --lm

        scorer = PageScorer(job.lm, load=job.scores_store is None)
    store = None
    if lookup is None and job.profiles_dir:
        store = ProfileReader(Path(job.profiles_dir), job.partitions)
        lookup = store.get
    source, in_codec = open_archive(job.path, random_access=job.spans is not None)
    try:
        with AtomicFile(Path(job.output)) as out:
            sink = _make_sink(job, out, in_codec, source)
            if scorer is not None:
                stored = None
                if job.scores_store is not None and not scorer.needs_lines:
                    from .lm_fit import read_scores

                    stored = read_scores(Path(job.scores_store))
                sink = _ScoringSink(sink, scorer, tally, stored)
            try:
                _fill(job, sink, keyer, lookup, tally, meter)
            except BaseException:
                sink.discard()
                raise
    finally:
        source.close()
        if store is not None:
            store.close()


def _fill(
    job: ApplyJob, sink: _Sink, keyer: SiteKeyer, lookup: ProfileLookup | None, tally: Tally,
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
        from .cleanstore import iter_cleaned_store  # content mode's store (text outputs only)
        from .language import Guess

        cleaned = (iter_cleaned_store(Path(job.cleaned_store)) if job.cleaned_store is not None
                   else None)
        for entry in iter_page_store(Path(job.page_store)):
            cleaning = guess = known = None
            if cleaned is not None:
                made = next(cleaned, None)
                if made is None or made[0] != entry.ordinal:
                    raise WorkDirError(f"{job.cleaned_store}: does not match its page store: "
                                       "delete the work directory")
                cleaning = PageCleaning(made[2], made[3], made[4])
                guess = Guess(made[5], made[6])
            elif doomed is not None:
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
    sink: _Sink,
    tally: Tally,
    meter: Meter | None,
    verdicts: VerdictReader | None = None,
    doomed: DoomedReader | None = None,
) -> None:
    stored = iter_page_store(Path(job.page_store)) if job.page_store is not None else None
    pending: PageEntry | None = next(stored, None) if stored is not None else None
    seen = stored is not None or job.problems_logged
    records = unaddressable_counted(iter_selected(job.path, job.spans), job.path, tally, seen=seen)
    for ordinal, record in enumerate(records):
        tally.records += 1
        if ordinal == 0:
            sink.begin(record)
        if meter is not None:
            meter.record(record.offset, record.length)
        if record.error is not None:
            record_problem(tally, job.path, record, record.error, job.fail_fast, seen=seen)
            if record.headers:
                tally.carried += 1
                sink.repaired(record)
            else:
                tally.skipped += 1  # nothing that can be written as a record
            continue
        try:
            page = html_page(record, job.limits)
        except RecordError as exc:
            record_problem(tally, job.path, record, exc.reason, job.fail_fast, seen=seen)
            page = None
        if page is None:
            tally.carried += 1
            sink.carry(record)
            continue
        while stored is not None and pending is not None and pending.ordinal < ordinal:
            pending = next(stored, None)
        known = None
        if pending is not None and pending.ordinal == ordinal:
            entry = pending
            known = doomed.get(ordinal) if doomed is not None else None
        else:
            entry = PageEntry(
                ordinal, record.offset, record.length, page.url, record.record_id,
                record.get("WARC-Date") or "", page.charset, len(page.body),
                analyse(page.markup, structure=job.structure), payload_sha1(page),
            )
        _emit(entry, record, page, keyer, lookup, sink, tally, job, verdicts, known=known)
    if tally.records == 0 and not tally.problems and job.spans is None:
        no_records(tally, job.path, seen=seen)


def _emit(
    entry: PageEntry,
    record: WarcRecord | None,
    page: HtmlPage | None,
    keyer: SiteKeyer,
    lookup: ProfileLookup | None,
    sink: _Sink,
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
            cleaning = clean_page(entry.page, profile, job.mode, known, entry.url)
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
    sink: _Sink, tally: Tally, dedup: DedupMode,
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
    if (dedup is DedupMode.REVISIT and exact and isinstance(sink, _WarcSink)
            and record is not None and page is not None and page.response is not None
            and entry.digest):
        tally.cleaned += 1
        tally.html_bytes_before += entry.html_bytes_before
        tally.revisits_written += 1
        sink.revisit(record, page, entry, verdict)
        return True
    return False


class PageCleaning(NamedTuple):
    """A page's text with its site's profile applied, and what went."""

    cleaned: CleanText
    content: Extraction | None  # the kept blocks, when the page has structure marks
    removed_blocks: int  # repeated blocks, and in content mode blocks judged not content


def _removals(
    profile: SiteProfile | None,
) -> tuple[frozenset[int], frozenset[int], frozenset[int]]:
    """The profile's template subtrees, repeated blocks and template slots (none without one)."""
    if profile is None:
        return frozenset(), frozenset(), frozenset()
    return profile.template, profile.repeated, profile.template_slots


def clean_page(
    page: PageText, profile: SiteProfile | None, mode: Mode, known: Doomed | None = None,
    url: str = "",
) -> PageCleaning:
    """The text of an analysed page without its site's template: in content mode, its main
    content; else everything but the template subtrees and slots and the repeated blocks.
    ``known``: what the profile dooms on the page (:func:`dom.find_doomed`), if found already;
    ``url``: the page's address, which content mode reads (a thread's address says its comments
    are its content)."""
    template, repeated, slots = _removals(profile)
    removal = remove_template(page, template, slots, known)
    marked = removal.marked.decode("utf-8", "surrogatepass")
    content: Extraction | None = None
    if mode is Mode.CONTENT:
        from .content import extract  # the content model: not loaded by template-mode runs

        content = extract(marked, repeated=repeated, url=url)
    elif page.structured:
        from .content import split_blocks, without_repeated

        content = without_repeated(split_blocks(marked), repeated)
    if content is not None:
        text = content.text
        removed_blocks = sum(content.removed.values())
    else:
        marked, removed_blocks = remove_repeated(marked, repeated)
        text = plain_text(marked, page.structured)
    cleaned = CleanText(text, removal.subtrees, removal.slots)
    return PageCleaning(cleaned, content, removed_blocks)


def clean_document(markup: str | bytes, page: PageText, profile: SiteProfile | None) -> str:
    """The page's document without what :func:`clean_page` removes in template mode."""
    template, repeated, slots = _removals(profile)
    return clean_html(markup, page, template, repeated, slots)


def clean_for_warc(
    markup: str | bytes, page: PageText, profile: SiteProfile | None, mode: Mode,
    known: Doomed | None = None,
) -> tuple[PageCleaning, bytes]:
    """What WARC output takes of a page: :func:`clean_page`'s counts, and
    :func:`clean_document`'s HTML as UTF-8, the doomed candidates and slots found once for both.

    A WARC output holds no text, so a page without structure marks (the only kind the command
    line gives it) gets its repeated blocks counted, not its text made: the cleaning's text is
    "" (the same counts). ``known``: what the profile dooms on the page, if found already."""
    template, repeated, slots = _removals(profile)
    if known is None:
        known = find_doomed(page, template, slots)
    if page.structured or mode is Mode.CONTENT:
        cleaning = clean_page(page, profile, mode, known)
    else:
        removal = remove_template(page, template, slots, known)
        marked = removal.marked.decode("utf-8", "surrogatepass")
        cleaning = PageCleaning(CleanText("", removal.subtrees, removal.slots), None,
                                count_repeated(marked, repeated))
    html = clean_html(markup, page, template, repeated, slots, known)
    return cleaning, html.encode("utf-8", "surrogatepass")


@dataclass(slots=True)
class PageResult:
    """One cleaned page, as the sinks get it."""

    entry: PageEntry
    site: str
    cleaned: CleanText
    content: Extraction | None  # blocks kept (and why others went), when pages have structure
    score: PageScore | None = None  # with --lm
    duplicate: Verdict | None = None  # with --dedup: the page's duplicate group, if any
    language: Guess | None = None  # the text's language, when identified already (lm_fit)


class _Sink(ABC):
    """Where one output format writes: every record of the input passes through it in order."""

    wants_html = False

    def begin(self, first: WarcRecord) -> None:
        """The input's first record is about to come (WARC output dates its warcinfo by it)."""

    def carry(self, record: WarcRecord) -> None:
        """A record that is not a cleaned page (only WARC output keeps these)."""

    def repaired(self, record: WarcRecord) -> None:
        """A record read only in part (cut short, or with a wrong Content-Length)."""

    @abstractmethod
    def page(
        self, result: PageResult, record: WarcRecord | None, page: HtmlPage | None,
        html: bytes | None,
    ) -> None:
        """A cleaned page."""

    def close(self) -> None:
        """Flush what is buffered."""

    def discard(self) -> None:
        """The output will not be kept: drop what was written beside it."""


class _ScoringSink(_Sink):
    """Text outputs with --lm: pages gathered a batch at a time, scored together (see
    ``PageScorer.score_many``), filtered, then passed on in their order."""

    BATCH_PAGES = 256
    BATCH_CHARS = 1 << 20

    def __init__(self, inner: _Sink, scorer: PageScorer, tally: Tally,
                 stored: Iterator[tuple[int, float | None, str]] | None = None) -> None:
        """``stored``: (ordinal, perplexity, language) of every page in order, as the stage
        before pass 2 scored them (no line score needed): the pages are not scored again."""
        assert not inner.wants_html  # WARC output takes no --lm (Options refuses it)
        self._stored = stored
        self._inner = inner
        self._scorer = scorer
        self._tally = tally
        self._pending: list[PageResult] = []
        self._chars = 0

    def begin(self, first: WarcRecord) -> None:
        self._inner.begin(first)

    def page(
        self, result: PageResult, record: WarcRecord | None, page: HtmlPage | None,
        html: bytes | None,
    ) -> None:
        self._pending.append(result)  # text sinks need the result only
        self._chars += len(result.cleaned.text)
        if len(self._pending) >= self.BATCH_PAGES or self._chars >= self.BATCH_CHARS:
            self._flush()

    def _flush(self) -> None:
        pending, self._pending, self._chars = self._pending, [], 0
        if not pending:
            return
        tally = self._tally
        if self._stored is not None:
            scores = [self._scorer.scored(r.cleaned, r.content, *self._score_of(r))
                      for r in pending]
        else:
            scores = self._scorer.score_many([(r.cleaned, r.content) for r in pending],
                                             [r.entry.url for r in pending])
        for result, score in zip(pending, scores, strict=True):
            tally.lines_dropped_perplexity += score.lines_dropped
            dropped = score.page_dropped or score.bucket_dropped
            written = 0 if dropped else len(score.cleaned.text)
            tally.text_chars -= len(result.cleaned.text) - written  # counted as cleaned
            if dropped:  # cleaned, but not written
                tally.pages_dropped_perplexity += score.page_dropped
                tally.pages_dropped_bucket += score.bucket_dropped
                continue
            # The line filter may have changed the text: its language is then found again.
            language = (result.language if score.cleaned.text == result.cleaned.text
                        else None)
            self._inner.page(PageResult(result.entry, result.site, score.cleaned, score.content,
                                        score, result.duplicate, language), None, None, None)

    def _score_of(self, result: PageResult) -> tuple[float | None, str]:
        assert self._stored is not None
        # Pages that never reach the sink (duplicates dropped by --dedup drop) are passed over.
        ordinal, value, language = next(self._stored, (-1, None, ""))
        while 0 <= ordinal < result.entry.ordinal:
            ordinal, value, language = next(self._stored, (-1, None, ""))
        if ordinal != result.entry.ordinal:
            raise WorkDirError("the page scores of the language-model stage do not match the "
                               "page store: delete the work directory")
        return value, language

    def close(self) -> None:
        self._flush()
        self._inner.close()

    def discard(self) -> None:
        self._inner.discard()


def _make_sink(job: ApplyJob, out: BinaryIO, in_codec: Codec, source: BinaryIO) -> _Sink:
    dictionary = None
    if job.zstd_dictionary and job.codec is Codec.ZSTD and job.format in (
        OutputFormat.WARC, OutputFormat.TEXT,
    ):
        dictionary = _train_on(job.path, job.spans)
    settings = job.settings + (job.lm.warcinfo_fields() if job.lm is not None else ())
    names = (os.path.basename(job.path.rstrip("/")), os.path.basename(job.output), settings)
    if job.format is OutputFormat.WARC:
        links = LinkLog(Path(job.links)) if job.links else None
        return _WarcSink(out, job.codec, in_codec, source, dictionary, names, links)
    if job.format is OutputFormat.TEXT:
        return _TextSink(out, job.codec, dictionary, names)
    rules = None
    if job.url_rules is not None:  # loaded by each worker, once for its input
        from .urlrules import UrlRules  # only runs with --url-rules

        rules = UrlRules.load(job.url_rules)
    return _JsonlSink(out, job.codec, job.path, markdown=job.format is OutputFormat.MARKDOWN,
                      duplicates=job.dedup is not DedupMode.OFF, rules=rules)


Fields = list[tuple[str, str]]
# The revisit profile `identical-payload-digest` is WARC 1.1's: such records say so whatever the
# version of the records around them.
REVISIT_VERSION = "WARC/1.1"
_Names = tuple[str, str, tuple[tuple[str, str], ...]]
"""(source file name, output file name, settings): what an output's warcinfo says."""
_WARC_DESCRIPTION = (
    "the source's records in order; its HTML pages without their site's template, each with a "
    f"new record id naming its source in {SOURCE_FIELD}; other records as they were"
)
_TEXT_DESCRIPTION = (
    "WET-style conversion records: the text of each HTML page of the source without its site's "
    "template, WARC-Refers-To the page's record"
)


def _warcinfo(
    writer: WarcWriter, names: _Names, description: str, date: str | None, first_id: str,
    version: str,
) -> str:
    """Write an output's own warcinfo record; its id."""
    source, output, settings = names
    version, headers, block = warcinfo_record(
        source=source, output=output, description=description, settings=settings, date=date,
        first_id=first_id, version=version,
    )
    writer.write(version, headers, block)
    return field(headers, "WARC-Record-ID") or ""


class _WarcSink(_Sink):
    """WARC output: the output's warcinfo, then every record of the input, pages cleaned."""

    wants_html = True

    def __init__(
        self, out: BinaryIO, codec: Codec, in_codec: Codec, source: BinaryIO,
        dictionary: bytes | None, names: _Names, links: LinkLog | None = None,
    ) -> None:
        self._out = out
        self._links = links  # what relink needs once every output is written
        self._writer = WarcWriter(out, codec, zstd_dictionary=dictionary)
        # Records are copied compressed, byte for byte, when the codec does not change (zstd
        # frames may depend on the input's dictionary, so they are always re-encoded).
        self._copy_raw = codec is in_codec and codec is not Codec.ZSTD
        self._source = source
        self._names = names
        self._warcinfo_id: str | None = None
        self._revisits = Revisits()  # this file's cleaned records, for its later revisits

    def begin(self, first: WarcRecord) -> None:
        # Dated by the source's first record, not the clock: outputs are reproducible.
        if self._warcinfo_id is None:
            self._warcinfo_id = _warcinfo(
                self._writer, self._names, _WARC_DESCRIPTION, first.get("WARC-Date"),
                first.record_id, first.version,
            )

    def close(self) -> None:
        if self._warcinfo_id is None:  # an input without a record still gets its warcinfo
            self._warcinfo_id = _warcinfo(
                self._writer, self._names, _WARC_DESCRIPTION, None, "", "WARC/1.0")
        if self._links is not None:
            self._links.close()

    def discard(self) -> None:
        if self._links is not None:
            self._links.discard()

    def carry(self, record: WarcRecord) -> None:
        if record.rec_type == "revisit":
            self._write_revisit(record.version, record.headers, record.block,
                                lambda: self._carry_one(record))
            return
        self._carry_one(record)

    def _write_revisit(self, version: str, headers: Fields, block: bytes,
                       write: Callable[[], None]) -> None:
        """A revisit pointed at the cleaned record it revisits when that was written above,
        else written by ``write`` and left to relink (perhaps cleaned later, or elsewhere)."""
        resolved = self._revisits.resolve(headers)
        if resolved is not None:
            self._writer.write(version, resolved, block)
            return
        start = self._out.tell()
        write()
        if self._links is not None:
            self._links.unresolved(headers, start, self._out.tell() - start)

    def revisit(self, record: WarcRecord, page: HtmlPage, entry: PageEntry,
                verdict: Verdict) -> None:
        """An exact duplicate written as a revisit of its group's kept page."""
        assert page.response is not None
        head = record.block_head(record.block_size - len(page.response.body))
        headers = revisit_of_copy(record.headers, head, entry.digest, verdict.keep_url,
                                  verdict.keep_date, verdict.keep_record_id, self._warcinfo_id)
        self._write_revisit(REVISIT_VERSION, headers, head,
                            lambda: self._writer.write(REVISIT_VERSION, headers, head))

    def _carry_one(self, record: WarcRecord) -> None:
        # A record without its CRLFCRLF is written framed afresh, its bytes otherwise the same.
        if (self._copy_raw and record.addressable and record.length > 0 and record.framed
                and not record.converted and self._copy(record.offset, record.length)):
            return
        carry_record(self._writer, record)

    def _copy(self, offset: int, length: int) -> bool:
        """Copy the input's bytes at ``offset`` unchanged, a MiB at a time (False, having
        written nothing, when the input holds fewer)."""
        source = self._source
        if length > _COPY_CHUNK:
            source.seek(offset + length - 1)
            if len(source.read(1)) != 1:
                return False
        source.seek(offset)
        raw = source.read(min(length, _COPY_CHUNK))
        if length <= _COPY_CHUNK:
            if len(raw) != length:
                return False
            self._writer.write_compressed(raw)
            return True
        remaining = length
        while raw:
            self._writer.write_compressed(raw)
            remaining -= len(raw)
            raw = source.read(min(remaining, _COPY_CHUNK)) if remaining else b""
        if remaining:
            raise InputError(f"the input changed while its record at {offset} was copied")
        return True

    def repaired(self, record: WarcRecord) -> None:
        write_repaired(self._writer, record)

    def page(
        self, result: PageResult, record: WarcRecord | None, page: HtmlPage | None,
        html: bytes | None,
    ) -> None:
        assert record is not None and page is not None and html is not None
        if page.response is None:
            block = html
            payload_offset = None
            headers = [
                (k, "text/html; charset=utf-8" if k.lower() == "content-type" else v)
                for k, v in record.headers
            ]
        else:
            http_head = _http_head(page, len(html))
            block = http_head + html
            payload_offset = len(http_head)
            headers = record.headers
        rebuilt = rebuild_record(headers, block, payload_offset)
        new = cleaned_headers(
            rebuilt, record.record_id, field(rebuilt, "WARC-Block-Digest") or "", self._warcinfo_id
        )
        self._revisits.add(record.headers, new)
        if self._links is not None:
            self._links.cleaned(record.headers, new)
        self._writer.write(record.version, new, block)


def _http_head(page: HtmlPage, body_length: int) -> bytes:
    assert page.response is not None
    lines = [page.response.status_line]
    for key, value in page.response.headers:
        lower = key.lower()
        if lower in _STALE_HTTP_HEADERS:
            lines.append(f"{_STALE_HTTP_HEADERS[lower]}: {value}")
        elif lower == "content-type":
            lines.append(f"{key}: {value.split(';', 1)[0].strip() or 'text/html'}; charset=utf-8")
        else:
            lines.append(f"{key}: {value}")
    lines.append(f"Content-Length: {body_length}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "replace")


class _TextSink(_Sink):
    """WET-style output: a warcinfo record, then one ``conversion`` record per page."""

    def __init__(
        self, out: BinaryIO, codec: Codec, dictionary: bytes | None, names: _Names
    ) -> None:
        self._writer = WarcWriter(out, codec, zstd_dictionary=dictionary)
        self._names = names
        self._started = False

    def page(
        self, result: PageResult, record: WarcRecord | None, page: HtmlPage | None,
        html: bytes | None,
    ) -> None:
        entry = result.entry
        date = entry.date or "1970-01-01T00:00:00Z"
        if not self._started:
            # Dated by the first page (pass 1's page store knows pages only, not records).
            self._started = True
            _warcinfo(self._writer, self._names, _TEXT_DESCRIPTION, entry.date, entry.record_id,
                      "WARC/1.0")
        body = result.cleaned.text.encode("utf-8", "surrogatepass")
        headers = [
            ("WARC-Type", "conversion"),
            ("WARC-Target-URI", entry.url),
            ("WARC-Date", date),
            ("WARC-Record-ID", derived_id("conversion", entry.record_id)),
            ("WARC-Refers-To", entry.record_id),
            ("WARC-Block-Digest", sha1_digest(body)),
        ]
        # Common Crawl's header and codes (ISO 639-3); one language, none when unsure.
        from .language import identify, iso639_3  # WET output only: not loaded by WARC output

        guess = result.language if result.language is not None else identify(
            result.cleaned.text)
        language = iso639_3(guess.language)
        if language:
            headers.append(("WARC-Identified-Content-Language", language))
        headers += [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))]
        self._writer.write("WARC/1.0", headers, body)

    def close(self) -> None:
        if not self._started:  # no page: the output still says what it is
            self._started = True
            _warcinfo(self._writer, self._names, _TEXT_DESCRIPTION, None, "", "WARC/1.0")


class _JsonlSink(_Sink):
    """One JSON object per page: identity, page attributes, text (and Markdown when asked)."""

    def __init__(self, out: BinaryIO, codec: Codec, source_path: str, *, markdown: bool,
                 duplicates: bool = False, rules: UrlRules | None = None) -> None:
        self._gzip = igzip.IGzipFile(
            filename="", mode="wb", fileobj=out, mtime=0, compresslevel=JSONL_GZIP_LEVEL
        ) if codec is not Codec.NONE else None
        self._out: BinaryIO = self._gzip if self._gzip is not None else out  # type: ignore[assignment]
        # The name as valid UTF-8: bytes that are not UTF-8 percent-encoded (names.escape_name).
        self._warc_file = escape_name(os.path.basename(source_path))
        self._markdown = markdown
        self._duplicates = duplicates  # --dedup: each page says its duplicate group
        self._rules = rules  # --url-rules: each page says its URL's canonical form

    def page(
        self, result: PageResult, record: WarcRecord | None, page: HtmlPage | None,
        html: bytes | None,
    ) -> None:
        entry = result.entry
        obj: dict[str, object] = {
            "url": entry.url,
            "site": result.site,
            "record_id": entry.record_id,
            "warc_file": self._warc_file,
            "offset": entry.offset,
            "length": entry.length,
            "date": entry.date,
            "charset": entry.charset,
        }
        obj.update(page_fields(entry.page, result.cleaned, result.content, self._markdown,
                               result.score, result.language))
        obj["html_bytes_before"] = entry.html_bytes_before
        if self._duplicates:
            obj.update(duplicate_fields(result.duplicate))
        if self._rules is not None:
            obj["url_canonical"] = self._rules.canonical(entry.url)
        line = json.dumps(obj, ensure_ascii=False) + "\n"
        self._out.write(line.encode("utf-8", "surrogatepass"))  # one write: one deflate call

    def close(self) -> None:
        if self._gzip is not None:
            self._gzip.close()


def page_fields(
    page: PageText, cleaned: CleanText, content: Extraction | None, markdown: bool,
    score: PageScore | None = None, guess: Guess | None = None,
) -> dict[str, object]:
    """What JSONL output says of a cleaned page beyond its record (title to removed, in the
    JSONL's order); the in-memory API's pages carry the same. ``score``: its perplexity (--lm),
    and each line's when they were asked for; ``guess``: ``identify`` of its text, when known."""
    from .language import identify, primary_subtag  # JSONL output and the API only
    from .markdown import render

    meta = page.meta
    if guess is None:
        guess = identify(cleaned.text)
    fields: dict[str, object] = {
        "title": page.title,
        "description": meta.description,
        "canonical_url": meta.canonical_url,
        "language": guess.language or None,
        "language_confidence": guess.confidence,
        "html_lang": primary_subtag(meta.lang),
        "breadcrumbs": list(meta.breadcrumbs),
    }
    blocks = content.blocks if content is not None else []
    fields["headings"] = [
        {"level": block.kind, "text": block.text} for block in blocks if 1 <= block.kind <= 6
    ]
    fields["lists"] = _lists(blocks)
    fields["text"] = cleaned.text
    if markdown:
        fields["markdown"] = render(blocks)
    fields["perplexity"] = score.perplexity if score is not None else None
    if score is not None and score.bucketed:
        fields["perplexity_bucket"] = score.bucket
    if score is not None and score.lines is not None:
        fields["line_perplexities"] = score.lines
    removed = {"template_subtrees": cleaned.removed, "template_slots": cleaned.slots}
    if content is not None:
        removed.update(sorted(content.removed.items()))
    fields["removed"] = removed
    return fields


def _lists(blocks: list[Block]) -> list[list[str]]:
    """Runs of consecutive list items, each run one list."""
    from .content import KIND_ITEM  # JSONL output only

    lists: list[list[str]] = []
    previous = False
    for block in blocks:
        item = block.kind == KIND_ITEM
        if item:
            if not previous:
                lists.append([])
            lists[-1].append(block.text)
        previous = item
    return lists


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
