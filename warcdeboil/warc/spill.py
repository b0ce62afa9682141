"""A record's block kept on disk while it is read, written and digested.

The reader streams a block longer than ``reader.SPILL_BYTES`` into an anonymous temporary file
(in ``TMPDIR``) as it is read, so no record, however large, is ever held in memory whole; the
writers and digests read it back a MiB at a time.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator

__all__ = ["SpilledBlock"]

_SPILL_CHUNK = 1 << 20


class SpilledBlock:
    """A record's block held in an anonymous temporary file (gone when this object is)."""

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile(prefix="warcdeboil-block-")  # noqa: SIM115
        self.size = 0

    def __del__(self) -> None:
        self._file.close()  # the file is gone with the block (closing an anonymous file deletes it)

    def write(self, data: bytes | memoryview) -> None:
        self._file.seek(self.size)
        self._file.write(data)
        self.size += len(data)

    def head(self, size: int) -> bytes:
        """The first ``size`` bytes."""
        self._file.seek(0)
        return self._file.read(size)

    def read_at(self, position: int, size: int) -> bytes:
        """At most ``size`` bytes of the block from ``position`` on."""
        self._file.seek(position)
        return self._file.read(max(min(size, self.size - position), 0))

    def chunks(self) -> Iterator[bytes]:
        """The block in pieces of a MiB at most, from its start."""
        for _, chunk in self.region(0, self.size):
            yield chunk

    def region(self, start: int, end: int) -> Iterator[tuple[int, bytes]]:
        """(offset from ``start``, bytes) pieces of the file between ``start`` and ``end``,
        past the block's current size too (see reader._RecordParser._push_back)."""
        position = start
        while position < end:
            self._file.seek(position)
            chunk = self._file.read(min(_SPILL_CHUNK, end - position))
            if not chunk:
                raise OSError(f"temporary file of a record ends at {position} of {end}")
            yield position - start, chunk
            position += len(chunk)

    def read_all(self) -> bytes:
        """The whole block in memory (for code that needs it whole: small enough by then)."""
        return b"".join(self.chunks())
