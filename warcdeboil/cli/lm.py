"""The language-model commands: ``warcdeboil lm train`` and ``warcdeboil perplexity``.

Registered by ``cli``; numpy and the model are imported inside the commands, so that every
other command starts without them.
"""

from __future__ import annotations

import io
import json
import logging
import sys
import time
from collections.abc import Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import Annotated

import typer

from warcdeboil.errors import WarcDeboilError

__all__ = ["lm_app", "perplexity"]

lm_app = typer.Typer(no_args_is_help=True, add_completion=False,
                     help="Train an n-gram language model of the crawl (perplexity scores).")

ModelPath = Annotated[Path, typer.Option("--model", "-m", help="Model file (lm train), or ARPA.")]
Verbose = Annotated[bool, typer.Option("--verbose", "-v", help="Log details; show tracebacks.")]
LINES_A_BATCH = 10_000  # lines scored together: one numpy pass each, memory bounded


def _fail(exc: BaseException, verbose: bool) -> None:
    if verbose:
        raise exc
    typer.echo(f"warcdeboil: error: {exc}", err=True)
    raise typer.Exit(1)


def _parse_counts(text: str) -> tuple[int, ...]:
    try:
        counts = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise typer.BadParameter(f"{text!r}: give counts like 1,2,2",
                                 param_hint="--min-count") from None
    if not counts or min(counts) < 1:
        raise typer.BadParameter("counts are at least 1", param_hint="--min-count")
    return counts


@lm_app.command()
def train(
    inputs: Annotated[list[str], typer.Argument(
        help="Archives or directories (their pages' main content), JSONL files (a text field), "
             "or plain text files, one sentence a line (- for standard input).")],
    output: Annotated[Path, typer.Option("--output", "-o", help="The model file to write.")],
    order: Annotated[int, typer.Option("--order", min=1, max=8, help="n of the n-grams.")] = 3,
    capacity: Annotated[int, typer.Option(
        "--capacity", min=1024, help="Entries a count table holds (memory: 32 bytes each, an "
        "order); rarer n-grams are pruned beyond it.")] = 1 << 22,
    vocabulary: Annotated[int, typer.Option(
        "--vocabulary", min=16, help="Units the vocabulary holds; rarer ones are pruned "
        "beyond it and read as <unk>.")] = 1 << 20,
    min_count: Annotated[str, typer.Option(
        "--min-count", help="Adjusted counts an n-gram needs to be kept, by order "
        "(the last repeats).")] = "1,2,2",
    arpa: Annotated[
        Path | None, typer.Option("--arpa", help="Also write the model as ARPA.")
    ] = None,
    workers: Annotated[int, typer.Option("--workers", "-j", min=0,
                                         help="Processes cleaning archives (0: all cores).")] = 0,
    json_report: Annotated[bool, typer.Option("--json", help="The summary as JSON.")] = False,
    verbose: Verbose = False,
) -> None:
    """Train a Kneser-Ney language model on the text of INPUTs and write it to OUTPUT."""
    from warcdeboil.lm import LanguageModel
    from warcdeboil.lm.arpa import write_arpa
    from warcdeboil.lm.sources import TextSources

    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    floors = _parse_counts(min_count)
    started = time.process_time()
    sources = TextSources(inputs, partial(_clean_archives, workers=workers))
    try:
        model = LanguageModel.train(sources, order=order, capacity=capacity,
                                    vocabulary=vocabulary, min_counts=floors)
        model.save(output)
        if arpa is not None:
            write_arpa(model, arpa)
    except (WarcDeboilError, OSError) as exc:
        _fail(exc, verbose)
        return
    report = {
        "model": str(output), "bytes": output.stat().st_size, "units": model.info["units"],
        "ngrams": [len(level) for level in model.levels], "skipped_lines": sources.skipped,
        "archive_problems": sources.problems,
        "cpu_seconds": round(time.process_time() - started, 2),
        "pruned_below": model.info["pruned_below"], "peak_mb": _peak_mb(),
    }
    if json_report:
        typer.echo(json.dumps(report, indent=2))
    else:
        typer.echo(f"{output}: {report['units']:,} units, n-grams by order "
                   f"{', '.join(f'{n:,}' for n in report['ngrams'])}, "
                   f"{report['bytes'] / 1e6:.1f} MB")
    if sources.skipped or sources.problems:
        raise typer.Exit(3)  # as clean: the model is written, some input could not be read


def _clean_archives(paths: Sequence[str], out_dir: str, *, workers: int) -> int:
    """Archives cleaned to uncompressed JSONL in content mode (the text ``lm train`` learns
    from); the problems counted."""
    from warcdeboil.output.formats import OutputFormat
    from warcdeboil.run.local import clean
    from warcdeboil.run.options import Options
    from warcdeboil.site.clean import Mode
    from warcdeboil.warc.compression import Codec

    options = Options(format=OutputFormat.JSONL, mode=Mode.CONTENT, compress=Codec.NONE,
                      workers=workers)
    summary = clean(paths, out_dir, options)
    return sum(summary.problems.values())


def _peak_mb() -> float:
    """This process's peak resident memory: VmHWM on Linux (ru_maxrss would count what a
    parent held when it forked us), else ru_maxrss."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    import resource

    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def perplexity(
    model: ModelPath,
    text: Annotated[str, typer.Argument(help="Text to score, one sentence a line; - or "
                                             "nothing: read standard input.")] = "-",
    verbose: Verbose = False,
) -> None:
    """Print the perplexity of each line of TEXT under the model, one score a line (an empty
    line for a line with nothing to score)."""
    from warcdeboil.lm import LanguageModel

    try:
        scorer = LanguageModel.load(model)
    except (WarcDeboilError, OSError) as exc:
        _fail(exc, verbose)
        return
    if text != "-":
        lines: Iterator[str] = iter(text.split("\n"))
    else:
        stdin = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")
        lines = (line.rstrip("\r\n") for line in stdin)
    batch: list[str] = []
    for line in lines:
        batch.append(line)
        if len(batch) == LINES_A_BATCH:
            _print_scores(scorer, batch)
            batch = []
    if batch:
        _print_scores(scorer, batch)


def _print_scores(scorer: object, lines: list[str]) -> None:
    scores = scorer.line_perplexities(lines)  # type: ignore[attr-defined]
    # A line with nothing to score (empty, blank) gets an empty line: one line out per line in.
    sys.stdout.write("".join("\n" if score is None else f"{score:.2f}\n" for score in scores))
