"""What the noise score costs a content run: CPU of ``warcdeboil clean`` with a given model,
with and without the noise filter, beside the same run without a model.

    python benchmarks/noise_cost.py                       # every dataset of ../shared/eval
    python benchmarks/noise_cost.py --dataset dragnet --repeat 5

The model is made once (``--work``, kept) by ``warcdeboil lm train`` of the gold text of the
five datasets of ../shared/eval (as ``lm-cost-2026-11-25.md``'s MODEL), so it carries its noise
calibration. For each dataset, one worker, ``--format jsonl --mode content``, the cases run in
turn, ``--repeat`` rounds (a loaded machine drifts: each round has every case):

- ``none``: no model;
- ``perplexity``: ``--lm MODEL --max-line-noise 1``: each page's perplexity, no line filter
  (what ``--lm MODEL`` did before the noise score);
- ``noise``: ``--lm MODEL``: the default line filter of a calibrated model (0.9999), which
  scores in full only the lines near its limit (``noise.filter_scores``);
- ``noise+jsonl``: ``--lm MODEL --line-noise``: the same filter on every line's full score,
  and each line's score in JSONL.

CPU: user + system of the child (``benchmarks/speed.py``'s ``run_once``: the real command line,
bytecode compiled first). Each case's median over the rounds; "added" is against ``none``
(issue 19's target: a given model adds at most 10 %), and the noise score's own share is
``noise`` against ``perplexity``.

Writes benchmarks/results/noise-cost-DATE.json and .md.
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from speed import bytecode_env, run_once  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
EVAL = ROOT.parent / "shared" / "eval"
DATASETS = ("dragnet", "l3s-gn1", "cleanportaleval", "cleaneval", "scrapinghub")
CASES: dict[str, tuple[str, ...]] = {
    "none": (),
    "perplexity": ("--max-line-noise", "1"),
    "noise": (),
    "noise+jsonl": ("--line-noise",),
}


def model(work: Path, env: dict[str, str]) -> Path:
    """The model of the five datasets' gold text, trained once by ``warcdeboil lm train``."""
    path = work / "gold.lm"
    if path.exists():
        return path
    work.mkdir(parents=True, exist_ok=True)
    gold = work / "gold.jsonl"
    with gold.open("w", encoding="utf-8") as out:
        for name in DATASETS:
            with gzip.open(EVAL / f"{name}.gold.jsonl.gz", "rt", encoding="utf-8") as fh:
                for line in fh:
                    out.write(json.dumps({"text": json.loads(line)["gold"]}) + "\n")
    subprocess.run([sys.executable, "-m", "warcdeboil", "lm", "train", str(gold), "-o",
                    str(path), "--json"], check=True, env=env, capture_output=True)
    return path


def measure(archive: Path, lm: Path, env: dict[str, str], repeat: int) -> dict:
    """Every case's CPU seconds, ``repeat`` rounds, and the summary of a ``noise`` run."""
    base = ("--mode", "content")
    seconds: dict[str, list[float]] = {case: [] for case in CASES}
    pages = 0
    for _ in range(repeat):
        for case, extra in CASES.items():
            given = () if case == "none" else ("--lm", str(lm), *extra)
            found = run_once(archive, "jsonl", env, base + given)
            seconds[case].append(found["cpu_seconds"])
            pages = found["pages"]
    # The lines the default filter drops (one more run, not timed).
    with tempfile.TemporaryDirectory(prefix="warcdeboil-noise-") as out:
        done = subprocess.run(
            [sys.executable, "-m", "warcdeboil", "clean", str(archive), "-o", out, "--format",
             "jsonl", "--mode", "content", "-j", "1", "--json", "-q", "--lm", str(lm)],
            check=True, capture_output=True, text=True, env=env)
        dropped = json.loads(done.stdout)["lines_dropped_noise"]
    medians = {case: statistics.median(values) for case, values in seconds.items()}
    return {"pages": pages, "seconds": seconds, "medians": medians,
            "lines_dropped_noise": dropped}


def _pct(a: float, b: float) -> str:
    return f"{100 * (a / b - 1):+.1f} %"


def markdown(results: dict) -> str:
    date, meta = results["date"], results["meta"]
    out = [f"# What the noise score costs a content run — {date}", "",
           f"Machine: {meta['machine']}, {os.cpu_count()} cores shared with other engineers' "
           f"work, Python {meta['python']}. Command: `{meta['command']}`. Model: `warcdeboil lm "
           f"train` of the gold text of the five sets ({meta['model_mb']:.1f} MB, with its "
           "noise calibration). Each run: `warcdeboil clean ARCHIVE --format jsonl --mode "
           f"content -j 1`, CPU of the child, median of {meta['repeat']} rounds (every case "
           "in each round).", "",
           "| dataset | pages | no model | `--lm` `--max-line-noise 1` (perplexity) | "
           "`--lm` (noise filter, default) | `--lm --line-noise` | noise filter vs "
           "perplexity only | lines dropped (default) |",
           "|---|---|---|---|---|---|---|---|"]
    total = {case: 0.0 for case in CASES}
    for name, r in results["datasets"].items():
        m = r["medians"]
        for case in CASES:
            total[case] += m[case]
        out.append(f"| {name} | {r['pages']:,} | {m['none']:.2f} | {m['perplexity']:.2f} "
                   f"({_pct(m['perplexity'], m['none'])}) | {m['noise']:.2f} "
                   f"({_pct(m['noise'], m['none'])}) | {m['noise+jsonl']:.2f} "
                   f"({_pct(m['noise+jsonl'], m['none'])}) | "
                   f"{_pct(m['noise'], m['perplexity'])} | {r['lines_dropped_noise']:,} |")
    out.append(f"| all five | | {total['none']:.2f} | {total['perplexity']:.2f} "
               f"({_pct(total['perplexity'], total['none'])}) | {total['noise']:.2f} "
               f"({_pct(total['noise'], total['none'])}) | {total['noise+jsonl']:.2f} "
               f"({_pct(total['noise+jsonl'], total['none'])}) | "
               f"{_pct(total['noise'], total['perplexity'])} | |")
    out += ["", "Every round's CPU seconds: `noise-cost-" + date + ".json`.", ""]
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", action="append", choices=DATASETS)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--work", type=Path, default=Path("noise-cost-work"))
    parser.add_argument("--date", default=datetime.date.today().isoformat())
    args = parser.parse_args()
    env = bytecode_env()
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    lm = model(args.work, env)
    results: dict = {"date": args.date, "datasets": {}, "meta": {
        "machine": platform.machine(), "python": platform.python_version(),
        "repeat": args.repeat, "model_mb": lm.stat().st_size / 1e6,
        "command": "python benchmarks/noise_cost.py" + "".join(
            f" --dataset {d}" for d in args.dataset or ()) + f" --repeat {args.repeat}"}}
    for name in args.dataset or DATASETS:
        results["datasets"][name] = found = measure(EVAL / f"{name}.warc.gz", lm, env,
                                                    args.repeat)
        print(name, {case: round(v, 2) for case, v in found["medians"].items()}, flush=True)
    where = ROOT / "benchmarks" / "results"
    (where / f"noise-cost-{args.date}.json").write_text(json.dumps(results, indent=1) + "\n")
    (where / f"noise-cost-{args.date}.md").write_text(markdown(results))
    print(markdown(results))


if __name__ == "__main__":
    main()
