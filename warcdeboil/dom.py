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
from functools import lru_cache
from collections import deque
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, field
from operator import attrgetter, methodcaller

from selectolax.lexbor import LexborHTMLParser
from selectolax.lexbor import LexborNode as Node
from xxhash import xxh3_64_intdigest

__all__ = [
    "BLOCK_SPLIT",
    "CANDIDATE_TAGS",
    "INLINE_MARK",
    "PageSignature",
    "PageText",
    "analyse",
    "block_digest",
    "clean_html",
    "clean_text",
    "page_signature",
    "plain_block_digests",
    "remove_repeated",
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
# Elements that can hold one text block of their own (repeated blocks are removed from HTML
# when they are a whole one of these).
_BLOCK_ELEMENT_SELECTOR = (
    "p, li, h1, h2, h3, h4, h5, h6, dt, dd, figcaption, caption, address, summary, legend, "
    "td, th, blockquote, pre"
)
# Candidates are block elements: their own markers end lines too, so lists, tables and divs
# need no line markers of their own.

# Unicode noncharacters, reserved for a program's internal use: they never occur in real text.
OPEN, CLOSE, LINE = "\ufdd0", "\ufdd1", "\ufdd2"

# Structure marks, inserted only when a page is analysed with ``structure=True`` (content mode and
# markdown need them; template removal does not, and they cost ~0.4 ms a page):
LINK_OPEN, LINK_CLOSE = "\ufdd3", "\ufdd4"  # around the text of <a>
HEADINGS = tuple(chr(0xFDD5 + level) for level in range(6))  # before <h1> .. <h6>
ITEM = "\ufddb"  # before <li>
CELL = "\ufddc"  # after <td>, <th>
QUOTE = "\ufddd"  # before <blockquote>
CODE = "\ufdde"  # before <pre>
STRONG = "\ufddf"  # around <strong>, <b>
EMPHASIS = "\ufde0"  # around <em>, <i>
_BEFORE = {f"h{level + 1}": mark for level, mark in enumerate(HEADINGS)}
_BEFORE.update({"li": ITEM, "blockquote": QUOTE, "pre": CODE, "strong": STRONG, "b": STRONG,
                "em": EMPHASIS, "i": EMPHASIS, "a": LINK_OPEN})
_AFTER = {"td": CELL, "th": CELL, "strong": STRONG, "b": STRONG, "em": EMPHASIS,
          "i": EMPHASIS, "a": LINK_CLOSE}
_BEFORE_SELECTOR = ", ".join(_BEFORE)
_AFTER_SELECTOR = ", ".join(_AFTER)

# Role marks (also only with ``structure=True``): a pair of marks around every block-level element
# that names its role, in its tag, its ARIA role or the words of its class and id — what a page's
# author says a part of it is. Content mode reads them as features of the blocks inside; they
# are block boundaries, and the candidate hashes never see them (attributes stay out of the
# template). Each role: its marks, then the selector that finds its elements. The words are the
# ones page templates commonly use for these parts; the model weighs them, these only name them.
ROLE_COMMENTS = 0  # readers' comments and replies
ROLE_ASIDE = 1  # sidebars, related and recommended links, sharing, promotion, newsletters
ROLE_CHROME = 2  # navigation, site header and footer, breadcrumbs, cookie notices
ROLE_META = 3  # bylines, dates, tags, captions and credits
ROLE_MAIN = 4  # the article itself
ROLES = 5
ROLE_OPEN = tuple(chr(0xFDE1 + 2 * role) for role in range(ROLES))
ROLE_CLOSE = tuple(chr(0xFDE2 + 2 * role) for role in range(ROLES))


# Per role: the words (lower case) whose presence in an element's class or id gives it the role.
_ROLE_WORDS = (
    "comment|disqus|reply|discussion",
    "sidebar|widget|related|recommend|shar(?:e|ing)|social|promo|sponsor|advert|newsletter"
    "|subscri|signup|popular|trending|most-?read|teaser|outbrain|taboola",
    "nav|menu|footer|masthead|breadcrumb|cookie|consent|banner|skip|toolbar",
    "byline|author|date|timestamp|tags|caption|credit|meta",
    "article|story|entry|post-?body|post-?content|main-?content",
)
_ROLE_WORD_PATTERN = re.compile("|".join(f"({words})" for words in _ROLE_WORDS))
# Elements with a role by their tag, by their ARIA role, or as schema.org's article body.
_TAG_ROLES = {"aside": ROLE_ASIDE, "nav": ROLE_CHROME, "footer": ROLE_CHROME,
              "figcaption": ROLE_META, "article": ROLE_MAIN, "main": ROLE_MAIN}
_ARIA_ROLES = {"complementary": ROLE_ASIDE, "navigation": ROLE_CHROME,
               "contentinfo": ROLE_CHROME, "banner": ROLE_CHROME, "main": ROLE_MAIN}
_ROLE_TAG_SELECTOR = ", ".join([*_TAG_ROLES, "[role]", "[itemprop=articleBody]"])
_NAMED_SELECTOR = "[class], [id]"
_ATTRIBUTES = attrgetter("attributes")
# Only block-level elements get role marks (a mark is a block boundary: one around a link would
# cut its sentence in two).
_ROLE_TAGS = frozenset({
    "div", "section", "aside", "article", "main", "header", "footer", "nav", "ul", "ol", "li",
    "dl", "table", "form", "figure", "figcaption", "p", "blockquote", "details", "menu",
})
_MARK_BYTES = len(OPEN.encode())
_CANDIDATE_MARK_BYTES = re.compile(b"\xef\xb7[\x90\x91]")
_ANY_MARK = re.compile("[\ufdd0-\ufdef]")
_BLOCK_START_MARKS = re.compile("[\ufdd5-\ufddb\ufddd\ufdde\ufde1-\ufdea]")
_INLINE_MARKS = re.compile("[\ufdd3\ufdd4\ufddf\ufde0]")
_ANY_MARK_BYTES = re.compile(b"\xef\xb7[\x90-\xaf]")
# Marks that end a text block (line): the candidate and line marks, those before headings,
# list items, quotes and code, and the role marks.
_BLOCK_MARK_BYTES = re.compile(b"\xef\xb7[\x90-\x92\x95-\x9b\x9d\x9e\xa1-\xaa]")
_ROLE_MARK_BYTES = re.compile(b" ?\xef\xb7[\xa1-\xaa]")
# Block boundaries (captured by split: text at even indexes, marks between) and inline marks
# (links, cells, emphasis: inside a block, each is a space) in decoded marked text. Every reader
# of blocks uses these two: the fit's digests, content.split_blocks, remove_repeated.
BLOCK_SPLIT = re.compile("([\ufdd0-\ufdd2\ufdd5-\ufddb\ufddd\ufdde\ufde1-\ufdea])")
INLINE_MARK = re.compile("[\ufdd3\ufdd4\ufddc\ufddf\ufde0]")
_LINE_BYTES = LINE.encode()
# A byte that is neither a space nor part of a marker (U+FDD0..U+FDEF are EF B7 90..AF).
_TEXT_BYTE = re.compile(b"[^ \xef\xb7\x90-\xaf]")

# Text blocks shorter than this (UTF-8 bytes) are not part of a page's near-duplicate
# signature: they are navigation labels and bylines that distinct pages share anyway.
MIN_SIGNATURE_BLOCK_BYTES = 40
MAX_SIGNATURE_BLOCKS = 512
# Distinct text blocks per page whose digests go to the fit's repeated-block count.
MAX_TEXT_DIGESTS = 1024
MAX_BREADCRUMBS = 12


@dataclass(frozen=True, slots=True)
class PageMeta:
    """What a page says about itself (read only when analysed with ``structure=True``)."""

    description: str = ""  # <meta name=description>, else og:description
    canonical_url: str = ""  # <link rel=canonical>, else og:url
    lang: str = ""  # <html lang>
    breadcrumbs: tuple[str, ...] = ()  # the labels of the first breadcrumb trail


NO_META = PageMeta()


@dataclass(slots=True)
class PageText:
    """What pass 1 keeps of a page; text outputs need nothing else."""

    title: str
    marked: bytes  # UTF-8 body text, OPEN/CLOSE around candidates and LINE at line ends
    hashes: array  # per candidate, in document order: its hash (0: no text)
    spans: array  # per candidate: start of its OPEN and end of its CLOSE in ``marked``, flat
    html_sizes: array  # per candidate: UTF-8 bytes of its subtree in the serialised document
    html_bytes: int  # UTF-8 size of the serialised document (scripts included)
    structured: bool = False  # ``marked`` holds structure marks too
    meta: PageMeta = NO_META


@dataclass(slots=True)
class PageSignature:
    """What the fit needs of one page: its candidate hashes and its text-block fingerprint."""

    hashes: array  # sorted, unique 64-bit hashes (candidates, and the whole body)
    blocks: array  # 64-bit hashes of long text blocks (near-duplicate detection)
    block_sizes: array  # characters in each of those blocks
    text_bytes: int  # UTF-8 bytes of visible text
    texts: array = field(default_factory=lambda: array("Q"))  # every text block's digest, unique


@dataclass(slots=True)
class CleanText:
    """A page's text after template removal."""

    text: str
    html_bytes: int  # UTF-8 size of the document without the removed subtrees
    removed: int  # candidate subtrees removed (nested ones included)


def _candidates(tree: LexborHTMLParser) -> list:
    body = tree.body
    return body.css(_CANDIDATE_SELECTOR) if body is not None else []


def analyse(markup: str | bytes, *, structure: bool = False) -> PageText:
    """Parse a page once (bytes must be UTF-8) and compute what both passes need.

    With ``structure``, the marked text also holds the structure marks (links, headings, list
    items, cells, quotes, code, emphasis) and the page's :class:`PageMeta` is read.
    """
    tree = _parse(markup)
    title_node = tree.css_first("title")
    title = " ".join(title_node.text().split()) if title_node is not None else ""
    meta = _page_meta(tree) if structure else NO_META
    body = tree.body
    if body is None:
        html_bytes = len((tree.html or "").encode("utf-8", "surrogatepass"))
        return PageText(
            title, b"", array("Q"), array("I"), array("I"), html_bytes, structure, meta
        )
    nodes = body.css(_CANDIDATE_SELECTOR)
    seeds = list(map(_TAG_SEEDS.__getitem__, map(_TAG, nodes)))
    # Loops over nodes run in C through map(); each marker is a text node of its own.
    deque(map(methodcaller("insert_before", OPEN), nodes), maxlen=0)
    deque(map(methodcaller("insert_after", CLOSE), nodes), maxlen=0)
    html = (tree.html or "").encode("utf-8", "surrogatepass")
    html_marks = array("I", [m.start() for m in _CANDIDATE_MARK_BYTES.finditer(html)])
    html_bytes = len(html) - _MARK_BYTES * len(html_marks)
    tree.strip_tags(INVISIBLE_TAGS)
    deque(map(methodcaller("insert_after", LINE), body.css(_LINE_END_SELECTOR)), maxlen=0)
    if structure:
        _insert_structure_marks(body)
    marked = body.text(separator=" ", strip=True, skip_empty=True).encode("utf-8", "surrogatepass")
    hashes, spans, sizes = _measure_spans(marked, seeds, html_marks)
    return PageText(title, marked, hashes, spans, sizes, html_bytes, structure, meta)


# A <title> is raw text up to its end tag: without one, it holds the rest of the document and
# the page has no body text at all. Browsers before HTML5 ended it at the next tag, and so does
# this repair, tried only when a title is longer than this (in characters) and holds a tag.
MAX_TITLE_CHARS = 1024
_TITLE_START = re.compile(r"<title\b[^>]*>", re.IGNORECASE)


def _parse(markup: str | bytes) -> LexborHTMLParser:
    """The document tree of a page (without our marks), an unclosed ``<title>`` closed."""
    markup = _without_marks(markup)
    tree = LexborHTMLParser(markup)
    title = tree.css_first("title")
    if title is not None and len(title.text()) > MAX_TITLE_CHARS:
        repaired = _close_title(markup)
        if repaired is not None:
            tree = LexborHTMLParser(repaired)
    return tree


def _close_title(markup: str | bytes) -> str | bytes | None:
    """The markup with ``</title>`` before the first tag after the title's start tag, when the
    title has no end tag; else None."""
    if isinstance(markup, bytes):  # latin-1 maps bytes to characters one to one
        repaired = _close_title(markup.decode("latin-1"))
        return repaired.encode("latin-1") if isinstance(repaired, str) else None
    found = _TITLE_START.search(markup)
    if found is None or "</title" in markup[found.end():].lower():
        return None
    at = markup.find("<", found.end())
    return None if at < 0 else markup[:at] + "</title>" + markup[at:]


def _insert_structure_marks(body: Node) -> None:
    # Role marks first: the structure marks inserted next sit inside them, next to their element.
    for node, role in _role_elements(body):
        node.insert_before(ROLE_OPEN[role])
        node.insert_after(ROLE_CLOSE[role])
    before = body.css(_BEFORE_SELECTOR)
    insert_before = type(body).insert_before
    deque(map(insert_before, before, map(_BEFORE.__getitem__, map(_TAG, before))), maxlen=0)
    after = body.css(_AFTER_SELECTOR)
    insert_after = type(body).insert_after
    deque(map(insert_after, after, map(_AFTER.__getitem__, map(_TAG, after))), maxlen=0)


def _role_elements(body: Node) -> list[tuple[Node, int]]:
    """The block-level elements that have a role, by tag or ARIA role, or by the words of their
    class and id; with the role (an element with two roles comes twice)."""
    found: list[tuple[Node, int]] = []
    for node in body.css(_ROLE_TAG_SELECTOR):
        role = _TAG_ROLES.get(node.tag)
        if role is None:
            attributes = node.attributes
            role = _ARIA_ROLES.get(attributes.get("role") or "")
            if role is None and attributes.get("itemprop") == "articleBody":
                role = ROLE_MAIN
        if role is not None and node.tag in _ROLE_TAGS:
            found.append((node, role))
    named = [node for node in body.css(_NAMED_SELECTOR) if node.tag in _ROLE_TAGS]
    if not named:
        return found
    for node, attributes in zip(named, map(_ATTRIBUTES, named), strict=True):
        bits = _name_roles(f"{attributes.get('class') or ''} {attributes.get('id') or ''}")
        if bits:
            found.extend((node, role) for role in range(ROLES) if bits >> role & 1)
    return found


@lru_cache(maxsize=1 << 16)
def _name_roles(names: str) -> int:
    """The roles an element's class and id give it, a bit each. Cached: class names recur on
    every page of a site and across sites (a scan takes 3-10 µs, a cache hit 0.1 µs)."""
    bits = 0
    for match in _ROLE_WORD_PATTERN.finditer(names.lower()):
        bits |= 1 << (match.lastindex or 1) - 1
    return bits


def _attr(node: Node | None, name: str) -> str:
    if node is None:
        return ""
    return " ".join((node.attrs.get(name) or "").split())


_BREADCRUMB_SELECTOR = (
    "[itemtype*=BreadcrumbList], [class*=breadcrumb], [class*=Breadcrumb], [id*=breadcrumb], "
    "[id*=Breadcrumb], nav[aria-label*=readcrumb]"
)
_CRUMB_SEPARATORS = re.compile(r"\s+(?:[>»›/|→]|::)\s+")


def _page_meta(tree: LexborHTMLParser) -> PageMeta:
    head = tree.head
    description = canonical = ""
    if head is not None:
        description = _attr(head.css_first("meta[name=description], meta[name=Description]"),
                            "content")
        if not description:
            description = _attr(head.css_first("meta[property='og:description']"), "content")
        canonical = _attr(head.css_first("link[rel=canonical]"), "href")
        if not canonical:
            canonical = _attr(head.css_first("meta[property='og:url']"), "content")
    root = tree.root
    lang = _attr(root, "lang") if root is not None and root.tag == "html" else ""
    crumbs: tuple[str, ...] = ()
    body = tree.body
    trail = body.css_first(_BREADCRUMB_SELECTOR) if body is not None else None
    if trail is not None:
        labels = [" ".join(a.text().split()) for a in trail.css("a, li")]
        if not labels:
            labels = _CRUMB_SEPARATORS.split(" ".join(trail.text(separator=" ").split()))
        unique: list[str] = []
        for label in labels:
            label = label.strip(" >»›/|→")
            if label and label not in unique:
                unique.append(label)
        crumbs = tuple(unique[:MAX_BREADCRUMBS])
    return PageMeta(description, canonical, lang, crumbs)


def _without_marks(markup: str | bytes) -> str | bytes:
    """The markup without our marker characters, should a page hold any (real text never does)."""
    if isinstance(markup, bytes):
        return _ANY_MARK_BYTES.sub(b"", markup) if b"\xef\xb7" in markup else markup
    return _ANY_MARK.sub("", markup) if _ANY_MARK.search(markup) else markup


def _measure_spans(
    marked: bytes, seeds: list[int], html_marks: array
) -> tuple[array, array, array]:
    """Per candidate span of ``marked``: its hash, its extent, its size in the document.

    Role marks come from attributes, which are no part of a candidate's representation: the
    hashes are of the text without them (the k-th candidate mark is the same in both texts).
    """
    n = len(seeds)
    hashes = array("Q", bytes(8 * n))
    spans = array("I", bytes(8 * n))
    sizes = array("I", bytes(4 * n))
    n_marks = len(html_marks)
    positions = [match.start() for match in _CANDIDATE_MARK_BYTES.finditer(marked)]
    hashed = marked
    at = positions
    if _ROLE_MARK_BYTES.search(marked) is not None:
        hashed = _ROLE_MARK_BYTES.sub(b"", marked)
        at = [match.start() for match in _CANDIDATE_MARK_BYTES.finditer(hashed)]
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
        spans[2 * i] = positions[open_k]
        spans[2 * i + 1] = pos + _MARK_BYTES
        if k < n_marks:
            # The subtree's bytes lie between its two markers, less the nested markers.
            sizes[i] = html_marks[k] - html_marks[open_k] - _MARK_BYTES * (k - open_k)
        text = hashed[at[open_k] + _MARK_BYTES : at[k]]
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
    fragments = _BLOCK_MARK_BYTES.split(page.marked)
    text_bytes = len(page.marked) - _MARK_BYTES * page.marked.count(b"\xef\xb7")
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
    # block_digest of every block, with the loops in C (map over split, join, encode, hash).
    text = page.marked.decode("utf-8", "surrogatepass")
    if page.structured:
        text = INLINE_MARK.sub(" ", text)
    words = map(str.split, BLOCK_SPLIT.split(text)[0::2])
    texts = set(map(xxh3_64_intdigest, map(_utf8, map(" ".join, words))))
    texts.discard(_EMPTY_DIGEST)
    digests = array("Q", sorted(texts)[:MAX_TEXT_DIGESTS])
    return PageSignature(array("Q", sorted(found)), blocks, sizes, text_bytes, digests)


_EMPTY_DIGEST = xxh3_64_intdigest(b"")


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def block_digest(text: str) -> int:
    """The digest of one text block's text (between two block marks), 0 when it has none: inline
    marks count as spaces and whitespace runs as one space, so a block digests the same in pass 1,
    as :attr:`warcdeboil.content.Block.text`, and as an element's text in the HTML.

    >>> linked = f" Share {LINK_OPEN}this{LINK_CLOSE}\u00a0story "
    >>> block_digest(linked) == block_digest("Share this story")
    True
    >>> block_digest("   ")
    0
    """
    words = INLINE_MARK.sub(" ", text).split()
    return xxh3_64_intdigest(_utf8(" ".join(words))) if words else 0


def plain_block_digests(texts: Iterable[str]) -> Iterator[int]:
    """:func:`block_digest` of texts already normalised (no marks, single spaces, stripped), as
    :attr:`warcdeboil.content.Block.text` is; the loop runs in C."""
    return map(xxh3_64_intdigest, map(_utf8, texts))


def remove_repeated(marked: str, repeated: Collection[int]) -> tuple[str, int]:
    """The marked text without the text blocks whose digest is in ``repeated`` (the blocks a
    site repeats on many pages), and how many blocks went."""
    if not repeated or not marked:
        return marked, 0
    parts = BLOCK_SPLIT.split(marked)
    removed = 0
    for i in range(0, len(parts), 2):  # text at even indexes, marks between them
        if parts[i] and block_digest(parts[i]) in repeated:
            parts[i] = ""
            removed += 1
    return ("".join(parts) if removed else marked), removed


def _doomed(page: PageText, template: Collection[int]) -> set[int]:
    if not template:
        return set()
    return {i for i, digest in enumerate(page.hashes) if digest and digest in template}


def remove_template(page: PageText, template: Collection[int]) -> tuple[bytes, int, int]:
    """The marked text without the candidates whose hash is in ``template``; with the size of
    the document without them and the number of candidates removed (nested ones included)."""
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
            pieces.append(_LINE_BYTES)  # the text around a removed block stays two blocks
            kept_from = end
            html_bytes -= page.html_sizes[i]
        pieces.append(marked[kept_from:])
        marked = b"".join(pieces)
    return marked, html_bytes, len(doomed)


def plain_text(marked: str, structured: bool) -> str:
    """Marked text as plain text: one block per line, whitespace runs as one space."""
    # Every marker is a block boundary; whitespace runs become one space and empty lines go.
    # Written with map/filter so that the loop runs in C (a regex was measured 3x slower).
    text = marked.replace(OPEN, LINE).replace(CLOSE, LINE)
    if structured:  # structure marks: block starts end lines, the rest go
        text = _INLINE_MARKS.sub("", _BLOCK_START_MARKS.sub(LINE, text.replace(CELL, " ")))
    words = filter(None, map(str.split, text.split(LINE)))
    return "\n".join(map(" ".join, words))


def clean_text(page: PageText, template: Collection[int]) -> CleanText:
    """The page's text, one block per line, without the candidates whose hash is in ``template``."""
    marked, html_bytes, removed = remove_template(page, template)
    text = plain_text(marked.decode("utf-8", "surrogatepass"), page.structured)
    return CleanText(text, html_bytes, removed)


def clean_html(
    markup: str | bytes,
    page: PageText,
    template: Collection[int],
    repeated: Collection[int] = (),
) -> str:
    """The cleaned document (scripts and styles kept), declared as UTF-8.

    Parses the page a second time and removes the same candidates, matched by document order.
    A text block in ``repeated`` goes when it is a whole element (a paragraph, heading, list
    item, cell …: an element whose text is that one block); text loose in a larger element stays.
    """
    tree = _parse(markup)
    doomed = _doomed(page, template)
    if doomed:
        nodes = _candidates(tree)
        if len(nodes) == len(page.hashes):
            # Innermost first, so no removed node is touched through a removed ancestor.
            for i in sorted(doomed, reverse=True):
                nodes[i].decompose()
    body = tree.body
    if repeated and body is not None:
        # In reverse document order: descendants go before their ancestors are looked at.
        for node in reversed(body.css(_BLOCK_ELEMENT_SELECTOR)):
            text = node.text(separator=" ", strip=True)
            if text and block_digest(text) in repeated:
                node.decompose()
    for meta in tree.css("meta[charset]"):
        meta.attrs["charset"] = "utf-8"
    for meta in tree.css("meta[http-equiv]"):
        if (meta.attrs.get("http-equiv") or "").lower() == "content-type":
            meta.attrs["content"] = "text/html; charset=utf-8"
    return tree.html or ""
