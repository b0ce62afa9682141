"""Pass 1's walks in C, where they were built and where they agree with the Python path.

:mod:`warcdeboil.page._walk` (``_walk.c``, compiled by ``pip install`` where a C compiler is
found) reads the roles of a body's elements and makes its marked text straight from lexbor's
tree, where :func:`warcdeboil.page.dom.analyse` otherwise inserts its marks as text nodes and
reads the text back; and it does the walks that later steps make over marked text (the blocks of
a signature, the template slots, content mode's blocks, features and scores). It reads lexbor's
structs from the node addresses selectolax gives, so before it is used :func:`load` checks that
those structs are laid out as it reads them (against what selectolax itself says of a small
tree) and that it gives what the Python path gives on a page exercising every mark; otherwise
the Python path is taken, and :func:`warcdeboil.page.dom.walk_status` says why (``warcdeboil
clean -v`` prints it).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from selectolax.lexbor import LexborHTMLParser
from xxhash import xxh3_64_intdigest

__all__ = ["PURE_PYTHON", "TagKinds", "Walker", "load"]

# Set (to anything but "" or "0"), the Python path is taken even where the C walks were built:
# what the fallback tests and a user who suspects the compiled path use.
PURE_PYTHON = "WARCDEBOIL_PURE_PYTHON"

# What a tag is to analyse() (the flags of _walk.c, one bit each).
CANDIDATE, LINE_END, LINE_START, ROLE_TAG, TAG_ROLE, FORM_LIST, INVISIBLE, HEADING, LINK = (
    1 << bit for bit in range(9)
)


class Walker(Protocol):
    """The compiled walker (``_walk.Walker``)."""

    def roles(self, address: int) -> tuple[int, bytes, bytes, bytes]: ...

    def text(self, address: int, plan: bytes | bytearray, structure: bool) -> Any: ...

    def block_texts(self, marked: bytes, inline_spaces: bool) -> list[bytes] | None: ...

    def split_blocks(self, marked: str, block_type: Any, max_ancestors: int) -> list[Any]: ...

    def feature_columns(self, blocks: list[Any], sentence_end: str,
                        short_block: int) -> list[list[float]] | None: ...

    def context_columns(self, blocks: list[Any], scores: list[float], window: int,
                        core_share: float, clip: float) -> list[list[float]] | None: ...

    def weighted_sum(self, columns: list[list[float]], weights: tuple[float, ...],
                     bias: float) -> list[float] | None: ...

    def without_structure_marks(self, marked: bytes) -> bytes: ...

    def doomed_slots(self, marked: bytes, page_slots: Any, slots: Any,
                     limit: float) -> list[tuple[int, int, int]]: ...


@dataclass(frozen=True)
class TagKinds:
    """What the compiled walks need to know of analyse(): the tag numbers of each kind of element
    it treats apart, the structure mark before and after an element of a tag, the roles each
    tag, word and ARIA role gives (lexbor's numbers, read from selectolax)."""

    kinds: Mapping[int, int]  # tag number -> its kinds (the flags above)
    before: Mapping[int, str]
    after: Mapping[int, str]
    tag_roles: Mapping[int, int] = field(default_factory=dict)  # tag number -> role bits
    tag_names: Mapping[int, str] = field(default_factory=dict)  # of the role-bearing tags
    # each word that gives a role by class or id, as re.findall tries them, with its role bits
    literals: tuple[tuple[bytes, int], ...] = ()
    aria: tuple[tuple[bytes, int], ...] = ()  # each ARIA role that gives a role, its bits
    slot_roles: int = 0  # the role bits of the roles that can be template slots
    main_bits: int = 0  # the role bit itemprop=articleBody gives

    def tables(self) -> tuple[list[int], list[int], list[int], list[int], tuple[bytes | None, ...]]:
        size = max([*self.kinds, *self.tag_roles, *self.tag_names], default=0) + 1
        flags, before, after, bits = [0] * size, [0] * size, [0] * size, [0] * size
        names: list[bytes | None] = [None] * size
        for tag, kind in self.kinds.items():
            flags[tag] = kind
        for tag, mark in self.before.items():
            before[tag] = ord(mark)
        for tag, mark in self.after.items():
            after[tag] = ord(mark)
        for tag, roles in self.tag_roles.items():
            bits[tag] = roles
        for tag, name in self.tag_names.items():
            names[tag] = name.encode("ascii")
        return flags, before, after, bits, tuple(names)


_GROUP = re.compile(r"\(\?:([a-z0-9|-]+)\)")


def word_literals(pattern: str) -> list[str]:
    """The strings ``pattern`` matches, in the order Python's re tries them: for the patterns of
    the role words, which are letters, digits and hyphens with ``x?`` (``x`` first, then
    nothing) and ``(?:a|b)`` (``a`` first). Any other syntax is refused."""
    group = _GROUP.search(pattern)
    if group is not None:
        head, tail = pattern[: group.start()], pattern[group.end():]
        return [word for choice in group.group(1).split("|")
                for word in word_literals(head + choice + tail)]
    at = pattern.find("?")
    if at > 0:
        head, optional, tail = pattern[: at - 1], pattern[at - 1], pattern[at + 1:]
        return [*word_literals(head + optional + tail), *word_literals(head + tail)]
    if not pattern or not all(c.isascii() and (c.isalnum() or c == "-") for c in pattern) \
            or pattern != pattern.lower():
        raise ValueError(f"not a role word the compiled walks can search for: {pattern!r}")
    return [pattern]


def kinds_of(groups: Iterable[tuple[int, Iterable[int]]]) -> dict[int, int]:
    """Per tag number, the union of the flags of the groups (flag, tag numbers) it is in."""
    kinds: dict[int, int] = {}
    for flag, tags in groups:
        for tag in tags:
            kinds[tag] = kinds.get(tag, 0) | flag
    return kinds


@dataclass(frozen=True)
class Loaded:
    """The walker to use (None: the Python path) and the one line that says why."""

    walker: Walker | None
    status: str


def load(
    tags: TagKinds,
    agrees: Callable[[Walker], bool],
    describe: Callable[[str, str | None, str | None], tuple[int, bytes]],
) -> Loaded:
    """The compiled walker if it was built, reads this selectolax's lexbor as it expects and
    ``agrees`` with the Python path; else None, with the reason. ``describe``: the roles and
    slot of an element by its tag, class and id, which the walker asks where those are not
    ASCII (dom._describe)."""
    if os.environ.get(PURE_PYTHON, "") not in ("", "0"):
        return Loaded(None, f"page walks in Python ({PURE_PYTHON} is set)")
    try:
        from warcdeboil.page import _walk  # type: ignore[attr-defined]
    except ImportError:
        return Loaded(None, "page walks in Python (the C extension was not built)")
    probe = LexborHTMLParser('<body><div class="probe x"><p>one two</p></div><span></span></body>')
    div = probe.css_first("div")
    paragraph = probe.css_first("p")
    span = probe.css_first("span")
    body = probe.body
    if div is None or paragraph is None or span is None or body is None:
        return Loaded(None, "page walks in Python (selectolax parsed the probe page otherwise)")
    text = next(paragraph.iter(include_text=True), None)
    if text is None or not _walk.probe(
        div.mem_id, body.mem_id, paragraph.mem_id, span.mem_id, div.tag_id,
        text.mem_id, text.tag_id, len(b"one two"), b"probe x",
    ):
        return Loaded(None, "page walks in Python (lexbor's structs are not laid out as "
                            "the C extension reads them)")
    # Each name by its number where lexbor knows it, else by its characters (0 then).
    names = LexborHTMLParser('<div role="" itemprop="" href=""></div>').css_first("div")
    assert names is not None
    expected = (b"role", b"itemprop", b"href")
    keys = _walk.attribute_keys(names.mem_id)
    if len(keys) != len(expected) or any(
        isinstance(key, bytes) and key != name for name, key in zip(expected, keys, strict=True)
    ):
        return Loaded(None, "page walks in Python (lexbor's attribute names are not laid out "
                            "as the C extension reads them)")
    role, itemprop, href = (0 if isinstance(key, bytes) else key for key in keys)
    flags, before, after, tag_bits, tag_names = tags.tables()
    walker = _walk.Walker(
        flags, before, after, tag_bits, tag_names, text_tag=text.tag_id, role=role,
        itemprop=itemprop, href=href, literals=tags.literals, aria=tags.aria, describe=describe,
        hasher=xxh3_64_intdigest, slot_roles=tags.slot_roles, main_bits=tags.main_bits,
    )
    if not agrees(walker):
        return Loaded(None, "page walks in Python (the C extension's answer differs)")
    return Loaded(walker, "page walks in C (warcdeboil.page._walk)")
