"""The HTML hot path: one parse per page gives everything both passes need.

:func:`analyse` parses a page once and returns a :class:`PageText`: the visible text of the body
with *markers* where each candidate subtree opens and closes and where a line ends, and the 64-bit
hash of every candidate. From that, pass 2 removes a site's template with string operations alone
(:func:`clean_text`); only WARC output, which writes HTML, parses the page a second time
(:func:`clean_html`). The document is never serialised in pass 1: that was 8 % of a content-mode
run's instructions, spent only to estimate the HTML bytes a text output leaves.

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
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache, lru_cache
from itertools import accumulate, compress, islice, repeat
from operator import attrgetter, ge, methodcaller, not_
from typing import NamedTuple, TypeVar

from selectolax.lexbor import LexborHTMLParser
from selectolax.lexbor import LexborNode as Node
from xxhash import xxh3_64_intdigest

from warcdeboil.page import walker as walks
from warcdeboil.page.walker import Walker

__all__ = [
    "BLOCK_RUN_SPLIT",
    "BLOCK_SPLIT",
    "CANDIDATE_TAGS",
    "INLINE_MARKS",
    "SLOT_CUT",
    "SUBTREE_CUT",
    "PageSignature",
    "PageText",
    "analyse",
    "block_digest",
    "clean_html",
    "clean_text",
    "count_repeated",
    "inline_as_spaces",
    "page_signature",
    "plain_block_digests",
    "remove_repeated",
    "template_cuts",
    "without_structure",
    "without_structure_marks",
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
_TAG_SEEDS = {tag: xxh3_64_intdigest(tag.encode("ascii")) for tag in CANDIDATE_TAGS}

# Elements whose content is not text of the page, taken out of the tree after it is measured.
# The parser reads the content of <iframe>, <noembed> and <noframes> as raw text: a fallback that
# browsers never render (the spec's rendering section hides noembed and noframes; an iframe shows
# its document), kept as one text node with any markup in it as literal characters. Kept, an ad's
# "<a href=...><img src=...>" fallback ended up in the page's text.
INVISIBLE_TAGS: list[str] = ["script", "style", "template", "iframe", "noembed", "noframes"]
# Form controls that list options: a <select> shows one at a time, a <datalist> none. The list of
# a country picker's options came out as two hundred lines of text. They can hold elements (the
# parser builds a customizable select's <div>s), so the page's elements are read without them
# and what they hold (see _elements_as_analysed): a candidate inside would otherwise be marked,
# then lose its marks with them, and each candidate after it would take the hash of the one
# before.
FORM_LIST_TAGS: list[str] = ["select", "datalist"]

# Elements after which the text starts a new line (inline content is joined by a space) ...
_LINE_END_TAGS = frozenset((
    "p", "li", "h1", "h2", "h3", "h4", "h5", "h6", "br", "tr", "pre", "blockquote", "dt", "dd",
    "figcaption", "caption", "hr", "address", "summary", "legend", "option", "center", "figure",
    "details", "fieldset",
))
# ... and the block elements before which it does too: text can come right before one in the
# same parent ("Posted by Bob<p>First paragraph.", the text of a page before its first <p>), and
# a browser puts it on a line of its own. Not list items, rows, terms or definitions: what precedes
# one of those is another one, or the mark of its list, table or dl.
_LINE_START_TAGS = frozenset((
    "p", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "blockquote", "figcaption", "address",
    "legend", "center", "figure", "details", "fieldset",
))
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

# Role marks (with or without ``structure``): a pair of marks around every block-level element
# that names its role, in its tag, its ARIA role or the words of its class and id — what a page's
# author says a part of it is. Content mode reads them as features of the blocks inside, the fit
# learns template slots from them; they are block boundaries, and the candidate hashes never see
# them (attributes stay out of the template). The words are the ones page templates commonly use
# for these parts; the model weighs them, these only name them.
ROLE_COMMENTS = 0  # readers' comments and replies
ROLE_ASIDE = 1  # sidebars, related and recommended links, sharing, promotion, newsletters
ROLE_CHROME = 2  # navigation, site header and footer, breadcrumbs, cookie notices
ROLE_META = 3  # bylines, dates, tags, captions and credits
ROLE_MAIN = 4  # the article itself
ROLES = 5
ROLE_OPEN = tuple(chr(0xFDE1 + 2 * role) for role in range(ROLES))
ROLE_CLOSE = tuple(chr(0xFDE2 + 2 * role) for role in range(ROLES))


# Per role: the words (lower case) whose presence in an element's class or id gives it the role.
_ROLE_WORDS: tuple[tuple[str, ...], ...] = (
    ("comment", "disqus", "reply", "discussion"),
    ("sidebar", "widget", "related", "recommend", "shar(?:e|ing)", "social", "promo", "sponsor",
     "advert", "newsletter", "subscri", "signup", "popular", "trending", "most-?read", "teaser",
     "outbrain", "taboola"),
    ("nav", "menu", "footer", "masthead", "breadcrumb", "cookie", "consent", "banner", "skip",
     "toolbar"),
    ("byline", "author", "date", "timestamp", "tags", "caption", "credit", "meta"),
    ("article", "story", "entry", "post-?body", "post-?content", "main-?content"),
)


def _first_letter_alternation(words: Iterable[str]) -> str:
    """One regular expression for the words, grouped by first letter: re tries an alternative
    only when its first letter matches, so a scan of a class list costs ~0.8 µs where the plain
    alternation of every word cost ~2.8 µs (names of dragnet's role-tag elements). The words
    keep their order within a letter, so the roles found are those of the plain alternation (a
    test runs every pair of words through both)."""
    by_first: dict[str, list[str]] = {}
    for word in words:
        by_first.setdefault(word[0], []).append(word[1:])
    return "|".join(f"{first}(?:{'|'.join(rests)})" for first, rests in by_first.items())


_ROLE_WORD_PATTERN = re.compile(_first_letter_alternation(w for ws in _ROLE_WORDS for w in ws))
# Which role a matched word gives (each role's words as one expression).
_ROLE_OF_WORD = tuple(re.compile("|".join(words)) for words in _ROLE_WORDS)
# The roles (ascending) whose bit is set in each set of roles.
_ROLES_OF_BITS = tuple(
    tuple(role for role in range(ROLES) if bits >> role & 1) for bits in range(1 << ROLES)
)
# Roles given by a tag or an ARIA role (a bit each).
_TAG_ROLES = {"aside": 1 << ROLE_ASIDE, "nav": 1 << ROLE_CHROME, "footer": 1 << ROLE_CHROME,
              "figcaption": 1 << ROLE_META, "article": 1 << ROLE_MAIN, "main": 1 << ROLE_MAIN}
_ARIA_ROLES = {"complementary": 1 << ROLE_ASIDE, "navigation": 1 << ROLE_CHROME,
               "contentinfo": 1 << ROLE_CHROME, "banner": 1 << ROLE_CHROME,
               "main": 1 << ROLE_MAIN}
_DIGITS = re.compile(r"\d+")
# Class and id names remembered per process in the cache of role descriptions: a site's names
# and the common ones stay cached. Peak RSS of `clean` on dragnet's 1,381 pages: 92 MB with two
# caches (names, then names without digits) of 65,536 each, 76 MB with two of this size, 73 MB
# with this one.
_ROLE_CACHE = 1 << 13
# The roles whose elements can be template slots: parts a site puts on its pages in the same
# place, with content that may change from page to page (comments, related links, navigation).
SLOT_ROLES = frozenset({ROLE_COMMENTS, ROLE_ASIDE, ROLE_CHROME})
# A slot is not removed from a page where it holds more than this share of the marked text: an
# element that large is the page itself, whatever its class says ("content-with-sidebar").
MAX_SLOT_SHARE = 0.5
# Only block-level elements get role marks (a mark is a block boundary: one around a link would
# cut its sentence in two).
_ROLE_TAGS = frozenset({
    "div", "section", "aside", "article", "main", "header", "footer", "nav", "ul", "ol", "li",
    "dl", "table", "form", "figure", "figcaption", "p", "blockquote", "details", "menu",
})


def _tag_ids(names: Iterable[str]) -> dict[str, int]:
    """lexbor's number for each tag name: fixed for the standard elements (an unknown element
    gets one of its own, never one of these)."""
    document = LexborHTMLParser("")
    return {name: document.create_node(name).tag_id for name in names}


# The tables analyse() sorts elements with, by tag number: reading ``tag_id`` makes no string
# (0.065 ms a dragnet page for all its elements, where ``tag`` took 0.13 ms).
_TAG_ID = attrgetter("tag_id")
_IDS = _tag_ids({*CANDIDATE_TAGS, *_LINE_END_TAGS, *_LINE_START_TAGS, *_ROLE_TAGS, *_BEFORE,
                 *_AFTER, *FORM_LIST_TAGS, *INVISIBLE_TAGS})
_INVISIBLE_IDS = frozenset(map(_IDS.__getitem__, INVISIBLE_TAGS))
_FORM_LIST_IDS = frozenset(map(_IDS.__getitem__, FORM_LIST_TAGS))
_CANDIDATE_SEEDS = {_IDS[tag]: seed for tag, seed in _TAG_SEEDS.items()}
_LINE_END_IDS = frozenset(map(_IDS.__getitem__, _LINE_END_TAGS))
_LINE_START_IDS = frozenset(map(_IDS.__getitem__, _LINE_START_TAGS))
_ROLE_TAG_NAMES = {_IDS[tag]: tag for tag in _ROLE_TAGS}
# Marks are inserted as UTF-8 bytes: a str would be encoded at every insert (~10 % of its cost).
_BEFORE_IDS = {_IDS[tag]: mark.encode() for tag, mark in _BEFORE.items()}
_AFTER_IDS = {_IDS[tag]: mark.encode() for tag, mark in _AFTER.items()}
_OPEN_BYTES, _CLOSE_BYTES = OPEN.encode(), CLOSE.encode()


def _for_bytes(method: Callable[..., None]) -> Callable[[Node, bytes], None]:
    """The version of a node method taking text or a node that takes bytes. selectolax compiles
    such methods once per type of argument (a Cython fused function), and a call to the method
    itself chooses one at every call: packing its arguments in tuples and looking their types
    up cost more than the insert (dragnet: about 1,250 inserts a page; this and calling with the
    node rather than through ``methodcaller`` took 4 % off a run's instructions, callgrind). Any
    other selectolax gets its method as it is."""
    versions = getattr(method, "__signatures__", None)
    return versions.get("bytes", method) if isinstance(versions, Mapping) else method


_T = TypeVar("_T")


def _each(
    method: Callable[[Node, _T], object], nodes: Iterable[Node], args: Iterable[_T]
) -> None:
    """``method(node, arg)`` for each node and its argument, the loop in C (``map``, drained by a
    deque that keeps nothing)."""
    deque(map(method, nodes, args), maxlen=0)


# Mark inserts, each a text node of its own before or after an element: ``(node, mark)``.
_INSERT_BEFORE = _for_bytes(Node.insert_before)
_INSERT_AFTER = _for_bytes(Node.insert_after)
_ROLE_OPEN_BYTES = tuple(mark.encode() for mark in ROLE_OPEN)
_ROLE_CLOSE_BYTES = tuple(mark.encode() for mark in ROLE_CLOSE)
_MARK_BYTES = len(OPEN.encode())
_CANDIDATE_MARK_BYTES = re.compile(b"\xef\xb7[\x90\x91]")
_ANY_MARK = re.compile("[\ufdd0-\ufdef]")
_BLOCK_START_MARKS = re.compile("[\ufdd5-\ufddb\ufddd\ufdde\ufde1-\ufdea]")
_INLINE_MARKS = re.compile("[\ufdd3\ufdd4\ufddf\ufde0]")
_ROLE_MARKS = re.compile("[\ufde1-\ufdea]")
_ANY_MARK_BYTES = re.compile(b"\xef\xb7[\x90-\xaf]")
# Marks that end a text block (line): the candidate and line marks, those before headings,
# list items, quotes and code, and the role marks.
_BLOCK_MARK_BYTES = re.compile(b"\xef\xb7[\x90-\x92\x95-\x9b\x9d\x9e\xa1-\xaa]")
_ROLE_MARK_BYTES = re.compile(b"\xef\xb7[\xa1-\xaa]")
_UNHASHED_MARK_BYTES = re.compile(b"\xef\xb7[\x93-\xaa]")
# A structure or role mark with the separator before it (how body.text() puts a mark, a text
# node of its own, in the text): what a candidate's hash leaves out.
_SPACED_UNHASHED_MARK_BYTES = re.compile(b" \xef\xb7[\x93-\xaa]")
# The structure marks (U+FDD3..U+FDE0), each with the separator body.text() put before it, and
# those that open the text, each with the separator after it: what analyse() without
# ``structure`` would not have made. Two patterns: one alternation of both was 2.8 times as slow
# (168 against 60 us a dragnet page), the spaced one having no literal prefix to search for.
_SPACED_STRUCTURE_MARK_BYTES = re.compile(b" \xef\xb7[\x93-\xa0]")
_LEADING_STRUCTURE_MARKS = re.compile(b"(?:\xef\xb7[\x93-\xa0] ?)+")
# Block boundaries (captured by split: text at even indexes, marks between) and inline marks
# (links, cells, emphasis: inside a block, each is a space) in decoded marked text. Every reader
# of blocks uses these two: the fit's digests, content.split_blocks, remove_repeated.
_BLOCK_MARKS = "\ufdd0-\ufdd2\ufdd5-\ufddb\ufddd\ufdde\ufde1-\ufdea"  # a character class's body
BLOCK_SPLIT = re.compile(f"([{_BLOCK_MARKS}])")
# The same boundaries, but each run of marks with only spaces between them as one (captured,
# texts at even indexes): the texts between runs are those BLOCK_SPLIT gives less the blank ones,
# each with the spaces before and after it. Splitting at single marks made three matches and
# pieces out of four that were never text (content.split_blocks).
BLOCK_RUN_SPLIT = re.compile(f"([{_BLOCK_MARKS}](?:[ {_BLOCK_MARKS}]*[{_BLOCK_MARKS}])?)")
INLINE_MARKS = (LINK_OPEN, LINK_CLOSE, CELL, STRONG, EMPHASIS)
# A run of block boundaries and the spaces between them, where only the texts between runs
# matter: four in five of the texts between single marks are blank (marks follow marks), and
# not making them halved the cost of a page's block digests (0.60 -> 0.33 ms on dragnet).
_BLOCK_RUN = re.compile(f"[{_BLOCK_MARKS}][ {_BLOCK_MARKS}]*")
_LINE_BYTES = LINE.encode()
# The bytes of spaces and markers (U+FDD0..U+FDEF are EF B7 90..AF): a text that strips to
# nothing with these has no text (bytes.strip: a third of a regex search's cost).
_NOT_TEXT_BYTES = b" \xef\xb7" + bytes(range(0x90, 0xB0))
# Candidates on a page above which _measure_spans finds the subtrees without text by counting
# (see there): 2,000 nested empty subtrees cost 0.03 s the other way. Dragnet's pages have 158.
MANY_CANDIDATES = 2000
_LSTRIP_NOT_TEXT = methodcaller("lstrip", _NOT_TEXT_BYTES)
_AFTER_MARK = _MARK_BYTES.__add__

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
    structured: bool = False  # ``marked`` holds structure marks too
    meta: PageMeta = NO_META
    # per role mark that opens, in the order of ``marked``: the digest of its element's slot
    # (0: a role that is never template)
    slots: array = field(default_factory=lambda: array("Q"))
    # per role mark that opens, likewise: where its element is among the body's elements as
    # analyse() reads them, so that WARC output's second parse finds it without reading the
    # roles again (empty: not known, they are read again)
    owners: array = field(default_factory=lambda: array("I"))


@dataclass(slots=True)
class PageSignature:
    """What the fit needs of one page: its candidate hashes and its text-block fingerprint."""

    hashes: array  # sorted, unique 64-bit hashes (candidates, and the whole body)
    blocks: array  # 64-bit hashes of long text blocks (near-duplicate detection)
    block_sizes: array  # characters in each of those blocks
    text_bytes: int  # UTF-8 bytes of visible text
    texts: array = field(default_factory=lambda: array("Q"))  # every text block's digest, unique
    slots: array = field(default_factory=lambda: array("Q"))  # its template-role slots, unique


@dataclass(slots=True)
class CleanText:
    """A page's text after template removal."""

    text: str
    removed: int  # candidate subtrees removed (nested ones included)
    slots: int = 0  # template slots removed


def analyse(markup: str | bytes, *, structure: bool = False) -> PageText:
    """Parse a page once (bytes must be UTF-8) and compute what both passes need.

    With ``structure``, the marked text also holds the structure marks (links, headings, list
    items, cells, quotes, code, emphasis) and the page's :class:`PageMeta` is read.
    """
    return _analyse(markup, structure, _WALKS.walker)


def _analyse(markup: str | bytes, structure: bool, walker: Walker | None) -> PageText:
    """:func:`analyse`, its walks made by ``walker`` (None: in Python)."""
    tree, title_text = _parse_with_title(markup)
    title = " ".join(title_text.split())
    meta = NO_META
    if structure:
        crumbs = b"readcrumb" in markup if isinstance(markup, bytes) else "readcrumb" in markup
        meta = _page_meta(tree, crumbs)
    body = tree.body
    if body is None:
        return PageText(title, b"", array("Q"), array("I"), structure, meta)
    if walker is not None:
        walked = _walked(walker, body, title, structure, meta)
        if walked is not None:
            return walked
    # One walk over the elements, sorted by tag with the loops in C: a selector per kind of
    # element walked the tree once each (0.2-0.3 ms a page each, five times).
    elements, ids = _elements_as_analysed(body, strip=True)
    candidate = list(map(_CANDIDATE_SEEDS.__contains__, ids))
    nodes = list(compress(elements, candidate))
    seeds = list(map(_CANDIDATE_SEEDS.__getitem__, compress(ids, candidate)))
    line_ends = list(compress(elements, map(_LINE_END_IDS.__contains__, ids)))
    line_starts = list(compress(elements, map(_LINE_START_IDS.__contains__, ids)))
    roles = _role_elements(elements, ids)
    marks = _structure_marks(elements, _without_heading_anchors(elements, ids)) \
        if structure else None
    invisible = list(compress(elements, map(_INVISIBLE_IDS.__contains__, ids)))
    del elements  # scripts and styles leave the tree below
    # Loops over nodes run in C through map(); each marker is a text node of its own.
    _each(_INSERT_BEFORE, nodes, repeat(_OPEN_BYTES))
    _each(_INSERT_AFTER, nodes, repeat(_CLOSE_BYTES))
    # Out of the tree from the list in hand: strip_tags(INVISIBLE_TAGS) walked the tree once a
    # tag (0.7 % of a dragnet run's instructions).
    _unlink(invisible)
    _each(_INSERT_AFTER, line_ends, repeat(_LINE_BYTES))
    _each(_INSERT_BEFORE, line_starts, repeat(_LINE_BYTES))
    # Role marks before the structure marks: those then sit inside them, next to their element.
    slots, owners = _insert_role_marks(roles)
    if marks is not None:
        _insert_structure_marks(*marks)
    marked = body.text(separator=" ", strip=True, skip_empty=True).encode("utf-8", "surrogatepass")
    hashes, spans = _measure_spans(marked, seeds)
    return PageText(title, marked, hashes, spans, structure, meta, slots, owners)


def _walked(
    walker: Walker, body: Node, title: str, structure: bool, meta: PageMeta
) -> PageText | None:
    """The rest of :func:`analyse` by the compiled walks (see :mod:`warcdeboil.page.walker`):
    the same page, the tree left as it is; None where a text is not UTF-8 (the Python path
    then reads it as selectolax decodes it)."""
    address = body.mem_id
    _, plan, slot_digests, owner_indexes = walker.roles(address)
    slots = array("Q", slot_digests)
    owners = array("I", owner_indexes)
    walked = walker.text(address, plan, structure)
    if walked is None:
        return None
    marked, tags, (hashed, spans, which, starts, ends) = walked
    hashes = array("Q", bytes(8 * len(tags)))
    seeds = map(_CANDIDATE_SEEDS.__getitem__, map(tags.__getitem__, which))
    texts = map(hashed.__getitem__, map(slice, starts, ends))
    for i, digest in zip(which, map(xxh3_64_intdigest, texts, seeds), strict=True):
        hashes[i] = digest
    return PageText(title, marked, hashes, array("I", spans), structure, meta, slots, owners)


# A <title> is raw text up to its end tag: without one, it holds the rest of the document and
# the page has no body text at all. Browsers before HTML5 ended it at the next tag, and so does
# this repair, tried only when a title is longer than this (in characters) and holds a tag.
MAX_TITLE_CHARS = 1024
_TITLE_START = re.compile(r"<title\b[^>]*>", re.IGNORECASE)


def _parse(markup: str | bytes) -> LexborHTMLParser:
    """The document tree of a page (without our marks), an unclosed ``<title>`` closed."""
    return _parse_with_title(markup)[0]


def _parse_with_title(markup: str | bytes) -> tuple[LexborHTMLParser, str]:
    """:func:`_parse`, and the text of the tree's first ``<title>`` ("" without one)."""
    markup = _without_marks(markup)
    tree = LexborHTMLParser(markup)
    node = tree.css_first("title")
    text = node.text() if node is not None else ""
    if len(text) > MAX_TITLE_CHARS:
        repaired = _close_title(markup)
        if repaired is not None:
            tree = LexborHTMLParser(repaired)
            node = tree.css_first("title")
            text = node.text() if node is not None else ""
    return tree, text


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


_StructureMarks = tuple[list[Node], list[bytes], list[Node], list[bytes]]


# A link to a place on its own page (``href="#..."``) leads nowhere else: as a heading's child
# (a documentation page's link to its own section, or the pilcrow after its title) it gets no
# link marks, and the heading counts as text, not as a teaser's linked title. WCXB
# (scripts/convert_wceb.py): 5 % of its pages have such headings; mean F1 on its documentation
# pages, dev split 0.904 -> 0.906, test split 0.894 -> 0.901; the five sets of ../shared/eval
# within 0.0001. A heading's children are read in Python (a selector per heading cost twice as
# much: it is compiled each call), 27 us a dragnet page, 2 % of analyse().
_HEADING_IDS = frozenset(_IDS[f"h{level}"] for level in range(1, 7))
_NO_TAG = -1  # a tag number no tag has


def _without_heading_anchors(elements: list[Node], ids: list[int]) -> list[int]:
    """``ids`` with the links to the page itself that are children of headings numbered as no
    tag (they get no structure mark)."""
    anchors = set()
    for heading in compress(elements, map(_HEADING_IDS.__contains__, ids)):
        for child in heading.iter():
            if child.tag == "a" and (child.attributes.get("href") or "").startswith("#"):
                anchors.add(child.mem_id)
    if not anchors:
        return ids
    return [_NO_TAG if element.mem_id in anchors else tag
            for element, tag in zip(elements, ids, strict=True)]


def _structure_marks(elements: list[Node], ids: list[int]) -> _StructureMarks:
    """The elements that get a structure mark before them and those that get one after them,
    each with its mark (see :data:`_BEFORE` and :data:`_AFTER`); ``ids``: their tag numbers."""
    before = list(map(_BEFORE_IDS.__contains__, ids))
    after = list(map(_AFTER_IDS.__contains__, ids))
    return (
        list(compress(elements, before)), list(map(_BEFORE_IDS.__getitem__, compress(ids, before))),
        list(compress(elements, after)), list(map(_AFTER_IDS.__getitem__, compress(ids, after))),
    )


def _insert_structure_marks(
    before: list[Node], before_marks: list[bytes], after: list[Node], after_marks: list[bytes]
) -> None:
    _each(_INSERT_BEFORE, before, before_marks)
    _each(_INSERT_AFTER, after, after_marks)


_RoleElement = tuple[Node, int, bytes, int]


def _role_elements(elements: list[Node], ids: list[int]) -> list[_RoleElement]:
    """The block-level elements that have a role — by tag, by ARIA role, as schema.org's article
    body, or by the words of their class and id — in document order, each with its roles (a bit
    each) and its *slot*: tag, class and id without digits, what names the element's place in
    the site's template (``div comments``, not ``div comment-8812``); and its index in
    ``elements``.

    From every element of the body (``elements``, ``ids`` their tag numbers): a selector list
    such as ``aside, [class], [id]`` returns an element once for each selector it matches."""
    found: list[_RoleElement] = []
    keep = list(map(_ROLE_TAG_NAMES.__contains__, ids))
    tags = map(_ROLE_TAG_NAMES.__getitem__, compress(ids, keep))
    for node, tag, index in zip(compress(elements, keep), tags, compress(range(len(keep)), keep),
                                strict=True):
        attributes = node.attributes
        if not attributes:  # only its tag can give it a role
            if tag in _TAG_ROLES:
                found.append((node, *_describe(tag, None, None), index))
            continue
        bits, slot = _describe(tag, attributes.get("class"), attributes.get("id"))
        if "role" in attributes:
            bits |= _ARIA_ROLES.get(attributes["role"] or "", 0)
        if "itemprop" in attributes and attributes["itemprop"] == "articleBody":
            bits |= 1 << ROLE_MAIN
        if bits:
            found.append((node, bits, slot, index))
    return found


@lru_cache(maxsize=_ROLE_CACHE)
def _describe(tag: str, class_: str | None, id_: str | None) -> tuple[int, bytes]:
    """The roles an element's tag, class and id give it (a bit each), and its slot. Cached:
    names recur on every page of a site and across sites; a miss costs ~1-3 µs."""
    names = f"{class_ or ''} {id_ or ''}"
    bits = _TAG_ROLES.get(tag, 0)
    for word in _ROLE_WORD_PATTERN.findall(names.lower()):
        bits |= _word_bits(word)
    if not bits:
        return 0, b""
    # Ids that differ only by number (comment-8812, comment-8813) name one slot.
    slot = " ".join([tag, *_DIGITS.sub("", names).split()])
    return bits, slot.encode("utf-8", "surrogatepass")


@cache  # the words' forms are few (most-read, mostread, ...)
def _word_bits(word: str) -> int:
    for role, pattern in enumerate(_ROLE_OF_WORD):
        if pattern.fullmatch(word):
            return 1 << role
    return 0


def _insert_role_marks(elements: list[_RoleElement]) -> tuple[array, array]:
    """Puts the role marks around the elements that have a role (see :data:`ROLE_OPEN`), and
    returns, for each opening mark in the order of the text, the digest of the element's slot
    in that role (0 for the roles that are never template: meta and main), and the element's
    index (see PageText.owners)."""
    slots = array("Q")
    owners = array("I")
    for node, bits, slot, index in elements:
        for role in _ROLES_OF_BITS[bits]:
            _INSERT_BEFORE(node, _ROLE_OPEN_BYTES[role])
            _INSERT_AFTER(node, _ROLE_CLOSE_BYTES[role])
            slots.append(xxh3_64_intdigest(slot, role) if role in SLOT_ROLES else 0)
            owners.append(index)
    return slots, owners


def _attr(node: Node | None, name: str) -> str:
    if node is None:
        return ""
    return " ".join((node.attrs.get(name) or "").split())


_BREADCRUMB_SELECTOR = (
    "[itemtype*=BreadcrumbList], [class*=breadcrumb], [class*=Breadcrumb], [id*=breadcrumb], "
    "[id*=Breadcrumb], nav[aria-label*=readcrumb]"
)
_CRUMB_SEPARATORS = re.compile(r"\s+(?:[>»›/|→]|::)\s+")


def _page_meta(tree: LexborHTMLParser, has_crumbs: bool = True) -> PageMeta:
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
    # Every selector of a trail needs "readcrumb" in an attribute: where the page's markup has
    # none (an attribute could only hide one behind a character reference), the walk over its
    # body (0.13 ms) is not needed.
    trail = body.css_first(_BREADCRUMB_SELECTOR) if body is not None and has_crumbs else None
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
        # A mark's UTF-8 starts EF B7. A search for the one byte EF runs at memchr's speed, a
        # tenth of the search for both (0.012 against 0.15 s over dragnet's 103 MB of pages),
        # and few pages hold an EF at all (33 of dragnet's 1,381): the second search is rare.
        first = markup.find(b"\xef")
        if first < 0 or markup.find(b"\xef\xb7", first) < 0:
            return markup
        return _ANY_MARK_BYTES.sub(b"", markup)
    return _ANY_MARK.sub("", markup) if _ANY_MARK.search(markup) else markup


def _measure_spans(marked: bytes, seeds: list[int]) -> tuple[array, array]:
    """Per candidate span of ``marked``: its hash and its extent.

    Role marks come from attributes, which are no part of a candidate's representation, and
    structure marks from the output format, which must not change what the fit learns: the
    hashes are of the text without either (the k-th candidate mark is the same in both texts).
    """
    n = len(seeds)
    hashes = array("Q", bytes(8 * n))
    spans = array("I", bytes(8 * n))
    positions = [match.start() for match in _CANDIDATE_MARK_BYTES.finditer(marked)]
    hashed = marked
    at = positions
    if _UNHASHED_MARK_BYTES.search(marked) is not None:
        # One regex pass: 0.08 ms a dragnet page, where a bytes.replace per mark took 0.2 ms.
        hashed = _SPACED_UNHASHED_MARK_BYTES.sub(b"", marked)
        at = [match.start() for match in _CANDIDATE_MARK_BYTES.finditer(hashed)]
    # Whether a subtree holds text: its own text stripped of marks and spaces (lstrip stops at
    # the first text), or, on pages with many candidates, from a count of the stretches between
    # consecutive marks that hold text, each read once: an empty subtree's strip reads its
    # nested subtrees again and again (a page of 20,000 nested empty divs: 2.9 s, now 0.5-0.6 s,
    # most of it the parse; the count would cost 1.8 % of a dragnet run's instructions if made
    # on every page).
    texts_before = _texts_before(hashed, at) if n > MANY_CANDIDATES else None
    # Each candidate's marks, paired by a stack: the i-th OPEN is the i-th candidate.
    stack: list[tuple[int, int]] = []  # (candidate, index of its OPEN mark) of the open ones
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
        text = hashed[at[open_k] + _MARK_BYTES : at[k]]
        if (  # else the subtree has no text: never template
            texts_before[k + 1] > texts_before[open_k + 1]  # stretches from OPEN to CLOSE (k)
            if texts_before is not None
            else text.lstrip(_NOT_TEXT_BYTES)
        ):
            hashes[i] = xxh3_64_intdigest(text, seeds[i])
    return hashes, spans


def _texts_before(hashed: bytes, at: list[int]) -> list[int]:
    """Per mark (``at``: where each starts), how many of the stretches of ``hashed`` before it
    hold text, a stretch being the bytes after one mark up to the next; the loops in C."""
    stretches = map(hashed.__getitem__, map(slice, [0, *map(_AFTER_MARK, at)], at))
    return list(accumulate(map(bool, map(_LSTRIP_NOT_TEXT, stretches)), initial=0))


def page_signature(page: PageText) -> PageSignature:
    """Everything the fit needs of a page: the same whether the page was analysed with
    structure marks or not (its text is read without them), so that a site's profile does not
    depend on the output format (JSONL and content mode analyse with them, WARC without)."""
    return _page_signature(page, _WALKS.walker)


def _block_texts(marked: bytes, walker: Walker | None) -> list[bytes]:
    """The texts between the runs of block marks of ``marked``, each with its whitespace runs as
    one space and stripped, UTF-8 (in C where ``walker`` is, and the bytes are UTF-8)."""
    if walker is not None:
        texts = walker.block_texts(marked, False)
        if texts is not None:
            return texts
    text = marked.decode("utf-8", "surrogatepass")
    return list(map(_utf8, map(" ".join, map(str.split, _BLOCK_RUN.split(text)))))


def _page_signature(page: PageText, walker: Walker | None) -> PageSignature:
    """:func:`page_signature`, its text blocks split by ``walker`` (None: in Python)."""
    marked = _without_structure_marks(page.marked, walker) if page.structured else page.marked
    found = set(page.hashes)
    # The whole body counts in the pair's IoU (never in a removal): pages whose candidates are
    # all template still differ by their body, so they are not taken for duplicates.
    found.add(xxh3_64_intdigest(marked))
    found.discard(0)
    text_bytes = len(marked) - _MARK_BYTES * marked.count(b"\xef\xb7")
    # Each text block, normalised as block_digest does it: their digests go to the
    # repeated-block count, and the long ones, with their sizes, make the near-duplicate
    # signature.
    encoded = _block_texts(marked, walker)
    digests = list(map(xxh3_64_intdigest, encoded))
    texts = set(digests)
    texts.discard(_EMPTY_DIGEST)
    sizes = list(map(len, encoded))
    # The long blocks, each once, in document order (equal digests are equal texts, of one size).
    is_long = map(ge, sizes, repeat(MIN_SIGNATURE_BLOCK_BYTES))
    long = dict(compress(zip(digests, sizes, strict=True), is_long))
    blocks = array("Q", islice(long, MAX_SIGNATURE_BLOCKS))
    block_sizes = array("I", islice(long.values(), MAX_SIGNATURE_BLOCKS))
    return PageSignature(array("Q", sorted(found)), blocks, block_sizes, text_bytes,
                         array("Q", sorted(texts)[:MAX_TEXT_DIGESTS]),
                         array("Q", sorted(set(page.slots) - {0})))


_EMPTY_DIGEST = xxh3_64_intdigest(b"")


def without_structure_marks(marked: bytes) -> bytes:
    """Marked text without its structure marks: what :func:`analyse` gives without
    ``structure`` (each mark is a text node of its own, which ``body.text()`` separated from
    its neighbours by one space: the mark goes with that space).

    >>> linked = f"{OPEN} Read {LINK_OPEN} more {LINK_CLOSE} {CLOSE}".encode()
    >>> without_structure_marks(linked) == f"{OPEN} Read more {CLOSE}".encode()
    True
    """
    return _without_structure_marks(marked, _WALKS.walker)


def _without_structure_marks(marked: bytes, walker: Walker | None) -> bytes:
    """:func:`without_structure_marks`, in C where ``walker`` is."""
    if walker is not None:
        return walker.without_structure_marks(marked)
    leading = _LEADING_STRUCTURE_MARKS.match(marked)
    if leading is not None:
        marked = marked[leading.end():]
    return _SPACED_STRUCTURE_MARK_BYTES.sub(b"", marked)


def without_structure(page: PageText) -> PageText:
    """The page as :func:`analyse` gives it without ``structure``, from the page analysed with
    it (a run that analysed its pages once with structure marks, for its duplicate stage, writes
    an output that needs none from the same page store: :mod:`warcdeboil.run.apply`)."""
    if not page.structured:
        return page
    marked = without_structure_marks(page.marked)
    return PageText(page.title, marked, page.hashes, _spans_of(marked, len(page.hashes)),
                    False, NO_META, page.slots, page.owners)


def _spans_of(marked: bytes, n: int) -> array:
    """Where each of the ``n`` candidates of ``marked`` opens and closes, as
    :func:`_measure_spans` finds them (a candidate never closed keeps 0, 0)."""
    spans = array("I", bytes(8 * n))
    stack: list[tuple[int, int]] = []  # (candidate, where its OPEN mark starts)
    ordinal = 0
    for match in _CANDIDATE_MARK_BYTES.finditer(marked):
        pos = match.start()
        if marked[pos + 2] == 0x90:  # OPEN
            stack.append((ordinal, pos))
            ordinal += 1
        elif stack:
            i, start = stack.pop()
            if i < n:
                spans[2 * i] = start
                spans[2 * i + 1] = pos + _MARK_BYTES
    return spans


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def block_digest(text: str) -> int:
    """The digest of one text block's text (between two block marks), 0 when it has none: inline
    marks count as spaces and whitespace runs as one space, so a block digests the same in pass 1,
    as :attr:`warcdeboil.page.content.Block.text`, and as an element's text in the HTML.

    >>> linked = f" Share {LINK_OPEN}this{LINK_CLOSE}\u00a0story "
    >>> block_digest(linked) == block_digest("Share this story")
    True
    >>> block_digest("   ")
    0
    """
    words = inline_as_spaces(text).split()
    return xxh3_64_intdigest(_utf8(" ".join(words))) if words else 0


def plain_block_digests(texts: Iterable[str]) -> Iterator[int]:
    """:func:`block_digest` of texts already normalised (no marks, single spaces, stripped), as
    :attr:`warcdeboil.page.content.Block.text` is; the loop runs in C."""
    return map(xxh3_64_intdigest, map(_utf8, texts))


def inline_as_spaces(text: str) -> str:
    """The text with each inline mark a space: one ``str.replace`` per mark it holds, a tenth of
    the cost of one regex substitution of all five (0.007 against 0.067 ms a dragnet page)."""
    for mark in INLINE_MARKS:
        if mark in text:
            text = text.replace(mark, " ")
    return text


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


def count_repeated(marked: str | bytes, repeated: Collection[int]) -> int:
    """How many blocks :func:`remove_repeated` takes out of ``marked`` (text, or its UTF-8),
    without making the text (a WARC output's summary counts them; it writes no text), the loops
    in C: the blocks between runs of block marks are the non-blank ones between single marks,
    digested as :func:`page_signature` digests them (a Python call of block_digest a block was
    0.4 of a dragnet WARC run's 14 s under cProfile)."""
    if not repeated or not marked:
        return 0
    walker = _WALKS.walker
    encoded = walker.block_texts(marked, True) \
        if walker is not None and isinstance(marked, bytes) and 0 not in repeated else None
    if encoded is None:
        text = marked.decode("utf-8", "surrogatepass") if isinstance(marked, bytes) else marked
        if 0 in repeated:  # block_digest gives a blank block 0: only remove_repeated says so
            return remove_repeated(text, repeated)[1]
        texts = map(" ".join, map(str.split, _BLOCK_RUN.split(inline_as_spaces(text))))
        encoded = list(map(_utf8, texts))
    digests = map(xxh3_64_intdigest, filter(None, encoded))
    return sum(map(repeated.__contains__, digests))


class Doomed(NamedTuple):
    """What a site's profile removes from one page, found once for both its text and its HTML:
    the indexes of the candidates whose hash is template, and the template slots as
    :func:`_doomed_slots` gives them."""

    candidates: set[int]
    slots: list[tuple[int, int, int]]


def find_doomed(
    page: PageText, template: Collection[int], slots: Collection[int] = ()
) -> Doomed:
    """The candidates and role elements of ``page`` that ``template`` and ``slots`` remove."""
    return Doomed(_doomed(page, template), _doomed_slots(page, slots, _WALKS.walker))


def _doomed(page: PageText, template: Collection[int]) -> set[int]:
    if not template:
        return set()
    return {i for i, digest in enumerate(page.hashes) if digest and digest in template}


def _doomed_slots(
    page: PageText, slots: Collection[int], walker: Walker | None = None
) -> list[tuple[int, int, int]]:
    """The role elements of a page whose slot is in ``slots``, as (start, end) in ``marked`` and
    their ordinal among the page's role marks. Not those that hold what the page calls its
    article (a main-role element: Blogger's posts are "widgets") or its longest text block, nor
    those holding more than :data:`MAX_SLOT_SHARE` of the text. The marks are read in C where
    ``walker`` is (see :mod:`warcdeboil.page.walker`)."""
    if not slots or not page.slots or _disjoint(slots, page.slots):
        return []
    marked = page.marked
    limit = MAX_SLOT_SHARE * len(marked)
    if walker is not None:
        return walker.doomed_slots(marked, page.slots, slots, limit)
    longest: int | None = None  # found only when some slot passes the other tests
    n = len(page.slots)
    stacks: list[list[tuple[int, int, int]]] = [[] for _ in range(ROLES)]
    ordinal = 0
    mains = 0  # main-role elements opened so far
    found = []
    for match in _ROLE_MARK_BYTES.finditer(marked):
        role, closing = divmod(marked[match.start() + 2] - 0xA1, 2)  # OPEN, CLOSE, OPEN, ...
        if not closing:
            stacks[role].append((match.start(), ordinal, mains))
            ordinal += 1
            mains += role == ROLE_MAIN
        elif stacks[role]:
            start, k, mains_before = stacks[role].pop()
            end = match.end()
            if k >= n or page.slots[k] not in slots or end - start > limit or mains > mains_before:
                continue
            if longest is None:
                longest = _longest_block(marked)
            if not start < longest < end:
                found.append((start, end, k))
    return found


def _disjoint(slots: Collection[int], found: array) -> bool:
    """Whether none of a page's slots is one of the site's (the scan of its marks not needed)."""
    if isinstance(slots, (set, frozenset)):
        return slots.isdisjoint(found)
    return not any(map(slots.__contains__, found))


def _longest_block(marked: bytes) -> int:
    """Where the longest text block of the marked text starts (-1 when there is none): the
    first of the longest, the loops in C."""
    sizes = list(map(len, _BLOCK_MARK_BYTES.split(marked)))
    size = max(sizes)
    if not size:
        return -1
    longest = sizes.index(size)  # max() with a key over the indexes: 87 -> 78 µs a dragnet page
    return sum(sizes[:longest]) + _MARK_BYTES * longest


class Removal(NamedTuple):
    """A page's marked text without its template, and what went."""

    marked: bytes
    subtrees: int  # candidate subtrees removed (nested ones included)
    slots: int  # template slots removed (role elements whose slot the site repeats)


SUBTREE_CUT = 0
SLOT_CUT = 1


def template_cuts(
    page: PageText, template: Collection[int], slots: Collection[int] = (),
    known: Doomed | None = None,
) -> tuple[list[tuple[int, int, int, int]], int, int]:
    """What :func:`remove_template` cuts: the outermost stretches of ``marked`` to remove, in
    order, as (start, end, :data:`SUBTREE_CUT` or :data:`SLOT_CUT`, the candidate's index or the
    role mark's ordinal); then how many candidates and slots were doomed, nested ones included.
    ``known``: :func:`find_doomed` of the same arguments, when the caller has it already."""
    if known is None:
        known = find_doomed(page, template, slots)
    spans = page.spans
    found = [(spans[2 * i], spans[2 * i + 1], SUBTREE_CUT, i) for i in known.candidates]
    doomed_slots = known.slots
    found += [(start, end, SLOT_CUT, k) for start, end, k in doomed_slots]
    cuts = []
    kept_from = 0
    for cut in sorted(found):
        if cut[0] < kept_from or cut[1] <= cut[0]:
            continue  # inside a removed ancestor (or never closed)
        cuts.append(cut)
        kept_from = cut[1]
    return cuts, len(known.candidates), len(doomed_slots)


def remove_template(
    page: PageText, template: Collection[int], slots: Collection[int] = (),
    known: Doomed | None = None,
) -> Removal:
    """The marked text without the candidates whose hash is in ``template`` and the role
    elements whose slot is in ``slots`` (see :func:`_doomed_slots`); ``known`` as for
    :func:`template_cuts`."""
    cuts, subtrees, slot_count = template_cuts(page, template, slots, known)
    marked = page.marked
    if cuts:
        pieces: list[bytes] = []
        kept_from = 0
        for start, end, _, _ in cuts:
            pieces.append(marked[kept_from:start])
            pieces.append(_LINE_BYTES)  # the text around a removed block stays two blocks
            kept_from = end
        pieces.append(marked[kept_from:])
        marked = b"".join(pieces)
    return Removal(marked, subtrees, slot_count)


def plain_text(marked: str, structured: bool) -> str:
    """Marked text as plain text: one block per line, whitespace runs as one space."""
    # Every marker is a block boundary; whitespace runs become one space and empty lines go.
    # Written with map/filter so that the loop runs in C (a regex was measured 3x slower).
    text = marked.replace(OPEN, LINE).replace(CLOSE, LINE)
    if structured:  # structure marks: block starts (and role marks) end lines, the rest go
        text = _INLINE_MARKS.sub("", _BLOCK_START_MARKS.sub(LINE, text.replace(CELL, " ")))
    else:
        text = _ROLE_MARKS.sub(LINE, text)
    words = filter(None, map(str.split, text.split(LINE)))
    return "\n".join(map(" ".join, words))


def clean_text(
    page: PageText, template: Collection[int], slots: Collection[int] = ()
) -> CleanText:
    """The page's text, one block per line, without the candidates whose hash is in ``template``
    and the role elements whose slot is in ``slots``."""
    removal = remove_template(page, template, slots)
    text = plain_text(removal.marked.decode("utf-8", "surrogatepass"), page.structured)
    return CleanText(text, removal.subtrees, removal.slots)


def clean_html(
    markup: str | bytes,
    page: PageText,
    template: Collection[int],
    repeated: Collection[int] = (),
    slots: Collection[int] = (),
    known: Doomed | None = None,
) -> str:
    """The cleaned document (scripts and styles kept), declared as UTF-8.

    Parses the page a second time and removes the same candidates and template slots as
    :func:`remove_template`, matched by document order. A text block in ``repeated`` goes when it
    is a whole element (a paragraph, heading, list item, cell …: an element whose text is that
    one block); text loose in a larger element stays. ``known`` as for :func:`template_cuts`.
    """
    tree = _parse(markup)
    body = tree.body
    doomed: list[Node] = []
    if known is None:
        known = find_doomed(page, template, slots)
    candidates = known.candidates
    ordinals = [k for _, _, k in known.slots]
    if (candidates or ordinals) and body is not None:
        # The candidates and role elements picked out of the elements as analyse() read them,
        # the way it did: the k-th of each here is the k-th there.
        elements, ids = _elements_as_analysed(body)
        if candidates:
            nodes = list(compress(elements, map(_CANDIDATE_SEEDS.__contains__, ids)))
            if len(nodes) == len(page.hashes):
                doomed += [nodes[i] for i in candidates]
        if ordinals:
            doomed += _slot_owners(page, elements, ids, ordinals)
    if doomed:
        # Flagged first, then removed innermost first (in reverse document order), so that no
        # removed node is touched through a removed ancestor.
        for node in doomed:
            node.attrs[_DOOMED] = ""
        for node in reversed(tree.css(f"[{_DOOMED}]")):
            node.decompose()
    if repeated and body is not None:
        _remove_repeated_elements(body, repeated)
    declare_utf8(tree)
    return tree.html or ""


def declare_utf8(tree: LexborHTMLParser) -> None:
    """Every charset declaration of the document says UTF-8 (what it is once written out)."""
    # Both kinds of charset declaration from one walk over the tree (a walk costs 0.15 ms on a
    # page of 1,000 elements); a <meta> with both gets its charset first, as before.
    for meta in tree.css("meta"):
        attrs = meta.attrs
        if "charset" in attrs:
            attrs["charset"] = "utf-8"
        if "http-equiv" in attrs and (attrs.get("http-equiv") or "").lower() == "content-type":
            attrs["content"] = "text/html; charset=utf-8"


_ELEMENT_TEXT = methodcaller("text", separator=" ", strip=True)


def _slot_owners(
    page: PageText, elements: list[Node], ids: list[int], ordinals: list[int]
) -> list[Node]:
    """The elements of the role marks ``ordinals`` (their k-th opening role marks), found where
    pass 1 saw them (``page.owners``) when it says, else by reading the roles again (0.4 ms on
    a heavy page); none when the page does not match its analysis."""
    where = page.owners
    if len(where) == len(page.slots) and (not where or max(where) < len(elements)):
        return [elements[where[k]] for k in ordinals]
    owners = [node for node, bits, _, _ in _role_elements(elements, ids)
              for _ in _ROLES_OF_BITS[bits]]
    return [owners[k] for k in ordinals] if len(owners) == len(page.slots) else []


def _remove_repeated_elements(body: Node, repeated: Collection[int]) -> None:
    """Takes out of the tree each block element whose text is a repeated block, in reverse
    document order: an element is judged on its text once the elements inside it that went have
    gone. Every element's text is digested first, the loops in C; only the ancestors of an
    element removed are read again (one text and one digest a block element in Python was
    about 2 µs, ~0.6 ms on a heavy page)."""
    nodes = body.css(_BLOCK_ELEMENT_SELECTOR)
    texts = list(map(_ELEMENT_TEXT, nodes))
    joined = "".join(texts)
    if any(mark in joined for mark in INLINE_MARKS):  # only from character references
        digests = list(map(block_digest, texts))
    else:  # block_digest without the marks to replace
        digests = [xxh3_64_intdigest(normal) if normal else 0
                   for normal in map(_utf8, map(" ".join, map(str.split, texts)))]
    if not any(map(repeated.__contains__, compress(digests, texts))):
        return
    changed: set[int] = set()  # the ancestors of the elements removed so far (mem_id)
    for i in range(len(nodes) - 1, -1, -1):
        node = nodes[i]
        text = texts[i]
        if changed and node.mem_id in changed:
            text = node.text(separator=" ", strip=True)
            digest = block_digest(text) if text else 0
        else:
            digest = digests[i]
        if text and digest in repeated:
            parent = node.parent
            while parent is not None and parent.mem_id not in changed:
                changed.add(parent.mem_id)
                parent = parent.parent
            node.decompose()


def _elements_as_analysed(body: Node, *, strip: bool = False) -> tuple[list[Node], list[int]]:
    """The body's elements as :func:`analyse` reads them, and their tag numbers: none of them a
    <select> or <datalist> or inside one. With ``strip``, those are also taken out of the tree,
    as analyse does (their options are no text of the page); :func:`clean_html` keeps them in
    the document it writes, so the k-th candidate or role element is the same in both."""
    elements = body.css("*")
    ids = list(map(_TAG_ID, elements))
    if not _FORM_LIST_IDS.isdisjoint(ids):
        # Each list and what it holds, from its own subtree: a selector for "select *" over the
        # whole body checked every element's ancestors.
        form_lists = list(compress(elements, map(_FORM_LIST_IDS.__contains__, ids)))
        inside = set(map(_MEM_ID, form_lists))
        for form_list in form_lists:
            inside.update(map(_MEM_ID, form_list.css("*")))
        kept = list(map(not_, map(inside.__contains__, map(_MEM_ID, elements))))
        elements = list(compress(elements, kept))
        ids = list(compress(ids, kept))
        if strip:
            _unlink(form_lists)
    return elements, ids


def _unlink(nodes: list[Node]) -> None:
    """Takes the nodes out of the tree, each with what it holds (as ``strip_tags`` does by tag
    name, but without a walk over the tree for each tag)."""
    _each(Node.decompose, nodes, repeat(False))


_MEM_ID = attrgetter("mem_id")

# The attribute that flags the elements clean_html removes (never left in its output).
_DOOMED = "data-warcdeboil-template"


# A page that holds every kind of mark, on which the compiled walks must give what the Python
# path gives before they are used (warcdeboil.page.walker.load); the tests hold them to it on
# every page of the evaluation sets too.
_WALK_CHECK_PAGE = """<!doctype html><html lang=en><head><title> A  check </title>
<meta name=description content="Checked"></head><body class=page>
 Loose text<nav id=site-nav><ul><li><a href="/">Home</a></li><li><a href=/b>B</a></li></ul></nav>
<div class="main-content story" itemprop=articleBody><h1><a href="#top">Title</a> one</h1>
<h2>Two <a href="/x">linked</a></h2><p>First&nbsp;paragraph with <b>bold</b>, <i>italic</i>,
<em>stress</em> and <strong>strong</strong> words.<br>Next line \u00a0 </p>&nbsp;
<blockquote>Quoted</blockquote><pre>code  kept</pre><table><tr><td>cell</td><th>head</th></tr>
</table><dl><dt>Term</dt><dd>Definition</dd></dl><section role=complementary><p>Aside</p>
</section><div></div><div> <span> </span> </div><figure><figcaption>Caption</figcaption>
</figure></div><select><option>Pick</option><div class=sidebar>in a list</div></select>
<script>var x = "<div>";</script><style>p {}</style><template><div>inert</div></template>
<noscript><div class=comment-8812>Enable scripts</div></noscript><!-- a comment -->
<aside class="widget related-posts"><ol><li>Related</li></ol></aside>
<footer><form><datalist><option>x</option></datalist><p>Footer \u3000text</p></form></footer>
<article><header class=byline>By someone</header><main>Main text</main></article>
<iframe>fallback <b>text</b></iframe><center>Centred</center><details><summary>More</summary>
hidden</details></body></html>"""


def _walks_agree(walker: Walker) -> bool:
    return all(_analyse(_WALK_CHECK_PAGE, structure, walker)
               == _analyse(_WALK_CHECK_PAGE, structure, None) for structure in (False, True))


def _walk_kinds() -> walks.TagKinds:
    ids = _IDS
    groups = [
        (walks.CANDIDATE, _CANDIDATE_SEEDS),
        (walks.LINE_END, _LINE_END_IDS),
        (walks.LINE_START, _LINE_START_IDS),
        (walks.ROLE_TAG, _ROLE_TAG_NAMES),
        (walks.TAG_ROLE, (ids[tag] for tag in _TAG_ROLES)),
        (walks.FORM_LIST, _FORM_LIST_IDS),
        (walks.INVISIBLE, _INVISIBLE_IDS),
        (walks.HEADING, _HEADING_IDS),
        (walks.LINK, (ids["a"],)),
    ]
    literals = [word for words in _ROLE_WORDS for pattern in words
                for word in walks.word_literals(pattern)]
    return walks.TagKinds(
        walks.kinds_of(groups),
        {tag: mark.decode() for tag, mark in _BEFORE_IDS.items()},
        {tag: mark.decode() for tag, mark in _AFTER_IDS.items()},
        tag_roles={ids[tag]: bits for tag, bits in _TAG_ROLES.items()},
        tag_names=_ROLE_TAG_NAMES,
        literals=tuple((word.encode(), _word_bits(word)) for word in literals),
        aria=tuple((name.encode(), bits) for name, bits in _ARIA_ROLES.items()),
        slot_roles=sum(1 << role for role in SLOT_ROLES),
        main_bits=1 << ROLE_MAIN,
    )


# The walks analyse() uses, chosen once a process (see warcdeboil.page.walker).
_WALKS = walks.load(_walk_kinds(), _walks_agree, _describe)


def compiled_walker() -> Walker | None:
    """The compiled walks this process takes (None: the Python path), for the modules that
    read a page's marked text after pass 1 (:mod:`warcdeboil.page.content`)."""
    return _WALKS.walker


def walk_status() -> str:
    """Whether pages are walked in C or in Python, and why (one line)."""
    return _WALKS.status
