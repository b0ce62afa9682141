"""Running warcdeboil on Apache Spark (``pip install 'warcdeboil[spark]'``).

The same pipeline as the local engine, as Spark jobs over the same library functions: see
:mod:`.engine` for the shape of the run and :mod:`.tasks` for what executors run. Importing this
package does not import Spark; :func:`run_spark` does, when called.

From the command line::

    warcdeboil clean crawl/ -o out/ --engine spark --spark-master 'local[2]'
    spark-submit --master yarn $(python -m warcdeboil.spark --entrypoint) INPUT... -o OUT
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from warcdeboil.run.summary import RunSummary

__all__ = ["entrypoint", "run_spark"]


def entrypoint() -> Path:
    """The driver script to hand to ``spark-submit``."""
    return Path(__file__).with_name("driver.py")


def run_spark(*args: Any, **kwargs: Any) -> RunSummary:
    """See :func:`warcdeboil.spark.engine.run_spark` (imported on first use)."""
    from .engine import run_spark as run

    return run(*args, **kwargs)
