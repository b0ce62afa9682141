"""benchmarks/classid.py's words of a page's naming: how class and id split, and which
candidates' words a block gets (results: benchmarks/results/classid-2026-11-25.md)."""

from __future__ import annotations

from pathlib import Path

from conftest import load_script

from warcdeboil.page.content import split_blocks
from warcdeboil.page.dom import analyse

ROOT = Path(__file__).resolve().parent.parent
classid = load_script("classid_benchmark", ROOT / "benchmarks" / "classid.py")


def test_words_split_at_separators_digits_and_humps() -> None:
    assert classid.words("postBody-2 entry_text") == {"post", "body", "entry", "text"}
    assert classid.words("HTMLContent sidebar2 a") == {"html", "content", "sidebar"}
    assert classid.words(None) == frozenset()


def test_block_words_come_from_its_nearest_candidates() -> None:
    # Three candidates, nested: the block in the innermost gets the words of the k nearest.
    marked = analyse("<body><div class='page'><section id='mainContent'><div class='related-box'>"
                     "<p>Other stories</p></div></section></div></body>").marked
    (block,) = split_blocks(marked.decode())
    names = [frozenset({"page"}), frozenset({"main", "content"}), frozenset({"related", "box"})]
    assert classid.block_words(block, names, 1) == {"related", "box"}
    assert classid.block_words(block, names, 2) == {"related", "box", "main", "content"}
    assert classid.block_words(block, names, 0) == {"related", "box", "main", "content", "page"}
