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

from .sink import PageResult, Sink

if TYPE_CHECKING:
    from warcdeboil.page.content import Extraction

__all__ = ["RedactingSink", "redact_cleaning", "redact_result"]


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


def redact_result(redactor: Redactor, result: PageResult, language_model: str = "") -> PageResult:
    """The page redacted (:func:`redact_cleaning`), its counts in ``pii``. The language is
    identified on the text before redaction (by the model at ``language_model``, ``""`` the
    default), so that redacting changes nothing else."""
    cleaned, content, counts = redact_cleaning(redactor, result.cleaned, result.content)
    language = result.language
    if language is None and cleaned is not result.cleaned:
        from warcdeboil.page.language import identify  # text outputs only

        language = identify(result.cleaned.text, model=language_model)
    return replace(result, cleaned=cleaned, content=content, language=language, pii=counts)


def _redacted_blocks(redactor: Redactor, content: Extraction) -> Extraction:
    # A block's text is one of the page text's lines, and no address spans a line: the blocks
    # hold the same addresses as the text, counted there.
    from warcdeboil.page.content import Extraction  # structured pages only

    redact = redactor.redact_text
    blocks = [replace(block, text=redact(block.text), marked=redact(block.marked))
              for block in content.blocks]
    return Extraction(blocks, content.removed)


class RedactingSink(Sink):
    """Text outputs with --redact-pii: each page redacted, counted, then passed on."""

    def __init__(self, inner: Sink, tally: Tally, language_model: str = "") -> None:
        assert not inner.wants_html  # WARC output takes no --redact-pii (Options refuses it)
        self._inner = inner
        self._tally = tally
        self._redactor = Redactor()
        self._language_model = language_model

    def begin(self, first: WarcRecord) -> None:
        self._inner.begin(first)

    def page(
        self, result: PageResult, record: WarcRecord | None, page: HtmlPage | None,
        html: bytes | None,
    ) -> None:
        redacted = redact_result(self._redactor, result, self._language_model)
        tally = self._tally
        assert redacted.pii is not None
        tally.pii_email += redacted.pii["email"]
        tally.pii_ipv4 += redacted.pii["ipv4"]
        tally.pii_ipv6 += redacted.pii["ipv6"]
        tally.text_chars += len(redacted.cleaned.text) - len(result.cleaned.text)  # as written
        self._inner.page(redacted, record, page, html)

    def close(self) -> None:
        self._inner.close()

    def discard(self) -> None:
        self._inner.discard()
