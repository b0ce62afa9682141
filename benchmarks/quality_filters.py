"""The quality filters of ``warcdeboil.corpus`` beside datatrove's: agreement on the same page
texts, the deliberate differences measured both ways, and the CPU of each.

    python benchmarks/quality_filters.py [ARCHIVE ...] [--repeat N] [--out FILE]

For every archive (by default every dataset of ``../shared/eval``), two texts of each page: its
gold text (``NAME.gold.jsonl.gz``) and the text warcdeboil itself extracts (``clean --mode
content --format jsonl``, run here in a child process with one worker). Each text goes through
datatrove's four filters with their default parameters (``GopherQualityFilter``,
``GopherRepetitionFilter``, ``C4QualityFilter``, ``FineWebQualityFilter``) and through ours,
both given the page's language (the JSONL's ``language``; for a gold text,
``warcdeboil.page.language.detect``): datatrove's filters split words with that language's
tokenizer (Sudachi for Japanese, jieba for Chinese...), as FineWeb-2 runs them; a language whose
tokenizer is not installed here stays English (the report names them). datatrove with English
for every page, its default, is measured as a variant.

Per filter, dataset and text: the pages each drops; the share of pages on which the two agree
(both keep or both drop); the F1 of the dropped pages, ours against datatrove's; the same
agreement on the pages not in Chinese, Japanese or Thai (where we count words by character, as
the language model does, and datatrove by its English tokenizer); the CPU a page of each.

**Variants**: each place where we read a paper otherwise than datatrove does, measured both
ways: our filter with the setting that reads it datatrove's way (or datatrove on the text
ours reads, where the difference is in what counts as a line), against datatrove's defaults.

**CPU**: our four filters together, a page at a time as a run would call them, on the JSONL
texts: in a fresh process's first pass over a dataset (the cache of words empty at the start)
and in a second pass; beside the CPU a page of the content run that wrote those texts
(``RUSAGE_CHILDREN`` of the child, start-up included). The least of ``--repeat`` rounds.

Needs the ``bench`` extra (datatrove, with spaCy, which its filters use to split English into
words and sentences, and ``regex``); nothing of it is needed to run warcdeboil.
"""

from __future__ import annotations

import argparse
import gzip
import json
import multiprocessing
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from warcdeboil.corpus import FILTERS, QualityFilters
from warcdeboil.corpus.config import config_from_mapping
from warcdeboil.page.language import detect

EVAL = Path(__file__).resolve().parents[1].parent / "shared" / "eval"
DATASETS = ("dragnet", "scrapinghub", "l3s-gn1", "cleaneval", "cleanportaleval")
UNSPACED_LANGUAGES = {"zh", "ja", "th", "lo", "km", "my"}
TARGET_AGREEMENT, TARGET_F1 = 0.99, 0.90

# Our settings that read a paper datatrove's way, each with what it changes.
VARIANTS: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "gopher_quality": [
        ("stop words only as listed (datatrove: lower case only)",
         {"stop_words_any_case": False}),
    ],
    "gopher_repetition": [
        ("duplicate n-grams: every word any repeat covers (the paper's other reading)",
         {"dup_ngrams_union": True}),
        ("n-grams of a character a word in Chinese, Japanese, Thai "
         "(unspaced_chars_per_word = 1)", {"unspaced_chars_per_word": 1}),
    ],
    "c4_quality": [
        ("typographic closing quotes end a line too (”, ’)", {"end_marks": ".!?\"'”’"}),
    ],
    "fineweb_quality": [
        ("char_dup_ratio 0.1 (section 3.6; appendix and datatrove: 0.01)",
         {"max_char_dup_ratio": 0.1}),
        ("lines of 30 characters are short too (datatrove: <= 30; the paper: shorter than 30)",
         {"short_line_length": 31}),
    ],
}


def _without_blank_lines(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if line.strip())


def _without_trailing_space(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.split("\n"))


# datatrove on the text as our filter reads its lines, where we count lines otherwise.
REFERENCE_VARIANTS: dict[str, list[tuple[str, Callable[[str], str]]]] = {
    "gopher_quality": [
        ("datatrove on the text without blank lines (we do not count them as lines for the "
         "bullet and ellipsis ratios)", _without_blank_lines),
    ],
    "fineweb_quality": [
        ("datatrove on lines without trailing white space (we do not let it hide a final "
         "mark)", _without_trailing_space),
    ],
}


@dataclass
class Page:
    url: str
    text: str
    language: str


@dataclass
class Verdicts:
    """A filter's verdict on each page: ``None`` keeps it, else the reasons to drop it."""

    reasons: list[list[str] | None] = field(default_factory=list)
    cpu: float = 0.0  # seconds

    def dropped(self) -> list[bool]:
        return [r is not None for r in self.reasons]


def agreement(ours: list[bool], theirs: list[bool], keep: list[bool] | None = None
              ) -> tuple[float, float, int]:
    """Share of pages agreeing, F1 of the dropped ones (ours against theirs), pages counted."""
    pairs = [(o, t) for i, (o, t) in enumerate(zip(ours, theirs, strict=True))
             if keep is None or keep[i]]
    if not pairs:
        return 1.0, 1.0, 0
    agree = sum(o == t for o, t in pairs)
    tp = sum(o and t for o, t in pairs)
    fp = sum(o and not t for o, t in pairs)
    fn = sum(t and not o for o, t in pairs)
    f1 = 1.0 if tp + fp + fn == 0 else 2 * tp / (2 * tp + fp + fn)
    return agree / len(pairs), f1, len(pairs)


# --- the texts --------------------------------------------------------------------------------


def gold_pages(archive: Path) -> list[Page]:
    gold = archive.with_name(archive.name.replace(".warc.gz", ".gold.jsonl.gz"))
    with gzip.open(gold, "rt", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    return [Page(row["url"], row["gold"], detect(row["gold"])) for row in rows]


def content_run(archive: Path, out: Path, repeat: int) -> tuple[list[Page], float]:
    """The JSONL pages of a content-mode run, and the least CPU of ``repeat`` runs a page."""
    cpu = []
    for round_ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([sys.executable, "-m", "warcdeboil", "clean", str(archive), "-o",
                        str(out / str(round_)), "-f", "jsonl", "--mode", "content", "-j", "1",
                        "-q"], check=True, env={**os.environ})
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    pages = []
    for path in sorted((out / "0").rglob("*.jsonl.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            for line in fh:
                row = json.loads(line)
                pages.append(Page(row["url"], row["text"], row.get("language") or ""))
    return pages, min(cpu) / max(len(pages), 1)


# --- the two implementations ------------------------------------------------------------------


def datatrove_filters() -> dict[str, Any]:
    try:
        from datatrove.data import Document  # noqa: F401
        from datatrove.pipeline.filters import (
            C4QualityFilter,
            FineWebQualityFilter,
            GopherQualityFilter,
            GopherRepetitionFilter,
        )
        from loguru import logger
    except ImportError as exc:
        sys.exit(f"datatrove is needed: python -m pip install -e '.[bench]' ({exc})")
    logger.remove()  # datatrove logs through loguru; its warnings would fill the output
    return {"gopher_quality": GopherQualityFilter(), "gopher_repetition": GopherRepetitionFilter(),
            "c4_quality": C4QualityFilter(), "fineweb_quality": FineWebQualityFilter()}


def run_datatrove(dt_filter: Any, pages: list[Page],
                  transform: Callable[[str], str] | None = None) -> Verdicts:
    from datatrove.data import Document

    verdicts = Verdicts()
    start = time.process_time()
    for i, page in enumerate(pages):
        text = transform(page.text) if transform else page.text
        result = dt_filter.filter(Document(text=text, id=str(i)))
        verdicts.reasons.append(None if result is True else [str(result[1])])
    verdicts.cpu = time.process_time() - start
    return verdicts


def run_datatrove_by_language(name: str, pages: list[Page], default: Verdicts,
                              made: dict[tuple[str, str], Any]) -> tuple[Verdicts, set[str]]:
    """datatrove's verdicts with each page's own language, as FineWeb-2 runs it (English pages
    keep the default verdicts); the languages whose tokenizer is not installed stay English."""
    from datatrove.data import Document
    from datatrove.pipeline import filters as dt
    from datatrove.utils.word_tokenizers import load_word_tokenizer

    classes = {"gopher_quality": dt.GopherQualityFilter,
               "gopher_repetition": dt.GopherRepetitionFilter,
               "c4_quality": dt.C4QualityFilter, "fineweb_quality": dt.FineWebQualityFilter}
    verdicts = Verdicts(list(default.reasons), default.cpu)
    missing: set[str] = set()
    for i, page in enumerate(pages):
        if page.language in ("", "en"):
            continue
        key = (name, page.language)
        if key not in made:
            try:
                load_word_tokenizer(page.language).word_tokenize("A test. Of words.")
                made[key] = classes[name](language=page.language)
            except Exception:  # noqa: BLE001 - a tokenizer datatrove cannot load here
                made[key] = None
        if made[key] is None:
            missing.add(page.language)
            continue
        result = made[key].filter(Document(text=page.text, id=str(i)))
        verdicts.reasons[i] = None if result is True else [str(result[1])]
    return verdicts, missing


def run_ours(name: str, pages: list[Page], settings: Mapping[str, Any] | None = None,
             filters: QualityFilters | None = None) -> Verdicts:
    if filters is None:
        config = config_from_mapping({name: dict(settings or {})}, "variant")
        filters = QualityFilters(config, names=(name,))
    verdicts = Verdicts()
    for page in pages:
        reasons = filters.reasons(page.text, page.language)[name]
        verdicts.reasons.append(reasons or None)
    start = time.process_time()  # a second pass, timed: the cache of words filled
    for page in pages:
        filters.reasons(page.text, page.language)
    verdicts.cpu = time.process_time() - start
    return verdicts


def one_stream(runs: list[tuple[list[Page], float]], repeat: int) -> tuple[float, float]:
    """CPU a page of the four filters over every dataset's texts in one process, one after the
    other, as a run's worker meets pages (the cache of words filling as it goes), and of the
    content runs that wrote them."""
    pages = [page for texts, _ in runs for page in texts]
    run_cpu = sum(cpu * len(texts) for texts, cpu in runs)
    best = []
    for _ in range(repeat):
        filters = QualityFilters()
        start = time.process_time()
        for page in pages:
            filters.flags(page.text, page.language)
        best.append(time.process_time() - start)
    return min(best) / len(pages), run_cpu / len(pages)


def four_together(pages: list[Page], repeat: int) -> tuple[float, float]:
    """CPU a page of the four filters: a fresh process's first pass, and a second pass."""
    first, second = [], []
    for _ in range(repeat):
        filters = QualityFilters()
        for passes in (first, second):
            start = time.process_time()
            for page in pages:
                filters.flags(page.text, page.language)
            passes.append((time.process_time() - start) / max(len(pages), 1))
    return min(first), min(second)


# --- the report -------------------------------------------------------------------------------


def pct(x: float) -> str:
    return f"{x:.3f}"


@dataclass
class Measured:
    """What one dataset gives the report (made in a worker process with ``--jobs``)."""

    runs: tuple[list[Page], float]
    cpu_row: str
    tables: dict[str, list[str]]
    disagreements: list[str]
    variant_rows: list[str]
    unloaded: set[str]


def measure_dataset(archive: Path, repeat: int, tmp: str) -> Measured:
    """Every filter of one dataset, its gold and its JSONL texts, with their variants."""
    reference = datatrove_filters()
    by_language_filters: dict[tuple[str, str], Any] = {}
    tables: dict[str, list[str]] = {name: [] for name in FILTERS}
    disagreements: list[str] = []
    variant_rows: list[str] = []
    unloaded: set[str] = set()
    dataset = archive.name.replace(".warc.gz", "")
    print(f"{dataset}: content run", file=sys.stderr, flush=True)
    jsonl, run_cpu = content_run(archive, Path(tmp) / dataset, repeat)
    texts = {"gold": gold_pages(archive), "jsonl": jsonl}
    first, second = four_together(jsonl, repeat)
    cpu_row = (f"| {dataset} | {len(jsonl)} | {run_cpu * 1e3:.2f} | "
               f"{first * 1e6:.0f} ({first / run_cpu:.1%}) | "
               f"{second * 1e6:.0f} ({second / run_cpu:.1%}) |")
    for source, pages in texts.items():
        spaced = [p.language not in UNSPACED_LANGUAGES for p in pages]
        for name in FILTERS:
            print(f"{dataset} {source} {name}", file=sys.stderr, flush=True)
            english = run_datatrove(reference[name], pages)
            theirs, missing = run_datatrove_by_language(name, pages, english,
                                                        by_language_filters)
            unloaded.update(missing)
            ours = run_ours(name, pages)
            agree, f1, _ = agreement(ours.dropped(), theirs.dropped())
            agree_spaced, _, counted = agreement(ours.dropped(), theirs.dropped(), spaced)
            met = "" if agree >= TARGET_AGREEMENT and f1 >= TARGET_F1 else " ✗"
            tables[name].append(
                f"| {dataset} | {source} | {len(pages)} | {sum(theirs.dropped())} | "
                f"{sum(ours.dropped())} | {pct(agree)} | {f1:.2f}{met} | "
                f"{pct(agree_spaced)} ({counted}) | "
                f"{theirs.cpu / len(pages) * 1e6:.0f} | "
                f"{ours.cpu / len(pages) * 1e6:.0f} |")
            for page, t, o in zip(pages, theirs.reasons, ours.reasons, strict=True):
                if (t is None) != (o is None):
                    disagreements.append(
                        f"| {name} | {dataset} {source} | {page.language or '-'} | "
                        f"{page.url} | {', '.join(t or ['keep'])} | "
                        f"{', '.join(o or ['keep'])} |")
            for label, settings in VARIANTS.get(name, []):
                variant = run_ours(name, pages, settings)
                v_agree, v_f1, _ = agreement(variant.dropped(), theirs.dropped())
                variant_rows.append(
                    f"| {name} | {label} | {dataset} {source} | {pct(agree)} / {f1:.2f} "
                    f"| {pct(v_agree)} / {v_f1:.2f} |")
            v_agree, v_f1, _ = agreement(ours.dropped(), english.dropped())
            variant_rows.append(
                f"| {name} | datatrove with English for every page (its default) | "
                f"{dataset} {source} | {pct(agree)} / {f1:.2f} "
                f"| {pct(v_agree)} / {v_f1:.2f} |")
            for label, transform in REFERENCE_VARIANTS.get(name, []):
                other = run_datatrove(reference[name], [
                    Page(p.url, transform(p.text), p.language) for p in pages])
                other, _ = run_datatrove_by_language(
                    name, [Page(p.url, transform(p.text), p.language) for p in pages],
                    other, by_language_filters)
                v_agree, v_f1, _ = agreement(ours.dropped(), other.dropped())
                variant_rows.append(
                    f"| {name} | {label} | {dataset} {source} | {pct(agree)} / {f1:.2f} "
                    f"| {pct(v_agree)} / {v_f1:.2f} |")

    return Measured((jsonl, run_cpu), cpu_row, tables, disagreements, variant_rows,
                    unloaded)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("archives", nargs="*", type=Path,
                        default=[EVAL / f"{name}.warc.gz" for name in DATASETS])
    parser.add_argument("--repeat", type=int, default=3,
                        help="rounds of each CPU measure; the least is kept (default 3)")
    parser.add_argument("--out", type=Path, help="write the Markdown report here too")
    parser.add_argument("--jobs", type=int, default=1,
                        help="datasets measured at once, each in a process of its own")
    args = parser.parse_args()

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from peers import recorded_command

    datatrove_filters()  # that datatrove is there, before any dataset is measured
    lines: list[str] = []
    say = lines.append
    disagreements: list[str] = []
    variant_rows: list[str] = []
    cpu_rows: list[str] = []
    tables: dict[str, list[str]] = {name: [] for name in FILTERS}
    runs: list[tuple[list[Page], float]] = []
    unloaded: set[str] = set()  # languages datatrove could not split here: English for them
    with tempfile.TemporaryDirectory() as tmp:
        measure = partial(measure_dataset, repeat=args.repeat, tmp=tmp)
        if args.jobs > 1:
            with multiprocessing.get_context("spawn").Pool(args.jobs) as pool:
                measured = pool.map(measure, args.archives, chunksize=1)
        else:
            measured = list(map(measure, args.archives))
    for done in measured:
        runs.append(done.runs)
        cpu_rows.append(done.cpu_row)
        for name in FILTERS:
            tables[name].extend(done.tables[name])
        disagreements.extend(done.disagreements)
        variant_rows.extend(done.variant_rows)
        unloaded.update(done.unloaded)

    import spacy

    say("# Quality filters beside datatrove's")
    say("")
    say(f"`{recorded_command('benchmarks/quality_filters.py', sys.argv[1:])}`")
    say("")
    say(f"datatrove {_version('datatrove')}, "
        f"spaCy {spacy.__version__}, Python {platform.python_version()}, {platform.machine()}. "
        f"Targets (issue 37): agreement >= {TARGET_AGREEMENT} of pages and F1 of the dropped "
        f"pages >= {TARGET_F1} on every dataset, for every filter (✗: missed). Both given "
        f"each page's language; datatrove splits it with that language's tokenizer"
        + (f" (not installed here, so English: {', '.join(sorted(unloaded))})" if unloaded
           else "") + ".")
    header = ("| dataset | text | pages | datatrove drops | we drop | agreement | F1 dropped | "
              "agreement, not zh/ja/th (pages) | datatrove µs/page | ours µs/page, alone |")
    for name in FILTERS:
        say("")
        say(f"## {name}")
        say("")
        say(header)
        say("|---|---|---|---|---|---|---|---|---|---|")
        lines.extend(tables[name])
    say("")
    say("Ours alone: that filter by itself, splitting the words it needs (the four together "
        "split them once), in a second pass over the texts.")
    say("")
    say("## CPU of the four together")
    say("")
    say("| dataset | pages | content run, ms/page | four filters, first pass, µs/page (of the "
        "run) | second pass |")
    say("|---|---|---|---|---|")
    lines.extend(cpu_rows)
    stream, stream_run = one_stream(runs, args.repeat)
    say(f"| all, one stream | {sum(len(texts) for texts, _ in runs)} | {stream_run * 1e3:.2f} | "
        f"{stream * 1e6:.0f} ({stream / stream_run:.1%}) | |")
    say("")
    say("One stream: every dataset's texts through one set of filters in one process, in the "
        "order above, as a worker of a run meets pages; beside the content runs' CPU for the "
        "same pages.")
    say("")
    say("## Variants: each reading measured both ways")
    say("")
    say("| filter | variant | texts | ours (agreement / F1) | variant (agreement / F1) |")
    say("|---|---|---|---|---|")
    lines.extend(variant_rows)
    say("")
    say("## Pages where the verdicts differ (default parameters)")
    say("")
    say("| filter | texts | language | page | datatrove | ours |")
    say("|---|---|---|---|---|---|")
    lines.extend(disagreements)
    report = "\n".join(lines) + "\n"
    print(report)
    if args.out:
        args.out.write_text(report, encoding="utf-8")


def _version(package: str) -> str:
    from importlib.metadata import version

    return version(package)


if __name__ == "__main__":
    main()
