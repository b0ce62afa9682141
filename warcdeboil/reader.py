"""Streaming WARC (and ARC) reader that reports each record's exact offset and length.

``iter_records(path)`` yields :class:`WarcRecord` objects in file order. The record keeps its
WARC header fields in their original order and its block as stored, so a record that warcdeboil
does not change is written back byte for byte. For compressed files a record's ``offset`` and
``length`` are those of its gzip member(s) or zstd frame(s): exactly what
:func:`read_record_at` seeks back to.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import BinaryIO

from .compression import Codec, Segment, detect_codec, iter_segments
from .errors import InputError, RandomAccessError, RecordError

__all__ = ["WarcRecord", "iter_records", "open_archive", "read_record_at"]

log = logging.getLogger(__name__)

_HEADER_END = b"\r\n\r\n"


@dataclass(slots=True)
class WarcRecord:
    """One record: WARC header fields in file order and the block as stored.

    ``addressable`` is false when the record does not start on its own gzip member or zstd frame,
    so it cannot be read back by offset.
    """

    offset: int
    length: int
    version: str
    headers: list[tuple[str, str]]
    block: bytes
    addressable: bool = True
    _index: dict[str, str] | None = field(default=None, repr=False)

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


def open_archive(path: str | os.PathLike[str]) -> tuple[BinaryIO, Codec]:
    """Open ``path`` for reading and tell its codec from its first bytes."""
    try:
        fh = open(path, "rb")  # noqa: SIM115 - the caller closes it
    except OSError as exc:
        raise InputError(f"{os.fspath(path)}: cannot open ({exc.strerror})") from exc
    head = fh.read(8)
    fh.seek(0)
    return fh, detect_codec(head)


def iter_records(path: str | os.PathLike[str]) -> Iterator[WarcRecord]:
    """Yield every record of a WARC or ARC file, in order, with offset and length."""
    name = os.fspath(path)
    fh, codec = open_archive(name)
    with fh:
        yield from _RecordParser(iter_segments(fh, codec, path=name), codec, name)


def read_record_at(path: str | os.PathLike[str], offset: int, length: int) -> WarcRecord:
    """Read the one record stored at ``offset`` (``length`` bytes) of ``path``."""
    name = os.fspath(path)
    fh, codec = open_archive(name)
    with fh:
        fh.seek(offset)
        raw = fh.read(length)
    if codec is Codec.ZSTD:
        from .zstdio import decompress_range, read_dictionary

        with open(name, "rb") as dfh:
            dictionary = read_dictionary(dfh)
            data = decompress_range(dfh, offset, length, dictionary, path=name)
        segments: list[Segment] = [Segment(offset, length, data, True)]
    else:
        import io

        segments = list(iter_segments(io.BytesIO(raw), codec, path=name))
        segments = [Segment(s.offset + offset, s.length, s.data, s.boundary) for s in segments]
    for record in _RecordParser(iter(segments), codec, name):
        return record
    raise RandomAccessError(f"{name}@{offset}: no record at this offset")


class _RecordParser:
    """Parses records out of a stream of decompressed segments."""

    def __init__(self, segments: Iterator[Segment], codec: Codec, path: str) -> None:
        self._segments = segments
        self._codec = codec
        self._path = path
        self._buf = b""
        self._pos = 0
        # (start index in _buf, segment) for every segment whose data is in _buf.
        self._spans: list[tuple[int, Segment]] = []
        self._eof = False
        self._arc = False  # set once an ARC file header has been seen

    def __iter__(self) -> Iterator[WarcRecord]:
        while True:
            self._skip_blank()
            if not self._fill(5) and not self._fill(1):
                return
            start = self._pos
            if self._buf.startswith(b"WARC/", start):
                record = self._parse_warc()
            elif self._arc or self._buf.startswith(b"filedesc://", start):
                self._arc = True
                record = self._parse_arc()
            else:
                record = self._parse_arc_or_fail()
            offset, addressable = self._file_offset(start, True)
            end, _ = self._file_offset(self._pos, False)
            record.offset = offset
            record.length = end - offset
            record.addressable = addressable
            yield record
            self._compact()

    # -- buffer management -------------------------------------------------------------------

    def _fill(self, need: int) -> bool:
        """Make at least ``need`` bytes available after ``_pos``; False at end of input."""
        while len(self._buf) - self._pos < need:
            if self._eof:
                return False
            try:
                segment = next(self._segments)
            except StopIteration:
                self._eof = True
                return False
            self._spans.append((len(self._buf), segment))
            self._buf = self._buf + segment.data if self._buf else segment.data
        return True

    def _compact(self) -> None:
        if self._pos == 0:
            return
        spans = self._spans
        keep = 0
        # Keep the span containing _pos and everything after it.
        for i, (start, segment) in enumerate(spans):
            if start + len(segment.data) > self._pos or (
                start + len(segment.data) == self._pos and i == len(spans) - 1
            ):
                keep = i
                break
        else:
            keep = len(spans)
        spans = spans[keep:]
        cut = spans[0][0] if spans else self._pos
        self._buf = self._buf[cut:]
        self._pos -= cut
        self._spans = [(start - cut, segment) for start, segment in spans]

    def _file_offset(self, pos: int, at_start: bool) -> tuple[int, bool]:
        """Map a buffer position to a file offset; tell whether it is a segment boundary."""
        for start, segment in reversed(self._spans):
            if start <= pos:
                inside = pos - start
                if not segment.boundary:
                    return segment.offset + inside, True
                if inside == 0:
                    return segment.offset, True
                if inside >= len(segment.data):
                    return segment.offset + segment.length, True
                return (segment.offset if at_start else segment.offset + segment.length), False
        return 0, pos == 0

    def _skip_blank(self) -> None:
        while self._fill(1):
            buf = self._buf
            pos = self._pos
            end = len(buf)
            while pos < end and buf[pos] in b"\r\n\t \0":
                pos += 1
            self._pos = pos
            if pos < end:
                return

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
        offset, _ = self._file_offset(self._pos, True)
        return RecordError(reason, path=self._path, offset=offset)

    # -- WARC ---------------------------------------------------------------------------------

    def _parse_warc(self) -> WarcRecord:
        buf_start = self._pos
        header_end = self._read_until(_HEADER_END, 1 << 20)
        head = self._buf[buf_start : header_end - 4].decode("utf-8", "surrogateescape")
        lines = head.split("\r\n")
        version = lines[0].strip()
        if not version.startswith("WARC/"):
            raise self._error(f"not a WARC record (starts with {version[:20]!r})")
        headers: list[tuple[str, str]] = []
        for line in lines[1:]:
            if line[:1] in (" ", "\t") and headers:
                key, value = headers[-1]
                headers[-1] = (key, f"{value} {line.strip()}")
                continue
            key, sep, value = line.partition(":")
            if not sep:
                raise self._error(f"malformed WARC header line {line[:40]!r}")
            headers.append((key.strip(), value.strip()))
        length_text = next((v for k, v in headers if k.lower() == "content-length"), None)
        if length_text is None or not length_text.isdigit():
            raise self._error("WARC record without a valid Content-Length")
        length = int(length_text)
        self._pos = header_end
        if not self._fill(length):
            raise self._error(f"record is truncated (Content-Length {length})")
        block = self._buf[header_end : header_end + length]
        self._pos = header_end + length
        self._consume_trailer()
        return WarcRecord(0, 0, version, headers, block)

    def _consume_trailer(self) -> None:
        self._fill(4)
        buf = self._buf
        pos = self._pos
        for expected in _HEADER_END:
            if pos < len(buf) and buf[pos] == expected:
                pos += 1
            else:
                break
        self._pos = pos

    # -- ARC ----------------------------------------------------------------------------------

    def _parse_arc_or_fail(self) -> WarcRecord:
        """A record that is not WARC: an ARC record (read by offset), or an error."""
        line_end = self._buf.find(b"\n", self._pos, self._pos + 8192)
        fields = self._buf[self._pos : line_end].split(b" ") if line_end > 0 else []
        if len(fields) >= 5 and fields[-1].strip().isdigit() and b"://" in fields[0]:
            return self._parse_arc()
        return self._parse_warc()  # raises, saying what the bytes are

    def _parse_arc(self) -> WarcRecord:
        line_end = self._read_until(b"\n", 1 << 16)
        line = self._buf[self._pos : line_end].decode("utf-8", "surrogateescape").strip()
        fields = line.split(" ")
        if len(fields) < 5 or not fields[-1].isdigit():
            raise self._error(f"malformed ARC header line {line[:60]!r}")
        length = int(fields[-1])
        # URLs with spaces: the URL is everything before the last four fields (v1) .
        url = " ".join(fields[:-4]) if len(fields) > 5 else fields[0]
        ip, date, mime = fields[-4], fields[-3], fields[-2]
        self._pos = line_end
        if not self._fill(length):
            raise self._error(f"ARC record is truncated (length {length})")
        block = self._buf[line_end : line_end + length]
        self._pos = line_end + length
        return _arc_to_warc(url, ip, date, mime, block)


def _arc_to_warc(url: str, ip: str, date: str, mime: str, block: bytes) -> WarcRecord:
    """Present an ARC record as the WARC record it would be (ARC is read, written as WARC)."""
    import hashlib
    import uuid

    when = date.ljust(14, "0")
    iso = f"{when[0:4]}-{when[4:6]}-{when[6:8]}T{when[8:10]}:{when[10:12]}:{when[12:14]}Z"
    digest = hashlib.sha1(block).hexdigest()
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
    headers += [("Content-Type", content_type), ("Content-Length", str(len(block)))]
    return WarcRecord(0, 0, "WARC/1.0", headers, block)
