"""What the quality filters add to a run's CPU: a content-mode JSONL run of each dataset with
one worker, without and with ``--quality-filters all``, its CPU seconds (user + system of the
whole process tree: ``RUSAGE_CHILDREN``), the least of ``--repeat`` runs each. The runs read
warcdeboil's bytecode, compiled first (``speed.bytecode_env``), as an installed package does:
otherwise the runs with the filters would also pay for compiling their modules each time.

    python benchmarks/quality_cpu.py [ARCHIVE ...] [--repeat N] [--out FILE]

By default every dataset of ``../shared/eval``. The target (issue 37): the four filters
together add at most 10 % to the run's CPU. Both runs are alternated round by round, so that a
machine slowed for a while slows both.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

EVAL = Path(__file__).resolve().parents[1].parent / "shared" / "eval"
DATASETS = ("dragnet", "scrapinghub", "l3s-gn1", "cleaneval", "cleanportaleval")
TARGET = 0.10


def run_cpu(archive: Path, out: Path, extra: list[str], env: dict[str, str]) -> float:
    """CPU seconds of one ``clean`` run, its children's (the run is one)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-m", "warcdeboil", "clean", str(archive), "-o", str(out),
                    "-f", "jsonl", "--mode", "content", "-j", "1", "-q", *extra],
                   check=True, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("archives", nargs="*", type=Path,
                        default=[EVAL / f"{name}.warc.gz" for name in DATASETS])
    parser.add_argument("--repeat", type=int, default=3, help="runs of each (least kept)")
    parser.add_argument("--out", type=Path, help="write the Markdown report here too")
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from peers import recorded_command
    from speed import bytecode_env

    env = bytecode_env()

    rows = []
    totals = [0.0, 0.0]
    with tempfile.TemporaryDirectory() as tmp:
        for archive in args.archives:
            name = archive.name.replace(".warc.gz", "")
            best = [float("inf"), float("inf")]
            for round_ in range(args.repeat):
                for i, extra in enumerate(([], ["--quality-filters", "all"])):
                    out = Path(tmp) / f"{name}-{i}-{round_}"
                    best[i] = min(best[i], run_cpu(archive, out, extra, env))
            totals[0] += best[0]
            totals[1] += best[1]
            added = (best[1] - best[0]) / best[0]
            rows.append(f"| {name} | {best[0]:.2f} | {best[1]:.2f} | {added:+.1%} |")
            print(rows[-1], file=sys.stderr, flush=True)
    added = (totals[1] - totals[0]) / totals[0]
    lines = [
        "# The quality filters' share of a content run's CPU",
        "",
        f"`{recorded_command('benchmarks/quality_cpu.py', sys.argv[1:])}`",
        "",
        f"Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} cores. "
        f"`clean -f jsonl --mode content -j 1`, CPU seconds of the process tree (bytecode "
        f"compiled first), the least of {args.repeat} runs; target: at most {TARGET:.0%} more "
        f"with `--quality-filters all`.",
        "",
        "| dataset | CPU s, without | with `--quality-filters all` | added |",
        "|---|---|---|---|",
        *rows,
        f"| all | {totals[0]:.2f} | {totals[1]:.2f} | {added:+.1%}"
        f"{'' if added <= TARGET else ' ✗'} |",
    ]
    report = "\n".join(lines) + "\n"
    print(report)
    if args.out:
        args.out.write_text(report, encoding="utf-8")


if __name__ == "__main__":
    main()
