"""A page cleaned with its site's profile: the template gone, and in content mode all but the
main content. Pass 2 and the language-model stage clean every page this way; the in-memory API
and the report do too, so that all of them agree byte for byte."""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, NamedTuple

from warcdeboil.page.dom import (
    CleanText,
    Doomed,
    PageText,
    clean_html,
    count_repeated,
    find_doomed,
    plain_text,
    remove_repeated,
    remove_template,
)
from warcdeboil.page.favor import Favor

from .fit import SiteProfile

if TYPE_CHECKING:
    # Imported where used: a template-mode run (WARC output, no --lm, no URL rules) needs none.
    from warcdeboil.page.content import Extraction


class Mode(str, enum.Enum):
    """What is removed: the site's template only, or everything but the main content."""

    TEMPLATE = "template"
    CONTENT = "content"


class PageCleaning(NamedTuple):
    """A page's text with its site's profile applied, and what went."""

    cleaned: CleanText
    content: Extraction | None  # the kept blocks, when the page has structure marks
    removed_blocks: int  # repeated blocks, and in content mode blocks judged not content


def _removals(
    profile: SiteProfile | None,
) -> tuple[frozenset[int], frozenset[int], frozenset[int]]:
    """The profile's template subtrees, repeated blocks and template slots (none without one)."""
    if profile is None:
        return frozenset(), frozenset(), frozenset()
    return profile.template, profile.repeated, profile.template_slots


def clean_page(
    page: PageText, profile: SiteProfile | None, mode: Mode, known: Doomed | None = None,
    url: str = "", *, drop_headline: bool = False, favor: Favor = Favor.BALANCED,
) -> PageCleaning:
    """The text of an analysed page without its site's template: in content mode, its main
    content; else everything but the template subtrees and slots and the repeated blocks. ``known``:
    what the profile dooms on the page (:func:`warcdeboil.page.dom.find_doomed`), if found already;
    ``url``: the page's address, which content mode reads (a thread's address says its comments are
    its content); ``drop_headline``: content mode without the page's headline
    (:func:`warcdeboil.page.content.without_headline`); ``favor``: content mode's operating point
    (:func:`warcdeboil.page.content.operating_point`)."""
    template, repeated, slots = _removals(profile)
    removal = remove_template(page, template, slots, known)
    marked = removal.marked.decode("utf-8", "surrogatepass")
    content: Extraction | None = None
    if mode is Mode.CONTENT:
        from warcdeboil.page.content import (  # the content model: not loaded by template mode
            extract,
            operating_point,
        )

        content = extract(marked, repeated=repeated, url=url, point=operating_point(favor))
        if drop_headline:
            from warcdeboil.page.content import without_headline

            content = without_headline(content)
    elif page.structured:
        from warcdeboil.page.content import split_blocks, without_repeated

        content = without_repeated(split_blocks(marked), repeated)
    if content is not None:
        text = content.text
        removed_blocks = sum(content.removed.values())
    else:
        marked, removed_blocks = remove_repeated(marked, repeated)
        text = plain_text(marked, page.structured)
    cleaned = CleanText(text, removal.subtrees, removal.slots)
    return PageCleaning(cleaned, content, removed_blocks)


def clean_document(markup: str | bytes, page: PageText, profile: SiteProfile | None) -> str:
    """The page's document without what :func:`clean_page` removes in template mode."""
    template, repeated, slots = _removals(profile)
    return clean_html(markup, page, template, repeated, slots)


def clean_for_warc(
    markup: str | bytes, page: PageText, profile: SiteProfile | None, mode: Mode,
    known: Doomed | None = None,
) -> tuple[PageCleaning, bytes]:
    """What WARC output takes of a page: :func:`clean_page`'s counts, and
    :func:`clean_document`'s HTML as UTF-8, the doomed candidates and slots found once for both.

    A WARC output holds no text, so a page without structure marks (the only kind the command
    line gives it) gets its repeated blocks counted, not its text made: the cleaning's text is
    "" (the same counts). ``known``: what the profile dooms on the page, if found already."""
    template, repeated, slots = _removals(profile)
    if known is None:
        known = find_doomed(page, template, slots)
    if page.structured or mode is Mode.CONTENT:
        cleaning = clean_page(page, profile, mode, known)
    else:
        removal = remove_template(page, template, slots, known)
        cleaning = PageCleaning(CleanText("", removal.subtrees, removal.slots), None,
                                count_repeated(removal.marked, repeated))
    html = clean_html(markup, page, template, repeated, slots, known)
    return cleaning, html.encode("utf-8", "surrogatepass")
