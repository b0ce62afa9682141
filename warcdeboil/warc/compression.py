"""Compression layers under a WARC stream: none, gzip per record, zstd per record.

The reader sees a compressed file as a sequence of *segments*: a gzip member, a zstd frame, or (for
an uncompressed file) a plain chunk of the file. A segment carries its compressed offset and length
and its decompressed bytes, which is what lets the reader report each record's exact offset and
length in the file, and what random access seeks back to.
"""

from __future__ import annotations

import enum
import types
import zlib
from collections.abc import Iterator
from typing import BinaryIO, cast

from .segments import Kind, Segment

_inflate_lib: types.ModuleType
_INFLATE_ERRORS: tuple[type[Exception], ...]
try:  # ISA-L inflates gzip 2x faster than zlib: 0.14 s vs 0.28 s for ../shared/eval/dragnet
    from isal import isal_zlib

    # isal's stubs call its error an instance; it is the exception class igzip_lib.IsalError.
    _inflate_lib, _INFLATE_ERRORS = isal_zlib, (cast(type[Exception], isal_zlib.error), zlib.error)
except ImportError:  # pragma: no cover - isal has wheels for the usual platforms
    _inflate_lib, _INFLATE_ERRORS = zlib, (zlib.error,)

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
    fh: BinaryIO, codec: Codec, *, path: str = "", dictionary: bytes | None = None
) -> Iterator[Segment]:
    """Yield the decompressed segments of ``fh`` from its current position: a member or frame
    that inflates to more than about 8 MiB comes in pieces, so none is ever held whole.

    Never raises for damaged data: a damaged stretch comes out as a segment that says so, and
    reading goes on at the next gzip member or zstd frame found after it. ``dictionary``: the
    zstd dictionary of a file read from the middle (its dictionary frame is at its start).
    """
    if codec is Codec.GZIP:
        yield from _iter_gzip(fh)
    elif codec is Codec.ZSTD:
        from .zstdio import iter_frame_segments

        yield from iter_frame_segments(fh, path=path, piece=_PIECE, dictionary=dictionary)
    else:
        offset = fh.tell()
        while chunk := fh.read(_PLAIN_CHUNK):
            yield Segment(offset, offset + len(chunk), chunk, Kind.PLAIN)
            offset += len(chunk)


class _Bytes:
    """Compressed input with the file offset of its first buffered byte."""

    def __init__(self, fh: BinaryIO) -> None:
        self.fh = fh
        self.offset = fh.tell()
        self.buf = b""

    def more(self) -> bool:
        chunk = self.fh.read(_READ_SIZE)
        self.buf += chunk
        return bool(chunk)

    def drop(self, count: int) -> None:
        self.buf = self.buf[count:]
        self.offset += count

    def seek_magic(self, magic: bytes) -> None:
        """Drop bytes up to the next occurrence of ``magic`` (or to the end of the file)."""
        while True:
            found = self.buf.find(magic, 1)
            if found > 0:
                self.drop(found)
                return
            keep = len(magic) - 1
            self.drop(max(len(self.buf) - keep, 0))
            if not self.more():
                self.drop(len(self.buf))
                return


# Members are handed on in pieces of about this much decompressed data, so one huge member (a
# whole file compressed as one gzip stream) is read streaming, not all at once.
_PIECE = 8 << 20


def _iter_gzip(fh: BinaryIO) -> Iterator[Segment]:
    src = _Bytes(fh)
    while src.buf or src.more():
        if len(src.buf) < 2:
            src.more()
        if not src.buf.startswith(GZIP_MAGIC):
            start = src.offset
            if not src.buf.strip(b"\0\r\n\t "):
                src.drop(len(src.buf))  # padding after the last member
                continue
            src.seek_magic(GZIP_MAGIC + b"\x08")
            yield Segment(start, src.offset, b"", Kind.START, "bytes that are not gzip")
            continue
        yield from _gzip_member(src)


def _joined(parts: list[bytes]) -> bytes:
    """The parts as one bytes object (one part is not copied: join would copy it)."""
    return parts[0] if len(parts) == 1 else b"".join(parts)


def _gzip_member(src: _Bytes) -> Iterator[Segment]:
    start = src.offset
    inflater = _inflate_lib.decompressobj(31)
    pending: list[bytes] = []
    pending_size = 0
    first = True
    while True:
        data = src.buf
        if not data and not src.more():
            # The input ends: what the inflater still holds comes out, then the member must end.
            out = b"" if inflater.eof else inflater.decompress(b"", _PIECE - pending_size)
            if not out:
                yield Segment(start, src.offset, _joined(pending),
                              Kind.START if first else Kind.INNER, "gzip member is truncated")
                return
        else:
            data = src.buf
            try:
                # At most a piece at a time (64 KiB of deflated zeros inflate to 64 MiB), and
                # no more than fills it: a full piece from one call is handed on without a copy.
                out = inflater.decompress(data, _PIECE - pending_size)
            except _INFLATE_ERRORS as exc:
                src.seek_magic(GZIP_MAGIC + b"\x08")
                yield Segment(start, src.offset, b"", Kind.START if first else Kind.INNER,
                              f"corrupt gzip member ({exc})")
                return
            rest = inflater.unused_data if inflater.eof else inflater.unconsumed_tail
            src.drop(len(data) - len(rest))
        pending.append(out)
        pending_size += len(out)
        if inflater.eof:
            yield Segment(start, src.offset, _joined(pending), Kind.START if first else Kind.INNER)
            return
        if pending_size >= _PIECE or (len(pending) == 1 and pending_size >= _PIECE >> 3):
            # (A MiB or more from one call is a piece as it is: joining would copy it.)
            yield Segment(start, -1, _joined(pending), Kind.START if first else Kind.INNER)
            first = False
            pending, pending_size = [], 0
