"""Getting a SparkSession: the one a caller already has, or one built for the run.

Under ``spark-submit`` (or a notebook) the session exists and its master and settings are the
cluster's; from the command line a session is built with ``--spark-master`` and ``--spark-conf``.
Spark is imported only here and in :mod:`.engine`, and only when the Spark engine runs.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..errors import ConfigError

__all__ = ["INSTALL_HINT", "build_session", "parse_conf", "require_pyspark"]

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
    builder = SparkSession.builder
    if master is not None:
        builder = builder.master(master)
    for key, value in settings.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()
