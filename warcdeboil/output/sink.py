"""Where pass 2 writes: a sink per output format takes every record of an input in order.

:class:`Sink` is the interface (:mod:`.warc`, :mod:`.wet` and :mod:`.jsonl` implement it);
:class:`TextStage` is a step in front of a text output's sink (:mod:`.scoring`, the language
model's filters; :mod:`.quality`, the quality filters; :mod:`.pii`, the redaction of addresses);
:class:`PageResult` is one cleaned page as a sink gets it."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING

from warcdeboil.dedup.verdicts import Verdict
from warcdeboil.page.dom import CleanText
from warcdeboil.page.html import HtmlPage
from warcdeboil.site.pagestore import PageEntry
from warcdeboil.warc.reader import WarcRecord
from warcdeboil.warc.writer import WarcWriter

from .provenance import field, warcinfo_record

if TYPE_CHECKING:
    # Imported where used: a template-mode run (WARC output, no --lm, no URL rules) needs none.
    from warcdeboil.lm.scoring import PageScore
    from warcdeboil.page.content import Extraction
    from warcdeboil.page.language import Guess


Fields = list[tuple[str, str]]
Names = tuple[str, str, tuple[tuple[str, str], ...]]
"""(source file name, output file name, settings): what an output's warcinfo says."""


def write_warcinfo(
    writer: WarcWriter, names: Names, description: str, date: str | None, first_id: str,
    version: str,
) -> str:
    """Write an output's own warcinfo record; its id."""
    source, output, settings = names
    version, headers, block = warcinfo_record(
        source=source, output=output, description=description, settings=settings, date=date,
        first_id=first_id, version=version,
    )
    writer.write(version, headers, block)
    return field(headers, "WARC-Record-ID") or ""


@dataclass(slots=True)
class PageResult:
    """One cleaned page, as the sinks get it."""

    entry: PageEntry
    site: str
    cleaned: CleanText
    content: Extraction | None  # blocks kept (and why others went), when pages have structure
    score: PageScore | None = None  # with --lm
    duplicate: Verdict | None = None  # with --dedup: the page's duplicate group, if any
    language: Guess | None = None  # the text's language, when identified already (lm.stage)
    pii: dict[str, int] | None = None  # with --redact-pii: the addresses redacted, by kind
    # --quality-filters: FILTER:REASON of each filter that would drop the page (output.quality)
    quality_flags: list[str] | None = None


class Sink(ABC):
    """Where one output format writes: every record of the input passes through it in order."""

    wants_html = False
    # WARC output: every record of the input is written, one read only in part as it survives
    # (``repaired``), not cleaned; text outputs write the page of such a record, marked truncated.
    keeps_records = False

    def begin(self, first: WarcRecord) -> None:
        """The input's first record is about to come (WARC output dates its warcinfo by it)."""

    def carry(self, record: WarcRecord) -> None:
        """A record that is not a cleaned page (only WARC output keeps these)."""

    def repaired(self, record: WarcRecord) -> None:
        """A record read only in part (cut short, or with a wrong Content-Length)."""

    @abstractmethod
    def page(
        self, result: PageResult, record: WarcRecord | None, page: HtmlPage | None,
        html: bytes | None,
    ) -> None:
        """A cleaned page."""

    def close(self) -> None:
        """Flush what is buffered."""

    def discard(self) -> None:
        """The output will not be kept: drop what was written beside it."""


class TextStage(Sink):
    """A step in front of a text output's sink: it passes each page on to ``inner`` (changed,
    or not at all), and the input's beginning, end and discarding as they come."""

    def __init__(self, inner: Sink, language_model: str = "") -> None:
        assert not inner.wants_html  # text outputs only (Options refuses the others)
        self._inner = inner
        self._language_model = language_model  # --language-model ("": the default model)

    def begin(self, first: WarcRecord) -> None:
        self._inner.begin(first)

    def close(self) -> None:
        self._inner.close()

    def discard(self) -> None:
        self._inner.discard()

    def language_of(self, result: PageResult) -> Guess:
        """The language of the page's text, identified once by the run's model and kept on the
        page (the output would identify it otherwise)."""
        if result.language is None:
            from warcdeboil.page.language import identify  # text outputs only

            result.language = identify(result.cleaned.text, model=self._language_model)
        return result.language
