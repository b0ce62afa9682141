"""ARC, the Internet Archive's format before WARC: header lines, and each record as the WARC
record it would be (ARC is read, and written out as WARC).

An ARC record is one line, ``URL IP-ADDRESS DATE CONTENT-TYPE LENGTH``, then ``LENGTH`` bytes and
a newline. Header lines are read at least as leniently as warcio reads them: the URL may hold
spaces (the other four fields are the last four), a length that is no length (``-1``, ``abc``)
does not lose the record (it runs to the next header line), and a date of more or fewer than 14
digits is cut or padded. Each such repair is named in :attr:`ArcHeader.repairs`, to be counted.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from dataclasses import dataclass

from .spill import SpilledBlock

__all__ = ["ARC_LINE_BYTES", "ArcHeader", "arc_warc_headers", "is_arc_header", "parse_arc_header"]

# No ARC header line is longer: a longer line is not one (URLs of real crawls stay under 8 KiB).
ARC_LINE_BYTES = 1 << 16
_DATE_DIGITS = 14
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:\S")
# An IPv4 or IPv6 address, or "-" (no address): what tells a header line inside a block from text.
_ADDRESS = re.compile(r"[0-9A-Fa-f.:]+|-")


@dataclass(frozen=True, slots=True)
class ArcHeader:
    """One ARC header line, repaired where it could be."""

    url: str
    ip: str
    date: str  # as written in the line
    mime: str
    length: int | None  # None: the line's length is no length; the block runs to the next header
    repairs: tuple[str, ...] = ()  # what was wrong in the line and mended, one reason each

    def warc_date(self, fallback: str | None) -> tuple[str | None, str | None]:
        """The record's WARC-Date, and the repair it took (None when the date is 14 digits).

        A date of 4 to 13 digits is padded with zeros, a longer one cut to 14 digits (warcio does
        the same); one that is no date (``null``) takes ``fallback``, the date of the record
        before it (None without one: the header is then unusable).

        >>> date, repair = ArcHeader("u", "-", "200001010000000000", "m", 0).warc_date(None)
        >>> date, repair.split(" (")[0]
        ('2000-01-01T00:00:00Z', 'ARC header with a date that is not 14 digits')
        """
        date = self.date
        if date.isdigit() and len(date) >= 4:
            when = date[:_DATE_DIGITS].ljust(_DATE_DIGITS, "0")
            iso = (f"{when[0:4]}-{when[4:6]}-{when[6:8]}T{when[8:10]}:{when[10:12]}:"
                   f"{when[12:14]}Z")
            if len(date) == _DATE_DIGITS:
                return iso, None
            return iso, f"ARC header with a date that is not 14 digits ({date[:40]!r})"
        if fallback is None:
            return None, None
        return fallback, f"ARC header with an invalid date ({date[:40]!r})"


def parse_arc_header(line: str, *, strict: bool = False) -> ArcHeader | None:
    """The header in an ARC header line (without its newline), or None when it is none.

    ``strict``: the line was found inside other bytes, not where a record starts: it must look
    like a header (a URL with a scheme, then an IP address or ``-``) even when it ends in a length.

    >>> parse_arc_header("http://a.example/x y 1.2.3.4 20000101000000 text/html abc").url
    'http://a.example/x y'
    >>> parse_arc_header("http://a.example/ 1.2.3.4 20000101000000 text/html -1").repairs
    ("ARC header with an invalid length ('-1')",)
    """
    fields = line.split(" ")
    if len(fields) < 5:
        return None
    url = " ".join(fields[:-4])
    ip, date, mime, length = fields[-4:]
    # Where a record starts, a line ending in a length is a header; elsewhere, and for a line
    # whose length is no length, the URL and the address must look like a header's too.
    looks = _SCHEME.match(url) is not None and _ADDRESS.fullmatch(ip) is not None
    if not url.strip() or not (looks or (not strict and length.isdigit())):
        return None
    if length.isdigit():
        return ArcHeader(url, ip, date, mime, int(length))
    return ArcHeader(url, ip, date, mime, None,
                     (f"ARC header with an invalid length ({length[:40]!r})",))


def is_arc_header(data: bytes, *, strict: bool = True) -> bool:
    """Whether ``data`` starts with a whole ARC header line (``strict``: see
    :func:`parse_arc_header`)."""
    end = data.find(b"\n", 0, ARC_LINE_BYTES)
    if end < 0:
        return False
    line = data[:end].decode("utf-8", "surrogateescape").strip()
    return parse_arc_header(line, strict=strict) is not None


def arc_warc_headers(
    header: ArcHeader, date: str, block: bytes | SpilledBlock
) -> list[tuple[str, str]]:
    """The WARC header fields of the record an ARC record would be (``date``: its WARC-Date)."""
    if isinstance(block, SpilledBlock):
        sha1 = hashlib.sha1()
        for chunk in block.chunks():
            sha1.update(chunk)
        digest, size = sha1.hexdigest(), block.size
    else:
        digest, size = hashlib.sha1(block).hexdigest(), len(block)
    url = header.url
    record_id = uuid.uuid5(uuid.NAMESPACE_URL, f"arc:{url}:{header.date}:{digest}")
    if url.startswith("filedesc://"):
        rec_type, content_type = "warcinfo", "text/plain"
    elif url.startswith(("http://", "https://")):
        rec_type, content_type = "response", "application/http; msgtype=response"
    else:
        rec_type, content_type = "resource", header.mime or "application/octet-stream"
    headers = [
        ("WARC-Type", rec_type),
        ("WARC-Record-ID", f"<urn:uuid:{record_id}>"),
        ("WARC-Date", date),
    ]
    if rec_type != "warcinfo":
        headers.append(("WARC-Target-URI", url))
        if header.ip and header.ip != "-":
            headers.append(("WARC-IP-Address", header.ip))
    headers += [("Content-Type", content_type), ("Content-Length", str(size))]
    return headers
