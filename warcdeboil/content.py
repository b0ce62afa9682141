"""Content mode: after the site's template is gone, keep the blocks that read as main content.

The marked text of a page (see :mod:`warcdeboil.dom`) splits into *blocks*: runs of text between
block boundaries (candidate subtrees, paragraphs, headings, list items, line breaks). Each block is
judged by a logistic model over shallow features — the Kohlschütter family that boilerpipe and
dragnet use (length, link density, neighbours' length and link density, position), plus the
structure around it (its kind, the share of the page's text in its container, whether it lies in
the subtree that holds the most unlinked text). Lengths count characters, not words, so pages in
scripts without spaces between words (Chinese, Japanese, Thai) are judged like any other.

The weights live in ``content_model.json`` beside this module, written by
``scripts/train_content.py`` from half of the sites of ``../shared/eval`` (the other half is for
reporting); nothing is downloaded.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources

from .dom import CODE, HEADINGS, ITEM, QUOTE
from .errors import WarcDeboilError

__all__ = [
    "Block",
    "ContentModel",
    "FEATURE_NAMES",
    "block_features",
    "load_model",
    "select_blocks",
    "split_blocks",
]

# Block kinds, as in Block.kind: 0 plain text, 1..6 headings, then these.
KIND_ITEM, KIND_QUOTE, KIND_CODE = 7, 8, 9
_KINDS = {mark: level for level, mark in enumerate(HEADINGS, start=1)}
_KINDS.update({ITEM: KIND_ITEM, QUOTE: KIND_QUOTE, CODE: KIND_CODE})
_OPEN, _CLOSE = 0xFDD0, 0xFDD1
_SPLIT = re.compile("([\ufdd0-\ufdd2\ufdd5-\ufddb\ufddd\ufdde])")
_LINKED = re.compile("\ufdd3([^\ufdd3\ufdd4]*)")
_INLINE = re.compile("[\ufdd3\ufdd4\ufddc\ufddf\ufde0]")
# A block that ends as sentences end, in the scripts we know of.
_SENTENCE_END = re.compile("[.!?\u3002\uff01\uff1f\u2026:;\"\u201d\u00bb)\u061f\u0964]$")

# Blocks shorter than this (characters) count against the subtree they are in when looking for
# the subtree that holds the most text: they are labels, dates, buttons.
SHORT_BLOCK_CHARS = 25


@dataclass(slots=True)
class Block:
    """One text block of a page, in document order."""

    text: str  # one line: marks removed, whitespace runs as one space
    kind: int  # 0 plain, 1..6 heading level, 7 list item, 8 quote, 9 code
    chars: int  # characters other than spaces
    link_chars: int  # of which inside links
    ancestors: tuple[int, ...]  # ids of the candidate subtrees it lies in, outermost first
    marked: str = field(repr=False, default="")  # the block's text with its inline marks


def split_blocks(marked: str) -> list[Block]:
    """The blocks of a page's marked text (template already removed)."""
    blocks: list[Block] = []
    parts = _SPLIT.split(marked)
    stack = [0]
    next_id = 1
    kind = 0
    for i in range(1, len(parts), 2):
        text = parts[i - 1]
        if text and not text.isspace():
            plain = " ".join(_INLINE.sub(" ", text).split())
            if plain:
                chars = len(plain) - plain.count(" ")
                linked = 0
                if "\ufdd3" in text:
                    for run in _LINKED.findall(text):
                        linked += len(run) - run.count(" ")
                blocks.append(Block(plain, kind, chars, min(linked, chars), tuple(stack), text))
        mark = ord(parts[i])
        if mark == _OPEN:
            stack.append(next_id)
            next_id += 1
            kind = 0
        elif mark == _CLOSE:
            if len(stack) > 1:
                stack.pop()
            kind = 0
        else:
            kind = _KINDS.get(parts[i], 0)
    last = parts[-1]
    if last and not last.isspace():
        plain = " ".join(_INLINE.sub(" ", last).split())
        if plain:
            chars = len(plain) - plain.count(" ")
            linked = sum(len(r) - r.count(" ") for r in _LINKED.findall(last))
            blocks.append(Block(plain, kind, chars, min(linked, chars), tuple(stack), last))
    return blocks


FEATURE_NAMES: tuple[str, ...] = (
    "log_chars", "link_density", "sentence_end",
    "heading_1_2", "heading_3_6", "list_item", "quote_or_code",
    "chars_before_share", "position",
    "prev_log_chars", "prev_link_density", "next_log_chars", "next_link_density",
    "parent_share", "parent_link_density", "in_best_parent",
    "distance_to_largest", "log_page_chars", "share",
    "in_best_subtree", "best_subtree_share", "depth",
)


def _density(block: Block | None) -> float:
    return block.link_chars / block.chars if block is not None and block.chars else 0.0


def block_features(blocks: list[Block]) -> list[list[float]]:
    """One feature vector per block (in the order of :data:`FEATURE_NAMES`)."""
    n = len(blocks)
    if not n:
        return []
    total = sum(b.chars for b in blocks) or 1
    parent_chars: dict[int, int] = {}
    parent_links: dict[int, int] = {}
    subtree: dict[int, int] = {}
    largest, largest_weight = 0, -1 << 62
    for i, b in enumerate(blocks):
        parent = b.ancestors[-1]
        parent_chars[parent] = parent_chars.get(parent, 0) + b.chars
        parent_links[parent] = parent_links.get(parent, 0) + b.link_chars
        weight = b.chars - 3 * b.link_chars
        if weight > largest_weight:
            largest, largest_weight = i, weight
        if b.chars < SHORT_BLOCK_CHARS:
            weight -= SHORT_BLOCK_CHARS
        for node in b.ancestors:
            subtree[node] = subtree.get(node, 0) + weight
    best_parent = max(parent_chars, key=lambda p: parent_chars[p] - 2 * parent_links[p])
    best_subtree = max(subtree, key=subtree.__getitem__)
    best_share = subtree[best_subtree] / total
    log_total = math.log1p(total)
    features: list[list[float]] = []
    before = 0
    log1p = math.log1p
    for i, b in enumerate(blocks):
        prev = blocks[i - 1] if i else None
        nxt = blocks[i + 1] if i + 1 < n else None
        parent = b.ancestors[-1]
        kind = b.kind
        features.append([
            log1p(b.chars), _density(b), 1.0 if _SENTENCE_END.search(b.text) else 0.0,
            1.0 if kind in (1, 2) else 0.0, 1.0 if 3 <= kind <= 6 else 0.0,
            1.0 if kind == KIND_ITEM else 0.0, 1.0 if kind >= KIND_QUOTE else 0.0,
            before / total, i / n,
            log1p(prev.chars) if prev else 0.0, _density(prev),
            log1p(nxt.chars) if nxt else 0.0, _density(nxt),
            parent_chars[parent] / total, parent_links[parent] / (parent_chars[parent] or 1),
            1.0 if parent == best_parent else 0.0,
            (i - largest) / n, log_total, b.chars / total,
            1.0 if best_subtree in b.ancestors else 0.0, best_share, float(len(b.ancestors)),
        ])
        before += b.chars
    return features


@dataclass(frozen=True, slots=True)
class ContentModel:
    """A logistic model over :data:`FEATURE_NAMES` and the probability a block must reach."""

    weights: tuple[float, ...]
    bias: float
    threshold: float

    def keep(self, features: list[list[float]]) -> list[bool]:
        # The decision in log-odds: no exp() per block.
        cut = math.log(self.threshold / (1.0 - self.threshold)) - self.bias
        weights = self.weights
        return [sum(map(float.__mul__, row, weights)) >= cut for row in features]


@lru_cache(maxsize=1)
def load_model() -> ContentModel:
    """The shipped model (read once per process)."""
    raw = json.loads(resources.files(__package__).joinpath("content_model.json").read_text())
    if tuple(raw["features"]) != FEATURE_NAMES:
        raise WarcDeboilError("content_model.json does not match this version's features")
    return ContentModel(tuple(map(float, raw["weights"])), float(raw["bias"]),
                        float(raw["threshold"]))


def select_blocks(blocks: list[Block], model: ContentModel | None = None) -> list[bool]:
    """Which blocks are main content."""
    if not blocks:
        return []
    return (model or load_model()).keep(block_features(blocks))


# Why a block judged not content was removed, by its most telling feature (for reporting only:
# the model decides, these name the decision).
LINK_DENSE = 0.5  # share of a block's characters inside links


def removal_reason(block: Block) -> str:
    if block.chars and block.link_chars >= LINK_DENSE * block.chars:
        return "link_dense_block"
    if block.chars < SHORT_BLOCK_CHARS:
        return "short_block"
    return "low_content_block"


@dataclass(slots=True)
class Extraction:
    """The main content of a page."""

    blocks: list[Block]  # kept, in document order
    removed: dict[str, int]  # blocks removed by reason (template subtrees counted by the caller)

    @property
    def text(self) -> str:
        return "\n".join(block.text for block in self.blocks)


def extract(marked: str, model: ContentModel | None = None) -> Extraction:
    """Main content of a page's marked text (template already removed)."""
    blocks = split_blocks(marked)
    keep = select_blocks(blocks, model)
    kept: list[Block] = []
    removed: dict[str, int] = {}
    for block, ok in zip(blocks, keep, strict=True):
        if ok:
            kept.append(block)
        else:
            reason = removal_reason(block)
            removed[reason] = removed.get(reason, 0) + 1
    return Extraction(kept, removed)
