"""Duplicate detection on a generated crawl of known duplicate groups, beside two peers.

    python scripts/make_dup_crawl.py ../shared/eval/dragnet.warc.gz --out dup-crawl
    python benchmarks/dedup.py dup-crawl [--speed ../shared/eval/dragnet.warc.gz] [--markdown]
    python scripts/make_dup_crawl.py ../shared/eval/l3s-gn1.warc.gz --seed 7 --out dup-crawl-2
    python benchmarks/dedup.py dup-crawl-2 --markdown      # a second crawl, tuned on by nobody

Pages come from ``dup-crawl/dup-crawl.warc.gz``, the truth from ``dup-crawl/truth.json`` (pages of
one ``group`` are copies of one another). Measured by *pairs*: a predicted pair is two pages put
in one group (groups are closed transitively for every method); precision = predicted pairs
that are true / predicted pairs, recall = true pairs predicted / true pairs. Methods:

- ``warcdeboil``: :func:`warcdeboil.dedup.duplicate_groups` on each page's
  :func:`warcdeboil.dedup.signature_text` (its text without its site's template, fitted by
  :class:`warcdeboil.api.Deboiler` on the crawl itself, and without link-dense blocks), with
  payload digests for the exact path, and the stage's second look at pairs of pages of one site
  without template (:mod:`warcdeboil.dedup.own`);
- ``warcdeboil-template``: the same search on the template-removed text of
  :class:`~warcdeboil.api.Deboiler` (link-dense blocks kept): the signature text of 2026-11-24;
- ``warcdeboil-content``: the same search on each page's main content (``Mode.CONTENT``):
  what is left around the article after template removal is what content mode drops;
- ``warcdeboil-raw``: the same search on the page's whole text (no template removal): what the
  template removal is worth;
- ``datasketch``: MinHash LSH (datasketch, 128 permutations, threshold 0.7, 5-word shingles) on
  the page's whole text, LSH candidates taken as duplicates (its usual use);
- ``maybedont``: MaybeDont's ``DupePredictor`` (threshold 0.9, its own shingles with those common
  to more than 5 % of pages left out), fed the pages in crawl order; the duplicates
  ``update_model`` reports are its pairs.

Wrong pairs are counted by the kinds of their two pages (``page-2 + original``: a ``?page=2``
joined to its article; ``original + original``: two distinct pages of one template).

``--speed ARCHIVE``: CPU µs per page of the signature text, its lead, shingling and MinHash on
an evaluation archive's pages (analysed with structure marks, as a JSONL run has them; best of 3
passes), the whole search (:func:`~warcdeboil.dedup.duplicate_groups`), and the most similar
distinct pages it holds.
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
from warcdeboil.dedup import (
    CONFIRM_THRESHOLD,
    DedupStats,
    MinHasher,
    PageText,
    UnionFind,
    candidate_pairs,
    duplicate_groups,
    lead_digest,
    shingle_hashes,
    signature_text,
)
from warcdeboil.dedup.own import has_template, own_texts, same_own
from warcdeboil.page.dom import PageText as AnalysedPage
from warcdeboil.page.dom import analyse
from warcdeboil.site.clean import Mode
from warcdeboil.site.fit import SiteProfile
from warcdeboil.site.sitekey import SiteKeyer, SiteKeyMode

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


def page_kinds(truth_path: Path, pages: Sequence[CrawlPage]) -> list[str]:
    """The kind of each page (``url-variant:utm`` as ``url-variant``), in page order."""
    truth = json.loads(truth_path.read_text(encoding="utf-8"))
    rows = {row["record_id"]: row for row in truth["pages"]}
    return [rows[page.record_id]["kind"].split(":")[0] for page in pages]


def pair_kind(kinds: Sequence[str], a: int, b: int) -> str:
    return " + ".join(sorted({kinds[a], kinds[b]}))


def truth_pairs(truth_path: Path, pages: Sequence[CrawlPage]) -> tuple[set[Pair], dict[Pair, str]]:
    """The true duplicate pairs (page numbers, ascending) and the kind of copy each pair is."""
    truth = json.loads(truth_path.read_text(encoding="utf-8"))
    number = {page.record_id: i for i, page in enumerate(pages)}
    if {row["record_id"] for row in truth["pages"]} != set(number):
        raise SystemExit(f"{truth_path}: its pages are not the archive's")
    page_kind = page_kinds(truth_path, pages)
    pairs: set[Pair] = set()
    kinds: dict[Pair, str] = {}
    for ids in truth["groups"].values():
        members = sorted(number[i] for i in ids)
        for a, b in combinations(members, 2):
            pairs.add((a, b))
            kinds[a, b] = pair_kind(page_kind, a, b)
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


def ours(pages: Sequence[CrawlPage], texts: Sequence[str], signed: Signed | None = None,
         ) -> set[Pair]:
    """The search on ``texts``; with ``signed`` (the pages they were made from), pairs of
    pages of one site without template get the stage's second look (:mod:`warcdeboil.dedup.own`)."""
    items = [PageText(i, p.url, texts[i], p.date, p.digest,
                      site=signed.sites[i] if signed else "",
                      no_template=bool(signed) and not has_template(signed.profiles[i]))
             for i, p in enumerate(pages)]
    stats = DedupStats()

    def look(pairs: np.ndarray) -> list[bool]:
        assert signed is not None
        return [same_own(*own_texts(signed.analysed[a], signed.analysed[b], signed.profiles[a]))
                for a, b in pairs.tolist()]

    with tempfile.TemporaryDirectory() as tmp:
        groups = list(duplicate_groups(items, Path(tmp), stats=stats,
                                       second_look=look if signed else None))
    print(f"  exact pairs {stats.exact_pairs}, candidates {stats.candidates}, "
          f"confirmed {stats.confirmed} (second looks {stats.looked}, refused {stats.refused}), "
          f"groups {len(groups)}", file=sys.stderr)
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
    pairs: set[Pair] = set()
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


def score(predicted: set[Pair], truth: set[Pair], kinds: dict[Pair, str],
          page_kind: Sequence[str] = ()) -> dict[str, object]:
    hits = predicted & truth
    by_kind: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for pair in truth:
        by_kind[kinds[pair]][1] += 1
        by_kind[kinds[pair]][0] += pair in hits
    wrong: dict[str, int] = defaultdict(int)
    for a, b in predicted - truth:
        wrong[pair_kind(page_kind, a, b) if page_kind else "?"] += 1
    return {
        "predicted": len(predicted), "true": len(truth), "hits": len(hits),
        "precision": len(hits) / len(predicted) if predicted else 1.0,
        "recall": len(hits) / len(truth) if truth else 1.0,
        "recall_by_kind": {kind: f"{h}/{n}" for kind, (h, n) in sorted(by_kind.items())},
        "wrong_by_kind": dict(sorted(wrong.items())),
    }


@dataclass
class Signed:
    """Pages as the duplicate stage signs them: each page's :func:`signature_text`, the page
    analysed, its site and its site's profile (a :class:`Deboiler` fitted on the pages
    themselves, by host, as ``clean`` fits them)."""

    texts: list[str]
    analysed: list[AnalysedPage]
    sites: list[str]
    profiles: list[SiteProfile | None]


def signed_pages(pages: Sequence[tuple[str, str | bytes]]) -> Signed:
    model = Deboiler().fit(pages)
    keyer = SiteKeyer(SiteKeyMode.HOST)
    analysed = [analyse(html, structure=True) for _, html in pages]
    sites = [keyer(url) for url, _ in pages]
    profiles = [model.profiles_.get(site) for site in sites]
    return Signed([signature_text(page, profile) for page, profile in
                   zip(analysed, profiles, strict=True)], analysed, sites, profiles)


def signature_texts(pages: Sequence[tuple[str, str | bytes]]) -> list[str]:
    """Each page's :func:`signature_text` (see :class:`Signed`)."""
    return signed_pages(pages).texts


def evaluate(crawl_dir: Path) -> dict[str, dict[str, object]]:
    pages = read_crawl(crawl_dir / "dup-crawl.warc.gz")
    truth, kinds = truth_pairs(crawl_dir / "truth.json", pages)
    page_kind = page_kinds(crawl_dir / "truth.json", pages)
    signed = signed_pages([(p.url, p.html) for p in pages])
    signature = signed.texts
    cleaned = [page.text for page in Deboiler().fit_transform([(p.url, p.html) for p in pages])]
    content = [page.text for page in Deboiler(mode=Mode.CONTENT).fit_transform(
        [(p.url, p.html) for p in pages])]
    raw = [page_text(p.html) for p in pages]
    methods: dict[str, Callable[[], set[Pair]]] = {
        "warcdeboil": lambda: ours(pages, signature, signed),
        "warcdeboil-template": lambda: ours(pages, cleaned),
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
        result = score(predicted, truth, kinds, page_kind)
        result["cpu_s"] = round(time.process_time() - start, 2)
        results[name] = result
        # The missed and the wrong pairs, to read.
        for a, b in sorted(truth - predicted)[:12]:
            print(f"  missed {kinds[a, b]}: {pages[a].url} {pages[b].url}", file=sys.stderr)
        for a, b in sorted(predicted - truth)[:12]:
            print(f"  wrong: {pages[a].url} {pages[b].url}", file=sys.stderr)
    return results


def _best_of(passes: int, work: Callable[[], object]) -> tuple[float, object]:
    """The least CPU seconds of ``passes`` runs of ``work``, and what it returned."""
    best, result = float("inf"), None
    for _ in range(passes):
        start = time.process_time()
        result = work()
        best = min(best, time.process_time() - start)
    return best, result


def speed(archive: Path) -> dict[str, float]:
    """CPU µs per page of each step of the duplicate search on an archive's pages (best of 3):
    signature text, lead, shingles, MinHash, and the whole :func:`duplicate_groups` given the
    texts; the most similar distinct pages (by estimated Jaccard of their LSH candidates)."""
    with open(archive, "rb") as fh:
        html = [(r.rec_headers.get_header("WARC-Target-URI"), r.content_stream().read())
                for r in ArchiveIterator(fh) if r.rec_type == "response"]
    model = Deboiler().fit(html)
    keyer = SiteKeyer(SiteKeyMode.HOST)
    analysed = [(analyse(body, structure=True), model.profiles_.get(keyer(url)))
                for url, body in html]
    hasher = MinHasher()
    steps: dict[str, float] = {}
    seconds, texts = _best_of(3, lambda: [signature_text(p, f) for p, f in analysed])
    steps["signature_text_us"] = seconds
    texts = list(texts)  # type: ignore[call-overload]
    steps["lead_us"], _ = _best_of(3, lambda: [lead_digest(t) for t in texts])
    seconds, shingles = _best_of(3, lambda: [shingle_hashes(t) for t in texts])
    steps["shingle_us"] = seconds
    shingles = list(shingles)  # type: ignore[call-overload]
    seconds, signatures = _best_of(3, lambda: [hasher.signature(s) for s in shingles])
    steps["minhash_us"] = seconds
    signatures = list(signatures)  # type: ignore[call-overload]
    items = [PageText(i, url, texts[i]) for i, (url, _) in enumerate(html)]

    def search() -> list[object]:
        with tempfile.TemporaryDirectory() as tmp:
            return list(duplicate_groups(items, Path(tmp)))

    steps["duplicate_groups_us"], groups = _best_of(3, search)
    result: dict[str, float] = {key: value / len(html) * 1e6 for key, value in steps.items()}
    result["stage_us"] = result["signature_text_us"] + result["duplicate_groups_us"]
    with tempfile.TemporaryDirectory() as tmp:
        candidates = set(candidate_pairs(
            ((i, s) for i, s in enumerate(signatures) if texts[i].strip()), Path(tmp)))
    similar = sorted(
        (float(np.count_nonzero(signatures[a] == signatures[b])) / hasher.num_perm, a, b)
        for a, b in candidates)
    for similarity, a, b in similar[-15:]:
        print(f"  {similarity:.3f} {html[a][0]} {html[b][0]}", file=sys.stderr)
    result.update({"pages": len(html), "chars_per_page": sum(map(len, texts)) / len(texts),
                   "candidates": len(candidates), "groups": len(groups),  # type: ignore[arg-type]
                   "pairs_at_or_above_threshold": sum(s >= CONFIRM_THRESHOLD
                                                      for s, _, _ in similar)})
    return result


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
    wrong = sorted({k for r in results.values() for k in r["wrong_by_kind"]})  # type: ignore[attr-defined]
    lines += ["", "Wrong pairs by the kinds of their pages:", "",
              "| kinds | " + " | ".join(results) + " |", "|---|" + "---|" * len(results)]
    for kind in wrong:
        cells = [str(r["wrong_by_kind"].get(kind, 0)) for r in results.values()]  # type: ignore[attr-defined]
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
