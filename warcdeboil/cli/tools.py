"""``report``, ``recompress``, ``check`` and ``eval``: commands around a run."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Annotated

import typer

from warcdeboil.output.formats import OutputFormat
from warcdeboil.page.favor import Favor
from warcdeboil.site.clean import Mode

from .console import fail, print_summary, report_written, setup_logging, tally_summary
from .options import (
    DropHeadline,
    FavorOption,
    Inputs,
    JsonSummary,
    Quiet,
    Verbose,
    Workers,
    build_options,
    check_content_options,
    parse_codec,
)


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
    favor: Annotated[
        Favor | None, typer.Option("--favor", help="Content mode's setting to show (see clean "
                                   "--favor). Default: the run's.")
    ] = None,
    workers: Workers = 0,
    verbose: Verbose = False,
    quiet: Quiet = False,
) -> None:
    """Write the report of a finished run after the fact: static HTML, OUTPUT/index.html."""
    import os

    from warcdeboil.report import report_work_dir

    setup_logging(verbose, quiet)
    try:
        index_path = report_work_dir(work_dir, output, profiles_dir=profiles, mode=mode,
                                     workers=workers or os.cpu_count() or 1, favor=favor)
    except Exception as exc:
        fail(exc, verbose)
        return
    report_written(index_path, quiet)


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
    from warcdeboil.output.formats import OutputFormat as Format
    from warcdeboil.run.local import discover_inputs
    from warcdeboil.run.plan import check_writable, local_output_dir, plan_outputs
    from warcdeboil.warc.recompress import recompress_file

    setup_logging(verbose, quiet)
    codec = parse_codec(compress)
    try:
        out = local_output_dir(output)
        found = discover_inputs(inputs, exclude=out)
        planned = plan_outputs(found, out, Format.WARC, codec)
        check_writable(out)
        tallies = [recompress_file(plan.path, plan.output, codec) for plan in planned]
    except Exception as exc:
        fail(exc, verbose)
        return
    data = tally_summary(len(found), tallies)
    print_summary(data, quiet)
    if data["problems"]:
        raise typer.Exit(3)


def check(
    inputs: Inputs,
    json_summary: JsonSummary = False,
    verbose: Verbose = False,
    quiet: Quiet = False,
) -> None:
    """Check archives record by record, writing nothing: their structure and lengths, and the
    block and payload digests they declare.

    Each problem is one line on stderr (file@offset: reason) and is counted by reason. Exit
    status: 0 when every record is sound; 3 when some are not (or an input cannot be read);
    1 on an error that stops the check; 2 on a usage error.
    """
    from warcdeboil.errors import InputError
    from warcdeboil.run.local import discover_inputs
    from warcdeboil.warc.check import CheckReport, check_file
    from warcdeboil.warc.tally import reason_key

    setup_logging(verbose, quiet)
    try:
        found = discover_inputs(inputs)
        reports = []
        for path, _ in found:
            try:
                reports.append(check_file(str(path)))
            except InputError as exc:  # this input only: the others are still checked
                typer.echo(f"warcdeboil: error: {exc}", err=True)
                unread = CheckReport(str(path))
                unread.problems[reason_key(str(exc).split(": ", 1)[-1])] += 1
                reports.append(unread)
    except Exception as exc:
        fail(exc, verbose)
        return
    problems: Counter[str] = Counter()
    for report in reports:
        problems.update(report.problems)
    data = {"inputs": len(reports), "records": sum(r.records for r in reports),
            "digests": sum(r.digests for r in reports),
            "problems": dict(sorted(problems.items())),
            "files": [r.to_dict() for r in reports]}
    if json_summary:
        typer.echo(json.dumps(data, indent=2, sort_keys=True))
    elif not quiet:
        typer.echo(f"inputs        {data['inputs']:>12,}", err=True)
        typer.echo(f"records       {data['records']:>12,}   digests checked: "
                   f"{data['digests']:,}", err=True)
        typer.echo(f"problems      {sum(problems.values()):>12,}", err=True)
        for reason, count in sorted(problems.items()):
            typer.echo(f"  {count:>6,}  {reason}", err=True)
    if problems:
        raise typer.Exit(3)


def evaluate_command(
    inputs: Inputs,
    gold: Annotated[Path, typer.Option("--gold", help="Gold text, JSONL (.gz): url, site, gold.")],
    mode: Annotated[
        Mode, typer.Option("--mode", "-m", help="What to score: template removal or content.")
    ] = Mode.CONTENT,
    workers: Workers = 0,
    per_site: Annotated[bool, typer.Option("--per-site", help="One row per site.")] = False,
    json_report: Annotated[bool, typer.Option("--json", help="The report as JSON.")] = False,
    drop_headline: DropHeadline = False,
    favor: FavorOption = Favor.BALANCED,
    verbose: Verbose = False,
) -> None:
    """Clean archives to text and score it against gold text: token precision, recall, F1
    (the measure of ../shared/eval/README.md), overall, for sites with >= 5 pages, and the rest."""
    import tempfile

    from warcdeboil.evaluate import evaluate, load_gold, load_predictions
    from warcdeboil.run.local import clean as run_clean

    setup_logging(verbose, quiet=True)
    check_content_options(OutputFormat.JSONL, mode, drop_headline, favor)
    try:
        reference = load_gold(gold)
        with tempfile.TemporaryDirectory(prefix="warcdeboil-eval-") as out:
            options = build_options(format=OutputFormat.JSONL, mode=mode, workers=workers,
                                    max_iou=0.95, min_occurrence=1, drop_headline=drop_headline,
                                    favor=favor)
            summary = run_clean(inputs, out, options)
            written = sorted(Path(t.output) for t in summary.apply_files if t.output)
            report = evaluate(load_predictions(written), reference)
    except Exception as exc:
        fail(exc, verbose)
        return
    if json_report:
        typer.echo(json.dumps(report.to_dict(), indent=2, sort_keys=True))
    else:
        typer.echo(report.format_table(per_site=per_site))
