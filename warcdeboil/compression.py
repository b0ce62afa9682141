"""Compression layers under a WARC stream: none, gzip per record, zstd per record.

The reader sees a compressed file as a sequence of *segments*: a gzip member, a zstd frame, or (for
an uncompressed file) a plain chunk of the file. A segment carries its compressed offset and length
and its decompressed bytes, which is what lets the reader report each record's exact offset and
length in the file, and what random access seeks back to.
"""

from __future__ import annotations

import enum
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from .errors import RecordError

__all__ = ["Codec", "Segment", "detect_codec", "iter_segments"]

GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = 0xFD2FB528
ZSTD_SKIPPABLE_MAGIC = 0x184D2A50  # 0x184D2A50..0x184D2A5F
_READ_SIZE = 1 << 16
_PLAIN_CHUNK = 1 << 20


class Codec(str, enum.Enum):
    """How the records of a file are compressed."""

    NONE = "none"
    GZIP = "gzip"
    ZSTD = "zstd"

    @property
    def suffix(self) -> str:
        return {Codec.NONE: "", Codec.GZIP: ".gz", Codec.ZSTD: ".zst"}[self]


@dataclass(frozen=True, slots=True)
class Segment:
    """A run of decompressed bytes and where it came from in the file.

    ``boundary`` is true when records may only start at the segment's first byte to be
    addressable (gzip members, zstd frames); for plain files any byte is addressable.
    """

    offset: int
    length: int
    data: bytes
    boundary: bool


def detect_codec(head: bytes) -> Codec:
    """Tell the codec of a file from its first bytes.

    >>> detect_codec(b"\\x1f\\x8b\\x08\\x00")
    <Codec.GZIP: 'gzip'>
    >>> detect_codec(b"WARC/1.0\\r\\n")
    <Codec.NONE: 'none'>
    """
    if head.startswith(GZIP_MAGIC):
        return Codec.GZIP
    if len(head) >= 4:
        magic = int.from_bytes(head[:4], "little")
        if magic == ZSTD_MAGIC or magic & 0xFFFFFFF0 == ZSTD_SKIPPABLE_MAGIC:
            return Codec.ZSTD
    return Codec.NONE


def iter_segments(
    fh: BinaryIO, codec: Codec, *, path: str = "", max_segment_size: int = 1 << 30
) -> Iterator[Segment]:
    """Yield the decompressed segments of ``fh`` from its current position."""
    if codec is Codec.GZIP:
        yield from _iter_gzip_members(fh, path, max_segment_size)
    elif codec is Codec.ZSTD:
        from .zstdio import iter_frames

        for frame in iter_frames(fh, path=path, max_frame_size=max_segment_size):
            yield Segment(frame.offset, frame.length, frame.data, True)
    else:
        offset = fh.tell()
        while chunk := fh.read(_PLAIN_CHUNK):
            yield Segment(offset, len(chunk), chunk, False)
            offset += len(chunk)


def _iter_gzip_members(fh: BinaryIO, path: str, max_size: int) -> Iterator[Segment]:
    offset = fh.tell()
    pending = b""
    while True:
        if not pending:
            pending = fh.read(_READ_SIZE)
            if not pending:
                return
        if not pending.startswith(GZIP_MAGIC[: len(pending)]):
            if not pending.strip(b"\0\r\n\t "):
                # Padding after the last member (some writers pad to a block size).
                offset += len(pending)
                pending = fh.read(_READ_SIZE)
                if not pending:
                    return
                continue
            raise RecordError("bytes after a gzip member are not gzip", path=path, offset=offset)
        inflater = zlib.decompressobj(31)
        parts: list[bytes] = []
        size = 0
        consumed = 0
        data = pending
        while True:
            try:
                out = inflater.decompress(data, max_size + 1 - size)
            except zlib.error as exc:
                raise RecordError(f"corrupt gzip member ({exc})", path=path, offset=offset) from exc
            parts.append(out)
            size += len(out)
            if size > max_size:
                raise RecordError(
                    f"gzip member inflates past {max_size} bytes", path=path, offset=offset
                )
            if inflater.eof:
                unused = inflater.unused_data
                consumed += len(data) - len(unused)
                pending = unused
                break
            if inflater.unconsumed_tail:
                consumed += len(data) - len(inflater.unconsumed_tail)
                data = inflater.unconsumed_tail
                continue
            consumed += len(data)
            data = fh.read(_READ_SIZE)
            if not data:
                raise RecordError("gzip member is truncated", path=path, offset=offset)
        yield Segment(offset, consumed, b"".join(parts), True)
        offset += consumed
