"""In-memory API for pages already at hand: ``Deboiler().fit(pages).transform(pages)``.

A page is a ``(url, html)`` pair, html as ``str`` or UTF-8 ``bytes``. ``fit`` learns one profile per
site exactly as the file pipeline does (same hashing, same pairing of URL-sorted neighbours);
``transform`` cleans pages with what was learned and never changes the fitted state, so calling
it twice gives the same answer. With ``mode=Mode.CONTENT`` the text is each page's main content
(``html=True`` documents still lose only the template and the repeated blocks). Each page
carries what a line of JSONL output says of it — language, headings, lists, breadcrumbs,
description, canonical URL, Markdown, removals by reason — with the values ``--format
markdown`` writes for the same pages in the same mode.

>>> nav = "<nav><ul><li>Home</li><li>About</li></ul></nav>"
>>> pages = [(f"http://example.com/{i}", f"<body>{nav}<div>Story {i}</div></body>")
...          for i in range(3)]
>>> [page.text for page in Deboiler().fit(pages).transform(pages)]
['Story 0', 'Story 1', 'Story 2']
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from warcdeboil.output.jsonl import page_fields
from warcdeboil.page.dom import PageSignature, analyse, page_signature
from warcdeboil.site.clean import Mode, clean_document, clean_page
from warcdeboil.site.fit import FitParams, SiteProfile, fit_site
from warcdeboil.site.sitekey import SiteKeyer, SiteKeyMode, url_sort_key

if TYPE_CHECKING:
    from .lm import LanguageModel

__all__ = ["CleanPage", "Deboiler"]

Page = tuple[str, "str | bytes"]
_JSONL_FIELDS = ("description", "canonical_url", "language", "language_confidence",
                 "html_lang", "breadcrumbs", "headings", "lists", "markdown", "perplexity",
                 "removed")


@dataclass(frozen=True, slots=True)
class CleanPage:
    """One transformed page: the fields of a JSONL output line (with ``--format markdown``'s
    ``markdown``), less those that name a record of an archive (record_id, warc_file, offset,
    length, date, charset, html_bytes_before)."""

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


class Deboiler:
    """Learns site templates from pages in memory and removes them (scikit-learn style)."""

    def __init__(
        self, *, site_key: SiteKeyMode = SiteKeyMode.HOST, params: FitParams | None = None,
        mode: Mode = Mode.TEMPLATE, language_model: LanguageModel | None = None,
    ) -> None:
        self.mode = Mode(mode)
        self.language_model = language_model  # scores each page's text (``perplexity``)
        self.site_key = SiteKeyMode(site_key)
        self.params = params or FitParams()
        self.profiles_: dict[str, SiteProfile] = {}
        self._keyer = SiteKeyer(self.site_key)

    def fit(self, pages: Iterable[Page]) -> Deboiler:
        """Learn a profile for every site with at least two pages; returns ``self``."""
        by_site: dict[str, list[tuple[str, PageSignature]]] = defaultdict(list)
        for url, html in pages:
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

    def transform(self, pages: Iterable[Page], *, html: bool = False) -> Iterator[CleanPage]:
        """Clean each page with its site's profile (pages of unknown sites pass unchanged)."""
        scorer = None
        if self.language_model is not None:
            from warcdeboil.lm.scoring import LmSettings, PageScorer  # only with a language model

            scorer = PageScorer(LmSettings("in memory"), self.language_model)
        for url, markup in pages:
            site = self._keyer(url)
            profile = self.profiles_.get(site)
            page = analyse(markup, structure=True)
            cleaned, content, _ = clean_page(page, profile, self.mode, url=url)
            document = clean_document(markup, page, profile) if html else None
            score = scorer.score(cleaned, content) if scorer is not None else None
            fields = page_fields(page, cleaned, content, markdown=True, score=score)
            extra: dict[str, Any] = {name: fields[name] for name in _JSONL_FIELDS}
            yield CleanPage(
                url, site, page.title, cleaned.text, document, cleaned.removed, cleaned.slots,
                **extra,
            )

    def fit_transform(self, pages: Iterable[Page], *, html: bool = False) -> list[CleanPage]:
        """``fit`` then ``transform`` on the same pages."""
        pages = list(pages)
        return list(self.fit(pages).transform(pages, html=html))
