"""HTTP messages in WARC records: headers, transfer and content codings, HTML sniffing, charsets.

A ``response`` record's block is an HTTP response as it crossed the wire. Before a page can be
parsed we undo chunked transfer-encoding and gzip/deflate/br content-encoding (with a size limit:
a decompression bomb is refused, not inflated) and find its charset: HTTP header, byte-order mark,
``<meta charset>``, then UTF-8 if the bytes are valid UTF-8, else windows-1252.
"""

from __future__ import annotations

import codecs
import re
import zlib
from dataclasses import dataclass

from warcdeboil.errors import PayloadError

from .fields import parse_fields

__all__ = [
    "HttpResponse",
    "decode_body",
    "detect_charset",
    "is_html",
    "parse_http_response",
    "to_text",
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
_META_CHARSET = re.compile(
    rb"""<meta[^>]+charset\s*=\s*["']?\s*([a-zA-Z0-9_:.\-]+)""", re.IGNORECASE
)
_CHARSET_PARAM = re.compile(r"""charset\s*=\s*["']?([^"';\s]+)""", re.IGNORECASE)
# WHATWG Encoding Standard: labels whose real decoder is a superset we must use instead.
_CHARSET_ALIASES = {
    "iso-8859-1": "cp1252", "latin1": "cp1252", "latin-1": "cp1252", "ascii": "cp1252",
    "us-ascii": "cp1252", "iso8859-1": "cp1252", "l1": "cp1252", "windows-1252": "cp1252",
    "gb2312": "gb18030", "gbk": "gb18030", "x-gbk": "gb18030", "euc-kr": "cp949",
    "ks_c_5601-1987": "cp949", "shift_jis": "cp932", "sjis": "cp932", "x-sjis": "cp932",
    "windows-31j": "cp932", "tis-620": "cp874", "iso-8859-9": "cp1254", "big5": "big5hkscs",
    "x-user-defined": "cp1252", "utf8": "utf-8", "unicode-1-1-utf-8": "utf-8",
}


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


def _normalise_charset(label: str) -> str | None:
    label = label.strip().strip("\"'").lower()
    if not label:
        return None
    label = _CHARSET_ALIASES.get(label, label)
    try:
        return codecs.lookup(label).name
    except LookupError:
        return None


def detect_charset(content_type: str, body: bytes) -> str:
    """The charset to decode ``body`` with: BOM, HTTP header, ``<meta>``, else a guess.

    >>> detect_charset('text/html; charset=ISO-8859-1', b'')
    'cp1252'
    >>> detect_charset('text/html', b'<meta charset="utf-8">')
    'utf-8'
    """
    if body.startswith(b"\xef\xbb\xbf"):
        return "utf-8"
    if body.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "utf-16"
    match = _CHARSET_PARAM.search(content_type)
    if match and (charset := _normalise_charset(match.group(1))):
        return charset
    meta = _META_CHARSET.search(body, 0, 4096)
    if meta and (charset := _normalise_charset(meta.group(1).decode("ascii", "replace"))):
        # A page served as UTF-16 cannot say so in ASCII-compatible <meta>; HTML says use UTF-8.
        return "utf-8" if charset.startswith("utf-16") else charset
    return "utf-8"


def _is_single_byte(charset: str) -> bool:
    return charset.startswith(("cp125", "iso8859", "latin", "koi8", "mac-", "cp874", "cp437"))


def to_text(body: bytes, charset: str) -> tuple[str, str]:
    """Decode ``body``; return the text and the charset that was really used.

    When the declared charset does not fit the bytes, UTF-8 is tried, then windows-1252 (which
    maps every byte): the text is never mangled silently into replacement characters.
    """
    if charset.startswith("utf-16") and body[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return body.decode("utf-16", "replace"), "utf-16"
    candidates = [charset, "utf-8", "cp1252"]
    if charset != "utf-8" and _is_single_byte(charset) and not body.isascii():
        # Non-ASCII bytes that are valid UTF-8 are almost never real single-byte text: a page
        # labelled windows-1252 that decodes as UTF-8 is UTF-8 (else it becomes mojibake).
        candidates.insert(0, "utf-8")
    for candidate in candidates:
        try:
            text = body.decode(candidate)
        except (UnicodeDecodeError, LookupError):
            continue
        if text.startswith("\ufeff"):
            text = text[1:]
        return text, candidate
    return body.decode("utf-8", "replace"), "utf-8"
