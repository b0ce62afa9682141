"""The local engine: index, fit and apply over many files with a pool of worker processes.

Stages can run one by one (``index`` → ``fit`` → ``apply``) or all at once (:func:`clean`). The work
directory holds the index runs and the profiles; its layout does not depend on the number of
workers, so results are byte-identical whatever ``workers`` is.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any, TypeVar

from warcdeboil.dedup.doomed import doomed_path
from warcdeboil.dedup.verdicts import (
    DEDUP_FORMAT,
    DedupMode,
    SignJob,
    signatures_dir,
    verdicts_path,
)
from warcdeboil.errors import ConfigError, WorkDirError
from warcdeboil.output.formats import OutputFormat
from warcdeboil.output.provenance import run_settings
from warcdeboil.output.relink import links_name, relink
from warcdeboil.site.clean import Mode
from warcdeboil.site.fit import FitParams, fit_site, group_by_site
from warcdeboil.site.index import INDEX_FORMAT, iter_partition
from warcdeboil.site.pagestore import PAGE_STORE_FORMAT, page_store_path
from warcdeboil.site.profiles import ProfileWriter, profile_path
from warcdeboil.site.sitekey import SiteKeyMode
from warcdeboil.warc.compression import Codec
from warcdeboil.warc.reader import Span
from warcdeboil.warc.tally import Tally
from warcdeboil.warc.writer import remove_parts

from .apply import ApplyJob, apply_file
from .excluded import excluded_parts, gather_excluded, remove_excluded_parts
from .madewith import (
    NO_SELECTION,
    RunRecord,
    check_resumable,
    made_with,
    selection_key,
    side_path,
    wanted,
)
from .meter import input_bytes
from .options import Options, Progress
from .plan import (
    PlannedOutput,
    check_writable,
    discover_local,
    local_output_dir,
    output_name,
    plan_outputs,
)
from .pool import run_jobs
from .scan import ScanJob, ScanSpec, scan_file
from .selection import SiteFilter, read_selection, selected_files
from .signals import Interrupted, held
from .summary import FitStats, RunSummary, total_tally

__all__ = [
    "FitStats",
    "Options",
    "Progress",
    "RunSummary",
    "apply_profiles",
    "build_index",
    "clean",
    "discover_inputs",
    "fit_profiles",
    "output_name",
    "output_path",
]

log = logging.getLogger(__name__)

J = TypeVar("J")
StrPath = str | os.PathLike[str]
"""A path as the public functions take it: ``str`` or any path-like object."""

PROFILES_META = "profiles.json"
RUN_META = "run.json"  # what clean says of its run, for a report made later


# -- inputs and outputs ---------------------------------------------------------------------


def discover_inputs(
    paths: Iterable[str | os.PathLike[str]], exclude: Path | None = None
) -> list[tuple[Path, Path]]:
    """Archive files named or found (recursively) under the given paths, each file once.

    Returns (file, name relative to the output directory) pairs in a stable order; nothing under
    ``exclude`` (the output directory) is taken from a directory's search.
    """
    return discover_local(paths, exclude)


def output_path(out_dir: Path, rel: Path, fmt: OutputFormat, codec: Codec) -> Path:
    """Where the output of one input goes (see :func:`.plan.output_name`)."""
    return out_dir / output_name(rel.as_posix(), fmt, codec)


# -- the stages -----------------------------------------------------------------------------


def _manifest(
    inputs: Sequence[Path], options: Options, spans: Sequence[Sequence[Span]] | None = None
) -> dict[str, Any]:
    """What an index depends on: the inputs as they are now (and the records chosen of them),
    and the options that shape it."""
    files = []
    for path in inputs:
        try:
            stat = path.stat()
            files.append([str(path), stat.st_size, stat.st_mtime_ns])
        except OSError:
            files.append([str(path), -1, -1])
    limits = options.limits
    return {"format": INDEX_FORMAT, "page_store": PAGE_STORE_FORMAT,
            "inputs": files, "partitions": options.partitions,
            "site_key": options.site_key.value,
            "limits": [limits.max_bytes, limits.max_tags, limits.max_depth],
            "structure": options.structure, "digests": options.payload_digest,
            "spans": None if spans is None else hashlib.sha1(
                json.dumps([list(map(list, s)) for s in spans]).encode()).hexdigest()}


def index_is_current(
    inputs: Sequence[Path], work_dir: Path, options: Options,
    spans: Sequence[Sequence[Span]] | None = None,
) -> bool:
    """True when ``work_dir`` holds a finished index of exactly these inputs and options."""
    try:
        meta = json.loads((work_dir / "index.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    stores = all(page_store_path(work_dir / "pages", i).exists() for i in range(len(inputs)))
    wanted = _manifest(inputs, options, spans)
    manifest = meta.get("manifest")
    if isinstance(manifest, dict) and manifest.get("digests") in _DIGESTS_SERVE[
            wanted["digests"]]:
        wanted["digests"] = manifest["digests"]  # e.g. SHA-1s serve a run that compares only
    if isinstance(manifest, dict) and manifest.get("structure") is True:
        # Pages with structure marks serve a run that needs none: its outputs read them
        # without (page.dom.without_structure), and the fit never reads the marks.
        wanted["structure"] = True
    return bool(manifest == wanted and stores)


# The pages' digests (the index manifest's "digests") that serve a run wanting each kind.
_DIGESTS_SERVE: dict[str, tuple[str, ...]] = {
    "": ("", "xxh3", "sha1"), "xxh3": ("xxh3", "sha1"), "sha1": ("sha1",)}


def build_index(
    inputs: Sequence[StrPath], work_dir: StrPath, options: Options,
    progress: Progress | None = None, *, spans: Sequence[Sequence[Span]] | None = None,
) -> list[Tally]:
    """Pass 1: scan every input and write the sorted runs of the index under ``work_dir``.

    With ``spans`` (one sequence per input), only the records at those (offset, length) are read.
    Returns one tally per input, in order.
    """
    paths, work_dir = [Path(path) for path in inputs], Path(work_dir)
    index_dir = work_dir / "index"
    if index_dir.exists():
        shutil.rmtree(index_dir)
    index_dir.mkdir(parents=True)
    pages_dir = work_dir / "pages"
    if pages_dir.exists():
        shutil.rmtree(pages_dir)
    (work_dir / "index.json").unlink(missing_ok=True)
    jobs = [
        ScanJob(
            ScanSpec(str(path), i, options.site_key, options.limits, options.fail_fast,
                     options.structure, spans[i] if spans is not None else None,
                     digest=options.payload_digest),
            str(index_dir), str(page_store_path(pages_dir, i)), options.partitions,
            options.run_bytes,
        )
        for i, path in enumerate(paths)
    ]

    def done(_: Tally) -> None:
        if progress is not None:
            progress("scan", 1, 0, len(jobs), 0, size)

    size = _size(jobs, progress, lambda job: (job.spec.path, job.spec.spans))
    tallies = run_jobs(
        scan_file, jobs, options.worker_count, done, _records("scan", len(jobs), size, progress),
        stage="scan", name=lambda job: f"{job.spec.path} (work directory {work_dir})",
    )
    # Written last: its presence says the index is complete (what --resume relies on).
    _write_json(work_dir / "index.json", {
        "inputs": [str(p) for p in paths],
        "partitions": options.partitions,
        "site_key": options.site_key.value,
        "pages_indexed": total_tally(tallies).indexed,
        "manifest": _manifest(paths, options, spans),
        "tallies": [t.to_state() for t in tallies],  # a resumed run's summary reports them
    })
    return tallies


def index_tallies(work_dir: Path) -> list[Tally]:
    """The scan's tallies of a finished index (none from an index written before they were)."""
    meta = _read_json(work_dir / "index.json", "no index here: run `warcdeboil index` first")
    return [Tally.from_state(state) for state in meta.get("tallies", [])]


@dataclass(frozen=True)
class _FitJob:
    index_dir: str
    profiles_dir: str
    partition: int
    params: FitParams


def _records(
    stage: str, total: int, size: int, progress: Progress | None
) -> Callable[[int, int], None] | None:
    if progress is None:
        return None
    return lambda count, nbytes: progress(stage, 0, count, total, nbytes, size)


def _size(jobs: Sequence[J], progress: Progress | None,
          where: Callable[[J], tuple[str, Sequence[Span] | None]]) -> int:
    """The bytes a stage's jobs read in all (a stat per input; not done without progress)."""
    if progress is None:
        return 0
    return sum(input_bytes(*where(job)) for job in jobs)


def _fit_partition(job: _FitJob, report: Callable[[int], None] | None = None) -> FitStats:
    stats = FitStats()
    with ProfileWriter(profile_path(Path(job.profiles_dir), job.partition)) as writer:
        entries = iter_partition(Path(job.index_dir), job.partition)
        for site, pages in group_by_site(entries):
            profile = fit_site(site, pages, job.params)
            stats.sites += 1
            stats.pages += profile.pages
            if profile.useful:
                writer.add(profile)
                stats.sites_fitted += 1
                stats.template_hashes += len(profile.template)
                stats.repeated_blocks += len(profile.repeated)
                stats.template_slots += len(profile.template_slots)
    return stats


def fit_profiles(
    work_dir: StrPath, profiles_dir: StrPath, options: Options, progress: Progress | None = None
) -> FitStats:
    """Fit every site of the index in ``work_dir``; write profiles to ``profiles_dir``."""
    work_dir, profiles_dir = Path(work_dir), Path(profiles_dir)
    meta = _read_json(work_dir / "index.json", "no index here: run `warcdeboil index` first")
    partitions = int(meta["partitions"])
    profiles_dir.mkdir(parents=True, exist_ok=True)
    jobs = [
        _FitJob(str(work_dir / "index"), str(profiles_dir), p, options.fit)
        for p in range(partitions)
    ]
    total = FitStats()

    def done(stats: FitStats) -> None:
        total.merge(stats)
        if progress is not None:
            progress("fit", 1, stats.sites, len(jobs), 0, 0)

    run_jobs(_fit_partition, jobs, options.worker_count, done, stage="fit",
              name=lambda job: f"partition {job.partition} of {job.index_dir}")
    _write_json(profiles_dir / PROFILES_META, {
        "partitions": partitions,
        "site_key": meta["site_key"],
        "sites": total.sites,
        "sites_fitted": total.sites_fitted,
        "pages": total.pages,
        "template_hashes": total.template_hashes,
        "max_iou": options.fit.max_iou,
        "min_occurrence": options.fit.min_occurrence,
        "near_duplicate": options.fit.near_duplicate,
        "repeated_share": options.fit.repeated_share,
        "repeated_min_pages": options.fit.repeated_min_pages,
        "repeated_blocks": total.repeated_blocks,
        "template_slots": total.template_slots,
    })
    return total


def profile_stats(profiles_dir: Path) -> FitStats:
    """What the fit that wrote ``profiles_dir`` counted."""
    meta = _read_json(profiles_dir / PROFILES_META, "not a profiles directory: run `fit`")
    return FitStats(*(int(meta.get(name, 0)) for name in (
        "sites", "sites_fitted", "pages", "template_hashes", "repeated_blocks", "template_slots",
    )))


def duplicate_jobs(work_dir: Path, profiles_dir: Path, inputs: int) -> list[SignJob] | None:
    """The duplicate stage's signing jobs, one per input indexed in ``work_dir``, its earlier
    verdicts removed; None when those verdicts were made from this very index and these
    profiles (:func:`find_duplicates` then reuses them)."""
    if _reusable_verdicts(work_dir, profiles_dir, inputs) is not None:
        return None
    return _signing_jobs(work_dir, profiles_dir, inputs)


def _signing_jobs(work_dir: Path, profiles_dir: Path, inputs: int) -> list[SignJob]:
    """The duplicate stage's signing jobs, its earlier verdicts removed; each also keeps what
    the pages' templates remove, for pass 2 (:mod:`warcdeboil.dedup.doomed`: pass 2 reads the
    profiles with the partitions and site key of their directory, as the stage does)."""
    dedup_dir = work_dir / "dedup"
    if dedup_dir.exists():  # stale verdicts must never reach pass 2
        shutil.rmtree(dedup_dir)
    return _stage_jobs(work_dir, profiles_dir, inputs)


def _stage_jobs(work_dir: Path, profiles_dir: Path, inputs: int) -> list[SignJob]:
    """The duplicate stage's jobs, one per input: what to sign, and where the stage reads
    pages again (:func:`warcdeboil.dedup.stage.decide`)."""
    dedup_dir = work_dir / "dedup"
    profiles = _read_json(profiles_dir / PROFILES_META, "not a profiles directory: run `fit`")
    return [
        SignJob(str(page_store_path(work_dir / "pages", i)), str(signatures_dir(dedup_dir)), i,
                str(profiles_dir), int(profiles["partitions"]), SiteKeyMode(profiles["site_key"]),
                str(doomed_path(dedup_dir, i)))
        for i in range(inputs)
    ]


def _dedup_key(work_dir: Path, profiles_dir: Path, inputs: int) -> str:
    """What the duplicate stage's verdicts were made from: the index, the profiles, the
    stage's format and the number of inputs."""
    return hashlib.sha1(b"\0".join([
        (work_dir / "index.json").read_bytes(), (profiles_dir / PROFILES_META).read_bytes(),
        f"{DEDUP_FORMAT} {inputs}".encode()])).hexdigest()


def _reusable_verdicts(work_dir: Path, profiles_dir: Path, inputs: int) -> dict[str, int] | None:
    """The counts of the verdicts in ``work_dir`` when they can be reused, else None."""
    try:
        done = json.loads((work_dir / "dedup" / "dedup.json").read_text(encoding="utf-8"))
        if done.get("key") == _dedup_key(work_dir, profiles_dir, inputs):
            return dict(done["counts"])
    except (OSError, ValueError, KeyError):
        pass
    return None


def find_duplicates(
    work_dir: Path, profiles_dir: Path, inputs: int, options: Options,
    progress: Progress | None = None, *, signed: bool = False,
) -> dict[str, int]:
    """The duplicate stage (:mod:`warcdeboil.dedup.stage`) over the page stores of the ``inputs``
    inputs indexed in ``work_dir``, with the profiles in ``profiles_dir``: each input's verdicts in
    ``work_dir/dedup``, for pass 2. Verdicts of an earlier run are reused only when made from this
    very index and these profiles (else they are redone). What the stage found. ``signed``: every
    input was signed already, the jobs of :func:`duplicate_jobs` done by the language-model stage's
    walk of the page stores (:func:`warcdeboil.lm.stage.prepare_lm`).

    Both steps run in worker processes (even with one worker): this process never imports
    numpy nor keeps what the stage allocated, so pass 2 (here, or in workers forked from here)
    is no larger than without the stage."""
    dedup_dir = work_dir / "dedup"
    meta_path = dedup_dir / "dedup.json"
    jobs: list[SignJob] = []
    if not signed:
        reused = _reusable_verdicts(work_dir, profiles_dir, inputs)
        if reused is not None:
            log.info("%s: reusing the duplicate verdicts", dedup_dir)
            return reused
        jobs = _signing_jobs(work_dir, profiles_dir, inputs)
    key = _dedup_key(work_dir, profiles_dir, inputs)

    def one_signed(_: int) -> None:
        if progress is not None:
            progress("dedup", 1, 0, len(jobs), 0, 0)

    if options.worker_count > 1 and len(jobs) > 1:
        run_jobs(_sign, jobs, options.worker_count, one_signed,
                  _records("dedup", len(jobs), 0, progress), stage="dedup",
                  name=lambda job: job.page_store)
        jobs = []  # signed: the one job below only decides

    def decided(_: dict[str, int]) -> None:
        if progress is not None and jobs:
            progress("dedup", len(jobs), 0, inputs, 0, 0)

    # One worker process (its start and its numpy import paid once) signs what is left, then
    # decides (reading again the pages that need a second look).
    every = _stage_jobs(work_dir, profiles_dir, inputs)
    (counts,) = run_jobs(_decide, [(str(dedup_dir), inputs, jobs, every)], 1, decided,
                          _records("dedup", inputs, 0, progress), stage="dedup",
                          name=lambda job: job[0], elsewhere=True)
    # Written last: its presence says every side file is complete.
    _write_json(meta_path, {"key": key, "parts": inputs, "counts": counts})
    return counts


def learn_url_rules(work_dir: Path, options: Options) -> dict[str, Any]:
    """Learn the URL rules of the run in ``work_dir`` (its duplicate stage done) in a worker
    process (numpy stays out of this one), and write them to ``options.url_rules``
    atomically; the summary's ``url_rules``: where they went, sites and rules learned."""
    assert options.url_rules is not None
    from warcdeboil.urlrules.run import (  # URL rules: only runs that learn them
        rules_path,
        write_rules,
    )

    (counts,) = run_jobs(_learn_rules, [(str(work_dir), options.site_key)], 1, lambda _: None,
                          None, stage="dedup", name=lambda job: job[0], elsewhere=True)
    write_rules(rules_path(work_dir).read_text(encoding="utf-8"), options.url_rules)
    return {"path": os.fspath(options.url_rules), **counts}


def _learn_rules(job: tuple[str, SiteKeyMode],
                 report: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    from warcdeboil.urlrules.run import learn_run

    return learn_run(Path(job[0]), job[1])


def _sign(job: SignJob, report: Callable[[int, int], None] | None = None) -> int:
    from warcdeboil.dedup.stage import sign_file  # numpy and the dedup package: in the worker only

    return sign_file(job, report)


def _decide(job: tuple[str, int, list[SignJob], list[SignJob]],
            report: Callable[[int, int], None] | None = None) -> dict[str, int]:
    """Sign the inputs of ``job`` not signed yet (``job[2]``), then find the groups of all
    ``job[1]`` (``job[3]``: every input's job, for the pages read again)."""
    from warcdeboil.dedup.stage import decide, sign_file

    for sign in job[2]:
        sign_file(sign, report)
    return decide(Path(job[0]), job[1], pages=job[3]).to_dict()


def _fitted_alike(profiles_dir: Path, options: Options) -> bool:
    """Whether ``profiles_dir`` holds finished profiles fitted with the parameters of
    ``options`` (a resumed run with other ones fits again)."""
    try:
        meta = json.loads((profiles_dir / PROFILES_META).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return (isinstance(meta, dict) and all(f.name in meta for f in fields(FitParams))
            and _fitted_with(meta, options.fit) == options.fit)


def _fitted_with(meta: dict[str, Any], default: FitParams) -> FitParams:
    """The parameters profiles were fitted with, as their directory's meta says."""
    return FitParams(
        float(meta.get("max_iou", default.max_iou)),
        int(meta.get("min_occurrence", default.min_occurrence)),
        float(meta.get("near_duplicate", default.near_duplicate)),
        float(meta.get("repeated_share", default.repeated_share)),
        int(meta.get("repeated_min_pages", default.repeated_min_pages)),
    )


def apply_profiles(
    inputs: Sequence[tuple[StrPath, StrPath]],
    out_dir: StrPath,
    profiles_dir: StrPath | None,
    options: Options,
    progress: Progress | None = None,
    *,
    page_stores: Sequence[StrPath] | None = None,
    spans: Sequence[Sequence[Span]] | None = None,
    links_dir: StrPath | None = None,
    written: Sequence[tuple[StrPath, StrPath]] = (),
    verdicts: Sequence[StrPath] | None = None,
    doomed: Sequence[StrPath] | None = None,
    cleaned_stores: Sequence[StrPath] | None = None,
    scores_stores: Sequence[StrPath] | None = None,
    url_rules: StrPath | None = None,
    record: RunRecord | None = None,
) -> list[Tally]:
    """Pass 2: clean every input with the profiles in ``profiles_dir`` into ``out_dir``.

    ``page_stores`` (one per input, from :func:`build_index` over the same inputs) spare text
    outputs a second parse; without them every page is analysed again here. ``cleaned_stores``
    (one per input, with ``page_stores``: the language-model stage's) spare them the cleaning,
    and ``scores_stores`` (its perplexity of each page) the scoring.
    With ``spans`` (one sequence per input), only the records at those (offset, length) are
    read.

    ``verdicts`` (one per input, from :func:`find_duplicates`): what ``options.dedup`` does
    with each page's duplicates; without them, nothing. ``doomed`` (one per input, the
    stage's :mod:`warcdeboil.dedup.doomed` side files): what each page's template removes, where the
    stage found it (a file that is not there: pass 2 finds it). ``url_rules``: a rules file whose
    canonical form of each page's URL JSONL says (``url_canonical``).

    WARC output: revisits are then pointed at pages cleaned in any output of ``inputs`` and
    ``written`` (inputs whose output an earlier run wrote, --resume) by
    :func:`warcdeboil.output.relink.relink`, from the links files in ``links_dir`` (a temporary
    directory when None).

    ``inputs`` are (file, name relative to the output directory) pairs, as
    :func:`discover_inputs` gives them. Each output is written with the record of the options
    it is made with beside it (:mod:`.madewith`): ``record``, else what this call makes it with.
    """
    found = [(Path(path), Path(rel)) for path, rel in inputs]
    done_before = [(Path(path), Path(rel)) for path, rel in written]
    profiles_dir = Path(profiles_dir) if profiles_dir is not None else None
    links_dir = Path(links_dir) if links_dir is not None else None
    if options.format is OutputFormat.WARC and links_dir is None:
        links = Path(tempfile.mkdtemp(prefix="warcdeboil-links-"))
        try:
            return apply_profiles(found, out_dir, profiles_dir, options, progress,
                                  page_stores=page_stores, spans=spans, links_dir=links,
                                  written=done_before, verdicts=verdicts, doomed=doomed,
                                  url_rules=url_rules, record=record)
        finally:
            with held():
                shutil.rmtree(links, ignore_errors=True)
    partitions = options.partitions
    site_key = options.site_key
    fitted: FitParams | None = None
    if profiles_dir is not None:
        meta = _read_json(profiles_dir / PROFILES_META, "not a profiles directory: run `fit`")
        partitions = int(meta["partitions"])
        site_key = SiteKeyMode(meta["site_key"])
        fitted = _fitted_with(meta, options.fit)
    settings = run_settings(options.format, options.effective_mode, site_key, fitted,
                            options.limits)
    out_dir = local_output_dir(out_dir)
    planned = plan_outputs(found, out_dir, options.format, options.compress)
    if record is None:
        record = made_with(
            options.format, options.effective_mode, site_key, fitted, options.limits,
            options.effective_dedup if verdicts is not None else DedupMode.OFF,
            url_rules is not None and verdicts is not None, options.lm,
            options.zstd_dictionary, NO_SELECTION if spans is None else selection_key(
                (plan.rel.as_posix(), chosen) for plan, chosen in zip(planned, spans,
                                                                         strict=True)),
            options.redact_pii, language_model=options.language_model, quality=options.quality,
            drop_headline=options.drop_headline, favor=options.favor)
    check_writable(out_dir)
    jobs = []
    linked = []  # (output name, output, links base) of every output relink looks at
    if options.format is OutputFormat.WARC and links_dir is not None:
        everything = [*planned,
                      *plan_outputs(done_before, out_dir, options.format, options.compress)]
        linked = _linked(everything, out_dir, links_dir)
    # --excluded: each job lists its own pages left out, put together once all are written.
    listed = options.quality.excluded if options.quality is not None else None
    parts_dir, parts = excluded_parts(len(planned)) if listed is not None else (None, None)
    for i, plan in enumerate(planned):
        jobs.append(ApplyJob(
            str(plan.path), str(plan.output), options.format,
            plan.codec, str(profiles_dir) if profiles_dir else None, partitions, site_key,
            options.limits, str(page_stores[i]) if page_stores is not None else None,
            options.zstd_dictionary, options.fail_fast, options.effective_mode,
            spans[i] if spans is not None else None, settings=settings, lm=options.lm,
            links=str(linked[i][2]) if linked else None,
            verdicts=str(verdicts[i]) if verdicts is not None else None,
            dedup=options.effective_dedup if verdicts is not None else DedupMode.OFF,
            doomed=str(doomed[i]) if doomed is not None else None,
            cleaned_store=str(cleaned_stores[i]) if cleaned_stores is not None else None,
            scores_store=str(scores_stores[i]) if scores_stores is not None else None,
            url_rules=str(url_rules) if url_rules is not None else None,
            language_model=options.language_model,
            made_with=record.side_bytes(plan.codec), redact_pii=options.redact_pii,
            quality=options.quality, excluded=parts[i] if parts is not None else None,
            drop_headline=options.drop_headline, favor=options.favor,
        ))

    def done(_: Tally) -> None:
        if progress is not None:
            progress("write", 1, 0, len(jobs), 0, size)

    size = _size(jobs, progress, lambda job: (job.path, job.spans))
    try:
        tallies = run_jobs(
            apply_file, jobs, options.worker_count, done,
            _records("write", len(jobs), size, progress),
            stage="write", name=lambda job: job.output,
        )
        if linked:
            assert links_dir is not None
            relink(linked, links_dir / "relink.sqlite")
        if listed is not None and parts is not None:
            gather_excluded(listed, [part for part, tally in zip(parts, tallies, strict=True)
                                     if tally.output])
        return tallies
    except BaseException as exc:
        # Workers that were ended had no chance to remove their partial outputs.
        for job in jobs:
            remove_parts(Path(job.output))
            remove_parts(side_path(Path(job.output)))
        if isinstance(exc, Interrupted):
            exc.finished = sum(Path(job.output).exists() for job in jobs)
            exc.outputs = len(jobs)
        raise
    finally:
        if parts_dir is not None:
            remove_excluded_parts(parts_dir)


def clean(
    inputs: Sequence[str | os.PathLike[str]],
    out_dir: str | os.PathLike[str],
    options: Options | None = None,
    *,
    work_dir: str | os.PathLike[str] | None = None,
    keep_work_dir: bool = False,
    resume: bool = False,
    progress: Progress | None = None,
    select: tuple[str, SiteFilter] | None = None,
    report: Callable[[Path], None] | None = None,
    profiles_dir: StrPath | None = None,
) -> RunSummary:
    """Index, fit and apply in one go: the whole job of ``warcdeboil clean``.

    With ``profiles_dir`` (the profiles of an earlier fit: :func:`fit_profiles`), no fit is
    run: the inputs are cleaned with those profiles, after the stages ``options`` ask for
    (duplicates, the run's language model), which read pass 1's page stores of these inputs.
    ``warcdeboil apply`` runs so when such a stage is on, so that its outputs have the fields
    ``clean``'s have for the same options.

    With ``resume``, inputs whose output is already complete are not written again, and a
    finished index and finished profiles in ``work_dir`` are reused when made with these
    options. Outputs are atomic, so an output under its final name is complete; it is kept only
    when made with the options of this run (recorded beside it, :mod:`.madewith`), else the run
    is refused (:class:`~warcdeboil.errors.PlanError`) before any record is read.

    With ``select`` (an index file and the sites to take from it), only the records the index
    names are read, each by its byte range; ``inputs`` is then the one directory its file names
    are relative to.
    ``report(work_dir)`` is called once the outputs are written, before a temporary work
    directory goes; the run's mode, format and summary are in its ``run.json``.
    """
    options = options or Options()
    # The plan, before the first record is read: inputs, outputs, and that they can be written.
    out = local_output_dir(out_dir)
    found, spans = _selected(inputs, select) if select is not None else (
        discover_inputs(inputs, exclude=out), None)
    planned = plan_outputs(found, out, options.format, options.compress)
    if options.url_rules is not None:
        from warcdeboil.urlrules.run import check_rules_path

        check_rules_path(options.url_rules, [str(p) for p, _ in found],
                         [str(plan.output) for plan in planned], str(out))
    record = wanted(options, NO_SELECTION if spans is None else selection_key(
        (rel.as_posix(), chosen) for (_, rel), chosen in zip(found, spans, strict=True)))
    if resume:  # an output is kept only when made with what this run would make it with
        check_resumable((str(plan.output), record.output(plan.codec))
                        for plan in planned if plan.output.exists())
    check_writable(out)
    paths = [p for p, _ in found]
    span_of = dict(zip(paths, spans, strict=True)) if spans is not None else None
    summary = RunSummary(inputs=len(found)).asked(options)
    given = Path(profiles_dir) if profiles_dir is not None else None
    if given is not None:
        summary.fit = profile_stats(given)  # before any record is read: they are profiles
    todo = found
    if resume:
        todo = [(plan.path, plan.rel) for plan in planned if not plan.output.exists()]
        summary.resumed = len(found) - len(todo)
        # Every output is there; the run is done unless it was asked for a rules file it has
        # not written yet (the earlier run ran without --url-rules, or stopped before them).
        if not todo and (options.url_rules is None or Path(options.url_rules).exists()):
            # The earlier run may have ended between its last output and pointing revisits
            # across them: relink again (an output already relinked is left as it is).
            links = Path(work_dir) / "links" if work_dir is not None else None
            if options.format is OutputFormat.WARC and links is not None and links.is_dir():
                relink(_linked(planned, out, links), links / "relink.sqlite")
            return summary
    with _work_directory(work_dir, keep_work_dir) as work:
        profiles = given if given is not None else work / "profiles"
        reuse = resume and index_is_current(paths, work, options, spans)
        if reuse:
            log.info("%s: reusing the finished index", work)
            summary.scan_files = index_tallies(work)
        else:
            summary.scan_files = build_index(paths, work, options, progress, spans=spans)
        if given is None and reuse and _fitted_alike(profiles, options):
            log.info("%s: reusing the finished profiles", profiles)
            summary.fit = profile_stats(profiles)
        elif given is None:  # else fitted already, and used as they are
            (profiles / PROFILES_META).unlink(missing_ok=True)
            summary.fit = fit_profiles(work, profiles, options, progress)
        stores = {p: page_store_path(work / "pages", i) for i, p in enumerate(paths)}
        verdicts = None
        doomed = None
        rules = None
        cleaned = scored = None
        signed = False
        if todo and options.lm is not None and (options.lm.auto or options.lm.bucketed):
            # One walk of the page stores for both stages: the language-model stage signs the
            # pages for the duplicate stage as it cleans them (their template cuts found once).
            sign = (duplicate_jobs(work, profiles, len(paths)) if options.dedup_stage
                    else None)
            sign = sign if sign and _same_sites(sign[0], options) else None
            options = _with_run_models(options, [stores[p] for p in paths], work, profiles,
                                       sign)
            signed = sign is not None
            from warcdeboil.lm.stage import cleaned_store_path, scores_path

            ids = {p: i for i, p in enumerate(paths)}
            cleaned = [cleaned_store_path(work, ids[p]) for p, _ in todo]
            if options.lm is not None and (options.lm.bucketed or (
                    options.lm.auto and not options.lm.needs_lines)):
                scored = [scores_path(work, ids[p]) for p, _ in todo]
        if options.dedup_stage:
            if todo and options.effective_mode is Mode.CONTENT:
                # Pass 2's content model loads numpy (content._weighted_sum): loaded before the
                # stage's worker is forked, it is loaded once, not once in each process.
                import numpy  # noqa: F401
            summary.dedup = find_duplicates(work, profiles, len(paths), options, progress,
                                            signed=signed)
            if options.effective_dedup is not DedupMode.OFF:
                sides = {p: verdicts_path(work / "dedup", i) for i, p in enumerate(paths)}
                verdicts = [sides[p] for p, _ in todo]
            # Pass 2 cleans the pages as stored: what the stage found their templates remove
            # (not where it takes their structure marks out: the cuts are found again).
            if cleaned is None and options.output_structure:
                ids = {p: i for i, p in enumerate(paths)}
                doomed = [doomed_path(work / "dedup", ids[p]) for p, _ in todo]
        if options.url_rules is not None:
            from warcdeboil.urlrules.run import rules_path

            rules = rules_path(work)
            summary.url_rules = learn_url_rules(work, options)
        if todo:
            summary.apply_files = apply_profiles(
                todo, out, profiles, options, progress,
                page_stores=[stores[p] for p, _ in todo],
                cleaned_stores=cleaned, scores_stores=scored,
                spans=[span_of[p] for p, _ in todo] if span_of is not None else None,
                links_dir=work / "links", written=_not_in(found, todo), verdicts=verdicts,
                doomed=doomed,
                url_rules=rules if verdicts is not None else None,
                # given profiles were fitted with their own parameters: apply_profiles reads
                # them from the profiles, as `apply` without the stages does
                record=record if given is None else None,
            )
        _write_json(work / RUN_META, {"mode": Mode(options.effective_mode).value,
                                      "format": OutputFormat(options.format).value,
                                      "favor": options.favor.value,
                                      "drop_headline": options.drop_headline,
                                      "summary": summary.to_dict()})
        if report is not None:
            report(work)
    return summary


def _linked(plans: Sequence[PlannedOutput], out_dir: Path,
            links_dir: Path) -> list[tuple[str, Path, Path]]:
    """(output name, output, links base) of each planned WARC output: what relink reads."""
    names = [plan.output.relative_to(out_dir).as_posix() for plan in plans]
    return [(name, plan.output, links_dir / links_name(name))
            for name, plan in zip(names, plans, strict=True)]


def _with_run_models(options: Options, stores: list[Path], work: Path, profiles: Path,
                     sign: list[SignJob] | None = None) -> Options:
    """The options with the run's own language models (--lm auto) and each language's
    perplexity percentiles (buckets), worked out from every page store before pass 2;
    ``sign``: the duplicate stage's signing jobs, done in the same walk."""
    from warcdeboil.lm.stage import prepare_lm

    assert options.lm is not None
    settings, stats = prepare_lm(options.lm, stores, work, profiles, options.partitions,
                                 options.site_key, options.effective_mode, options.worker_count,
                                 run_jobs, sign,
                                 blocks=options.format is OutputFormat.MARKDOWN,
                                 structure=options.output_structure,
                                 drop_headline=options.drop_headline, favor=options.favor)
    log.info("perplexity: pages by language %s", stats.pages)
    return replace(options, lm=settings)


def _same_sites(job: SignJob, options: Options) -> bool:
    """Whether the duplicate stage reads the profiles as the language-model stage does (the
    same partitions and site key), so that one walk can serve both."""
    return job.partitions == options.partitions and job.site_key is options.site_key


def _not_in(
    found: Sequence[tuple[Path, Path]], todo: Sequence[tuple[Path, Path]]
) -> list[tuple[Path, Path]]:
    """The inputs of ``found`` that are not to be written (--resume: their output exists)."""
    todo_set = set(todo)
    return [item for item in found if item not in todo_set]


def _selected(
    inputs: Sequence[str | os.PathLike[str]], select: tuple[str, SiteFilter]
) -> tuple[list[tuple[Path, Path]], list[list[Span]]]:
    """The inputs an index names, relative to the one input directory, with their records."""
    if len(inputs) != 1:
        raise ConfigError(
            "--select-index takes one input: the directory its file names are relative to "
            f"(got {len(inputs)})"
        )
    index, sites = select
    files = selected_files(os.fspath(inputs[0]), read_selection(index, sites))
    return [(Path(location), Path(rel)) for location, rel, _ in files], [
        spans for _, _, spans in files]


class _work_directory:  # noqa: N801 - used like contextlib helpers
    """The given work directory, or a temporary one removed at the end unless kept."""

    def __init__(self, path: str | os.PathLike[str] | None, keep: bool) -> None:
        self._given = Path(path) if path is not None else None
        self._keep = keep or path is not None
        self._path: Path | None = None

    def __enter__(self) -> Path:
        if self._given is not None:
            self._given.mkdir(parents=True, exist_ok=True)
            self._path = self._given
        else:
            self._path = Path(tempfile.mkdtemp(prefix="warcdeboil-"))
        return self._path

    def __exit__(self, _type: object, exc: BaseException | None, _tb: object) -> None:
        if isinstance(exc, Interrupted) and self._path is not None:
            exc.work_dir = str(self._path) if self._keep else None
            exc.work_dir_removed = not self._keep
        if self._path is not None and not self._keep:
            with held():  # a signal now waits until the directory is gone
                shutil.rmtree(self._path, ignore_errors=True)
        elif self._path is not None and self._given is None:
            log.info("work directory kept: %s", self._path)


def _write_json(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(path)


def _read_json(path: Path, hint: str) -> dict[str, Any]:
    try:
        return dict(json.loads(path.read_text(encoding="utf-8")))
    except FileNotFoundError as exc:
        raise WorkDirError(f"{path.parent}: {hint}") from exc
    except (OSError, ValueError) as exc:
        raise WorkDirError(f"{path}: unreadable ({exc})") from exc


