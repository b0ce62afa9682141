"""The stages one by one: ``index`` (pass 1), ``fit`` and ``apply`` (pass 2)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from warcdeboil.output.formats import OutputFormat
from warcdeboil.page.favor import Favor
from warcdeboil.site.sitekey import SiteKeyMode

from .console import (
    ProgressBars,
    fail,
    finish,
    report_summary,
    report_written,
    setup_logging,
    tally_summary,
)
from .options import (
    Compress,
    DedupOption,
    DropFlagged,
    DropHeadline,
    ExcludedOption,
    FavorOption,
    Format,
    Inputs,
    JsonSummary,
    LanguageIdModel,
    LineNoise,
    LinePerplexity,
    LmModel,
    MaxIou,
    MaxLineNoise,
    MaxLinePerplexity,
    MaxPagePerplexity,
    MinOccurrence,
    ModeOption,
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
    lm_settings,
    quality_options,
)


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
    from warcdeboil.run.local import build_index, discover_inputs

    setup_logging(verbose, quiet)
    try:
        options = build_options(
            workers=workers, site_key=site_key, run_size=run_size, max_iou=0.95,
            min_occurrence=1,
        )
        found = discover_inputs(inputs)
        with ProgressBars(not quiet and sys.stderr.isatty()) as bars:
            tallies = build_index([p for p, _ in found], work_dir, options, bars)
    except Exception as exc:
        fail(exc, verbose)
        return
    data = tally_summary(len(found), tallies)
    finish(data, json_summary, quiet, pages="HTML pages")


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
    from warcdeboil.run.local import fit_profiles

    setup_logging(verbose, quiet)
    try:
        options = build_options(workers=workers, min_occurrence=min_occurrence, max_iou=max_iou)
        with ProgressBars(not quiet and sys.stderr.isatty()) as bars:
            stats = fit_profiles(work_dir, profiles, options, bars)
    except Exception as exc:
        fail(exc, verbose)
        return
    report_summary({"sites": stats.sites, "sites_fitted": stats.sites_fitted,
             "pages_indexed": stats.pages, "repeated_blocks": stats.repeated_blocks,
             "template_slots": stats.template_slots}, json_summary, quiet)


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
    language_model: LanguageIdModel = None,
    line_perplexity: LinePerplexity = False,
    max_line_perplexity: MaxLinePerplexity = None,
    line_noise: LineNoise = False,
    max_line_noise: MaxLineNoise = None,
    max_page_perplexity: MaxPagePerplexity = None,
    dedup: DedupOption = None,
    redact_pii: RedactPii = False,
    quality_filters: QualityFiltersOption = None,
    quality_config: QualityConfigOption = None,
    drop_flagged: DropFlagged = False,
    excluded: ExcludedOption = None,
    drop_headline: DropHeadline = False,
    favor: FavorOption = Favor.BALANCED,
    verbose: Verbose = False,
    quiet: Quiet = False,
) -> None:
    """Clean archives with existing site profiles (also archives not in the fit).

    Pass 2 alone, unless the duplicate stage runs (--dedup mark, the default for jsonl and
    markdown, drop or revisit): it needs pass 1 over these archives first, as in clean.
    """
    from warcdeboil.run.local import apply_profiles, clean, discover_inputs, profile_stats
    from warcdeboil.run.plan import local_output_dir
    from warcdeboil.run.summary import RunSummary

    setup_logging(verbose, quiet)
    check_mode(fmt, mode)
    check_dedup(fmt, dedup)
    check_pii(fmt, redact_pii)
    check_content_options(fmt, mode, drop_headline, favor)
    quality = quality_options(fmt, quality_filters, quality_config, drop_flagged, excluded)
    try:
        options = build_options(
            format=fmt, mode=mode, compress=compress, workers=workers, max_iou=0.95,
            min_occurrence=1, zstd_dictionary=zstd_dict,
            lm=lm_settings(fmt, lm, line_perplexity, max_line_perplexity,
                            max_page_perplexity, run=False, line_noise=line_noise,
                            max_noise=max_line_noise),
            language_model=language_model, dedup=dedup, redact_pii=redact_pii,
            quality=quality, drop_headline=drop_headline, favor=favor,
        )
        found = discover_inputs(inputs, exclude=local_output_dir(output))
        with ProgressBars(not quiet and sys.stderr.isatty()) as bars:
            if options.dedup_stage:
                summary = clean(inputs, output, options, progress=bars, profiles_dir=profiles)
            else:
                summary = RunSummary(inputs=len(found),
                                     fit=profile_stats(profiles)).asked(options)
                summary.apply_files = apply_profiles(found, output, profiles, options, bars)
        data = summary.to_dict()
        if report is not None:
            from warcdeboil.report import ArchivePages, build_report

            source = ArchivePages([p for p, _ in found], options.output_structure,
                                   options.limits)
            report_written(build_report(source, report, profiles, options.effective_mode,
                                         data, workers=options.worker_count,
                                         favor=options.favor,
                                         drop_headline=options.drop_headline), quiet)
    except Exception as exc:
        fail(exc, verbose)
        return
    finish(data, json_summary, quiet)
