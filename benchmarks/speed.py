"""End-to-end speed and peak memory of ``warcdeboil clean``, one worker, in a child process.

    python benchmarks/speed.py ../shared/eval/dragnet.warc.gz [--format jsonl] [--repeat 3]
    python benchmarks/speed.py ../shared/eval/dragnet.warc.gz --format warc --dedup revisit

Runs the real command line (scan + fit + rewrite, Python start-up included) and reports pages per
CPU-second (user + system time of the child) and its peak resident memory. The child reads
warcdeboil's bytecode, compiled before the timed runs, as from an installed wheel: with
``PYTHONDONTWRITEBYTECODE`` set, an editable install would compile its modules at every start.

Targets on dragnet.warc.gz with --format jsonl (content mode, its default): >= 250 pages per
CPU-second; the pipeline's issue asked >= 300 and < 512 MB when JSONL was template mode.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path


def bytecode_env() -> dict[str, str]:
    """The child's environment, with warcdeboil's bytecode compiled (into its ``__pycache__``
    folders, as Python itself writes them unless told not to)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    spec = importlib.util.find_spec("warcdeboil")
    assert spec is not None and spec.submodule_search_locations is not None
    # Not checked: a read-only install that cannot be compiled is timed as it is.
    subprocess.run([sys.executable, "-m", "compileall", "-q", *spec.submodule_search_locations],
                   check=False, env=env)
    return env


def run_once(archive: Path, fmt: str, env: dict[str, str],
             extra: tuple[str, ...] = ()) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="warcdeboil-bench-") as out:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        done = subprocess.run(
            [sys.executable, "-m", "warcdeboil", "clean", str(archive), "-o", out,
             "--format", fmt, "--workers", "1", "--json", "--quiet", *extra],
            check=True, capture_output=True, text=True, env=env,
        )
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    summary = json.loads(done.stdout)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {
        "pages": summary["pages"],
        "cpu_seconds": cpu,
        "pages_per_cpu_second": summary["pages"] / cpu,
        # ru_maxrss of children is the largest child so far, in KiB on Linux.
        "peak_rss_mb": after.ru_maxrss / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("archive", type=Path)
    parser.add_argument("--format", default="jsonl", choices=["warc", "text", "jsonl"])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--mode", choices=["template", "content"])
    parser.add_argument("--dedup", choices=["off", "mark", "drop", "revisit"],
                        help="--dedup of the runs (the format's default when not given)")
    parser.add_argument("--lm", type=Path, help="time with this language model (--lm)")
    parser.add_argument("--buckets", action="store_true", help="with --lm: also "
                        "--perplexity-buckets (the percentiles worked out before pass 2)")
    parser.add_argument("--baseline", action="store_true", help="with --lm: also time runs "
                        "without it, alternating with those with it (a loaded machine drifts)")
    args = parser.parse_args()
    env = bytecode_env()
    extra: tuple[str, ...] = ("--mode", args.mode) if args.mode else ()
    extra += ("--dedup", args.dedup) if args.dedup else ()
    scoring = ("--perplexity-buckets",) if args.buckets else ()
    if args.lm is not None and args.baseline:
        _compare(args.archive, args.format, env, extra, args.lm, args.repeat, scoring)
        return
    if args.lm is not None:
        extra += ("--lm", str(args.lm), *scoring)
    runs = [run_once(args.archive, args.format, env, extra) for _ in range(args.repeat)]
    best = max(runs, key=lambda r: r["pages_per_cpu_second"])
    for i, r in enumerate(runs, 1):
        print(f"run {i}: {r['pages']} pages, {r['cpu_seconds']:.2f} CPU-s, "
              f"{r['pages_per_cpu_second']:.0f} pages/CPU-s, peak {r['peak_rss_mb']:.0f} MB")
    median = sorted(r["pages_per_cpu_second"] for r in runs)[len(runs) // 2]
    print(f"{args.archive.name} --format {args.format}: median {median:.0f} pages/CPU-s "
          f"(best {best['pages_per_cpu_second']:.0f}), peak RSS {best['peak_rss_mb']:.0f} MB")


def _compare(archive: Path, fmt: str, env: dict[str, str], extra: tuple[str, ...], model: Path,
             repeat: int, scoring: tuple[str, ...] = ()) -> None:
    """CPU of runs without and with --lm, alternating; the added cost of each pair."""
    pairs = []
    for i in range(repeat):
        plain = run_once(archive, fmt, env, extra)["cpu_seconds"]
        scored = run_once(archive, fmt, env, extra + ("--lm", str(model), *scoring)
                          )["cpu_seconds"]
        pairs.append((plain, scored))
        print(f"pair {i + 1}: {plain:.2f} CPU-s without, {scored:.2f} with --lm "
              f"({100 * (scored / plain - 1):+.1f} %)")
    plain_median = sorted(p for p, _ in pairs)[len(pairs) // 2]
    scored_median = sorted(s for _, s in pairs)[len(pairs) // 2]
    added = sorted(100 * (s / p - 1) for p, s in pairs)
    print(f"{archive.name} --format {fmt}: median {plain_median:.2f} CPU-s without --lm, "
          f"{scored_median:.2f} with ({100 * (scored_median / plain_median - 1):+.1f} %); "
          f"added per pair from {added[0]:+.1f} % to {added[-1]:+.1f} %")


if __name__ == "__main__":
    main()
