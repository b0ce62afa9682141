"""What each page's site template removes, as the duplicate stage found it, for pass 2.

The duplicate stage finds, for every page of an input, what its site's profile removes (the
template candidates and slots: :class:`~warcdeboil.page.dom.Doomed`, many pages at once with numpy,
:mod:`warcdeboil.dedup.cuts`) to sign the page's text. Pass 2 would find the same again, a page
at a time in Python (:func:`~warcdeboil.page.dom.find_doomed`: 0.26-0.32 CPU-s of dragnet's 1,381
pages), so the stage keeps it here, one side file per input, and pass 2 reads it in step with
the page store (:class:`DoomedReader`). A page the file does not list is found again by pass 2.
Nothing here imports numpy (pass 2 runs in the main process).

A record: the page's ordinal, how many candidates and slots, the candidates' indexes in
ascending order, then each slot's start, end and ordinal (all unsigned, little-endian).

>>> import tempfile
>>> with tempfile.TemporaryDirectory() as tmp:
...     path = Path(tmp) / "f000000.doomed"
...     with DoomedWriter(path) as out:
...         out.add(2, Doomed({7, 3}, [(10, 40, 1)]))
...     reader = DoomedReader(path)
...     reader.get(0), reader.get(2), reader.get(5)
(None, Doomed(candidates={3, 7}, slots=[(10, 40, 1)]), None)
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from pathlib import Path

from warcdeboil.page.dom import Doomed
from warcdeboil.sidefile import InStep, SideFileWriter, reading

__all__ = ["DoomedReader", "DoomedWriter", "doomed_path", "iter_doomed"]

_HEAD = struct.Struct("<QII")  # ordinal, candidates, slots


def doomed_path(directory: Path, file_id: int) -> Path:
    """An input's side file in the duplicate stage's directory."""
    return directory / f"f{file_id:06d}.doomed"


class DoomedWriter(SideFileWriter):
    """Writes one input's side file, pages in ordinal order (atomic, a context manager)."""

    def add(self, ordinal: int, doomed: Doomed) -> None:
        slots = [value for slot in doomed.slots for value in slot]
        self._fh.write(struct.pack(f"<QII{len(doomed.candidates)}I{len(slots)}I", ordinal,
                                   len(doomed.candidates), len(doomed.slots),
                                   *sorted(doomed.candidates), *slots))


def iter_doomed(path: Path) -> Iterator[tuple[int, Doomed]]:
    """``(ordinal, what the page's template removes)`` of every page of one side file."""
    with reading(path, "template cuts") as fh:
        while head := fh.read(_HEAD.size):
            ordinal, candidates, slots = _HEAD.unpack(head)
            data = fh.read(4 * (candidates + 3 * slots))
            values = struct.unpack(f"<{candidates + 3 * slots}I", data)
            flat = values[candidates:]
            yield ordinal, Doomed(set(values[:candidates]),
                                  list(zip(flat[0::3], flat[1::3], flat[2::3], strict=True)))


class DoomedReader(InStep[Doomed]):
    """One input's side file read in step with its page store (:meth:`get`: None for a page
    the file does not list)."""

    def __init__(self, path: Path) -> None:
        super().__init__(iter_doomed(path))
