"""One page's text, block by block, each kept or removed with the reason it went.

The cleaning of :func:`warcdeboil.site.clean.clean_page` told over again for the report: the same
template subtrees and slots cut (outermost first, as :func:`warcdeboil.page.dom.remove_template`
cuts them), the same blocks judged (repeated blocks; in content mode the model's verdict, readers'
comments and copies of kept text), but every block is kept in document order with its verdict
instead of only the kept ones. The kept blocks joined by newlines are the text the run wrote (the
tests hold the two equal page by page), so what the report shows is what the outputs hold.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from warcdeboil.page.content import (
    COMMENT_BLOCK,
    COPIED_BLOCK,
    HEADLINE,
    MARKUP_BLOCK,
    REPEATED_BLOCK,
    Block,
    ContentModel,
    block_verdicts,
    headline_blocks,
    operating_point,
    repeated_blocks,
    split_blocks,
)
from warcdeboil.page.dom import (
    BLOCK_SPLIT,
    LINE,
    SUBTREE_CUT,
    PageText,
    inline_as_spaces,
    plain_block_digests,
    template_cuts,
)
from warcdeboil.page.favor import Favor
from warcdeboil.site.clean import Mode
from warcdeboil.site.fit import SiteProfile

__all__ = ["REASONS", "SLOT", "SUBTREE", "AnnotatedPage", "Line", "annotate"]

SUBTREE = "template_subtrees"
SLOT = "template_slots"
# Every reason a block can go for, in the order the report lists them (the keys of the JSONL
# output's ``removed`` field).
REASONS = (SUBTREE, SLOT, REPEATED_BLOCK, "link_dense_block", "short_block",
           "low_content_block", COMMENT_BLOCK, COPIED_BLOCK, MARKUP_BLOCK, HEADLINE)
_LINE_BYTES = LINE.encode()


@dataclass(frozen=True, slots=True)
class Line:
    """One text block of the page: its text, why it went (None: kept), and the digest that
    names what removed it (a template subtree's hash, a slot's digest, a repeated block's
    digest; 0 for the model's verdicts and kept blocks)."""

    text: str
    reason: str | None
    digest: int = 0


@dataclass(frozen=True, slots=True)
class AnnotatedPage:
    lines: list[Line]

    @property
    def kept_text(self) -> str:
        """The text the run wrote for the page."""
        return "\n".join(line.text for line in self.lines if line.reason is None)


def _cuts(page: PageText, profile: SiteProfile | None) -> list[tuple[int, int, str, int]]:
    """The stretches of the marked text remove_template cuts, outermost only, in order:
    (start, end, reason, digest)."""
    if profile is None:
        return []
    cuts, _, _ = template_cuts(page, profile.template, profile.template_slots)
    return [(start, end, SUBTREE, page.hashes[i]) if kind == SUBTREE_CUT
            else (start, end, SLOT, page.slots[i]) for start, end, kind, i in cuts]


def _texts(marked: bytes) -> list[str]:
    """The texts of the blocks split_blocks makes of ``marked`` (those with text), without
    making the blocks: a fifth of its cost."""
    parts = BLOCK_SPLIT.split(marked.decode("utf-8", "surrogatepass"))[0::2]
    spaced = inline_as_spaces(LINE.join(parts)).split(LINE)
    return [" ".join(words) for words in map(str.split, spaced) if words]


def _verdicts(
    blocks: list[Block], repeated: Collection[int], mode: Mode, model: ContentModel | None,
    url: str, favor: Favor,
) -> list[str | None]:
    """Why each block goes (None: kept), as content.extract_blocks and without_repeated
    decide it."""
    if mode is not Mode.CONTENT:
        return [REPEATED_BLOCK if rep else None for rep in repeated_blocks(blocks, repeated)]
    return block_verdicts(blocks, model, repeated=repeated, url=url,
                          point=operating_point(favor))


def _without_headline(blocks: list[Block], verdicts: list[str | None]) -> list[str | None]:
    """``verdicts`` with the page's headline among the kept blocks gone (as
    content.without_headline decides it)."""
    kept = [i for i, verdict in enumerate(verdicts) if verdict is None]
    first = headline_blocks([blocks[i] for i in kept])
    if not first:
        return verdicts
    result = list(verdicts)
    for i in kept[:first]:
        result[i] = HEADLINE
    return result


def annotate(
    page: PageText, profile: SiteProfile | None, mode: Mode, model: ContentModel | None = None,
    url: str = "", *, favor: Favor = Favor.BALANCED, drop_headline: bool = False,
) -> AnnotatedPage:
    """Every text block of ``page``, in document order, with its verdict under ``profile``
    (``url``: the page's address, which content mode reads as the run does; ``favor`` and
    ``drop_headline``: content mode's choices, as the run's --favor and --drop-headline)."""
    cuts = _cuts(page, profile)
    marked = page.marked
    pieces: list[bytes] = []
    kept_from = 0
    for start, end, _, _ in cuts:
        pieces.append(marked[kept_from:start])
        kept_from = end
    pieces.append(marked[kept_from:])
    # The kept text as remove_template leaves it, judged as a whole (features look at
    # neighbours), then dealt back to the stretches between the cuts.
    blocks = split_blocks(_LINE_BYTES.join(pieces).decode("utf-8", "surrogatepass"))
    repeated = profile.repeated if profile is not None else frozenset()
    verdicts = _verdicts(blocks, repeated, mode, model, url, favor)
    if drop_headline and mode is Mode.CONTENT:
        verdicts = _without_headline(blocks, verdicts)
    digests = list(plain_block_digests(block.text for block in blocks))
    kept = [Line(block.text, verdict, digest if verdict == REPEATED_BLOCK else 0)
            for block, verdict, digest in zip(blocks, verdicts, digests, strict=True)]
    if not cuts:
        return AnnotatedPage(kept)
    lines: list[Line] = []
    at = 0
    for piece, cut in zip(pieces, cuts, strict=False):
        count = len(_texts(piece)) if piece else 0
        lines += kept[at : at + count]
        at += count
        start, end, reason, digest = cut
        lines += [Line(text, reason, digest) for text in _texts(marked[start:end])]
    lines += kept[at:]
    return AnnotatedPage(lines)
