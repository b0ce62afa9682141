"""Content mode: after the site's template is gone, keep the blocks that read as main content.

The marked text of a page (see :mod:`warcdeboil.page.dom`) splits into *blocks*: runs of text
between block boundaries (candidate subtrees, paragraphs, headings, list items, line breaks). Each
block is judged by a logistic model over shallow features — the Kohlschütter family that boilerpipe
and dragnet use (length, link density, neighbours' length and link density, position), plus the
structure around it (its kind, the share of the page's text in its container, whether it lies in the
subtree that holds the most unlinked text) and the marks of a teaser list (how many siblings its
container has, whether it starts inside a link, whether its text is on the page twice). Lengths
count characters, not words, so pages in scripts without spaces between words (Chinese, Japanese,
Thai) are judged like any other.

The weights live in ``content_model.json`` beside this module, written by
``scripts/train_content.py`` from half of the sites of ``../shared/eval`` (the other half is for
reporting); nothing is downloaded.
"""

from __future__ import annotations

import json
import math
import re
import struct
from collections import Counter
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache, reduce
from importlib import resources
from itertools import accumulate, compress, count, groupby, islice, repeat, starmap
from operator import add, attrgetter, ge, itemgetter, mul, ne, sub, truediv
from typing import TypeVar

from warcdeboil.errors import WarcDeboilError

from .copies import find_copies
from .dom import (
    BLOCK_RUN_SPLIT,
    CODE,
    HEADINGS,
    ITEM,
    QUOTE,
    ROLE_ASIDE,
    ROLE_CHROME,
    ROLE_CLOSE,
    ROLE_COMMENTS,
    ROLE_MAIN,
    ROLE_META,
    ROLE_OPEN,
    ROLES,
    compiled_walker,
    inline_as_spaces,
    plain_block_digests,
)
from .favor import Favor, OperatingPoint

__all__ = [
    "Block",
    "COPIED_BLOCK",
    "HEADLINE",
    "headline_blocks",
    "MARKUP_BLOCK",
    "OPERATING_POINTS",
    "CONTEXT_FEATURE_NAMES",
    "ContentModel",
    "FEATURE_NAMES",
    "REPEATED_BLOCK",
    "block_features",
    "block_verdicts",
    "comment_roles",
    "context_columns",
    "copied_blocks",
    "discussion_address",
    "extract",
    "extract_blocks",
    "feature_columns",
    "core_span",
    "fill_core_gaps",
    "is_listing",
    "is_markup",
    "is_thread",
    "keep_items",
    "keep_prose_items",
    "judge",
    "with_posts",
    "without_headline",
    "without_linked_chrome",
    "load_model",
    "operating_point",
    "repeated_blocks",
    "section_titles",
    "tightened",
    "select_blocks",
    "split_blocks",
    "without_repeated",
]

# Block kinds, as in Block.kind: 0 plain text, 1..6 headings, then these.
KIND_ITEM, KIND_QUOTE, KIND_CODE = 7, 8, 9
_KINDS = {mark: level for level, mark in enumerate(HEADINGS, start=1)}
_KINDS.update({ITEM: KIND_ITEM, QUOTE: KIND_QUOTE, CODE: KIND_CODE})
_OPEN_MARK, _CLOSE_MARK, _LINE_MARK, _LINK_OPEN = "\ufdd0", "\ufdd1", "\ufdd2", "\ufdd3"
_LINK_CLOSE = "\ufdd4"
_ROLE_OPENS = {mark: role for role, mark in enumerate(ROLE_OPEN)}
_ROLE_CLOSES = {mark: role for role, mark in enumerate(ROLE_CLOSE)}
_LINKED = re.compile("\ufdd3([^\ufdd3\ufdd4]*)")
# A block that ends as sentences end, in the scripts we know of.
_SENTENCE_END = frozenset(".!?\u3002\uff01\uff1f\u2026:;\"\u201d\u00bb)\u061f\u0964")
_SENTENCE_END_CHARS = "".join(sorted(_SENTENCE_END))

_CHARS, _LINK_CHARS, _KIND = attrgetter("chars"), attrgetter("link_chars"), attrgetter("kind")
_ANCESTORS, _TEXT, _LAST = attrgetter("ancestors"), attrgetter("text"), itemgetter(-1)
_STARTS_LINKED = attrgetter("link_first")
_LINK_FIRST = (_LINK_OPEN, " " + _LINK_OPEN)

_V = TypeVar("_V")
_N = TypeVar("_N", int, float)

# Blocks shorter than this (characters) count against the subtree they are in when looking for
# the subtree that holds the most text: they are labels, dates, buttons.
SHORT_BLOCK_CHARS = 25


# The innermost candidate subtrees a block's ancestors name: every page of ../shared has blocks
# under 50 at most, and a page of 10,000 nested divs, each with its text, named them all for each
# block: 7 s and 400 MB to judge its blocks.
MAX_ANCESTORS = 128


@dataclass(slots=True)
class Block:
    """One text block of a page, in document order."""

    text: str  # one line: marks removed, whitespace runs as one space
    kind: int  # 0 plain, 1..6 heading level, 7 list item, 8 quote, 9 code
    chars: int  # characters other than spaces
    link_chars: int  # of which inside links
    ancestors: tuple[int, ...]  # ids of the candidate subtrees it lies in, outermost first (the
    # innermost MAX_ANCESTORS)
    marked: str = field(repr=False, default="")  # the block's text with its inline marks
    roles: int = 0  # bit r set: the block lies in an element of role r (see dom.ROLE_OPEN)
    link_first: bool = False  # its text starts inside a link (a teaser's headline, a menu entry)


def split_blocks(marked: str) -> list[Block]:
    """The blocks of a page's marked text (template already removed): in C where the compiled
    walks were built (:mod:`warcdeboil.page.walker`), else :func:`_split_blocks`."""
    walker = compiled_walker()
    if walker is not None:
        blocks: list[Block] = walker.split_blocks(marked, Block, MAX_ANCESTORS)
        return blocks
    return _split_blocks(marked)


def _split_blocks(marked: str, max_ancestors: int = MAX_ANCESTORS) -> list[Block]:
    """:func:`split_blocks` in Python: the fallback, and the oracle of the C version."""
    # The text between runs of block marks, normalised with the loops in C (map over sub, split,
    # join); only the walk over the marks, which tracks kind and ancestors, is Python. A blank
    # text between two marks is never a block and changes no state: a run of marks with only
    # spaces between them is split off as one (dragnet: 209 runs a page for 901 marks; the
    # split 0.29 -> 0.18 s for all pages, split_blocks about 4 % faster).
    parts = BLOCK_RUN_SPLIT.split(marked)
    texts = parts[0::2]
    runs = parts[1::2]
    # Inline marks become spaces (a mark for a space), then each block's whitespace folds. The
    # texts are joined with a block mark, which none of them holds, and cut again with str.split:
    # one regex split a page instead of two (with the loop's changes below, split_blocks 13%
    # faster: interleaved A/B on dragnet's 1,381 pages).
    spaced = inline_as_spaces(_OPEN_MARK.join(texts)).split(_OPEN_MARK)
    plains = map(" ".join, map(str.split, spaced))
    blocks: list[Block] = []
    stack = [0]
    ancestors: tuple[int, ...] | None = (0,)  # None: the stack changed since the last block
    next_id = 1
    kind = 0
    roles = 0
    depths = [0] * ROLES  # open elements of each role around the current block
    runs.append("")  # no run after the last text: zip then walks every text
    in_link = False  # inside a link opened before a block mark (see below)
    for plain, text, run in zip(plains, texts, runs, strict=True):
        if in_link:
            text = _LINK_OPEN + text  # what follows is linked from its start
        has_link = _LINK_OPEN in text  # (a text inside a link starts with one: see above)
        if plain:
            chars = len(plain) - plain.count(" ")
            linked = 0
            first = False
            if has_link:
                runs_linked = "".join(_LINKED.findall(text))
                linked = min(len(runs_linked) - runs_linked.count(" "), chars)
                # A text follows its block mark and one space (see dom.analyse).
                first = text.startswith(_LINK_FIRST)
            if ancestors is None:
                ancestors = tuple(stack[-max_ancestors:])
            blocks.append(Block(plain, kind, chars, linked, ancestors, text, roles, first))
        # A link can hold block elements (a teaser: <a><div>headline</div><p>summary</p></a>):
        # it stays open across block marks until its close mark.
        if has_link:
            in_link = text.rfind(_LINK_OPEN) > text.rfind(_LINK_CLOSE)
        # The marks of the run in order (its spaces are no marks), by how often they come
        # (dragnet: lines, then candidates, then roles).
        for mark in run.replace(" ", "") if " " in run else run:
            if mark == _LINE_MARK:
                kind = 0
            elif mark == _OPEN_MARK:
                stack.append(next_id)
                next_id += 1
                ancestors = None
                kind = 0
            elif mark == _CLOSE_MARK:
                if len(stack) > 1:
                    stack.pop()
                    ancestors = None
                kind = 0
            elif (role := _ROLE_OPENS.get(mark)) is not None:  # role marks keep the block kind
                depths[role] += 1
                roles |= 1 << role
            elif (role := _ROLE_CLOSES.get(mark)) is not None:
                if depths[role]:
                    depths[role] -= 1
                    if not depths[role]:
                        roles &= ~(1 << role)
            else:
                kind = _KINDS.get(mark, 0)
    return blocks


FEATURE_NAMES: tuple[str, ...] = (
    "log_chars", "link_density", "sentence_end",
    "heading_1_2", "heading_3_6", "list_item", "quote_or_code",
    "chars_before_share", "position",
    "prev_log_chars", "prev_link_density", "next_log_chars", "next_link_density",
    "parent_share", "parent_link_density", "in_best_parent",
    "distance_to_largest", "log_page_chars", "share",
    "in_best_subtree", "best_subtree_share", "depth",
    "in_comments", "in_aside", "in_chrome", "in_meta", "in_main",
    "starts_with_link", "parent_siblings", "repeated_in_page",
)


def feature_columns(blocks: list[Block]) -> list[list[float]]:
    """The features of the blocks, one column per feature of :data:`FEATURE_NAMES`: in C where
    the compiled walks were built (:mod:`warcdeboil.page.walker`), else
    :func:`_feature_columns`."""
    walker = compiled_walker()
    if walker is not None and type(blocks) is list:
        columns: list[list[float]] | None = walker.feature_columns(
            blocks, _SENTENCE_END_CHARS, SHORT_BLOCK_CHARS)
        if columns is not None:
            return columns
    return _feature_columns(blocks)


def _feature_columns(blocks: list[Block]) -> list[list[float]]:
    """:func:`feature_columns` in Python: the fallback, and the oracle of the C version.

    Built a column at a time with ``map`` (the loops run in C): a page has hundreds of blocks,
    and a Python loop building one row per block was the largest cost of content mode. Only the
    sums over the candidate ancestors of each run of blocks (see :func:`_runs`) loop in Python.
    """
    n = len(blocks)
    if not n:
        return [[] for _ in FEATURE_NAMES]
    chars = list(map(_CHARS, blocks))
    links = list(map(_LINK_CHARS, blocks))
    kinds = list(map(_KIND, blocks))
    ancestors = list(map(_ANCESTORS, blocks))
    parents = list(map(_LAST, ancestors))
    total = sum(chars) or 1
    log_chars = list(map(math.log1p, chars))
    density = list(map(truediv, links, chars))  # a block has at least one character

    weights = list(map(sub, chars, map(mul, links, repeat(3))))
    largest = weights.index(max(weights))
    # The subtree with the most text: links, and short blocks, count against it.
    subtree_weights = [w - SHORT_BLOCK_CHARS if c < SHORT_BLOCK_CHARS else w
                       for w, c in zip(weights, chars, strict=True)]

    # Sums per run of blocks with the same ancestors, then per node: integers, so the grouping
    # leaves them exact, and the dicts fill in the order the blocks first name their nodes (the
    # order max() breaks ties in).
    sum_chars, sum_links = [0, *accumulate(chars)], [0, *accumulate(links)]
    sum_weights = [0, *accumulate(subtree_weights)]
    parent_chars: dict[int, int] = {}
    parent_links: dict[int, int] = {}
    subtree: dict[int, int] = {}
    runs = _runs(ancestors)
    for nodes, start, end in runs:
        parent = nodes[-1]
        parent_chars[parent] = parent_chars.get(parent, 0) + sum_chars[end] - sum_chars[start]
        parent_links[parent] = parent_links.get(parent, 0) + sum_links[end] - sum_links[start]
        weight = sum_weights[end] - sum_weights[start]
        for node in nodes:
            subtree[node] = subtree.get(node, 0) + weight
    best_parent = max(parent_chars, key=lambda p: parent_chars[p] - 2 * parent_links[p])
    best_subtree = max(subtree, key=subtree.__getitem__)

    before = sum_chars[:n]
    rows_parent_chars = list(map(parent_chars.__getitem__, parents))
    rows_parent_links = list(map(parent_links.__getitem__, parents))
    return [
        log_chars,
        density,
        [1.0 if text[-1] in _SENTENCE_END else 0.0 for text in map(_TEXT, blocks)],
        [1.0 if k in (1, 2) else 0.0 for k in kinds],
        [1.0 if 3 <= k <= 6 else 0.0 for k in kinds],
        [1.0 if k == KIND_ITEM else 0.0 for k in kinds],
        [1.0 if k >= KIND_QUOTE else 0.0 for k in kinds],
        # Divisions with map, not comprehensions: the same operator, run in C.
        list(map(truediv, before, repeat(total))),
        list(map(truediv, range(n), repeat(n))),
        [0.0, *log_chars[:-1]],
        [0.0, *density[:-1]],
        [*log_chars[1:], 0.0],
        [*density[1:], 0.0],
        list(map(truediv, rows_parent_chars, repeat(total))),
        list(map(truediv, rows_parent_links, rows_parent_chars)),
        [1.0 if p == best_parent else 0.0 for p in parents],
        list(map(truediv, range(-largest, n - largest), repeat(n))),
        [math.log1p(total)] * n,
        list(map(truediv, chars, repeat(total))),
        [1.0 if best_subtree in nodes else 0.0 for nodes in ancestors],
        [subtree[best_subtree] / total] * n,
        list(map(float, map(len, ancestors))),
        *_role_columns(blocks),
        list(map(float, map(_STARTS_LINKED, blocks))),
        _parent_siblings(runs),
        _repeated_in_page(blocks),
    ]


def _repeated_in_page(blocks: list[Block]) -> list[float]:
    """Per block, 1.0 when its text is on the page more than once (a ticker and its copy, the
    headlines of a carousel and of its thumbnails)."""
    texts = list(map(_TEXT, blocks))
    counts = Counter(texts)
    if len(counts) == len(texts):
        return [0.0] * len(texts)
    return list(map(float, map(_MORE_THAN_ONE, map(counts.__getitem__, texts))))


_MORE_THAN_ONE = (1).__lt__  # count -> 1 < count, called from map() without a Python frame


def _parent_siblings(runs: list[_Run]) -> list[float]:
    """Per block, log1p of how many candidate subtrees that hold text share its parent's parent
    (the items of a teaser list are many; the paragraphs of an article share one parent)."""
    children: dict[int, set[int]] = {}
    for nodes, _, _ in runs:
        if len(nodes) > 1:
            children.setdefault(nodes[-2], set()).add(nodes[-1])
    column: list[float] = []
    for nodes, start, end in runs:
        value = math.log1p(len(children[nodes[-2]])) if len(nodes) > 1 else 0.0
        column += [value] * (end - start)
    return column


_ROLES = attrgetter("roles")

# A run of blocks: their ancestors, the index of the first and the index after the last.
_Run = tuple[tuple[int, ...], int, int]


def _runs(ancestors: list[tuple[int, ...]]) -> list[_Run]:
    """The runs of consecutive blocks with equal ancestors, in document order.

    Sums per node over runs, not blocks: dragnet's pages have 80 blocks in 31 runs, under 8.8
    ancestors a block, so the Python loops over (run, node) do a third of the dict updates that
    loops over (block, node) did. Found with ``map`` and ``compress`` (the loops run in C).
    """
    n = len(ancestors)
    starts = [0, *compress(range(1, n), map(ne, ancestors, islice(ancestors, 1, None)))]
    return list(zip(map(ancestors.__getitem__, starts), starts, [*starts[1:], n], strict=True))


def _node_spans(runs: list[_Run]) -> dict[int, list[int]]:
    """Per node, the blocks inside it as flat ``[start, end, start, end, ...]`` spans.

    A candidate subtree's blocks are consecutive, so a node has one span when the blocks come
    from :func:`split_blocks`; other lists of blocks get one span per stretch. Nodes are keyed in
    the order the blocks first name them."""
    spans: dict[int, list[int]] = {}
    for nodes, start, end in runs:
        for node in nodes:
            node_spans = spans.get(node)
            if node_spans is None:
                spans[node] = [start, end]
            elif node_spans[-1] == start:
                node_spans[-1] = end
            else:
                node_spans += (start, end)
    return spans


def _over_spans(values: list[_V], spans: list[int]) -> list[_V]:
    """The values of the blocks in ``spans`` (see :func:`_node_spans`), in document order."""
    stretches = zip(spans[0::2], spans[1::2], strict=True)
    return [v for start, end in stretches for v in values[start:end]]


def _role_columns(blocks: list[Block]) -> list[list[float]]:
    """Per role, 1.0 for the blocks inside an element of that role."""
    roles = list(map(_ROLES, blocks))
    if not any(roles):
        zeros = [0.0] * len(blocks)
        return [zeros] * ROLES
    return [[1.0 if r & (1 << role) else 0.0 for r in roles] for role in range(ROLES)]


def block_features(blocks: list[Block]) -> list[list[float]]:
    """One feature vector per block (in the order of :data:`FEATURE_NAMES`)."""
    return [list(row) for row in zip(*feature_columns(blocks), strict=True)]


# The second stage's own features: what the first stage made of the block's surroundings. A
# paragraph between two kept paragraphs is content even when it is short; a long block far from
# everything else that was kept (a teaser, a comment) is not, even when it reads well.
CONTEXT_FEATURE_NAMES: tuple[str, ...] = (
    "score", "prev_prob", "next_prob", "window_prob", "parent_prob",
    "parent_kept_share", "kept_before", "kept_after", "in_core",
)
# Blocks on each side of a block whose first-stage probabilities make its window.
CONTEXT_WINDOW = 3
# The core is the deepest candidate subtree that holds at least this share of the characters
# the first stage kept: the container of the main content.
CORE_SHARE = 0.8
# First-stage log-odds are clipped to this before they become a feature (a block the first
# stage is sure of should not outweigh every other feature).
SCORE_CLIP = 8.0


def context_columns(blocks: list[Block], scores: list[float]) -> list[list[float]]:
    """The second stage's features (:data:`CONTEXT_FEATURE_NAMES`), a column each, from the
    first stage's log-odds ``scores`` of the blocks: in C where the compiled walks were built,
    else :func:`_context_columns`."""
    walker = compiled_walker()
    if walker is not None and type(blocks) is list and type(scores) is list:
        columns: list[list[float]] | None = walker.context_columns(
            blocks, scores, CONTEXT_WINDOW, CORE_SHARE, SCORE_CLIP)
        if columns is not None:
            return columns
    return _context_columns(blocks, scores)


def _context_columns(blocks: list[Block], scores: list[float]) -> list[list[float]]:
    """:func:`context_columns` in Python: the fallback, and the oracle of the C version."""
    n = len(blocks)
    # min(SCORE_CLIP, max(-SCORE_CLIP, score)) with comparisons instead of two calls a block.
    high, low = SCORE_CLIP, -SCORE_CLIP
    clipped = [(s if s < high else high) if s > low else low for s in scores]
    exp = math.exp
    probs = [1.0 / (1.0 + exp(-x)) for x in clipped]  # the logistic function, inline
    chars = list(map(_CHARS, blocks))
    kept = list(map(mul, probs, chars))
    total_kept = sum(kept) or 1.0
    before = [0.0, *accumulate(kept)][:n]

    # Each block's window, from running sums: characters kept over characters, itself left out.
    sum_chars = [0, *accumulate(chars)]
    window_chars = list(map(sub, _window_totals(sum_chars, n), chars))
    window_kept = map(sub, _window_totals([0.0, *accumulate(kept)], n), kept)
    if 0 in window_chars:  # only a page of one block: its window is empty
        window = [k / c if c else 0.0 for k, c in zip(window_kept, window_chars, strict=True)]
    else:
        window = list(map(truediv, window_kept, window_chars))

    # What each node kept, summed block by block in document order as before (a float sum
    # regrouped would change in the last bits); what it holds (integers: any grouping).
    ancestors = list(map(_ANCESTORS, blocks))
    node_kept: dict[int, float] = {}
    node_chars: dict[int, int] = {}
    for node, spans in _node_spans(_runs(ancestors)).items():
        if len(spans) == 2:  # one stretch of blocks, as from split_blocks
            start, end = spans
            node_kept[node] = reduce(add, kept[start:end], 0.0)
            node_chars[node] = sum_chars[end] - sum_chars[start]
        else:
            node_kept[node] = reduce(add, _over_spans(kept, spans), 0.0)
            node_chars[node] = sum(_over_spans(chars, spans))
    # The core: of the subtrees holding CORE_SHARE of what was kept, the one with the fewest
    # characters (the deepest: every such subtree lies on one path from the root).
    core = min((node for node, k in node_kept.items() if k >= CORE_SHARE * total_kept),
               key=node_chars.__getitem__, default=0)
    parents = list(map(_LAST, ancestors))
    parents_kept = list(map(node_kept.__getitem__, parents))
    return [
        clipped,
        [0.0, *probs[:-1]],
        [*probs[1:], 0.0],
        window,
        list(map(truediv, parents_kept, map(node_chars.__getitem__, parents))),
        list(map(truediv, parents_kept, repeat(total_kept))),
        list(map(truediv, before, repeat(total_kept))),
        [1.0 - (b + k) / total_kept for b, k in zip(before, kept, strict=True)],
        [1.0 if core in nodes else 0.0 for nodes in ancestors],
    ]


def _window_totals(prefix: list[_N], n: int) -> list[_N]:
    """Per block ``i`` of ``n``, ``prefix[hi] - prefix[lo]`` for its window ``lo = max(0, i -
    CONTEXT_WINDOW)``, ``hi = min(n, i + CONTEXT_WINDOW + 1)``, from running sums ``prefix``
    (``n + 1`` of them, from 0): the edges as slices, the differences with ``map``."""
    edge = min(CONTEXT_WINDOW, n)
    highs = prefix[CONTEXT_WINDOW + 1:] + [prefix[n]] * edge
    lows = [prefix[0]] * edge + prefix[:n - edge]
    return list(map(sub, highs, lows))


def _weighted_sum(
    columns: list[list[float]], weights: tuple[float, ...], bias: float
) -> list[float]:
    """``bias`` plus the weighted columns, per block: in C where the compiled walks were built
    (the same doubles, tested), else with numpy.

    All blocks at once with numpy: each column times its weight, then added to ``bias`` one
    column after another, which are the operations of ``bias + c0 * w0 + c1 * w1 + ...`` per
    block in their order (IEEE products and sums of doubles, no pairwise or compensated
    summation), so a score is, to the last bit, what Python 3.11's ``sum`` of a row gives (from
    3.12, ``sum`` compensates its rounding: scores no longer depend on the Python version). A
    ``sum`` per row was 13 % of pass 2's instructions on dragnet (first stage: 0.22 ms a page,
    now 0.13). A column of zeros adds nothing and is left out (a role or kind no block has);
    exact, as x + 0.0 == x for every x but -0.0, and a sum that starts from a non-zero bias,
    or from 0.0, is never -0.0.
    """
    walker = compiled_walker()
    if walker is not None and type(columns) is list and type(weights) is tuple and columns:
        scores: list[float] | None = walker.weighted_sum(columns, weights, bias)
        if scores is not None:
            return scores
    return _weighted_sum_python(columns, weights, bias)


def _weighted_sum_python(
    columns: list[list[float]], weights: tuple[float, ...], bias: float
) -> list[float]:
    """:func:`_weighted_sum` with numpy: the fallback, and the oracle of the C version."""
    used = [(column, weight) for column, weight in zip(columns, weights, strict=True)
            if weight and (any(column) or not math.isfinite(weight))]
    if not used:
        return [bias] * len(columns[0])
    # Imported here: a run that judges no page (template mode) need not load numpy.
    import numpy as np

    kept_columns, kept_weights = zip(*used, strict=True)
    # The columns packed as doubles by struct (a loop in C a column) and read by numpy as they
    # are: np.array of the lists discovered their shape and type number by number, 2.0 G of
    # pass 2's 15.4 G instructions on dragnet (packed: 30 % less time, the same doubles).
    # A bytearray, so that numpy writes the products in place (no second buffer).
    blocks = len(kept_columns[0])
    packed = bytearray().join(starmap(struct.Struct(f"{blocks}d").pack, kept_columns))
    terms = np.frombuffer(packed, dtype=np.float64).reshape(len(kept_columns), blocks)
    scores = np.full(blocks, bias, dtype=np.float64)
    with np.errstate(all="ignore"):  # inf and NaN come as Python floats give them: silently
        terms *= np.array(kept_weights, dtype=np.float64)[:, None]
        for term in terms:
            scores += term
    return scores.tolist()  # type: ignore[no-any-return]


@dataclass(frozen=True, slots=True)
class ContentModel:
    """Two logistic stages and the probability a block must reach.

    The first stage judges each block by :data:`FEATURE_NAMES`; the second by the same features
    and :data:`CONTEXT_FEATURE_NAMES`, what the first made of its neighbours and containers. A
    model without second-stage weights decides by the first stage alone.
    """

    weights: tuple[float, ...]
    bias: float
    threshold: float
    context_weights: tuple[float, ...] = ()
    context_bias: float = 0.0

    def first_scores(self, columns: list[list[float]]) -> list[float]:
        """The first stage's log-odds per block, from :func:`feature_columns`."""
        return _weighted_sum(columns, self.weights, self.bias)

    def keep_columns(
        self, columns: list[list[float]], blocks: list[Block], threshold: float | None = None
    ) -> list[bool]:
        """Which blocks reach the threshold (the model's, or ``threshold``; decided in log-odds:
        no exp() for the decision)."""
        if not columns or not columns[0]:
            return []
        scores = self.first_scores(columns)
        if self.context_weights:
            columns = columns + context_columns(blocks, scores)
            scores = _weighted_sum(columns, self.context_weights, self.context_bias)
        return list(map(ge, scores, repeat(self._cut(threshold))))

    def _cut(self, threshold: float | None = None) -> float:
        p = self.threshold if threshold is None else threshold
        return math.log(p / (1.0 - p))


@lru_cache(maxsize=1)
def load_model() -> ContentModel:
    """The shipped model (read once per process)."""
    raw = json.loads(resources.files(__package__).joinpath("content_model.json").read_text())
    context = raw.get("context")
    if tuple(raw["features"]) != FEATURE_NAMES or (
        context is not None and tuple(context["features"]) != FEATURE_NAMES + CONTEXT_FEATURE_NAMES
    ):
        raise WarcDeboilError("content_model.json does not match this version's features")
    return ContentModel(
        tuple(map(float, raw["weights"])), float(raw["bias"]), float(raw["threshold"]),
        tuple(map(float, context["weights"])) if context else (),
        float(context["bias"]) if context else 0.0,
    )


def select_blocks(blocks: list[Block], model: ContentModel | None = None) -> list[bool]:
    """Which blocks the model alone judges main content (at its own threshold; see
    :func:`judge` for the page-level rules)."""
    if not blocks:
        return []
    return (model or load_model()).keep_columns(feature_columns(blocks), blocks)


# Why a block judged not content was removed, by its most telling feature (for reporting only:
# the model decides, these name the decision).
LINK_DENSE = 0.5  # share of a block's characters inside links


REPEATED_BLOCK = "repeated_block"
COMMENT_BLOCK = "comment_block"
COPIED_BLOCK = "copied_block"
MARKUP_BLOCK = "markup_block"
_IN_COMMENTS = 1 << ROLE_COMMENTS

# A block of HTML source shown as text is no content, whatever the model made of its words: a
# "republish this story" box holding the story's markup, a video's embed code, a gallery's
# captions escaped twice. It has MARKUP_TAGS tags or more, covering MARKUP_SHARE of its text,
# one of them with an attribute; prose about HTML names tags (``<header>``, ``<commit>``) but
# rarely writes their attributes, and code blocks are left alone. Chosen on WCXB's dev split and
# the five sets of ../shared/eval: WCXB dev 0.8370 -> 0.8375, dragnet 0.9257 -> 0.9263, the
# others unchanged; without the attribute, WCXB's documentation lost 0.0007 (git's <commit>,
# MDN's <header>), and two tags covering 2 % also took prose that quotes <font color="blue">.
MARKUP_TAGS = 3
MARKUP_SHARE = 0.05
_TAG = re.compile(r"</?[a-zA-Z][a-zA-Z0-9-]*(?:\s[^<>]*)?/?>")
_TAG_WITH_ATTRIBUTE = re.compile(r"<[a-zA-Z][\w-]*\s+[\w-]+\s*=\s*[\"']")


def is_markup(block: Block) -> bool:
    """Whether a block (no code block) is HTML source shown as text (see :data:`MARKUP_TAGS`).

    >>> source = '<h1>Title</h1> <p class="byline">by A. Writer</p> <p>Text</p>'
    >>> is_markup(Block(source, 0, len(source), 0, ()))
    True
    >>> prose = "Close tags like <br /> and wrap the <header> and <main> elements."
    >>> is_markup(Block(prose, 0, len(prose), 0, ()))
    False
    """
    text = block.text
    if "<" not in text or block.kind == KIND_CODE or not _TAG_WITH_ATTRIBUTE.search(text):
        return False
    tags = _TAG.findall(text)
    return len(tags) >= MARKUP_TAGS and sum(map(len, tags)) >= MARKUP_SHARE * len(text)


def removal_reason(block: Block) -> str:
    """Why a block the model dropped went (one the site repeats is named by the caller, which
    knows the digests): most of it is links, it is short, or it reads as boilerplate."""
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


# The reason the page's headline goes under --drop-headline (see without_headline).
HEADLINE = "headline"


def headline_blocks(kept: Sequence[Block]) -> int:
    """How many of the kept blocks are the page's headline (see :func:`without_headline`): the
    headings they open with, when a block that is not a heading follows; else 0."""
    return next((i for i, block in enumerate(kept) if not 1 <= block.kind <= 6), 0)


def without_headline(content: Extraction) -> Extraction:
    """``content`` without the page's headline: the headings that open the kept text, when a
    block that is not a heading follows them (a page of headings alone keeps them). For those
    who score or train against text without it, as scrapinghub's gold and trafilatura's text
    leave it out (``title`` keeps the page's title); off by default, as the other sets' gold
    starts with it (benchmarks/results/ceiling-2026-11-28.md: scrapinghub 0.937 -> 0.947, the
    others 0.001 to 0.012 lower)."""
    blocks = content.blocks
    first = headline_blocks(blocks)
    if not first:
        return content
    removed = dict(content.removed)
    removed[HEADLINE] = removed.get(HEADLINE, 0) + first
    return Extraction(blocks[first:], removed)


def repeated_blocks(blocks: list[Block], repeated: Collection[int]) -> list[bool]:
    """Which blocks the site repeats (their digest in ``repeated``, the site profile's)."""
    if not repeated:
        return [False] * len(blocks)
    return [digest in repeated for digest in plain_block_digests(map(_TEXT, blocks))]


# A heading the site repeats is the title of a section when the kept text follows it: "About
# This Game", "Description", "Specifications" on each of a shop's product pages, a blog's name
# or a column's title above each of its posts. The repeated-block rule removed them with the
# site's boilerplate ("Related stories", "Share this"), which precede lists the model dropped.
# A heading outside links that the model kept, directly followed by a block kept and not
# repeated, stays. Calibration sites, in process: dragnet +0.0011 (50 pages up, 3 down by
# 0.003 at most), cleanportaleval +0.0012, WCXB +0.0001 (products +0.001), the others
# unchanged; headings of levels 1-2 only: dragnet +0.0007.


def section_titles(blocks: list[Block], keep: list[bool], is_repeated: list[bool],
                   dropped_roles: int = 0) -> list[bool]:
    """``is_repeated`` without the headings that title the kept text after them: outside links,
    followed by a block ``keep`` holds, the site does not repeat, and that lies in no element of
    ``dropped_roles``."""
    result = is_repeated
    for i in compress(range(len(blocks) - 1), is_repeated):
        block, after = blocks[i], blocks[i + 1]
        if 1 <= block.kind <= 6 and not block.link_chars and keep[i + 1] \
                and not is_repeated[i + 1] and not after.roles & dropped_roles:
            if result is is_repeated:
                result = list(is_repeated)
            result[i] = False
    return result


def without_repeated(blocks: list[Block], repeated: Collection[int]) -> Extraction:
    """Every block but those the site repeats (template mode's blocks), counted as removed."""
    kept = [b for b, again in zip(blocks, repeated_blocks(blocks, repeated), strict=True)
            if not again]
    dropped = len(blocks) - len(kept)
    return Extraction(kept, {REPEATED_BLOCK: dropped} if dropped else {})


# A page whose kept text lies in readers' comments for more than this share is a discussion (a
# forum thread, a Q&A page): its comments are its content, and the comments rule keeps them. On
# the pages of scripts/convert_wceb.py (118 forum threads among 999 pages), held-out sites: mean
# F1 0.757 -> 0.762; ../shared/eval held-out: cleaneval 0.904 -> 0.907, dragnet 0.911 -> 0.912,
# the others unchanged (0.5 and 0.7 were tried too: dragnet fell to 0.907 and 0.909).
DISCUSSION_SHARE = 0.9

# A thread whose posts all lie in comment elements: the model, which weighs "in a comments
# element" heavily against a block, keeps next to nothing of it. When the comments hold at least
# THREAD_COMMENT_CHARS characters and the model kept fewer than THREAD_OUTSIDE_CHARS outside them
# (there is no article beside them), the page is judged again as if no block were in comments,
# and its comments stay. On WCXB's calibration sites (scripts/convert_wceb.py), forum threads
# 0.579 -> 0.638 mean F1, no other page type moved; ../shared/eval unchanged to the third decimal.
# Thresholds chosen on calibration sites among 100-2000 and 0-5000 characters: beyond 500 outside,
# dragnet's calibration sites fall (0.940 -> 0.936 at 750), whose gold leaves comments out.
THREAD_COMMENT_CHARS = 3000
THREAD_OUTSIDE_CHARS = 500
_IN_COMMENTS_COLUMN = FEATURE_NAMES.index("in_comments")

# A page none of whose blocks holds LISTING_PROSE_CHARS characters outside links has no
# paragraph of prose: a listing, a collection, a product's attributes, a schedule, a table. Its
# content is the short items the model, taught mostly on articles, scores just below the bar; on
# such a page a block is kept from probability LISTING_THRESHOLD up. On WCXB's calibration sites
# (scripts/convert_wceb.py), mean F1 all 0.744 -> 0.761, listings 0.451 -> 0.532, collections
# 0.317 -> 0.430, products 0.507 -> 0.527, services 0.680 -> 0.696, articles unchanged;
# ../shared/eval calibration sites: cleaneval 0.915 -> 0.924, dragnet, l3s-gn1 and scrapinghub
# -0.001. Chosen on calibration sites among 100-250 characters and 0.1-0.3: the largest gain on
# WCXB that cost no other set's calibration sites more than 0.001 (0.1 cost l3s-gn1 0.003,
# 200 characters cost dragnet 0.004, as its gold leaves short-paragraph pages' teasers out).
LISTING_PROSE_CHARS = 150
LISTING_THRESHOLD = 0.2


def comment_roles(blocks: list[Block], keep: list[bool]) -> int:
    """The role bits whose blocks go whatever the model made of them: readers' comments, unless
    they hold more than :data:`DISCUSSION_SHARE` of the characters the model kept."""
    kept = in_comments = 0
    for block, ok in zip(blocks, keep, strict=True):
        if ok:
            kept += block.chars
            if block.roles & _IN_COMMENTS:
                in_comments += block.chars
    return 0 if kept and in_comments > DISCUSSION_SHARE * kept else _IN_COMMENTS


def is_listing(blocks: list[Block]) -> bool:
    """Whether no block of the page holds :data:`LISTING_PROSE_CHARS` characters outside links."""
    unlinked = map(sub, map(_CHARS, blocks), map(_LINK_CHARS, blocks))
    return max(unlinked, default=0) < LISTING_PROSE_CHARS


# On a page without prose (:func:`is_listing`) the content is often a list of items: linked
# titles and short summaries (a news index, a shop's collection, a chart), which the model's
# link-density and teaser features score below even LISTING_THRESHOLD. A container with at least
# ITEM_GROUP child subtrees of the same shape (their blocks at the same depths, of the same kinds)
# is such a list when the model kept at least one of their blocks; then every block of those
# items stays, but those inside navigation, header, footer or aside elements, which go on, as do
# lists the model kept nothing of (a menu). On WCXB's calibration sites (scripts/convert_wceb.py),
# mean F1 all 0.761 -> 0.767, listings 0.528 -> 0.559, collections 0.446 -> 0.503, services
# 0.696 -> 0.699, products 0.527 -> 0.525; ../shared/eval calibration sites: cleaneval
# 0.924 -> 0.925, the others within 0.0001. Chosen among 3-6 items, at least 1 or 2 kept blocks
# or 20 % of the items' characters kept, shapes with and without the blocks' link density, and
# groups of blocks sharing a parent (a <ul>'s items, which gained a tenth as much).
#
# Items need not hold as many blocks: a shape folds each run of blocks at one depth and of one
# kind to one (see _shape), so that forum posts of one paragraph and of five, and product cards
# with a line of details more or less, are one list; a shape that folds to one block (a run of
# paragraphs: an article's sections in their divs) must match whole, as before. WCXB's
# calibration sites, both rules: mean F1 0.7745 -> 0.7773, collections +0.025, listings +0.005,
# services +0.002, products +0.002, forums +0.002; dragnet -0.0006, cleaneval +0.0021, the others
# unchanged. Folding every shape gained more on WCXB (+0.0033: documentation's sections) but cost
# l3s-gn1's calibration sites 0.0045 (a news page's story, and the teasers below it, in sibling
# divs of paragraphs); folding runs of three kinds or more only, +0.0007.
ITEM_GROUP = 3
_ITEM_ROLES = (1 << ROLE_CHROME) | (1 << ROLE_ASIDE)


def keep_items(blocks: list[Block], keep: list[bool]) -> list[bool]:
    """``keep`` with the blocks of item lists kept too (see :data:`ITEM_GROUP`)."""
    result = list(keep)
    for members in _item_groups(blocks, keep, 1, _ITEM_ROLES):
        for i in members:
            if not blocks[i].roles & _ITEM_ROLES:
                result[i] = True
    return result


# On a page with prose, a list of items is the page's content when the page's prose lies in it (the
# summaries of a blog's index, a shop's product blurbs, a thread's posts, each in a repeated
# container): a container's children of one shape (as for ITEM_GROUP) of which the model kept at
# least PROSE_ITEMS_KEPT blocks, holding the page's longest text outside links, or leaving fewer
# than PROSE_ITEMS_OUTSIDE characters of prose (blocks of LISTING_PROSE_CHARS outside links, not in
# readers' comments) out of the list. Its blocks stay, but those in navigation, asides or readers'
# comments (the comments rule's to judge). A list of related teasers beside an article has neither:
# the article's paragraphs hold the prose. A page with PROSE_ITEMS_OUTSIDE characters of prose or
# more, half of it in one parent or in fewer than ITEM_GROUP parents, is an article and not searched
# (the search is what costs). The thresholds were chosen on WCXB's calibration sites; the variants
# tried and their figures: git show 944b1c8:benchmarks/results/types-2026-11-25.md.
PROSE_ITEMS_KEPT = 2
PROSE_ITEMS_OUTSIDE = 1000

# A list of items the model kept fewer than PROSE_ITEMS_KEPT blocks of is a page's content too
# when at least UNLINKED_ITEMS_SHARE of its characters lie outside links and the page has no
# readers' comments: a shop's grid of products and their details, a product's cards of
# specifications, a service's list of features, each short line scored low by the model (and a
# menu or a list of related stories is links). On a page with comments such lists were search
# forms and help pop-ups, kept beside a thread they then kept from being judged one (see
# is_thread). WCXB's calibration sites, against the rule without it: mean F1 +0.0056, products
# +0.017, services +0.030, collections +0.013; ../shared/eval within 0.0004. 80 % and 95 % were
# tried (+0.0053, +0.0041), and items of two blocks or more (+0.0046).
UNLINKED_ITEMS_SHARE = 0.9
_PROSE_ITEM_ROLES = _ITEM_ROLES | (1 << ROLE_COMMENTS)
_SHAPE_KINDS = 16  # more than the block kinds
_BEST_PARENT_COLUMN = FEATURE_NAMES.index("in_best_parent")


def keep_prose_items(blocks: list[Block], keep: list[bool],
                     in_best_parent: list[float] | None = None) -> list[bool]:
    """``keep`` with the blocks of the item lists that hold a page's prose kept too (see
    :data:`PROSE_ITEMS_OUTSIDE`). ``in_best_parent``: that column of :func:`feature_columns`
    (computed when not given)."""
    if not blocks:
        return keep
    unlinked = list(map(sub, map(_CHARS, blocks), map(_LINK_CHARS, blocks)))
    roles = list(map(_ROLES, blocks))
    prose = [u if u >= LISTING_PROSE_CHARS and not r & _IN_COMMENTS else 0
             for u, r in zip(unlinked, roles, strict=True)]
    total = sum(prose)
    if total >= PROSE_ITEMS_OUTSIDE:
        # An article: half of its prose in one parent, or in fewer parents than a list has
        # items (a few microseconds; the search for lists takes about 70 on a dragnet page).
        if in_best_parent is None:
            in_best_parent = feature_columns(blocks)[_BEST_PARENT_COLUMN]
        if 2 * sum(compress(prose, in_best_parent)) >= total or \
                len(set(compress(map(_LAST, map(_ANCESTORS, blocks)), prose))) < ITEM_GROUP:
            return keep
    longest = unlinked.index(max(unlinked))
    # Readers' comments take no part (the comments rule judges them): the lists are looked for
    # among the other blocks, which on a page with a long thread is the cheaper search too.
    index = [i for i, r in enumerate(roles) if not r & _IN_COMMENTS]
    if len(index) == len(blocks):
        groups = _item_groups(blocks, keep, PROSE_ITEMS_KEPT, _PROSE_ITEM_ROLES, unlinked=True)
    else:
        groups = ([index[i] for i in members] for members in _item_groups(
            [blocks[i] for i in index], [keep[i] for i in index], PROSE_ITEMS_KEPT,
            _PROSE_ITEM_ROLES))
    result = keep
    for members in groups:
        if longest not in members and total - sum(map(prose.__getitem__, members)) \
                >= PROSE_ITEMS_OUTSIDE:
            continue
        if result is keep:
            result = list(keep)
        for i in members:
            if not roles[i] & _PROSE_ITEM_ROLES:
                result[i] = True
    return result


def _item_groups(blocks: list[Block], keep: list[bool], kept: int,
                 roles: int, unlinked: bool = False) -> Iterator[list[int]]:
    """Per container with :data:`ITEM_GROUP` child subtrees or more holding text, the blocks of
    its most common shape of child (see :func:`_shape`), when there are ITEM_GROUP such children
    or more, the model kept ``kept`` of their blocks or more (or, with ``unlinked``, their text
    lies outside links: see :data:`UNLINKED_ITEMS_SHARE`), and no more than half of their
    characters lie in elements of ``roles``."""
    if not blocks:
        return
    # Per container, the span of blocks of each child (a subtree's blocks are consecutive), from
    # the runs of blocks with equal ancestors. Consecutive runs share most of their ancestors:
    # only the nodes where a run's path leaves the previous one's are opened (and the previous
    # one's below them closed), not every node of every run.
    children: dict[int, dict[int, list[int]]] = {}
    path: tuple[int, ...] = ()
    spans: list[list[int]] = []  # the span of each node of ``path``
    for nodes, start, _ in _runs(list(map(_ANCESTORS, blocks))):
        # Where the two paths part: a node's ancestors are always the same, so the paths agree
        # up to the deepest node they share (they part near their ends); paths cut to
        # MAX_ANCESTORS are compared node by node.
        same = min(len(nodes), len(path))
        if MAX_ANCESTORS in (len(nodes), len(path)):
            same = next(compress(count(), map(ne, nodes, path)), same)
        else:
            while same and nodes[same - 1] != path[same - 1]:
                same -= 1
        for span in spans[same:]:
            span[1] = start
        del spans[same:]
        for level in range(same, len(nodes)):
            kids = children.setdefault(nodes[level - 1], {}) if level else {}
            known = kids.get(nodes[level])
            if known is None:
                known = kids[nodes[level]] = [start, start]
            spans.append(known)
        path = nodes
    for span in spans:
        span[1] = len(blocks)
    shape_keys: list[int] = []  # per block, its depth and kind in one number
    for kids in children.values():
        if len(kids) < ITEM_GROUP:
            continue
        if not shape_keys:
            shape_keys = list(map(add, map(mul, map(len, map(_ANCESTORS, blocks)),
                                           repeat(_SHAPE_KINDS)), map(_KIND, blocks)))
        shapes: dict[tuple[int, ...], list[int]] = {}
        for child, (start, end) in kids.items():
            shapes.setdefault(_shape(shape_keys[start:end]), []).append(child)
        items = max(shapes.values(), key=len)
        if len(items) < ITEM_GROUP:
            continue
        members = [i for start, end in map(kids.__getitem__, items) for i in range(start, end)]
        chars = sum(blocks[i].chars for i in members)
        if sum(map(keep.__getitem__, members)) < kept and not (
                unlinked and sum(blocks[i].link_chars for i in members)
                <= (1.0 - UNLINKED_ITEMS_SHARE) * chars):
            continue
        if 2 * sum(blocks[i].chars for i in members if blocks[i].roles & roles) > chars:
            continue
        yield members


def _shape(keys: list[int]) -> tuple[int, ...]:
    """A child's shape, from the depth and kind of each of its blocks (one number a block: the
    children of one container are at one depth, so the blocks' depths below their child compare
    as their depths), with each run of equal numbers folded to one: a forum post of one paragraph
    and one of five, a product card with one line of details more than the next, are items of one
    list. A shape that folds to a single number (a run of paragraphs) stays whole: the sections
    of an article are no list of items (see :data:`ITEM_GROUP`)."""
    folded = tuple(map(itemgetter(0), groupby(keys)))
    return folded if len(folded) > 1 else tuple(keys)


# A page at a thread's address (see discussion_address) is a thread when its comments hold at
# least DISCUSSION_COMMENT_CHARS characters, whatever is kept outside them: a forum's first post
# often lies outside the elements its replies are in, and the replies are what the page is about.
# Then a plain paragraph in its comments (no heading, list item, quote or code) of at least
# THREAD_POST_CHARS characters, under half of them in links, stays whatever the model made of
# it: a reply of one or two lines, which the model (taught that short lines beside an article
# are its furniture) scores low, while the names, dates and counts around each post are shorter
# or linked. Chosen on WCXB's dev split (scripts/convert_wceb.py; its test split held out),
# among 0-1,500 characters and 20-80: forum threads 0.658 -> 0.767 mean F1 (trafilatura 0.704),
# all pages 0.8244 -> 0.8325, no other page type moved; ../shared/eval: cleaneval +0.0011,
# dragnet +0.0002, the others unchanged (benchmarks/results/pagetypes-2026-11-27.md).
DISCUSSION_COMMENT_CHARS = 500
THREAD_POST_CHARS = 40

# Where forum software puts a thread: XenForo's /threads/, Discourse's /t/, Invision's and
# NodeBB's /topic/, phpBB's viewtopic.php, vBulletin's showthread.php, Reddit's /comments/, a
# board or a talk page; or a forum's own host name. Not Stack Exchange's /questions/: there the
# answers are posts of their own, and the comments under them are left out of the gold (WCXB's
# dev split: its five such pages lost 0.03-0.22 F1 each with the word, forum threads 0.767
# without it against 0.763 with it).
_DISCUSSION_PATH = re.compile(
    r"(?:^|/)(?:threads?|topics?|t|comments|discussions?|viewtopic\.php"
    r"|showthread\.php|showtopic[^/]*|boards|talk)(?:[/.-]|$)", re.IGNORECASE)
_DISCUSSION_HOST = re.compile(r"(?:forums?|community|discuss|discussions?|boards|bbs|answers)\.",
                              re.IGNORECASE)
# A URL's host (after any user information) and path, as RFC 3986's parsing regular expression
# splits them; a regular expression costs a fifth of urlsplit's call, which also refuses some URLs.
_URL_PARTS = re.compile(r"(?:[a-zA-Z][a-zA-Z0-9+.-]*:)?(?://(?:[^/?#@]*@)?([^/?#]*))?([^?#]*)")


def discussion_address(url: str) -> bool:
    """Whether a URL is where forum software puts a thread (its path or its host says so).

    >>> discussion_address("https://forums.example.com/index.php?id=3")
    True
    >>> discussion_address("https://example.com/threads/best-tent.1231/")
    True
    >>> discussion_address("https://example.com/2024/05/best-tent/")
    False
    """
    parts = _URL_PARTS.match(url)  # matches every string (each part may be empty)
    if parts is None:
        return False
    host, path = parts.group(1) or "", parts.group(2)
    return bool(_DISCUSSION_HOST.match(host) or _DISCUSSION_PATH.search(path))


def is_thread(blocks: list[Block], keep: list[bool], discussion: bool = False) -> bool:
    """Whether the page is a thread whose posts are comments: long comments, and little kept
    outside them (see :data:`THREAD_COMMENT_CHARS`); or, at a thread's address
    (``discussion``), comments of :data:`DISCUSSION_COMMENT_CHARS` characters or more."""
    comments = outside = 0
    for block, ok in zip(blocks, keep, strict=True):
        if block.roles & _IN_COMMENTS:
            comments += block.chars
        elif ok:
            outside += block.chars
    if discussion:
        return comments >= DISCUSSION_COMMENT_CHARS
    return comments >= THREAD_COMMENT_CHARS and outside < THREAD_OUTSIDE_CHARS


def with_posts(blocks: list[Block], keep: list[bool]) -> list[bool]:
    """``keep`` with a thread's posts of :data:`THREAD_POST_CHARS` characters or more kept."""
    return [ok or bool(block.roles & _IN_COMMENTS and block.chars >= THREAD_POST_CHARS
                       and block.link_chars < LINK_DENSE * block.chars and block.kind == 0)
            for block, ok in zip(blocks, keep, strict=True)]


# On a page with prose, a block all of whose text is a link and that lies in an element the page
# names navigation or aside (by tag, role, class or id: see dom.ROLE_OPEN) leads elsewhere: a
# teaser's headline, a related story. The model keeps some (a long headline in a sidebar reads
# like a sentence); they go. On scrapinghub (one page a site) mean F1 0.936 -> 0.938
# (calibration sites 0.939 -> 0.941, held-out 0.933 -> 0.933); cleanportaleval +0.0003, l3s-gn1
# +0.0001, dragnet -0.0001, cleaneval and WCXB's held-out sites unchanged. Blocks from 50 % links
# up were tried as well: dragnet lost 0.0007 for 0.0004 more on scrapinghub. A page without prose
# keeps them (its content is such lists: see LISTING_PROSE_CHARS).
_LINKED_ROLES = (1 << ROLE_CHROME) | (1 << ROLE_ASIDE)
_ROLE_LINK_COLUMNS = (FEATURE_NAMES.index("in_chrome"), FEATURE_NAMES.index("in_aside"))


def without_linked_chrome(blocks: list[Block], keep: list[bool]) -> list[bool]:
    """``keep`` without the wholly linked blocks in navigation or aside elements."""
    return [ok and not (block.roles & _LINKED_ROLES and block.link_chars >= block.chars)
            for block, ok in zip(blocks, keep, strict=True)]


# Readability's view of a page: its text lies in one container. The core of what was kept (the
# deepest candidate subtree holding CORE_SHARE of the characters the page keeps) runs from its
# first kept block to its last; a block between them that the model dropped stays when it is
# text, not furniture: under half of it in links, in no navigation, aside, readers' comments or
# byline element (see dom.ROLE_OPEN), and either of GAP_BLOCK_CHARS characters or more, a
# heading without links, or a sibling of a kept block (their innermost candidate is the same).
# The steps of a tutorial, the paragraphs of a service page between its kept sections, an
# article's short paragraphs. Not on pages without prose (see LISTING_PROSE_CHARS), whose own
# rules keep their lists. Chosen on WCXB's dev split (scripts/convert_wceb.py) and the five sets
# of ../shared/eval, in process: WCXB dev 0.8325 -> 0.8370 mean F1 (documentation +0.010,
# services +0.023, listings +0.006, articles +0.001, products -0.002); cleaneval +0.0034,
# l3s-gn1 -0.0006, scrapinghub -0.0002, dragnet and cleanportaleval unchanged. Filling the
# whole core, not only between its kept blocks, gained more on WCXB (+0.006) but cost l3s-gn1
# 0.004 and scrapinghub 0.003 (old news pages whose core is the whole page); without the length
# or sibling test, l3s-gn1 lost 0.0008 and scrapinghub 0.001
# (benchmarks/results/pagetypes-2026-11-27.md).
GAP_BLOCK_CHARS = 40
_GAP_ROLES = _ITEM_ROLES | _IN_COMMENTS | (1 << ROLE_META)


def core_span(blocks: list[Block], keep: list[bool]) -> tuple[int, int] | None:
    """The core of what was kept, as (first block, block after the last): of the candidate
    subtrees holding :data:`CORE_SHARE` of the kept characters, the one of fewest blocks (the
    deepest: every such subtree lies on one path from the root). None when nothing kept has
    characters (every subtree would hold 80 % of nothing)."""
    prefix = [0, *accumulate(block.chars if ok else 0 for block, ok in zip(blocks, keep,
                                                                           strict=True))]
    least = CORE_SHARE * prefix[-1]
    if not least:
        return None
    core: tuple[int, int] | None = None
    for spans in _node_spans(_runs(list(map(_ANCESTORS, blocks)))).values():
        if len(spans) != 2:  # not one stretch of blocks: no list split_blocks makes
            continue
        start, end = spans
        if prefix[end] - prefix[start] >= least and (
                core is None or end - start < core[1] - core[0]):
            core = (start, end)
    return core


def fill_core_gaps(blocks: list[Block], keep: list[bool]) -> list[bool]:
    """``keep`` with the text blocks between the first and the last kept block of the core
    kept too (see :data:`GAP_BLOCK_CHARS`)."""
    if True not in keep:
        return keep
    # The blocks that could be filled, between the page's first and last kept block: on most
    # pages there is none, and the core is not looked for (nine pages in ten on dragnet).
    first, last = keep.index(True), len(keep) - 1 - keep[::-1].index(True)
    gaps = [i for i in range(first + 1, last) if not keep[i] and not blocks[i].roles & _GAP_ROLES
            and blocks[i].link_chars < LINK_DENSE * blocks[i].chars]
    if not gaps:
        return keep
    core = core_span(blocks, keep)
    if core is None:
        return keep
    start, end = core
    first = keep.index(True, start, end)
    last = end - 1 - keep[start:end][::-1].index(True)
    parents = {blocks[i].ancestors[-1:] for i in range(first, last + 1) if keep[i]}
    result = keep
    for i in gaps:
        if not first < i < last:
            continue
        block = blocks[i]
        if block.chars >= GAP_BLOCK_CHARS or (0 < block.kind < KIND_ITEM and not block.link_chars) \
                or block.ancestors[-1:] in parents:
            if result is keep:
                result = list(keep)
            result[i] = True
    return result


# The settings of --favor (see warcdeboil.page.favor). Balanced is the model's own threshold and
# every rule above. The others were chosen on the calibration sites of the five sets of
# ../shared/eval and WCXB's dev split (benchmarks/favor.py: the highest mean precision, or
# recall, whose F1 is within 0.008 of balanced's on every set). Mean precision / recall / F1
# over the six sets, balanced 0.923 / 0.963 / 0.931: precision 0.933 / 0.948 / 0.929 (higher
# thresholds alone gain less: 0.65 gives 0.933 / 0.941 / 0.924); recall 0.916 / 0.968 / 0.930
# (benchmarks/results/favor-2026-11-29.md).
OPERATING_POINTS = {
    Favor.BALANCED: OperatingPoint(threshold=0.5, listing_threshold=LISTING_THRESHOLD,
                                   fill_gaps=True),
    Favor.PRECISION: OperatingPoint(threshold=0.5, listing_threshold=LISTING_THRESHOLD,
                                    fill_gaps=True, drop_link_dense=True, edge_chars=40),
    Favor.RECALL: OperatingPoint(threshold=0.45, listing_threshold=0.1, fill_gaps=True),
}


def operating_point(favor: Favor | str = Favor.BALANCED) -> OperatingPoint:
    """The operating point of a setting of ``--favor`` (a :class:`Favor` or its name)."""
    return OPERATING_POINTS[Favor(favor)]


# A block of prose, for tightened's edges: as long as a sentence or two.
EDGE_PROSE_CHARS = 80
_IN_ASIDE = 1 << ROLE_ASIDE
_IN_MAIN = 1 << ROLE_MAIN


def tightened(blocks: list[Block], keep: list[bool], point: OperatingPoint) -> list[bool]:
    """``keep`` without what the operating point drops after the rules (see
    :class:`warcdeboil.page.favor.OperatingPoint`; nothing at balanced)."""
    if not (point.drop_link_dense or point.drop_asides or point.edge_chars):
        return keep
    result = [ok and not (point.drop_link_dense and block.link_chars >= LINK_DENSE * block.chars)
              and not (point.drop_asides and block.roles & _IN_ASIDE
                       and not block.roles & _IN_MAIN)
              for block, ok in zip(blocks, keep, strict=True)]
    if point.edge_chars:
        prose = [i for i, ok in enumerate(result)
                 if ok and blocks[i].chars >= EDGE_PROSE_CHARS and not 1 <= blocks[i].kind <= 6]
        if prose:
            for i in (*range(prose[0]), *range(prose[-1] + 1, len(blocks))):
                block = blocks[i]
                if result[i] and block.chars < point.edge_chars and not 1 <= block.kind <= 6:
                    result[i] = False
    return result


def judge(blocks: list[Block], model: ContentModel | None = None, *,
          discussion: bool = False, point: OperatingPoint | None = None,
          ) -> tuple[list[bool], int]:
    """Which blocks the model keeps, and the role bits whose blocks go anyway (see
    :func:`comment_roles`). A page without prose (:func:`is_listing`) is judged with the lower
    bar of the operating point (:data:`LISTING_THRESHOLD` at balanced), and keeps its lists of
    items whole (:func:`keep_items`); a
    page with prose loses the wholly linked blocks of its navigation and asides
    (:func:`without_linked_chrome`) and keeps the lists of items that hold its prose
    (:func:`keep_prose_items`); a thread of comments (:func:`is_thread`; ``discussion``: the
    page is at a thread's address) is judged again with no block counted as in comments, and
    keeps them and its posts (:func:`with_posts`). Last, a page with prose keeps the text
    between the kept blocks of its core (:func:`fill_core_gaps`), and loses what the operating
    point drops after the rules (:func:`tightened`). ``point``: the thresholds and rules of a
    setting of ``--favor`` (balanced's when None)."""
    if not blocks:
        return [], 0
    model = model or load_model()
    point = point or OPERATING_POINTS[Favor.BALANCED]
    columns = feature_columns(blocks)
    listing = is_listing(blocks)

    # Whether a block lies in navigation or an aside: any() over the columns runs in C.
    linked_chrome = not listing and any(map(any, map(columns.__getitem__, _ROLE_LINK_COLUMNS)))

    def kept() -> list[bool]:
        keep = model.keep_columns(columns, blocks,
                                  point.listing_threshold if listing else point.threshold)
        if listing:
            return keep_items(blocks, keep)
        if linked_chrome:
            keep = without_linked_chrome(blocks, keep)
        return keep_prose_items(blocks, keep, columns[_BEST_PARENT_COLUMN])

    keep = kept()

    def filled(keep: list[bool]) -> list[bool]:
        if listing:
            return keep
        if point.fill_gaps:
            keep = fill_core_gaps(blocks, keep)
        return tightened(blocks, keep, point)

    # A page without comments needs neither test (the comments rule then drops nothing): any()
    # over the column runs in C, where comment_roles loops over the blocks in Python.
    if not any(columns[_IN_COMMENTS_COLUMN]):
        return filled(keep), _IN_COMMENTS
    if point.threads and is_thread(blocks, keep, discussion):
        columns[_IN_COMMENTS_COLUMN] = [0.0] * len(blocks)
        return filled(with_posts(blocks, kept())), 0
    return filled(keep), comment_roles(blocks, keep)


def copied_blocks(blocks: list[Block], keep: list[bool]) -> list[bool]:
    """Which kept blocks copy text kept before them from several blocks (see
    :mod:`warcdeboil.page.copies`); the first copy of a text stays."""
    return find_copies(list(map(_TEXT, blocks)), list(map(_CHARS, blocks)), keep)


def extract(
    marked: str, model: ContentModel | None = None, *, repeated: Collection[int] = (),
    url: str = "", point: OperatingPoint | None = None,
) -> Extraction:
    """Main content of a page's marked text (template already removed): :func:`extract_blocks`
    over :func:`split_blocks`."""
    return extract_blocks(split_blocks(marked), model, repeated=repeated, url=url, point=point)


def extract_blocks(
    blocks: list[Block], model: ContentModel | None = None, *, repeated: Collection[int] = (),
    url: str = "", point: OperatingPoint | None = None,
) -> Extraction:
    """The blocks of a page that are its main content, and the others counted by reason.

    The model judges every block in its page; then a kept block the site repeats (its digest in
    ``repeated``) goes too. After the model, not before: removed first, they change their
    neighbours' features, and on the held-out sites of ../shared/eval F1 fell (dragnet sites
    >= 5 pages 0.854 -> 0.850, cleanportaleval 0.804 -> 0.799); removed after, F1 holds
    (0.854 -> 0.853, 0.804 -> 0.805, l3s-gn1 0.957 -> 0.958) and precision rises. Gold texts
    keep some repeated bylines and "about us" paragraphs, which is why it does not rise more.

    Last, the blocks inside readers' comments (an element of role comments: its class or id
    says so) go whatever the model made of them: the main content is the article, not its
    comment thread. The model alone kept long comments, as its training half mixes gold that
    leaves them out (dragnet, scrapinghub) with gold that keeps them (CleanEval). Held-out F1
    (``scripts/train_content.py --check``) without -> with: dragnet 0.907 -> 0.912, l3s-gn1
    0.950 -> 0.951, scrapinghub 0.930 -> 0.933, cleanportaleval 0.806 -> 0.806, cleaneval
    0.909 -> 0.905. Except on a discussion, where the comments are the page (see
    :func:`comment_roles` and :func:`is_thread`). Then a kept block that copies what was kept
    before it from several blocks goes (:func:`copied_blocks`). ``url``: the page's address,
    which can say it is a thread (:func:`discussion_address`); ``point``: the operating point
    of a setting of ``--favor`` (:func:`operating_point`; balanced's when None).
    """
    kept: list[Block] = []
    removed: dict[str, int] = {}
    verdicts = block_verdicts(blocks, model, repeated=repeated, url=url, point=point)
    for block, reason in zip(blocks, verdicts, strict=True):
        if reason is None:
            kept.append(block)
        else:
            removed[reason] = removed.get(reason, 0) + 1
    return Extraction(kept, removed)


def block_verdicts(
    blocks: list[Block], model: ContentModel | None = None, *, repeated: Collection[int] = (),
    url: str = "", point: OperatingPoint | None = None,
) -> list[str | None]:
    """Why each block goes, as :func:`extract_blocks` decides it (None: kept): the site
    repeats it (but for a heading that titles the kept text after it: :func:`section_titles`),
    it copies kept text, it is HTML source (:func:`is_markup`), it is a reader's comment the
    model kept, or the model dropped it (:func:`removal_reason`). The run and the report
    (``report.annotate``) both read these."""
    keep, dropped_roles = judge(blocks, model, discussion=discussion_address(url), point=point)
    is_repeated = repeated_blocks(blocks, repeated)
    if any(is_repeated):
        is_repeated = section_titles(blocks, keep, is_repeated, dropped_roles)
    markup = [ok and is_markup(block) for block, ok in zip(blocks, keep, strict=True)]
    final = [ok and not again and not source and not block.roles & dropped_roles
             for block, ok, again, source in zip(blocks, keep, is_repeated, markup, strict=True)]
    copies = copied_blocks(blocks, final)
    verdicts: list[str | None] = []
    for block, ok, again, last, copy, source in zip(blocks, keep, is_repeated, final, copies,
                                                    markup, strict=True):
        if last and not copy:
            verdicts.append(None)
        elif again:
            verdicts.append(REPEATED_BLOCK)
        elif copy:
            verdicts.append(COPIED_BLOCK)
        elif source:
            verdicts.append(MARKUP_BLOCK)
        elif ok:  # the model kept it, but it is a reader's comment
            verdicts.append(COMMENT_BLOCK)
        else:
            verdicts.append(removal_reason(block))
    return verdicts
