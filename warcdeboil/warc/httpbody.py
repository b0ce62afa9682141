"""HTTP messages in WARC records: headers, transfer and content codings, HTML sniffing, charsets.

A ``response`` record's block is an HTTP response as it crossed the wire. Before a page can be
parsed we undo chunked transfer-encoding and gzip/deflate/br content-encoding (with a size limit:
a decompression bomb is refused, not inflated); :mod:`warcdeboil.page.charset` then decides how
the bytes read.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

from warcdeboil.errors import PayloadError

from .fields import parse_fields

__all__ = [
    "HttpResponse",
    "decode_body",
    "is_html",
    "parse_http_response",
]

_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
# Labels that promise nothing about the content: sniff the body instead.
_VAGUE_TYPES = frozenset(
    {"", "application/octet-stream", "binary/octet-stream", "unknown/unknown", "text/plain",
     "application/unknown", "*/*"}
)
_SNIFF_PREFIXES = (
    b"<!doctype html", b"<html", b"<head", b"<body", b"<title", b"<script", b"<div", b"<meta",
    b"<!--", b"<p>", b"<table", b"<iframe", b"<h1", b"<a ", b"<style", b"<br", b"<font", b"<b>",
)


@dataclass(slots=True)
class HttpResponse:
    """An HTTP response split into its parts; ``body`` is the entity as stored (still encoded)."""

    status_line: str
    status: int
    headers: list[tuple[str, str]]
    body: bytes

    def get(self, name: str) -> str | None:
        lower = name.lower()
        for key, value in self.headers:
            if key.lower() == lower:
                return value
        return None

    @property
    def content_type(self) -> str:
        return (self.get("Content-Type") or "").strip()


def parse_http_response(block: bytes) -> HttpResponse | None:
    """Split a response record's block into status, headers and body; None when not HTTP."""
    if not block.startswith(b"HTTP/"):
        return None
    end = block.find(b"\r\n\r\n")
    sep = 4
    if end < 0:
        end = block.find(b"\n\n")
        sep = 2
        if end < 0:
            return None
    head = block[:end].decode("iso-8859-1")
    lines = head.replace("\r\n", "\n").split("\n")
    status_line = lines[0]
    parts = status_line.split(None, 2)
    status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
    headers, _ = parse_fields(lines[1:])  # a stray line in HTTP headers is ignored, as browsers do
    return HttpResponse(status_line, status, headers, block[end + sep :])


def media_type(content_type: str) -> str:
    """``'text/html; charset=utf-8'`` → ``'text/html'``.

    >>> media_type(' Text/HTML; charset=UTF-8')
    'text/html'
    """
    return content_type.split(";", 1)[0].strip().lower()


def is_html(content_type: str, body: bytes) -> bool:
    """True when the payload is HTML by its declared type, or by sniffing a vague or absent one.

    >>> is_html('text/html', b'')
    True
    >>> is_html('', b'  <!DOCTYPE html><html>')
    True
    >>> is_html('image/png', b'<html>')
    False
    """
    kind = media_type(content_type)
    if kind in _HTML_TYPES:
        return True
    if kind not in _VAGUE_TYPES:
        return False
    head = body[:512].lstrip(b"\xef\xbb\xbf \t\r\n\f").lower()
    return head.startswith(_SNIFF_PREFIXES)


def decode_body(response: HttpResponse, *, max_size: int) -> bytes:
    """Undo chunked transfer-encoding and gzip/deflate/br content-encoding.

    A header that claims gzip on a body that is not gzip leaves the body as it is. Raises
    :class:`PayloadError` when a real encoding is broken or would inflate past ``max_size``.
    """
    body = response.body
    transfer = (response.get("Transfer-Encoding") or "").lower()
    if "chunked" in transfer:
        body = dechunk(body)
    codings = [c.strip().lower() for c in (response.get("Content-Encoding") or "").split(",")]
    for coding in reversed(codings):
        if coding in ("", "identity", "none"):
            continue
        body = _undo_coding(coding, body, max_size)
    if len(body) > max_size:
        raise PayloadError(f"payload is too large ({len(body)} bytes, limit {max_size})")
    return body


def _undo_coding(coding: str, body: bytes, max_size: int) -> bytes:
    if coding in ("gzip", "x-gzip"):
        if not body.startswith(b"\x1f\x8b"):
            return body  # the header lies: the body was stored decoded
        return _inflate(body, 31, max_size, coding)
    if coding == "deflate":
        if body[:1] in (b"<", b" ", b"\n", b"\r", b"\t"):
            return body
        try:
            return _inflate(body, 15, max_size, coding)
        except PayloadError:
            return _inflate(body, -15, max_size, coding)  # raw deflate, as some servers send
    if coding == "br":
        import brotli

        try:
            decoder = brotli.Decompressor()
            out = decoder.process(body, output_buffer_limit=max_size + 1)
        except brotli.error as exc:
            if body.lstrip()[:1] == b"<":
                return body
            raise PayloadError(f"broken brotli body ({exc})") from exc
        except TypeError:  # older brotli without output_buffer_limit
            out = brotli.decompress(body)
        if len(out) > max_size:
            raise PayloadError(f"brotli body inflates past the limit ({max_size} bytes)")
        return bytes(out)
    raise PayloadError(f"unsupported Content-Encoding {coding!r}")


def _inflate(body: bytes, wbits: int, max_size: int, coding: str) -> bytes:
    inflater = zlib.decompressobj(wbits)
    try:
        out = inflater.decompress(body, max_size + 1)
    except zlib.error as exc:
        raise PayloadError(f"broken {coding} body ({exc})") from exc
    if len(out) > max_size:
        raise PayloadError(f"{coding} body inflates past the limit ({max_size} bytes)")
    return out


def dechunk(body: bytes) -> bytes:
    """Undo HTTP/1.1 chunked transfer-encoding; a body that is not chunked is returned as is.

    >>> dechunk(b'4\\r\\nWiki\\r\\n5\\r\\npedia\\r\\n0\\r\\n\\r\\n')
    b'Wikipedia'
    """
    parts: list[bytes] = []
    pos = 0
    size_end = body.find(b"\n", pos)
    while size_end >= 0:
        size_text = body[pos:size_end].split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            if not parts:
                return body  # not chunked after all
            break  # broken chunking: keep what was decoded, and the rest as it is
        if size == 0:
            return b"".join(parts)
        start = size_end + 1
        parts.append(body[start : start + size])
        pos = start + size
        if body[pos : pos + 2] == b"\r\n":
            pos += 2
        elif body[pos : pos + 1] == b"\n":
            pos += 1
        size_end = body.find(b"\n", pos)
    parts.append(body[pos:])
    return b"".join(parts)
