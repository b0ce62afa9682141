"""A Spark standalone cluster on this machine: a master and workers bound to 127.0.0.1.

    python scripts/spark_standalone.py [--workers 2] [--dir DIR]   # prints the master's URL;
                                                                    # Ctrl-C stops the cluster

It is what ``tests/test_spark_cluster.py`` (a worker killed mid-job) and
``benchmarks/spark_cluster.py`` (the driver's memory) run on. Each process is pyspark's own
``bin/spark-class`` (the pip package holds it): ``org.apache.spark.deploy.master.Master`` and
``org.apache.spark.deploy.worker.Worker``, on ports the system picks (read back from their
logs), with small memory, their work and log directories under one directory of ours, and
Spark's configuration directory an empty one of ours (nothing of this machine's Spark settings).

Every process of the cluster carries a mark in its environment: the master, each worker and
what a worker starts (executors, their Python daemons and workers, which inherit it), and a
driver run with :meth:`StandaloneCluster.env`. Stopping the cluster kills every marked process,
so nothing outlives it, even a Python worker whose daemon put it in a process group of its own.
Linux only (it reads ``/proc``).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from types import TracebackType
from typing import IO

MARK = "WARCDEBOIL_TEST_CLUSTER"
"""The environment variable that marks the cluster's processes: ``TOKEN:ROLE``."""
LOOPBACK = "127.0.0.1"
START_SECONDS = 180.0  # a JVM starts in seconds; a loaded 2-core machine needs the margin
POLL_SECONDS = 0.05
_MASTER_URL = re.compile(rb"Starting Spark master at (spark://\S+)")
_REGISTERED = re.compile(rb"Successfully registered with master")
# Settings of the master and workers (a properties file): no REST submission server (its
# fixed port 6066 would clash between two clusters), and nothing written outside our directory.
# JVM flags of the master and workers: the client compiler only and one GC thread, for short
# runs on a small machine (measured on the test's jobs: 40 % less CPU, the same results).
QUICK_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
DAEMON_CONF = {
    "spark.master.rest.enabled": "false",
    "spark.worker.cleanup.enabled": "false",
}


class ClusterError(RuntimeError):
    """The cluster did not start: the message ends with the tail of the log that says why."""


class StandaloneCluster:
    """A master and ``workers`` workers of ``cores`` cores and ``memory`` each; a context
    manager that starts them and kills every one of their processes when left."""

    def __init__(self, base: Path, workers: int = 2, cores: int = 1, memory: str = "1g") -> None:
        import pyspark

        self.home = Path(pyspark.__file__).resolve().parent
        self.base = base
        self.workers = workers
        self.cores = cores
        self.memory = memory
        self.token = uuid.uuid4().hex
        self.master_url = ""
        self._logs: list[IO[bytes]] = []
        self._daemons: list[subprocess.Popen[bytes]] = []  # kept: waited for in stop()
        self.worker_pids: list[int] = []

    # -- paths and environments ------------------------------------------------------------

    def log(self, name: str) -> Path:
        return self.base / "logs" / f"{name}.log"

    def work_dir(self, worker: int) -> Path:
        """Where the worker keeps its executors' directories (each one's stdout and stderr)."""
        return self.base / f"worker-{worker}" / "work"

    def temp_dir(self, worker: int) -> Path:
        """The TMPDIR of the worker and of every process it starts."""
        return self.base / f"worker-{worker}" / "tmp"

    def local_dir(self, worker: int) -> Path:
        """Spark's scratch space of the worker's executors (shuffle and cached blocks)."""
        return self.base / f"worker-{worker}" / "local"

    def env(self, role: str, **extra: str) -> dict[str, str]:
        """This process's environment with the cluster's mark (``role``), bound to loopback."""
        env = dict(os.environ)
        env.update({
            MARK: f"{self.token}:{role}",
            "SPARK_HOME": str(self.home),
            "SPARK_CONF_DIR": str(self.base / "conf"),
            "SPARK_LOG_DIR": str(self.base / "logs"),
            "SPARK_LOCAL_IP": LOOPBACK,
            "SPARK_DAEMON_JAVA_OPTS": QUICK_JVM,
            # Every JVM of the cluster (executors inherit it, and a driver run with this
            # environment) keeps its temporary files here, not in /tmp: a killed one leaves them.
            "JAVA_TOOL_OPTIONS": f"-Djava.io.tmpdir={self.base / 'jvm-tmp'}",
        })
        env.update(extra)
        return env

    # -- starting --------------------------------------------------------------------------

    def __enter__(self) -> StandaloneCluster:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def start(self) -> None:
        (self.base / "conf").mkdir(parents=True, exist_ok=True)
        (self.base / "logs").mkdir(parents=True, exist_ok=True)
        (self.base / "jvm-tmp").mkdir(parents=True, exist_ok=True)
        conf = self.base / "conf" / "daemons.properties"
        conf.write_text("".join(f"{k} {v}\n" for k, v in DAEMON_CONF.items()), encoding="utf-8")
        self._spawn("master", ["org.apache.spark.deploy.master.Master", *self._common()],
                    self.env("master"))
        found = self._wait(self.log("master"), _MASTER_URL, 1)
        self.master_url = found[0].group(1).decode()
        for i in range(self.workers):
            self.worker_pids.append(0)
            self.start_worker(i)
        for i in range(self.workers):
            self._wait(self.log(f"worker-{i}"), _REGISTERED, 1)

    def start_worker(self, worker: int) -> None:
        """Start worker ``worker`` (again, once killed: it registers with the master anew, its
        temporary and scratch directories emptied, as a machine that comes back would be)."""
        for path in (self.temp_dir(worker), self.local_dir(worker)):
            shutil.rmtree(path, ignore_errors=True)
        for path in (self.work_dir(worker), self.temp_dir(worker), self.local_dir(worker)):
            path.mkdir(parents=True, exist_ok=True)
        self.worker_pids[worker] = self._spawn(
            f"worker-{worker}",
            ["org.apache.spark.deploy.worker.Worker", self.master_url, *self._common(),
             "--cores", str(self.cores), "--memory", self.memory,
             "--work-dir", str(self.work_dir(worker))],
            self.env(f"worker-{worker}", TMPDIR=str(self.temp_dir(worker)),
                     SPARK_LOCAL_DIRS=str(self.local_dir(worker))))

    def revive(self) -> None:
        """Start again every worker that is dead, and wait until it is registered."""
        for i, pid in enumerate(self.worker_pids):
            if self.role_of(pid) == f"worker-{i}":
                continue
            registered = len(_REGISTERED.findall(self.log(f"worker-{i}").read_bytes()))
            self.start_worker(i)
            self._wait(self.log(f"worker-{i}"), _REGISTERED, registered + 1)

    def _common(self) -> list[str]:
        return ["--host", LOOPBACK, "--port", "0", "--webui-port", "0",
                "--properties-file", str(self.base / "conf" / "daemons.properties")]

    def _spawn(self, name: str, args: list[str], env: dict[str, str]) -> int:
        log = open(self.log(name), "ab")  # noqa: SIM115 - closed in stop()
        self._logs.append(log)
        # spark-class execs the JVM: this process's pid is the daemon's.
        process = subprocess.Popen([str(self.home / "bin" / "spark-class"), *args], env=env,
                                   stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                   start_new_session=True)
        self._daemons.append(process)
        return process.pid

    def _wait(self, log: Path, pattern: re.Pattern[bytes], count: int) -> list[re.Match[bytes]]:
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            found = list(pattern.finditer(log.read_bytes()))
            if len(found) >= count:
                return found
            if all(process.poll() is not None for process in self._daemons):
                break  # every daemon started here has ended: nothing more will be logged
            time.sleep(POLL_SECONDS)
        tail = log.read_text(encoding="utf-8", errors="replace").splitlines()[-15:]
        raise ClusterError(f"{log.name}: no {pattern.pattern.decode()!r} after "
                           f"{START_SECONDS:.0f} s:\n" + "\n".join(tail))

    # -- processes -------------------------------------------------------------------------

    def processes(self, role: str | None = None) -> list[int]:
        """The pids of the cluster's live processes (of one ``role``: ``master``,
        ``worker-N``, or a driver's)."""
        wanted = f"{MARK}={self.token}:{role or ''}".encode()
        found = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) == os.getpid():
                continue
            try:
                environ = Path(f"/proc/{entry}/environ").read_bytes()
            except OSError:
                continue  # gone meanwhile, or not ours to read
            for variable in environ.split(b"\0"):
                if variable.startswith(wanted) and (role is None or variable == wanted):
                    found.append(int(entry))
                    break
        return found

    def role_of(self, pid: int) -> str | None:
        """The role of a process of the cluster (``worker-1``…), or None."""
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:
            return None
        prefix = f"{MARK}={self.token}:".encode()
        for variable in environ.split(b"\0"):
            if variable.startswith(prefix):
                return variable[len(prefix):].decode()
        return None

    def kill_worker(self, worker: int) -> None:
        """SIGKILL the worker's daemon, as a crash would: its executor is left to notice."""
        for process in self._daemons:
            if process.pid == self.worker_pids[worker]:
                process.kill()
                process.wait()  # our child: reaped, not left a zombie

    def stop(self) -> None:
        """SIGKILL every process of the cluster, until none is left (a dying executor may
        start a Python worker meanwhile)."""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            pids = self.processes()
            if not pids:
                break
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):  # gone meanwhile
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.1)
        for process in self._daemons:  # reap ours (spark-class exec'd the JVM in place)
            process.kill()
            process.wait()
        self._daemons.clear()
        for log in self._logs:
            log.close()
        self._logs.clear()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--cores", type=int, default=1, help="cores of each worker")
    parser.add_argument("--memory", default="1g", help="memory of each worker")
    parser.add_argument("--dir", type=Path, help="work and log directories (default: a new "
                        "temporary one)")
    args = parser.parse_args()
    base = args.dir or Path(tempfile.mkdtemp(prefix="warcdeboil-cluster-"))
    with StandaloneCluster(base, args.workers, args.cores, args.memory) as cluster:
        print(cluster.master_url, flush=True)
        print(f"logs: {base / 'logs'}; Ctrl-C stops the cluster", file=sys.stderr)
        with contextlib.suppress(KeyboardInterrupt):
            signal.pause()


if __name__ == "__main__":
    main()
