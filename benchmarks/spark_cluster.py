"""The Spark driver's memory on a standalone cluster, for N and 10 N inputs.

    python benchmarks/spark_cluster.py [ARCHIVE...] [--copies 2] [--factor 10] \\
        [--format jsonl] [--workers 2]

A master and workers start on this machine (``scripts/spark_standalone.py``); the real command
line (``warcdeboil clean … --engine spark --spark-master spark://…``) runs over ``--copies``
copies of the archives (default ``../shared/eval/cleanportaleval.warc.gz``), then over
``--factor`` times as many. While each job runs, the driver's peak resident memory is read from
``/proc`` every 0.1 s: the Python process's (``VmHWM``) and its JVM's (the ``SparkSubmit``
process it starts). The driver holds, per input, its name and a tally of counts; per page,
nothing (``tests/test_spark.py::test_the_driver_receives_counts_not_pages`` checks what comes
back to it). The JVM's figure is mostly its heap as the garbage collector chose to grow it.

Reported: pages, wall time and both peaks for each size, and the ratio of the large run's peaks
to the small one's.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_SECONDS = 0.1
JOB_CONF = {  # small executors, and few partitions for crawls of this size (see the test)
    "spark.executor.memory": "512m",
    "spark.sql.shuffle.partitions": "4",
    "spark.default.parallelism": "4",
    "spark.ui.enabled": "false",
}


@dataclass
class Run:
    inputs: int
    pages: int
    wall: float
    python_peak: int  # bytes
    jvm_peak: int


def standalone() -> ModuleType:
    path = ROOT / "scripts" / "spark_standalone.py"
    spec = importlib.util.spec_from_file_location("spark_standalone", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def peak(pid: int) -> int:
    """The process's peak resident memory so far (bytes), 0 once it is gone."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def driver_jvm(pid: int) -> int | None:
    """The SparkSubmit JVM among the descendants of ``pid``."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as fh:
                    stat = fh.read()
            except OSError:
                continue
            parents[int(entry)] = int(stat[stat.rindex(")") + 2:].split()[1])
    for child, parent in parents.items():
        ancestor = parent
        while ancestor not in (pid, 0, 1) and ancestor in parents:
            ancestor = parents[ancestor]
        if ancestor != pid:
            continue
        try:
            cmdline = Path(f"/proc/{child}/cmdline").read_bytes()
        except OSError:
            continue
        if b"org.apache.spark.deploy.SparkSubmit" in cmdline:
            return child
    return None


def run_job(cluster: Any, archives: list[Path], copies: int, fmt: str, tmp: Path) -> Run:
    inputs, out = tmp / f"in-{copies}", tmp / f"out-{copies}"
    inputs.mkdir()
    for i in range(copies):
        for archive in archives:
            # Copies, not links: the run reads a file that several links name once.
            shutil.copyfile(archive, inputs / f"copy{i:03d}-{archive.name}")
    conf = [arg for key, value in JOB_CONF.items() for arg in ("--spark-conf", f"{key}={value}")]
    env = cluster.env("driver", PYSPARK_PYTHON=sys.executable,
                      SPARK_LOCAL_DIRS=str(tmp / f"driver-{copies}"))
    started = time.monotonic()
    with open(tmp / f"driver-{copies}.log", "w", encoding="utf-8") as log:
        job = subprocess.Popen(
            [sys.executable, "-m", "warcdeboil", "clean", str(inputs), "-o", str(out),
             "--format", fmt, "--engine", "spark", "--spark-master",
             cluster.master_url, *conf, "--json", "-q"],
            env=env, stdout=subprocess.PIPE, stderr=log, text=True)
        python_peak = jvm_peak = 0
        jvm = None
        while job.poll() is None:
            python_peak = max(python_peak, peak(job.pid))
            jvm = jvm or driver_jvm(job.pid)
            if jvm is not None:
                jvm_peak = max(jvm_peak, peak(jvm))
            time.sleep(SAMPLE_SECONDS)
        report, _ = job.communicate()
    if job.returncode != 0:
        sys.exit(f"the job over {copies} copies failed: see {tmp / f'driver-{copies}.log'}")
    return Run(copies * len(archives), json.loads(report)["pages"],
               time.monotonic() - started, python_peak, jvm_peak)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("archives", type=Path, nargs="*",
                        default=[ROOT.parent / "shared" / "eval" / "cleanportaleval.warc.gz"])
    parser.add_argument("--copies", type=int, default=2, help="copies in the small run")
    parser.add_argument("--factor", type=int, default=10, help="the large run's multiple")
    parser.add_argument("--format", default="jsonl", choices=["warc", "text", "jsonl"])
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="warcdeboil-bench-") as name:
        tmp = Path(name)
        with standalone().StandaloneCluster(tmp / "cluster", args.workers) as cluster:
            runs = [run_job(cluster, args.archives, copies, args.format, tmp)
                    for copies in (args.copies, args.copies * args.factor)]
    mib = 1024 * 1024
    print(f"--format {args.format}, {args.workers} workers of 1 core")
    print("| inputs | pages | wall | driver Python peak RSS | driver JVM peak RSS |")
    print("|---|---|---|---|---|")
    for run in runs:
        print(f"| {run.inputs} | {run.pages} | {run.wall:.0f} s | {run.python_peak / mib:.0f} MiB "
              f"| {run.jvm_peak / mib:.0f} MiB |")
    small, large = runs
    print(f"\n{large.pages / small.pages:.1f}x the pages: Python peak "
          f"{large.python_peak / small.python_peak:.2f}x, JVM peak "
          f"{large.jvm_peak / max(1, small.jvm_peak):.2f}x")


if __name__ == "__main__":
    main()
