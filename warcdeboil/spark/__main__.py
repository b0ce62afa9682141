"""``python -m warcdeboil.spark --entrypoint``: the path of the driver script for spark-submit.

Without ``--entrypoint``, the arguments are those of ``warcdeboil clean`` and the job runs
with the Spark engine, as under spark-submit.
"""

from __future__ import annotations

import sys

from . import entrypoint


def main(argv: list[str]) -> None:
    if argv == ["--entrypoint"]:
        print(entrypoint())
        return
    from .driver import main as drive

    drive(argv)


if __name__ == "__main__":
    main(sys.argv[1:])
