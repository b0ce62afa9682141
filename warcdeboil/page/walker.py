"""Pass 1's walks in C, where they were built and where they agree with the Python path.

:mod:`warcdeboil.page._walk` (``_walk.c``, compiled by ``pip install`` where a C compiler is
found) lists a body's elements that may have a role and makes its marked text straight from
lexbor's tree, where :func:`warcdeboil.page.dom.analyse` otherwise inserts its marks as text
nodes and reads the text back (1.2 ms of a dragnet page's 1.5). It reads lexbor's structs from
the node addresses selectolax gives, so before it is used :func:`load` checks that those structs
are laid out as it reads them (against what selectolax itself says of a small tree) and that it
gives what the Python path gives on a page exercising every mark; otherwise the Python path is
taken, and :func:`status` says why (``warcdeboil clean -v`` prints it).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from selectolax.lexbor import LexborHTMLParser

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

    def roles(self, address: int) -> tuple[int, list[tuple[int, int, Any, Any, Any, Any]]]: ...

    def text(self, address: int, plan: bytes | bytearray, structure: bool) -> Any: ...

    def block_texts(self, marked: bytes, inline_spaces: bool) -> list[bytes] | None: ...

    def split_blocks(self, marked: str, block_type: Any, max_ancestors: int) -> list[Any]: ...

    def doomed_slots(self, marked: bytes, page_slots: Any, slots: Any,
                     limit: float) -> list[tuple[int, int, int]]: ...


@dataclass(frozen=True)
class TagKinds:
    """The tag numbers of each kind analyse() treats apart, and the structure mark that goes
    before and after an element of a tag (lexbor's numbers, read from selectolax)."""

    kinds: Mapping[int, int]  # tag number -> its kinds (the flags above)
    before: Mapping[int, str]
    after: Mapping[int, str]
    # what each word that gives a role by class or id begins with (see role_words)
    words: tuple[bytes, ...] = ()

    def tables(self) -> tuple[list[int], list[int], list[int]]:
        size = max(self.kinds, default=0) + 1
        flags, before, after = [0] * size, [0] * size, [0] * size
        for tag, kind in self.kinds.items():
            flags[tag] = kind
        for tag, mark in self.before.items():
            before[tag] = ord(mark)
        for tag, mark in self.after.items():
            after[tag] = ord(mark)
        return flags, before, after


def word_beginnings(patterns: Iterable[str]) -> tuple[bytes, ...]:
    """What every match of each pattern begins with: its characters up to the first that is not
    a letter, digit or hyphen, or that a quantifier makes optional (``most-?read``: ``most``).
    The C walk sends an element to Python only where its class or id holds one of these."""
    beginnings = []
    for pattern in patterns:
        end = 0
        while (end < len(pattern) and (pattern[end].isalnum() or pattern[end] == "-")
               and pattern[end + 1 : end + 2] not in ("?", "*", "{")):
            end += 1
        if end == 0 or not pattern[:end].isascii() or pattern[:end] != pattern[:end].lower():
            raise ValueError(f"no literal lower-case beginning to search for in {pattern!r}")
        beginnings.append(pattern[:end].encode("ascii"))
    return tuple(beginnings)


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


def load(tags: TagKinds, agrees: Callable[[Walker], bool]) -> Loaded:
    """The compiled walker if it was built, reads this selectolax's lexbor as it expects and
    ``agrees`` with the Python path; else None, with the reason."""
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
    flags, before, after = tags.tables()
    walker = _walk.Walker(flags, before, after, text_tag=text.tag_id, role=role,
                          itemprop=itemprop, href=href, words=tags.words)
    if not agrees(walker):
        return Loaded(None, "page walks in Python (the C extension's answer differs)")
    return Loaded(walker, "page walks in C (warcdeboil.page._walk)")
