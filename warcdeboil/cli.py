"""The ``warcdeboil`` command line: clean, and the stages one by one (index, fit, apply).

Command bodies parse options, call the library and print; errors are one line on stderr with exit
status 1 (2 for usage), no traceback unless ``-v``.
"""

from __future__ import annotations

import enum
import gc
import json
import logging
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from .apply import Mode, OutputFormat
from .compression import Codec
from .duplicates import DedupMode
from .errors import WarcDeboilError
from .lm_commands import lm_app, perplexity
from .pages import PageLimits
from .sitekey import SiteKeyMode

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    help="Clean web archives: learn each site's boilerplate and remove it.",
)

def _version(show: bool) -> None:
    if show:
        from . import __version__

        typer.echo(f"warcdeboil {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True,
                           help="Print the version and exit.")
    ] = False,
) -> None:
    """Clean web archives: learn each site's boilerplate and remove it."""


Inputs = Annotated[
    list[Path], typer.Argument(help="WARC/ARC files, or directories searched recursively.")
]
Locations = Annotated[
    list[str],
    typer.Argument(help="WARC/ARC files, or directories searched recursively: local paths, "
                   "file:// URLs, or (with --engine spark and fsspec) s3://, s3a://, gs://…"),
]
Workers = Annotated[
    int, typer.Option("--workers", "-j", help="Worker processes (0: all cores).", min=0)
]
Verbose = Annotated[bool, typer.Option("--verbose", "-v", help="Log details; show tracebacks.")]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars or summary.")]
SiteKey = Annotated[
    SiteKeyMode, typer.Option("--site-key", help="Group pages by host (minus www.) or domain.")
]
Format = Annotated[
    OutputFormat,
    typer.Option("--format", "-f", help="What to write: warc, text (WET), jsonl, or markdown "
                 "(JSONL with a markdown field)."),
]
ModeOption = Annotated[
    Mode | None,
    typer.Option("--mode", "-m", help="template: remove what the site repeats; content: keep "
                 "the main content only. Default: template for warc, content for the others."),
]
Compress = Annotated[
    str,
    typer.Option("--compress", metavar="<auto|gzip|zstd|none>",
                 help="Output compression: auto (follow input), gzip, zstd, none."),
]
MinOccurrence = Annotated[
    int, typer.Option("--min-occurrence", min=1, help="Pairs that must share a subtree.")
]
MaxIou = Annotated[
    float, typer.Option("--max-iou", min=0.0, max=1.0, help="Skip pairs more alike than this.")
]
ZstdDict = Annotated[
    bool,
    typer.Option("--zstd-dict", help="zstd output: train a dictionary on each input's records."),
]
OnError = Annotated[
    str,
    typer.Option("--on-error", metavar="<skip|fail>",
                 help="skip: count a bad record and go on; fail: stop the run."),
]
MaxPageMb = Annotated[
    int,
    typer.Option("--max-page-mb", min=1, help="Larger pages (decoded) are passed through."),
]
MaxPageTags = Annotated[
    int, typer.Option("--max-page-tags", min=1, help="Pages with more tags are passed through.")
]
MaxPageDepth = Annotated[
    int,
    typer.Option("--max-page-depth", min=1, help="Pages nesting deeper are passed through."),
]
JsonSummary = Annotated[
    bool, typer.Option("--json", help="Print the summary as JSON on stdout.")
]
RunSize = Annotated[
    int, typer.Option("--run-size", min=1, help="MiB of index entries per sorted run.")
]
ReportDir = Annotated[
    Path | None,
    typer.Option("--report", help="Also write a report of what was removed (static HTML, "
                 "open DIR/index.html) to this directory."),
]
LmModel = Annotated[
    str | None,
    typer.Option("--lm", help="A language model (`lm train`, or ARPA): each page's perplexity "
                 "in JSONL; needed by the options below. A path (on Spark, one every executor "
                 "can read) or a URL; 'auto' (clean): train one a language on the run's own "
                 "text after the fit."),
]
PerplexityBuckets = Annotated[
    bool, typer.Option("--perplexity-buckets", help="JSONL: perplexity_bucket, head, middle or "
                       "tail by the 30th and 60th percentiles of the language's pages (clean).")
]
KeepBuckets = Annotated[
    str | None,
    typer.Option("--keep-buckets", help="Drop pages of the other buckets, e.g. head,middle "
                 "(text outputs, clean)."),
]
LinePerplexity = Annotated[
    bool, typer.Option("--line-perplexity", help="JSONL: also each line's perplexity.")
]
MaxLinePerplexity = Annotated[
    float | None,
    typer.Option("--max-line-perplexity", min=0.0, help="Drop lines of higher perplexity "
                 "from the text (text outputs)."),
]
MaxPagePerplexity = Annotated[
    float | None,
    typer.Option("--max-page-perplexity", min=0.0, help="Drop pages of higher perplexity "
                 "(after the line filter; text outputs)."),
]
DedupOption = Annotated[
    DedupMode | None,
    typer.Option("--dedup", help="Duplicate pages (exact and near, across sites): off; mark "
                 "(JSONL: duplicate_of…; the default for jsonl and markdown); drop (text "
                 "outputs: leave them out, counted); revisit (WARC: an exact copy becomes a "
                 "revisit record). Default off for warc and text. --engine local."),
]


class Engine(str, enum.Enum):
    """Where the job runs."""

    LOCAL = "local"
    SPARK = "spark"


def _options(**kwargs: Any) -> Any:
    from .fit import FitParams
    from .pipeline import Options

    fit = FitParams(
        max_iou=kwargs.pop("max_iou"), min_occurrence=kwargs.pop("min_occurrence")
    )
    compress = kwargs.pop("compress", "auto")
    codec = None if compress == "auto" else _codec(compress)
    run_size = kwargs.pop("run_size", 64)
    return Options(fit=fit, compress=codec, run_bytes=run_size << 20, **kwargs)


def _fail_fast(on_error: str) -> bool:
    if on_error not in ("skip", "fail"):
        raise typer.BadParameter(f"{on_error!r}: choose skip or fail", param_hint="--on-error")
    return on_error == "fail"


def _codec(name: str) -> Codec:
    try:
        return Codec(name)
    except ValueError:
        raise typer.BadParameter(f"{name!r}: choose auto, gzip, zstd or none") from None


class _Bars:
    """Progress bars on stderr for the stages; a no-op when quiet or not a terminal.

    A stage that reads archives is measured in input bytes when their size is known (bytes read
    and in all, speed, time left); the fit, and inputs of unknown size, in jobs done.
    """

    def __init__(self, enabled: bool, console: Any = None) -> None:
        self._progress = None
        self._tasks: dict[str, Any] = {}
        self._counts: dict[str, list[int]] = {}  # jobs done, items, bytes read
        if enabled:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                Progress,
                TaskProgressColumn,
                TextColumn,
                TimeRemainingColumn,
            )

            self._progress = Progress(
                TextColumn("{task.description:<8}"),
                BarColumn(),
                TaskProgressColumn(),
                TimeRemainingColumn(),
                TextColumn("{task.fields[detail]}"),
                console=console or Console(stderr=True),
                transient=False,
            )

    def __enter__(self) -> _Bars:
        if self._progress is not None:
            self._progress.start()
        return self

    def __exit__(self, *_: object) -> None:
        if self._progress is not None:
            self._progress.stop()

    def __call__(
        self, stage: str, done: int, items: int, total: int, nbytes: int = 0, size: int = 0
    ) -> None:
        if self._progress is None:
            return
        if stage not in self._tasks:
            self._tasks[stage] = self._progress.add_task(
                stage, total=size or total, detail="")
            self._counts[stage] = [0, 0, 0]
        counts = self._counts[stage]
        counts[0] += done
        counts[1] += items
        counts[2] += nbytes
        self._progress.update(self._tasks[stage], advance=nbytes if size else done,
                              detail=_detail(stage, counts, total, size))


def _detail(stage: str, counts: list[int], total: int, size: int) -> str:
    """What a progress bar says beside the bar: bytes, jobs, items."""
    jobs, items, nbytes = counts
    if stage == "fit":
        return f"{jobs}/{total} partitions, {items:,} sites"
    if stage == "dedup":
        return f"{jobs}/{total} files, {items:,} pages signed"
    read = f"{_human(nbytes)}/{_human(size)}, " if size else ""
    return f"{read}{jobs}/{total} files, {items:,} records"


def _human(nbytes: int) -> str:
    """Bytes for people: 1000-based, three significant digits.

    >>> _human(999), _human(12_345_678), _human(3 * 10**12)
    ('999 B', '12.3 MB', '3.00 TB')
    """
    if nbytes < 1000:
        return f"{nbytes} B"
    value = float(nbytes)
    for unit in ("kB", "MB", "GB", "TB"):
        value /= 1000
        if value < 999.5 or unit == "TB":
            break
    digits = 0 if value >= 99.95 else 1 if value >= 9.995 else 2
    return f"{value:.{digits}f} {unit}"


def _setup_logging(verbose: bool, quiet: bool = False) -> None:
    # Each bad record is one WARNING line (file@offset: reason); -q keeps only errors.
    logging.basicConfig(
        level=logging.INFO if verbose else logging.ERROR if quiet else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )


def _fail(exc: Exception, verbose: bool) -> None:
    """One line on stderr and exit status 1 (2 for a plan refused: a usage error); with -v, the
    traceback instead."""
    if verbose or isinstance(exc, _typer_exceptions()):
        raise exc
    from .errors import PlanError

    typer.echo(f"warcdeboil: error: {_one_line(exc)}", err=True)
    raise typer.Exit(2 if isinstance(exc, PlanError) else 1)


def _typer_exceptions() -> tuple[type[Exception], ...]:
    """Exit, abort and usage errors: typer reports these itself (from click, or the copy of
    click that newer typers carry)."""
    usage = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")
    return (typer.Exit, typer.Abort, usage)


def _one_line(exc: Exception) -> str:
    if isinstance(exc, WarcDeboilError):
        return str(exc)
    if isinstance(exc, OSError) and exc.strerror:  # a full disk, a permission: say which file
        return f"{exc.filename}: {exc.strerror}" if exc.filename else exc.strerror
    lines = str(exc).strip().splitlines()
    detail = f": {lines[0]}" if lines else ""
    return f"{type(exc).__name__}{detail} (unexpected: -v shows where)"


def _print_summary(data: dict[str, Any], quiet: bool, pages: str = "cleaned pages") -> None:
    """The summary on stderr: only the figures the command counted (``fit`` reads no records);
    ``pages`` names what ``pages`` counts (the scan of ``index`` cleans none)."""
    if quiet:
        return
    before = data.get("html_bytes_before", 0)
    after = data.get("html_bytes_after", 0)
    lines = []
    if "inputs" in data:
        lines.append(f"inputs        {data['inputs']:>12,}")
    if data.get("resumed"):
        lines.append(f"  complete already (--resume): {data['resumed']:,}")
    if "records" in data:
        lines.append(
            f"records       {data['records']:>12,}   {pages}: {data.get('pages', 0):,}"
            f", carried: {data.get('carried', 0):,}, skipped: {data.get('skipped', 0):,}"
        )
    if "sites" in data:
        lines.append(
            f"sites         {data['sites']:>12,}   fitted: {data.get('sites_fitted', 0):,}"
        )
    if "pages_indexed" in data:
        lines.append(f"pages indexed {data['pages_indexed']:>12,}")
    if before and after:  # WARC output: the cleaned documents as written
        lines.append(f"HTML bytes    {before:>12,} → {after:,} ({after / before:.0%})")
    elif before:  # text outputs
        chars = data.get("text_chars", 0)
        lines.append(f"HTML bytes    {before:>12,} → text: {chars:,} characters")
    duplicates = data.get("duplicates")
    if duplicates:
        dropped = duplicates["dropped"]
        line = (f"duplicates    {duplicates['exact'] + duplicates['near']:>12,}   exact: "
                f"{duplicates['exact']:,}, near: {duplicates['near']:,} "
                f"(groups: {duplicates['groups']:,})")
        if dropped["exact"] or dropped["near"]:
            line += f"; dropped: exact {dropped['exact']:,}, near {dropped['near']:,}"
        if duplicates["revisits"]:
            line += f"; written as revisits: {duplicates['revisits']:,}"
        lines.append(line)
    rules = data.get("url_rules")
    if rules:
        lines.append(f"URL rules     {rules['rules']:>12,}   sites: {rules['sites']:,} "
                     f"(crawl-level: {rules['crawl_rules']:,}) → {rules['path']}")
    problems = data.get("problems")
    if problems is not None:
        lines.append(f"problems      {sum(problems.values()):>12,}")
        lines.extend(f"  {count:>6,}  {reason}" for reason, count in sorted(problems.items()))
    for line in lines:
        typer.echo(line, err=True)


def _tally_summary(inputs: int, tallies: list[Any]) -> dict[str, Any]:
    from .tally import Tally

    total = Tally()
    for tally in tallies:
        total.merge(tally)
    return {
        "inputs": inputs, "records": total.records, "pages": total.cleaned,
        "carried": total.carried, "skipped": total.skipped,
        "html_bytes_before": total.html_bytes_before, "html_bytes_after": total.html_bytes_after,
        "text_chars": total.text_chars, "pages_indexed": total.indexed,
        "lines_dropped_perplexity": total.lines_dropped_perplexity,
        "pages_dropped_perplexity": total.pages_dropped_perplexity,
        "pages_dropped_bucket": total.pages_dropped_bucket,
        "problems": dict(sorted(total.problems.items())),
        "files": [t.to_dict() for t in sorted(tallies, key=lambda t: t.path)],
        "outputs": sorted(t.output for t in tallies if t.output),
    }


def _report(data: dict[str, Any], json_summary: bool, quiet: bool, pages: str = "cleaned pages",
            ) -> None:
    """The summary as JSON on stdout (``--json``), else as text on stderr (unless quiet)."""
    if json_summary:
        typer.echo(json.dumps(data, indent=2, sort_keys=True))
    _print_summary(data, quiet or json_summary, pages)


def _finish(data: dict[str, Any], json_summary: bool, quiet: bool,
            pages: str = "cleaned pages") -> None:
    """The summary of a run that read records, then exit status 3 if some had problems."""
    _report(data, json_summary, quiet, pages)
    if data["problems"]:
        raise typer.Exit(3)


@app.command()
def clean(
    inputs: Locations,
    output: Annotated[
        str, typer.Option("--output", "-o", help="Output directory (a path or, on Spark, a URL).")
    ],
    fmt: Format = OutputFormat.WARC,
    mode: ModeOption = None,
    compress: Compress = "auto",
    workers: Workers = 0,
    work_dir: Annotated[
        Path | None, typer.Option("--work-dir", help="Keep the index and profiles here "
                                  "(--engine local).")
    ] = None,
    keep_work_dir: Annotated[
        bool, typer.Option("--keep-work-dir", help="Keep the temporary work directory "
                           "(--engine local).")
    ] = False,
    site_key: SiteKey = SiteKeyMode.HOST,
    min_occurrence: MinOccurrence = 1,
    max_iou: MaxIou = 0.95,
    run_size: RunSize = 64,
    zstd_dict: ZstdDict = False,
    on_error: OnError = "skip",
    max_page_mb: MaxPageMb = 16,
    max_page_tags: MaxPageTags = 200_000,
    max_page_depth: MaxPageDepth = 10_000,
    resume: Annotated[
        bool,
        typer.Option("--resume", help="Skip inputs whose output is complete (both engines); "
                     "--engine local also reuses a finished index and profiles in --work-dir."),
    ] = False,
    json_summary: JsonSummary = False,
    engine: Annotated[
        Engine, typer.Option("--engine", help="local: processes on this machine; spark: an "
                             "Apache Spark cluster (needs pip install 'warcdeboil\\[spark]').")
    ] = Engine.LOCAL,
    spark_master: Annotated[
        str | None, typer.Option("--spark-master", help="--engine spark: the Spark master URL, "
                                 "e.g. 'local[2]' or yarn (default: Spark's configuration).")
    ] = None,
    spark_conf: Annotated[
        list[str] | None, typer.Option("--spark-conf", help="--engine spark: a Spark setting "
                                       "KEY=VALUE (repeatable).")
    ] = None,
    select_index: Annotated[
        str | None, typer.Option("--select-index", help="Clean only the records this index "
                                 "names (CDX, CDXJ, or Common Crawl's Parquet index: pyarrow "
                                 "locally), read by byte range; INPUT is the directory or URL "
                                 "its file names are relative to. Both engines.")
    ] = None,
    sites: Annotated[
        str | None, typer.Option("--sites", help="With --select-index: a file of hosts or "
                                 "registered domains, one a line; only their records.")
    ] = None,
    report: ReportDir = None,
    lm: LmModel = None,
    line_perplexity: LinePerplexity = False,
    max_line_perplexity: MaxLinePerplexity = None,
    max_page_perplexity: MaxPagePerplexity = None,
    perplexity_buckets: PerplexityBuckets = False,
    keep_buckets: KeepBuckets = None,
    dedup: DedupOption = None,
    url_rules: Annotated[
        Path | None, typer.Option("--url-rules", help="Learn URL rules (irrelevant parameters "
                                  "and variants, per site) from the duplicate groups and write "
                                  "them to this JSON file; JSONL then gives url_canonical. "
                                  "Runs the duplicate stage; not with --dedup off.")
    ] = None,
    verbose: Verbose = False,
    quiet: Quiet = False,
) -> None:
    """Index, fit and rewrite: one cleaned output per input.

    Exit status: 0 when every record was read; 3 when the run finished but some records or
    inputs had problems (counted by reason in the summary); 1 on an error that stops the run
    (with --on-error fail, the first problem); 2 on a usage error; 143 on SIGTERM, 130 on
    SIGINT (workers ended, partial outputs removed, a --work-dir kept for --resume).
    """
    from .pipeline import clean as run_clean
    from .remote import is_remote

    _setup_logging(verbose, quiet)
    _usable(fmt, mode)
    _dedup_usable(fmt, dedup)
    if url_rules is not None and dedup is DedupMode.OFF:
        raise typer.BadParameter("learns from the duplicate stage's groups: not with --dedup off",
                                 param_hint="--url-rules")
    if engine is Engine.SPARK:
        _spark_ready(work_dir, keep_work_dir)
    elif is_remote(output):
        raise typer.BadParameter(
            f"{output}: the local engine writes to local paths (or file:// URLs); other URLs "
            "need --engine spark", param_hint="--output",
        )
    elif spark_master or spark_conf:
        raise typer.BadParameter("applies to --engine spark only", param_hint="--spark-master")
    if sites and not select_index:
        raise typer.BadParameter("needs --select-index", param_hint="--sites")
    if report is not None and engine is Engine.SPARK:
        raise typer.BadParameter("is for --engine local", param_hint="--report")
    try:
        options = _options(
            format=fmt, mode=mode, compress=compress, workers=workers, site_key=site_key,
            min_occurrence=min_occurrence, max_iou=max_iou, run_size=run_size,
            zstd_dictionary=zstd_dict, fail_fast=_fail_fast(on_error),
            limits=PageLimits(max_page_mb << 20, max_page_tags, max_page_depth),
            lm=_lm_settings(fmt, lm, line_perplexity, max_line_perplexity,
                            max_page_perplexity, perplexity_buckets, keep_buckets),
            dedup=dedup, url_rules=str(url_rules) if url_rules is not None else None,
        )
        reporter = (_Reporter(report, quiet, options.worker_count) if report is not None
                    else None)
        with _Bars(not quiet and sys.stderr.isatty()) as bars:
            if engine is Engine.SPARK:
                summary = _run_spark(inputs, output, options, spark_master, spark_conf or [],
                                     select_index, sites, bars, resume)
            else:
                summary = run_clean(
                    [_local(location) for location in inputs], output, options,
                    work_dir=work_dir, keep_work_dir=keep_work_dir, resume=resume,
                    progress=bars, select=_selection(select_index, sites), report=reporter,
                )
    except Exception as exc:
        _fail(exc, verbose)
        return
    if reporter is not None:
        reporter.missing()
    data = summary.to_dict()
    _finish(data, json_summary, quiet)


def _dedup_usable(fmt: OutputFormat, dedup: DedupMode | None) -> None:
    """--dedup modes the format has no use for: a usage error (see pipeline.DEDUP_MODES)."""
    from .pipeline import DEDUP_MODES

    if dedup is not None and dedup not in DEDUP_MODES[fmt]:
        allowed = ", ".join(m.value for m in DEDUP_MODES[fmt])
        raise typer.BadParameter(
            f"{dedup.value} does not apply to --format {fmt.value} (it takes {allowed}): WARC "
            "output keeps every record, revisit records are WARC's, and only JSONL has fields "
            "to mark duplicates in", param_hint="--dedup",
        )


def _usable(fmt: OutputFormat, mode: Mode | None) -> None:
    """Combinations of options that cannot work: a usage error (exit status 2)."""
    if fmt is OutputFormat.WARC and mode is Mode.CONTENT:
        raise typer.BadParameter(
            "--mode content writes text: use --format jsonl, text or markdown (WARC output "
            "keeps the HTML and removes the template only)", param_hint="--mode",
        )


def _lm_settings(
    fmt: OutputFormat, model: str | None, line_scores: bool, max_line: float | None,
    max_page: float | None, buckets: bool = False, keep: str | None = None, *,
    run: bool = True,
) -> Any:
    """The run's language model settings (None without --lm), the model read once here so
    that a missing or damaged one stops the run before any record is read. ``run``: the
    command has pass 1's page stores (clean), which --lm auto and buckets are made from."""
    if model is None:
        for given, name in ((line_scores, "--line-perplexity"),
                            (max_line is not None, "--max-line-perplexity"),
                            (max_page is not None, "--max-page-perplexity"),
                            (buckets, "--perplexity-buckets"),
                            (keep is not None, "--keep-buckets")):
            if given:
                raise typer.BadParameter("needs --lm MODEL (or --lm auto)", param_hint=name)
        return None
    from .lm_filter import AUTO, BUCKETS, LmSettings, check_model  # only with --lm

    kept = None
    if keep is not None:
        kept = tuple(name.strip() for name in keep.split(",") if name.strip())
        wrong = [name for name in kept if name not in BUCKETS]
        if wrong or not kept:
            raise typer.BadParameter(f"{keep!r}: a comma-separated list of head, middle, tail",
                                     param_hint="--keep-buckets")
    if (model == AUTO or buckets or kept is not None) and not run:
        raise typer.BadParameter("--lm auto and buckets are made from a whole run: use "
                                 "`warcdeboil clean`", param_hint="--lm")
    if fmt is OutputFormat.WARC:
        raise typer.BadParameter(
            "perplexity scores and filters are for text outputs: use --format jsonl, text or "
            "markdown (WARC output keeps every page)", param_hint="--lm",
        )
    if line_scores and fmt is OutputFormat.TEXT:
        raise typer.BadParameter("JSONL writes line scores: use --format jsonl or markdown",
                                 param_hint="--line-perplexity")
    if model != AUTO:
        check_model(model)
    return LmSettings(model, line_scores, max_line, max_page, buckets,
                      tuple(b for b in BUCKETS if b in kept) if kept is not None else None)


class _Reporter:
    """What clean calls with its work directory to write the report; says so when it was not
    called (with --resume, when every output was complete already)."""

    def __init__(self, out: Path, quiet: bool, workers: int) -> None:
        self.out = out
        self.quiet = quiet
        self.workers = workers
        self.written = False

    def __call__(self, work: Path) -> None:
        from .report import report_work_dir

        _report_written(report_work_dir(work, self.out, workers=self.workers), self.quiet)
        self.written = True

    def missing(self) -> None:
        if not self.written:
            typer.echo(f"report        not written: no input was cleaned (--resume); "
                       f"`warcdeboil report WORK_DIR -o {self.out}` writes it", err=True)


def _report_written(index_path: Path, quiet: bool) -> None:
    if not quiet:
        typer.echo(f"report        {index_path}", err=True)


def _spark_ready(work_dir: Path | None, keep_work_dir: bool) -> None:
    """Usage errors of --engine spark, and Spark itself missing: one line, exit status 2."""
    from .errors import ConfigError
    from .spark.session import require_pyspark

    if work_dir is not None or keep_work_dir:
        raise typer.BadParameter(
            "--work-dir and --keep-work-dir are for --engine local: a Spark run "
            "keeps its index and profiles on the cluster", param_hint="--engine spark",
        )
    try:
        require_pyspark()
    except ConfigError as exc:
        typer.echo(f"warcdeboil: error: {exc}", err=True)
        raise typer.Exit(2) from None


def _local(location: str) -> str:
    from .errors import ConfigError
    from .remote import is_remote, local_path

    if is_remote(location):
        raise ConfigError(f"{location}: URLs are read by --engine spark")
    return local_path(location)


def _run_spark(
    inputs: list[str], output: str, options: Any, master: str | None, conf: list[str],
    select_index: str | None, sites: str | None, bars: Any, resume: bool,
) -> Any:
    from .spark import run_spark
    from .spark.session import parse_conf

    return run_spark(inputs, output, options, master=master, conf=parse_conf(conf),
                     select=_selection(select_index, sites), progress=bars, resume=resume)


def _selection(select_index: str | None, sites: str | None) -> Any:
    """--select-index and --sites as (index, site filter), or None."""
    from .selection import SiteFilter

    if not select_index:
        return None
    return (select_index, SiteFilter.load(sites) if sites else SiteFilter())


@app.command()
def index(
    inputs: Inputs,
    work_dir: Annotated[Path, typer.Option("--work-dir", help="Where the index goes.")],
    workers: Workers = 0,
    site_key: SiteKey = SiteKeyMode.HOST,
    run_size: RunSize = 64,
    json_summary: JsonSummary = False,
    verbose: Verbose = False,
    quiet: Quiet = False,
) -> None:
    """Pass 1: scan archives and write the sorted page index to WORK_DIR."""
    from .pipeline import build_index, discover_inputs

    _setup_logging(verbose, quiet)
    try:
        options = _options(
            workers=workers, site_key=site_key, run_size=run_size, max_iou=0.95,
            min_occurrence=1,
        )
        found = discover_inputs(inputs)
        with _Bars(not quiet and sys.stderr.isatty()) as bars:
            tallies = build_index([p for p, _ in found], work_dir, options, bars)
    except Exception as exc:
        _fail(exc, verbose)
        return
    data = _tally_summary(len(found), tallies)
    _finish(data, json_summary, quiet, pages="HTML pages")


@app.command()
def fit(
    work_dir: Annotated[Path, typer.Option("--work-dir", help="Holds the index from `index`.")],
    profiles: Annotated[Path, typer.Option("--profiles", help="Where site profiles go.")],
    workers: Workers = 0,
    min_occurrence: MinOccurrence = 1,
    max_iou: MaxIou = 0.95,
    json_summary: JsonSummary = False,
    verbose: Verbose = False,
    quiet: Quiet = False,
) -> None:
    """Learn each site's template from the index; write site profiles to PROFILES."""
    from .pipeline import fit_profiles

    _setup_logging(verbose, quiet)
    try:
        options = _options(workers=workers, min_occurrence=min_occurrence, max_iou=max_iou)
        with _Bars(not quiet and sys.stderr.isatty()) as bars:
            stats = fit_profiles(work_dir, profiles, options, bars)
    except Exception as exc:
        _fail(exc, verbose)
        return
    _report({"sites": stats.sites, "sites_fitted": stats.sites_fitted,
             "pages_indexed": stats.pages, "repeated_blocks": stats.repeated_blocks,
             "template_slots": stats.template_slots}, json_summary, quiet)


@app.command()
def apply(
    inputs: Inputs,
    output: Annotated[str, typer.Option("--output", "-o", help="Output directory (a path).")],
    profiles: Annotated[Path, typer.Option("--profiles", help="Site profiles from `fit`.")],
    fmt: Format = OutputFormat.WARC,
    mode: ModeOption = None,
    compress: Compress = "auto",
    workers: Workers = 0,
    zstd_dict: ZstdDict = False,
    json_summary: JsonSummary = False,
    report: ReportDir = None,
    lm: LmModel = None,
    line_perplexity: LinePerplexity = False,
    max_line_perplexity: MaxLinePerplexity = None,
    max_page_perplexity: MaxPagePerplexity = None,
    verbose: Verbose = False,
    quiet: Quiet = False,
) -> None:
    """Pass 2: clean archives with existing site profiles (also archives not in the fit)."""
    from .pipeline import apply_profiles, discover_inputs
    from .plan import local_output_dir

    _setup_logging(verbose, quiet)
    _usable(fmt, mode)
    try:
        options = _options(
            format=fmt, mode=mode, compress=compress, workers=workers, max_iou=0.95,
            min_occurrence=1, zstd_dictionary=zstd_dict,
            lm=_lm_settings(fmt, lm, line_perplexity, max_line_perplexity,
                            max_page_perplexity, run=False),
        )
        found = discover_inputs(inputs, exclude=local_output_dir(output))
        with _Bars(not quiet and sys.stderr.isatty()) as bars:
            tallies = apply_profiles(found, output, profiles, options, bars)
        data = _tally_summary(len(found), tallies)
        if report is not None:
            from .report import ArchivePages, build_report

            source = ArchivePages([p for p, _ in found], options.structure, options.limits)
            _report_written(build_report(source, report, profiles, options.effective_mode,
                                         data, workers=options.worker_count), quiet)
    except Exception as exc:
        _fail(exc, verbose)
        return
    _finish(data, json_summary, quiet)


@app.command(name="report")
def report_command(
    work_dir: Annotated[
        Path, typer.Argument(help="A kept work directory (clean --work-dir or --keep-work-dir, "
                             "or index then fit).")
    ],
    output: Annotated[Path, typer.Option("--output", "-o", help="Where the report goes.")],
    profiles: Annotated[
        Path | None, typer.Option("--profiles", help="Site profiles (default: WORK_DIR/profiles).")
    ] = None,
    mode: Annotated[
        Mode | None, typer.Option("--mode", "-m", help="Default: the run's (template when the "
                                  "work directory does not say).")
    ] = None,
    workers: Workers = 0,
    verbose: Verbose = False,
    quiet: Quiet = False,
) -> None:
    """Write the report of a finished run after the fact: static HTML, OUTPUT/index.html."""
    import os

    from .report import report_work_dir

    _setup_logging(verbose, quiet)
    try:
        index_path = report_work_dir(work_dir, output, profiles_dir=profiles, mode=mode,
                                     workers=workers or os.cpu_count() or 1)
    except Exception as exc:
        _fail(exc, verbose)
        return
    _report_written(index_path, quiet)


@app.command()
def recompress(
    inputs: Inputs,
    output: Annotated[str, typer.Option("--output", "-o", help="Output directory (a path).")],
    compress: Annotated[
        str, typer.Option("--compress", metavar="<gzip|zstd|none>",
                          help="gzip (default), zstd or none.")
    ] = "gzip",
    verbose: Verbose = False,
    quiet: Quiet = False,
) -> None:
    """Rewrite archives one gzip member (or zstd frame) per record, so they can be read by
    offset: fixes whole-file gzip streams, shared members, and turns ARC into WARC."""
    from .apply import OutputFormat as Format
    from .pipeline import discover_inputs
    from .plan import check_writable, local_output_dir, plan_outputs
    from .recompress import recompress_file

    _setup_logging(verbose, quiet)
    codec = _codec(compress)
    try:
        out = local_output_dir(output)
        found = discover_inputs(inputs, exclude=out)
        planned = plan_outputs(found, out, Format.WARC, codec)
        check_writable(out)
        tallies = [recompress_file(plan.path, plan.output, codec) for plan in planned]
    except Exception as exc:
        _fail(exc, verbose)
        return
    data = _tally_summary(len(found), tallies)
    _print_summary(data, quiet)
    if data["problems"]:
        raise typer.Exit(3)


@app.command(name="eval")
def evaluate_command(
    inputs: Inputs,
    gold: Annotated[Path, typer.Option("--gold", help="Gold text, JSONL (.gz): url, site, gold.")],
    mode: Annotated[
        Mode, typer.Option("--mode", "-m", help="What to score: template removal or content.")
    ] = Mode.CONTENT,
    workers: Workers = 0,
    per_site: Annotated[bool, typer.Option("--per-site", help="One row per site.")] = False,
    json_report: Annotated[bool, typer.Option("--json", help="The report as JSON.")] = False,
    verbose: Verbose = False,
) -> None:
    """Clean archives to text and score it against gold text: token precision, recall, F1
    (the measure of ../shared/eval/README.md), overall, for sites with >= 5 pages, and the rest."""
    import tempfile

    from .evaluate import evaluate, load_gold, load_predictions
    from .pipeline import clean as run_clean

    _setup_logging(verbose, quiet=True)
    try:
        reference = load_gold(gold)
        with tempfile.TemporaryDirectory(prefix="warcdeboil-eval-") as out:
            options = _options(format=OutputFormat.JSONL, mode=mode, workers=workers,
                               max_iou=0.95, min_occurrence=1)
            run_clean(inputs, out, options)
            report = evaluate(load_predictions(sorted(Path(out).rglob("*.jsonl*"))), reference)
    except Exception as exc:
        _fail(exc, verbose)
        return
    if json_report:
        typer.echo(json.dumps(report.to_dict(), indent=2, sort_keys=True))
    else:
        typer.echo(report.format_table(per_site=per_site))


app.add_typer(lm_app, name="lm")
app.command()(perplexity)


def _tune_allocator() -> None:
    """Keep freed heap memory instead of returning it to the OS at once.

    lexbor allocates and frees a few hundred kilobytes per page; glibc's default trims the heap
    after each, and the pages fault back in for the next one. Measured on the dragnet eval
    archive: system time 0.34 s → 0.20 s, peak memory +3 MB. glibc only; a no-op elsewhere.
    """
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    if not name or not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(name)
        m_trim_threshold, m_top_pad, m_mmap_threshold = -1, -2, -3  # from <malloc.h>
        libc.mallopt(m_trim_threshold, 256 << 20)
        libc.mallopt(m_top_pad, 64 << 20)
        libc.mallopt(m_mmap_threshold, 32 << 20)
    except (OSError, AttributeError):
        return


def _tune_threads() -> None:
    """One BLAS thread (unless the user chose otherwise), set before numpy is first imported.

    numpy's OpenBLAS starts a thread per core, which spin while they wait; no run makes a BLAS
    call (a run's parallelism is its worker processes), but the spinning counted: on dragnet
    (content mode, JSONL, one worker) 0.65 % of the CPU samples of a run without a language
    model and 1.35 % of one with a given model were OpenBLAS's ``blas_thread_server``, and
    the run with the model took 6.93, 6.78 and 6.89 CPU-s with one thread against 7.82, 7.20
    and 7.03 without (alternated).
    """
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


# Container allocations (net of frees) between two collections of the youngest generation; the
# default is 700. A page makes tens of thousands of lists, tuples and blocks that die with it
# (freed by their reference counts, no cycles), and each collection walked the young ones again.
# 300 dragnet pages, JSONL (callgrind): 12.42 G instructions; frozen start-up objects 12.36 G,
# and this threshold 12.30 G (50,000: 12.29 G); peak memory unchanged (60 MB on dragnet).
GC_YOUNG_THRESHOLD = 10_000


def _tune_collector() -> None:
    """Collect cyclic garbage less often, and never walk what start-up made (the modules, the
    model): ``gc.freeze`` keeps it out of every later collection, in workers forked from this
    process too."""
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(GC_YOUNG_THRESHOLD, middle, old)


def main() -> None:
    """Entry point of the ``warcdeboil`` script."""
    from .signals import Interrupted, stop_on_signals

    _tune_allocator()
    _tune_collector()
    _tune_threads()
    try:
        with stop_on_signals():
            app()
    except Interrupted as exc:
        typer.echo(f"warcdeboil: {exc.describe()}", err=True)
        sys.exit(exc.exit_status)
    except KeyboardInterrupt:
        typer.echo("warcdeboil: interrupted", err=True)
        sys.exit(130)
