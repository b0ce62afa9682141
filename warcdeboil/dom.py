"""The HTML hot path: parse once, hash candidate subtrees, remove a site's template, extract text.

A *candidate* is an element whose tag is in :data:`CANDIDATE_TAGS`. Its representation is its tag
name and its visible text with whitespace normalised — attributes, comments, scripts and styles are
ignored — hashed to 64 bits with xxh3 (stable across processes, machines and Python versions,
unlike ``hash()``). Two pages share a subtree when they share a hash.

Pass 1 calls :func:`page_signature`; pass 2 calls :func:`remove_subtrees` with the site profile's
hashes and then :func:`extract_text`. Both hash the same way, so what the fit learned is what the
apply removes.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Collection
from dataclasses import dataclass

from selectolax.lexbor import LexborHTMLParser, LexborNode
from xxhash import xxh3_64_intdigest

__all__ = [
    "CANDIDATE_TAGS",
    "PageSignature",
    "candidate_hashes",
    "candidate_nodes",
    "extract_text",
    "page_signature",
    "parse_html",
    "remove_subtrees",
    "title_of",
]

# Subtrees that can be template. Chosen by measuring on ../shared/eval (benchmarks/candidates.py):
# adding aside/section/ul/table/ol to deboiler's set lifts template precision without costing
# recall; p and li as candidates added little and cost speed (more, smaller subtrees to hash).
CANDIDATE_TAGS: tuple[str, ...] = (
    "div", "nav", "header", "footer", "aside", "section", "form", "menu",
    "ul", "ol", "table", "dl",
)
_CANDIDATE_SELECTOR = ", ".join(CANDIDATE_TAGS)

# Elements whose content is never visible text.
INVISIBLE_TAGS: list[str] = ["script", "style", "template"]

# Elements after which the text starts a new line (the rest are joined by a space).
_LINE_BREAK_SELECTOR = (
    "p, li, h1, h2, h3, h4, h5, h6, br, tr, pre, blockquote, dt, dd, figcaption, caption, "
    "title, hr, address, summary, legend, option"
)
# ... and these also end the line before them (text directly followed by a list or table).
_LINE_START_SELECTOR = "ul, ol, dl, table, h1, h2, h3, h4, h5, h6, pre, blockquote"
_LINE_MARK = "\u2029"

# Text blocks shorter than this are not part of a page's near-duplicate signature: they are
# navigation labels and bylines that distinct pages share anyway.
MIN_SIGNATURE_BLOCK_CHARS = 40
MAX_SIGNATURE_BLOCKS = 512

_SPACE_RUN = re.compile(r"\s+")


@dataclass(slots=True)
class PageSignature:
    """What the fit needs of one page: its candidate hashes and its text-block fingerprint."""

    hashes: array  # sorted, unique 64-bit candidate hashes
    blocks: array  # 64-bit hashes of long text blocks (near-duplicate detection)
    block_sizes: array  # characters in each of those blocks
    text_chars: int


def parse_html(html: str | bytes) -> LexborHTMLParser:
    """Parse a page (bytes must be UTF-8) and drop what is never visible text."""
    tree = LexborHTMLParser(html)
    tree.strip_tags(INVISIBLE_TAGS)
    return tree


def _node_hash(node: LexborNode) -> int:
    # Every text node stripped, whitespace-only ones skipped, the rest joined by one space:
    # "ab c" and "a bc" stay different, indentation does not count. (Collapsing runs inside
    # text nodes too cost 2.6x the time on ../shared/eval/dragnet and changed no result.)
    text = node.text(separator=" ", strip=True, skip_empty=True)
    if not text:
        return 0
    return xxh3_64_intdigest(f"{node.tag}\x1e{text}".encode("utf-8", "surrogatepass"))


def candidate_nodes(tree: LexborHTMLParser) -> list[LexborNode]:
    """The candidate elements of the body, in document order."""
    body = tree.body
    return body.css(_CANDIDATE_SELECTOR) if body is not None else []


def candidate_hashes(tree: LexborHTMLParser) -> tuple[list[LexborNode], list[int]]:
    """Candidate nodes in document order and their hashes (0 for a subtree without text)."""
    nodes = candidate_nodes(tree)
    return nodes, [_node_hash(node) for node in nodes]


def page_signature(tree: LexborHTMLParser) -> PageSignature:
    """Everything pass 1 stores about a parsed page."""
    _, hashes = candidate_hashes(tree)
    found = set(hashes)
    body = tree.body
    if body is not None:
        # The whole body counts in the pair's IoU (never in a removal): pages whose candidates
        # are all template still differ by their body, so they are not taken for duplicates.
        found.add(_node_hash(body))
    found.discard(0)
    unique = array("Q", sorted(found))
    blocks = array("Q")
    sizes = array("I")
    text_chars = 0
    if body is not None:
        fragments = body.text(separator="\x1f").split("\x1f")
        text_chars = sum(map(len, fragments))
        seen: set[int] = set()
        for fragment in fragments:
            if len(fragment) < MIN_SIGNATURE_BLOCK_CHARS:
                continue
            normalised = " ".join(fragment.split())
            if len(normalised) < MIN_SIGNATURE_BLOCK_CHARS:
                continue
            digest = xxh3_64_intdigest(normalised.encode("utf-8", "surrogatepass"))
            if digest in seen:
                continue
            seen.add(digest)
            blocks.append(digest)
            sizes.append(len(normalised))
            if len(blocks) >= MAX_SIGNATURE_BLOCKS:
                break
    return PageSignature(unique, blocks, sizes, text_chars)


def remove_subtrees(tree: LexborHTMLParser, profile: Collection[int]) -> int:
    """Remove every candidate subtree whose hash is in ``profile``; return how many went.

    Nodes are removed innermost first (reverse document order), so no removed node is touched
    again through an ancestor that was removed before it.
    """
    if not profile:
        return 0
    nodes, hashes = candidate_hashes(tree)
    doomed = [node for node, digest in zip(nodes, hashes) if digest in profile]
    for node in reversed(doomed):
        node.decompose()
    return len(doomed)


def remove_matching(nodes: list[LexborNode], hashes: list[int], profile: Collection[int]) -> int:
    """Like :func:`remove_subtrees` for candidates already hashed (of this or a twin tree)."""
    doomed = [node for node, digest in zip(nodes, hashes) if digest and digest in profile]
    for node in reversed(doomed):
        node.decompose()
    return len(doomed)


def extract_text(tree: LexborHTMLParser) -> str:
    """Visible text of the body, one paragraph, heading, list item or table row per line."""
    body = tree.body
    if body is None:
        return ""
    for node in body.css(_LINE_BREAK_SELECTOR):
        node.insert_after(_LINE_MARK)
    for node in body.css(_LINE_START_SELECTOR):
        node.insert_before(_LINE_MARK)
    text = body.text(separator=" ")
    lines = (" ".join(part.split()) for part in text.split(_LINE_MARK))
    return "\n".join(line for line in lines if line)


def title_of(tree: LexborHTMLParser) -> str:
    """The document title, whitespace normalised ('' when there is none)."""
    node = tree.css_first("title")
    if node is None:
        return ""
    return " ".join(node.text().split())
