"""An external sort of small fixed records: sorted runs spilled to disk, then a k-way merge.

The runs are written by :func:`warcdeboil.site.index.write_run` and merged by its
:func:`~warcdeboil.site.index.merge_runs`, so the fan-in limit and the intermediate merges are the
index's; records that fit in one run never reach the disk. Memory: at most ``run_items``
records are held before a spill, plus one record per open run during the merge.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from warcdeboil.site.index import MAX_FAN_IN, merge_runs, write_run

__all__ = ["DEFAULT_RUN_ITEMS", "SortedSpill"]

# Records held before a spill: ~1M records of ~40 bytes each (with Python overhead ~100 MB).
DEFAULT_RUN_ITEMS = 1 << 20


class SortedSpill:
    """Collects ``(key, payload)`` records; :meth:`sorted` yields payloads in key order.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     spill = SortedSpill(Path(tmp), run_items=2)
    ...     for word in ("pear", "apple", "fig"):
    ...         spill.add(word.encode(), word.encode())
    ...     [p.decode() for p in spill.sorted()], spill.runs, spill.peak_items
    (['apple', 'fig', 'pear'], 2, 2)
    """

    def __init__(self, directory: Path, *, run_items: int = DEFAULT_RUN_ITEMS,
                 fan_in: int = MAX_FAN_IN, prefix: str = "spill") -> None:
        self.directory = Path(directory)
        self.run_items = max(1, run_items)
        self.fan_in = fan_in
        self.prefix = prefix
        self.runs = 0
        self.peak_items = 0  # the most records ever held in memory at once
        self._pending: list[tuple[bytes, bytes]] = []
        self._paths: list[Path] = []

    def add(self, key: bytes, payload: bytes) -> None:
        self._pending.append((key, payload))
        if len(self._pending) >= self.run_items:
            self._spill()

    def _spill(self) -> None:
        if not self._pending:
            return
        self.peak_items = max(self.peak_items, len(self._pending))
        self._pending.sort()
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self.directory / f"{self.prefix}-r{self.runs:06d}.run"
        write_run(path, self._pending)
        self._paths.append(path)
        self.runs += 1
        self._pending = []

    def sorted(self) -> Iterator[bytes]:
        """Every payload added, in key order; the run files are removed once read. Records
        that never filled a run are not written at all: sorted in memory, where they are."""
        if not self._paths:
            pending, self._pending = self._pending, []
            self.peak_items = max(self.peak_items, len(pending))
            pending.sort()
            for _key, payload in pending:
                yield payload
            return
        self._spill()
        try:
            yield from merge_runs(self._paths, fan_in=self.fan_in)
        finally:
            for path in self._paths:
                path.unlink(missing_ok=True)
            self._paths = []
