"""The text a page's duplicate signature is made from.

Duplicates are judged on what a page says, not on its site's chrome: the text left after the
site's template subtrees, template slots and repeated blocks are removed (template mode of
:func:`warcdeboil.apply.clean_page`). Two articles under one heavy template then differ, and one
article under two templates (a mirror, a syndicated copy) is the same.
"""

from __future__ import annotations

from ..apply import Mode, clean_page
from ..dom import PageText
from ..fit import SiteProfile

__all__ = ["signature_text"]


def signature_text(page: PageText, profile: SiteProfile | None) -> str:
    """The page's text without its site's template (``profile`` None: the whole text)."""
    return clean_page(page, profile, Mode.TEMPLATE).cleaned.text
