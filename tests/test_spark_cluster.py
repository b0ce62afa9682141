"""The Spark engine past one machine: a standalone cluster (a master and two workers on this
machine, started and stopped here), one worker killed mid-job, and the local engine's outputs."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, ROOT, load_script, shared_file

from warcdeboil.output.formats import OutputFormat
from warcdeboil.run.local import clean
from warcdeboil.run.options import Options

pytestmark = [pytest.mark.spark, pytest.mark.slow]

FIXTURE_COPIES = 4  # the fixture crawl's two archives, each under four names
EVAL_ARCHIVES = ["cleanportaleval", "l3s-gn1"]
# Settings of the test's jobs: small executors, few partitions for a crawl this small (Spark's
# 200 a stage would be thousands of tiny tasks on two cores), and JVMs tuned for short runs
# (the client compiler, one GC thread: 40 % less CPU for the same outputs).
JOB_CONF = {
    "spark.executor.memory": "512m",
    "spark.executor.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
    "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
    "spark.sql.shuffle.partitions": "4",
    "spark.default.parallelism": "4",
    "spark.ui.enabled": "false",
}
JOB_SECONDS = 600  # a generous bound: a job took 1-2 minutes on a 2-core machine under load
POLL_SECONDS = 0.02
VANISH_SECONDS = 15  # for the killed worker's executor to notice and end (about a second)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    pytest.importorskip("pyspark", reason="the Spark engine's tests need pip install '.[spark]'")
    if shutil.which("java") is None:
        # As the local-session tests do (they fail in build_session): a missing runtime is a
        # broken set-up, not a reason to pass without testing (.ci/run installs one).
        pytest.fail("Spark needs a Java runtime (apt-get install default-jre-headless)")
    standalone = load_script("spark_standalone", ROOT / "scripts" / "spark_standalone.py")
    with standalone.StandaloneCluster(tmp_path_factory.mktemp("cluster")) as running:
        yield running


@pytest.fixture(scope="module")
def crawl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Ten inputs: copies of the fixture archives and two evaluation archives."""
    src = tmp_path_factory.mktemp("inputs") / "crawl"
    src.mkdir()
    for copy in range(FIXTURE_COPIES):
        for path in sorted((FIXTURES / "crawl").glob("*.warc.gz")):
            shutil.copy(path, src / f"copy{copy}-{path.name}")
    for name in EVAL_ARCHIVES:
        shutil.copy(shared_file("eval", f"{name}.warc.gz"), src / f"{name}.warc.gz")
    return src


def _files(directory: Path) -> dict[str, bytes]:
    """Every file under ``directory`` (hidden ones too: a partial output left behind counts)."""
    return {p.relative_to(directory).as_posix(): p.read_bytes()
            for p in sorted(directory.rglob("*")) if p.is_file()}


def _counts(summary: dict[str, Any]) -> dict[str, Any]:
    """A summary without the paths, which name each run's own directories."""
    data = dict(summary)
    data.pop("outputs")
    data["files"] = [{k: v for k, v in f.items() if k not in ("path", "output")}
                     for f in data["files"]]
    return data


def _writer_role(cluster: Any, out: Path) -> tuple[str, str] | None:
    """The worker whose Python worker is writing an output now, and the output: read from the
    partial files (``.NAME.PID.part``) in ``out`` and the writing process's mark."""
    for part in out.glob(".*.part"):
        pid = part.name.rsplit(".", 2)[-2]
        role = cluster.role_of(int(pid)) if pid.isdigit() else None
        if role is not None and role.startswith("worker-"):
            return role, part.name
    return None


def _run_and_kill(cluster: Any, crawl: Path, out: Path, fmt: OutputFormat
                  ) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    """The real command line on the cluster; the first worker seen writing an output is
    SIGKILLed while it writes. The finished process, and what was seen at the kill."""
    conf = [arg for key, value in JOB_CONF.items() for arg in ("--spark-conf", f"{key}={value}")]
    env = cluster.env("driver", PYSPARK_PYTHON=sys.executable,
                      SPARK_LOCAL_DIRS=str(out.parent / "driver-local"))
    log = out.parent / "driver.log"
    with open(log, "w", encoding="utf-8") as stderr:
        job = subprocess.Popen(
            [sys.executable, "-m", "warcdeboil", "clean", str(crawl), "-o", str(out),
             "--format", fmt.value, "--engine", "spark", "--spark-master", cluster.master_url,
             *conf, "--json", "-q"],
            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=stderr, text=True)
        killed: dict[str, Any] = {}
        deadline = time.monotonic() + JOB_SECONDS
        try:
            while job.poll() is None and time.monotonic() < deadline:
                found = _writer_role(cluster, out) if not killed and out.exists() else None
                if found is not None:
                    role, part = found
                    victim = int(role.removeprefix("worker-"))
                    cluster.kill_worker(victim)
                    killed = {"worker": victim, "part": part, "at": time.monotonic(),
                              "done": sorted(p.name for p in out.iterdir()
                                             if not p.name.startswith("."))}
                time.sleep(POLL_SECONDS)
            stdout, _ = job.communicate(timeout=max(1.0, deadline - time.monotonic()))
        finally:
            if job.poll() is None:
                job.kill()  # the cluster's stop kills its JVM (it carries the mark)
                job.wait()
    done = subprocess.CompletedProcess(job.args, job.returncode, stdout,
                                       log.read_text(encoding="utf-8", errors="replace"))
    return done, killed


@pytest.mark.parametrize("fmt", [OutputFormat.WARC, OutputFormat.JSONL], ids=lambda f: f.value)
def test_a_worker_killed_mid_job_changes_no_byte(
    crawl: Path, cluster: Any, tmp_path: Path, fmt: OutputFormat
) -> None:
    """A worker's daemon SIGKILLed while its executor writes an output: Spark reruns the lost
    work on the other worker, and the outputs and the summary are the local engine's."""
    cluster.revive()  # the previous case killed one
    expected = clean([crawl], tmp_path / "local", Options(workers=2, format=fmt)).to_dict()
    out = tmp_path / "spark"
    done, killed = _run_and_kill(cluster, crawl, out, fmt)
    tail = "\n".join(done.stderr.splitlines()[-30:])
    assert done.returncode == 0, tail
    assert killed, f"no worker was seen writing an output before the job ended\n{tail}"
    # The kill landed mid-job: in pass 2, while the victim wrote and before every output was.
    assert len(killed["done"]) < len(expected["files"]), killed
    assert _counts(json.loads(done.stdout)) == _counts(expected)
    local = _files(tmp_path / "local")
    outputs = [name for name in local if not Path(name).name.startswith(".")]  # no records
    assert len(outputs) == len(expected["files"]) == 2 * FIXTURE_COPIES + len(EVAL_ARCHIVES)
    assert _files(out) == local  # the same bytes, and nothing else: no partial file left
    victim, survivor = f"worker-{killed['worker']}", f"worker-{1 - killed['worker']}"
    # Its executor noticed the loss and ended, and its Python workers with it.
    deadline = time.monotonic() + VANISH_SECONDS
    while cluster.processes(victim) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert cluster.processes(victim) == [], "a process of the killed worker outlived the job"
    assert list(cluster.temp_dir(1 - killed["worker"]).iterdir()) == [], survivor
