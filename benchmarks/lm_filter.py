"""The language model in the cleaning run: what the line filter does to F1, whether a page
scored by a model trained on it is misjudged, and how pages of other languages score.

    python benchmarks/lm_filter.py [--eval ../shared/eval] [--warcs ../shared/warcs] [--json OUT]

1. **F1 with and without the line filter**, on every dataset of ``--eval``: ``clean --lm auto
   --line-perplexity`` in template mode (all the text but the site's template) and in content
   mode, then the text each ``--max-line-perplexity X`` keeps: the lines scoring at most X (lines
   are scored independently, so this is the filter's text: ``tests/test_lm_filter.py`` checks
   it line for line). Token F1 as ``warcdeboil eval`` computes it.
2. **Self-scoring**: the content-mode pages of each dataset, split in two by the hash of their
   URL; a model trained on half A scores A's pages (seen) and B's (held out), and a model of all
   the pages scores every page. Quartiles of each, and how far the pages' order by perplexity
   moves between the seen and the held-out score (Spearman's rho, pages changing bucket).
3. **Languages**: ``clean --lm auto`` over ``--warcs`` (template and content mode): quartiles
   of the perplexity of the pages of each language under the run's models of that language.
4. **The noise filter** (``--only noise``): each dataset of ``--eval`` in turn is cleaned
   (template and content mode) with a model that ``warcdeboil lm train`` made of the gold text
   of the four others (never of its own pages), ``--line-noise --max-line-noise 1``; then the
   text each ``--max-line-noise X`` keeps (lines scored independently, as above; pages of
   another language than the model's keep every line, as the filter leaves them). Token F1 as
   ``warcdeboil eval`` computes it, and the lines dropped. Then the same run with the default
   filter and no ``--line-noise`` ("default run": the filter scores in full only the lines
   near its limit), whose text and lines dropped should be those of 0.9999.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import output_pages  # noqa: E402  (this folder's)

from warcdeboil.evaluate import evaluate, load_gold
from warcdeboil.lm import LanguageModel
from warcdeboil.lm.scoring import url_half
from warcdeboil.lm.stage import percentile_limits, train_run_model

DATASETS = ("dragnet", "l3s-gn1", "cleanportaleval", "cleaneval", "scrapinghub")
LIMITS = (300.0, 1000.0, 3000.0, 10000.0)  # --max-line-perplexity values tried
NOISE_LIMITS = (0.99, 0.995, 0.999, 0.9995, 0.9999, 0.99999)  # --max-line-noise values tried


def run_clean(inputs: list[Path], out: Path, *options: str) -> list[dict[str, Any]]:
    """The JSONL pages of ``warcdeboil clean`` (a child process, one worker)."""
    subprocess.run([sys.executable, "-m", "warcdeboil", "clean", *map(str, inputs), "-o",
                    str(out), "-f", "jsonl", "-j", "1", "-q", *options], check=False,
                   env={**os.environ})
    return output_pages(out)


def filtered(page: dict[str, Any], limit: float | None,
             scores: str = "line_perplexities") -> str:
    """The text a line filter at ``limit`` keeps of a page, by each line's score in the field
    ``scores`` (None: the whole text)."""
    if limit is None:
        return str(page["text"])
    lines = page["text"].split("\n")
    return "\n".join(line for line, score in zip(lines, page[scores], strict=True)
                     if score is None or score <= limit)


def f1_table(eval_dir: Path, tmp: Path) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for name in DATASETS:
        gold = load_gold(eval_dir / f"{name}.gold.jsonl.gz")
        for mode in ("template", "content"):
            pages = run_clean([eval_dir / f"{name}.warc.gz"], tmp / f"{name}-{mode}",
                              "--mode", mode, "--lm", "auto", "--line-perplexity")
            row = {}
            lines = sum(len(p["line_perplexities"]) for p in pages)
            for limit in (None, *LIMITS):
                texts = {p["url"]: filtered(p, limit) for p in pages}
                kept = sum(t.count("\n") + 1 for t in texts.values())
                report = evaluate(texts, gold)
                row["none" if limit is None else f"{limit:g}"] = {
                    "f1": report.overall.f1, "precision": report.overall.precision,
                    "recall": report.overall.recall, "lines_dropped": lines - kept}
            results[f"{name}/{mode}"] = row
            print(name, mode, {k: round(v["f1"], 4) for k, v in row.items()}, flush=True)
    return results


def noise_filtered(page: dict[str, Any], limit: float | None, own: str) -> str:
    """The text ``--max-line-noise limit`` keeps of a page written with every line's noise
    score (a page of another language than ``own``, the model's, keeps every line)."""
    if page["language"] and page["language"] != own:
        return str(page["text"])
    return filtered(page, limit, "line_noise")


def noise_table(eval_dir: Path, tmp: Path) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for name in DATASETS:
        train = tmp / f"not-{name}.jsonl"
        with open(train, "w", encoding="utf-8") as out:
            for other in DATASETS:
                if other != name:
                    for page in load_gold(eval_dir / f"{other}.gold.jsonl.gz").values():
                        out.write(json.dumps({"text": page.gold}) + "\n")
        model = tmp / f"not-{name}.lm"
        subprocess.run([sys.executable, "-m", "warcdeboil", "lm", "train", str(train), "-o",
                        str(model)], check=True, stdout=subprocess.DEVNULL)
        own = LanguageModel.load(model).language
        gold = load_gold(eval_dir / f"{name}.gold.jsonl.gz")
        for mode in ("template", "content"):
            pages = run_clean([eval_dir / f"{name}.warc.gz"], tmp / f"{name}-{mode}-noise",
                              "--mode", mode, "--lm", str(model), "--line-noise",
                              "--max-line-noise", "1")
            row = {}
            lines = sum(len(p["line_noise"]) for p in pages)
            for limit in (None, *NOISE_LIMITS):
                texts = {p["url"]: noise_filtered(p, limit, own) for p in pages}
                kept = sum(t.count("\n") + 1 for t in texts.values())
                report = evaluate(texts, gold)
                row["none" if limit is None else f"{limit:g}"] = {
                    "f1": report.overall.f1, "precision": report.overall.precision,
                    "recall": report.overall.recall, "lines_dropped": lines - kept}
            # The run's own default filter (no --line-noise: ``noise.filter_scores``, the full
            # score only for lines near the limit): its text, F1 and lines dropped.
            pages = run_clean([eval_dir / f"{name}.warc.gz"], tmp / f"{name}-{mode}-default",
                              "--mode", mode, "--lm", str(model))
            report = evaluate({p["url"]: p["text"] for p in pages}, gold)
            row["default run"] = {
                "f1": report.overall.f1, "precision": report.overall.precision,
                "recall": report.overall.recall,
                "lines_dropped": sum(p["removed"].get("noise_lines", 0) for p in pages)}
            results[f"{name}/{mode}"] = row
            print(name, mode, {k: (round(v["f1"], 4), v["lines_dropped"])
                               for k, v in row.items()}, flush=True)
    return results


def quartiles(values: list[float]) -> list[float]:
    return [float(q) for q in np.percentile(values, [25, 50, 75])] if values else []


def self_scoring(eval_dir: Path, tmp: Path) -> dict[str, Any]:
    results = {}
    for name in ("dragnet", "l3s-gn1", "cleaneval"):
        pages = [p for p in run_clean([eval_dir / f"{name}.warc.gz"], tmp / f"self-{name}",
                                      "--mode", "content") if p["language"] == "en"]
        halves: list[list[str]] = [[], []]
        for page in pages:
            halves[url_half(page["url"])].append(page["text"])
        # As a run trains them (``--lm auto``: the word model alone).
        a, b, both = (train_run_model(texts) for texts in (halves[0], halves[1],
                                                           halves[0] + halves[1]))
        seen = a.perplexities(halves[0])
        held = b.perplexities(halves[0])
        whole = both.perplexities(halves[0] + halves[1])
        cross = b.perplexities(halves[0]) + a.perplexities(halves[1])
        rank = lambda v: np.argsort(np.argsort(v))  # noqa: E731
        rho = float(np.corrcoef(rank(whole), rank(cross))[0, 1])
        moved = sum(_bucket(x, whole) != _bucket(y, cross) for x, y in zip(whole, cross,
                                                                          strict=True))
        results[name] = {
            "pages": [len(halves[0]), len(halves[1])],
            "seen_by_its_model": quartiles(seen), "held_out": quartiles(held),
            "all_pages_model": quartiles(whole), "other_half_model": quartiles(cross),
            "spearman_all_vs_cross": rho, "pages_changing_bucket": moved,
        }
        print(name, results[name], flush=True)
    return results


def _bucket(value: float, values: list[float]) -> str:
    head, middle = percentile_limits(values)
    return "head" if value <= head else "middle" if value <= middle else "tail"


def languages(warcs: Path, tmp: Path) -> dict[str, Any]:
    return {mode: _languages(warcs, tmp / mode, mode) for mode in ("template", "content")}


def _languages(warcs: Path, tmp: Path, mode: str) -> dict[str, Any]:
    inputs = sorted(p for p in warcs.iterdir() if not p.name.endswith((".json", ".md")))
    pages = run_clean(inputs, tmp / "langs", "--mode", mode, "--lm", "auto")
    by_language: dict[str, list[float]] = {}
    for page in pages:
        if page["perplexity"] is not None:
            by_language.setdefault(page["language"], []).append(page["perplexity"])
    counts: dict[str, int] = {}
    for page in pages:
        counts[str(page["language"])] = counts.get(str(page["language"]), 0) + 1
    result = {lang: {"pages": counts[str(lang)], "scored": len(v), "quartiles": quartiles(v)}
              for lang, v in sorted(by_language.items())}
    result["unscored"] = {lang: n - len(by_language.get(lang, [])) for lang, n in counts.items()}
    print(result, flush=True)
    return result


def stage_cost(archive: Path, tmp: Path) -> dict[str, Any]:
    """CPU seconds of the stage before pass 2 alone (one worker, in this process), from the
    work directory of a content-mode run: the texts, training (--lm auto) and scoring
    (buckets), for --lm auto, --lm auto with buckets, and a given model with buckets."""
    import time

    from warcdeboil.lm.scoring import LmSettings
    from warcdeboil.lm.stage import prepare_lm
    from warcdeboil.run.options import DEFAULT_PARTITIONS
    from warcdeboil.run.pool import run_jobs
    from warcdeboil.site.clean import Mode
    from warcdeboil.site.pagestore import page_store_path
    from warcdeboil.site.sitekey import SiteKeyMode

    work = tmp / "work"
    run_clean([archive], tmp / "stage-out", "--mode", "content", "--work-dir", str(work))
    model = tmp / "given.lm"
    pages = run_clean([archive], tmp / "stage-texts", "--mode", "content")
    LanguageModel.train([p["text"] for p in pages]).save(model)
    results = {}
    for name, settings in (("auto", LmSettings("auto")),
                           ("auto, buckets", LmSettings("auto", buckets=True)),
                           ("given model, buckets", LmSettings(str(model), buckets=True))):
        start = time.process_time()
        prepare_lm(settings, [page_store_path(work / "pages", 0)], work, work / "profiles",
                   DEFAULT_PARTITIONS, SiteKeyMode.HOST, Mode.CONTENT, 1, run_jobs)
        results[name] = time.process_time() - start
        print(f"stage, {name}: {results[name]:.2f} CPU-s", flush=True)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--eval", type=Path, default=Path("../shared/eval"))
    parser.add_argument("--warcs", type=Path, default=Path("../shared/warcs"))
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--only", choices=["f1", "self", "languages", "stage", "noise"])
    args = parser.parse_args()
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="warcdeboil-lmbench-") as tmp:
        if args.only in (None, "languages"):
            results["languages"] = languages(args.warcs, Path(tmp))
        if args.only in (None, "self"):
            results["self_scoring"] = self_scoring(args.eval, Path(tmp))
        if args.only in (None, "stage"):
            results["stage"] = stage_cost(args.eval / "dragnet.warc.gz", Path(tmp))
        if args.only in (None, "f1"):
            results["f1"] = f1_table(args.eval, Path(tmp))
        if args.only in (None, "noise"):
            results["noise"] = noise_table(args.eval, Path(tmp))
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
