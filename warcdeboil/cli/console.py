"""What the commands print: progress bars, the summary, and one line for an error."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Any

import typer

from warcdeboil.errors import WarcDeboilError


class ProgressBars:
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

    def __enter__(self) -> ProgressBars:
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


def setup_logging(verbose: bool, quiet: bool = False) -> None:
    # Each bad record is one WARNING line (file@offset: reason); -q keeps only errors.
    logging.basicConfig(
        level=logging.INFO if verbose else logging.ERROR if quiet else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )


def fail(exc: Exception, verbose: bool) -> None:
    """One line on stderr and exit status 1 (2 for a plan refused: a usage error); with -v, the
    traceback instead."""
    if verbose or isinstance(exc, _typer_exceptions()):
        raise exc
    from warcdeboil.errors import PlanError

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


def print_summary(data: dict[str, Any], quiet: bool, pages: str = "cleaned pages") -> None:
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
    # The language model's line filters (--max-line-noise, --max-line-perplexity).
    noise, perplexity = data.get("lines_dropped_noise", 0), data.get("lines_dropped_perplexity", 0)
    if noise or perplexity:
        lines.append(f"lines dropped {noise + perplexity:>12,}   noise: {noise:,}, "
                     f"perplexity: {perplexity:,}")
    pii = data.get("pii_redacted")
    if pii is not None:
        lines.append(f"PII redacted  {sum(pii.values()):>12,}   e-mail: {pii['email']:,}, "
                     f"IPv4: {pii['ipv4']:,}, IPv6: {pii['ipv6']:,}")
    rules = data.get("url_rules")
    if rules:
        lines.append(f"URL rules     {rules['rules']:>12,}   sites: {rules['sites']:,} "
                     f"(crawl-level: {rules['crawl_rules']:,}) → {rules['path']}")
    lines.extend(quality_lines(data.get("quality")))
    problems = data.get("problems")
    if problems is not None:
        lines.append(f"problems      {sum(problems.values()):>12,}")
        lines.extend(f"  {count:>6,}  {reason}" for reason, count in sorted(problems.items()))
    for line in lines:
        typer.echo(line, err=True)


def quality_lines(quality: dict[str, Any] | None) -> list[str]:
    """The summary's lines of --quality-filters: pages flagged and dropped, per flag."""
    if not quality:
        return []
    lines = [f"quality flags {quality['pages_flagged']:>12,}   pages flagged by "
             f"{', '.join(quality['filters'])}"]
    lines.extend(f"  {count:>6,}  {flag}" for flag, count in quality["flags"].items())
    if quality["pages_dropped"] or quality["dropped"]:
        where = f" → {quality['excluded']}" if quality.get("excluded") else ""
        lines.append(f"quality drops {quality['pages_dropped']:>12,}   pages left out "
                     f"(--drop-flagged){where}")
        lines.extend(f"  {count:>6,}  {flag}" for flag, count in quality["dropped"].items())
    return lines


def tally_summary(inputs: int, tallies: list[Any]) -> dict[str, Any]:
    from warcdeboil.warc.tally import Tally

    total = Tally()
    for tally in tallies:
        total.merge(tally)
    return {
        "inputs": inputs, "records": total.records, "pages": total.cleaned,
        "carried": total.carried, "skipped": total.skipped,
        "html_bytes_before": total.html_bytes_before, "html_bytes_after": total.html_bytes_after,
        "text_chars": total.text_chars, "pages_indexed": total.indexed,
        "lines_dropped_perplexity": total.lines_dropped_perplexity,
        "lines_dropped_noise": total.lines_dropped_noise,
        "pages_dropped_perplexity": total.pages_dropped_perplexity,
        "pages_dropped_bucket": total.pages_dropped_bucket,
        "problems": dict(sorted(total.problems.items())),
        "files": [t.to_dict() for t in sorted(tallies, key=lambda t: t.path)],
        "outputs": sorted(t.output for t in tallies if t.output),
    }


def report_summary(data: dict[str, Any], json_summary: bool, quiet: bool,
                   pages: str = "cleaned pages") -> None:
    """The summary as JSON on stdout (``--json``), else as text on stderr (unless quiet)."""
    if json_summary:
        typer.echo(json.dumps(data, indent=2, sort_keys=True))
    print_summary(data, quiet or json_summary, pages)


def finish(data: dict[str, Any], json_summary: bool, quiet: bool,
            pages: str = "cleaned pages") -> None:
    """The summary of a run that read records, then exit status 3 if some had problems."""
    report_summary(data, json_summary, quiet, pages)
    if data["problems"]:
        raise typer.Exit(3)


def report_written(index_path: Path, quiet: bool) -> None:
    if not quiet:
        typer.echo(f"report        {index_path}", err=True)
