"""A second look at two pages of one site whose template the fit did not learn.

A page's signature text is its text without its site's template (:mod:`.text`). Where the fit
learned no template for a site — it has too few pages, or the fit took its pages for copies of
one another and paired none of them — the signature text still holds what the site puts on
every page: a sidebar, a menu, a footer. Two different pages of such a site are then near
duplicates by that alone: two stats pages of live-radsport.ch at 0.72, their shared sidebar
most of their text; two photo posts of a blog, a date and a title each under the same sidebar.

Shingles counted over a site's pages (as MaybeDont leaves out those common to many) cannot tell
what the site shares on a site of two pages, where the text both hold is the site's or a
copy's; on larger sites they take a copy's text for the site's as readily as a sidebar's (on
the generated crawls, leaving out the shingles on two or more pages of a site, or on three and
a tenth of them, cut recall from 0.977 to 0.60 and 0.87: a story with a print and an updated
copy is on three pages of its site). The pair itself tells: what the fit would take from it.
The fit learns a template from two neighbouring pages as the subtrees they share; so here, the
candidate subtrees two pages of one site share (equal hashes: the same tag and text) are the
site's, and each page's *own text* is its signature text without them. Two copies of one page
share everything but what changed between them: their own texts are both empty, or one is (the
other holds it and more: an updated copy), or they are near duplicates of each other (a
paragraph edited inside the article's subtree). Two different pages keep what makes them
different, and are not near duplicates unless that is too (:func:`same_own`).

What this does not tell apart: two captures of one page that differ only inside a small subtree
of its own (a visit counter in a box by itself) have different own texts, as two photo posts
with their own dates do, and are not joined. Pages of two sites are compared as before (the
rule took a story on two sister sites of one template for two pages: the story's subtree was
shared).

The look is taken only for the pairs that need it: the stage reads those pages again from the
page stores (:mod:`.stage`).

>>> from warcdeboil.page.dom import analyse
>>> sidebar = "<div>" + "".join(f"<p>Thread {k} on the forum</p>" for k in range(30)) + "</div>"
>>> a = analyse(f"<body><div><p>Rider born in 1987</p></div>{sidebar}</body>", structure=True)
>>> b = analyse(f"<body><div><p>Player since 2006</p></div>{sidebar}</body>", structure=True)
>>> own_texts(a, b, None)
('Rider born in 1987', 'Player since 2006')
>>> same_own(*own_texts(a, b, None)), same_own(*own_texts(a, a, None))
(False, True)
"""

from __future__ import annotations

import numpy as np

from warcdeboil.page.dom import PageText as AnalysedPage
from warcdeboil.site.fit import SiteProfile

from .lsh import LshParams, confirms
from .shingles import shingle_hashes
from .text import lead_digest, signature_text

__all__ = ["has_template", "own_texts", "same_own"]


def has_template(profile: SiteProfile | None) -> bool:
    """Whether the fit learned a template for the site (subtrees or slots): two pages of a site
    without one get the second look."""
    return profile is not None and bool(profile.template or profile.template_slots)


def own_texts(first: AnalysedPage, second: AnalysedPage, profile: SiteProfile | None,
              ) -> tuple[str, str]:
    """The signature texts of two pages of one site without the candidate subtrees both hold
    (``profile``: the site's, without template; its repeated blocks go as from any page)."""
    shared = frozenset(first.hashes).intersection(second.hashes) - {0}
    pair = SiteProfile(profile.site if profile is not None else "", 2, 1, shared,
                       profile.repeated if profile is not None else frozenset())
    return signature_text(first, pair), signature_text(second, pair)


def same_own(first: str, second: str, params: LshParams | None = None) -> bool:
    """Whether two pages with these own texts are copies: unless both have text of their own,
    one holds the other (or both are what they share); else their own texts must be near
    duplicates by the rule of :func:`~.lsh.confirms`, on their exact Jaccard similarity."""
    a, b = np.unique(shingle_hashes(first)), np.unique(shingle_hashes(second))
    if not len(a) or not len(b):
        return True
    shared = len(np.intersect1d(a, b, assume_unique=True))
    lead = lead_digest(first)
    return confirms(shared / (len(a) + len(b) - shared), len(a), len(b), params,
                    same_lead=bool(lead) and lead == lead_digest(second))
