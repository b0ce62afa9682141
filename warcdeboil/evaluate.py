"""Token precision/recall/F1 of cleaned text against human gold text.

The measure of dragnet and the web-content-extraction benchmarks, as ``../shared/eval/README.md``
defines it: lower-case, tokens are ``\\w+`` (Unicode), bag of tokens with multiplicity, averaged
over pages. A page with empty output scores 0; a gold page with no output scores as empty. A page
whose gold text has no token scores 1 when the output has none either, else precision 0 and
recall 1 (such pages are rare; they are counted, not dropped).
"""

from __future__ import annotations

import gzip
import json
import math
import os
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .errors import InputError

__all__ = [
    "GoldPage",
    "Report",
    "Score",
    "Summary",
    "evaluate",
    "load_gold",
    "load_predictions",
    "score_text",
    "tokenize",
]

_TOKEN = re.compile(r"\w+")


@dataclass(frozen=True, slots=True)
class Score:
    precision: float
    recall: float
    f1: float


@dataclass(frozen=True, slots=True)
class GoldPage:
    url: str
    site: str
    dataset: str
    id: str
    gold: str


@dataclass(frozen=True, slots=True)
class Summary:
    """Mean scores over a group of pages (NaN means for an empty group)."""

    pages: int
    precision: float
    recall: float
    f1: float


def tokenize(text: str) -> Counter[str]:
    """The bag of lower-cased ``\\w+`` tokens.

    >>> sorted(tokenize("The cat, the HAT — 北京!").items())
    [('cat', 1), ('hat', 1), ('the', 2), ('北京', 1)]
    """
    return Counter(_TOKEN.findall(text.lower()))


def score_text(predicted: str, gold: str) -> Score:
    """Token precision, recall and F1 of one page.

    >>> score_text("a b c d", "a b x")
    Score(precision=0.5, recall=0.6666666666666666, f1=0.5714285714285715)
    """
    got, want = tokenize(predicted), tokenize(gold)
    n_got, n_want = sum(got.values()), sum(want.values())
    if not n_want:
        return Score(1.0, 1.0, 1.0) if not n_got else Score(0.0, 1.0, 0.0)
    if not n_got:
        return Score(0.0, 0.0, 0.0)
    common = sum((got & want).values())
    precision, recall = common / n_got, common / n_want
    f1 = 2 * precision * recall / (precision + recall) if common else 0.0
    return Score(precision, recall, f1)


def _open_lines(path: str | os.PathLike[str]) -> Iterable[tuple[int, str]]:
    name = os.fspath(path)
    opener = gzip.open if name.endswith(".gz") else open
    try:
        with opener(name, "rt", encoding="utf-8") as fh:  # type: ignore[operator]
            yield from enumerate(fh, 1)
    except OSError as exc:
        raise InputError(f"{name}: cannot read ({exc})") from exc


def _records(path: str | os.PathLike[str]) -> Iterable[dict[str, Any]]:
    for number, line in _open_lines(path):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{os.fspath(path)}:{number}: not JSON ({exc.msg})") from exc
        if not isinstance(obj, dict):
            raise InputError(f"{os.fspath(path)}:{number}: not a JSON object")
        yield obj


def load_gold(path: str | os.PathLike[str]) -> dict[str, GoldPage]:
    """Gold pages by URL, from a ``.jsonl`` or ``.jsonl.gz`` file."""
    pages = {}
    for obj in _records(path):
        try:
            page = GoldPage(str(obj["url"]), str(obj.get("site", "")),
                            str(obj.get("dataset", "")), str(obj.get("id", "")), str(obj["gold"]))
        except KeyError as exc:
            raise InputError(f"{os.fspath(path)}: a gold line has no {exc.args[0]!r}") from exc
        pages[page.url] = page
    return pages


def load_predictions(
    paths: Iterable[str | os.PathLike[str]], *, field: str = "text"
) -> dict[str, str]:
    """Cleaned text by URL, from warcdeboil's JSONL outputs."""
    predictions = {}
    for path in paths:
        for obj in _records(path):
            if "url" in obj:
                predictions[str(obj["url"])] = str(obj.get(field) or "")
    return predictions


def _summary(scores: list[Score]) -> Summary:
    if not scores:
        return Summary(0, math.nan, math.nan, math.nan)
    n = len(scores)
    return Summary(n, sum(s.precision for s in scores) / n, sum(s.recall for s in scores) / n,
                   sum(s.f1 for s in scores) / n)


@dataclass
class Report:
    """Mean scores overall, for pages of large sites and the rest, and per site."""

    overall: Summary
    large_sites: Summary
    small_sites: Summary
    per_site: dict[str, Summary] = field(default_factory=dict)
    missing: int = 0
    min_site_pages: int = 5

    def to_dict(self) -> dict[str, Any]:
        def clean(summary: Summary) -> dict[str, Any]:
            return {k: (None if isinstance(v, float) and math.isnan(v) else v)
                    for k, v in (("pages", summary.pages), ("precision", summary.precision),
                                 ("recall", summary.recall), ("f1", summary.f1))}

        return {
            "overall": clean(self.overall),
            f"sites_with_{self.min_site_pages}_or_more_pages": clean(self.large_sites),
            "other_pages": clean(self.small_sites),
            "per_site": {site: clean(s) for site, s in sorted(self.per_site.items())},
            "missing": self.missing,
        }

    def format_table(self, *, per_site: bool = False) -> str:
        rows = [("overall", self.overall),
                (f"sites >= {self.min_site_pages} pages", self.large_sites),
                ("other pages", self.small_sites)]
        if per_site:
            rows += [(f"  {site}", s) for site, s in sorted(self.per_site.items())]
        width = max(len(name) for name, _ in rows)

        def cell(value: float) -> str:
            return "     —" if math.isnan(value) else f"{value:6.3f}"

        lines = [f"{'pages':>{width + 7}}  precision  recall      F1"]
        for name, s in rows:
            lines.append(f"{name:<{width}} {s.pages:>6}     {cell(s.precision)}  "
                         f"{cell(s.recall)}  {cell(s.f1)}")
        if self.missing:
            lines.append(f"{self.missing} gold pages had no output (scored as empty)")
        return "\n".join(lines)


def evaluate(
    predictions: Mapping[str, str], gold: Mapping[str, GoldPage], *, min_site_pages: int = 5
) -> Report:
    """Score every gold page; group by its site's size in the gold set."""
    site_size = Counter(page.site for page in gold.values())
    by_site: dict[str, list[Score]] = defaultdict(list)
    large: list[Score] = []
    small: list[Score] = []
    missing = 0
    for url, page in gold.items():
        if url not in predictions:
            missing += 1
        score = score_text(predictions.get(url, ""), page.gold)
        by_site[page.site].append(score)
        (large if site_size[page.site] >= min_site_pages else small).append(score)
    return Report(
        overall=_summary(large + small),
        large_sites=_summary(large),
        small_sites=_summary(small),
        per_site={site: _summary(scores) for site, scores in by_site.items()},
        missing=missing,
        min_site_pages=min_site_pages,
    )
