"""What running on Spark costs: the same archives on the local engine and on Spark ``local[2]``.

    python benchmarks/spark_overhead.py ../shared/eval/dragnet.warc.gz \\
        ../shared/eval/cleanportaleval.warc.gz [--format jsonl] [--copies 4] [--repeat 1]

Each run is the real command line in a child process (``warcdeboil clean … --json``); its CPU
time is user + system time of the whole process tree — the CLI, Spark's JVM and the Python
workers it starts. ``getrusage(RUSAGE_CHILDREN)`` alone misses most of it: Spark's Python workers
are killed with their daemon at shutdown and their time never reaches a waiting parent (measured:
28 of 86 CPU-seconds seen). So this process makes itself the *subreaper* of its descendants
(Linux ``PR_SET_CHILD_SUBREAPER``: orphans such as the JVM stay in its tree), samples every
descendant's own CPU time from ``/proc`` every 0.1 s while the run lasts, and takes the larger of
that sum and ``RUSAGE_CHILDREN`` (a process younger than a sample is seen by the latter only).

Reported per archive and engine: pages, CPU seconds, pages per CPU-second, wall time; then the
Spark overhead as the ratio of CPU per page (Spark / local). On archives this small, Spark's fixed
cost (JVM start, session, job scheduling: tens of CPU-seconds, and noisy) dominates, so each
archive also runs as ``--copies N`` inputs (the same file under N names) and the *marginal*
throughput — what a long job on a cluster sees, its fixed cost paid once — is reported as
``(pages_N - pages_1) / (cpu_N - cpu_1)``.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36  # <linux/prctl.h>
REAP_SECONDS = 120
SAMPLE_SECONDS = 0.1
TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


@dataclass
class Run:
    pages: int
    cpu: float
    wall: float

    @property
    def rate(self) -> float:
        return self.pages / self.cpu if self.cpu else 0.0


def become_subreaper() -> None:
    """Orphaned descendants (Spark's JVM) come to this process, which reaps them."""
    if not sys.platform.startswith("linux"):
        sys.exit("this benchmark measures process trees with a Linux-only prctl")
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.exit(f"prctl(PR_SET_CHILD_SUBREAPER) failed: errno {ctypes.get_errno()}")


def descendants_cpu() -> dict[int, float]:
    """CPU seconds (user + system, its own) of every process below this one, by pid."""
    parents: dict[int, int] = {}
    cpu: dict[int, float] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as fh:
                stat = fh.read()
        except OSError:
            continue  # gone meanwhile
        fields = stat[stat.rindex(")") + 2 :].split()  # fields 3.. of proc(5)
        parents[int(entry)] = int(fields[1])
        cpu[int(entry)] = (int(fields[11]) + int(fields[12])) / TICKS
    me = os.getpid()
    found = {}
    for pid in cpu:
        ancestor = parents.get(pid)
        while ancestor is not None and ancestor not in (me, 0, 1):
            ancestor = parents.get(ancestor)
        if ancestor == me:
            found[pid] = cpu[pid]
    return found


class TreeSampler:
    """The largest CPU time seen of each descendant, sampled until the tree is gone."""

    def __init__(self) -> None:
        self.seen: dict[int, float] = {}

    def sample(self) -> None:
        for pid, seconds in descendants_cpu().items():
            self.seen[pid] = max(self.seen.get(pid, 0.0), seconds)

    @property
    def total(self) -> float:
        return sum(self.seen.values())

    def follow(self, child: subprocess.Popen[str]) -> None:
        """Sample while ``child`` runs, then reap every orphan left (sampling on)."""
        while child.poll() is None:
            self.sample()
            time.sleep(SAMPLE_SECONDS)
        deadline = time.monotonic() + REAP_SECONDS
        while time.monotonic() < deadline:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                self.sample()
                time.sleep(SAMPLE_SECONDS)
        sys.exit(f"descendants still running after {REAP_SECONDS} s")


def command(inputs: Path, out: str, engine: str, fmt: str, master: str) -> list[str]:
    cmd = [sys.executable, "-m", "warcdeboil", "clean", str(inputs), "-o", out,
           "--format", fmt, "--json", "--quiet"]
    if engine == "spark":
        cmd += ["--engine", "spark", "--spark-master", master,
                "--spark-conf", "spark.ui.enabled=false"]
    else:
        cmd += ["--workers", "2"]
    return cmd


def run_once(archive: Path, copies: int, engine: str, fmt: str, master: str) -> Run:
    with tempfile.TemporaryDirectory(prefix="warcdeboil-bench-") as tmp:
        inputs, out = Path(tmp) / "in", str(Path(tmp) / "out")
        inputs.mkdir()
        for i in range(copies):
            (inputs / f"copy{i:02d}-{archive.name}").symlink_to(archive.resolve())
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.monotonic()
        sampler = TreeSampler()
        with tempfile.TemporaryFile("w+") as stdout, tempfile.TemporaryFile("w+") as stderr:
            child = subprocess.Popen(command(inputs, out, engine, fmt, master), text=True,
                                     stdout=stdout, stderr=stderr)
            sampler.follow(child)
            stdout.seek(0)
            stderr.seek(0)
            report, errors = stdout.read(), stderr.read()
        wall = time.monotonic() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if child.returncode not in (0, 3):
        sys.exit(f"{engine} run failed ({child.returncode}): {errors[-2000:]}")
    reaped = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Run(json.loads(report)["pages"], max(reaped, sampler.total), wall)


def best(archive: Path, copies: int, engine: str, fmt: str, master: str, repeat: int) -> Run:
    runs = [run_once(archive, copies, engine, fmt, master) for _ in range(repeat)]
    return min(runs, key=lambda run: run.cpu)


def show(label: str, run: Run) -> None:
    print(f"  {label:<18}: {run.pages:>6} pages, {run.cpu:7.2f} CPU-s, "
          f"{run.rate:5.0f} pages/CPU-s, {run.wall:6.1f} s wall")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("archives", type=Path, nargs="+")
    parser.add_argument("--format", default="jsonl", choices=["warc", "text", "jsonl"])
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--copies", type=int, default=4,
                        help="inputs in the large run (the archive under N names)")
    parser.add_argument("--repeat", type=int, default=1, help="runs per case; the best counts")
    args = parser.parse_args()
    become_subreaper()
    for archive in args.archives:
        print(f"{archive.name} --format {args.format}")
        marginal = {}
        once = {}
        for engine in ("local", "spark"):
            one = best(archive, 1, engine, args.format, args.master, args.repeat)
            many = best(archive, args.copies, engine, args.format, args.master, args.repeat)
            show(f"{engine}, 1 input", one)
            show(f"{engine}, {args.copies} inputs", many)
            once[engine] = one
            marginal[engine] = (many.pages - one.pages) / (many.cpu - one.cpu)
            print(f"  {engine:<5} marginal: {marginal[engine]:.0f} pages/CPU-s, fixed cost "
                  f"{one.cpu - one.pages / marginal[engine]:.1f} CPU-s")
        print(f"  Spark overhead: {once['spark'].cpu / once['local'].cpu:.2f}x the CPU of the "
              f"local run of 1 input; {marginal['local'] / marginal['spark']:.2f}x per page at "
              "the margin\n")


if __name__ == "__main__":
    main()
