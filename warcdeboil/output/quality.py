"""Text outputs with ``--quality-filters``: each page's ``FILTER:REASON`` flags, worked out on
the text the output holds; with ``--drop-flagged``, a flagged page is left out, counted per
flag, and listed in the excluded file.

:class:`QualitySink` stands in front of every text sink (and behind the language model's,
whose line filter may change the text), so every format that writes pages honours the same
flags and drops: the flags travel on the :class:`~.sink.PageResult`
(``quality_flags``), and a dropped page never reaches the format's sink."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, BinaryIO

from warcdeboil.page.html import HtmlPage
from warcdeboil.warc.names import escape_name
from warcdeboil.warc.reader import WarcRecord
from warcdeboil.warc.tally import Tally

from .sink import PageResult, Sink, TextStage

if TYPE_CHECKING:
    from warcdeboil.corpus.settings import QualitySettings

__all__ = ["QualitySink", "excluded_line"]


class QualitySink(TextStage):
    """Flags each page; passes it on unless ``settings.drop`` and it is flagged, when it goes
    to ``excluded`` (one JSON line) instead."""

    def __init__(self, inner: Sink, settings: QualitySettings, tally: Tally,
                 source_path: str, excluded: BinaryIO | None = None,
                 language_model: str = "") -> None:
        super().__init__(inner, language_model)
        self._filters = settings.filters()
        self._drop = settings.drop
        self._tally = tally
        self._excluded = excluded
        self._warc_file = escape_name(os.path.basename(source_path))

    def page(
        self, result: PageResult, record: WarcRecord | None, page: HtmlPage | None,
        html: bytes | None,
    ) -> None:
        text = result.cleaned.text
        flags = self._filters.flags(text, self.language_of(result).language)
        result.quality_flags = flags
        tally = self._tally
        if flags:
            tally.pages_flagged += 1
            tally.quality_flags.update(flags)
            if self._drop:
                tally.pages_dropped_quality += 1
                tally.quality_dropped.update(flags)
                tally.text_chars -= len(text)  # counted as cleaned, not written
                if self._excluded is not None:
                    self._excluded.write(excluded_line(result, self._warc_file))
                return
        self._inner.page(result, record, page, html)


def excluded_line(result: PageResult, warc_file: str) -> bytes:
    """A page left out, as the excluded file lists it: its URL, record, where the record is
    in its input (``warc_file`` as JSONL names it), and its flags."""
    entry = result.entry
    line = {"url": entry.url, "record_id": entry.record_id, "warc_file": warc_file,
            "offset": entry.offset, "length": entry.length,
            "quality_flags": result.quality_flags}
    return (json.dumps(line, ensure_ascii=False) + "\n").encode("utf-8", "surrogatepass")
