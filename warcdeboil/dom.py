"""The HTML hot path: one parse per page gives everything both passes need.

:func:`analyse` parses a page once and returns a :class:`PageText`: the visible text of the body
with *markers* where each candidate subtree opens and closes and where a line ends, the 64-bit hash
of every candidate, and where each candidate lies in the serialised document. From that, pass 2
removes a site's template with string operations alone (:func:`clean_text`); only WARC output,
which writes HTML, parses the page a second time (:func:`clean_html`).

A *candidate* is an element whose tag is in :data:`CANDIDATE_TAGS`. Its representation is its tag
and its visible text — every text node stripped, whitespace-only nodes skipped, the rest joined by
one space, with the positions of nested candidates and line breaks — while attributes, comments,
scripts and styles are ignored. It is hashed with xxh3-64 seeded by the tag: stable across
processes, machines and Python versions (unlike ``hash()``).
"""

from __future__ import annotations

import re
from array import array
from collections import deque
from collections.abc import Collection
from dataclasses import dataclass
from operator import attrgetter, methodcaller

from selectolax.lexbor import LexborHTMLParser
from xxhash import xxh3_64_intdigest

__all__ = [
    "CANDIDATE_TAGS",
    "PageSignature",
    "PageText",
    "analyse",
    "clean_html",
    "clean_text",
    "page_signature",
]

# Subtrees that can be template: deboiler's block tags plus aside, section, lists and tables (which
# deboiler misses, so a shared <aside> or <section> footer survives). Measured with
# benchmarks/candidates.py (precision/recall on dragnet pages of sites >= 5 pages; pages per
# CPU-second in-process): this set 0.696/0.983 at 312; adding p and li 0.712/0.978 at 265; adding
# also span, a, h1-h6, td, tr 0.736/0.973 at 202. Smaller subtrees buy a little precision (the
# per-page widgets that remain are never shared) for a large cost in speed.
CANDIDATE_TAGS: tuple[str, ...] = (
    "div", "nav", "header", "footer", "aside", "section", "form", "menu",
    "ul", "ol", "table", "dl",
)
_CANDIDATE_SELECTOR = ", ".join(CANDIDATE_TAGS)
_TAG_SEEDS = {tag: xxh3_64_intdigest(tag.encode("ascii")) for tag in CANDIDATE_TAGS}
_TAG = attrgetter("tag")

# Elements whose content is never visible text.
INVISIBLE_TAGS: list[str] = ["script", "style", "template"]

# Elements after which the text starts a new line (inline content is joined by a space) ...
_LINE_END_SELECTOR = (
    "p, li, h1, h2, h3, h4, h5, h6, br, tr, pre, blockquote, dt, dd, figcaption, caption, "
    "hr, address, summary, legend, option"
)
# Candidates are block elements: their own markers end lines too, so lists, tables and divs
# need no line markers of their own.

# Unicode noncharacters, reserved for a program's internal use: they never occur in real text.
OPEN, CLOSE, LINE = "\ufdd0", "\ufdd1", "\ufdd2"
_MARK_BYTES = len(OPEN.encode())
_CANDIDATE_MARK_BYTES = re.compile(b"\xef\xb7[\x90\x91]")
_ANY_MARK = re.compile("[\ufdd0-\ufdd2]")
_ANY_MARK_BYTES = re.compile(b"\xef\xb7[\x90-\x92]")
# A byte that is neither a space nor part of a marker (U+FDD0..U+FDD2 are EF B7 90..92).
_TEXT_BYTE = re.compile(b"[^ \xef\xb7\x90-\x92]")

# Text blocks shorter than this (UTF-8 bytes) are not part of a page's near-duplicate
# signature: they are navigation labels and bylines that distinct pages share anyway.
MIN_SIGNATURE_BLOCK_BYTES = 40
MAX_SIGNATURE_BLOCKS = 512


@dataclass(slots=True)
class PageText:
    """What pass 1 keeps of a page; text outputs need nothing else."""

    title: str
    marked: bytes  # UTF-8 body text, OPEN/CLOSE around candidates and LINE at line ends
    hashes: array  # per candidate, in document order: its hash (0: no text)
    spans: array  # per candidate: start of its OPEN and end of its CLOSE in ``marked``, flat
    html_sizes: array  # per candidate: UTF-8 bytes of its subtree in the serialised document
    html_bytes: int  # UTF-8 size of the serialised document (scripts included)


@dataclass(slots=True)
class PageSignature:
    """What the fit needs of one page: its candidate hashes and its text-block fingerprint."""

    hashes: array  # sorted, unique 64-bit hashes (candidates, and the whole body)
    blocks: array  # 64-bit hashes of long text blocks (near-duplicate detection)
    block_sizes: array  # characters in each of those blocks
    text_bytes: int  # UTF-8 bytes of visible text


@dataclass(slots=True)
class CleanText:
    """A page's text after template removal."""

    text: str
    html_bytes: int  # UTF-8 size of the document without the removed subtrees
    removed: int  # candidate subtrees removed (nested ones included)


def _candidates(tree: LexborHTMLParser) -> list:
    body = tree.body
    return body.css(_CANDIDATE_SELECTOR) if body is not None else []


def analyse(markup: str | bytes) -> PageText:
    """Parse a page once (bytes must be UTF-8) and compute what both passes need."""
    tree = LexborHTMLParser(markup)
    title_node = tree.css_first("title")
    title = " ".join(title_node.text().split()) if title_node is not None else ""
    body = tree.body
    if body is None:
        html_bytes = len((tree.html or "").encode("utf-8", "surrogatepass"))
        return PageText(title, b"", array("Q"), array("I"), array("I"), html_bytes)
    nodes = body.css(_CANDIDATE_SELECTOR)
    seeds = list(map(_TAG_SEEDS.__getitem__, map(_TAG, nodes)))
    # Loops over nodes run in C through map(); each marker is a text node of its own.
    deque(map(methodcaller("insert_before", OPEN), nodes), maxlen=0)
    deque(map(methodcaller("insert_after", CLOSE), nodes), maxlen=0)
    html = (tree.html or "").encode("utf-8", "surrogatepass")
    html_marks = array("I", [m.start() for m in _CANDIDATE_MARK_BYTES.finditer(html)])
    if len(html_marks) != 2 * len(nodes):
        # The page holds our marker characters itself (they are never real text): drop them.
        cleaned = _without_marks(markup)
        if cleaned != markup:
            return analyse(cleaned)
    html_bytes = len(html) - _MARK_BYTES * len(html_marks)
    tree.strip_tags(INVISIBLE_TAGS)
    deque(map(methodcaller("insert_after", LINE), body.css(_LINE_END_SELECTOR)), maxlen=0)
    marked = body.text(separator=" ", strip=True, skip_empty=True).encode("utf-8", "surrogatepass")
    hashes, spans, sizes = _measure_spans(marked, seeds, html_marks)
    return PageText(title, marked, hashes, spans, sizes, html_bytes)


def _without_marks(markup: str | bytes) -> str | bytes:
    """The markup with our marker characters removed, should a page contain them."""
    if isinstance(markup, bytes):
        if b"\xef\xb7" in markup:
            for mark in (OPEN, CLOSE, LINE):
                markup = markup.replace(mark.encode(), b"")
        return markup
    return _ANY_MARK.sub("", markup) if _ANY_MARK.search(markup) else markup


def _measure_spans(
    marked: bytes, seeds: list[int], html_marks: array
) -> tuple[array, array, array]:
    """Per candidate span of ``marked``: its hash, its extent, its size in the document."""
    n = len(seeds)
    hashes = array("Q", bytes(8 * n))
    spans = array("I", bytes(8 * n))
    sizes = array("I", bytes(4 * n))
    n_marks = len(html_marks)
    positions = [match.start() for match in _CANDIDATE_MARK_BYTES.finditer(marked)]
    stack: list[tuple[int, int]] = []
    ordinal = 0
    for k, pos in enumerate(positions):
        if marked[pos + 2] == 0x90:  # OPEN
            stack.append((ordinal, k))
            ordinal += 1
            continue
        if not stack:
            continue
        i, open_k = stack.pop()
        if i >= n:
            continue
        start = positions[open_k]
        spans[2 * i] = start
        spans[2 * i + 1] = pos + _MARK_BYTES
        if k < n_marks:
            # The subtree's bytes lie between its two markers, less the nested markers.
            sizes[i] = html_marks[k] - html_marks[open_k] - _MARK_BYTES * (k - open_k)
        text = marked[start + _MARK_BYTES : pos]
        if _TEXT_BYTE.search(text):  # else the subtree has no text: never template
            hashes[i] = xxh3_64_intdigest(text, seeds[i])
    return hashes, spans, sizes


def page_signature(page: PageText) -> PageSignature:
    """Everything the fit needs of a page."""
    found = set(page.hashes)
    # The whole body counts in the pair's IoU (never in a removal): pages whose candidates are
    # all template still differ by their body, so they are not taken for duplicates.
    found.add(xxh3_64_intdigest(page.marked))
    found.discard(0)
    blocks = array("Q")
    sizes = array("I")
    seen: set[int] = set()
    fragments = _ANY_MARK_BYTES.split(page.marked)
    text_bytes = len(page.marked) - _MARK_BYTES * (len(fragments) - 1)
    # Fragments are runs of text between block boundaries, their text nodes already stripped
    # and joined by one space: they need no more normalising to be compared across pages.
    for fragment in [f.strip() for f in fragments if len(f) >= MIN_SIGNATURE_BLOCK_BYTES]:
        digest = xxh3_64_intdigest(fragment)
        if digest not in seen:
            seen.add(digest)
            blocks.append(digest)
            sizes.append(len(fragment))
            if len(blocks) >= MAX_SIGNATURE_BLOCKS:
                break
    return PageSignature(array("Q", sorted(found)), blocks, sizes, text_bytes)


def _doomed(page: PageText, template: Collection[int]) -> set[int]:
    if not template:
        return set()
    return {i for i, digest in enumerate(page.hashes) if digest and digest in template}


def clean_text(page: PageText, template: Collection[int]) -> CleanText:
    """The page's text, one block per line, without the candidates whose hash is in ``template``."""
    doomed = _doomed(page, template)
    marked = page.marked
    html_bytes = page.html_bytes
    if doomed:
        spans = page.spans
        pieces: list[bytes] = []
        kept_from = 0
        for i in sorted(doomed):
            start, end = spans[2 * i], spans[2 * i + 1]
            if start < kept_from or end <= start:
                continue  # inside a removed ancestor (or never closed)
            pieces.append(marked[kept_from:start])
            kept_from = end
            html_bytes -= page.html_sizes[i]
        pieces.append(marked[kept_from:])
        marked = b"".join(pieces)
    # Every marker is a block boundary; whitespace runs become one space and empty lines go.
    # Written with map/filter so that the loop runs in C (a regex was measured 3x slower).
    text = marked.decode("utf-8", "surrogatepass").replace(OPEN, LINE).replace(CLOSE, LINE)
    words = filter(None, map(str.split, text.split(LINE)))
    return CleanText("\n".join(map(" ".join, words)), html_bytes, len(doomed))


def clean_html(markup: str | bytes, page: PageText, template: Collection[int]) -> str:
    """The cleaned document (scripts and styles kept), declared as UTF-8.

    Parses the page a second time and removes the same candidates, matched by document order.
    """
    tree = LexborHTMLParser(_without_marks(markup))
    doomed = _doomed(page, template)
    if doomed:
        nodes = _candidates(tree)
        if len(nodes) == len(page.hashes):
            # Innermost first, so no removed node is touched through a removed ancestor.
            for i in sorted(doomed, reverse=True):
                nodes[i].decompose()
    for meta in tree.css("meta[charset]"):
        meta.attrs["charset"] = "utf-8"
    for meta in tree.css("meta[http-equiv]"):
        if (meta.attrs.get("http-equiv") or "").lower() == "content-type":
            meta.attrs["content"] = "text/html; charset=utf-8"
    return tree.html or ""
