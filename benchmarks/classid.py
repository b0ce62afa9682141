"""The page's own naming as learned features of the content model: a measurement (issue 20).

    python benchmarks/classid.py --extra eval-extra --variant none         # the shipped features
    python benchmarks/classid.py --extra eval-extra --variant tokens --k 3 --n 150

Fits the content model as ``scripts/train_content.py`` does (same pages, template removed, same
labels, sample and dataset weights, two stages, calibration = sites with even CRC-32), with
columns appended to :func:`warcdeboil.page.content.feature_columns` from the class and id words of
each block's nearest ``--k`` candidate ancestors (0: all of them). Words: class and id split at
``-``, ``_``, digits and camelCase humps, lower-cased, two letters or more. ``--variant``:

- ``none``: no extra column (prints what ``train_content.py --check`` prints, whole sets too);
- ``groups``: two columns, "a word of the against-list" and "a word of the for-list": the
  ``--n`` words with the most negative and the most positive score (sum over calibration blocks
  of weight times label minus the ``none`` model's probability: the gradient of the log-loss
  for a new column at weight 0) among words on ``--min-sites`` calibration sites or more;
- ``tokens``: one column per word, the ``--n`` words on the most calibration sites;
- ``hashed``: ``--n`` columns, each word in the one its CRC-32 picks.

The vocabulary is chosen from calibration sites only. Mean token F1 per page, the pipeline's
steps after the model as in ``train_content.py`` (repeated blocks, comments, copies), printed
per set for the whole set, sites with >= 5 pages, the held-out sites and held-out sites with
>= 5 pages. Nothing is written but ``--pages`` (per-page F1, JSON) when asked. Candidate
elements are found again by parsing the page a second time (as analyse reads them: the k-th
``OPEN`` mark is the k-th candidate); the features are an experiment, not a pipeline step.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import zlib
from collections import Counter, defaultdict
from collections.abc import Callable
from itertools import compress
from pathlib import Path
from statistics import mean

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
import train_content as tc  # noqa: E402  (the training script's constants and labels)

from warcdeboil.evaluate import score_text  # noqa: E402
from warcdeboil.page import content, dom  # noqa: E402
from warcdeboil.page.content import (  # noqa: E402
    Block,
    ContentModel,
    _weighted_sum,
    context_columns,
    extract_blocks,
)

_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
# URL, gold site, blocks, gold text, repeated digests, words of each candidate left on the page
Page = tuple[str, str, list[Block], str, frozenset[int], list[frozenset[str]]]


def words(name: str | None) -> frozenset[str]:
    """The words of a class or id: ``postBody-2 entry_text`` -> post, body, entry, text."""
    return frozenset(w.lower() for w in _WORD.findall(name or "") if len(w) > 1)


def candidate_words(markup: str | bytes) -> list[frozenset[str]]:
    """The class and id words of each candidate element of a page, in document order (the
    order of the analysis's ``OPEN`` marks)."""
    body = dom._parse(markup).body
    if body is None:
        return []
    elements, ids = dom._elements_as_analysed(body, strip=True)
    return [words(node.attributes.get("class")) | words(node.attributes.get("id"))
            if node.attributes else frozenset()
            for node in compress(elements, map(dom._CANDIDATE_SEEDS.__contains__, ids))]


def load_pages(directory: Path, name: str) -> list[Page]:
    """``train_content.load_pages``, with the words of each candidate the template left."""
    out: list[Page] = []
    for url, site, text, profile, gold, names in tc.fitted_pages(directory, name,
                                                                 candidate_words):
        if text.marked.count(dom.OPEN.encode()) != len(names):
            raise SystemExit(f"{url}: candidates and marks differ")
        cuts, _, _ = dom.template_cuts(text, profile.template, profile.template_slots)
        marked = dom.remove_template(text, profile.template, profile.template_slots).marked
        spans = text.spans
        left = [n for i, n in enumerate(names)
                if not any(start <= spans[2 * i] < end for start, end, _, _ in cuts)]
        blocks = content.split_blocks(marked.decode("utf-8", "surrogatepass"))
        out.append((url, gold.site or site, blocks, gold.gold, frozenset(profile.repeated),
                    left))
    return out


def block_words(block: Block, names: list[frozenset[str]], k: int) -> frozenset[str]:
    ids = [i for i in block.ancestors if i > 0]  # 0 is the body
    return frozenset().union(*(names[i - 1] for i in (ids[-k:] if k else ids)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--eval", type=Path,
                        default=Path(__file__).resolve().parent.parent.parent / "shared" / "eval")
    parser.add_argument("--extra", type=Path, action="append", default=[])
    parser.add_argument("--variant", choices=("none", "groups", "tokens", "hashed"),
                        default="none")
    parser.add_argument("--k", type=int, default=3, help="nearest candidate ancestors (0: all)")
    parser.add_argument("--n", type=int, default=20, help="words a group, words, or buckets")
    parser.add_argument("--min-sites", type=int, default=15)
    parser.add_argument("--pages", type=Path, help="write per-page F1 here (JSON)")
    args = parser.parse_args()
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    data = {name: load_pages(args.eval, name) for name in tc.DATASETS}
    for directory in args.extra:
        for gold_file in sorted(directory.glob("*.gold.jsonl.gz")):
            name = gold_file.name.removesuffix(".gold.jsonl.gz")
            data[name] = load_pages(directory, name)
    page_words = {id(blocks): [block_words(b, names, args.k) for b in blocks]
                  for pages in data.values() for _, _, blocks, _, _, names in pages}
    extra: dict[int, list[list[float]]] = {}
    shipped_columns = content.feature_columns

    def with_extra(blocks: list[Block]) -> list[list[float]]:
        return shipped_columns(blocks) + extra.get(id(blocks), [])

    content.feature_columns = with_extra  # judge() reads it from the module

    train = [(gold_site, blocks, gold_text, tc.DATASET_WEIGHTS.get(name, 1.0))
             for name, pages in data.items() for _, gold_site, blocks, gold_text, _, _ in pages
             if tc.fitted_on(name, gold_site) and blocks]
    targets = [tc.labels(blocks, gold_text) for _, blocks, gold_text, _ in train]
    weights = []
    for _, blocks, _, weight in train:
        total = sum(b.chars for b in blocks) or 1
        weights.append([weight * max(b.chars, 1) / total for b in blocks])

    def fit(pages: list[int], rows: list[list[list[float]]]) -> tuple[list[float], float]:
        fitted = LogisticRegression(C=tc.REGULARISATION_C, max_iter=10_000)
        fitted.fit(np.array([row for i in pages for row in rows[i]]),
                   np.array([t for i in pages for t in targets[i]]),
                   sample_weight=np.array([w for i in pages for w in weights[i]]))
        return [float(w) for w in fitted.coef_[0]], float(fitted.intercept_[0])

    def train_model() -> ContentModel:
        columns = [content.feature_columns(blocks) for _, blocks, _, _ in train]
        rows = [[list(row) for row in zip(*page, strict=True)] for page in columns]
        everything = list(range(len(train)))
        first, first_bias = fit(everything, rows)
        scores: list[list[float]] = [[] for _ in train]
        for fold in (0, 1):
            inside = [i for i in everything if tc._fold(train[i][0]) == fold]
            outside = [i for i in everything if tc._fold(train[i][0]) != fold]
            w, b = fit(outside, rows)
            for i in inside:
                scores[i] = ContentModel(tuple(w), b, tc.THRESHOLD).first_scores(columns[i])
        combined = [[row + list(ctx) for row, ctx in zip(
            rows[i], zip(*context_columns(train[i][1], scores[i]), strict=True), strict=True)]
            for i in everything]
        second, second_bias = fit(everything, combined)
        return ContentModel(tuple(first), first_bias, tc.THRESHOLD, tuple(second), second_bias)

    make_columns: Callable[[list[frozenset[str]]], list[list[float]]] = lambda _: []  # noqa: E731
    if args.variant != "none":
        sites: dict[str, set[str]] = defaultdict(set)
        for gold_site, blocks, _, _ in train:
            for found in page_words[id(blocks)]:
                for word in found:
                    sites[word].add(gold_site)
        common = [w for w, s in sites.items() if len(s) >= args.min_sites]
        if args.variant == "groups":
            base = train_model()
            score: Counter[str] = Counter()
            for i, (_, blocks, _, _) in enumerate(train):
                columns = content.feature_columns(blocks)
                first = base.first_scores(columns)
                logits = _weighted_sum(columns + context_columns(blocks, first),
                                       base.context_weights, base.context_bias)
                for found, y, logit, w in zip(page_words[id(blocks)], targets[i], logits,
                                              weights[i], strict=True):
                    p = 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, logit))))
                    for word in found:
                        score[word] += w * (y - p)
            ranked = sorted(common, key=score.__getitem__)
            against = frozenset(ranked[:args.n])
            for_ = frozenset(w for w in ranked[::-1][:args.n] if score[w] > 0)
            print("against:", " ".join(f"{w} {score[w]:+.2f}" for w in ranked[:args.n]))
            print("for:", " ".join(f"{w} {score[w]:+.2f}" for w in ranked[::-1][:args.n]))

            def make_columns(found: list[frozenset[str]]) -> list[list[float]]:
                return [[1.0 if f & against else 0.0 for f in found],
                        [1.0 if f & for_ else 0.0 for f in found]]
        elif args.variant == "tokens":
            vocabulary = sorted(common, key=lambda w: (-len(sites[w]), w))[:args.n]

            def make_columns(found: list[frozenset[str]]) -> list[list[float]]:
                return [[1.0 if word in f else 0.0 for f in found] for word in vocabulary]
        else:
            def make_columns(found: list[frozenset[str]]) -> list[list[float]]:
                columns = [[0.0] * len(found) for _ in range(args.n)]
                for j, f in enumerate(found):
                    for word in f:
                        columns[zlib.crc32(word.encode()) % args.n][j] = 1.0
                return columns
        print(f"{args.variant} k={args.k} n={args.n}: {len(common)} words on "
              f">= {args.min_sites} calibration sites")
    for pages in data.values():
        for _, _, blocks, _, _, _ in pages:
            extra[id(blocks)] = make_columns(page_words[id(blocks)]) if blocks else []
    model = train_model()
    per_page: dict[str, list[tuple[str, bool, bool, float]]] = {}
    for name, pages in data.items():
        site_pages = Counter(gold_site for _, gold_site, _, _, _, _ in pages)
        groups: dict[str, list[float]] = defaultdict(list)
        for url, gold_site, blocks, gold_text, repeated, _ in pages:
            text = extract_blocks(blocks, model, repeated=repeated, url=url).text
            f1 = score_text(dom.plain_text(text, False), gold_text).f1
            large, held = site_pages[gold_site] >= 5, not tc.fitted_on(name, gold_site)
            per_page.setdefault(name, []).append((gold_site, held, large, f1))
            for group, member in (("all", True), (">=5", large), ("held-out", held),
                                  ("held-out >=5", held and large)):
                if member:
                    groups[group].append(f1)
        print(f"{name:16} " + "  ".join(f"{g} {mean(v):.4f} ({len(v)})"
                                        for g, v in groups.items()))
    if args.pages:
        args.pages.write_text(json.dumps(per_page))


if __name__ == "__main__":
    main()
