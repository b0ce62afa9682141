"""``warcdeboil clean``: index, fit and rewrite in one go, on either engine."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from warcdeboil.dedup.verdicts import DedupMode
from warcdeboil.output.formats import OutputFormat
from warcdeboil.page.favor import Favor
from warcdeboil.page.html import PageLimits
from warcdeboil.site.sitekey import SiteKeyMode

from .console import ProgressBars, fail, finish, report_written, setup_logging
from .options import (
    Compress,
    DedupOption,
    DropFlagged,
    DropHeadline,
    Engine,
    ExcludedOption,
    FavorOption,
    Format,
    JsonSummary,
    KeepBuckets,
    LanguageIdModel,
    LineNoise,
    LinePerplexity,
    LmModel,
    Locations,
    MaxIou,
    MaxLineNoise,
    MaxLinePerplexity,
    MaxPageDepth,
    MaxPageMb,
    MaxPagePerplexity,
    MaxPageTags,
    MinOccurrence,
    ModeOption,
    OnError,
    PerplexityBuckets,
    QualityConfigOption,
    QualityFiltersOption,
    Quiet,
    RedactPii,
    ReportDir,
    RunSize,
    SiteKey,
    Verbose,
    Workers,
    ZstdDict,
    build_options,
    check_content_options,
    check_dedup,
    check_mode,
    check_pii,
    fail_fast,
    lm_settings,
    quality_options,
)


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
        typer.Option("--resume", help="Skip inputs whose output is complete; outputs made "
                     "with other options stop the run (exit status 2). Both engines; --engine "
                     "local also reuses a finished index and profiles in --work-dir."),
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
    language_model: LanguageIdModel = None,
    line_perplexity: LinePerplexity = False,
    max_line_perplexity: MaxLinePerplexity = None,
    line_noise: LineNoise = False,
    max_line_noise: MaxLineNoise = None,
    max_page_perplexity: MaxPagePerplexity = None,
    perplexity_buckets: PerplexityBuckets = False,
    keep_buckets: KeepBuckets = None,
    dedup: DedupOption = None,
    quality_filters: QualityFiltersOption = None,
    quality_config: QualityConfigOption = None,
    drop_flagged: DropFlagged = False,
    excluded: ExcludedOption = None,
    url_rules: Annotated[
        Path | None, typer.Option("--url-rules", help="Learn URL rules (irrelevant parameters "
                                  "and variants, per site) from the duplicate groups and write "
                                  "them to this JSON file; JSONL then gives url_canonical. "
                                  "Runs the duplicate stage; not with --dedup off.")
    ] = None,
    redact_pii: RedactPii = False,
    drop_headline: DropHeadline = False,
    favor: FavorOption = Favor.BALANCED,
    verbose: Verbose = False,
    quiet: Quiet = False,
) -> None:
    """Index, fit and rewrite: one cleaned output per input.

    Exit status: 0 when every record was read; 3 when the run finished but some records or
    inputs had problems (counted by reason in the summary); 1 on an error that stops the run
    (with --on-error fail, the first problem); 2 on a usage error; 143 on SIGTERM, 130 on
    SIGINT (workers ended, partial outputs removed, a --work-dir kept for --resume).
    """
    from warcdeboil.run.local import clean as run_clean
    from warcdeboil.warc.remote import is_remote

    setup_logging(verbose, quiet)
    # Which walks pass 1 takes (C where the extension was built and checked): one line under -v.
    from warcdeboil.page.dom import walk_status

    logging.getLogger(__name__).info(walk_status())
    check_mode(fmt, mode)
    check_dedup(fmt, dedup)
    check_pii(fmt, redact_pii)
    check_content_options(fmt, mode, drop_headline, favor)
    if url_rules is not None and dedup is DedupMode.OFF:
        raise typer.BadParameter("learns from the duplicate stage's groups: not with --dedup off",
                                 param_hint="--url-rules")
    quality = quality_options(fmt, quality_filters, quality_config, drop_flagged, excluded)
    if quality is not None:  # and which way the filters split words: one more line under -v
        from warcdeboil.corpus.codes import compiled_coder

        logging.getLogger(__name__).info(compiled_coder().status)
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
        options = build_options(
            format=fmt, mode=mode, compress=compress, workers=workers, site_key=site_key,
            min_occurrence=min_occurrence, max_iou=max_iou, run_size=run_size,
            zstd_dictionary=zstd_dict, fail_fast=fail_fast(on_error),
            limits=PageLimits(max_page_mb << 20, max_page_tags, max_page_depth),
            lm=lm_settings(fmt, lm, line_perplexity, max_line_perplexity,
                            max_page_perplexity, perplexity_buckets, keep_buckets,
                            line_noise=line_noise, max_noise=max_line_noise),
            language_model=language_model, dedup=dedup,
            url_rules=str(url_rules) if url_rules is not None else None,
            redact_pii=redact_pii, quality=quality, drop_headline=drop_headline, favor=favor,
        )
        reporter = (_Reporter(report, quiet, options.worker_count) if report is not None
                    else None)
        with ProgressBars(not quiet and sys.stderr.isatty()) as bars:
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
        fail(exc, verbose)
        return
    if reporter is not None:
        reporter.missing()
    data = summary.to_dict()
    finish(data, json_summary, quiet)


class _Reporter:
    """What clean calls with its work directory to write the report; says so when it was not
    called (with --resume, when every output was complete already)."""

    def __init__(self, out: Path, quiet: bool, workers: int) -> None:
        self.out = out
        self.quiet = quiet
        self.workers = workers
        self.written = False

    def __call__(self, work: Path) -> None:
        from warcdeboil.report import report_work_dir

        report_written(report_work_dir(work, self.out, workers=self.workers), self.quiet)
        self.written = True

    def missing(self) -> None:
        if not self.written:
            typer.echo(f"report        not written: no input was cleaned (--resume); "
                       f"`warcdeboil report WORK_DIR -o {self.out}` writes it", err=True)


def _spark_ready(work_dir: Path | None, keep_work_dir: bool) -> None:
    """Usage errors of --engine spark, and Spark itself missing: one line, exit status 2."""
    from warcdeboil.errors import ConfigError
    from warcdeboil.spark.session import require_pyspark

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
    from warcdeboil.errors import ConfigError
    from warcdeboil.warc.remote import is_remote, local_path

    if is_remote(location):
        raise ConfigError(f"{location}: URLs are read by --engine spark")
    return local_path(location)


def _run_spark(
    inputs: list[str], output: str, options: Any, master: str | None, conf: list[str],
    select_index: str | None, sites: str | None, bars: Any, resume: bool,
) -> Any:
    from warcdeboil.spark import run_spark
    from warcdeboil.spark.session import parse_conf

    return run_spark(inputs, output, options, master=master, conf=parse_conf(conf),
                     select=_selection(select_index, sites), progress=bars, resume=resume)


def _selection(select_index: str | None, sites: str | None) -> Any:
    """--select-index and --sites as (index, site filter), or None."""
    from warcdeboil.run.selection import SiteFilter

    if not select_index:
        return None
    return (select_index, SiteFilter.load(sites) if sites else SiteFilter())
