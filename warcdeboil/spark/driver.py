"""The driver script for ``spark-submit``: ``warcdeboil clean`` with the Spark engine.

    spark-submit --master yarn $(python -m warcdeboil.spark --entrypoint) INPUT... -o OUT [OPTIONS]

The arguments are those of ``warcdeboil clean``; the master and Spark settings are spark-submit's.
Every executor needs warcdeboil installed (the same version), e.g. from a packed environment
passed with ``--archives``.
"""

from __future__ import annotations

import sys
from pathlib import Path


def main(argv: list[str]) -> None:
    # spark-submit puts this script's directory first on sys.path: its modules (session,
    # tasks…) must not shadow top-level ones.
    here = Path(__file__).resolve().parent
    sys.path[:] = [p for p in sys.path if not p or Path(p).resolve() != here]
    from warcdeboil.cli import main as cli

    sys.argv = ["warcdeboil", "clean", *argv, "--engine", "spark"]
    cli()


if __name__ == "__main__":
    main(sys.argv[1:])
