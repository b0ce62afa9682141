"""What several benchmarks share: the least CPU of a step run a few times in this process, and
the pages a JSONL output directory holds."""

from __future__ import annotations

import gzip
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def least_cpu(step: Callable[[], object], repeat: int = 3) -> float:
    """The least CPU seconds (this process's) of ``repeat`` runs of ``step``: the run a shared
    machine slowed least."""
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        step()
        best = min(best, time.process_time() - started)
    return best


def output_pages(directory: Path) -> list[dict[str, Any]]:
    """Every line of the ``.jsonl.gz`` outputs under ``directory``, in the order of their paths."""
    pages = []
    for path in sorted(directory.rglob("*.jsonl.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            pages += [json.loads(line) for line in fh]
    return pages
