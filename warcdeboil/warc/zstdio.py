"""``.warc.zst`` as the IIPC proposal defines it: one or more zstd frames per record.

Each record is compressed on its own (never two records in one frame), every frame written with
its content size and a checksum. An optional dictionary sits at the very start of the file in a
skippable frame with magic ``0x184D2A5D``; its payload is a raw zstd dictionary or a
zstd-compressed one. Other skippable frames are ignored. warcio reads no zstd: this is ours.
"""

from __future__ import annotations

import logging
from collections.abc import Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import BinaryIO

import zstandard

from warcdeboil.errors import ConfigError, RecordError

from .segments import Kind, Segment

__all__ = [
    "DICTIONARY_FRAME_MAGIC",
    "ZSTD_FRAME_MAGIC",
    "Frame",
    "ZstdRecordCompressor",
    "decompress_range",
    "iter_frame_segments",
    "iter_frames",
    "looks_like_zstd",
    "read_dictionary",
    "train_dictionary",
]

log = logging.getLogger(__name__)

ZSTD_FRAME_MAGIC = 0xFD2FB528
DICTIONARY_FRAME_MAGIC = 0x184D2A5D
_SKIPPABLE_MASK = 0xFFFFFFF0
_SKIPPABLE_BASE = 0x184D2A50
_RAW_DICTIONARY_MAGIC = 0xEC30A437
_READ_SIZE = 1 << 16
# Compressed bytes fed per step: bounds how far past the limit one step can inflate.
_FEED = 1 << 13
_BIG_FRAME_FEED = 1 << 11


@dataclass(frozen=True, slots=True)
class Frame:
    """One data frame: where it is in the file and what it holds."""

    offset: int
    length: int
    data: bytes


def looks_like_zstd(head: bytes) -> bool:
    """True when the first 4 bytes are a zstd frame magic or a skippable-frame magic.

    >>> looks_like_zstd(bytes.fromhex("28b52ffd"))
    True
    >>> looks_like_zstd(b"WARC")
    False
    """
    if len(head) < 4:
        return False
    magic = int.from_bytes(head[:4], "little")
    return magic == ZSTD_FRAME_MAGIC or magic & _SKIPPABLE_MASK == _SKIPPABLE_BASE


def _load_dictionary(payload: bytes) -> bytes:
    """The raw dictionary in a dictionary frame's payload (stored raw or zstd-compressed)."""
    magic = int.from_bytes(payload[:4], "little")
    if magic == ZSTD_FRAME_MAGIC:
        return zstandard.ZstdDecompressor().decompress(payload, max_output_size=1 << 30)
    if magic != _RAW_DICTIONARY_MAGIC:
        raise ValueError("the dictionary frame holds neither a dictionary nor a zstd frame")
    return payload


def _decompressor(dictionary: bytes | None) -> zstandard.ZstdDecompressor:
    if dictionary is None:
        return zstandard.ZstdDecompressor()
    return zstandard.ZstdDecompressor(dict_data=zstandard.ZstdCompressionDict(dictionary))


class _Input:
    """Buffered reading with an exact count of the bytes consumed."""

    def __init__(self, fh: BinaryIO) -> None:
        self._fh = fh
        self.buf = b""
        self.taken = 0  # bytes handed out by take(), from the start

    def want(self, size: int) -> bool:
        while len(self.buf) < size:
            more = self._fh.read(max(_READ_SIZE, size - len(self.buf)))
            if not more:
                return False
            self.buf += more
        return True

    def take(self, size: int) -> bytes:
        data, self.buf = self.buf[:size], self.buf[size:]
        self.taken += len(data)
        return data


def iter_frames(
    fh: BinaryIO, *, path: str = "", max_frame_size: int = 1 << 30
) -> Iterator[Frame]:
    """Yield the data frames of a ``.warc.zst`` stream in order, from ``fh``'s position.

    A dictionary frame at the start is used for the frames that follow; skippable frames are
    not yielded. Raises :class:`RecordError` (with the damaged frame's offset) on a truncated or
    corrupt frame, or one that would inflate past ``max_frame_size``; every frame before the
    damage has been yielded by then (:func:`iter_frame_segments` reads on past damage).
    """
    source = _Input(fh)
    offset = fh.tell()
    decompressor = _decompressor(None)
    first = True
    while source.want(1):
        offset, decompressor, first, frame = _next_frame(
            source, offset, decompressor, first, path, max_frame_size
        )
        if frame is not None:
            yield frame


_FRAME_MAGIC_BYTES = ZSTD_FRAME_MAGIC.to_bytes(4, "little")


def _skip_to_magic(source: _Input) -> None:
    """Drop input up to the next zstd frame magic (or the end of the file)."""
    while True:
        found = source.buf.find(_FRAME_MAGIC_BYTES, 1)
        if found > 0:
            source.take(found)
            return
        source.take(max(len(source.buf) - 3, 0))
        if not source.want(len(source.buf) + 1):
            source.take(len(source.buf))
            return


def _next_frame(
    source: _Input,
    offset: int,
    decompressor: zstandard.ZstdDecompressor,
    first: bool,
    path: str,
    max_frame_size: int,
) -> tuple[int, zstandard.ZstdDecompressor, bool, Frame | None]:
    """Read one frame (or skippable frame) at ``offset``: (next offset, decompressor, first,
    the data frame or None)."""
    if not source.want(8):
        raise RecordError("file ends inside a frame header", path=path, offset=offset)
    magic = int.from_bytes(source.buf[:4], "little")
    if magic & _SKIPPABLE_MASK == _SKIPPABLE_BASE:
        size = int.from_bytes(source.buf[4:8], "little")
        if not source.want(8 + size):
            raise RecordError("truncated skippable frame", path=path, offset=offset)
        payload = source.take(8 + size)[8:]
        if first and magic == DICTIONARY_FRAME_MAGIC:
            try:
                decompressor = _decompressor(_load_dictionary(payload))
            except (ValueError, zstandard.ZstdError) as exc:
                raise RecordError(f"bad dictionary frame ({exc})", path=path,
                                  offset=offset) from exc
        return offset + 8 + size, decompressor, False, None
    if magic != ZSTD_FRAME_MAGIC:
        raise RecordError("not a zstd frame", path=path, offset=offset)
    data, length = _one_frame(source, decompressor, max_frame_size, path, offset)
    return offset + length, decompressor, False, Frame(offset, length, data)


def _one_frame(
    source: _Input, decompressor: zstandard.ZstdDecompressor, limit: int, path: str, offset: int
) -> tuple[bytes, int]:
    parts: list[bytes] = []
    pieces = _frame_pieces(source, decompressor, limit, path, offset, 1 << 62)
    while True:
        try:
            parts.append(next(pieces))
        except StopIteration as done:
            return b"".join(parts), done.value


def _frame_pieces(
    source: _Input, decompressor: zstandard.ZstdDecompressor, limit: int, path: str, offset: int,
    piece: int,
) -> Generator[bytes, None, int]:
    """The data of the frame at ``offset`` in pieces of about ``piece`` bytes (the last may be
    shorter); returns the frame's compressed length."""
    source.want(18)  # the largest frame header
    try:
        declared = zstandard.frame_content_size(source.buf)
    except zstandard.ZstdError as exc:
        raise RecordError(f"corrupt zstd frame header ({exc})", path=path, offset=offset) from exc
    if declared > limit:
        raise RecordError(f"zstd frame inflates past {limit} bytes", path=path, offset=offset)
    inflater = decompressor.decompressobj()
    parts: list[bytes] = []
    pending = 0
    size = 0
    consumed = 0
    feed = _FEED
    while True:
        if not source.buf and not source.want(1):
            if pending:
                # What was read before the end is still data: a record cut short by it comes
                # out truncated (or whole, when only the frame's checksum is missing).
                yield b"".join(parts)
                parts, pending = [], 0
            raise RecordError("zstd frame is truncated", path=path, offset=offset)
        chunk = source.take(feed)
        try:
            out = inflater.decompress(chunk)
        except zstandard.ZstdError as exc:
            raise RecordError(f"corrupt zstd frame ({exc})", path=path, offset=offset) from exc
        size += len(out)
        if size > limit:
            raise RecordError(f"zstd frame inflates past {limit} bytes", path=path, offset=offset)
        parts.append(out)
        pending += len(out)
        if inflater.eof:
            unused = inflater.unused_data
            consumed += len(chunk) - len(unused)
            source.buf = unused + source.buf
            source.taken -= len(unused)
            yield b"".join(parts)
            return consumed
        consumed += len(chunk)
        if pending >= piece:
            yield b"".join(parts)
            parts, pending = [], 0
            # A big frame is fed in smaller steps: a step of run-length blocks can inflate
            # about 30,000 times, and one step's output is held whole.
            feed = _BIG_FRAME_FEED


def iter_frame_segments(
    fh: BinaryIO, *, path: str = "", piece: int, dictionary: bytes | None = None
) -> Iterator[Segment]:
    """The data frames of ``fh`` from its position as reader segments, a frame's data handed on
    in pieces of about ``piece`` bytes, so a frame of any size is read in bounded memory.
    Damage comes out as a segment that says why, and reading goes on at the next frame magic.
    ``dictionary`` is used until a dictionary frame at the start says otherwise."""
    source = _Input(fh)
    offset = fh.tell()
    decompressor = _decompressor(dictionary)
    first = True
    while source.want(1):
        started = source.taken
        kind = Kind.START
        held: bytes | None = None  # the last piece read, handed on once the next one is known
        try:
            if not source.want(8):
                raise RecordError("file ends inside a frame header", path=path, offset=offset)
            magic = int.from_bytes(source.buf[:4], "little")
            if magic & _SKIPPABLE_MASK == _SKIPPABLE_BASE or magic != ZSTD_FRAME_MAGIC:
                offset, decompressor, first, _ = _next_frame(
                    source, offset, decompressor, first, path, 0
                )
                continue
            first = False
            pieces = _frame_pieces(source, decompressor, 1 << 62, path, offset, piece)
            while True:
                try:
                    data = next(pieces)
                except StopIteration as done:
                    assert held is not None
                    yield Segment(offset, offset + done.value, held, kind)
                    offset += done.value
                    break
                if held is not None:
                    yield Segment(offset, -1, held, kind)
                    kind = Kind.INNER
                held = data
        except RecordError as exc:
            _skip_to_magic(source)
            skipped = source.taken - started
            yield Segment(offset, offset + skipped, held or b"", kind, exc.reason)
            offset += skipped
            first = False


def read_dictionary(fh: BinaryIO) -> bytes | None:
    """The raw dictionary stored at the start of the file, or None (seeks to 0)."""
    fh.seek(0)
    head = fh.read(8)
    if len(head) < 8 or int.from_bytes(head[:4], "little") != DICTIONARY_FRAME_MAGIC:
        return None
    size = int.from_bytes(head[4:8], "little")
    try:
        return _load_dictionary(fh.read(size))
    except (ValueError, zstandard.ZstdError) as exc:
        raise RecordError(f"bad dictionary frame ({exc})", offset=0) from exc


def decompress_range(
    fh: BinaryIO, offset: int, length: int, dictionary: bytes | None, *, path: str = ""
) -> bytes:
    """Random access: the data of every frame in ``[offset, offset + length)``."""
    import io

    fh.seek(offset)
    raw = fh.read(length)
    source = _Input(io.BytesIO(raw))
    decompressor = _decompressor(dictionary)
    parts = []
    position = offset
    while source.want(1):
        data, used = _one_frame(source, decompressor, 1 << 30, path, position)
        parts.append(data)
        position += used
    return b"".join(parts)


class ZstdRecordCompressor:
    """Compresses records one frame each, with content size and checksum, as the spec asks."""

    def __init__(self, level: int = 3, dictionary: bytes | None = None) -> None:
        self._dictionary = dictionary
        self._compressor = zstandard.ZstdCompressor(
            level=level,
            dict_data=zstandard.ZstdCompressionDict(dictionary) if dictionary else None,
            write_checksum=True,
            write_content_size=True,
        )

    def header(self) -> bytes:
        """What goes once at the start of the file: the dictionary frame, or nothing."""
        if self._dictionary is None:
            return b""
        packed = zstandard.ZstdCompressor(level=19, write_content_size=True).compress(
            self._dictionary
        )
        return (
            DICTIONARY_FRAME_MAGIC.to_bytes(4, "little")
            + len(packed).to_bytes(4, "little")
            + packed
        )

    def compress(self, record: bytes) -> bytes:
        """One complete zstd frame holding ``record``."""
        return self._compressor.compress(record)

    def compress_pieces(self, pieces: Iterable[bytes], size: int) -> Iterator[bytes]:
        """One complete zstd frame holding a record of ``size`` bytes given in pieces."""
        compressor = self._compressor.compressobj(size=size)
        for piece in pieces:
            out = compressor.compress(piece)
            if out:
                yield out
        yield compressor.flush()


def train_dictionary(samples: Sequence[bytes], size: int = 110 * 1024) -> bytes:
    """A zstd dictionary trained on sample records (e.g. the archive's own)."""
    try:
        return zstandard.train_dictionary(size, list(samples)).as_bytes()
    except zstandard.ZstdError as exc:
        raise ConfigError(
            f"cannot train a zstd dictionary on {len(samples)} samples ({exc}): "
            "use more records, or a smaller dictionary size"
        ) from exc
