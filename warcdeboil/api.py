"""In-memory API for pages already at hand: ``Deboiler().fit(pages).transform(pages)``.

A page is a ``(url, html)`` pair, html as ``str`` or UTF-8 ``bytes``, or a
:class:`~warcdeboil.warc.reader.WarcRecord` (as :func:`~warcdeboil.iter_records` reads them:
records that hold no HTML page are passed over). ``fit`` learns one profile per site exactly as
the file pipeline does (same hashing, same pairing of URL-sorted neighbours); ``transform``
cleans pages with what was learned and never changes the fitted state, so calling it twice
gives the same answer. With ``mode=Mode.CONTENT`` the text is each page's main content
(``html=True`` documents still lose only the template and the repeated blocks). Each page
carries the fields of a line of JSONL output — language, headings, lists, breadcrumbs,
description, canonical URL, Markdown, removals by reason, and for a record its identity — with
the values ``--format markdown --dedup off`` writes for the same pages in the same mode
(:class:`CleanPage` says which fields, and why not the others). ``redact_pii=True`` replaces
e-mail and IP addresses in the text as ``--redact-pii`` does; ``drop_headline=True`` (content
mode) leaves the page's headline out of the text as ``--drop-headline`` does, and
``favor="precision"`` or ``"recall"`` (content mode) takes that side as ``--favor`` does.

>>> nav = "<nav><ul><li>Home</li><li>About</li></ul></nav>"
>>> pages = [(f"http://example.com/{i}", f"<body>{nav}<div>Story {i}</div></body>")
...          for i in range(3)]
>>> [page.text for page in Deboiler().fit(pages).transform(pages)]
['Story 0', 'Story 1', 'Story 2']
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from warcdeboil.errors import ConfigError, RecordError
from warcdeboil.output.jsonl import page_fields
from warcdeboil.page.dom import PageSignature, analyse, page_signature
from warcdeboil.page.favor import Favor, as_favor
from warcdeboil.page.html import HtmlPage, PageLimits, html_page
from warcdeboil.site.clean import Mode, clean_document, clean_page
from warcdeboil.site.fit import FitParams, SiteProfile, fit_site
from warcdeboil.site.pagestore import page_entry
from warcdeboil.site.sitekey import SiteKeyer, SiteKeyMode, url_sort_key
from warcdeboil.warc.names import escape_name
from warcdeboil.warc.reader import WarcRecord

if TYPE_CHECKING:
    from .corpus import QualityFilters
    from .lm import LanguageModel

__all__ = ["OMITTED_FIELDS", "CleanPage", "Deboiler"]

Page = tuple[str, "str | bytes"]
_JSONL_FIELDS = ("description", "canonical_url", "language", "language_confidence",
                 "html_lang", "breadcrumbs", "headings", "lists", "markdown", "perplexity",
                 "removed")

OMITTED_FIELDS = ("perplexity_bucket", "line_perplexities", "line_noise", "duplicate_of",
                  "duplicate_group_size", "duplicate_similarity", "duplicate_kind",
                  "url_canonical")
"""The JSONL fields a :class:`CleanPage` does not carry: each comes from a stage of a whole run
that the in-memory API does not run (perplexity buckets, line perplexities and noise scores,
the duplicate search, URL rules), as JSONL leaves them out of a run without the option that
adds them."""


@dataclass(frozen=True, slots=True)
class CleanPage:
    """One transformed page: the fields of a JSONL output line written with ``--format
    markdown --dedup off`` (all but :data:`OMITTED_FIELDS`), and ``html`` (``transform(...,
    html=True)``), ``removed_subtrees`` and ``removed_slots`` beside them.

    The fields that name a record (``record_id``, ``warc_file``, ``offset``, ``length``,
    ``date``, ``charset``, ``truncated``, ``charset_source``) are None for a page given as a
    ``(url, html)`` pair: there is no record. ``warc_file`` is None unless ``transform`` is
    told the archive's name.
    ``html_bytes_before`` is the size of the HTML given (a ``str`` as UTF-8), or of a record's
    decoded payload, as JSONL's.
    """

    url: str
    site: str
    title: str
    text: str
    html: str | None
    removed_subtrees: int
    removed_slots: int = 0
    description: str = ""
    canonical_url: str = ""
    language: str | None = None  # from the text (offline); None when unsure
    language_confidence: float = 0.0  # 0..1, see warcdeboil.page.language.identify
    html_lang: str = ""
    breadcrumbs: list[str] = field(default_factory=list)
    headings: list[dict[str, Any]] = field(default_factory=list)  # level, text
    lists: list[list[str]] = field(default_factory=list)  # runs of list items
    markdown: str = ""
    perplexity: float | None = None  # under the Deboiler's language model, if it has one
    removed: dict[str, int] = field(default_factory=dict)  # counts by reason, as in JSONL
    html_bytes_before: int = 0
    record_id: str | None = None
    warc_file: str | None = None
    offset: int | None = None
    length: int | None = None
    date: str | None = None
    charset: str | None = None
    truncated: bool | None = None
    pii_redacted: dict[str, int] | None = None  # Deboiler(redact_pii=True): as in JSONL
    charset_source: str | None = None
    # With the Deboiler's quality filters: FILTER:REASON of each that would drop the page, as
    # JSONL's quality_flags (--quality-filters); None without them.
    quality_flags: list[str] | None = None


class Deboiler:
    """Learns site templates from pages in memory and removes them (scikit-learn style)."""

    def __init__(
        self, *, site_key: SiteKeyMode = SiteKeyMode.HOST, params: FitParams | None = None,
        mode: Mode = Mode.TEMPLATE, language_model: LanguageModel | None = None,
        redact_pii: bool = False, language_id_model: str = "",
        quality_filters: QualityFilters | None = None, drop_headline: bool = False,
        favor: Favor | str = Favor.BALANCED,
    ) -> None:
        self.mode = Mode(mode)
        # The text without the page's headline, as --drop-headline (content mode only).
        if drop_headline and self.mode is not Mode.CONTENT:
            raise ConfigError("drop_headline leaves the headline out of the main content's "
                              "text: use mode=Mode.CONTENT")
        self.drop_headline = drop_headline
        # Content mode's operating point, as --favor (content mode only, but for balanced).
        self.favor = as_favor(favor)
        if self.favor is not Favor.BALANCED and self.mode is not Mode.CONTENT:
            raise ConfigError("favor chooses what content mode keeps of a page: use "
                              "mode=Mode.CONTENT")
        self.language_model = language_model  # scores each page's text (``perplexity``)
        self.redact_pii = redact_pii  # addresses in the text replaced, as --redact-pii does
        self.quality_filters = quality_filters  # flags each page's text (``quality_flags``)
        # A fastText identification model file for ``language`` (the CLI's --language-model);
        # "": lid.176's small model. A missing or bad file raises ConfigError here.
        self.language_id_model = str(language_id_model) if language_id_model else ""
        if self.language_id_model:
            from warcdeboil.page.language import check_model_file

            check_model_file(self.language_id_model)
        self.site_key = SiteKeyMode(site_key)
        self.params = params or FitParams()
        self.profiles_: dict[str, SiteProfile] = {}
        self._keyer = SiteKeyer(self.site_key)

    def fit(self, pages: Iterable[Page | WarcRecord]) -> Deboiler:
        """Learn a profile for every site with at least two pages; returns ``self``."""
        by_site: dict[str, list[tuple[str, PageSignature]]] = defaultdict(list)
        for url, html, _ in _read(pages):
            site = self._keyer(url)
            if site:
                page = analyse(html, structure=True)  # as transform (and JSONL output) sees it
                by_site[site].append((url_sort_key(url), page_signature(page)))
        profiles = {}
        for site in sorted(by_site):
            ordered = [sig for _, sig in sorted(by_site[site], key=lambda item: item[0])]
            profile = fit_site(site, ordered, self.params)
            if profile.useful:
                profiles[site] = profile
        self.profiles_ = profiles
        return self

    def transform(self, pages: Iterable[Page | WarcRecord], *, html: bool = False,
                  warc_file: str | os.PathLike[str] | None = None) -> Iterator[CleanPage]:
        """Clean each page with its site's profile (pages of unknown sites pass unchanged).

        ``warc_file``: the archive the records were read from, whose name the pages' own
        ``warc_file`` gives (as JSONL does); without it, None.
        """
        scorer = None
        if self.language_model is not None:
            from warcdeboil.lm.scoring import LmSettings, PageScorer  # only with a language model

            scorer = PageScorer(LmSettings("in memory", language_model=self.language_id_model),
                                self.language_model)
        redactor = None
        if self.redact_pii:
            from warcdeboil.page.pii import Redactor  # only when asked

            if html:
                raise ConfigError("redact_pii redacts text: html=True documents would keep "
                                  "the addresses (in attributes, scripts and links)")

            redactor = Redactor()
        name = (escape_name(os.path.basename(os.fspath(warc_file))) if warc_file is not None
                else None)
        for url, markup, source in _read(pages):
            site = self._keyer(url)
            profile = self.profiles_.get(site)
            page = analyse(markup, structure=True)
            cleaned, content, _ = clean_page(page, profile, self.mode, url=url,
                                             drop_headline=self.drop_headline, favor=self.favor)
            document = clean_document(markup, page, profile) if html else None
            score = scorer.score(cleaned, content) if scorer is not None else None
            guess = counts = None
            judged = cleaned.text  # the quality filters judge the text before redaction
            if redactor is not None:  # after scoring, as the file pipeline does
                from warcdeboil.output.pii import redact_cleaning
                from warcdeboil.page.language import identify

                redacted, content, counts = redact_cleaning(redactor, cleaned, content)
                if redacted is not cleaned:  # the language of the text before, as JSONL's
                    guess = identify(cleaned.text, model=self.language_id_model)
                cleaned = redacted
            fields = page_fields(page, cleaned, content, markdown=True, score=score,
                                 guess=guess, language_model=self.language_id_model)
            extra: dict[str, Any] = {key: fields[key] for key in _JSONL_FIELDS}
            extra["pii_redacted"] = counts
            if source is None:
                extra["html_bytes_before"] = len(markup) if isinstance(markup, bytes) else len(
                    markup.encode("utf-8", "surrogatepass"))
            else:  # what pass 1 keeps of the record, so the same values as JSONL's
                entry = page_entry(0, *source, page)
                extra.update(
                    record_id=entry.record_id, warc_file=name, offset=entry.offset,
                    length=entry.length, date=entry.date, charset=entry.charset,
                    truncated=bool(entry.truncated), html_bytes_before=entry.html_bytes_before,
                    charset_source=entry.charset_source)
            if self.quality_filters is not None:  # on the text and language JSONL gives
                extra["quality_flags"] = self.quality_filters.flags(
                    judged, extra["language"] or "")
            yield CleanPage(
                url, site, page.title, cleaned.text, document, cleaned.removed, cleaned.slots,
                **extra,
            )

    def fit_transform(self, pages: Iterable[Page | WarcRecord], *, html: bool = False,
                      warc_file: str | os.PathLike[str] | None = None) -> list[CleanPage]:
        """``fit`` then ``transform`` on the same pages."""
        pages = list(pages)
        return list(self.fit(pages).transform(pages, html=html, warc_file=warc_file))


def _read(items: Iterable[Page | WarcRecord]
          ) -> Iterator[tuple[str, str | bytes, tuple[WarcRecord, HtmlPage] | None]]:
    """(url, markup, the record and its decoded page, or None for a pair) of each page: a
    record is decoded as pass 1 decodes it (one cut short is a page too, marked truncated); a
    record that holds no HTML page, or whose payload does not decode, is passed over."""
    limits = PageLimits()
    for item in items:
        if not isinstance(item, WarcRecord):
            url, markup = item
            yield url, markup, None
            continue
        try:
            page = html_page(item, limits)
        except RecordError:
            continue
        if page is not None:
            yield page.url, page.markup, (item, page)
