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

from .arc import ARC_LINE_BYTES, arc_warc_headers, is_arc_header, parse_arc_header
from .boundary import HEADER_PROBE, OVERLAP, find_header, find_header_in_spill
from .compression import Codec, Kind, Segment, detect_codec, iter_segments
from .fields import parse_fields
from .remote import is_remote, local_path, open_remote
from .spill import SpilledBlock

__all__ = [
    "ARC_OVERLONG",
    "OVERLONG",
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
# The problems of a block declared longer than it is: the next record starts inside it.
OVERLONG = "Content-Length runs past the end of the record"
ARC_OVERLONG = "ARC length runs past the end of the record"
# ... and shorter: more of the record's own gzip member or zstd frame follows it.
_SHORT = "Content-Length stops short of the end of the record"


@dataclass(slots=True)
class WarcRecord:
    """One record: WARC header fields in file order and the block as stored.

    ``addressable`` is false when the record does not start on its own gzip member or zstd frame,
    so it cannot be read back by offset. A block longer than :data:`SPILL_BYTES` is in ``spill``
    (a temporary file), not in memory: read it with :meth:`iter_block` and :meth:`block_head`
    (``block`` reads it whole). ``error`` says why a record (or stretch) could not be read as
    declared; ``repairs``, what was mended around a record read whole (an ARC date, a gzip
    member that lost its trailer): both are problems to count.
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
    # What was wrong around a record read whole, and mended (an ARC date, a gzip member cut
    # after the record): each is a problem to count, but the record is used as it is.
    repairs: tuple[str, ...] = ()

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
    member or zstd frame, or, in a plain file, at the next line that starts a WARC record (an ARC
    header line in an ARC file). A declared length is checked against what follows it (see
    :mod:`.boundary`): a record header inside a block declared too long ends it.
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
        self._arc_date: str | None = None  # the last ARC record's date, for one that has none

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
            if self._damage is not None and self._read_to_damage():
                # The record is whole, and the damage after it (a file missing the last bytes
                # of its last member) is in its member: one problem, said of this record.
                record.repairs += (self._damage.damage or "damaged",)
                record.offset, record.addressable = offset, start_ok
                record.length = self._damage.end - offset if start_ok else 0
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

    def _read_to_damage(self) -> bool:
        """Whether the record just read ends in what was read of a damaged member (or frame),
        and nothing but blank bytes of it is left."""
        damage = self._damage
        if damage is None or not damage.data or not self._spans:
            return False
        start, last = self._spans[-1]
        if last.data is not damage.data or start >= self._pos:
            return False
        pos = self._pos
        if pos < len(self._buf) and self._buf[pos] in _BLANK:
            pos = self._trailing_blank(pos)
        return pos >= len(self._buf)

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
        """Buffer index of the next line starting with ``WARC/`` (in an ARC file, of the next
        ARC header line), or the end of the input; what is searched in vain leaves the buffer."""
        self._pos = since
        end = False
        while True:
            searched = len(self._buf)  # (checking a header may read more: searched at the end)
            if self._arc:
                found = self._header_in(self._pos, searched)
                if found >= 0:
                    return found
            else:
                found = self._buf.find(b"\nWARC/", self._pos)
                if found >= 0:
                    return found + 1
            if end:
                return len(self._buf)
            self._pos = max(self._pos, searched - OVERLAP)
            self._compact()
            end = not self._fill(len(self._buf) - self._pos + 1)

    def _record_ahead(self, pos: int) -> int:
        """Where, after ``pos``, the first buffered member or frame that starts with a WARC
        record begins (the end of the buffer when none does; plain files have no members)."""
        if self._codec is not Codec.NONE:
            for start, segment in self._spans:
                if start > pos and segment.kind is Kind.START and \
                        self._starts_record(segment.data):
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
        while True:
            buf, pos = self._buf, self._pos
            take = min(self._record_ahead(pos) - pos, remaining)
            if take:
                spill.write(memoryview(buf)[pos : pos + take])
                self._pos = pos + take
                remaining -= take
            if not remaining:
                return spill, None
            if self._pos < len(self._buf):  # stopped at a member that starts with a record
                return spill, self._overlong
            if not self._next_segment():
                return spill, self._short(what, spill.size, length)
            segment = self._spans[0][1]
            if segment.kind is Kind.START and self._starts_record(segment.data):
                return spill, self._overlong

    # -- where a block ends ------------------------------------------------------------------

    @property
    def _overlong(self) -> str:
        return ARC_OVERLONG if self._arc else OVERLONG

    def _starts_record(self, data: bytes) -> bool:
        """Whether ``data`` starts with a record header (an ARC header line in an ARC file)."""
        if data.startswith((b"WARC/", b"filedesc://")):
            return True
        return self._arc and is_arc_header(data, strict=False)

    def _starts_next(self, pos: int) -> bool:
        """Whether what follows ``pos`` (after blank bytes) is a record, or the end of the input:
        a block declared to end at ``pos`` checks out."""
        self._fill(pos - self._pos + (ARC_LINE_BYTES if self._arc else 64))
        window = self._buf[pos : pos + 64]
        tail = window.lstrip(_BLANK)
        if not tail:
            return True
        if not self._arc:
            return tail.startswith((b"WARC/", b"filedesc://"))
        begin = pos + len(window) - len(tail)
        line_end = self._buf.find(b"\n", begin, begin + ARC_LINE_BYTES)
        return self._starts_record(self._buf[begin : line_end + 1] if line_end >= 0 else tail)

    def _header_in(self, lo: int, hi: int) -> int:
        """Where in the buffer the first record header starts whose line begins at a newline in
        ``_buf[lo:hi]`` (-1 when none does), checked with as many bytes after it as it needs."""

        def probe(at: int) -> bytes:
            self._fill(at + HEADER_PROBE - self._pos)
            return self._buf[at : at + HEADER_PROBE]

        return find_header(self._buf, max(lo, 0), hi, self._arc, probe)

    def _block_end(self, start: int, at: int) -> int:
        """Where a block cut at ``at`` (the next header, or member) ends: before the trailer
        just before ``at`` (CRLFCRLF; an ARC record's newline), when there is one."""
        trailer = b"\n" if self._arc else _HEADER_END
        end = at - len(trailer)
        return end if end >= start and self._buf.startswith(trailer, end) else at

    def _delimit(
        self, start: int, length: int, what: str
    ) -> tuple[bytes | SpilledBlock, str | None, bool]:
        """The block at ``start`` declared ``length`` bytes long, as the evidence delimits it;
        why it is not as declared (None when it is); whether a whole trailer followed it. Leaves
        ``_pos`` where the next record may start (blank bytes aside)."""
        block, short = self._take_block(start, length, what)
        if isinstance(block, SpilledBlock):
            return self._delimit_spilled(block, short)
        if short is None:
            wrong = self._wrong_length(start, start + length)
            if wrong is None:
                self._pos = start + length
                return block, None, True if self._arc else self._consume_trailer()
        else:
            # The input ends (or breaks) inside the block: a record starting in it ends it.
            wrong = self._record_inside(start, len(self._buf))
            if wrong is None:
                return block, short, True
        reason, end = wrong
        self._pos = end
        return self._buf[start:end], reason, True

    def _wrong_length(self, start: int, end: int) -> tuple[str, int] | None:
        """The problem, and where the block really ends, when what follows the declared ``end``
        is not the next record; None when it is, or when nothing says where else the block ends
        (damage *after* a record is never blamed on the record)."""
        if self._starts_next(end):
            return None
        inside = self._record_inside(start, end)
        if inside is not None or self._codec is Codec.NONE:
            return inside
        for span_start, segment in self._spans:
            span_end = span_start + len(segment.data)
            if span_start < end < span_end and segment.end >= 0 and \
                    self._buf[end:span_end].strip(_BLANK):
                # More of the same member follows the block: declared too short. The block goes
                # on to the end of the member, or to a record in it (a member of several).
                at = self._header_in(end, span_end)
                return _SHORT, self._block_end(start, at if at >= 0 else span_end)
        return None

    def _record_inside(self, start: int, end: int) -> tuple[str, int] | None:
        """(problem, where the block ends) when a record starts inside ``_buf[start:end]``: a
        gzip member or zstd frame that starts with one, else a record header in the bytes."""
        if self._codec is not Codec.NONE:
            for span_start, segment in self._spans:
                if start < span_start < end and segment.kind is Kind.START and \
                        self._starts_record(segment.data):
                    return self._overlong, self._block_end(start, span_start)
        at = self._header_in(start - 1, end)
        return None if at < 0 else (self._overlong, self._block_end(start, at))

    def _delimit_spilled(
        self, spill: SpilledBlock, short: str | None
    ) -> tuple[SpilledBlock, str | None, bool]:
        """A block spilled to disk, delimited as :meth:`_delimit` delimits a held one: the same
        checks, in the same order, a piece of the temporary file at a time."""
        if short == self._overlong:  # the spill stopped at a member that starts with a record
            self._drop_trailer(spill, spill.size)
            return spill, short, True
        if short is None and self._starts_next(self._pos):
            return spill, None, True if self._arc else self._consume_trailer()
        at = find_header_in_spill(spill, self._arc, self._buf[self._pos : self._pos + HEADER_PROBE])
        if at >= 0:
            # A record starts inside the block: it was declared too long. The block ends there,
            # and what the file holds from there on is read again.
            self._push_back(spill, at)
            self._drop_trailer(spill, at)
            return spill, self._overlong, True
        if short is not None:
            return spill, short, True
        if self._codec is not Codec.NONE:
            pos = self._pos
            for span_start, segment in self._spans:
                span_end = span_start + len(segment.data)
                if span_start < pos < span_end and segment.end >= 0 and \
                        self._buf[pos:span_end].strip(_BLANK):
                    found = self._header_in(pos, span_end)
                    end = self._block_end(pos, found if found >= 0 else span_end)
                    spill.write(memoryview(self._buf)[pos:end])
                    self._pos = end
                    return spill, _SHORT, True
        return spill, None, True if self._arc else self._consume_trailer()

    def _drop_trailer(self, spill: SpilledBlock, at: int) -> None:
        """End a spilled block cut at ``at`` before the trailer just before it, as
        :meth:`_block_end` does for a held one."""
        trailer = b"\n" if self._arc else _HEADER_END
        end = at - len(trailer)
        spill.size = end if end >= 0 and spill.read_at(end, len(trailer)) == trailer else at

    def _push_back(self, spill: SpilledBlock, cut: int) -> None:
        """Cut a spilled block at ``cut`` and read the bytes after it again, as the next segments
        (read from the temporary file, a piece at a time). In a plain file they keep their
        offsets; in a compressed one they are inside the member the block ended in, which the
        records found there share (they cannot be read by offset)."""
        size = spill.size
        rest = self._buf[self._pos :]
        spill.size = cut
        pieces: Iterator[Segment]
        if self._codec is Codec.NONE:
            block_end, _ = self._file_offset(self._pos)
            start = block_end - (size - cut)
            pieces = (Segment(start + offset, start + offset + len(data), data, Kind.PLAIN)
                      for offset, data in spill.region(cut, size))
            later = [Segment(block_end, block_end + len(rest), rest, Kind.PLAIN)] if rest else []
        else:
            member = self._segment_at(self._pos)
            pieces = (Segment(member.offset, -1, data, Kind.INNER)
                      for _, data in spill.region(cut, size))
            later = [Segment(member.offset, member.end, rest, Kind.INNER)] if rest else []
        if self._damage is not None:
            # The damage that ended the block comes again after the bytes read again.
            damage = self._damage
            later.append(Segment(damage.offset, damage.end, b"", damage.kind, damage.damage))
            self._damage = None
        self._segments = chain(pieces, later, self._segments)
        self._eof = False
        self._reset()
        self._fill(1)

    def _segment_at(self, pos: int) -> Segment:
        """The buffered segment that holds buffer position ``pos`` (the last one at the end)."""
        for start, segment in reversed(self._spans):
            if start <= pos:
                return segment
        return self._spans[0][1]

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
        block, error, framed = self._delimit(header_end, int(lengths[0]), "record")
        if isinstance(block, SpilledBlock):
            return WarcRecord(0, 0, version, headers, b"", error=error, framed=framed,
                              spill=block)
        return WarcRecord(0, 0, version, headers, block, error=error, framed=framed)

    # -- ARC ----------------------------------------------------------------------------------

    def _parse_arc_or_fail(self) -> WarcRecord:
        """A record that is not WARC: an ARC record (read by offset), or an error."""
        line_end = self._buf.find(b"\n", self._pos, self._pos + 8192)
        line = self._buf[self._pos : line_end] if line_end > 0 else b""
        header = parse_arc_header(line.decode("utf-8", "surrogateescape").strip())
        if header is not None and b"://" in line.split(b" ", 1)[0]:
            # An ARC record in a file without an ARC file header: read as one (its block is
            # checked against ARC headers), the file not taken for ARC on its word.
            self._arc = True
            try:
                return self._parse_arc()
            finally:
                self._arc = False
        head = self._buf[self._pos : self._pos + 20]
        raise self._error(f"not a WARC or ARC record (starts with {head!r})")

    def _parse_arc(self) -> WarcRecord:
        line_end = self._read_until(b"\n", ARC_LINE_BYTES)
        line = self._buf[self._pos : line_end].decode("utf-8", "surrogateescape").strip()
        header = parse_arc_header(line)
        date, repaired = (None, None) if header is None else header.warc_date(self._arc_date)
        if header is None or date is None:
            raise self._error(f"malformed ARC header line ({line[:60]!r})")
        self._arc_date = date
        error = None
        if header.length is None:
            block = self._block_to_header(line_end)
        else:
            block, error, _ = self._delimit(line_end, header.length, "ARC record")
        spill = block if isinstance(block, SpilledBlock) else None
        record = WarcRecord(0, 0, "WARC/1.0", arc_warc_headers(header, date, block),
                            b"" if spill is not None else cast(bytes, block), converted=True,
                            spill=spill, error=error)
        record.repairs = header.repairs + ((repaired,) if repaired else ())
        return record

    def _block_to_header(self, start: int) -> bytes | SpilledBlock:
        """The block of an ARC record whose length is no length: up to the next ARC header line,
        the next member that starts with a record, or the end of the input. It is searched as it
        is read, held in memory, or spilled past the spill size (one pass however long)."""
        self._pos = start
        spill: SpilledBlock | None = None
        lo = start - 1  # the header line's own newline: the next header may follow at once
        end_of_input = False
        while True:
            hi = self._record_ahead(self._pos)
            member = hi < len(self._buf)  # (checking a header may read more: searched later)
            at = self._header_in(lo, hi)
            if at >= 0 or member or end_of_input:
                break
            # None in what is read: read on, keeping the last bytes (a header may start there).
            keep = max(self._pos, hi - OVERLAP)
            if spill is None and hi - start > self._spill_at:
                spill = SpilledBlock()
                spill.write(memoryview(self._buf)[start:keep])
            elif spill is not None:
                spill.write(memoryview(self._buf)[self._pos : keep])
            lo = keep
            if spill is not None:
                self._pos = keep
                self._compact()
                lo = self._pos
            end_of_input = not self._fill(len(self._buf) - self._pos + 1)
        first = start if spill is None else self._pos
        end = self._block_end(first, at if at >= 0 else hi)
        if spill is None:
            self._pos = end
            return self._buf[start:end]
        spill.write(memoryview(self._buf)[self._pos : end])
        self._pos = end
        return spill


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


def _damaged(offset: int, length: int, reason: str) -> WarcRecord:
    return WarcRecord(offset, max(length, 0), "", [], b"", False, reason)
