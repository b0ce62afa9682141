"""What a run did: the fit's counts, and every input's tally, per input and in total."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from warcdeboil.warc.names import escape_name
from warcdeboil.warc.tally import Tally

from .options import Options


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


def total_tally(tallies: Iterable[Tally]) -> Tally:
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
    dedup: dict[str, int] | None = None  # what the duplicate stage found (None: it did not run)
    url_rules: dict[str, Any] | None = None  # --url-rules: where they went, sites and rules
    redact_pii: bool = False  # --redact-pii: the summary counts the addresses redacted
    quality_filters: tuple[str, ...] | None = None  # --quality-filters: the filters computed
    excluded: str | None = None  # --excluded: where the pages left out are listed

    def asked(self, options: Options) -> RunSummary:
        """The summary, told what the options ask for that it reports (the quality filters,
        PII redaction)."""
        self.redact_pii = options.redact_pii
        if options.quality is not None:
            self.quality_filters = options.quality.names
            self.excluded = options.quality.excluded
        return self

    @property
    def scan(self) -> Tally:
        return total_tally(self.scan_files)

    @property
    def apply(self) -> Tally:
        return total_tally(self.apply_files)

    @property
    def files(self) -> list[Tally]:
        """Per input written in this run, the pass that read every record: pass 2 when it read
        the archive again (WARC output, the Spark engine), else pass 1; with pass 2's output."""
        scans = {t.path: t for t in self.scan_files}
        files = []
        for written in self.apply_files:
            scan = scans.get(written.path)
            if written.records or scan is None:
                files.append(written)
            else:  # a copy of pass 1's tally (its problems too), with pass 2's output
                files.append(replace(scan, output=written.output, problems=Counter(scan.problems)))
        return sorted(files, key=lambda t: t.path)

    @property
    def problems(self) -> Counter[str]:
        return total_tally(self.files).problems

    @property
    def outputs(self) -> list[str]:
        return sorted(escape_name(t.output) for t in self.apply_files if t.output)

    def duplicates(self) -> dict[str, Any] | None:
        """What --dedup did (None when off): the stage's groups, and the outputs' duplicate
        pages by kind, with those dropped (--dedup drop) and written as revisits."""
        if self.dedup is None:
            return None
        applied = self.apply
        return {
            "groups": self.dedup.get("groups", 0), "pages_searched": self.dedup.get("pages", 0),
            "exact": applied.duplicates_exact, "near": applied.duplicates_near,
            "dropped": {"exact": applied.dropped_duplicate_exact,
                        "near": applied.dropped_duplicate_near},
            "revisits": applied.revisits_written,
        }

    def pii_redacted(self) -> dict[str, int] | None:
        """What --redact-pii replaced in the text written, by kind (None when off)."""
        if not self.redact_pii:
            return None
        applied = self.apply
        return {"email": applied.pii_email, "ipv4": applied.pii_ipv4, "ipv6": applied.pii_ipv6}

    def quality(self) -> dict[str, Any] | None:
        """What --quality-filters found (None without it): the pages flagged and those left
        out (--drop-flagged), in all and per ``FILTER:REASON`` (a page flagged for two reasons
        counts under both)."""
        if self.quality_filters is None:
            return None
        applied = self.apply
        return {
            "filters": list(self.quality_filters),
            "pages_flagged": applied.pages_flagged,
            "flags": dict(sorted(applied.quality_flags.items())),
            "pages_dropped": applied.pages_dropped_quality,
            "dropped": dict(sorted(applied.quality_dropped.items())),
            "excluded": self.excluded,
        }

    def to_dict(self) -> dict[str, Any]:
        files = self.files
        total = total_tally(files)
        pii = self.pii_redacted()
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
            "lines_dropped_perplexity": self.apply.lines_dropped_perplexity,
            "lines_dropped_noise": self.apply.lines_dropped_noise,
            "pages_dropped_perplexity": self.apply.pages_dropped_perplexity,
            "pages_dropped_bucket": self.apply.pages_dropped_bucket,
            "repeated_blocks": self.fit.repeated_blocks,
            "template_slots": self.fit.template_slots,
            "duplicates": self.duplicates(),
            "url_rules": self.url_rules,
            **({"pii_redacted": pii} if pii is not None else {}),
            "quality": self.quality(),
            "problems": dict(sorted(total.problems.items())),
            "files": [t.to_dict() for t in files],
            "outputs": self.outputs,
        }
