"""Finding the HTML pages among an archive's records, and decoding them for the parser.

A page is a ``response`` record with an HTTP 2xx status, or a ``resource`` record, whose payload
is HTML by its Content-Type or, when that is absent or vague, by sniffing. Everything else is
carried through untouched.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import PayloadError
from .httpbody import (
    HttpResponse,
    decode_body,
    detect_charset,
    is_html,
    parse_http_response,
    to_text,
)
from .reader import WarcRecord

__all__ = ["DEFAULT_MAX_PAGE_BYTES", "HtmlPage", "html_page"]

# Pages larger than this (after decoding) are carried through untouched: no real article needs
# more, and parsing them would let one hostile record dominate a run's time and memory.
DEFAULT_MAX_PAGE_BYTES = 16 << 20


@dataclass(slots=True)
class HtmlPage:
    """An HTML payload, decoded, ready to parse."""

    url: str
    response: HttpResponse | None  # None for ``resource`` records (no HTTP headers)
    body: bytes  # the payload with transfer and content codings undone
    markup: str | bytes  # what the parser gets: UTF-8 bytes as they are, else decoded text
    charset: str


def html_page(record: WarcRecord, *, max_bytes: int = DEFAULT_MAX_PAGE_BYTES) -> HtmlPage | None:
    """The HTML page in ``record``, or None when the record holds none.

    Raises :class:`PayloadError` when the record should hold a page but its payload cannot be
    decoded within the limits.
    """
    rec_type = record.rec_type
    if rec_type == "response":
        response = parse_http_response(record.block)
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
            body = decode_body(response, max_size=max_bytes)
            if not is_html(content_type, body[:1024]):
                return None
        else:
            body = decode_body(response, max_size=max_bytes)
    elif rec_type == "resource":
        content_type = record.get("Content-Type") or ""
        if not is_html(content_type, record.block[:1024]):
            return None
        response = None
        body = record.block
        if len(body) > max_bytes:
            raise PayloadError(f"page of {len(body)} bytes is over the limit of {max_bytes}")
    else:
        return None
    charset = detect_charset(content_type, body[:4096])
    markup: str | bytes
    if charset == "utf-8":
        try:
            body.decode("utf-8")
        except UnicodeDecodeError:
            markup, charset = to_text(body, charset)
        else:
            markup = body[3:] if body.startswith(b"\xef\xbb\xbf") else body
    else:
        markup, charset = to_text(body, charset)
    return HtmlPage(record.target_uri, response, body, markup, charset)
