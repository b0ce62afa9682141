"""How far block-level judgement can take ``--mode content`` on a gold set: a measurement.

    python benchmarks/ceiling.py ../shared/eval/scrapinghub.warc.gz ../shared/eval/dragnet.warc.gz

Per set, mean token F1 per page (in process: site templates fitted as the run fits them, then
``content.block_verdicts``) of four judgements of the same blocks:

- ``shipped``: the package's;
- ``precision ceiling``: the package's, less every kept block under half of whose tokens are
  gold tokens (counted per block), but headings and the blocks in byline, date and caption
  elements (role meta);
- ``precision ceiling, all``: the same, headings and bylines judged by the gold too;
- ``no outside headings``: the package's, less the kept headings outside the core
  (``content.core_span``: the deepest candidate subtree holding ``content.CORE_SHARE`` of the
  kept characters);
- ``no leading headings``: the package's, less the headings that open the kept text when a
  kept block that is not a heading follows them: the page's headline, as issue 40 asks an
  option to leave it out of the text (scrapinghub's convention, and trafilatura's).

Recall is not searched: judging the dropped blocks by their share of gold tokens keeps menus
whose words the text also has, and the package's recall on the sets this was written for is
0.95-0.99 already. The first ceiling is what perfect precision reaches when headlines and
bylines are judged as the package judges them; the last column is what dropping the headlines
above an article's body does to each set, whose gold texts disagree on them (scrapinghub's has
the article body only; dragnet's, l3s-gn1's and cleanportaleval's start with the headline).
Issue 20's figures: ``benchmarks/results/ceiling-2026-11-28.md``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from statistics import mean

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

from train_content import fitted_pages  # noqa: E402

from warcdeboil.evaluate import score_text, tokenize  # noqa: E402
from warcdeboil.page.content import Block, block_verdicts, core_span, split_blocks  # noqa: E402
from warcdeboil.page.dom import ROLE_META, plain_text, remove_template  # noqa: E402

Judgement = Callable[[list[Block], list[bool], dict[str, int]], list[bool]]


def gold_share(block: Block, gold: dict[str, int]) -> float:
    """The share of a block's tokens that are gold tokens (each counted up to the gold's count)."""
    tokens = tokenize(block.text)
    total = sum(tokens.values())
    return sum(min(n, gold.get(t, 0)) for t, n in tokens.items()) / total if total else 0.0


def _is_heading_or_meta(block: Block) -> bool:
    return 1 <= block.kind <= 6 or bool(block.roles & (1 << ROLE_META))


def ceiling(blocks: list[Block], keep: list[bool], gold: dict[str, int]) -> list[bool]:
    return [ok and (_is_heading_or_meta(b) or gold_share(b, gold) >= 0.5)
            for b, ok in zip(blocks, keep, strict=True)]


def ceiling_all(blocks: list[Block], keep: list[bool], gold: dict[str, int]) -> list[bool]:
    return [ok and gold_share(b, gold) >= 0.5 for b, ok in zip(blocks, keep, strict=True)]


def no_outside_headings(blocks: list[Block], keep: list[bool], gold: dict[str, int]
                        ) -> list[bool]:
    span = core_span(blocks, keep)
    if span is None:
        return keep
    return [ok and (span[0] <= i < span[1] or not 1 <= b.kind <= 6)
            for i, (b, ok) in enumerate(zip(blocks, keep, strict=True))]


def no_leading_headings(blocks: list[Block], keep: list[bool], gold: dict[str, int]
                        ) -> list[bool]:
    kept = [i for i, ok in enumerate(keep) if ok]
    first_other = next((i for i in kept if not 1 <= blocks[i].kind <= 6), None)
    if first_other is None:  # nothing but headings kept: no headline above a text
        return keep
    return [ok and i >= first_other for i, ok in enumerate(keep)]


JUDGEMENTS: dict[str, Judgement | None] = {
    "shipped": None, "precision ceiling": ceiling, "precision ceiling, all": ceiling_all,
    "no outside headings": no_outside_headings, "no leading headings": no_leading_headings,
}


def measure(archive: Path) -> dict[str, float]:
    name = archive.name.removesuffix(".warc.gz")
    scores: dict[str, list[float]] = {label: [] for label in JUDGEMENTS}
    for url, _, text, profile, gold, _ in fitted_pages(archive.parent, name):
        marked = remove_template(text, profile.template, profile.template_slots).marked
        blocks = split_blocks(marked.decode("utf-8", "surrogatepass"))
        keep = [v is None for v in block_verdicts(blocks, repeated=profile.repeated, url=url)]
        gold_tokens = tokenize(gold.gold)
        for label, judge in JUDGEMENTS.items():
            chosen = keep if judge is None else judge(blocks, keep, gold_tokens)
            kept = "\n".join(b.text for b, ok in zip(blocks, chosen, strict=True) if ok)
            scores[label].append(score_text(plain_text(kept, False), gold.gold).f1)
    return {label: mean(values) for label, values in scores.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("archives", nargs="+", type=Path,
                        help="NAME.warc.gz, with NAME.gold.jsonl.gz beside it")
    args = parser.parse_args()
    print("| set | " + " | ".join(JUDGEMENTS) + " |")
    print("|---|" + "---|" * len(JUDGEMENTS))
    for archive in args.archives:
        figures = measure(archive)
        print(f"| {archive.name.removesuffix('.warc.gz')} | "
              + " | ".join(f"{figures[label]:.4f}" for label in JUDGEMENTS) + " |", flush=True)


if __name__ == "__main__":
    main()
