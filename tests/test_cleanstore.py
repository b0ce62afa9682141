"""The store of cleaned pages the language-model stage keeps for pass 2: what goes in comes
back, field for field, whether or not the page's text is the join of its blocks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from warcdeboil.lm.cleaned import Cleaned, CleanedStoreWriter, _encode, iter_cleaned_store
from warcdeboil.page.content import Block, Extraction
from warcdeboil.page.dom import CleanText


def _blocks() -> Extraction:
    return Extraction([Block("Héllo wörld", 1, 10, 0, (0, 3), "Héllo <b>wörld</b>", 16, False),
                       Block("A line\ud800 with a lone surrogate", 0, 27, 6, (), "", 0, True)],
                      {"template": 2, "link-dense": 1})


PAGES: list[Cleaned] = [
    (0, "https://example.com/a", CleanText(_blocks().text, 3, 1), _blocks(), 3, "en", 0.912),
    # A text that is not its blocks' join keeps its own (no such page is made today).
    (4, "https://example.com/b", CleanText("something else", 0, 0), _blocks(), 0, "", 0.125),
    (7, "https://example.com/c", CleanText("plain text\n\nno blocks", 2, 0), None, 5, "de", 1.0),
    (9, "https://example.com/d", CleanText("", 0, 0), Extraction([], {}), 0, "", 0.0),
]


def test_pages_come_back_as_they_went_in(tmp_path: Path) -> None:
    path = tmp_path / "f000000.cleaned"
    with CleanedStoreWriter(path) as store:
        for page in PAGES:
            store.add(page)
    assert list(iter_cleaned_store(path)) == PAGES


@pytest.mark.parametrize(("page", "stored"), [(PAGES[0], False), (PAGES[1], True),
                                               (PAGES[2], True)])
def test_the_text_is_stored_once(page: Cleaned, stored: bool) -> None:
    """A page's text that is the join of its blocks is not written a second time."""
    fields = json.loads(_encode(page).decode("utf-8", "surrogatepass"))
    assert (fields[2] == page[2].text) is stored
    assert fields[2] is None or stored


def test_a_lean_store_keeps_each_blocks_text_and_kind(tmp_path: Path) -> None:
    """What JSONL reads of the blocks (text, kind; the text joined from them) comes back from a
    lean store, every other field of the pages too; the blocks' other fields are left out."""
    path = tmp_path / "f000000.cleaned"
    with CleanedStoreWriter(path, lean=True) as store:
        for page in PAGES:
            store.add(page)
    back = list(iter_cleaned_store(path))
    for page, came in zip(PAGES, back, strict=True):
        assert came[:3] == page[:3] and came[4:] == page[4:]
        if page[3] is None:
            assert came[3] is None
            continue
        assert came[3] is not None
        assert [(b.text, b.kind) for b in came[3].blocks] == [(b.text, b.kind)
                                                             for b in page[3].blocks]
        assert came[3].removed == page[3].removed and came[3].text == page[3].text
        assert all((b.chars, b.ancestors, b.marked) == (0, (), "") for b in came[3].blocks)
    # A JSON line of everything but the text, then the text as it is, a block a line.
    head, _, body = _encode(PAGES[0], lean=True).partition(b"\n")
    assert json.loads(head.decode("utf-8", "surrogatepass"))[6] == [1, 0]
    assert body.decode("utf-8", "surrogatepass") == PAGES[0][2].text


LEAN_EDGES: list[Cleaned] = [
    # One block of no text; a block holding a line break (kept by the JSON form).
    (1, "https://example.com/e", CleanText("", 0, 0), Extraction([Block("", 0, 0, 0, ())], {}),
     0, "", 0.0),
    (2, "https://example.com/f", CleanText("two\nlines\nthird", 1, 0),
     Extraction([Block("two\nlines", 7, 8, 0, ()), Block("third", 0, 5, 0, ())], {"x": 1}),
     1, "en", 0.5),
    (3, "https://example.com/g", CleanText("\n\n", 0, 0), None, 0, "", 0.0),
]


@pytest.mark.parametrize("page", LEAN_EDGES)
def test_a_lean_store_keeps_edge_cases(tmp_path: Path, page: Cleaned) -> None:
    path = tmp_path / "f000000.cleaned"
    with CleanedStoreWriter(path, lean=True) as store:
        store.add(page)
    (came,) = iter_cleaned_store(path)
    assert came[:3] == page[:3] and came[4:] == page[4:]
    assert (came[3] is None) == (page[3] is None)
    if page[3] is not None and came[3] is not None:
        assert [(b.text, b.kind) for b in came[3].blocks] == [(b.text, b.kind)
                                                             for b in page[3].blocks]
        assert came[3].removed == page[3].removed
