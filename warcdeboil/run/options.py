"""What a run is asked to do (:class:`Options`), and what it reports of its progress."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from warcdeboil.dedup.verdicts import DedupMode
from warcdeboil.errors import ConfigError
from warcdeboil.output.formats import FIELD_FORMATS, OutputFormat, default_mode, needs_structure
from warcdeboil.page.favor import Favor, as_favor
from warcdeboil.page.html import DigestKind, PageLimits
from warcdeboil.site.clean import Mode
from warcdeboil.site.fit import FitParams
from warcdeboil.site.index import DEFAULT_RUN_BYTES
from warcdeboil.site.sitekey import SiteKeyMode
from warcdeboil.warc.compression import Codec

if TYPE_CHECKING:
    from warcdeboil.corpus.settings import QualitySettings  # only with --quality-filters
    from warcdeboil.lm.scoring import LmSettings  # the perplexity filter: only with --lm


# Index partitions: a fixed number, so the layout (and every result) is the same for any
# number of workers; enough to keep 2-64 cores busy in the fit.
DEFAULT_PARTITIONS = 64

Progress = Callable[[str, int, int, int, int, int], None]
"""``progress(stage, done, items, total, nbytes, size)``: stage is 'scan', 'fit', 'dedup' or
'write'; ``done`` jobs (files, or partitions for the fit) finished out of ``total``, ``items``
more records (scan, write), sites (fit) or pages (dedup) and ``nbytes`` more input bytes read
since the last call, of ``size`` bytes the stage reads in all (0: unknown, and for the fit and
dedup, which read the work directory only). Workers report every few
hundred records or few MiB (:mod:`.meter`), not every record."""


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
    mode: Mode | None = None  # None: the format's default (see output.formats.default_mode)
    lm: LmSettings | None = None  # --lm: perplexity scores and filters (text outputs)
    dedup: DedupMode | None = None  # --dedup; None: the format's default (see default_dedup)
    url_rules: str | None = None  # --url-rules: learn URL rules from the groups, write them here
    redact_pii: bool = False  # --redact-pii: addresses in the text outputs replaced, counted
    language_model: str = ""  # --language-model: a fastText identification model; "": lid.176
    quality: QualitySettings | None = None  # --quality-filters: flags, and what is dropped
    drop_headline: bool = False  # --drop-headline: content mode's text without the headline
    favor: Favor = Favor.BALANCED  # --favor: content mode's side of the precision/recall trade

    def __post_init__(self) -> None:
        if self.lm is not None and self.lm.language_model != self.language_model:
            from dataclasses import replace  # the scorer routes pages by the same identifier

            object.__setattr__(self, "lm", replace(self.lm, language_model=self.language_model))
        if self.url_rules is not None and self.dedup is DedupMode.OFF:
            raise ConfigError("--url-rules learns from the duplicate stage's groups: it cannot "
                              "be used with --dedup off")
        if self.dedup is not None and self.dedup not in DEDUP_MODES[self.format]:
            allowed = ", ".join(m.value for m in DEDUP_MODES[self.format])
            raise ConfigError(
                f"--dedup {self.dedup.value} does not apply to --format {self.format.value} "
                f"(it takes {allowed}): WARC output keeps every record, revisit records are "
                "WARC's, and only JSONL has fields to mark duplicates in"
            )
        if self.format is OutputFormat.WARC and self.mode is Mode.CONTENT:
            raise ConfigError(
                "--mode content writes text: use --format jsonl, parquet, text or markdown "
                "(WARC output keeps the HTML and removes the template only)"
            )
        if self.format is OutputFormat.WARC and self.redact_pii:
            raise ConfigError(PII_WARC)
        if self.drop_headline and not writes_content(self.format, self.mode):
            raise ConfigError(HEADLINE_NOT_CONTENT)
        object.__setattr__(self, "favor", as_favor(self.favor))  # or its name, from the API
        if self.favor is not Favor.BALANCED and not writes_content(self.format, self.mode):
            raise ConfigError(FAVOR_NOT_CONTENT)
        if self.format is OutputFormat.PARQUET:
            from warcdeboil.output.parquet import check_pyarrow

            check_pyarrow()  # before the scan, not in the first worker that writes
        if self.format is OutputFormat.WARC and self.lm is not None:
            raise ConfigError("--lm scores and filters text: use --format jsonl, parquet, text or "
                              "markdown (WARC output keeps every page)")
        if self.format is OutputFormat.WARC and self.quality is not None:
            raise ConfigError(QUALITY_NOT_WARC)

    @property
    def effective_mode(self) -> Mode:
        return self.mode if self.mode is not None else default_mode(self.format)

    @property
    def effective_dedup(self) -> DedupMode:
        return self.dedup if self.dedup is not None else default_dedup(self.format)

    @property
    def dedup_stage(self) -> bool:
        """Whether the duplicate stage runs: for --dedup, or for --url-rules (whose groups
        then change no output when --dedup is off by default)."""
        return self.effective_dedup is not DedupMode.OFF or self.url_rules is not None

    @property
    def payload_digest(self) -> DigestKind:
        """What pass 1 digests each payload with: SHA-1 where revisit records may carry it,
        XXH3 where the stage only compares digests, nothing without the stage."""
        if self.effective_dedup is DedupMode.REVISIT:
            return "sha1"
        return "xxh3" if self.dedup_stage else ""

    @property
    def output_structure(self) -> bool:
        """Whether the outputs are made from pages analysed with structure marks."""
        return needs_structure(self.format, self.effective_mode)

    @property
    def structure(self) -> bool:
        """Whether pass 1 analyses pages with structure marks: for the outputs, and whenever
        the duplicate stage runs, so that a page's signature is the same for every format and
        mode (it leaves out link-dense blocks, which only link marks show). Pass 2 of a format
        that needs no marks takes them out again (``without_structure`` in
        :mod:`warcdeboil.page.dom`)."""
        return self.output_structure or self.dedup_stage

    @property
    def worker_count(self) -> int:
        return self.workers if self.workers > 0 else (os.cpu_count() or 1)


def writes_content(fmt: OutputFormat, mode: Mode | None) -> bool:
    """Whether a run writes content mode's text (what --drop-headline and --favor change): a text
    format in content mode, given or the format's default."""
    return fmt is not OutputFormat.WARC and (mode or default_mode(fmt)) is Mode.CONTENT


# Why only content mode's text takes --drop-headline (docs/modes.md).
HEADLINE_NOT_CONTENT = ("--drop-headline leaves the headline out of the main content's text: "
                        "use --mode content with --format jsonl, parquet, text or markdown")
# Why only content mode's text takes --favor other than balanced (docs/modes.md).
FAVOR_NOT_CONTENT = ("--favor chooses what content mode keeps of a page: use --mode content "
                     "with --format jsonl, parquet, text or markdown")
# Why WARC output refuses --redact-pii (docs/pii.md).
PII_WARC = ("--redact-pii redacts text: use --format jsonl, parquet, text or markdown (WARC "
            "output keeps each page's HTML, whose attributes, scripts and links would keep the "
            "addresses)")

QUALITY_NOT_WARC = (
    "--quality-filters judge a page's text: use --format jsonl, parquet, text or markdown (WARC "
    "output is an archive, not a corpus: it keeps every page)")

# What --dedup may do with each output format (see docs/duplicates.md).
DEDUP_MODES = {
    OutputFormat.WARC: (DedupMode.OFF, DedupMode.REVISIT),
    OutputFormat.TEXT: (DedupMode.OFF, DedupMode.DROP),
    OutputFormat.JSONL: (DedupMode.OFF, DedupMode.MARK, DedupMode.DROP),
    OutputFormat.MARKDOWN: (DedupMode.OFF, DedupMode.MARK, DedupMode.DROP),
    OutputFormat.PARQUET: (DedupMode.OFF, DedupMode.MARK, DedupMode.DROP),
}


def default_dedup(fmt: OutputFormat) -> DedupMode:
    """JSONL, markdown and Parquet say which pages are duplicates (nothing left out); WARC and
    WET-style text stay one record per page, as their readers expect, unless asked."""
    return DedupMode.MARK if fmt in FIELD_FORMATS else DedupMode.OFF
