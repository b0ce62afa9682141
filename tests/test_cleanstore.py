"""The store of cleaned pages the language-model stage keeps for pass 2: what goes in comes
back, field for field, whether or not the page's text is the join of its blocks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from warcdeboil.cleanstore import Cleaned, CleanedStoreWriter, _encode, iter_cleaned_store
from warcdeboil.content import Block, Extraction
from warcdeboil.dom import CleanText


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
