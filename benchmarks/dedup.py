"""Duplicate detection on a generated crawl of known duplicate groups, beside two peers.

    python scripts/make_dup_crawl.py ../shared/eval/dragnet.warc.gz --out dup-crawl
    python benchmarks/dedup.py dup-crawl [--speed ../shared/eval/dragnet.warc.gz] [--markdown]

Pages come from ``dup-crawl/dup-crawl.warc.gz``, the truth from ``dup-crawl/truth.json`` (pages of
one ``group`` are copies of one another). Measured by *pairs*: a predicted pair is two pages put
in one group (groups are closed transitively for every method); precision = predicted pairs
that are true / predicted pairs, recall = true pairs predicted / true pairs. Methods:

- ``warcdeboil``: :func:`warcdeboil.dedup.duplicate_groups` on each page's text after
  :class:`warcdeboil.api.Deboiler` removed its site's template (fit on the crawl itself), with
  payload digests for the exact path;
- ``warcdeboil-content``: the same search on each page's main content (``Mode.CONTENT``):
  what is left around the article after template removal is what content mode drops;
- ``warcdeboil-raw``: the same search on the page's whole text (no template removal): what the
  template removal is worth;
- ``datasketch``: MinHash LSH (datasketch, 128 permutations, threshold 0.7, 5-word shingles) on
  the page's whole text, LSH candidates taken as duplicates (its usual use);
- ``maybedont``: MaybeDont's ``DupePredictor`` (threshold 0.9, its own shingles with those common
  to more than 5 % of pages left out), fed the pages in crawl order; the duplicates
  ``update_model`` reports are its pairs.

``--speed ARCHIVE``: CPU µs per page of shingling and of MinHash on the template-removed texts
of an evaluation archive (best of 3 passes), and the most similar distinct pages it holds.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

import numpy as np
from selectolax.lexbor import LexborHTMLParser
from warcio.archiveiterator import ArchiveIterator

from warcdeboil.api import Deboiler
from warcdeboil.apply import Mode
from warcdeboil.dedup import (
    CONFIRM_THRESHOLD,
    DedupStats,
    MinHasher,
    PageText,
    UnionFind,
    candidate_pairs,
    duplicate_groups,
    shingle_hashes,
)

Pair = tuple[int, int]


@dataclass
class CrawlPage:
    record_id: str
    url: str
    date: str
    html: str
    digest: bytes


def read_crawl(warc: Path) -> list[CrawlPage]:
    pages = []
    with open(warc, "rb") as fh:
        for record in ArchiveIterator(fh):
            if record.rec_type != "response":
                continue
            body = record.content_stream().read()
            headers = record.rec_headers
            pages.append(CrawlPage(headers.get_header("WARC-Record-ID"),
                                   headers.get_header("WARC-Target-URI"),
                                   headers.get_header("WARC-Date"), body.decode("utf-8"),
                                   hashlib.sha1(body).digest()))
    return pages


def truth_pairs(truth_path: Path, pages: Sequence[CrawlPage]) -> tuple[set[Pair], dict[Pair, str]]:
    """The true duplicate pairs (page numbers, ascending) and the kind of copy each pair is."""
    truth = json.loads(truth_path.read_text(encoding="utf-8"))
    number = {page.record_id: i for i, page in enumerate(pages)}
    rows = {row["record_id"]: row for row in truth["pages"]}
    if set(rows) != set(number):
        raise SystemExit(f"{truth_path}: its pages are not the archive's")
    pairs: set[Pair] = set()
    kinds: dict[Pair, str] = {}
    for ids in truth["groups"].values():
        members = sorted(number[i] for i in ids)
        for a, b in combinations(members, 2):
            pairs.add((a, b))
            kind_a, kind_b = rows[pages[a].record_id]["kind"], rows[pages[b].record_id]["kind"]
            kinds[a, b] = " + ".join(sorted({kind_a.split(":")[0], kind_b.split(":")[0]}))
    return pairs, kinds


def closed_pairs(size: int, pairs: Iterable[Pair]) -> set[Pair]:
    """Every pair within the groups that ``pairs`` join (transitive closure)."""
    union = UnionFind(size)
    for a, b in pairs:
        union.union(a, b)
    groups: dict[int, list[int]] = defaultdict(list)
    for page in range(size):
        groups[union.find(page)].append(page)
    return {pair for members in groups.values() for pair in combinations(members, 2)}


def page_text(html: str) -> str:
    """The whole visible text of a page (scripts and styles left out)."""
    tree = LexborHTMLParser(html)
    for node in tree.css("script, style, noscript"):
        node.decompose()
    body = tree.body
    return body.text(separator="\n") if body is not None else ""


def ours(pages: Sequence[CrawlPage], texts: Sequence[str]) -> set[Pair]:
    items = [PageText(i, p.url, texts[i], p.date, p.digest) for i, p in enumerate(pages)]
    stats = DedupStats()
    with tempfile.TemporaryDirectory() as tmp:
        groups = list(duplicate_groups(items, Path(tmp), stats=stats))
    print(f"  exact pairs {stats.exact_pairs}, candidates {stats.candidates}, "
          f"confirmed {stats.confirmed}, groups {len(groups)}", file=sys.stderr)
    return {pair for g in groups for pair in combinations(sorted((g.keep, *g.drop)), 2)}


def datasketch_pairs(texts: Sequence[str]) -> set[Pair]:
    from datasketch import MinHash, MinHashLSH

    lsh = MinHashLSH(threshold=CONFIRM_THRESHOLD, num_perm=128)
    hashes = []
    for i, text in enumerate(texts):
        words = text.lower().split()
        shingles = {" ".join(words[j : j + 5]) for j in range(max(1, len(words) - 4))}
        minhash = MinHash(num_perm=128, seed=1)
        minhash.update_batch([s.encode() for s in shingles if s])
        hashes.append(minhash)
        lsh.insert(i, minhash)
    pairs = set()
    for i, minhash in enumerate(hashes):
        pairs.update((min(i, j), max(i, j)) for j in lsh.query(minhash) if j != i)
    return pairs


def maybedont_pairs(pages: Sequence[CrawlPage], texts: Sequence[str]) -> set[Pair]:
    from maybedont import DupePredictor

    predictor = DupePredictor(texts_sample=list(texts), jaccard_threshold=0.9)
    latest: dict[str, int] = {}
    pairs = set()
    for i, (page, text) in enumerate(zip(pages, texts, strict=True)):
        for url, _meta in predictor.update_model(page.url, text):
            other = latest.get(url)
            if other is not None and other != i:
                pairs.add((min(i, other), max(i, other)))
        latest[page.url] = i
    return pairs


def score(predicted: set[Pair], truth: set[Pair], kinds: dict[Pair, str]) -> dict[str, object]:
    hits = predicted & truth
    by_kind: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for pair in truth:
        by_kind[kinds[pair]][1] += 1
        by_kind[kinds[pair]][0] += pair in hits
    return {
        "predicted": len(predicted), "true": len(truth), "hits": len(hits),
        "precision": len(hits) / len(predicted) if predicted else 1.0,
        "recall": len(hits) / len(truth) if truth else 1.0,
        "recall_by_kind": {kind: f"{h}/{n}" for kind, (h, n) in sorted(by_kind.items())},
    }


def evaluate(crawl_dir: Path) -> dict[str, dict[str, object]]:
    pages = read_crawl(crawl_dir / "dup-crawl.warc.gz")
    truth, kinds = truth_pairs(crawl_dir / "truth.json", pages)
    cleaned = [page.text for page in Deboiler().fit_transform([(p.url, p.html) for p in pages])]
    content = [page.text for page in Deboiler(mode=Mode.CONTENT).fit_transform(
        [(p.url, p.html) for p in pages])]
    raw = [page_text(p.html) for p in pages]
    methods: dict[str, Callable[[], set[Pair]]] = {
        "warcdeboil": lambda: ours(pages, cleaned),
        "warcdeboil-content": lambda: ours(pages, content),
        "warcdeboil-raw": lambda: ours(pages, raw),
        "datasketch": lambda: datasketch_pairs(raw),
        "maybedont": lambda: maybedont_pairs(pages, raw),
    }
    results = {}
    for name, method in methods.items():
        print(name, file=sys.stderr)
        start = time.process_time()
        predicted = closed_pairs(len(pages), method())
        result = score(predicted, truth, kinds)
        result["cpu_s"] = round(time.process_time() - start, 2)
        results[name] = result
        # The missed and the wrong pairs, to read.
        for a, b in sorted(truth - predicted)[:5]:
            print(f"  missed {kinds[a, b]}: {pages[a].url} {pages[b].url}", file=sys.stderr)
        for a, b in sorted(predicted - truth)[:5]:
            print(f"  wrong: {pages[a].url} {pages[b].url}", file=sys.stderr)
    return results


def speed(archive: Path) -> dict[str, float]:
    """µs per page of shingling and MinHash on template-removed texts; the most similar distinct
    pages among them (by estimated Jaccard of their LSH candidates)."""
    with open(archive, "rb") as fh:
        html = [(r.rec_headers.get_header("WARC-Target-URI"), r.content_stream().read())
                for r in ArchiveIterator(fh) if r.rec_type == "response"]
    texts = [page.text for page in Deboiler().fit_transform(html)]
    hasher = MinHasher()
    best_shingle = best_minhash = float("inf")
    for _ in range(3):
        start = time.process_time()
        shingles = [shingle_hashes(text) for text in texts]
        middle = time.process_time()
        signatures = [hasher.signature(s) for s in shingles]
        end = time.process_time()
        best_shingle = min(best_shingle, (middle - start) / len(texts) * 1e6)
        best_minhash = min(best_minhash, (end - middle) / len(texts) * 1e6)
    with tempfile.TemporaryDirectory() as tmp:
        candidates = set(candidate_pairs(
            ((i, s) for i, s in enumerate(signatures) if texts[i].strip()), Path(tmp)))
    similar = sorted(
        (float(np.count_nonzero(signatures[a] == signatures[b])) / hasher.num_perm, a, b)
        for a, b in candidates)
    for similarity, a, b in similar[-15:]:
        print(f"  {similarity:.3f} {html[a][0]} {html[b][0]}", file=sys.stderr)
    return {"pages": len(texts), "chars_per_page": sum(map(len, texts)) / len(texts),
            "shingle_us": best_shingle, "minhash_us": best_minhash,
            "candidates": len(candidates),
            "pairs_at_or_above_threshold": sum(s >= CONFIRM_THRESHOLD for s, _, _ in similar)}


def markdown(results: dict[str, dict[str, object]]) -> str:
    lines = ["| method | precision | recall | predicted pairs | true pairs | CPU s |",
             "|---|---|---|---|---|---|"]
    for name, r in results.items():
        lines.append(f"| {name} | {r['precision']:.3f} | {r['recall']:.3f} | {r['predicted']} "
                     f"| {r['true']} | {r['cpu_s']} |")
    kinds = sorted({k for r in results.values() for k in r["recall_by_kind"]})  # type: ignore[attr-defined]
    lines += ["", "Recall by kind of copy (pairs found / pairs):", "",
              "| kind | " + " | ".join(results) + " |", "|---|" + "---|" * len(results)]
    for kind in kinds:
        cells = [r["recall_by_kind"].get(kind, "-") for r in results.values()]  # type: ignore[attr-defined]
        lines.append(f"| {kind} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("crawl", type=Path, help="the directory make_dup_crawl.py wrote")
    parser.add_argument("--speed", type=Path, help="an evaluation archive to time on")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args(argv)
    results = evaluate(args.crawl)
    print(markdown(results) if args.markdown else json.dumps(results, indent=1))
    if args.speed:
        print(json.dumps(speed(args.speed), indent=1))


if __name__ == "__main__":
    main()
