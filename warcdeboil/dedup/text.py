"""The text a page's duplicate signature is made from, and the digest of its lead paragraph.

Duplicates are judged on what a page says, not on its site's chrome: the text left after the
site's template subtrees, template slots and repeated blocks are removed (what template mode of
:func:`warcdeboil.apply.clean_page` removes). Two articles under one heavy template then differ,
and one article under two templates (a mirror, a syndicated copy) is the same.

**Link-dense blocks** go too: a block whose text is mostly link text — a per-page list of
related stories, tags, "previous / next". They change from page to page, so the template
removal keeps them, and a print or syndicated copy of the article does not carry them. Links
are known on pages analysed with structure marks (``PageText.structured``: JSONL, markdown and
content-mode runs); on others those blocks stay. Leaving out the blocks of the comments, aside
and chrome roles as well found no more copies on the generated crawls once the site's template
slots are gone, so they stay.

The text is one block a line. :func:`lead_digest` names its first long block — an article's
lead paragraph — which the confirmation uses: a print copy and its original begin alike, page 2
of an article does not (see :data:`warcdeboil.dedup.lsh.LEAD_CONTAINMENT`).
"""

from __future__ import annotations

import re

from xxhash import xxh3_64_intdigest

from ..dom import (
    BLOCK_SPLIT,
    LINK_CLOSE,
    LINK_OPEN,
    PageText,
    inline_as_spaces,
    plain_block_digests,
    remove_template,
)
from ..fit import SiteProfile
from .shingles import word_hashes

__all__ = ["LEAD_CHARS", "LINK_DENSITY", "lead_digest", "signature_text"]

# A block is link-dense, and left out of the signature, when more than this share of its
# characters (spaces aside) is link text. Half is the usual line between a paragraph with links
# in it and a list of links (boilerpipe's and dragnet's link-density features split there too);
# on the generated crawls it found 3 more print and syndicated pairs of dragnet pages than the
# template-removed text alone (recall 0.932 -> 0.955), and 1 of l3s-gn1's (0.957 -> 0.974), with
# no wrong pair either way.
LINK_DENSITY = 0.5
# The lead is the first block of the signature text with at least this many characters: a
# sentence or two of prose, past the headline, the byline and the date (20-60 characters).
# 100 and 150 were tried on both generated crawls: 100 found 1-2 more pairs and no wrong one.
LEAD_CHARS = 100

# A run of block marks and the spaces between them: the texts between runs are the blocks.
_BLOCK_MARKS = BLOCK_SPLIT.pattern[2:-2]  # the body of BLOCK_SPLIT's character class
_BLOCK_RUN = re.compile(f"[{_BLOCK_MARKS}][ {_BLOCK_MARKS}]*")
_JOIN = "\ufdd0"  # joins blocks while their inline marks become spaces (no block holds one)
_LINKED = re.compile(f"{LINK_OPEN}([^{LINK_OPEN}{LINK_CLOSE}]*)")


def _link_dense(block: str) -> bool:
    """Whether more than :data:`LINK_DENSITY` of the block's characters (spaces aside; its few
    inline marks count as characters) are inside links."""
    linked = "".join(_LINKED.findall(block))
    return len(linked) - linked.count(" ") > LINK_DENSITY * (len(block) - block.count(" "))


def signature_text(page: PageText, profile: SiteProfile | None) -> str:
    """The page's text without its site's template and its link-dense blocks, one block a
    line (``profile`` None: nothing is known of the site, only link-dense blocks go)."""
    template = repeated = slots = frozenset[int]()
    if profile is not None:
        template, repeated, slots = profile.template, profile.repeated, profile.template_slots
    marked = remove_template(page, template, slots).marked.decode("utf-8", "surrogatepass")
    blocks = _BLOCK_RUN.split(marked)
    if page.structured and LINK_OPEN in marked:
        blocks = [block for block in blocks if LINK_OPEN not in block or not _link_dense(block)]
    # Inline marks as spaces, whitespace runs folded: the loops in C.
    spaced = inline_as_spaces(_JOIN.join(blocks)).split(_JOIN)
    lines = list(filter(None, map(" ".join, map(str.split, spaced))))
    if repeated:
        lines = [line for line, digest in zip(lines, plain_block_digests(lines), strict=True)
                 if digest not in repeated]
    return "\n".join(lines)


def lead_digest(text: str) -> int:
    """A 64-bit digest of the words of the first line of ``text`` (a :func:`signature_text`)
    that has at least :data:`LEAD_CHARS` characters; 0 when it has none. Words as the shingles
    see them (:func:`~.shingles.word_hashes`: case and ASCII punctuation do not count).

    >>> lead_digest("Headline\\n" + "A first paragraph, long enough to lead. " * 3) == lead_digest(
    ...     "Other headline\\n" + "a first paragraph, long enough to lead. " * 3)
    True
    >>> lead_digest("Short\\nlines only")
    0
    """
    for line in text.split("\n"):
        if len(line) >= LEAD_CHARS:
            return xxh3_64_intdigest(word_hashes(line).tobytes()) or 1
    return 0
