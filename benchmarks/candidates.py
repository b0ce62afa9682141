"""Template precision/recall and speed for candidate tag sets, on the evaluation archives.

    python benchmarks/candidates.py [--extra p,li] [--datasets dragnet,l3s-gn1,cleanportaleval]

Runs the pipeline in-process with ``CANDIDATE_TAGS`` extended by ``--extra`` and scores the JSONL
output with the token measure of ../shared/eval/README.md on pages of sites with >= 5 pages.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from warcdeboil.evaluate import evaluate, load_gold, load_predictions
from warcdeboil.output.formats import OutputFormat
from warcdeboil.page import dom
from warcdeboil.run.local import clean
from warcdeboil.run.options import Options
from warcdeboil.site.clean import Mode

EVAL = Path(__file__).resolve().parent.parent.parent / "shared" / "eval"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--extra", default="", help="comma-separated tags to add")
    parser.add_argument("--datasets", default="dragnet,l3s-gn1,cleanportaleval")
    args = parser.parse_args()
    extra = tuple(t for t in args.extra.split(",") if t)
    # An experiment, in this process only: analyse() and clean_html() both pick candidates out
    # of a page's elements by tag number with the seeds table.
    ids = dom._tag_ids(extra)
    dom._CANDIDATE_SEEDS.update({ids[t]: dom.xxh3_64_intdigest(t.encode()) for t in extra})
    for name in args.datasets.split(","):
        with tempfile.TemporaryDirectory() as out:
            started = time.process_time()
            summary = clean([EVAL / f"{name}.warc.gz"], out,
                            Options(format=OutputFormat.JSONL, mode=Mode.TEMPLATE, workers=1))
            cpu = time.process_time() - started
            report = evaluate(load_predictions(Path(out).glob("*.jsonl.gz")),
                              load_gold(EVAL / f"{name}.gold.jsonl.gz"))
        big = report.large_sites
        print(f"{name:16} +{','.join(extra) or '-':24} P {big.precision:.3f} R {big.recall:.3f} "
              f"F1 {big.f1:.3f} ({big.pages} pages)  {summary.apply.cleaned / cpu:.0f} pages/CPU-s")


if __name__ == "__main__":
    main()
