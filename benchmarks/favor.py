"""Operating points of content mode (``--favor``): precision, recall and F1 over a grid, in process.

    python benchmarks/favor.py \
        ../shared/eval/{dragnet,scrapinghub,l3s-gn1,cleaneval,cleanportaleval}.warc.gz \
        eval-extra/wceb.warc.gz [--split calibration|held-out|all] [--markdown] [--json out.json]

Each page as ``content_rules.py`` sees it (its site's template fitted on the site's pages in URL
order and removed, ``split_blocks``), judged at every point of a grid of thresholds and rules
(:class:`warcdeboil.page.favor.OperatingPoint`), scored as ``warcdeboil eval`` scores: mean token
precision, recall and F1 per page. Only the calibration sites by default (even CRC-32 of the
gold's site; a ``NAME-test`` set is held out whole), which is what the points are chosen on.

The choice, printed last: for ``precision``, the point of highest mean precision whose F1 is at
most ``--f1-loss`` below balanced's on every set; for ``recall``, the point of highest mean recall
under the same bound. Means are over sets, each set weighing the same.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections.abc import Iterable
from dataclasses import asdict, replace
from pathlib import Path
from statistics import mean

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
from peers import render  # noqa: E402  (this folder's peers.py)
from train_content import fitted_on, load_pages  # noqa: E402  (scripts/ is no package)

from warcdeboil.evaluate import score_text  # noqa: E402
from warcdeboil.page.content import OPERATING_POINTS, extract_blocks  # noqa: E402
from warcdeboil.page.dom import plain_text  # noqa: E402
from warcdeboil.page.favor import Favor, OperatingPoint  # noqa: E402

BALANCED = OPERATING_POINTS[Favor.BALANCED]


def grid() -> list[OperatingPoint]:
    """The points tried: balanced first, then balanced without each of its rules that add
    blocks back, or with the blocks of asides dropped; on the precision side, higher thresholds,
    with link-dense blocks dropped or not and short blocks trimmed from the edges of the text or
    not; on the recall side, lower thresholds on pages with prose and on listings."""
    points = [BALANCED, replace(BALANCED, fill_gaps=False), replace(BALANCED, threads=False),
              replace(BALANCED, drop_asides=True)]
    for threshold, link_dense, edge in itertools.product((0.5, 0.55, 0.6, 0.65), (False, True),
                                                         (0, 25, 40, 60)):
        points.append(replace(BALANCED, threshold=threshold, drop_link_dense=link_dense,
                              edge_chars=edge))
    for threshold, listing in itertools.product((0.3, 0.35, 0.4, 0.45), (0.1, 0.2)):
        points.append(replace(BALANCED, threshold=threshold, listing_threshold=listing))
    return list(dict.fromkeys(points))  # balanced once


def label(point: OperatingPoint) -> str:
    return (f"t={point.threshold:g} listing={point.listing_threshold:g}"
            + (" gaps=off" if not point.fill_gaps else "")
            + (" threads=off" if not point.threads else "")
            + (" link-dense-out" if point.drop_link_dense else "")
            + (" asides-out" if point.drop_asides else "")
            + (f" edges<{point.edge_chars}-out" if point.edge_chars else ""))


def measure(pages: list[tuple], points: Iterable[OperatingPoint]) -> dict[OperatingPoint, tuple]:
    """Mean (precision, recall, F1) per page at each point."""
    result = {}
    for point in points:
        scores = []
        for url, _site, blocks, gold, repeated in pages:
            kept = extract_blocks(blocks, repeated=repeated, url=url, point=point).text
            scores.append(score_text(plain_text(kept, False), gold))
        result[point] = (mean(s.precision for s in scores), mean(s.recall for s in scores),
                         mean(s.f1 for s in scores))
    return result


def choose(figures: dict[str, dict[OperatingPoint, tuple]], f1_loss: float
           ) -> dict[str, OperatingPoint]:
    """The precision and the recall point, by the rule of this module's docstring."""
    allowed = [point for point in next(iter(figures.values()))
               if all(by[point][2] >= by[BALANCED][2] - f1_loss for by in figures.values())]

    def best(column: int) -> OperatingPoint:
        return max(allowed, key=lambda p: (round(mean(by[p][column] for by in figures.values()),
                                                 6), mean(by[p][2] for by in figures.values())))

    return {"precision": best(0), "recall": best(1)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("archives", type=Path, nargs="+", help="NAME.warc.gz beside its gold")
    parser.add_argument("--split", choices=("calibration", "held-out", "all"),
                        default="calibration")
    parser.add_argument("--f1-loss", type=float, default=0.008,
                        help="how far below balanced's F1 a chosen point may fall on any set "
                        "(0.008: the target's 0.01, less a margin for the held-out sites)")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--json", type=Path, help="every figure")
    args = parser.parse_args(argv)
    points = grid()
    figures: dict[str, dict[OperatingPoint, tuple]] = {}
    for archive in args.archives:
        name = archive.name.removesuffix(".warc.gz")
        pages = [page for page in load_pages(archive.parent, name)
                 if args.split == "all" or (fitted_on(name, page[1]) == (
                     args.split == "calibration"))]
        print(f"{name}: {len(pages)} pages", file=sys.stderr, flush=True)
        figures[name] = measure(pages, points)
    names = list(figures)
    rows = [[label(point), *(" / ".join(f"{v:.3f}" for v in figures[n][point]) for n in names),
             " / ".join(f"{mean(figures[n][point][i] for n in names):.3f}" for i in range(3))]
            for point in points]
    print(render(["point", *(f"{n} P / R / F1" for n in names), "mean P / R / F1"], rows,
                 args.markdown))
    chosen = choose(figures, args.f1_loss)
    print()
    for side, point in chosen.items():
        print(f"{side}: {label(point)}")
    if args.json:
        args.json.write_text(json.dumps({
            "split": args.split, "f1_loss": args.f1_loss,
            "chosen": {side: asdict(point) for side, point in chosen.items()},
            "points": [{**asdict(point), **{n: figures[n][point] for n in names}}
                       for point in points]}, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
