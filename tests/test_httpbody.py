"""HTTP payloads: codings undone, lies tolerated, bombs refused, charsets found."""

from __future__ import annotations

import gzip
import zlib

import brotli
import pytest

from warcdeboil.errors import PayloadError
from warcdeboil.warc.httpbody import (
    HttpResponse,
    dechunk,
    decode_body,
    is_html,
    parse_http_response,
)

PAGE = b"<html><body><p>caf\xc3\xa9</p></body></html>"


def response(body: bytes, *headers: tuple[str, str]) -> HttpResponse:
    return HttpResponse("HTTP/1.1 200 OK", 200, list(headers), body)


def test_parse_http_response_splits_status_headers_body() -> None:
    block = b"HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\nX-A: 1\r\n  2\r\n\r\n<p>x"
    parsed = parse_http_response(block)
    assert parsed is not None
    assert parsed.status == 404
    assert parsed.headers == [("Content-Type", "text/html"), ("X-A", "1 2")]
    assert parsed.body == b"<p>x"


@pytest.mark.parametrize(
    ("coding", "encode"),
    [
        ("gzip", gzip.compress),
        ("deflate", zlib.compress),
        ("deflate", lambda data: zlib.compress(data)[2:-4]),  # raw deflate, as IIS sends
        ("br", brotli.compress),
    ],
)
def test_content_encodings_are_undone(coding: str, encode) -> None:
    encoded = response(encode(PAGE), ("Content-Encoding", coding))
    assert decode_body(encoded, max_size=1 << 20) == PAGE


def test_chunked_then_gzip() -> None:
    zipped = gzip.compress(PAGE)
    chunked = b"%x\r\n%s\r\n0\r\n\r\n" % (len(zipped), zipped)
    got = decode_body(
        response(chunked, ("Transfer-Encoding", "chunked"), ("Content-Encoding", "gzip")),
        max_size=1 << 20,
    )
    assert got == PAGE


def test_gzip_header_on_a_plain_body_keeps_the_body() -> None:
    assert decode_body(response(PAGE, ("Content-Encoding", "gzip")), max_size=1 << 20) == PAGE


def test_broken_chunking_keeps_what_decodes() -> None:
    assert dechunk(b"5\r\nhello\r\nzz\r\nrest") == b"hellozz\r\nrest"
    assert dechunk(PAGE) == PAGE


def test_decompression_bomb_is_refused() -> None:
    bomb = gzip.compress(b"\0" * (4 << 20))
    with pytest.raises(PayloadError, match="inflates past"):
        decode_body(response(bomb, ("Content-Encoding", "gzip")), max_size=1 << 20)


@pytest.mark.parametrize(
    ("content_type", "body", "expected"),
    [
        ("text/html", b"", True),
        ("application/xhtml+xml; charset=utf-8", b"", True),
        ("", b"\n  <!DOCTYPE html><html>", True),
        ("application/octet-stream", b"<html><body>", True),
        ("image/png", b"<html>", False),
        ("", b"\x89PNG\r\n", False),
        ("application/json", b'{"a": 1}', False),
    ],
)
def test_is_html(content_type: str, body: bytes, expected: bool) -> None:
    assert is_html(content_type, body) is expected
