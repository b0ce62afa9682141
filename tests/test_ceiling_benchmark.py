"""benchmarks/ceiling.py's judgements of one page's blocks (results:
benchmarks/results/ceiling-2026-11-28.md)."""

from __future__ import annotations

from conftest import ROOT, load_script

from warcdeboil.evaluate import tokenize
from warcdeboil.page.content import core_span, split_blocks
from warcdeboil.page.dom import analyse

ceiling = load_script("ceiling_benchmark", ROOT / "benchmarks" / "ceiling.py")

PAGE = (
    "<html><body><h1>Seaside town news</h1><p class='byline'>By A. Writer</p>"
    "<div class='story'><p>Workers finished the harbour wall on Friday after two months.</p>"
    "<p>The council paid for the stone, and the fishermen for the crane.</p>"
    "<p>Subscribe to our newsletter for more stories like this one.</p></div></body></html>"
)
GOLD = tokenize("Workers finished the harbour wall on Friday after two months. "
                "The council paid for the stone, and the fishermen for the crane.")


def test_the_ceilings_drop_kept_junk_and_only_the_first_spares_headlines() -> None:
    blocks = split_blocks(analyse(PAGE, structure=True).marked.decode())
    texts = [b.text for b in blocks]
    keep = [True] * len(blocks)

    def kept(judgement: list[bool]) -> list[str]:
        return [t for t, ok in zip(texts, judgement, strict=True) if ok]

    body = texts[2:4]
    # Perfect precision but for headings and bylines: the newsletter line goes, the headline
    # and the byline (role meta) stay; judged by the gold too, they go as well.
    assert kept(ceiling.ceiling(blocks, keep, GOLD)) == [texts[0], texts[1], *body]
    assert kept(ceiling.ceiling_all(blocks, keep, GOLD)) == body
    # Nothing the package dropped comes back.
    assert not any(ceiling.ceiling(blocks, [False] * len(blocks), GOLD))
    # The core is the story's div: the headline above it goes, the rest stays.
    assert core_span(blocks, keep) == (2, 5)
    assert kept(ceiling.no_outside_headings(blocks, keep, GOLD)) == texts[1:]


def test_the_leading_headings_go_when_a_text_follows_them() -> None:
    blocks = split_blocks(analyse("<html><body><h1>Seaside town news</h1><h2>Harbour</h2>"
                                  "<p>Workers finished the harbour wall on Friday.</p>"
                                  "<h2>Crane</h2><p>The fishermen paid for the crane.</p>"
                                  "</body></html>", structure=True).marked.decode())
    texts = [b.text for b in blocks]
    keep = [True] * len(blocks)
    kept = [t for t, ok in zip(texts, ceiling.no_leading_headings(blocks, keep, GOLD),
                               strict=True) if ok]
    # The headline and the heading right under it go; a heading inside the text stays.
    assert kept == texts[2:]
    # The first heading kept opens the text when the one above it was dropped.
    assert ceiling.no_leading_headings(blocks, [False, *keep[1:]], GOLD) == [False, False,
                                                                             *keep[2:]]
    # Nothing but headings kept: nothing goes.
    only = [True, True, False, True, False]
    assert ceiling.no_leading_headings(blocks, only, GOLD) == only
