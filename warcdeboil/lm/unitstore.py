"""The units of a run model's training text, kept to score that text with the other model.

``--lm auto`` trains a model per language and half of the pages and scores each half's pages
with the other half's model (:mod:`.stage`). Training splits every text into units (and
numbers them) a chunk at a time (:class:`~.lm.counts.NgramCounts`); it keeps each chunk here as
it was counted, so that scoring only looks up the other model's row of each *distinct* unit of a
chunk instead of splitting the text and looking every unit up again (on dragnet, 0.28 of the
0.45 CPU-s pass 2 spent scoring: ``git show 62526b1:benchmarks/results/lm-cost-2026-11-25b.md``).

The file: for each chunk, its distinct units (UTF-8, one a line) and the number of each of its
units among them (``numpy.save`` arrays: no pickle); then the number of lines of each text, in
the order the texts came; last, where that array starts (8 bytes, little-endian).

>>> import tempfile
>>> with tempfile.TemporaryDirectory() as tmp:
...     path = Path(tmp) / "en.0.units"
...     with UnitStoreWriter(path) as out:
...         texts = list(out.texts(["a b", "c\\nd"]))
...         out.add(["\\ue000", "a", "b"], np.array([0, 1, 2, 0]))
...     chunks = [(names, numbers.tolist()) for names, numbers in iter_unit_chunks(path)]
...     chunks, text_lines(path).tolist()
([(['\\ue000', 'a', 'b'], [0, 1, 2, 0])], [1, 2])
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

import numpy as np

from warcdeboil.sidefile import SideFileWriter, reading

__all__ = ["UnitStoreWriter", "iter_unit_chunks", "text_lines"]

_TRAILER = struct.Struct("<Q")


class UnitStoreWriter(SideFileWriter):
    """Writes one model's training units (a context manager, atomic): ``add`` is the trainer's
    ``keep``, and its texts go through ``texts`` so that their lines are counted."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self._lines: list[int] = []

    def texts(self, texts: Iterable[str]) -> Iterator[str]:
        """``texts`` passed on, each one's number of lines noted."""
        lines = self._lines
        for text in texts:
            lines.append(text.count("\n") + 1)
            yield text

    def add(self, names: list[str], numbers: np.ndarray) -> None:
        """One chunk: its distinct units and the number of each of its units among them."""
        blob = "\n".join(names).encode("utf-8", "surrogatepass")
        np.save(self._fh, np.frombuffer(blob, np.uint8), allow_pickle=False)
        np.save(self._fh, numbers.astype(np.int32), allow_pickle=False)

    def __exit__(self, exc_type: object, *rest: object) -> None:
        if exc_type is None:
            start = self._fh.tell()
            np.save(self._fh, np.array(self._lines, np.int64), allow_pickle=False)
            self._fh.write(_TRAILER.pack(start))
        super().__exit__(exc_type, *rest)


def _lines_start(fh: BinaryIO) -> int:
    """Where the array of lines a text starts (the trailer's word)."""
    size = os.fstat(fh.fileno()).st_size
    if size < _TRAILER.size:
        raise ValueError("no trailer")
    fh.seek(size - _TRAILER.size)
    (start,) = _TRAILER.unpack(fh.read(_TRAILER.size))
    if start > size - _TRAILER.size:
        raise ValueError("a trailer beyond the end")
    return int(start)


def _load(fh: BinaryIO) -> np.ndarray:
    try:
        array: np.ndarray = np.load(fh, allow_pickle=False)
    except EOFError as exc:
        raise ValueError("cut short") from exc
    return array


def iter_unit_chunks(path: Path) -> Iterator[tuple[list[str], np.ndarray]]:
    """The chunks of a unit store, in the order they were added."""
    with reading(path, "store of training units") as fh:
        end = _lines_start(fh)
        fh.seek(0)
        while fh.tell() < end:
            blob = _load(fh)
            numbers = _load(fh)
            names = blob.tobytes().decode("utf-8", "surrogatepass").split("\n")
            if numbers.size and (int(numbers.min()) < 0 or int(numbers.max()) >= len(names)):
                raise ValueError("unit numbers out of range")
            yield names, numbers


def text_lines(path: Path) -> np.ndarray:
    """The number of lines of each text of a unit store, in order."""
    with reading(path, "store of training units") as fh:
        fh.seek(_lines_start(fh))
        return _load(fh)
