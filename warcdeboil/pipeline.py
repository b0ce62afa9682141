"""The local engine: index, fit and apply over many files with a pool of worker processes.

Stages can run one by one (``index`` → ``fit`` → ``apply``) or all at once (:func:`clean`). The work
directory holds the index runs and the profiles; its layout does not depend on the number of
workers, so results are byte-identical whatever ``workers`` is.
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import os
import shutil
import tempfile
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from .apply import ApplyJob, Mode, OutputFormat, apply_file, default_mode, needs_structure
from .compression import Codec, detect_codec
from .errors import ConfigError, WorkDirError
from .fit import FitParams, fit_site, group_by_site
from .index import DEFAULT_RUN_BYTES, INDEX_FORMAT, iter_partition
from .pages import PageLimits
from .pagestore import PAGE_STORE_FORMAT, page_store_path
from .profiles import ProfileWriter, profile_path
from .remote import ARCHIVE_SUFFIXES
from .scan import ScanJob, ScanSpec, scan_file
from .sitekey import SiteKeyMode
from .tally import Tally

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

# Index partitions: a fixed number, so the layout (and every result) is the same for any
# number of workers; enough to keep 2-64 cores busy in the fit.
DEFAULT_PARTITIONS = 64
PROFILES_META = "profiles.json"
RUN_META = "run.json"  # what clean says of its run, for a report made later

Progress = Callable[[str, int, int, int], None]
"""``progress(stage, done, items, total)``: stage is 'scan', 'fit' or 'write'; ``done`` jobs
(files, or partitions for the fit) finished out of ``total``, and ``items`` more records (scan,
write) or sites (fit) since the last call."""


@dataclass(frozen=True)
class Options:
    """Options shared by the stages."""

    format: OutputFormat = OutputFormat.WARC
    compress: Codec | None = None  # None: follow each input
    workers: int = 0  # 0: all cores
    site_key: SiteKeyMode = SiteKeyMode.HOST
    fit: FitParams = field(default_factory=FitParams)
    run_bytes: int = DEFAULT_RUN_BYTES
    partitions: int = DEFAULT_PARTITIONS
    limits: PageLimits = field(default_factory=PageLimits)
    zstd_dictionary: bool = False  # zstd output: train a dictionary on each input's records
    fail_fast: bool = False  # --on-error fail: the first bad record or input stops the run
    mode: Mode | None = None  # None: the format's default (see apply.default_mode)

    def __post_init__(self) -> None:
        if self.format is OutputFormat.WARC and self.mode is Mode.CONTENT:
            raise ConfigError(
                "--mode content writes text: use --format jsonl, text or markdown "
                "(WARC output keeps the HTML and removes the template only)"
            )

    @property
    def effective_mode(self) -> Mode:
        return self.mode if self.mode is not None else default_mode(self.format)

    @property
    def structure(self) -> bool:
        return needs_structure(self.format, self.effective_mode)

    @property
    def worker_count(self) -> int:
        return self.workers if self.workers > 0 else (os.cpu_count() or 1)


@dataclass
class FitStats:
    sites: int = 0
    sites_fitted: int = 0
    pages: int = 0
    template_hashes: int = 0
    repeated_blocks: int = 0
    template_slots: int = 0

    def merge(self, other: FitStats) -> None:
        self.sites += other.sites
        self.sites_fitted += other.sites_fitted
        self.pages += other.pages
        self.template_hashes += other.template_hashes
        self.repeated_blocks += other.repeated_blocks
        self.template_slots += other.template_slots


def _total(tallies: Iterable[Tally]) -> Tally:
    total = Tally()
    for tally in tallies:
        total.merge(tally)
    return total


@dataclass
class RunSummary:
    """What a run did, for the final report: per input, and in total."""

    inputs: int = 0
    scan_files: list[Tally] = field(default_factory=list)
    fit: FitStats = field(default_factory=FitStats)
    apply_files: list[Tally] = field(default_factory=list)
    resumed: int = 0  # inputs whose output was already complete (--resume)

    @property
    def scan(self) -> Tally:
        return _total(self.scan_files)

    @property
    def apply(self) -> Tally:
        return _total(self.apply_files)

    @property
    def files(self) -> list[Tally]:
        """Per input, the stage that saw every record: the rewrite when it read the archive
        (WARC output), else the scan."""
        by_path = {t.path: t for t in self.scan_files}
        by_path.update({t.path: t for t in self.apply_files if t.records})
        return [by_path[path] for path in sorted(by_path)]

    @property
    def problems(self) -> Counter[str]:
        return _total(self.files).problems

    @property
    def outputs(self) -> list[str]:
        return sorted(t.output for t in self.apply_files if t.output)

    def to_dict(self) -> dict[str, Any]:
        files = self.files
        total = _total(files)
        return {
            "inputs": self.inputs,
            "resumed": self.resumed,
            "records": total.records,
            "pages": total.cleaned,
            "carried": total.carried,
            "skipped": total.skipped,
            "pages_indexed": self.scan.indexed,
            "sites": self.fit.sites,
            "sites_fitted": self.fit.sites_fitted,
            "html_bytes_before": self.apply.html_bytes_before,
            "html_bytes_after": self.apply.html_bytes_after,
            "text_chars": self.apply.text_chars,
            "removed_subtrees": self.apply.removed_subtrees,
            "removed_slots": self.apply.removed_slots,
            "removed_blocks": self.apply.removed_blocks,
            "repeated_blocks": self.fit.repeated_blocks,
            "template_slots": self.fit.template_slots,
            "problems": dict(sorted(total.problems.items())),
            "files": [t.to_dict() for t in files],
            "outputs": self.outputs,
        }


# -- inputs and outputs ---------------------------------------------------------------------


def discover_inputs(paths: Iterable[str | os.PathLike[str]]) -> list[tuple[Path, Path]]:
    """Archive files named or found (recursively) under the given paths.

    Returns (file, name relative to the output directory) pairs in a stable order.
    """
    found: list[tuple[Path, Path]] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for child in sorted(path.rglob("*")):
                if child.is_file() and child.name.lower().endswith(ARCHIVE_SUFFIXES):
                    found.append((child, child.relative_to(path)))
        elif path.is_file():
            found.append((path, Path(path.name)))
        else:
            raise ConfigError(f"{path}: no such file or directory")
    if not found:
        raise ConfigError("no WARC or ARC files (.warc, .warc.gz, .warc.zst, .arc, .arc.gz) found")
    names = Counter(rel for _, rel in found)
    clashes = [str(rel) for rel, count in names.items() if count > 1]
    if clashes:
        raise ConfigError(f"two inputs would write the same output: {', '.join(clashes[:3])}")
    return found


def _strip_archive_suffix(name: str) -> str:
    lower = name.lower()
    for suffix in sorted(ARCHIVE_SUFFIXES, key=len, reverse=True):
        if lower.endswith(suffix):
            return name[: -len(suffix)]
    return name


def input_codec(path: Path) -> Codec:
    """The codec of an input (plain when it cannot be opened: reading it will say why)."""
    try:
        with open(path, "rb") as fh:
            return detect_codec(fh.read(8))
    except OSError:
        return Codec.NONE


def output_path(out_dir: Path, rel: Path, fmt: OutputFormat, codec: Codec) -> Path:
    """Where the output of one input goes: same base name, the format's suffix."""
    return out_dir / output_name(rel.as_posix(), fmt, codec)


def output_name(rel: str, fmt: OutputFormat, codec: Codec) -> str:
    """The output's name relative to the output directory (POSIX), for an input whose name
    relative to its input directory is ``rel``.

    >>> output_name("2024/a.warc.gz", OutputFormat.TEXT, Codec.GZIP)
    '2024/a.warc.wet.gz'
    """
    parent, _, name = rel.rpartition("/")
    base = _strip_archive_suffix(name)
    suffix = {
        OutputFormat.WARC: ".warc",
        OutputFormat.TEXT: ".warc.wet",
        OutputFormat.JSONL: ".jsonl",
        OutputFormat.MARKDOWN: ".md.jsonl",
    }[fmt]
    if codec is Codec.ZSTD and fmt in (OutputFormat.JSONL, OutputFormat.MARKDOWN):
        codec = Codec.GZIP  # JSONL is one gzip stream; zstd is for WARC records
    output = f"{base}{suffix}{codec.suffix}"
    return f"{parent}/{output}" if parent else output


# -- running jobs ---------------------------------------------------------------------------

T = TypeVar("T")
J = TypeVar("J")


def _run_jobs(
    func: Callable[..., T],
    jobs: Sequence[J],
    workers: int,
    on_done: Callable[[T], None],
    on_records: Callable[[int], None] | None = None,
) -> list[T]:
    """Run ``func(job, report)`` over ``jobs``; results in job order, whatever the completion
    order. ``report(n)`` calls from the workers reach ``on_records`` in this process."""
    results: list[T | None] = [None] * len(jobs)
    if workers <= 1 or len(jobs) <= 1:
        for i, job in enumerate(jobs):
            results[i] = func(job, on_records)
            on_done(results[i])  # type: ignore[arg-type]
        return results  # type: ignore[return-value]
    manager = multiprocessing.Manager() if on_records is not None else None
    queue = manager.Queue() if manager is not None else None
    drain = None
    if queue is not None and on_records is not None:
        drain = threading.Thread(target=_drain, args=(queue, on_records), daemon=True)
        drain.start()
    try:
        with ProcessPoolExecutor(max_workers=min(workers, len(jobs))) as pool:
            futures = {pool.submit(_call, func, job, queue): i for i, job in enumerate(jobs)}
            for future in as_completed(futures):
                result = future.result()
                results[futures[future]] = result
                on_done(result)
    finally:
        if queue is not None and drain is not None:
            queue.put(None)
            drain.join()
        if manager is not None:
            manager.shutdown()
    return results  # type: ignore[return-value]


def _call(func: Callable[..., T], job: Any, queue: Any) -> T:
    return func(job, queue.put if queue is not None else None)


def _drain(queue: Any, on_records: Callable[[int], None]) -> None:
    while (count := queue.get()) is not None:
        on_records(count)


# -- the stages -----------------------------------------------------------------------------


def _manifest(inputs: Sequence[Path], options: Options) -> dict[str, Any]:
    """What an index depends on: the inputs as they are now, and the options that shape it."""
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
            "structure": options.structure}


def index_is_current(inputs: Sequence[Path], work_dir: Path, options: Options) -> bool:
    """True when ``work_dir`` holds a finished index of exactly these inputs and options."""
    try:
        meta = json.loads((work_dir / "index.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    stores = all(page_store_path(work_dir / "pages", i).exists() for i in range(len(inputs)))
    return bool(meta.get("manifest") == _manifest(inputs, options) and stores)


def build_index(
    inputs: Sequence[Path], work_dir: Path, options: Options, progress: Progress | None = None
) -> list[Tally]:
    """Pass 1: scan every input and write the sorted runs of the index under ``work_dir``.

    Returns one tally per input, in order.
    """
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
                     options.structure),
            str(index_dir), str(page_store_path(pages_dir, i)), options.partitions,
            options.run_bytes,
        )
        for i, path in enumerate(inputs)
    ]

    def done(_: Tally) -> None:
        if progress is not None:
            progress("scan", 1, 0, len(jobs))

    tallies = _run_jobs(
        scan_file, jobs, options.worker_count, done, _records("scan", len(jobs), progress)
    )
    # Written last: its presence says the index is complete (what --resume relies on).
    _write_json(work_dir / "index.json", {
        "inputs": [str(p) for p in inputs],
        "partitions": options.partitions,
        "site_key": options.site_key.value,
        "pages_indexed": _total(tallies).indexed,
        "manifest": _manifest(inputs, options),
    })
    return tallies


@dataclass(frozen=True)
class _FitJob:
    index_dir: str
    profiles_dir: str
    partition: int
    params: FitParams


def _records(stage: str, total: int, progress: Progress | None) -> Callable[[int], None] | None:
    if progress is None:
        return None
    return lambda count: progress(stage, 0, count, total)


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
    work_dir: Path, profiles_dir: Path, options: Options, progress: Progress | None = None
) -> FitStats:
    """Fit every site of the index in ``work_dir``; write profiles to ``profiles_dir``."""
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
            progress("fit", 1, stats.sites, len(jobs))

    _run_jobs(_fit_partition, jobs, options.worker_count, done)
    _write_json(profiles_dir / PROFILES_META, {
        "partitions": partitions,
        "site_key": meta["site_key"],
        "sites": total.sites,
        "sites_fitted": total.sites_fitted,
        "max_iou": options.fit.max_iou,
        "min_occurrence": options.fit.min_occurrence,
        "near_duplicate": options.fit.near_duplicate,
        "repeated_share": options.fit.repeated_share,
        "repeated_min_pages": options.fit.repeated_min_pages,
        "repeated_blocks": total.repeated_blocks,
        "template_slots": total.template_slots,
    })
    return total


def apply_profiles(
    inputs: Sequence[tuple[Path, Path]],
    out_dir: Path,
    profiles_dir: Path | None,
    options: Options,
    progress: Progress | None = None,
    *,
    page_stores: Sequence[Path] | None = None,
) -> list[Tally]:
    """Pass 2: clean every input with the profiles in ``profiles_dir`` into ``out_dir``.

    ``page_stores`` (one per input, from :func:`build_index` over the same inputs) spare text
    outputs a second parse; without them every page is analysed again here.
    """
    partitions = options.partitions
    site_key = options.site_key
    if profiles_dir is not None:
        meta = _read_json(profiles_dir / PROFILES_META, "not a profiles directory: run `fit`")
        partitions = int(meta["partitions"])
        site_key = SiteKeyMode(meta["site_key"])
    jobs = []
    for i, (path, rel) in enumerate(inputs):
        codec = options.compress or input_codec(path)
        jobs.append(ApplyJob(
            str(path), str(output_path(out_dir, rel, options.format, codec)), options.format,
            codec, str(profiles_dir) if profiles_dir else None, partitions, site_key,
            options.limits, str(page_stores[i]) if page_stores is not None else None,
            options.zstd_dictionary, options.fail_fast, options.effective_mode,
        ))

    def done(_: Tally) -> None:
        if progress is not None:
            progress("write", 1, 0, len(jobs))

    return _run_jobs(
        apply_file, jobs, options.worker_count, done, _records("write", len(jobs), progress)
    )


def clean(
    inputs: Sequence[str | os.PathLike[str]],
    out_dir: str | os.PathLike[str],
    options: Options | None = None,
    *,
    work_dir: str | os.PathLike[str] | None = None,
    keep_work_dir: bool = False,
    resume: bool = False,
    progress: Progress | None = None,
    report: Callable[[Path], None] | None = None,
) -> RunSummary:
    """Index, fit and apply in one go: the whole job of ``warcdeboil clean``.

    With ``resume``, inputs whose output is already complete are not written again, and a
    finished index and finished profiles in ``work_dir`` are reused. Outputs are atomic, so an
    output under its final name is complete. ``report(work_dir)`` is called once the outputs are
    written, before a temporary work directory goes; the run's mode, format and summary are in
    its ``run.json``.
    """
    options = options or Options()
    found = discover_inputs(inputs)
    paths = [p for p, _ in found]
    summary = RunSummary(inputs=len(found))
    out = Path(out_dir)
    todo = found
    if resume:
        todo = [
            (p, rel) for p, rel in found
            if not output_path(out, rel, options.format, options.compress or input_codec(p))
            .exists()
        ]
        summary.resumed = len(found) - len(todo)
        if not todo:
            return summary
    with _work_directory(work_dir, keep_work_dir) as work:
        profiles = work / "profiles"
        reuse = resume and index_is_current(paths, work, options)
        if reuse:
            log.info("%s: reusing the finished index", work)
        else:
            summary.scan_files = build_index(paths, work, options, progress)
        if reuse and (profiles / PROFILES_META).exists():
            log.info("%s: reusing the finished profiles", profiles)
        else:
            (profiles / PROFILES_META).unlink(missing_ok=True)
            summary.fit = fit_profiles(work, profiles, options, progress)
        stores = {p: page_store_path(work / "pages", i) for i, p in enumerate(paths)}
        summary.apply_files = apply_profiles(
            todo, out, profiles, options, progress, page_stores=[stores[p] for p, _ in todo]
        )
        _write_json(work / RUN_META, {"mode": Mode(options.effective_mode).value,
                                      "format": OutputFormat(options.format).value,
                                      "summary": summary.to_dict()})
        if report is not None:
            report(work)
    return summary


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

    def __exit__(self, *_: object) -> None:
        if self._path is not None and not self._keep:
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


