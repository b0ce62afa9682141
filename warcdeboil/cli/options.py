"""The options the commands share, as typer declares them, and the library's options made
from them (usage errors: exit status 2)."""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Annotated, Any

import typer

from warcdeboil.dedup.verdicts import DedupMode
from warcdeboil.output.formats import OutputFormat
from warcdeboil.page.favor import Favor
from warcdeboil.site.clean import Mode
from warcdeboil.site.sitekey import SiteKeyMode
from warcdeboil.warc.compression import Codec

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
    typer.Option("--format", "-f", help="What to write: warc, text (WET), jsonl, markdown "
                 "(JSONL with a markdown field), or parquet (JSONL's fields as typed columns)."),
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
LanguageIdModel = Annotated[
    Path | None,
    typer.Option("--language-model", help="A fastText language-identification model file "
                 "(lid.176.bin, GlotLID's model.bin) instead of the small lid.176 model that "
                 "ships with warcdeboil: the language of JSONL, WET and --lm auto. On Spark, a "
                 "path every executor can read."),
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
LineNoise = Annotated[
    bool, typer.Option("--line-noise", help="JSONL: also each line's noise score, 0 to 1 (a "
                       "model with its noise calibration: `lm train`).")
]
MaxLineNoise = Annotated[
    float | None,
    typer.Option("--max-line-noise", min=0.0, max=1.0, help="Drop lines of a higher noise "
                 "score (text outputs). Default, with a model trained by `lm train` and no "
                 "--max-line-perplexity: 0.9999; 1 keeps every line."),
]
MaxPagePerplexity = Annotated[
    float | None,
    typer.Option("--max-page-perplexity", min=0.0, help="Drop pages of higher perplexity "
                 "(after the line filter; text outputs)."),
]
QualityFiltersOption = Annotated[
    str | None,
    typer.Option("--quality-filters", help="Compute quality filters on each page's text: all, "
                 "or some of gopher_quality, gopher_repetition, c4_quality, fineweb_quality "
                 "(comma-separated); JSONL gives quality_flags, the summary counts them (text "
                 "outputs; both engines)."),
]
QualityConfigOption = Annotated[
    Path | None,
    typer.Option("--quality-config", help="The filters' parameters from a TOML file, one table "
                 "a filter (see docs/quality.md); the rest keep their published values."),
]
DropFlagged = Annotated[
    bool, typer.Option("--drop-flagged", help="Leave pages a quality filter flags out of the "
                       "outputs, counted per filter and reason.")
]
ExcludedOption = Annotated[
    Path | None,
    typer.Option("--excluded", help="With --drop-flagged: list each page left out (url, "
                 "record, offset, quality_flags) in this JSONL file (a local path)."),
]
DedupOption = Annotated[
    DedupMode | None,
    typer.Option("--dedup", help="Duplicate pages (exact and near, across sites): off; mark "
                 "(JSONL: duplicate_of…; the default for jsonl, markdown and parquet); drop (text "
                 "outputs: leave them out, counted); revisit (WARC: an exact copy becomes a "
                 "revisit record). Default off for warc and text. Both engines."),
]
DropHeadline = Annotated[
    bool,
    typer.Option("--drop-headline", help="Leave the page's headline (the headings that open "
                 "its main content) out of the text, as scrapinghub's gold and trafilatura do; "
                 "JSONL's title keeps the page's title. Content mode, text outputs."),
]
FavorOption = Annotated[
    Favor,
    typer.Option("--favor", help="Content mode's side of the trade between boilerplate kept and "
                 "content lost: precision (less boilerplate, some content lost), balanced, recall "
                 "(less content lost, more boilerplate). See docs/modes.md for each setting's "
                 "precision and recall. Content mode, text outputs."),
]
RedactPii = Annotated[
    bool,
    typer.Option("--redact-pii", help="Replace e-mail, IPv4 and IPv6 addresses in the text by "
                 "[EMAIL], [IPV4] and [IPV6], counted by kind (JSONL: pii_redacted). Text "
                 "outputs; see docs/pii.md for what counts."),
]


class Engine(str, enum.Enum):
    """Where the job runs."""

    LOCAL = "local"
    SPARK = "spark"


def build_options(**kwargs: Any) -> Any:
    from warcdeboil.run.options import Options
    from warcdeboil.site.fit import FitParams

    fit = FitParams(
        max_iou=kwargs.pop("max_iou"), min_occurrence=kwargs.pop("min_occurrence")
    )
    compress = kwargs.pop("compress", "auto")
    codec = None if compress == "auto" else parse_codec(compress)
    run_size = kwargs.pop("run_size", 64)
    language_model = kwargs.pop("language_model", None)
    if language_model is not None:
        from warcdeboil.page.language import check_model_file

        check_model_file(str(language_model))  # a missing or bad file: one line, before work
        kwargs["language_model"] = str(language_model)
    return Options(fit=fit, compress=codec, run_bytes=run_size << 20, **kwargs)


def fail_fast(on_error: str) -> bool:
    if on_error not in ("skip", "fail"):
        raise typer.BadParameter(f"{on_error!r}: choose skip or fail", param_hint="--on-error")
    return on_error == "fail"


def parse_codec(name: str) -> Codec:
    try:
        return Codec(name)
    except ValueError:
        raise typer.BadParameter(f"{name!r}: choose auto, gzip, zstd or none") from None


def check_mode(fmt: OutputFormat, mode: Mode | None) -> None:
    """Combinations of options that cannot work: a usage error (exit status 2)."""
    if fmt is OutputFormat.WARC and mode is Mode.CONTENT:
        raise typer.BadParameter(
            "--mode content writes text: use --format jsonl, parquet, text or markdown (WARC "
            "output keeps the HTML and removes the template only)", param_hint="--mode",
        )


def check_pii(fmt: OutputFormat, redact_pii: bool) -> None:
    """--redact-pii with WARC output: a usage error (see run.options.PII_WARC)."""
    from warcdeboil.run.options import PII_WARC

    if redact_pii and fmt is OutputFormat.WARC:
        raise typer.BadParameter(PII_WARC.removeprefix("--redact-pii "),
                                 param_hint="--redact-pii")


def check_content_options(fmt: OutputFormat, mode: Mode | None, drop_headline: bool,
                          favor: Favor) -> None:
    """--drop-headline, or --favor other than balanced, outside content mode's text: a usage
    error (see run.options.HEADLINE_NOT_CONTENT and FAVOR_NOT_CONTENT)."""
    from warcdeboil.run.options import FAVOR_NOT_CONTENT, HEADLINE_NOT_CONTENT, writes_content

    if writes_content(fmt, mode):
        return
    if drop_headline:
        raise typer.BadParameter(HEADLINE_NOT_CONTENT.removeprefix("--drop-headline "),
                                 param_hint="--drop-headline")
    if favor is not Favor.BALANCED:
        raise typer.BadParameter(FAVOR_NOT_CONTENT.removeprefix("--favor "),
                                 param_hint="--favor")


def check_dedup(fmt: OutputFormat, dedup: DedupMode | None) -> None:
    """--dedup modes the format has no use for: a usage error (see run.options.DEDUP_MODES)."""
    from warcdeboil.run.options import DEDUP_MODES

    if dedup is not None and dedup not in DEDUP_MODES[fmt]:
        allowed = ", ".join(m.value for m in DEDUP_MODES[fmt])
        raise typer.BadParameter(
            f"{dedup.value} does not apply to --format {fmt.value} (it takes {allowed}): WARC "
            "output keeps every record, revisit records are WARC's, and only JSONL has fields "
            "to mark duplicates in", param_hint="--dedup",
        )


def lm_settings(
    fmt: OutputFormat, model: str | None, line_scores: bool, max_line: float | None,
    max_page: float | None, buckets: bool = False, keep: str | None = None, *,
    run: bool = True, line_noise: bool = False, max_noise: float | None = None,
) -> Any:
    """The run's language model settings (None without --lm), the model read once here so
    that a missing or damaged one stops the run before any record is read. ``run``: the
    command has pass 1's page stores (clean), which --lm auto and buckets are made from.

    The line filter: the noise score, ``DEFAULT_MAX_NOISE``, when the model carries its
    calibration and no line filter is named (--max-line-perplexity alone keeps its own)."""
    if model is None:
        for given, name in ((line_scores, "--line-perplexity"),
                            (max_line is not None, "--max-line-perplexity"),
                            (max_page is not None, "--max-page-perplexity"),
                            (buckets, "--perplexity-buckets"),
                            (keep is not None, "--keep-buckets"),
                            (line_noise, "--line-noise"),
                            (max_noise is not None, "--max-line-noise")):
            if given:
                raise typer.BadParameter("needs --lm MODEL (or --lm auto)", param_hint=name)
        return None
    from warcdeboil.lm.scoring import (  # only with --lm
        AUTO,
        BUCKETS,
        DEFAULT_MAX_NOISE,
        NO_CALIBRATION,
        LmSettings,
        check_model,
    )

    noise_hint = "--line-noise" if line_noise else "--max-line-noise"
    if model == AUTO and (line_noise or max_noise is not None):
        raise typer.BadParameter(
            "the run's own models (--lm auto) are word models without a noise calibration: "
            "train one with `warcdeboil lm train` (on the crawl itself, if need be) and give it "
            "as --lm MODEL", param_hint=noise_hint)

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
    for given, name in ((line_scores, "--line-perplexity"), (line_noise, "--line-noise")):
        if given and fmt is OutputFormat.TEXT:
            raise typer.BadParameter("JSONL writes line scores: use --format jsonl or markdown",
                                     param_hint=name)
    calibrated = model != AUTO and check_model(model)
    if (line_noise or max_noise is not None) and not calibrated:
        raise typer.BadParameter(f"{model}: {NO_CALIBRATION}", param_hint=noise_hint)
    if calibrated and max_noise is None and max_line is None:
        max_noise = DEFAULT_MAX_NOISE
    return LmSettings(model, line_scores, max_line, max_page, buckets,
                      tuple(b for b in BUCKETS if b in kept) if kept is not None else None,
                      line_noise=line_noise, max_noise=max_noise)


def quality_options(fmt: OutputFormat, names: str | None, config: Path | None, drop: bool,
                    excluded: Path | None) -> Any:
    """The run's quality filters (None without --quality-filters): an unknown filter, a config
    file that cannot be read or holds an unknown key, a combination that cannot work, or WARC
    output is a usage error of one line (exit status 2)."""
    if names is None and config is None and not drop and excluded is None:
        return None
    from warcdeboil.corpus.settings import quality_settings
    from warcdeboil.errors import ConfigError
    from warcdeboil.run.excluded import check_excluded
    from warcdeboil.run.options import QUALITY_NOT_WARC

    if names is not None and fmt is OutputFormat.WARC:
        raise typer.BadParameter(QUALITY_NOT_WARC.split(": ", 1)[1],
                                 param_hint="--quality-filters")
    try:
        settings = quality_settings(names, str(config) if config is not None else None, drop,
                                    str(excluded) if excluded is not None else None)
        if excluded is not None:
            check_excluded(str(excluded))
    except ConfigError as exc:
        hint = ("--quality-config" if config is not None and str(config) in str(exc)
                else "--quality-filters")
        raise typer.BadParameter(str(exc), param_hint=hint) from None
    return settings
