"""WARC output's pass 2 (``apply.clean_for_warc``): the doomed candidates and slots found once for
the page's counts and its HTML, and no text made, give exactly what ``clean_page`` and
``clean_document`` give, on real pages with the profiles their sites fit to."""

from __future__ import annotations

from array import array
from collections import defaultdict
from dataclasses import replace

import pytest
from conftest import shared_file

from warcdeboil.page import dom
from warcdeboil.page.dom import (
    CleanText,
    PageText,
    analyse,
    clean_html,
    find_doomed,
    page_signature,
    template_cuts,
)
from warcdeboil.page.html import html_page
from warcdeboil.site.clean import Mode, clean_document, clean_for_warc, clean_page
from warcdeboil.site.fit import FitParams, SiteProfile, fit_site
from warcdeboil.site.sitekey import SiteKeyer, SiteKeyMode, url_sort_key
from warcdeboil.warc.reader import iter_records

Cleaned = tuple[str | bytes, PageText, SiteProfile | None]


def _fitted(structure: bool) -> list[Cleaned]:
    """cleanportaleval's pages (4 sites), analysed as the scan does, with their site's profile
    fitted the way the pipeline fits it (pages in URL order)."""
    keyer = SiteKeyer(SiteKeyMode.HOST)
    pages = []
    for record in iter_records(shared_file("eval", "cleanportaleval.warc.gz")):
        page = html_page(record)
        if page is not None:
            pages.append((page.url, page.markup, analyse(page.markup, structure=structure)))
    by_site = defaultdict(list)
    for url, _, text in pages:
        by_site[keyer(url)].append((url_sort_key(url), page_signature(text)))
    profiles = {site: fit_site(site, [sig for _, sig in sorted(sigs, key=lambda s: s[0])],
                               FitParams()) for site, sigs in by_site.items()}
    return [(markup, text, profiles[keyer(url)]) for url, markup, text in pages]


@pytest.fixture(scope="module")
def plain_pages() -> list[Cleaned]:
    return _fitted(structure=False)


def test_warc_cleaning_is_clean_page_and_clean_document(plain_pages: list[Cleaned]) -> None:
    """Same counts, same HTML byte for byte; the text, which WARC output does not hold, is ""."""
    totals = [0, 0, 0]
    for markup, page, profile in plain_pages:
        (cleaned, content, blocks), html = clean_for_warc(markup, page, profile, Mode.TEMPLATE)
        reference = clean_page(page, profile, Mode.TEMPLATE)
        assert cleaned == CleanText("", reference.cleaned.removed, reference.cleaned.slots)
        assert content is None and blocks == reference.removed_blocks
        assert html == clean_document(markup, page, profile).encode("utf-8", "surrogatepass")
        totals = [totals[0] + cleaned.removed, totals[1] + cleaned.slots, totals[2] + blocks]
    # The pages exercise every kind of removal: subtrees, slots and repeated blocks.
    assert all(totals), totals


def test_known_doomed_cut_the_same(plain_pages: list[Cleaned]) -> None:
    for _, page, profile in plain_pages:
        assert profile is not None
        args = (page, profile.template, profile.template_slots)
        assert template_cuts(*args, find_doomed(*args)) == template_cuts(*args)


def test_structured_pages_keep_their_text() -> None:
    """A page with structure marks (the API's) is cleaned in full: its text is clean_page's."""
    for markup, page, profile in _fitted(structure=True)[:20]:
        cleaning, html = clean_for_warc(markup, page, profile, Mode.TEMPLATE)
        assert cleaning == clean_page(page, profile, Mode.TEMPLATE)
        assert html == clean_document(markup, page, profile).encode("utf-8", "surrogatepass")


def _one_at_a_time(markup: str | bytes, repeated: frozenset[int]) -> str:
    """Repeated blocks out of a document as clean_html took them out before it digested every
    element's text at once: each element's text read and digested in turn."""
    tree = dom._parse(markup)
    assert tree.body is not None
    for node in reversed(tree.body.css(dom._BLOCK_ELEMENT_SELECTOR)):
        text = node.text(separator=" ", strip=True)
        if text and dom.block_digest(text) in repeated:
            node.decompose()
    dom.declare_utf8(tree)
    return tree.html or ""


def test_repeated_elements_come_out_as_one_at_a_time(plain_pages: list[Cleaned]) -> None:
    removed = 0
    for markup, page, profile in plain_pages:
        assert profile is not None
        cleaned = clean_html(markup, page, (), profile.repeated)
        assert cleaned == _one_at_a_time(markup, profile.repeated)
        removed += cleaned != clean_html(markup, page, (), ())
    assert removed > 10, removed  # pages where some repeated block went


def test_slot_owners_found_where_pass_1_saw_them(plain_pages: list[Cleaned]) -> None:
    """The role elements pass 1 located (PageText.owners) are the ones reading the roles of the
    second parse finds: same HTML with and without them, on pages that lose slots."""
    with_slots = 0
    for markup, page, profile in plain_pages:
        assert profile is not None and len(page.owners) == len(page.slots)
        args = (page.hashes and profile.template, profile.repeated, profile.template_slots)
        if not find_doomed(page, profile.template, profile.template_slots).slots:
            continue
        with_slots += 1
        unknown = replace(page, owners=array("I"))
        assert clean_html(markup, page, *args) == clean_html(markup, unknown, *args)
    assert with_slots > 5, with_slots
