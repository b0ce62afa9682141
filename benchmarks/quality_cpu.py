"""What the quality filters add to a run's CPU: a content-mode JSONL run of each dataset with
one worker, without and with ``--quality-filters all``, its CPU seconds (user + system of the
whole process tree: ``RUSAGE_CHILDREN``), the least of ``--repeat`` runs each. The runs read
warcdeboil's bytecode, compiled first (``speed.bytecode_env``), as an installed package does:
otherwise the runs with the filters would also pay for compiling their modules each time.

    python benchmarks/quality_cpu.py [ARCHIVE ...] [--repeat N] [--out FILE]

By default every dataset of ``../shared/eval``. The target (issue 37): the four filters
together add at most 10 % to the run's CPU. A round runs every dataset both ways, back to back,
the order of the two swapped each round: what the filters add is the median over the rounds of
each pair's difference, so that a machine slowed for a while (this one's throughput drifts by
several per cent over minutes) slows both runs of a pair, not one side of the comparison.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
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
    parser.add_argument("--repeat", type=int, default=5, help="rounds (medians kept)")
    parser.add_argument("--out", type=Path, help="write the Markdown report here too")
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from peers import recorded_command
    from speed import bytecode_env

    env = bytecode_env()

    names = [archive.name.replace(".warc.gz", "") for archive in args.archives]
    without: dict[str, list[float]] = {name: [] for name in names}
    added: dict[str, list[float]] = {name: [] for name in names}
    with tempfile.TemporaryDirectory() as tmp:
        for round_ in range(args.repeat):
            for archive, name in zip(args.archives, names, strict=True):
                pair = [0.0, 0.0]
                order = (0, 1) if round_ % 2 == 0 else (1, 0)
                for i in order:
                    extra = ["--quality-filters", "all"] if i else []
                    pair[i] = run_cpu(archive, Path(tmp) / f"{name}-{i}-{round_}", extra, env)
                without[name].append(pair[0])
                added[name].append(pair[1] - pair[0])
                print(f"round {round_ + 1}: {name} {pair[0]:.2f} s, {pair[1] - pair[0]:+.2f} s",
                      file=sys.stderr, flush=True)
    rows = []
    total_without = total_added = 0.0
    for name in names:
        base, extra_cpu = statistics.median(without[name]), statistics.median(added[name])
        total_without += base
        total_added += extra_cpu
        rows.append(f"| {name} | {base:.2f} | {extra_cpu:+.3f} | {extra_cpu / base:+.1%} |")
    share = total_added / total_without
    lines = [
        "# The quality filters' share of a content run's CPU",
        "",
        f"`{recorded_command('benchmarks/quality_cpu.py', sys.argv[1:])}`",
        "",
        f"Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} cores. "
        f"`clean -f jsonl --mode content -j 1`, CPU seconds of the process tree (bytecode "
        f"compiled first); {args.repeat} rounds, each running every dataset without and with "
        f"`--quality-filters all` back to back; medians over the rounds. Target: at most "
        f"{TARGET:.0%} more with the filters.",
        "",
        "| dataset | CPU s, without | added by the filters, s | added |",
        "|---|---|---|---|",
        *rows,
        f"| all | {total_without:.2f} | {total_added:+.3f} | {share:+.1%}"
        f"{'' if share <= TARGET else ' ✗'} |",
    ]
    report = "\n".join(lines) + "\n"
    print(report)
    if args.out:
        args.out.write_text(report, encoding="utf-8")


if __name__ == "__main__":
    main()
