"""WET-style text output: a warcinfo record, then one ``conversion`` record per page, as Common
Crawl writes them (``WARC-Refers-To`` the page's record, its language in ISO 639-3), with
``WARC-Truncated`` and its reason when the page's record is incomplete."""

from __future__ import annotations

from typing import BinaryIO

from warcdeboil.page.html import HtmlPage
from warcdeboil.warc.compression import Codec
from warcdeboil.warc.reader import WarcRecord
from warcdeboil.warc.writer import WarcWriter, sha1_digest

from .provenance import derived_id
from .sink import Names, PageResult, Sink, write_warcinfo

_TEXT_DESCRIPTION = (
    "WET-style conversion records: the text of each HTML page of the source without its site's "
    "template, WARC-Refers-To the page's record"
)


class TextSink(Sink):
    """WET-style output: a warcinfo record, then one ``conversion`` record per page."""

    def __init__(
        self, out: BinaryIO, codec: Codec, dictionary: bytes | None, names: Names
    ) -> None:
        self._writer = WarcWriter(out, codec, zstd_dictionary=dictionary, valid_uris=True)
        self._names = names
        self._started = False

    def page(
        self, result: PageResult, record: WarcRecord | None, page: HtmlPage | None,
        html: bytes | None,
    ) -> None:
        entry = result.entry
        date = entry.date or "1970-01-01T00:00:00Z"
        if not self._started:
            # Dated by the first page (pass 1's page store knows pages only, not records).
            self._started = True
            write_warcinfo(self._writer, self._names, _TEXT_DESCRIPTION, entry.date,
                           entry.record_id, "WARC/1.0")
        body = result.cleaned.text.encode("utf-8", "surrogatepass")
        headers = [
            ("WARC-Type", "conversion"),
            ("WARC-Target-URI", entry.url),
            ("WARC-Date", date),
            ("WARC-Record-ID", derived_id("conversion", entry.record_id)),
            ("WARC-Refers-To", entry.record_id),
            ("WARC-Block-Digest", sha1_digest(body)),
        ]
        if entry.truncated:  # the page's record is incomplete: so is the text made from it
            headers.append(("WARC-Truncated", entry.truncated))
        # Common Crawl's header and codes (ISO 639-3); one language, none when unsure.
        from warcdeboil.page.language import (  # WET output only: not loaded by WARC output
            identify,
            iso639_3,
        )

        guess = result.language if result.language is not None else identify(
            result.cleaned.text)
        language = iso639_3(guess.language)
        if language:
            headers.append(("WARC-Identified-Content-Language", language))
        headers += [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))]
        self._writer.write("WARC/1.0", headers, body)

    def close(self) -> None:
        if not self._started:  # no page: the output still says what it is
            self._started = True
            write_warcinfo(self._writer, self._names, _TEXT_DESCRIPTION, None, "", "WARC/1.0")
