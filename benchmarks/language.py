"""Language identification measured on the pages of ../shared whose language is known.

    python benchmarks/language.py [--shared ../shared] [--errors]

Two measures, against ``benchmarks/language_truth.json`` (each set's language, and the pages that
differ from it, read by hand):

- **gold**: :func:`warcdeboil.page.language.identify` on the human-cut main text of every page
  of the five evaluation sets (``../shared/eval/*.gold.jsonl.gz``): the identifier alone.
- **output**: the ``language`` field of ``warcdeboil clean --format jsonl`` over
  ``../shared/eval`` and ``../shared/warcs``: what a user gets, page text as extracted.

A page counts as right when the answer is its language, unsure when the answer is null, wrong
otherwise; accuracy is right / pages. Pages whose text has no letter are left out. The speed is
CPU µs per page of ``identify`` on the extracted texts of dragnet (best of 7 passes).
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import least_cpu  # noqa: E402  (this folder's)

from warcdeboil.output.formats import OutputFormat
from warcdeboil.page.language import identify
from warcdeboil.run.local import clean
from warcdeboil.run.options import Options

HERE = Path(__file__).resolve().parent
TRUTH = HERE / "language_truth.json"


@dataclass
class Page:
    """One page of known language: where it is from, its text, its language."""

    group: str  # the evaluation set or the archive's file name
    url: str
    text: str
    truth: str


@dataclass
class Score:
    """Right, unsure and wrong answers over a group of pages."""

    right: int = 0
    unsure: int = 0
    wrong: list[tuple[str, str, str, float]] = field(default_factory=list)

    @property
    def pages(self) -> int:
        return self.right + self.unsure + len(self.wrong)

    @property
    def accuracy(self) -> float:
        return self.right / self.pages if self.pages else 0.0

    def add(self, page: Page, language: str | None, confidence: float) -> None:
        if language == page.truth:
            self.right += 1
        elif not language:
            self.unsure += 1
        else:
            self.wrong.append((page.url, page.truth, language, confidence))


def truth_table() -> dict[str, dict[str, dict]]:
    with TRUTH.open(encoding="utf-8") as fh:
        return json.load(fh)


def _language(table: dict[str, dict], group: str, url: str) -> str:
    entry = table.get(group) or table["*"]
    return entry["pages"].get(url, entry["default"])


def _has_letters(text: str) -> bool:
    return any(ch.isalpha() for ch in text)


def _repaired(gold: str) -> str:
    """Five dragnet gold texts are UTF-16 bytes read as Latin-1 (a BOM, then NULs): undone."""
    if not gold.startswith("ÿþ"):
        return gold
    # Bytes 0x80-0x9F were read as Windows-1252 letters (" as 0x1C 0x20, ’ as 0x19 0x20...).
    raw = bytes(ord(ch) if ord(ch) < 256 else ch.encode("cp1252", "replace")[0] for ch in gold)
    return raw.decode("utf-16", "replace")


def gold_pages(shared: Path) -> Iterator[Page]:
    """The gold texts of ../shared/eval, with their language."""
    table = truth_table()["eval"]
    for name in table:
        with gzip.open(shared / "eval" / f"{name}.gold.jsonl.gz", "rt", encoding="utf-8") as fh:
            for line in fh:
                obj = json.loads(line)
                text = _repaired(obj["gold"])
                if _has_letters(text):
                    yield Page(name, obj["url"], text, _language(table, name, obj["url"]))


def output_pages(out_dir: Path) -> Iterator[tuple[Page, str | None, float]]:
    """The JSONL written for ../shared/eval and ../shared/warcs, with each page's language."""
    truth = truth_table()
    # The JSONL outputs, not the records of their options beside them (.NAME.options.json).
    for path in sorted(p for p in out_dir.rglob("*.jsonl*")
                       if p.name.endswith((".jsonl", ".jsonl.gz"))):
        stem = path.name.split(".jsonl")[0]
        if stem in truth["eval"]:
            group, table = stem, truth["eval"]
        else:
            group = next((f for f in truth["warcs"] if f.split(".")[0] == stem), "*")
            table = truth["warcs"]
        opener = gzip.open if path.name.endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8") as fh:
            for line in fh:
                obj = json.loads(line)
                if _has_letters(obj["text"]):
                    page = Page(stem, obj["url"], obj["text"], _language(table, group, obj["url"]))
                    yield page, obj["language"], obj["language_confidence"]


def score(results: Iterable[tuple[Page, str | None, float]]) -> dict[str, Score]:
    """Scores by group, by language (``lang:xx``), over the pages not in English (``not en``)
    and over all pages (``all``)."""
    scores: dict[str, Score] = {}
    for page, language, confidence in results:
        other = ("not en",) if page.truth != "en" else ()
        for key in (page.group, f"lang:{page.truth}", "all", *other):
            scores.setdefault(key, Score()).add(page, language, confidence)
    return scores


def score_gold(shared: Path) -> dict[str, Score]:
    def answers() -> Iterator[tuple[Page, str | None, float]]:
        for page in gold_pages(shared):
            guess = identify(page.text)
            yield page, guess.language, guess.confidence
    return score(answers())


def microseconds_per_page(texts: list[str], passes: int = 7) -> float:
    def identify_all() -> None:
        for text in texts:
            identify(text)

    return least_cpu(identify_all, passes) / len(texts) * 1e6  # CPU: the machine is shared


def report(title: str, scores: dict[str, Score], errors: bool) -> None:
    print(f"\n{title}\n")
    print("| pages | n | right | unsure | wrong | accuracy |")
    print("|---|---|---|---|---|---|")
    for key in sorted(scores, key=lambda k: (k in ("all", "not en"), k.startswith("lang:"), k)):
        s = scores[key]
        print(f"| {key} | {s.pages} | {s.right} | {s.unsure} | {len(s.wrong)} | "
              f"{s.accuracy:.3f} |")
    if errors:
        for url, truth, answer, confidence in scores["all"].wrong:
            print(f"  wrong: {url} is {truth}, answered {answer} ({confidence:.2f})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shared", type=Path, default=HERE.parent.parent / "shared")
    parser.add_argument("--errors", action="store_true", help="list the wrong answers")
    args = parser.parse_args(argv)
    report("gold texts of ../shared/eval", score_gold(args.shared), args.errors)
    with tempfile.TemporaryDirectory(prefix="warcdeboil-language-") as tmp:
        out = Path(tmp)
        clean([args.shared / "eval", args.shared / "warcs"], out,
              Options(format=OutputFormat.JSONL, workers=1))
        report("`language` of `warcdeboil clean --format jsonl` on ../shared/eval and "
               "../shared/warcs", score(output_pages(out)), args.errors)
        with gzip.open(out / "dragnet.jsonl.gz", "rt", encoding="utf-8") as fh:
            texts = [json.loads(line)["text"] for line in fh]
    print(f"\nidentify: {microseconds_per_page(texts):.1f} µs a page "
          f"(dragnet's {len(texts)} extracted texts, best of 7)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
