"""Getting a SparkSession: the one a caller already has, or one built for the run.

Under ``spark-submit`` (or a notebook) the session exists and its master and settings are the
cluster's; from the command line a session is built with ``--spark-master`` and ``--spark-conf``.
Spark is imported only here and in :mod:`.engine`, and only when the Spark engine runs.
"""

from __future__ import annotations

import logging
import os
import re
import socket
import sys
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

from warcdeboil.errors import ConfigError

__all__ = ["INSTALL_HINT", "build_session", "check_master", "parse_conf", "require_pyspark"]

log = logging.getLogger(__name__)

INSTALL_HINT = "pip install 'warcdeboil[spark]'"
LOG4J_CONFIG = Path(__file__).with_name("log4j2.properties")
# Settings for a session this package builds; --spark-conf overrides any of them.
DEFAULT_CONF = {
    "spark.app.name": "warcdeboil",
    "spark.ui.showConsoleProgress": "false",  # the CLI draws its own progress bars
    # Index rows are small and many: Python workers are reused between tasks.
    "spark.python.worker.reuse": "true",
}
# On a local master (a laptop, the tests) the fit needs few shuffle partitions: Spark's 200
# would be 200 tiny Python tasks.
LOCAL_CONF = {"spark.sql.shuffle.partitions": "8"}


def require_pyspark() -> None:
    """Raise a ConfigError with the install hint when Spark is not installed."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        raise ConfigError(f"--engine spark needs Apache Spark: {INSTALL_HINT}") from None


def parse_conf(pairs: Iterable[str]) -> dict[str, str]:
    """``KEY=VALUE`` strings as a dict.

    >>> parse_conf(["spark.executor.memory=4g", "spark.sql.shuffle.partitions=64"])
    {'spark.executor.memory': '4g', 'spark.sql.shuffle.partitions': '64'}
    """
    conf = {}
    for pair in pairs:
        key, eq, value = pair.partition("=")
        if not eq or not key.strip():
            raise ConfigError(f"--spark-conf {pair!r}: expected KEY=VALUE")
        conf[key.strip()] = value.strip()
    return conf


def build_session(master: str | None, conf: Mapping[str, str]) -> Any:
    """A SparkSession for the run (an active one is reused, with its own settings)."""
    require_pyspark()
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None and master is None and not conf:
        return active
    settings = dict(DEFAULT_CONF)
    # Without a master (spark-submit, or a machine whose spark-defaults.conf names one) the
    # cluster's configuration rules: only an explicit local master gets this machine's settings.
    if master is not None and master.startswith("local"):
        settings.update(LOCAL_CONF)
        # Python workers run this interpreter (where warcdeboil is installed), not the first
        # python3 on PATH. Spark reads only the environment for this (spark-submit sets it
        # from spark.pyspark.python); on a cluster the executors' Python is the cluster's.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        # Spark's INFO lines would drown the summary: errors only, unless the user says else.
        settings["spark.driver.extraJavaOptions"] = (
            f"-Dlog4j2.configurationFile={LOG4J_CONFIG.as_uri()}"
        )
    settings.update(conf)
    if master is not None:
        check_master(master)
    builder = SparkSession.builder
    if master is not None:
        builder = builder.master(master)
    for key, value in settings.items():
        builder = builder.config(key, value)
    said = _JvmStderr()
    try:
        with said:
            return builder.getOrCreate()
    except Exception as exc:  # Py4J's and PySpark's errors, with the JVM's words on stderr
        log.info("Spark's output while starting:\n%s", said.text())
        where = f"--spark-master {master}: " if master is not None else ""
        raise ConfigError(f"{where}Spark did not start: {_reason(said.text(), exc)}") from exc


# How long a standalone master may take to accept a connection before the run gives up on it
# (Spark itself tries three times for 20 s each).
MASTER_CONNECT_SECONDS = 5.0


def check_master(master: str) -> None:
    """A ``spark://`` master (or any of a list of them) that accepts no connection is a
    one-line ConfigError at once, before a JVM is started."""
    if not master.startswith("spark://"):
        return
    failures = []
    for address in master[len("spark://"):].split(","):
        host, _, port = address.rpartition(":")
        if not host or not port.isdigit():
            raise ConfigError(f"--spark-master {master}: expected spark://HOST:PORT")
        try:
            socket.create_connection((host, int(port)), MASTER_CONNECT_SECONDS).close()
            return
        except OSError as exc:
            failures.append(f"{address}: {exc.strerror or exc}")
    raise ConfigError(f"--spark-master {master}: cannot reach the master ({'; '.join(failures)})")


# What Spark prints when it cannot start, most telling first: a standalone master it cannot
# register with, the error that stopped the driver, spark-submit's refusal of the settings.
_REASONS = [
    re.compile(r"(Failed to connect to master \S+)"),
    re.compile(r" ERROR \S+: (.+)"),
    re.compile(r'Exception in thread "main" [\w.$]+: (.+)'),
]


def _reason(said: str, exc: Exception) -> str:
    for pattern in _REASONS:
        found = pattern.search(said)
        if found:
            return found.group(1).strip()
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


class _JvmStderr:
    """Spark's JVM writes to this process's stderr, which it inherits when it starts.

    While the session starts, file descriptor 2 is a pipe that a thread reads: if the start
    fails, what the JVM said is kept for one line of reason instead of reaching the user as a
    Java stack trace; once started, what it said and says later passes through to stderr.
    """

    def __init__(self) -> None:
        self._said: list[bytes] = []
        self._lock = threading.Lock()
        self._through: int | None = None  # stderr's descriptor, once the start went well
        self._saved = -1

    def __enter__(self) -> None:
        sys.stderr.flush()
        self._saved = os.dup(2)
        read, write = os.pipe()
        os.dup2(write, 2)
        os.close(write)
        threading.Thread(target=self._pump, args=(read,), daemon=True).start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        sys.stderr.flush()
        os.dup2(self._saved, 2)  # the JVM keeps the pipe; this process has its stderr back
        if exc_type is None:
            with self._lock:
                for chunk in self._said:
                    os.write(self._saved, chunk)
                self._said.clear()
                self._through = self._saved  # the pump writes here from now on
        else:
            os.close(self._saved)

    def _pump(self, read: int) -> None:
        with os.fdopen(read, "rb") as pipe:
            for chunk in pipe:
                with self._lock:
                    if self._through is not None:
                        os.write(self._through, chunk)
                    else:
                        self._said.append(chunk)

    def text(self) -> str:
        with self._lock:
            return b"".join(self._said).decode("utf-8", "replace")
