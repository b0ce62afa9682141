"""URL rules (:class:`warcdeboil.UrlRules`) learned on a generated crawl of known duplicate groups,
beside MaybeDont's own hypotheses on the same pages.

    python scripts/make_dup_crawl.py ../shared/eval/dragnet.warc.gz --out dup-crawl
    python benchmarks/urlrules.py dup-crawl [--markdown] [--save-rules rules.json]

Rules are learned from the ``(url, group)`` of every page, grouped by site, with the groups taken
(1) from the truth file (``truth``), (2) from :func:`warcdeboil.dedup.duplicate_groups` on each
page's template-removed text, as ``benchmarks/dedup.py`` computes them (``found``). MaybeDont's
``DupePredictor`` is fed the same pages in crawl order (its page text: the whole visible text).

What is measured, from the truth file's ``kind`` of each page:

- *components*: each ``url-variant:NAME`` page names what differs from its original
  (``utm`` → ``utm_source``, ``utm_medium``, ``utm_campaign``; ``scheme`` → the scheme…): those
  (site, component) are irrelevant; ``id-param``, ``page-2`` and ``p-param`` pages name a relevant
  parameter of their site (``id``, ``page``, ``p``). A method *calls* a component irrelevant on a
  site when one of its rules for it applies there (site, path or crawl level). Recall = truly
  irrelevant components called so / truly irrelevant ones; precision = of the labelled
  components called irrelevant, the truly irrelevant share; and, separately, every relevant
  parameter called irrelevant (the target: none);
- *URLs*: a variant is *found* when its canonical form is its original's (MaybeDont: when
  ``get_dupe_prob`` of the variant reaches its threshold); a page with a relevant parameter is
  *kept apart* when its canonical form still holds the parameter (MaybeDont: when
  ``get_dupe_prob`` stays below its threshold); *wrong merges* are pairs of URLs of different
  groups with one canonical form.

Slash, ``index.html`` and ``;jsessionid=`` variants the generator appends to a query
(``?id=1/``) are not path variants: they are left out of both measures.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import defaultdict
from collections.abc import Iterable
from itertools import combinations
from pathlib import Path
from typing import Any

from dedup import (  # type: ignore[import-not-found]
    CrawlPage,
    page_text,
    read_crawl,
    signature_texts,
)

from warcdeboil.dedup import DedupStats, PageText, duplicate_groups
from warcdeboil.site.sitekey import SiteKeyer
from warcdeboil.urlrules import UrlRules, query_chunks, split_url

COMPONENTS = {
    "utm": ["utm_source", "utm_medium", "utm_campaign"], "sid": ["sid"], "sort": ["sort"],
    "start": ["start"], "fbclid": ["fbclid"], "ref": ["ref"],
    "jsessionid": ["variant:path_param:jsessionid"], "scheme": ["variant:scheme"],
    "www": ["variant:www"], "slash": ["variant:slash"], "index.html": ["variant:index:index.html"],
    "index.php": ["variant:index:index.php"], "default.aspx": ["variant:index:default.aspx"],
    "fragment": ["variant:fragment"], "case": ["variant:case"],
    "scheme+www": ["variant:scheme", "variant:www"],
}
RELEVANT = {"id-param": "id", "page-2": "page", "p-param": "p"}
MAYBEDONT_THRESHOLDS = (0.98, 0.5)  # its Scrapy middleware's default, and ours
_NAME_AT = {"param": 1, "param_value": 1, "path_param": 2, "path_query_param": 3,
            "path_param_value": 2}
Labelled = set[tuple[str, str]]


def load(crawl_dir: Path) -> tuple[list[CrawlPage], list[dict[str, str]]]:
    pages = read_crawl(crawl_dir / "dup-crawl.warc.gz")
    truth = json.loads((crawl_dir / "truth.json").read_text(encoding="utf-8"))
    rows = {row["record_id"]: row for row in truth["pages"]}
    return pages, [rows[p.record_id] for p in pages]


def found_groups(pages: list[CrawlPage]) -> list[str | None]:
    """Each page's group as the duplicate search finds it on each page's signature text (its
    text without its site's template), as ``dedup.py`` scores it."""
    texts = signature_texts([(p.url, p.html) for p in pages])
    items = [PageText(i, p.url, texts[i], p.date, p.digest) for i, p in enumerate(pages)]
    # A page left with no text of its own (all template) is no evidence either way: it is
    # left out of the observations rather than called distinct from its copies.
    group: list[str | None] = [f"page{i}" if texts[i].strip() else None
                               for i in range(len(pages))]
    with tempfile.TemporaryDirectory() as tmp:
        for g in duplicate_groups(items, Path(tmp), stats=DedupStats()):
            for member in (g.keep, *g.drop):
                group[member] = f"page{g.keep}"
    return group


def learn(urls: Iterable[str], groups: Iterable[str | None]) -> UrlRules:
    """Rules from the (url, group) of every page with a group (None: no evidence)."""
    rules = UrlRules()
    known = [(url, group) for url, group in zip(urls, groups, strict=True) if group is not None]
    return rules.learn(sorted(known, key=lambda o: rules.site_of(o[0])))


def labels(rows: list[dict[str, str]]) -> tuple[Labelled, Labelled, list[tuple[str, str, str]]]:
    """(truly irrelevant (site, component), relevant (site, parameter), and the variant pages
    as (variant url, original url, kind) that test a component)."""
    keyer = SiteKeyer()
    original: dict[str, str] = {}
    for row in rows:
        if row["kind"] in ("original", "id-param"):
            original.setdefault(row["group"], row["url"])
    irrelevant: Labelled = set()
    relevant: Labelled = set()
    variants = []
    for row in rows:
        site = keyer(row["url"])
        kind, _, name = row["kind"].partition(":")
        if kind in RELEVANT:
            relevant.add((site, RELEVANT[kind]))
        if kind != "url-variant":
            continue
        base = original[row["group"]]
        if name in ("slash", "index.html", "jsessionid") and "?" in base:
            continue  # appended to the query: not a path variant
        variants.append((row["url"], base, row["kind"]))
        irrelevant.update((site, c) for c in COMPONENTS[name])
    return irrelevant, relevant, variants


def site_params(urls: Iterable[str]) -> dict[str, set[str]]:
    keyer = SiteKeyer()
    params: dict[str, set[str]] = defaultdict(set)
    for url in urls:
        params[keyer(url)].update(c.name for c in query_chunks(split_url(url).query))
    return params


def called_ours(rules: UrlRules, sites: Iterable[str]) -> Labelled:
    called: Labelled = set()
    for site in sites:
        for key in rules.irrelevant(site):
            if key[0] == "variant":
                called.add((site, f"variant:{key[1]}"))
            elif key[0] in _NAME_AT:
                called.add((site, key[_NAME_AT[key[0]]]))
    return called


def score_components(called: Labelled, irrelevant: Labelled, relevant: Labelled,
                     params: dict[str, set[str]]) -> dict[str, Any]:
    # A parameter rule counts on a site only where the parameter occurs (crawl rules apply to
    # every site); a variant rule counts where the truth names the variant.
    called = {(s, c) for s, c in called if c.startswith("variant:") or c in params.get(s, ())}
    labelled = called & (irrelevant | relevant)
    hits = called & irrelevant
    return {
        "irrelevant": len(irrelevant), "found": len(hits),
        "recall": len(hits) / len(irrelevant) if irrelevant else 1.0,
        "precision": len(hits) / len(labelled) if labelled else 1.0,
        "relevant_called_irrelevant": sorted(f"{s}:{c}" for s, c in called & relevant),
        "missed": sorted(f"{s}:{c}" for s, c in irrelevant - called),
    }


def score_urls(rules: UrlRules, rows: list[dict[str, str]],
               variants: list[tuple[str, str, str]]) -> dict[str, Any]:
    found = [v for v in variants if rules.canonical(v[0]) == rules.canonical(v[1])]
    kept = [r for r in rows if r["kind"] in RELEVANT and RELEVANT[r["kind"]] in {
        c.name for c in query_chunks(split_url(rules.canonical(r["url"])).query)}]
    negatives = [r for r in rows if r["kind"] in RELEVANT]
    groups: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        groups[row["url"]].add(row["group"])
    by_form: dict[str, list[str]] = defaultdict(list)
    for url in groups:
        by_form[rules.canonical(url)].append(url)
    merged = [(a, b) for urls in by_form.values() for a, b in combinations(urls, 2)]
    wrong = [(a, b) for a, b in merged if not groups[a] & groups[b]]
    by_kind: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for v in variants:
        by_kind[v[2]][1] += 1
        by_kind[v[2]][0] += v in found
    return {
        "variants": len(variants), "variants_found": len(found),
        "relevant_pages": len(negatives), "relevant_kept": len(kept),
        "merged_pairs": len(merged), "wrong_merges": [f"{a} {b}" for a, b in wrong],
        "by_kind": {k: f"{h}/{n}" for k, (h, n) in sorted(by_kind.items())},
    }


def maybedont(pages: list[CrawlPage], rows: list[dict[str, str]], irrelevant: Labelled,
              relevant: Labelled, variants: list[tuple[str, str, str]],
              params: dict[str, set[str]]) -> dict[str, Any]:
    from maybedont import DupePredictor

    texts = [page_text(p.html) for p in pages]
    predictor = DupePredictor(texts_sample=texts, jaccard_threshold=0.9)
    for page, text in zip(pages, texts, strict=True):
        predictor.update_model(page.url, text)
    keyer = SiteKeyer()
    results = {}
    for threshold in MAYBEDONT_THRESHOLDS:
        called: Labelled = set()
        for stats, name_of, site_of in (
                (predictor.param_dupstats, lambda k: k, None),
                (predictor.param_value_dupstats, lambda k: k[0], None),
                (predictor.path_param_dupstats, lambda k: k[1], lambda k: k[0]),
                (predictor.path_query_param_dupstats, lambda k: k[1], lambda k: k[0]),
                (predictor.path_param_value_dupstats, lambda k: k[1], lambda k: k[0])):
            for key, stat in stats.items():
                if stat.get_prob() < threshold:
                    continue
                sites = [keyer("http://" + site_of(key))] if site_of else list(params)
                called.update((s, name_of(key)) for s in sites)
        result = score_components(called, irrelevant, relevant, params)
        found = [v for v in variants if predictor.get_dupe_prob(v[0]) >= threshold]
        negatives = [r for r in rows if r["kind"] in RELEVANT]
        kept = [r for r in negatives if predictor.get_dupe_prob(r["url"]) < threshold]
        result.update(variants=len(variants), variants_found=len(found),
                      relevant_pages=len(negatives), relevant_kept=len(kept))
        results[f"maybedont@{threshold}"] = result
    return results


def evaluate(crawl_dir: Path, save: Path | None) -> dict[str, Any]:
    pages, rows = load(crawl_dir)
    irrelevant, relevant, variants = labels(rows)
    params = site_params(r["url"] for r in rows)
    sites = sorted({SiteKeyer()(r["url"]) for r in rows})
    results: dict[str, Any] = {}
    for name, groups in (("truth", [r["group"] for r in rows]), ("found", found_groups(pages))):
        rules = learn((r["url"] for r in rows), groups)
        if save is not None and name == "truth":
            rules.save(save)
        result = score_components(called_ours(rules, sites), irrelevant, relevant, params)
        result.update(score_urls(rules, rows, variants))
        results[f"warcdeboil ({name} groups)"] = result
    results.update(maybedont(pages, rows, irrelevant, relevant, variants, params))
    return results


def markdown(results: dict[str, Any]) -> str:
    lines = ["| method | components found | recall | precision | relevant called irrelevant "
             "| variants found | relevant pages kept apart | wrong merges |",
             "|---|---|---|---|---|---|---|---|"]
    for name, r in results.items():
        wrong = len(r["wrong_merges"]) if "wrong_merges" in r else "-"
        lines.append(
            f"| {name} | {r['found']}/{r['irrelevant']} | {r['recall']:.3f} | "
            f"{r['precision']:.3f} | {len(r['relevant_called_irrelevant'])} | "
            f"{r['variants_found']}/{r['variants']} | {r['relevant_kept']}/{r['relevant_pages']} "
            f"| {wrong} |")
    return "\n".join(lines)


def scale(pages: int) -> dict[str, float]:
    """CPU time and peak memory of learning one synthetic site of ``pages`` articles, with a
    tracking parameter on a third of them, a ``/list?page=N`` page every fifth and a
    ``/search?q=N&sid=…`` page every seventh (all distinct)."""
    import random
    import resource
    import time

    rng = random.Random(1)

    def observations() -> Iterable[tuple[str, str]]:
        for i in range(pages):
            yield f"http://big.example/story/{i}", f"a{i}"
            if i % 3 == 0:
                yield f"http://big.example/story/{i}?utm_source=x{rng.randrange(9)}", f"a{i}"
            if i % 5 == 0:
                yield f"http://big.example/list?page={i}", f"l{i}"
            if i % 7 == 0:
                yield f"http://big.example/search?q={i}&sid={rng.getrandbits(40)}", f"s{i}"

    urls = sum(1 for _ in observations())
    start = time.process_time()
    rules = UrlRules().learn(observations())
    return {"urls": urls, "cpu_s": round(time.process_time() - start, 2),
            "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
            "hypotheses_kept": len(list(rules.rules("big.example")))}


def score_file(crawl_dir: Path, path: Path) -> dict[str, Any]:
    """Components found and relevant parameters called irrelevant by the rules of a run."""
    _, rows = load(crawl_dir)
    irrelevant, relevant, _ = labels(rows)
    rules = UrlRules.load(path)
    sites = {site for site, _ in irrelevant} | {site for site, _ in relevant}
    return score_components(called_ours(rules, sites), irrelevant, relevant,
                            site_params(row["url"] for row in rows))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("crawl", type=Path, help="the directory make_dup_crawl.py wrote")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--save-rules", type=Path, help="write the rules learned from the truth")
    parser.add_argument("--scale", type=int, metavar="PAGES",
                        help="instead: learn one synthetic site of PAGES articles, print the cost")
    parser.add_argument("--score-rules", type=Path, metavar="RULES_JSON",
                        help="instead: score a rules file a run wrote (warcdeboil clean CRAWL "
                             "--url-rules RULES_JSON) against the crawl's truth")
    args = parser.parse_args(argv)
    if args.scale:
        print(json.dumps(scale(args.scale)))
        return
    if args.score_rules:
        print(json.dumps(score_file(args.crawl, args.score_rules), indent=1))
        return
    results = evaluate(args.crawl, args.save_rules)
    for name, r in results.items():
        for label in ("missed", "relevant_called_irrelevant", "wrong_merges"):
            for item in r.get(label, [])[:12]:
                print(f"  {name} {label}: {item}", file=sys.stderr)
        if "by_kind" in r:
            print(f"  {name} variants by kind: {r['by_kind']}", file=sys.stderr)
    print(markdown(results) if args.markdown else json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
