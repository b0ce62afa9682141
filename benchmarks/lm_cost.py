"""What the language model adds to a cleaning run, a part at a time, in one process: to run
under ``valgrind --tool=callgrind`` (instruction counts, which the load of a shared machine does
not move) or alone (CPU seconds).

    python benchmarks/lm_cost.py ../shared/eval/dragnet.warc.gz --model en.lm --part score

The first call makes a work directory (``--work``, kept): a content-mode run with ``--lm MODEL
--perplexity-buckets``, whose page stores and cleaned pages the parts read. Parts:

- ``none``: only what every part does first (imports, reading the cleaned pages and the texts
  of ``train``): subtract its count from the others'.
- ``score``: pass 2 with a given model: load it, score every page in batches of 256 (the
  perplexity alone, no line filter: ``--max-line-noise 1``).
- ``noise``: the same with the noise filter (``--lm MODEL``'s default with a model that carries
  its calibration: ``--max-line-noise 0.9999``), every line's noise score computed too.
- ``stage``: the stage before pass 2 for buckets with a given model (``lm.stage.prepare_lm``: the
  pages cleaned and stored, their language, every page scored), on a copy of the work directory.
- ``train``: one model of ``--lm auto``: the English pages of half 0, as the stage trains it.
- ``auto``: the stage before pass 2 for ``--lm auto`` (no buckets): the pages cleaned and
  stored, two models a language trained, every page scored with the other half's model.
- ``stages``: ``stage`` and the duplicate stage's signing of the pages (``--dedup mark``, JSONL's
  default), as a run does both: in one walk of the page store where ``prepare_lm`` takes the
  signing jobs (``sign=``), else the signing after the stage (``dedup.stage.sign_file``), so
  that builds before and after the one walk compare.
"""

from __future__ import annotations

import argparse
import inspect
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def prepare(archive: Path, model: Path, work: Path) -> None:
    """A run's work directory with the language model stage's cleaned pages."""
    with tempfile.TemporaryDirectory(prefix="warcdeboil-lmcost-") as out:
        subprocess.run([sys.executable, "-m", "warcdeboil", "clean", str(archive), "-o", out,
                        "-f", "jsonl", "--mode", "content", "-j", "1", "-q", "--lm", str(model),
                        "--perplexity-buckets", "--work-dir", str(work)], check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("archive", type=Path)
    parser.add_argument("--model", type=Path, required=True, help="a given model (lm train)")
    parser.add_argument("--part", choices=["none", "score", "noise", "stage", "stages", "train",
                                           "auto"], required=True)
    parser.add_argument("--work", type=Path, default=Path("lm-cost-work"))
    args = parser.parse_args()
    if not (args.work / "lm" / "cleaned").is_dir():
        prepare(args.archive, args.model, args.work)

    from warcdeboil.dedup.verdicts import SignJob, signatures_dir
    from warcdeboil.lm import LanguageModel
    from warcdeboil.lm.cleaned import iter_cleaned_store
    from warcdeboil.lm.scoring import LmSettings, PageScorer, url_half
    from warcdeboil.lm.stage import cleaned_store_path, prepare_lm
    from warcdeboil.run.options import DEFAULT_PARTITIONS
    from warcdeboil.run.pool import run_jobs
    from warcdeboil.site.clean import Mode
    from warcdeboil.site.pagestore import page_store_path
    from warcdeboil.site.sitekey import SiteKeyMode

    pages = list(iter_cleaned_store(cleaned_store_path(args.work, 0)))
    texts = [page[2].text for page in pages if page[5] == "en" and url_half(page[1]) == 0]
    start = time.process_time()
    if args.part in ("score", "noise"):
        scorer = PageScorer(LmSettings(str(args.model)) if args.part == "score" else
                            LmSettings(str(args.model), max_noise=0.9999))
        for i in range(0, len(pages), 256):
            batch = pages[i:i + 256]
            # Their languages, as a text output has them (JSONL and WET identify every page).
            known = {"languages": [page[5] for page in batch]} if args.part == "noise" else {}
            scorer.score_many([(page[2], page[3]) for page in batch],
                              [page[1] for page in batch], **known)
    elif args.part in ("stage", "stages", "auto"):
        with tempfile.TemporaryDirectory(prefix="warcdeboil-lmcost-") as tmp:
            work = Path(tmp) / "work"
            shutil.copytree(args.work, work)
            shutil.rmtree(work / "dedup", ignore_errors=True)
            store = page_store_path(work / "pages", 0)
            sign = [SignJob(str(store), str(signatures_dir(work / "dedup")), 0,
                            str(work / "profiles"), DEFAULT_PARTITIONS, SiteKeyMode.HOST)]
            one_walk = "sign" in inspect.signature(prepare_lm).parameters
            extra: dict[str, object] = {"sign": sign} if args.part == "stages" and one_walk else {}
            if "blocks" in inspect.signature(prepare_lm).parameters:
                extra["blocks"] = False  # as a JSONL run's stage (its lean store of pages)
            settings = (LmSettings("auto") if args.part == "auto"
                        else LmSettings(str(args.model), buckets=True))
            start = time.process_time()
            prepare_lm(settings, [store], work,
                       work / "profiles", DEFAULT_PARTITIONS, SiteKeyMode.HOST, Mode.CONTENT, 1,
                       run_jobs, **extra)
            if args.part == "stages" and not one_walk:
                from warcdeboil.dedup.stage import sign_file

                sign_file(sign[0])
    elif args.part == "train":
        LanguageModel.train(texts)
    print(f"{args.part}: {time.process_time() - start:.2f} CPU-s ({len(pages)} pages, "
          f"{len(texts)} texts to train on)")


if __name__ == "__main__":
    main()
