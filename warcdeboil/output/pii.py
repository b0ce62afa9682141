"""``--redact-pii``: every text sink gets each page with its addresses redacted, once, before any
format writes it (:class:`RedactingSink`, in front of the format's sink)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from warcdeboil.page.dom import CleanText
from warcdeboil.page.html import HtmlPage
from warcdeboil.page.pii import Counts, Redactor
from warcdeboil.warc.reader import WarcRecord
from warcdeboil.warc.tally import Tally

from .sink import PageResult, Sink, TextStage

if TYPE_CHECKING:
    from warcdeboil.page.content import Extraction

__all__ = ["RedactingSink", "redact_cleaning"]


def redact_cleaning(
    redactor: Redactor, cleaned: CleanText, content: Extraction | None,
) -> tuple[CleanText, Extraction | None, Counts]:
    """A cleaned page with its text redacted: ``text``, and the kept blocks that headings,
    lists and Markdown are made of; the counts are those of ``text``'s addresses."""
    text, counts = redactor.redact(cleaned.text)
    if not any(counts.values()):
        return cleaned, content, counts
    if content is not None:
        content = _redacted_blocks(redactor, content)
    return replace(cleaned, text=text), content, counts


def _redacted_blocks(redactor: Redactor, content: Extraction) -> Extraction:
    # A block's text is one of the page text's lines, and no address spans a line: the blocks
    # hold the same addresses as the text, counted there.
    from warcdeboil.page.content import Extraction  # structured pages only

    redact = redactor.redact_text
    blocks = [replace(block, text=redact(block.text), marked=redact(block.marked))
              for block in content.blocks]
    return Extraction(blocks, content.removed)


class RedactingSink(TextStage):
    """Text outputs with --redact-pii: each page redacted, counted, then passed on."""

    def __init__(self, inner: Sink, tally: Tally, language_model: str = "") -> None:
        super().__init__(inner, language_model)
        self._tally = tally
        self._redactor = Redactor()

    def page(
        self, result: PageResult, record: WarcRecord | None, page: HtmlPage | None,
        html: bytes | None,
    ) -> None:
        cleaned, content, counts = redact_cleaning(self._redactor, result.cleaned,
                                                   result.content)
        if cleaned is not result.cleaned:
            self.language_of(result)  # of the text before: redacting changes nothing else
        tally = self._tally
        tally.pii_email += counts["email"]
        tally.pii_ipv4 += counts["ipv4"]
        tally.pii_ipv6 += counts["ipv6"]
        tally.text_chars += len(cleaned.text) - len(result.cleaned.text)  # as written
        self._inner.page(replace(result, cleaned=cleaned, content=content, pii=counts), record,
                         page, html)
