"""WARC output: the output's own warcinfo, then every record of the input in order, each HTML
page cleaned and given a new record id that names its source (:mod:`.provenance`), the other
records as they were (copied compressed when the codec does not change)."""

from __future__ import annotations

from collections.abc import Callable
from typing import BinaryIO

from warcdeboil.dedup.verdicts import Verdict
from warcdeboil.errors import InputError
from warcdeboil.page.html import HtmlPage
from warcdeboil.site.pagestore import PageEntry
from warcdeboil.warc.compression import Codec
from warcdeboil.warc.reader import WarcRecord
from warcdeboil.warc.recompress import carry_record, write_repaired
from warcdeboil.warc.writer import WarcWriter, rebuild_record

from .provenance import SOURCE_FIELD, Revisits, cleaned_headers, field, revisit_of_copy
from .relink import LinkLog
from .sink import Fields, Names, PageResult, Sink, write_warcinfo

# Records copied compressed from the input are read and written a piece of this size at a time.
_COPY_CHUNK = 1 << 20
# HTTP headers that no longer describe a body we wrote plain; kept under Common Crawl's names.
_STALE_HTTP_HEADERS = {
    "content-encoding": "X-Crawler-Content-Encoding",
    "transfer-encoding": "X-Crawler-Transfer-Encoding",
    "content-length": "X-Crawler-Content-Length",
}

# The revisit profile `identical-payload-digest` is WARC 1.1's: such records say so whatever the
# version of the records around them.
REVISIT_VERSION = "WARC/1.1"
_WARC_DESCRIPTION = (
    "the source's records in order; its HTML pages without their site's template, each with a "
    f"new record id naming its source in {SOURCE_FIELD}; other records as they were"
)


class WarcSink(Sink):
    """WARC output: the output's warcinfo, then every record of the input, pages cleaned."""

    wants_html = True
    keeps_records = True

    def __init__(
        self, out: BinaryIO, codec: Codec, in_codec: Codec, source: BinaryIO,
        dictionary: bytes | None, names: Names, links: LinkLog | None = None,
    ) -> None:
        self._out = out
        self._links = links  # what relink needs once every output is written
        self._writer = WarcWriter(out, codec, zstd_dictionary=dictionary, valid_uris=True)
        # Records are copied compressed, byte for byte, when the codec does not change (zstd
        # frames may depend on the input's dictionary, so they are always re-encoded).
        self._copy_raw = codec is in_codec and codec is not Codec.ZSTD
        self._source = source
        self._names = names
        self._warcinfo_id: str | None = None
        self._revisits = Revisits()  # this file's cleaned records, for its later revisits

    def begin(self, first: WarcRecord) -> None:
        # Dated by the source's first record, not the clock: outputs are reproducible.
        if self._warcinfo_id is None:
            self._warcinfo_id = write_warcinfo(
                self._writer, self._names, _WARC_DESCRIPTION, first.get("WARC-Date"),
                first.record_id, first.version,
            )

    def close(self) -> None:
        if self._warcinfo_id is None:  # an input without a record still gets its warcinfo
            self._warcinfo_id = write_warcinfo(
                self._writer, self._names, _WARC_DESCRIPTION, None, "", "WARC/1.0")
        if self._links is not None:
            self._links.close()

    def discard(self) -> None:
        if self._links is not None:
            self._links.discard()

    def carry(self, record: WarcRecord) -> None:
        if record.rec_type == "revisit":
            self._write_revisit(record.version, record.headers, record.block,
                                lambda: self._carry_one(record))
            return
        self._carry_one(record)

    def _write_revisit(self, version: str, headers: Fields, block: bytes,
                       write: Callable[[], None]) -> None:
        """A revisit pointed at the cleaned record it revisits when that was written above,
        else written by ``write`` and left to relink (perhaps cleaned later, or elsewhere)."""
        resolved = self._revisits.resolve(headers)
        if resolved is not None:
            self._writer.write(version, resolved, block)
            return
        start = self._out.tell()
        write()
        if self._links is not None:
            self._links.unresolved(headers, start, self._out.tell() - start)

    def revisit(self, record: WarcRecord, page: HtmlPage, entry: PageEntry,
                verdict: Verdict) -> None:
        """An exact duplicate written as a revisit of its group's kept page."""
        assert page.response is not None
        head = record.block_head(record.block_size - len(page.response.body))
        headers = revisit_of_copy(record.headers, head, entry.digest, verdict.keep_url,
                                  verdict.keep_date, verdict.keep_record_id, self._warcinfo_id)
        self._write_revisit(REVISIT_VERSION, headers, head,
                            lambda: self._writer.write(REVISIT_VERSION, headers, head))

    def _carry_one(self, record: WarcRecord) -> None:
        # A record without its CRLFCRLF is written framed afresh, its bytes otherwise the same.
        if (self._copy_raw and record.addressable and record.length > 0 and record.framed
                and not record.converted and self._copy(record.offset, record.length)):
            return
        carry_record(self._writer, record)

    def _copy(self, offset: int, length: int) -> bool:
        """Copy the input's bytes at ``offset`` unchanged, a MiB at a time (False, having
        written nothing, when the input holds fewer)."""
        source = self._source
        if length > _COPY_CHUNK:
            source.seek(offset + length - 1)
            if len(source.read(1)) != 1:
                return False
        source.seek(offset)
        raw = source.read(min(length, _COPY_CHUNK))
        if length <= _COPY_CHUNK:
            if len(raw) != length:
                return False
            self._writer.write_compressed(raw)
            return True
        remaining = length
        while raw:
            self._writer.write_compressed(raw)
            remaining -= len(raw)
            raw = source.read(min(remaining, _COPY_CHUNK)) if remaining else b""
        if remaining:
            raise InputError(f"the input changed while its record at {offset} was copied")
        return True

    def repaired(self, record: WarcRecord) -> None:
        write_repaired(self._writer, record)

    def page(
        self, result: PageResult, record: WarcRecord | None, page: HtmlPage | None,
        html: bytes | None,
    ) -> None:
        assert record is not None and page is not None and html is not None
        if page.response is None:
            block = html
            payload_offset = None
            headers = [
                (k, "text/html; charset=utf-8" if k.lower() == "content-type" else v)
                for k, v in record.headers
            ]
        else:
            http_head = _http_head(page, len(html))
            block = http_head + html
            payload_offset = len(http_head)
            headers = record.headers
        rebuilt = rebuild_record(headers, block, payload_offset)
        new = cleaned_headers(
            rebuilt, record.record_id, field(rebuilt, "WARC-Block-Digest") or "", self._warcinfo_id
        )
        self._revisits.add(record.headers, new)
        if self._links is not None:
            self._links.cleaned(record.headers, new)
        self._writer.write(record.version, new, block)


def _http_head(page: HtmlPage, body_length: int) -> bytes:
    assert page.response is not None
    lines = [page.response.status_line]
    for key, value in page.response.headers:
        lower = key.lower()
        if lower in _STALE_HTTP_HEADERS:
            lines.append(f"{_STALE_HTTP_HEADERS[lower]}: {value}")
        elif lower == "content-type":
            lines.append(f"{key}: {value.split(';', 1)[0].strip() or 'text/html'}; charset=utf-8")
        else:
            lines.append(f"{key}: {value}")
    lines.append(f"Content-Length: {body_length}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "replace")
