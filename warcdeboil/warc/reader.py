"""Streaming WARC (and ARC) reader that reports each record's exact offset and length.

``iter_records(path)`` yields :class:`WarcRecord` objects in file order. The record keeps its
WARC header fields in their original order and its block as stored, so a record that warcdeboil
does not change is written back byte for byte. For compressed files a record's ``offset`` and
``length`` are those of its gzip member(s) or zstd frame(s): exactly what
:func:`read_record_at` seeks back to, and what :func:`iter_spans` reads when only some records
of a file are wanted (records chosen from an index). A location may be a local path, a
``file://`` URL, or any URL fsspec knows (see :mod:`warcdeboil.warc.remote`).
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import BinaryIO, cast

from warcdeboil.errors import InputError, RandomAccessError, RecordError

from .compression import Codec, Kind, Segment, detect_codec, iter_segments
from .fields import parse_fields
from .remote import is_remote, local_path, open_remote
from .spill import SpilledBlock

__all__ = [
    "SPILL_BYTES",
    "Span",
    "SpilledBlock",
    "WarcRecord",
    "iter_records",
    "iter_selected",
    "iter_spans",
    "open_archive",
    "read_record_at",
]

Span = tuple[int, int]
"""Where one record is stored in its file: (offset, length)."""

log = logging.getLogger(__name__)

_HEADER_END = b"\r\n\r\n"
# A block longer than this is never held in memory: it goes to a temporary file as it is read
# (:class:`SpilledBlock`), so a record of any size is read, copied and written in bounded memory.
# Pages are at most 16 MiB by default (pages.DEFAULT_MAX_PAGE_BYTES): they stay on the fast path.
SPILL_BYTES = 16 << 20
_BLANK = b"\r\n\t \0"
_NOT_BLANK = re.compile(rb"[^\r\n\t \0]")
# A stretch of blank bytes where a record should start is a counted problem when it holds a NUL
# or is longer than this (a few line ends between records are what writers leave, not damage).
_MAX_PADDING = 1 << 16


@dataclass(slots=True)
class WarcRecord:
    """One record: WARC header fields in file order and the block as stored.

    ``addressable`` is false when the record does not start on its own gzip member or zstd frame,
    so it cannot be read back by offset. A block longer than :data:`SPILL_BYTES` is in ``spill``
    (a temporary file), not in memory: read it with :meth:`iter_block` and :meth:`block_head`
    (``block`` reads it whole).
    """

    offset: int
    length: int
    version: str
    headers: list[tuple[str, str]]
    _block: bytes = field(repr=False)
    addressable: bool = True
    error: str | None = None  # why this record (or damaged stretch) could not be read whole
    converted: bool = False  # made from an ARC record: its bytes in the file are not WARC
    framed: bool = True  # its block was followed by the CRLFCRLF that ends a record
    _index: dict[str, str] | None = field(default=None, repr=False)
    spill: SpilledBlock | None = field(default=None, repr=False)

    @property
    def block(self) -> bytes:
        """The whole block, in memory."""
        return self._block if self.spill is None else self.spill.read_all()

    @property
    def block_size(self) -> int:
        return len(self._block) if self.spill is None else self.spill.size

    def block_head(self, size: int) -> bytes:
        """The first ``size`` bytes of the block."""
        return self._block[:size] if self.spill is None else self.spill.head(size)

    def iter_block(self) -> Iterator[bytes]:
        """The block in pieces of at most a MiB (one piece when it is in memory)."""
        if self.spill is None:
            yield self._block
        else:
            yield from self.spill.chunks()

    def get(self, name: str, default: str | None = None) -> str | None:
        """The value of the first header called ``name`` (case-insensitive)."""
        index = self._index
        if index is None:
            index = {}
            for key, value in self.headers:
                index.setdefault(key.lower(), value)
            self._index = index
        return index.get(name.lower(), default)

    @property
    def rec_type(self) -> str:
        return (self.get("WARC-Type") or "").lower()

    @property
    def target_uri(self) -> str:
        uri = self.get("WARC-Target-URI") or ""
        # WARC/0.17-1.0 writers sometimes wrap the URI in angle brackets.
        return uri[1:-1] if uri.startswith("<") and uri.endswith(">") else uri

    @property
    def record_id(self) -> str:
        return self.get("WARC-Record-ID") or ""

    def header_bytes(self) -> bytes:
        """The version line and header fields, serialised as read, ending with the blank line."""
        lines = [self.version]
        lines.extend(f"{k}: {v}" for k, v in self.headers)
        return ("\r\n".join(lines) + "\r\n\r\n").encode("utf-8", "surrogateescape")

    def to_bytes(self) -> bytes:
        """The whole uncompressed record, trailer included."""
        return self.header_bytes() + self.block + b"\r\n\r\n"


def open_archive(
    path: str | os.PathLike[str], *, random_access: bool = False
) -> tuple[BinaryIO, Codec]:
    """Open a local path or URL for reading and tell its codec from its first bytes.

    ``random_access``: the file is read by offset, not streamed (for a URL: no read-ahead).
    """
    name = os.fspath(path)
    if is_remote(name):
        fh = open_remote(name, random_access=random_access)
    else:
        try:
            fh = open(local_path(name), "rb")  # noqa: SIM115 - the caller closes it
        except OSError as exc:
            raise InputError(f"{name}: cannot open ({exc.strerror})") from exc
    try:
        head = fh.read(8)
        fh.seek(0)
    except OSError as exc:
        fh.close()
        raise InputError(f"{name}: cannot read ({exc})") from exc
    return fh, detect_codec(head)


def iter_records(
    path: str | os.PathLike[str], *, spill_bytes: int = SPILL_BYTES
) -> Iterator[WarcRecord]:
    """Yield every record of a WARC or ARC file, in order, with offset and length.

    Never raises for damage inside the file: a damaged stretch comes out as a record with
    ``error`` set (and no headers when none could be read), and reading goes on after it.
    Blocks longer than ``spill_bytes`` are spilled to a temporary file (see :class:`WarcRecord`).
    """
    name = os.fspath(path)
    fh, codec = open_archive(name)
    with fh:
        segments = iter_segments(fh, codec, path=name)
        yield from _RecordParser(segments, codec, name, spill_bytes)


def read_record_at(path: str | os.PathLike[str], offset: int, length: int) -> WarcRecord:
    """Read the one record stored at ``offset`` (``length`` bytes) of ``path``."""
    name = os.fspath(path)
    fh, codec = open_archive(name, random_access=True)
    with fh:
        dictionary = _dictionary(fh, codec, name)
        record = _record_in(fh, codec, name, (offset, length), dictionary)
    if record is None:
        raise RandomAccessError(f"{name}@{offset}: no record at this offset")
    if record.error is not None:
        raise RecordError(record.error, path=name, offset=offset)
    return record


def iter_spans(path: str | os.PathLike[str], spans: Sequence[Span]) -> Iterator[WarcRecord]:
    """The records stored at ``spans`` of one file, in the order given, each read with one
    range read (a remote file is never downloaded whole). Like :func:`iter_records`, damage
    comes out as a record with ``error`` set, and reading goes on with the next span."""
    name = os.fspath(path)
    fh, codec = open_archive(name, random_access=True)
    with fh:
        try:
            dictionary = _dictionary(fh, codec, name)
        except RecordError as exc:
            for offset, length in spans:
                yield _damaged(offset, length, exc.reason)
            return
        for span in spans:
            try:
                record = _record_in(fh, codec, name, span, dictionary)
            except RecordError as exc:
                record = _damaged(span[0], span[1], exc.reason)
            if record is None:
                record = _damaged(span[0], span[1], "no record at this offset")
            yield record


def iter_selected(
    path: str | os.PathLike[str], spans: Sequence[Span] | None = None
) -> Iterator[WarcRecord]:
    """Every record of ``path`` (``spans`` None), or only those at ``spans``."""
    return iter_records(path) if spans is None else iter_spans(path, spans)


def _dictionary(fh: BinaryIO, codec: Codec, name: str) -> bytes | None:
    if codec is not Codec.ZSTD:
        return None
    from .zstdio import read_dictionary

    try:
        return read_dictionary(fh)
    except RecordError as exc:
        raise RecordError(exc.reason, path=name, offset=0) from exc


def _record_in(
    fh: BinaryIO, codec: Codec, name: str, span: Span, dictionary: bytes | None
) -> WarcRecord | None:
    """The first record parsed from the bytes at ``span`` (error set when it is damaged),
    read as a stream: a record of any size is read in bounded memory by offset too."""
    offset, length = span
    try:
        fh.seek(offset)
        window = cast(BinaryIO, _Window(fh, offset, length))
        segments = iter_segments(window, codec, path=name, dictionary=dictionary)
        for record in _RecordParser(segments, codec, name, SPILL_BYTES):
            return record
    except OSError as exc:
        raise RecordError(f"cannot read ({exc})", path=name, offset=offset) from exc
    return None


class _Window:
    """``length`` bytes of a file from ``offset`` on, as a stream of their own."""

    def __init__(self, fh: BinaryIO, offset: int, length: int) -> None:
        self._fh = fh
        self._position = offset
        self._end = offset + length

    def tell(self) -> int:
        return self._position

    def read(self, size: int = -1) -> bytes:
        left = self._end - self._position
        data = self._fh.read(left if size < 0 else min(size, left)) if left > 0 else b""
        self._position += len(data)
        return data


class _RecordParser:
    """Parses records out of a stream of decompressed segments, and survives damage.

    Damage (a corrupt or truncated member, a malformed header, a record cut short) becomes a
    record with ``error`` set that covers the damaged stretch; parsing resumes at the next gzip
    member or zstd frame, or, in a plain file, at the next line that starts a WARC record.
    """

    def __init__(
        self, segments: Iterator[Segment], codec: Codec, path: str, spill_bytes: int
    ) -> None:
        self._segments = segments
        self._codec = codec
        self._path = path
        self._spill_at = spill_bytes
        self._buf = b""
        self._pos = 0
        # (start index in _buf, segment) for every segment whose data is in _buf.
        self._spans: list[tuple[int, Segment]] = []
        self._eof = False
        self._damage: Segment | None = None  # a damaged segment met by _fill, not yet reported
        self._arc = False  # set once an ARC file header has been seen
        self._inner = -1  # where in a plain file's spilled block a line starts with WARC/

    def __iter__(self) -> Iterator[WarcRecord]:
        while True:
            padding = self._skip_blank()
            if padding is not None:
                yield padding
                continue
            if not self._fill(5) and not self._fill(1):
                if self._damage is None:
                    return
                yield self._damaged_segment()
                continue
            start = self._pos
            # Where the record starts, known before a spilled block leaves the buffer.
            offset, start_ok = self._file_offset(start)
            try:
                record = self._parse_one(start)
            except RecordError as exc:
                yield self._recover(start, exc.reason)
                continue
            if self._damage is not None and record.error is not None:
                # A record cut short by damage: it covers the damaged stretch too.
                record.offset, record.length = offset, self._damage.end - offset
                record.addressable = False
                self._damage = None
                self._reset()
                yield record
                continue
            # Blank bytes after the record (ARC's newline, a trailer with a stray LF, NULs) are
            # its own: copying the record by offset and length copies them too.
            if self._pos < len(self._buf) and self._buf[self._pos] in _BLANK:
                self._pos = self._trailing_blank(self._pos)
            end, end_ok = self._file_offset(self._pos)
            record.offset = offset
            record.addressable = start_ok and end_ok
            record.length = end - offset if record.addressable else 0
            yield record
            self._compact()

    def _trailing_blank(self, pos: int) -> int:
        """Where the blank bytes that follow a record, and are its own, end: those of its own
        gzip member or zstd frame, and a short run of line ends (and, in a plain file, NULs)
        after it. A longer run, or NULs in a member of their own, are left to be reported."""
        buf = self._buf
        stop = _blank_end(buf, pos)
        own = pos
        if self._codec is not Codec.NONE:
            for start, segment in self._spans:
                if start < pos <= start + len(segment.data):
                    own = start + len(segment.data)
                    break
        if stop - pos <= _MAX_PADDING and (
                self._codec is Codec.NONE or buf.find(b"\0", own, stop) < 0):
            return stop
        return max(pos, min(stop, own))

    def _parse_one(self, start: int) -> WarcRecord:
        if self._buf.startswith(b"WARC/", start):
            return self._parse_warc()
        if self._arc or self._buf.startswith(b"filedesc://", start):
            self._arc = True
            return self._parse_arc()
        return self._parse_arc_or_fail()

    # -- damage ------------------------------------------------------------------------------

    def _damaged_segment(self) -> WarcRecord:
        segment = self._damage
        assert segment is not None
        self._damage = None
        self._reset()
        return _damaged(segment.offset, segment.end - segment.offset, segment.damage or "damaged")

    def _recover(self, start: int, reason: str) -> WarcRecord:
        """A record for the stretch from ``start`` to where reading can go on, and go there."""
        offset, _ = self._file_offset(start)
        if self._damage is not None:
            # The record ran into a damaged member: report both as one stretch.
            end = self._damage.end
            reason = self._damage.damage or reason
            self._damage = None
            self._reset()
            return _damaged(offset, end - offset, reason)
        if self._codec is Codec.NONE:
            resume = self._find_next_record(start + 1)
            end, _ = self._file_offset(resume)
            self._pos = resume
            self._compact()
            return _damaged(offset, end - offset, reason)
        # Compressed: skip to the end of the member the bad record starts in.
        for span_start, segment in self._spans:
            if span_start <= start < span_start + len(segment.data) and segment.end >= 0:
                self._pos = span_start + len(segment.data)
                self._compact()
                return _damaged(offset, segment.end - offset, reason)
        # The member goes on in pieces not read yet: read on to its end, a piece at a time.
        end = offset
        while self._spans:
            last = self._spans[-1][1]
            end = max(end, last.end)
            if last.end >= 0:
                break
            self._reset()
            if not self._fill(1):
                break
        self._reset()
        return _damaged(offset, max(end, offset) - offset, reason)

    def _find_next_record(self, since: int) -> int:
        """Buffer index of the next line starting with ``WARC/`` (or the end of the input);
        what is searched in vain leaves the buffer."""
        self._pos = since
        while True:
            found = self._buf.find(b"\nWARC/", self._pos)
            if found >= 0:
                return found + 1
            self._pos = max(self._pos, len(self._buf) - 6)
            self._compact()
            if not self._fill(len(self._buf) - self._pos + 1):
                return len(self._buf)

    def _record_ahead(self, pos: int) -> int:
        """Where, after ``pos``, the first buffered member or frame that starts with a WARC
        record begins (the end of the buffer when none does; plain files have no members)."""
        if self._codec is not Codec.NONE:
            for start, segment in self._spans:
                if start > pos and segment.kind is Kind.START and segment.data.startswith(b"WARC/"):
                    return start
        return len(self._buf)

    def _next_segment(self) -> bool:
        """Drop everything buffered and read the next segment; at the end of the input (or at
        damage) return False with the buffer holding the last segment, consumed, so that the
        end of what was read still maps to the file."""
        last = self._spans[-1][1] if self._spans else None
        self._reset()
        if self._fill(1):
            return True
        if last is not None and not self._buf:
            self._buf, self._pos, self._spans = last.data, len(last.data), [(0, last)]
        return False

    def _reset(self) -> None:
        self._buf = b""
        self._pos = 0
        self._spans = []

    # -- buffer management -------------------------------------------------------------------

    def _fill(self, need: int) -> bool:
        """Make at least ``need`` bytes available after ``_pos``; False at the end of the input
        or at a damaged segment (kept in ``_damage``)."""
        while len(self._buf) - self._pos < need:
            if self._eof or self._damage is not None:
                return False
            try:
                segment = next(self._segments)
            except StopIteration:
                self._eof = True
                return False
            if segment.damage is not None:
                self._damage = segment
                if not segment.data:
                    return False
                # What was read before the damage is still data: a record cut short by it
                # comes out truncated rather than lost.
                segment = Segment(segment.offset, -1, segment.data, segment.kind)
            self._spans.append((len(self._buf), segment))
            self._buf = self._buf + segment.data if self._buf else segment.data
        return True

    def _compact(self) -> None:
        if self._pos == 0:
            return
        keep = len(self._spans)
        for i, (start, segment) in enumerate(self._spans):
            if start + len(segment.data) > self._pos:
                keep = i
                break
        else:
            # Everything buffered is consumed: keep the last span for offset mapping.
            keep = max(len(self._spans) - 1, 0)
        spans = self._spans[keep:]
        cut = min(spans[0][0], self._pos) if spans else self._pos
        self._buf = self._buf[cut:]
        self._pos -= cut
        self._spans = [(start - cut, segment) for start, segment in spans]

    def _file_offset(self, pos: int) -> tuple[int, bool]:
        """Map a buffer position to a file offset, and tell whether it is addressable."""
        for start, segment in reversed(self._spans):
            if start > pos:
                continue
            inside = pos - start
            if segment.kind is Kind.PLAIN:
                return segment.offset + inside, True
            if inside == 0 and segment.kind is Kind.START:
                return segment.offset, True
            if inside >= len(segment.data) and segment.end >= 0:
                return segment.end, True
            return segment.offset, False
        return (self._spans[0][1].offset if self._spans else 0), pos == 0

    def _skip_blank(self) -> WarcRecord | None:
        """Step over blank bytes (line ends, spaces, NULs) where a record should start. A
        stretch that holds a NUL or is longer than ``_MAX_PADDING`` is no writer's padding: it
        comes back as a damaged record saying so (read streaming, however long)."""
        if not self._fill(1):
            return None
        buf, pos = self._buf, self._pos
        if buf[pos] not in _BLANK:
            return None
        offset, _ = self._file_offset(pos)
        skipped = 0
        nul = False
        while True:
            stop = _blank_end(buf, pos)
            found = stop < len(buf)
            nul = nul or buf.find(b"\0", pos, stop) >= 0
            skipped += stop - pos
            self._pos = stop
            if found or not self._next_segment():
                break
            buf, pos = self._buf, self._pos
        if not nul and skipped <= _MAX_PADDING:
            return None
        end, _ = self._file_offset(self._pos)
        kind = "NUL bytes" if nul else "blank bytes"
        self._compact()
        return _damaged(offset, end - offset, f"no record header ({skipped} {kind})")

    def _read_until(self, marker: bytes, limit: int) -> int:
        """Index just past ``marker`` after ``_pos``, reading more as needed."""
        searched = self._pos
        while True:
            found = self._buf.find(marker, searched)
            if found >= 0:
                return found + len(marker)
            if len(self._buf) - self._pos > limit:
                raise self._error(f"no end of header within {limit} bytes")
            searched = max(self._pos, len(self._buf) - len(marker) + 1)
            if not self._fill(len(self._buf) - self._pos + 1):
                raise self._error("file ends inside a record header")

    def _error(self, reason: str) -> RecordError:
        offset, _ = self._file_offset(self._pos)
        return RecordError(reason, path=self._path, offset=offset)

    def _take_block(
        self, start: int, length: int, what: str
    ) -> tuple[bytes | SpilledBlock, str | None]:
        """The block, and why it is short when the input ends (or breaks) before its end."""
        self._pos = start
        if length > self._spill_at:
            return self._spill_block(length, what)
        if self._fill(length):
            return self._buf[start : start + length], None
        block = self._buf[start:]
        self._pos = len(self._buf)
        return block, self._short(what, len(block), length)

    def _short(self, what: str, size: int, length: int) -> str:
        reason = f"{what} is truncated ({size} of {length} bytes)"
        if self._damage is not None:
            reason = f"{self._damage.damage}: {reason}"
        return reason

    def _spill_block(self, length: int, what: str) -> tuple[SpilledBlock, str | None]:
        """A long block, streamed from ``_pos`` into a temporary file a segment at a time: the
        declared length is never allocated, and the block ends where the bytes do. In a
        compressed file, a member that starts with a record inside the block ends it too
        (declared too long). The buffer is left holding the segment where the block ends."""
        spill = SpilledBlock()
        remaining = length
        plain = self._codec is Codec.NONE
        self._inner = -1
        tail = b""  # the block's last bytes so far, for a marker across two segments
        while True:
            buf, pos = self._buf, self._pos
            take = min(self._record_ahead(pos) - pos, remaining)
            if take:
                if plain and self._inner < 0:
                    self._inner = _find_inner(tail, buf, pos, pos + take, spill.size)
                    tail = bytes(buf[max(pos, pos + take - 6) : pos + take])
                spill.write(memoryview(buf)[pos : pos + take])
                self._pos = pos + take
                remaining -= take
            if not remaining:
                return spill, None
            if self._pos < len(self._buf):  # stopped at a member that starts with a record
                return spill, "Content-Length runs past the end of the record"
            if not self._next_segment():
                return spill, self._short(what, spill.size, length)
            segment = self._spans[0][1]
            if segment.kind is Kind.START and segment.data.startswith(b"WARC/"):
                return spill, "Content-Length runs past the end of the record"

    # -- WARC ---------------------------------------------------------------------------------

    def _parse_warc(self) -> WarcRecord:
        buf_start = self._pos
        header_end = self._read_until(_HEADER_END, 1 << 20)
        head = self._buf[buf_start : header_end - 4].decode("utf-8", "surrogateescape")
        lines = head.split("\r\n")
        version = lines[0].strip()
        headers, malformed = parse_fields(lines[1:])
        if malformed is not None:
            raise self._error(f"malformed WARC header line ({malformed[:40]!r})")
        lengths = [v for k, v in headers if k.lower() == "content-length"]
        if not lengths or not lengths[0].isdigit():
            raise self._error("WARC record without a valid Content-Length")
        if len(set(lengths)) > 1:
            raise self._error("WARC record with contradicting Content-Length fields")
        length = int(lengths[0])
        block, short = self._take_block(header_end, length, "record")
        if isinstance(block, SpilledBlock):
            return self._spilled_record(version, headers, block, short)
        if short is not None:
            return WarcRecord(0, 0, version, headers, block, error=short)
        end = header_end + length
        wrong = self._wrong_length(header_end, end)
        if wrong is None:
            self._pos = end
            framed = self._consume_trailer()
            return WarcRecord(0, 0, version, headers, block, framed=framed)
        # Content-Length is wrong: the record is delimited by the evidence, and marked.
        reason, self._pos = wrong
        record = WarcRecord(0, 0, version, headers, self._buf[header_end : self._pos])
        record.error = reason
        return record

    def _wrong_length(self, start: int, end: int) -> tuple[str, int] | None:
        """Where the block really ends, when there is positive evidence that Content-Length is
        wrong; None otherwise. Damage *after* a record is never blamed on the record."""
        self._fill(end - self._pos + 64)
        tail = self._buf[end : end + 64].lstrip(b"\r\n\0\t ")
        if not tail or tail.startswith((b"WARC/", b"filedesc://")):
            return None
        if self._codec is Codec.NONE:
            # A record that starts inside the block says the block was declared too long.
            inside = self._buf.find(b"\r\nWARC/", start, end)
            if inside >= 0:
                return "Content-Length runs past the end of the record", inside + 2
            return None
        for span_start, segment in self._spans:
            if start < span_start < end and segment.kind is Kind.START and \
                    segment.data.startswith(b"WARC/"):
                # The block ran into the next member's record: declared too long.
                return "Content-Length runs past the end of the record", span_start
        for span_start, segment in self._spans:
            span_end = span_start + len(segment.data)
            rest = self._buf[end:span_end]
            if span_start < end < span_end and segment.end >= 0 and rest.strip(b"\r\n\0\t "):
                # More of the same member follows the block: declared too short.
                return "Content-Length stops short of the end of the record", span_end
        return None

    def _spilled_record(
        self, version: str, headers: list[tuple[str, str]], spill: SpilledBlock,
        short: str | None,
    ) -> WarcRecord:
        """A record whose block went to a temporary file, checked as :meth:`_wrong_length`
        checks the others (Content-Length too long was found while spilling)."""
        record = WarcRecord(0, 0, version, headers, b"", spill=spill)
        if short is not None:
            record.error = short
            return record
        self._fill(64)
        pos = self._pos
        tail = self._buf[pos : pos + 64].lstrip(_BLANK)
        if self._codec is not Codec.NONE and tail and not tail.startswith(
                (b"WARC/", b"filedesc://")):
            for span_start, segment in self._spans:
                span_end = span_start + len(segment.data)
                rest = self._buf[pos:span_end]
                if span_start < pos < span_end and segment.end >= 0 and rest.strip(_BLANK):
                    spill.write(rest)
                    self._pos = span_end
                    record.error = "Content-Length stops short of the end of the record"
                    return record
        if self._codec is Codec.NONE and tail and not tail.startswith(
                (b"WARC/", b"filedesc://")) and self._inner >= 0:
            # A record starts inside the block: it was declared too long. The block ends there,
            # and what the file holds from there on is read again.
            self._push_back(spill, self._inner + 2)
            record.error = "Content-Length runs past the end of the record"
            return record
        record.framed = self._consume_trailer()
        return record

    def _push_back(self, spill: SpilledBlock, cut: int) -> None:
        """Cut a plain file's spilled block at ``cut`` and read the bytes after it again, as the
        next segments (they are read from the temporary file, a piece at a time)."""
        size = spill.size
        block_end, _ = self._file_offset(self._pos)
        start = block_end - (size - cut)
        rest = self._buf[self._pos :]
        spill.size = cut
        pieces = (Segment(start + offset, start + offset + len(data), data, Kind.PLAIN)
                  for offset, data in spill.region(cut, size))
        later = [Segment(block_end, block_end + len(rest), rest, Kind.PLAIN)] if rest else []
        self._segments = chain(pieces, later, self._segments)
        self._eof = False
        self._reset()
        self._fill(1)

    def _consume_trailer(self) -> bool:
        """Step over the CRLFCRLF after a block; a shorter or missing one is tolerated, and
        reported by returning False."""
        buf = self._buf
        pos = self._pos
        for expected in _HEADER_END:
            if pos < len(buf) and buf[pos] == expected:
                pos += 1
            else:
                break
        complete = pos - self._pos == len(_HEADER_END)
        self._pos = pos
        return complete

    # -- ARC ----------------------------------------------------------------------------------

    def _parse_arc_or_fail(self) -> WarcRecord:
        """A record that is not WARC: an ARC record (read by offset), or an error."""
        line_end = self._buf.find(b"\n", self._pos, self._pos + 8192)
        fields = self._buf[self._pos : line_end].split(b" ") if line_end > 0 else []
        if len(fields) >= 5 and fields[-1].strip().isdigit() and b"://" in fields[0]:
            return self._parse_arc()
        head = self._buf[self._pos : self._pos + 20]
        raise self._error(f"not a WARC or ARC record (starts with {head!r})")

    def _parse_arc(self) -> WarcRecord:
        line_end = self._read_until(b"\n", 1 << 16)
        line = self._buf[self._pos : line_end].decode("utf-8", "surrogateescape").strip()
        fields = line.split(" ")
        if len(fields) < 5 or not fields[-1].isdigit():
            raise self._error(f"malformed ARC header line ({line[:60]!r})")
        length = int(fields[-1])
        # URLs with spaces: the URL is everything before the last four fields (ARC v1).
        url = " ".join(fields[:-4]) if len(fields) > 5 else fields[0]
        ip, date, mime = fields[-4], fields[-3], fields[-2]
        block, short = self._take_block(line_end, length, "ARC record")
        record = _arc_to_warc(url, ip, date, mime, block)
        if short is None and not isinstance(block, SpilledBlock):
            self._pos = line_end + length
        record.error = short
        return record


def _blank_end(buf: bytes, pos: int) -> int:
    """Where the run of blank bytes at ``buf[pos:]`` ends (``len(buf)``: it does not)."""
    found = _NOT_BLANK.search(buf, pos, pos + 4096)  # the usual run: a few line ends
    if found is not None:
        return found.start()
    # A long run: deleting the blank bytes is ten times faster than searching past them.
    if not (buf[pos:] if pos else buf).translate(None, _BLANK):
        return len(buf)
    found = _NOT_BLANK.search(buf, pos)
    return found.start() if found is not None else len(buf)


def _find_inner(tail: bytes, buf: bytes, start: int, end: int, written: int) -> int:
    """Position in the block of the first ``\\r\\nWARC/`` in ``buf[start:end]`` (the block's
    bytes from ``written`` on), or across ``tail`` (its bytes just before); -1 when none."""
    joined = tail + bytes(buf[start : min(end, start + 6)])
    found = joined.find(b"\r\nWARC/")
    if found >= 0:
        return written - len(tail) + found
    found = buf.find(b"\r\nWARC/", start, end)
    return written + found - start if found >= 0 else -1


def _damaged(offset: int, length: int, reason: str) -> WarcRecord:
    return WarcRecord(offset, max(length, 0), "", [], b"", False, reason)


def _arc_to_warc(
    url: str, ip: str, date: str, mime: str, block: bytes | SpilledBlock
) -> WarcRecord:
    """Present an ARC record as the WARC record it would be (ARC is read, written as WARC)."""
    import hashlib
    import uuid

    when = date.ljust(14, "0")
    iso = f"{when[0:4]}-{when[4:6]}-{when[6:8]}T{when[8:10]}:{when[10:12]}:{when[12:14]}Z"
    if isinstance(block, SpilledBlock):
        sha1 = hashlib.sha1()
        for chunk in block.chunks():
            sha1.update(chunk)
        digest, size, data, spill = sha1.hexdigest(), block.size, b"", block
    else:
        digest, size, data, spill = hashlib.sha1(block).hexdigest(), len(block), block, None
    record_id = uuid.uuid5(uuid.NAMESPACE_URL, f"arc:{url}:{date}:{digest}")
    if url.startswith("filedesc://"):
        rec_type, content_type = "warcinfo", "text/plain"
    elif url.startswith(("http://", "https://")):
        rec_type, content_type = "response", "application/http; msgtype=response"
    else:
        rec_type, content_type = "resource", mime or "application/octet-stream"
    headers = [
        ("WARC-Type", rec_type),
        ("WARC-Record-ID", f"<urn:uuid:{record_id}>"),
        ("WARC-Date", iso),
    ]
    if rec_type != "warcinfo":
        headers.append(("WARC-Target-URI", url))
        if ip and ip != "-":
            headers.append(("WARC-IP-Address", ip))
    headers += [("Content-Type", content_type), ("Content-Length", str(size))]
    return WarcRecord(0, 0, "WARC/1.0", headers, data, converted=True, spill=spill)
