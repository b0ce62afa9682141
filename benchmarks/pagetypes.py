"""F1 of warcdeboil and the peers by page type and by split (calibration or held-out sites).

    python benchmarks/pagetypes.py eval-extra/wceb.warc.gz ../shared/eval/scrapinghub.warc.gz \
        [--only trafilatura,readability,warcdeboil] [--cache peers-cache/] [--markdown]

Each extractor runs as in ``peers.py`` (a child process per archive; warcdeboil as its command
line, ``--warcdeboil-args`` appended). Pages are grouped by the gold's ``page_type`` where it has
one (``scripts/convert_wceb.py`` writes it), and by the split of ``scripts/train_content.py``:
*held-out* sites (odd CRC-32 of the gold's site, and every page of a test split such as WCXB's
``wceb-test``), which no fitting step reads, and the *calibration* sites. ``--cache DIR`` keeps
each peer's texts (one JSON per archive and peer), so a second run scores warcdeboil alone
against the same peer outputs; warcdeboil is never cached. ``--pr`` gives each cell's mean
precision and recall beside its F1 (as ``--favor``'s figures are reported).
Also counts what each extractor outputs on pages whose gold is empty (no main content).
"""

from __future__ import annotations

import argparse
import gzip
import json
import shlex
import sys
from collections import defaultdict
from pathlib import Path
from statistics import mean
from typing import Any

from peers import (  # this folder's peers.py
    PEERS,
    WARCDEBOIL,
    column_title,
    dataset_name,
    gold_path,
    in_child,
    measure_peer,
    render,
    run_warcdeboil,
)

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
from train_content import fitted_on  # noqa: E402  (scripts/ is no package; the split it fits on)

from warcdeboil.evaluate import load_gold, score_text  # noqa: E402


def page_types(path: Path) -> dict[str, str]:
    """``page_type`` by URL, from a gold file ("" where the gold has none)."""
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return {obj["url"]: str(obj.get("page_type") or "") for obj in map(json.loads, fh)}


def texts_of(key: str, archive: Path, cache: Path | None, extra: list[str]) -> dict[str, str]:
    """The extractor's text by URL (a peer's from the cache when it is there)."""
    if key == WARCDEBOIL:
        return run_warcdeboil(archive, None, extra)["texts"]
    cached = cache / f"{dataset_name(archive)}.{key}.json" if cache else None
    if cached is not None and cached.is_file():
        return json.loads(cached.read_text(encoding="utf-8"))
    texts = in_child(measure_peer, key, str(archive), None)["texts"]
    if cached is not None:
        cached.parent.mkdir(parents=True, exist_ok=True)
        cached.write_text(json.dumps(texts, ensure_ascii=False), encoding="utf-8")
    return texts


def cell(f1: dict[str, float], pr: dict[str, tuple[float, float]], urls: list[str],
         with_pr: bool) -> str:
    """Mean F1 of the pages, and with ``with_pr`` their mean precision and recall."""
    text = f"{mean(f1[u] for u in urls):.3f}"
    if with_pr:
        text += f" ({mean(pr[u][0] for u in urls):.3f}/{mean(pr[u][1] for u in urls):.3f})"
    return text


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("archives", type=Path, nargs="+", help="NAME.warc.gz evaluation archives")
    parser.add_argument("--only", default="trafilatura,trafilatura-precision,readability,"
                        "warcdeboil", help="comma-separated extractors (peers.py's keys)")
    parser.add_argument("--cache", type=Path, help="directory for the peers' texts")
    parser.add_argument("--warcdeboil-args", default="", help="appended to its command line")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--pr", action="store_true",
                        help="each cell as mean F1 (mean precision/mean recall)")
    parser.add_argument("--json", type=Path, help="every figure, and the per-page F1")
    args = parser.parse_args(argv)
    keys = [k.strip() for k in args.only.split(",") if k.strip()]
    unknown = [k for k in keys if k != WARCDEBOIL and k not in PEERS]
    if unknown:
        parser.error(f"unknown extractor {', '.join(unknown)}")
    extra = shlex.split(args.warcdeboil_args)

    rows: list[list[str]] = []
    empty_rows: list[list[str]] = []
    dump: dict[str, Any] = {}
    for archive in args.archives:
        name = dataset_name(archive)
        gold = load_gold(gold_path(archive))
        types = page_types(gold_path(archive))
        groups: dict[str, list[str]] = defaultdict(list)
        for url, page in gold.items():
            split = "calibration" if fitted_on(name, page.site) else "held-out"
            groups["all"].append(url)
            groups[split].append(url)
            if types.get(url):
                groups[f"type {types[url]}"].append(url)
                groups[f"type {types[url]}, {split}"].append(url)
        f1: dict[str, dict[str, float]] = {}
        pr: dict[str, dict[str, tuple[float, float]]] = {}
        for key in keys:
            texts = texts_of(key, archive, args.cache, extra)
            scores = {url: score_text(texts.get(url, ""), page.gold) for url, page in gold.items()}
            f1[key] = {url: score.f1 for url, score in scores.items()}
            pr[key] = {url: (score.precision, score.recall) for url, score in scores.items()}
            print(f"{name}: {column_title(key)}: F1 {mean(f1[key].values()):.3f}",
                  file=sys.stderr, flush=True)
            no_content = [url for url, page in gold.items() if not page.gold.split()]
            if no_content:
                chars = [len(texts.get(url, "")) for url in no_content]
                empty_rows.append([name, column_title(key), str(len(no_content)),
                                   str(sum(c == 0 for c in chars)), f"{mean(chars):.0f}"])
        for label in sorted(groups, key=lambda g: (g != "all", g)):
            urls = groups[label]
            rows.append([f"{name}, {label} ({len(urls)})",
                         *(cell(f1[k], pr[k], urls, args.pr) for k in keys)])
        dump[name] = f1
    print(render(["pages", *map(column_title, keys)], rows, args.markdown))
    if empty_rows:
        print()
        print(render(["dataset", "extractor", "pages with empty gold", "output empty",
                      "mean characters output"], empty_rows, args.markdown))
    if args.json:
        args.json.write_text(json.dumps(dump, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
