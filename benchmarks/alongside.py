"""End-to-end speed of several revisions of warcdeboil, side by side in one session.

    python benchmarks/alongside.py ../shared/eval/*.warc.gz --rev 2b35f34 --rev HEAD \
        [--format jsonl --format warc] [--rounds 2] [--heavy] [--markdown] [--json out.json]

Each ``--rev`` is checked out in a temporary git worktree (``.`` is this checkout as it is,
uncommitted changes included); a revision with a ``setup.py`` gets its C extension built in
place, as ``pip install`` builds it, and every revision's bytecode is compiled first. With
``--heavy``, each archive's heavy pages (those whose HTML is longer than its median, as
``floor.py`` writes them) are measured too. Then every archive and format runs ``warcdeboil
clean --workers 1`` once per revision and round, the revisions taking turns (a machine's speed
drifts from minute to minute: alternating puts every revision in the same minutes), each run in
its own tree (the working directory comes first on Python's path). Reported: pages per
CPU-second (user + system of that child, from ``wait4``), median and range over the rounds,
peak RSS of that child, and each revision's median over the first's.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from floor import write_heavy  # this folder's floor.py
from peers import recorded_command, render  # this folder's peers.py

ROOT = Path(__file__).resolve().parent.parent


def checkout(rev: str, into: Path) -> Path:
    """A tree of ``rev`` ready to run (``.``: this checkout): the extension built, bytecode
    compiled."""
    if rev == ".":
        tree = ROOT
    else:
        tree = into / rev.replace("/", "_")
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet",
                        str(tree), rev], check=True)
    if (tree / "setup.py").exists() and rev != ".":
        subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"], cwd=tree,
                       check=True, capture_output=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "warcdeboil")],
                   check=False, env=env)
    return tree


def run_once(archive: Path, fmt: str, tree: Path, env: dict[str, str]) -> dict[str, float]:
    """One ``warcdeboil clean`` of ``tree``'s code, its CPU and peak memory read from the
    kernel's account of that child (and what it waited for) alone. It runs in ``tree``: Python
    puts the working directory first on the path, before PYTHONPATH."""
    with tempfile.TemporaryDirectory(prefix="warcdeboil-alongside-") as out, \
            tempfile.TemporaryFile() as stdout:
        child = subprocess.Popen(
            [sys.executable, "-m", "warcdeboil", "clean", str(archive.resolve()), "-o", out,
             "--format", fmt, "--workers", "1", "--json", "--quiet"],
            stdout=stdout, stderr=subprocess.DEVNULL, cwd=tree,
            env={**env, "PYTHONPATH": str(tree)},
        )
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode not in (0, 3):  # 3: finished, with problems counted
            raise SystemExit(f"{tree}: warcdeboil clean {archive} exited {child.returncode}")
        stdout.seek(0)
        summary = json.loads(stdout.read())
    cpu = usage.ru_utime + usage.ru_stime
    return {"pages": summary["pages"], "cpu_seconds": cpu,
            "pages_per_cpu_second": summary["pages"] / cpu, "peak_rss_mb": usage.ru_maxrss / 1024}


def measure(archives: list[Path], formats: list[str], trees: dict[str, Path],
            rounds: int) -> dict[str, dict[str, dict[str, list[dict[str, float]]]]]:
    """Per archive, format and revision, the figures of each round."""
    figures: dict[str, dict[str, dict[str, list[dict[str, float]]]]] = {}
    base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    for archive in archives:
        for fmt in formats:
            runs = figures.setdefault(archive.name, {}).setdefault(fmt, {})
            for _ in range(rounds):
                for rev, tree in trees.items():
                    result = run_once(archive, fmt, tree, base)
                    runs.setdefault(rev, []).append(result)
                    print(f"{archive.name} {fmt} {rev}: {result['pages_per_cpu_second']:.0f} "
                          f"pages/CPU-s, {result['peak_rss_mb']:.0f} MB", file=sys.stderr)
    return figures


def table(figures: dict[str, Any], revs: list[str], markdown: bool) -> str:
    headers = ["archive (pages)", "format",
               *(f"{rev} (pages/CPU-s, MB)" for rev in revs),
               *(f"{rev} ÷ {revs[0]}" for rev in revs[1:])]
    rows = []
    for archive, by_format in figures.items():
        for fmt, by_rev in by_format.items():
            medians = {rev: statistics.median(r["pages_per_cpu_second"] for r in by_rev[rev])
                       for rev in revs}
            cells = []
            for rev in revs:
                speeds = [r["pages_per_cpu_second"] for r in by_rev[rev]]
                peak = max(r["peak_rss_mb"] for r in by_rev[rev])
                spread = f" ({min(speeds):.0f}-{max(speeds):.0f})" if len(speeds) > 1 else ""
                cells.append(f"{medians[rev]:.0f}{spread}, {peak:.0f}")
            ratios = [f"{medians[rev] / medians[revs[0]]:.2f}×" for rev in revs[1:]]
            pages = by_rev[revs[0]][0]["pages"]
            rows.append([f"{archive.removesuffix('.warc.gz')} ({pages})", fmt, *cells, *ratios])
    return render(headers, rows, markdown)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("archives", type=Path, nargs="+")
    parser.add_argument("--rev", action="append", required=True,
                        help="a revision to run (repeat; '.' is this checkout as it is)")
    parser.add_argument("--format", action="append", choices=["warc", "text", "jsonl"])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--heavy", action="store_true", help="also each archive's heavy pages "
                        "(HTML longer than its median, as floor.py writes them)")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--json", type=Path, help="write every run's figures here")
    args = parser.parse_args()
    formats = args.format or ["jsonl", "warc"]
    with tempfile.TemporaryDirectory(prefix="warcdeboil-alongside-") as scratch:
        archives = list(args.archives)
        if args.heavy:
            for archive in args.archives:
                heavy = Path(scratch) / archive.name.replace(".warc.gz", ", heavy.warc.gz")
                write_heavy(archive, heavy)
                archives.append(heavy)
        trees = {rev: checkout(rev, Path(scratch)) for rev in args.rev}
        try:
            figures = measure(archives, formats, trees, args.rounds)
        finally:
            for rev, tree in trees.items():
                if rev != ".":
                    subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                                    str(tree)], check=False)
    print(recorded_command("benchmarks/alongside.py", sys.argv[1:]))
    print()
    print(table(figures, args.rev, args.markdown))
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=1) + "\n")


if __name__ == "__main__":
    main()
