"""What Spark's executors run: plain functions over plain rows, no Spark import.

Each function wraps the library function the local engine calls for the same stage, so both
engines share one implementation of the algorithm:

* :func:`scan_task` — pass 1 over one input: :func:`~warcdeboil.run.scan.scan_pages`, its index
  entries as rows (:func:`index_row`: the columns of the index DataFrame), and the file's tally
  as a last row;
* :func:`fit_partition` — the fit over one shuffle partition, sorted by the index's key:
  :func:`~warcdeboil.site.fit.fit_site` per site, one profile row per site;
* :func:`apply_task` — pass 2 over one input with the profiles of its own sites:
  :func:`~warcdeboil.run.apply.apply_file`, written locally and uploaded when the output is remote.

Rows are tuples (cheap to pickle between the JVM and Python workers).
"""

from __future__ import annotations

import logging
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

from warcdeboil.dedup.verdicts import DedupMode, VerdictWriter
from warcdeboil.errors import InputError
from warcdeboil.output.formats import OutputFormat
from warcdeboil.output.provenance import run_settings
from warcdeboil.output.relink import CLEANED_SUFFIX, REVISITS_SUFFIX, Revisit, patch_output
from warcdeboil.output.relink import lines as _lines
from warcdeboil.run.apply import ApplyJob, apply_file
from warcdeboil.run.madewith import RunRecord, side_location, side_path, wanted
from warcdeboil.run.meter import input_bytes
from warcdeboil.run.options import Options
from warcdeboil.run.plan import output_codec, output_name
from warcdeboil.run.scan import ScanSpec, scan_pages
from warcdeboil.run.summary import FitStats
from warcdeboil.site.fit import FitParams, fit_site, group_by_site
from warcdeboil.site.index import decode_entry, encode_entry, sort_key
from warcdeboil.site.pagestore import entry_to_bytes
from warcdeboil.site.profiles import ProfileRow, profile_from_row, profile_row
from warcdeboil.warc.compression import Codec
from warcdeboil.warc.reader import Span, open_archive
from warcdeboil.warc.remote import exists, is_remote, join, local_path, remove, upload
from warcdeboil.warc.tally import Tally

from .dedup import page_key

__all__ = [
    "InputFile",
    "TaskSettings",
    "apply_task",
    "INDEX_COLUMNS",
    "file_sites",
    "fit_partition",
    "fit_stats",
    "fitted_profile",
    "is_entry",
    "is_fitted",
    "is_tally",
    "index_row",
    "output_location",
    "scan_task",
    "tally_of",
]

log = logging.getLogger(__name__)

ENTRY = 0
TALLY = 1
PAGE = 2
ScanRow = tuple[Any, ...]
"""``(ENTRY, site, file_id, sort key, encoded entry, URL key, offset, length)``,
``(TALLY, file_id, tally)``, or with --dedup ``(PAGE, site, page number, encoded page-store
entry)`` (what the duplicate stage signs: :mod:`.dedup`)."""
INDEX_COLUMNS = ("site", "url_key", "file_id", "offset", "length", "key", "entry")
"""The index DataFrame's columns (:func:`index_row`): ``key`` is the index's sort key
(:func:`~warcdeboil.site.index.sort_key`: site, URL key, file, offset — the local engine's
order) and ``entry`` the encoded entry the fit reads (URL and subtree, block and text digests)."""
IndexRow = tuple[str, str, int, int, int, bytes, bytes]


@dataclass(frozen=True, slots=True)
class InputFile:
    """One input of a Spark run (picklable)."""

    file_id: int  # its place in the run's sorted inputs: the index's tiebreak, as locally
    location: str  # local path or URL
    rel: str  # its name relative to the output directory (POSIX)
    spans: tuple[Span, ...] | None = None  # only these records (chosen from an index)


@dataclass(frozen=True, slots=True)
class TaskSettings:
    """What every task needs to know of the run."""

    options: Options
    output: str  # the output directory: local path or URL
    url_rules: Any = None  # --url-rules: a broadcast of the rules' JSON, for url_canonical
    record: RunRecord | None = None  # what the outputs are made with (None: from the options)


# -- pass 1 ----------------------------------------------------------------------------------


def scan_task(
    settings: TaskSettings, file: InputFile, *, count: Callable[[int, int], None] | None = None
) -> Iterator[ScanRow]:
    """Scan one input: a row per indexed page, then the file's tally. ``count(records, nbytes)``
    is called once the file is read (Spark: accumulators, for progress; they reach the driver
    when the task ends, so nothing finer is sent)."""
    options = settings.options
    spec = ScanSpec(file.location, file.file_id, options.site_key, options.limits,
                    options.fail_fast, options.structure, file.spans,
                    digest=options.payload_digest)
    tally = Tally(file.location)
    # Page rows feed the stages before pass 2: the duplicate stage (also for --url-rules alone)
    # and the language-model stage.
    pages = options.dedup_stage or (options.lm is not None
                                    and (options.lm.auto or options.lm.bucketed))
    for page in scan_pages(spec, tally):
        entry = page.index
        if pages:
            yield (PAGE, entry.site if entry is not None else "",
                   page_key(file.file_id, page.entry.ordinal), entry_to_bytes(page.entry))
        if entry is not None:
            yield (ENTRY, entry.site, entry.file_id, sort_key(entry), encode_entry(entry),
                   entry.url_key, entry.offset, entry.length)
    if count is not None:
        count(tally.records, input_bytes(file.location, file.spans))
    yield (TALLY, file.file_id, tally)


def is_entry(row: ScanRow) -> bool:
    return bool(row[0] == ENTRY)


def is_page(row: ScanRow) -> bool:
    return bool(row[0] == PAGE)


def site_page(row: ScanRow) -> tuple[str, tuple[int, bytes]]:
    """A page row keyed by its site, for the join with the profiles."""
    return row[1], (row[2], row[3])


def is_tally(row: ScanRow) -> bool:
    return bool(row[0] == TALLY)


def tally_of(row: ScanRow) -> tuple[int, Tally]:
    return row[1], row[2]


def index_row(row: ScanRow) -> IndexRow:
    """An entry row as a row of the index DataFrame (:data:`INDEX_COLUMNS`).

    Its ``site`` and ``url_key`` columns are for people and partitioning: text a URL held as
    undecodable bytes shows there as U+FFFD. The fit reads the exact values from ``entry``, and
    the order from ``key``.
    """
    return (_shown(row[1]), _shown(row[5]), row[2], row[6], row[7], row[3], row[4])


def _shown(text: str) -> str:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return text


def file_sites(row: ScanRow) -> tuple[str, int]:
    """(site, file_id): which profiles a file's pass 2 needs."""
    return row[1], row[2]


# -- fit ---------------------------------------------------------------------------------------


def fit_partition(params: FitParams, rows: Iterable[Sequence[bytes]]) -> Iterator[ProfileRow]:
    """Fit every site of one partition. Its rows hold one encoded entry each and come sorted by
    (site, URL, file, offset): a site's pages are consecutive, in the local engine's order."""
    entries = (decode_entry(row[0]) for row in rows)
    for site, pages in group_by_site(entries):
        profile = fit_site(site, pages, params)
        yield profile_row(profile)


def is_fitted(row: ProfileRow) -> bool:
    """Whether a profile has anything to remove (the local engine stores only these)."""
    return bool(row[3] or row[4] or row[5])


def fitted_profile(row: ProfileRow) -> tuple[str, ProfileRow]:
    return row[0], row


def fit_stats(row: ProfileRow) -> FitStats:
    fitted = is_fitted(row)
    if not fitted:
        return FitStats(1, 0, row[1])
    return FitStats(1, 1, row[1], len(row[3]) // 8, len(row[4]) // 8, len(row[5]) // 8)


def add_stats(a: FitStats, b: FitStats) -> FitStats:
    total = FitStats()
    total.merge(a)
    total.merge(b)
    return total


# -- pass 2 ------------------------------------------------------------------------------------


def _codec_of(location: str) -> Codec:
    try:
        fh, codec = open_archive(location, random_access=True)  # 8 bytes, not a block
    except InputError:
        return Codec.NONE  # reading it will say why
    fh.close()
    return codec


APPLIED = 0
CLEANED = 1
REVISIT = 2
EXCLUDED = 3
ApplyRow = tuple[Any, ...]
"""``(APPLIED, tally)``; ``(CLEANED, key, (output name, ordinal, new id, new digest))``: a page
cleaned in an output, one row per key a revisit may find it by; ``(REVISIT, (output name,
location, offset, length), keys)``: a revisit its output could not resolve (see
:mod:`warcdeboil.output.relink`); ``(EXCLUDED, file_id, lines)``: the pages --drop-flagged left
out of the output, as the excluded file lists them (--excluded)."""


def apply_task(
    settings: TaskSettings,
    item: tuple[int, tuple[Any, ...]],
    *,
    count: Callable[[int, int], None] | None = None,
) -> Iterator[ApplyRow]:
    """Clean one input with the profiles of its sites, into the output directory: its tally,
    then (WARC output) the rows :func:`relinked` needs. ``item`` is ``(file_id, (file,
    profile rows))``, with --dedup ``(file_id, (file, profile rows, verdicts))``."""
    file, rows, *found = item[1]
    with tempfile.TemporaryDirectory(prefix="warcdeboil-links-") as tmp:
        links = Path(tmp) / "links" if settings.options.format is OutputFormat.WARC else None
        verdicts = rules = None
        if found:  # the file's side file, as the local stage writes it
            verdicts = Path(tmp) / "verdicts.dups"
            with VerdictWriter(verdicts) as writer:
                for verdict in found[0] or ():
                    writer.add(verdict)
            if settings.url_rules is not None:  # the run's rules, as a local worker reads them
                rules = Path(tmp) / "urlrules.json"
                rules.write_text(settings.url_rules.value, encoding="utf-8")
        quality = settings.options.quality
        excluded = (Path(tmp) / "excluded.jsonl" if quality is not None
                    and quality.excluded is not None else None)
        tally, name = _apply(settings, file, rows, links, verdicts, rules, excluded)
        if count is not None:
            file = item[1][0]
            count(tally.records or tally.cleaned, input_bytes(file.location, file.spans))
        yield (APPLIED, tally)
        if excluded is not None and tally.output and excluded.exists():
            yield (EXCLUDED, item[0], excluded.read_bytes())
        if links is None or not tally.output:
            return
        for line in _lines(links.with_name(links.name + CLEANED_SUFFIX)):
            ordinal, keys, new_id, new_digest = line
            for key in keys:
                yield (CLEANED, key, (name, ordinal, new_id, new_digest))
        for line in _lines(links.with_name(links.name + REVISITS_SUFFIX)):
            offset, length, keys, rid = line
            yield (REVISIT, (name, tally.output, offset, length, rid), keys)


def is_applied(row: ApplyRow) -> bool:
    return bool(row[0] == APPLIED)


def is_excluded(row: ApplyRow) -> bool:
    return bool(row[0] == EXCLUDED)


def excluded_of(row: ApplyRow) -> tuple[int, bytes]:
    return row[1], row[2]


def applied(row: ApplyRow) -> Tally:
    return row[1]  # type: ignore[no-any-return]


def revisit_lookups(row: ApplyRow) -> Iterator[tuple[str, tuple[Any, int]]]:
    """(key, (revisit, which key)) for each key a revisit looks its original up by."""
    if row[0] == REVISIT:
        for i, key in enumerate(row[2]):
            yield key, (row[1], i)


def cleaned_row(row: ApplyRow) -> tuple[str, tuple[str, int, str, str]]:
    return row[1], row[2]


def is_cleaned(row: ApplyRow) -> bool:
    return bool(row[0] == CLEANED)


def candidate(
    pair: tuple[str, tuple[tuple[Any, int], tuple[str, int, str, str]]],
) -> tuple[Any, tuple[tuple[int, bool, str, int], tuple[str, str]]]:
    """A cleaned page a revisit's key found, with the order :func:`warcdeboil.output.relink.relink`
    chooses in: by the revisit's first key, its own output first, then by output name and
    place in the output."""
    (revisit, which), (name, ordinal, new_id, new_digest) = pair[1]
    return revisit, ((which, name != revisit[0], name, ordinal), (new_id, new_digest))


def first_candidate(a: tuple[Any, Any], b: tuple[Any, Any]) -> tuple[Any, Any]:
    return a if a[0] <= b[0] else b


def by_output(
    item: tuple[Any, tuple[Any, tuple[str, str]]],
) -> tuple[str, Revisit]:
    (_, location, offset, length, rid), (_, target) = item
    return location, (offset, length, rid, target)


def relink_output(item: tuple[str, Iterable[Revisit]]) -> int:
    """Point the revisits of one output at the cleaned records found for them (the output
    downloaded and uploaded again when it is remote); 1 when it was rewritten."""
    location, found = item[0], list(item[1])
    if not is_remote(location):
        return int(patch_output(Path(local_path(location)), found) is not None)
    with tempfile.TemporaryDirectory(prefix="warcdeboil-") as tmp:
        local = Path(tmp) / location.rpartition("/")[2]
        source, _ = open_archive(location)
        with source, open(local, "wb") as out:
            shutil.copyfileobj(source, out)
        if patch_output(local, found) is None:
            return 0
        upload(local, location)
    return 1


def output_location(output: str, file: InputFile, options: Options) -> str:
    """Where the output of ``file`` goes under the output directory ``output``."""
    return join(output, _output_name(file, options)[0])


def output_codec_of(file: InputFile, options: Options) -> Codec:
    """The compression the output of ``file`` is written with."""
    return _output_name(file, options)[1]


def _output_name(file: InputFile, options: Options) -> tuple[str, Codec]:
    """The output's name relative to the output directory, and its compression."""
    codec = output_codec(options.format, options.compress, partial(_codec_of, file.location))
    return output_name(file.rel, options.format, codec), codec


def _apply(
    settings: TaskSettings, file: InputFile, rows: Sequence[ProfileRow] | None,
    links: Path | None, verdicts: Path | None = None, rules: Path | None = None,
    excluded: Path | None = None,
) -> tuple[Tally, str]:
    from .lm import executor_settings

    profiles = {row[0]: profile_from_row(row) for row in rows or ()}
    options = settings.options
    name, codec = _output_name(file, options)
    target = join(settings.output, name)
    record = settings.record if settings.record is not None else wanted(options)
    job = ApplyJob(
        file.location, "", options.format, codec, None, options.partitions, options.site_key,
        options.limits, None, options.zstd_dictionary, options.fail_fast,
        options.effective_mode, file.spans, problems_logged=True,
        settings=run_settings(options.format, options.effective_mode, options.site_key,
                              options.fit, options.limits),
        links=str(links) if links is not None else None,
        lm=executor_settings(options.lm),
        verdicts=str(verdicts) if verdicts is not None else None,
        dedup=options.effective_dedup if verdicts is not None else DedupMode.OFF,
        url_rules=str(rules) if rules is not None else None,
        made_with=record.side_bytes(codec), redact_pii=options.redact_pii,
        language_model=options.language_model, quality=options.quality,
        excluded=str(excluded) if excluded is not None else None,
        drop_headline=options.drop_headline, favor=options.favor,
    )
    if not is_remote(settings.output):
        return apply_file(replace(job, output=local_path(target)), profiles=profiles.get), name
    with tempfile.TemporaryDirectory(prefix="warcdeboil-") as tmp:
        local = Path(tmp) / name.rpartition("/")[2]
        tally = apply_file(replace(job, output=str(local)), profiles=profiles.get)
        if tally.output:
            try:  # in AtomicFile's order (warcdeboil.warc.writer): never the old record
                # beside the new output
                if exists(target):
                    remove(side_location(target))
                    upload(local, target)
                    upload(side_path(local), side_location(target))
                else:
                    upload(side_path(local), side_location(target))
                    upload(local, target)
            except InputError as exc:
                if options.fail_fast:
                    raise
                tally.problem(str(exc).split(": ", 1)[-1])
                log.error("%s", exc)
                tally.output = ""
    if tally.output:
        tally.output = target
    return tally, name
