"""The text a page's duplicate signature is made from, and the digest of its lead paragraph.

Duplicates are judged on what a page says, not on its site's chrome: the text left after the
site's template subtrees, template slots and repeated blocks are removed (what template mode of
:func:`warcdeboil.site.clean.clean_page` removes). Two articles under one heavy template then
differ, and one article under two templates (a mirror, a syndicated copy) is the same.

**Link-dense blocks** go too: a block whose text is mostly link text — a per-page list of
related stories, tags, "previous / next". They change from page to page, so the template
removal keeps them, and a print or syndicated copy of the article does not carry them. Links
are known on pages analysed with structure marks (``PageText.structured``: JSONL, markdown and
content-mode runs); on others those blocks stay. **Comments** go as well: the elements of the
comments role (``<div id=comments>``), which template removal keeps where they hold most of the
page's text (a post with 274 comments: the slot guard spares them), so that a page is signed by
its article and not by its readers. Leaving out the aside and chrome roles' blocks too found no
more copies on the generated crawls once the site's template slots are gone, so those stay.

The text is one block a line. :func:`lead_digest` names its first long block — an article's
lead paragraph — which the confirmation uses: a print copy and its original begin alike, page 2
of an article does not (see :data:`warcdeboil.dedup.lsh.LEAD_CONTAINMENT`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from xxhash import xxh3_64_intdigest

from warcdeboil.page.dom import (
    BLOCK_SPLIT,
    LINE,
    LINK_CLOSE,
    LINK_OPEN,
    ROLE_CLOSE,
    ROLE_COMMENTS,
    ROLE_MAIN,
    ROLE_OPEN,
    SLOT_CUT,
    SUBTREE_CUT,
    Doomed,
    PageText,
    inline_as_spaces,
    plain_block_digests,
    template_cuts,
)
from warcdeboil.site.fit import SiteProfile

from .shingles import tokens

__all__ = ["LEAD_CHARS", "LINK_DENSITY", "lead_digest", "signature_text"]

# A block is link-dense, and left out of the signature, when more than this share of its
# characters is link text. Half is the usual line between a paragraph with links
# in it and a list of links (boilerpipe's and dragnet's link-density features split there too);
# on the generated crawls it found 3 more print and syndicated pairs of dragnet pages than the
# template-removed text alone (recall 0.932 -> 0.955), and 2 of l3s-gn1's (0.957 -> 0.974), with
# no wrong pair either way.
LINK_DENSITY = 0.5
# The lead is the first block of the signature text with at least this many characters: a
# sentence or two of prose, past the headline, the byline and the date (20-60 characters).
# 60, 100 and 150 were tried on both generated crawls: 100 found 1-2 more pairs than either,
# and no wrong one.
LEAD_CHARS = 100

# A run of block marks and the spaces between them: the texts between runs are the blocks.
_BLOCK_MARKS = BLOCK_SPLIT.pattern[2:-2]  # the body of BLOCK_SPLIT's character class
_BLOCK_RUN = re.compile(f"[{_BLOCK_MARKS}][ {_BLOCK_MARKS}]*")
# The same marks as bytes (U+FDD0..U+FDEF are EF B7 90..AF in UTF-8), and the line mark.
_BLOCK_MARK_BYTES = re.compile(b"\xef\xb7[" + re.escape(bytes(
    0x90 + code - 0xFDD0 for code in range(0xFDD0, 0xFDF0) if BLOCK_SPLIT.fullmatch(chr(code))
)) + b"]")
_MARK_BYTES = 3
_LINE_BYTES = LINE.encode()
_COMMENTS_OPEN, _MAIN_OPEN = ROLE_OPEN[ROLE_COMMENTS], ROLE_OPEN[ROLE_MAIN]
_COMMENT_AND_MAIN = re.compile(f"{_COMMENTS_OPEN} ?{_MAIN_OPEN}")
_COMMENTS_CLOSE = ROLE_CLOSE[ROLE_COMMENTS]
_JOIN = "\ufdd0"  # joins blocks while their inline marks become spaces (no block holds one)
_SPACED_JOIN = f" {_JOIN} "  # a word of its own once the text is split on whitespace
_LINKED = re.compile(f"{LINK_OPEN}([^{LINK_OPEN}{LINK_CLOSE}]*)")


def _link_dense(block: str) -> bool:
    """Whether more than :data:`LINK_DENSITY` of the block's characters (spaces and its few
    inline marks included) are inside links."""
    return sum(map(len, _LINKED.findall(block))) > LINK_DENSITY * len(block)


def _spare_the_longest(marked: bytes, cuts: list[tuple[int, int, int, int]],
                       ) -> list[tuple[int, int, int, int]]:
    """``cuts`` without the slot cut that holds the longest text block of what the subtree
    cuts leave, if one does.

    Template removal spares a slot holding the page's longest block, measured over the whole
    page (:func:`warcdeboil.page.dom.template_cuts`); where that block is in a template subtree (a
    Blogger sidebar's long "About me"), a slot holding the article is cut whole, and the page's
    signature would be empty. Measured on what the subtrees leave, the article is spared.
    """
    subtrees = [(start, end) for start, end, kind, _ in cuts if kind == SUBTREE_CUT]
    pieces: list[bytes] = []
    origins: list[tuple[int, int]] = []  # (start in the joined pieces, start in ``marked``)
    kept_from = joined = 0
    for start, end in [*subtrees, (len(marked), len(marked))]:
        piece = marked[kept_from:start]
        pieces.append(piece)
        origins.append((joined, kept_from))
        joined += len(piece) + _MARK_BYTES
        kept_from = end
    sizes = list(map(len, _BLOCK_MARK_BYTES.split(_LINE_BYTES.join(pieces))))
    longest = max(sizes)
    if not longest:
        return cuts
    index = sizes.index(longest)
    where = sum(sizes[:index]) + _MARK_BYTES * index
    joined_start, origin = next(o for o in reversed(origins) if o[0] <= where)
    at = origin + where - joined_start
    return [cut for cut in cuts if not (cut[2] == SLOT_CUT and cut[0] <= at < cut[1])]


def _without_template(page: PageText, profile: SiteProfile | None,
                      known: Doomed | None = None) -> bytes:
    """The page's marked text without its site's template subtrees and slots (the template
    removal of :func:`warcdeboil.page.dom.remove_template`, but see :func:`_spare_the_longest`);
    ``known``: what :func:`warcdeboil.page.dom.find_doomed` finds on it, when the caller has it."""
    if profile is None:
        return page.marked
    cuts, _, slot_cuts = template_cuts(page, profile.template, profile.template_slots, known)
    # Only where the slot cuts take more than the cuts leave can one of them hold the article
    # (a cheap test: measuring the longest block was a tenth of the signature text's cost).
    cut = sum(end - start for start, end, _, _ in cuts)
    in_slots = sum(end - start for start, end, kind, _ in cuts if kind == SLOT_CUT)
    if slot_cuts and in_slots > len(page.marked) - cut:
        cuts = _spare_the_longest(page.marked, cuts)
    marked = page.marked
    pieces: list[bytes] = []
    kept_from = 0
    for start, end, _, _ in cuts:
        pieces += (marked[kept_from:start], _LINE_BYTES)  # the text around a cut: two blocks
        kept_from = end
    pieces.append(marked[kept_from:])
    return b"".join(pieces)


def _holds_main(region: str) -> bool:
    """Whether a comments element holds an element of the main role that is not a comment
    too (a comment's body is often an "entry": both roles, their opening marks side by side).
    A main element opening right where a comments element opens counts as such a comment: the
    marks cannot tell the two apart."""
    mains = region.count(_MAIN_OPEN)
    return mains > 0 and mains > len(_COMMENT_AND_MAIN.findall(region))


def _find_all(text: str, mark: str) -> Iterator[int]:
    """Where each ``mark`` (one character) is in ``text``."""
    at = text.find(mark)
    while at >= 0:
        yield at
        at = text.find(mark, at + 1)


def _without_comments(marked: str) -> str:
    """The marked text without the elements of the comments role (outermost ones; not one
    that holds an element of the main role that is not a comment too)."""
    if _COMMENTS_OPEN not in marked:
        return marked
    pieces: list[str] = []
    kept_from = depth = 0
    start = 0
    # The marks in text order (str.find runs through the text ten times as fast as a
    # character class of a regular expression does).
    for at, opening in sorted([*((at, True) for at in _find_all(marked, _COMMENTS_OPEN)),
                               *((at, False) for at in _find_all(marked, _COMMENTS_CLOSE))]):
        if opening:
            if not depth:
                start = at
            depth += 1
        elif depth:
            depth -= 1
            if not depth and not _holds_main(marked[start : at + 1]):
                pieces += (marked[kept_from:start], LINE)
                kept_from = at + 1
    pieces.append(marked[kept_from:])
    return "".join(pieces)


# Text folded at once up to this many characters; a longer one in pieces of about as many (its
# list of words took 10 bytes a character and more: 150 MB for a page of 14 MB).
FOLD_CHARS = 1 << 20
_WHITESPACE = re.compile(r"\s")  # what str.split() splits at (both: str.isspace())


def _folded(text: str) -> str:
    """``" ".join(text.split())``, in pieces of about :data:`FOLD_CHARS` characters cut at
    white space (the pieces' folds joined by a space give the same text)."""
    if len(text) <= FOLD_CHARS:
        return " ".join(text.split())
    pieces: list[str] = []
    start = 0
    while start < len(text):
        space = _WHITESPACE.search(text, start + FOLD_CHARS)
        end = space.start() if space is not None else len(text)
        piece = " ".join(text[start:end].split())
        if piece:
            pieces.append(piece)
        start = end
    return " ".join(pieces)


def signature_text(page: PageText, profile: SiteProfile | None,
                   known: Doomed | None = None) -> str:
    """The page's text without its site's template, its comments and its link-dense blocks,
    one block a line (``profile`` None: nothing is known of the site, the template stays).
    ``known``: :func:`warcdeboil.page.dom.find_doomed` of the page with the profile's template and
    slots, when the caller has it (the stage finds it for many pages at once: :mod:`.cuts`)."""
    repeated = profile.repeated if profile is not None else frozenset[int]()
    marked = _without_comments(
        _without_template(page, profile, known).decode("utf-8", "surrogatepass"))
    blocks = _BLOCK_RUN.split(marked)
    if page.structured and LINK_OPEN in marked:
        blocks = [block for block in blocks if LINK_OPEN not in block or not _link_dense(block)]
    # Inline marks as spaces, whitespace runs folded, empty blocks gone: over the whole text
    # at once, the loops in C (a block's words are those between two joins, the spaces the
    # fold leaves around each join are stripped).
    folded = _folded(inline_as_spaces(_SPACED_JOIN.join(blocks)))
    lines = list(filter(None, map(str.strip, folded.split(_JOIN))))
    if repeated:
        lines = [line for line, digest in zip(lines, plain_block_digests(lines), strict=True)
                 if digest not in repeated]
    return "\n".join(lines)


def lead_digest(text: str) -> int:
    """A 64-bit digest of the words of the first line of ``text`` (a :func:`signature_text`)
    that has at least :data:`LEAD_CHARS` characters; 0 when it has none. Words as the shingles
    see them (:func:`~.shingles.tokens`: case and ASCII punctuation do not count).

    >>> lead_digest("Headline\\n" + "A first paragraph, long enough to lead. " * 3) == lead_digest(
    ...     "Other headline\\n" + "a first paragraph, long enough to lead. " * 3)
    True
    >>> lead_digest("Short\\nlines only")
    0
    """
    start = 0
    while start < len(text):  # line by line, the text not split whole (the lead comes early)
        end = text.find("\n", start)
        if end < 0:
            end = len(text)
        if end - start >= LEAD_CHARS:
            line = text[start:end]
            return xxh3_64_intdigest(" ".join(tokens(line)).encode("utf-8", "surrogatepass")) or 1
        start = end + 1
    return 0
