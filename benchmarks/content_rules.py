"""Mean F1 of content mode's judgement in one process, by dataset, split and page type.

    python benchmarks/content_rules.py ../shared/eval/dragnet.warc.gz eval-extra/wceb.warc.gz \
        [--split calibration|held-out|all] [--json pages.json]

What rules are chosen on: each page as ``scripts/train_content.py`` sees it (its site's template
fitted on the site's pages in URL order and removed, ``split_blocks``), then
:func:`warcdeboil.page.content.extract_blocks` with the site's repeated blocks, scored against the
gold as ``train_content.py`` scores. The pages are analysed once, so a rule is measured in
seconds, not in an end-to-end run (``pagetypes.py``, which gives the same figures to the fourth
decimal). Only the calibration sites by default (even CRC-32 of the gold's site): the held-out
sites are for the final figures, computed once.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path
from statistics import mean

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
from train_content import fitted_on, fitted_pages  # noqa: E402  (scripts/ is no package)

from warcdeboil.evaluate import score_text  # noqa: E402
from warcdeboil.page.content import extract_blocks, split_blocks  # noqa: E402
from warcdeboil.page.dom import plain_text, remove_template  # noqa: E402


def page_f1(archive: Path, split: str) -> dict[str, tuple[float, str, str, bool]]:
    """Per URL of the split: F1, split, page type ("" where the gold has none), and whether its
    site has 5 pages or more in the gold."""
    name = archive.name.removesuffix(".warc.gz")
    gold_file = archive.with_name(f"{name}.gold.jsonl.gz")
    with gzip.open(gold_file, "rt", encoding="utf-8") as fh:
        types = {obj["url"]: str(obj.get("page_type") or "") for obj in map(json.loads, fh)}
    pages = fitted_pages(archive.parent, name)
    sizes = Counter(gold.site or site for _, site, _, _, gold, _ in pages)
    result = {}
    for url, site, text, profile, gold, _ in pages:
        gold_site = gold.site or site
        where = "calibration" if fitted_on(name, gold_site) else "held-out"
        if split not in ("all", where):
            continue
        marked = remove_template(text, profile.template, profile.template_slots).marked
        blocks = split_blocks(marked.decode("utf-8", "surrogatepass"))
        kept = extract_blocks(blocks, repeated=profile.repeated, url=url).text
        result[url] = (score_text(plain_text(kept, False), gold.gold).f1, where,
                       types.get(url, ""), sizes[gold_site] >= 5)
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("archives", type=Path, nargs="+", help="NAME.warc.gz beside its gold")
    parser.add_argument("--split", choices=("calibration", "held-out", "all"),
                        default="calibration")
    parser.add_argument("--json", type=Path, help="the per-page figures")
    args = parser.parse_args(argv)
    dump = {}
    for archive in args.archives:
        name = archive.name.removesuffix(".warc.gz")
        pages = page_f1(archive, args.split)
        groups: dict[str, list[float]] = defaultdict(list)
        for f1, where, page_type, large in pages.values():
            groups[where].append(f1)
            if large:
                groups[f"{where}, sites >= 5"].append(f1)
            if page_type:
                groups[f"{where}, {page_type}"].append(f1)
        for label in sorted(groups):
            print(f"{name:16} {label:36} {mean(groups[label]):.4f} ({len(groups[label])})")
        dump[name] = pages
    if args.json:
        args.json.write_text(json.dumps(dump) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
