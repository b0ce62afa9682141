"""Cleaning one page with its site's template: the step the file pipeline and the API share."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from selectolax.lexbor import LexborHTMLParser

from .dom import (
    INVISIBLE_TAGS,
    candidate_hashes,
    candidate_nodes,
    extract_text,
    parse_html,
    remove_matching,
    remove_subtrees,
    title_of,
)

__all__ = ["CleanedPage", "clean_markup"]


@dataclass(slots=True)
class CleanedPage:
    """A page after template removal."""

    title: str
    text: str
    html: str | None  # the cleaned document, when asked for
    html_bytes: int  # UTF-8 size of the cleaned document
    removed_subtrees: int


def clean_markup(
    markup: str | bytes, template: Collection[int], *, keep_html: bool = False
) -> CleanedPage:
    """Remove the template subtrees from one page and extract its text.

    With ``keep_html`` the cleaned document is serialised too, scripts and styles kept: hashes are
    computed on a twin of the tree without them (so they match pass 1) and the same candidates,
    matched by document order, are removed from the original.
    """
    if not keep_html:
        tree = parse_html(markup)
        removed = remove_subtrees(tree, template)
        size = len((tree.html or "").encode("utf-8", "surrogatepass"))
        return CleanedPage(title_of(tree), extract_text(tree), None, size, removed)
    original = LexborHTMLParser(markup)
    twin = original.clone()
    twin.strip_tags(INVISIBLE_TAGS)
    nodes, hashes = candidate_hashes(twin)
    removed = 0
    if template and any(h in template for h in hashes):
        removed = remove_matching(candidate_nodes(original), hashes, template)
        remove_matching(nodes, hashes, template)
    _declare_utf8(original)
    html = original.html or ""
    size = len(html.encode("utf-8", "surrogatepass"))
    return CleanedPage(title_of(twin), extract_text(twin), html, size, removed)


def _declare_utf8(tree: LexborHTMLParser) -> None:
    """The cleaned document is written as UTF-8: make its ``<meta>`` say so."""
    for meta in tree.css("meta[charset]"):
        meta.attrs["charset"] = "utf-8"
    for meta in tree.css("meta[http-equiv]"):
        if (meta.attrs.get("http-equiv") or "").lower() == "content-type":
            meta.attrs["content"] = "text/html; charset=utf-8"
