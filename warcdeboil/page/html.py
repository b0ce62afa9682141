"""Finding the HTML pages among an archive's records, and decoding them for the parser.

A page is a ``response`` record with an HTTP 2xx status, or a ``resource`` record, whose payload
is HTML by its Content-Type or, when that is absent or vague, by sniffing. Everything else is
carried through untouched.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, replace
from itertools import accumulate
from typing import Literal

from xxhash import xxh3_128_digest

from warcdeboil.errors import PayloadError, RecordError
from warcdeboil.warc.httpbody import (
    HttpResponse,
    decode_body,
    detect_charset,
    is_html,
    parse_http_response,
    to_text,
)
from warcdeboil.warc.reader import WarcRecord

__all__ = ["DEFAULT_MAX_PAGE_BYTES", "DigestKind", "HtmlPage", "PageLimits", "html_page",
           "nesting_depth", "payload_digest", "payload_sha1"]

# Pages larger than this (after decoding) are carried through untouched: no real article needs
# more, and parsing them would let one hostile record dominate a run's time and memory.
DEFAULT_MAX_PAGE_BYTES = 16 << 20
# Tags in a page, and elements nested in one another, beyond which it is carried untouched.
# lexbor's tree building is quadratic in nesting depth (measured: 10,000 nested divs parse in
# 0.18 s, 100,000 in 17 s), and a million siblings take a gigabyte to hold.
DEFAULT_MAX_TAGS = 200_000
DEFAULT_MAX_DEPTH = 10_000
_TAG = re.compile(
    rb"<(/?)(?!(?:br|img|input|meta|link|hr|area|base|col|embed|param|source|track|wbr)\b)"
    rb"[a-zA-Z]",
    re.IGNORECASE,
)
_STEP = {b"": 1, b"/": -1}
# How much of a block spilled to disk is read to tell whether it is a page.
_HEAD_BYTES = 1 << 16


# Target URIs whose response records hold an HTTP response (a dns: or whois: one holds none).
_HTTP_SCHEMES = ("http://", "https://")
# The longest excerpt of a bad status line a problem quotes.
_EXCERPT = 40


# What a run's pages are digested with: "sha1" where a revisit record may carry the digest
# (WARC-Payload-Digest), "xxh3" where digests are only compared, "" where nothing reads them.
DigestKind = Literal["", "sha1", "xxh3"]


@dataclass(slots=True)
class HtmlPage:
    """An HTML payload, decoded, ready to parse."""

    url: str
    response: HttpResponse | None  # None for ``resource`` records (no HTTP headers)
    body: bytes  # the payload with transfer and content codings undone
    markup: str | bytes  # what the parser gets: UTF-8 bytes as they are, else decoded text
    charset: str


def nesting_depth(markup: bytes) -> int:
    """An upper estimate of how deep elements nest (void elements and ``</`` tags counted).

    >>> nesting_depth(b"<div><p>a<br></p><div><b>x</b></div></div>")
    3
    """
    return max(accumulate(map(_STEP.__getitem__, _TAG.findall(markup))), default=0)


@dataclass(frozen=True, slots=True)
class PageLimits:
    """Bounds on one page's time and memory: a page beyond them is carried through untouched,
    and counted with the reason."""

    max_bytes: int = DEFAULT_MAX_PAGE_BYTES  # decoded payload
    max_tags: int = DEFAULT_MAX_TAGS
    max_depth: int = DEFAULT_MAX_DEPTH


def _check_shape(body: bytes, limits: PageLimits) -> None:
    tags = body.count(b"<")
    if tags > limits.max_tags:
        raise PayloadError(f"page has too many tags ({tags}, limit {limits.max_tags})")
    # Fewer tags than twice the limit cannot nest deeper than it: most pages skip the count.
    if tags > 2 * limits.max_depth:
        depth = nesting_depth(body)
        if depth > limits.max_depth:
            raise PayloadError(f"page nests too deep ({depth}, limit {limits.max_depth})")


def _http_head(record: WarcRecord, block: bytes) -> HttpResponse | None:
    """The HTTP response at the start of a ``response`` record's ``block`` (or of its head):
    None for an empty (or blank) block, or a record of a scheme other than HTTP. The block of
    an http(s) record that does not start with an HTTP status line and headers is malformed:
    :class:`RecordError` (the record is carried as it is, with the problem counted).
    """
    response = parse_http_response(block)
    if (response is not None and response.status) or not block.strip(b"\r\n\t ") or \
            not record.target_uri[:8].lower().startswith(_HTTP_SCHEMES):
        return response
    line = block[:_EXCERPT].split(b"\n", 1)[0]
    # (Brackets left out of the excerpt: the tally counts a reason without its bracketed part.)
    excerpt = line.decode("latin-1").strip().translate({40: None, 41: None})
    if response is None and block.startswith(b"HTTP/"):
        raise RecordError(f"HTTP response head without an end ({excerpt!r})")
    raise RecordError(f"HTTP response with a malformed status line ({excerpt!r})")


def _in_memory(record: WarcRecord, limits: PageLimits) -> WarcRecord:
    """A record whose block was spilled to disk (reader.SPILL_BYTES), read into memory when it
    may be a page within the limits; else the record itself (not a page), judged from the head
    of its block. A payload stored longer than the limit is too large, even if decoding a
    transfer coding might shrink it."""
    rec_type = record.rec_type
    if rec_type not in ("response", "resource"):
        return record
    head = record.block_head(_HEAD_BYTES)
    size = record.block_size
    if rec_type == "response":
        response = _http_head(record, head)
        if response is None or not 200 <= response.status < 300:
            return record
        content_type = response.content_type
        coded = response.get("Content-Encoding") or response.get("Transfer-Encoding")
        vague = ("application/octet", "text/plain")
        if not is_html(content_type, response.body[:1024]) and (
                not coded or (content_type and not content_type.lower().startswith(vague))):
            return record
        size -= len(head) - len(response.body)
        what = "payload"
    elif not is_html(record.get("Content-Type") or "", head[:1024]):
        return record
    else:
        what = "page"
    if size > limits.max_bytes:
        raise PayloadError(f"{what} is too large ({size} bytes, limit {limits.max_bytes})")
    return replace(record, _block=record.block, spill=None)


def html_page(record: WarcRecord, limits: PageLimits = PageLimits()) -> HtmlPage | None:
    """The HTML page in ``record``, or None when the record holds none.

    Raises :class:`PayloadError` when the record should hold a page but its payload cannot be
    decoded within the limits, :class:`RecordError` when a response's HTTP head is malformed.
    """
    if record.spill is not None:
        record = _in_memory(record, limits)
        if record.spill is not None:
            return None
    rec_type = record.rec_type
    if rec_type == "response":
        response = _http_head(record, record.block)
        if response is None or not 200 <= response.status < 300:
            return None
        content_type = response.content_type
        if not is_html(content_type, response.body[:1024]):
            # Might be compressed: sniffing needs the decoded bytes, but only for vague types.
            vague = ("application/octet", "text/plain")
            if content_type and not content_type.lower().startswith(vague):
                return None
            if not (response.get("Content-Encoding") or response.get("Transfer-Encoding")):
                return None
            body = decode_body(response, max_size=limits.max_bytes)
            if not is_html(content_type, body[:1024]):
                return None
        else:
            body = decode_body(response, max_size=limits.max_bytes)
    elif rec_type == "resource":
        content_type = record.get("Content-Type") or ""
        if not is_html(content_type, record.block[:1024]):
            return None
        response = None
        body = record.block
        if len(body) > limits.max_bytes:
            raise PayloadError(f"page is too large ({len(body)} bytes, limit {limits.max_bytes})")
    else:
        return None
    _check_shape(body, limits)
    charset = detect_charset(content_type, body[:4096])
    markup: str | bytes
    if charset == "utf-8":
        try:
            if not body.isascii():  # ASCII is UTF-8: no need to decode it to know
                body.decode("utf-8")
        except UnicodeDecodeError:
            markup, charset = to_text(body, charset)
        else:
            markup = body[3:] if body.startswith(b"\xef\xbb\xbf") else body
    else:
        markup, charset = to_text(body, charset)
    return HtmlPage(record.target_uri, response, body, markup, charset)


def payload_digest(page: HtmlPage, kind: DigestKind) -> bytes:
    """The payload's digest of ``kind`` (b"" for none): SHA-1 (:func:`payload_sha1`), which
    revisit records carry, or XXH3-128 padded with zeros to SHA-1's 20 bytes, for runs that only
    compare digests (exact copies): the same pages equal, at a twentieth of the cost (dragnet's
    content run: SHA-1 took 1.23 G of its 55.8 G instructions)."""
    if kind == "sha1":
        return payload_sha1(page)
    if kind == "xxh3":
        stored = page.response.body if page.response is not None else page.body
        return xxh3_128_digest(stored) + _XXH3_PAD
    return b""


_XXH3_PAD = bytes(4)


def payload_sha1(page: HtmlPage) -> bytes:
    """The SHA-1 of the page's payload as stored: the HTTP entity with its content and transfer
    codings (what ``WARC-Payload-Digest`` covers), or a ``resource`` record's block.

    Computed, not read from ``WARC-Payload-Digest``: a wrong or differently computed header
    would make two different pages exact duplicates, and ``--dedup revisit`` drops the payload
    of one (hashing costs about 1 ms per MB).
    """
    stored = page.response.body if page.response is not None else page.body
    return hashlib.sha1(stored).digest()
