"""Progress of one worker through one input: records and input bytes, reported in batches.

A pass calls :meth:`Meter.record` once per record (a few integer operations) and the meter calls
its ``report(records, nbytes)`` with what was read since the last report, every
:data:`EVERY_RECORDS` records or :data:`EVERY_BYTES` bytes, whichever comes first, so one big
file shows its bytes moving; :meth:`Meter.finish` reports the rest, the bytes topped up to the
input's size, so that a finished input counts exactly its size (no more: bytes never pass it).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from warcdeboil.warc.reader import Span
from warcdeboil.warc.remote import is_remote, local_path

__all__ = ["EVERY_BYTES", "EVERY_RECORDS", "Meter", "input_bytes"]

EVERY_RECORDS = 256
EVERY_BYTES = 4 << 20

Report = Callable[[int, int], None]
"""``report(records, nbytes)``: records and input bytes read since the last report."""


def input_bytes(location: str, spans: Sequence[Span] | None = None) -> int:
    """What reading an input reads: its chosen records' bytes, else the file's size (0 when it
    cannot be known cheaply: a URL, or a file that is not there)."""
    if spans is not None:
        return sum(length for _, length in spans)
    if is_remote(location):
        return 0
    try:
        return os.path.getsize(local_path(location))
    except OSError:
        return 0


class Meter:
    """Counts one input's records and bytes read for ``report``.

    Reading a whole file, the bytes read are the end of the last record (offsets are the file's
    own); reading chosen records, the sum of their lengths.
    """

    __slots__ = ("_report", "_size", "_selected", "_records", "_bytes", "_sent_records",
                 "_sent_bytes", "_next_records", "_next_bytes")

    def __init__(self, report: Report, size: int, *, selected: bool = False) -> None:
        self._report = report
        self._size = size  # what the input counts for when read (0: unknown)
        self._selected = selected
        self._records = self._bytes = self._sent_records = self._sent_bytes = 0
        self._next_records, self._next_bytes = EVERY_RECORDS, EVERY_BYTES

    def record(self, offset: int, length: int) -> None:
        """One record read, at ``offset``, ``length`` bytes."""
        self._records += 1
        if self._selected:
            self._bytes += length
        elif offset + length > self._bytes:
            self._bytes = offset + length
        if self._size and self._bytes > self._size:  # offsets in a stream larger than the file
            self._bytes = self._size
        if self._records >= self._next_records or self._bytes >= self._next_bytes:
            self._send()
            self._next_records = self._records + EVERY_RECORDS
            self._next_bytes = self._bytes + EVERY_BYTES

    def finish(self) -> None:
        """The input is read (or given up): report the rest, the input counted as its size."""
        if self._size:
            self._bytes = self._size
        self._send()

    def _send(self) -> None:
        records = self._records - self._sent_records
        nbytes = self._bytes - self._sent_bytes
        if records or nbytes:
            self._report(records, nbytes)
            self._sent_records, self._sent_bytes = self._records, self._bytes
