"""The copied-block check (warcdeboil.page.copies): the probes give the answers of the search over
the joined text kept so far (the rule as written, the check until issue 38), on generated pages;
the probes' bound on repeated probes; which of the two a page takes; and what they find on the
evaluation pages."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from conftest import ROOT, SHARED, load_script
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from warcdeboil.page import copies as copies_module
from warcdeboil.page.content import COPIED_BLOCK, block_verdicts, split_blocks
from warcdeboil.page.copies import (
    COPY_MIN_CHARS,
    COPY_PROBE_VARIANTS,
    COPY_PROBE_WORDS,
    COPY_PROBES,
    find_copies,
    probe_copies,
    search_copies,
)
from warcdeboil.page.dom import remove_template

SETTINGS = settings(max_examples=400, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def most_variants(texts: Sequence[str], chars: Sequence[int], keep: Sequence[bool]) -> int:
    """The most probes of the page that share their inner words with different first or last
    words (see COPY_PROBE_VARIANTS)."""
    variants: dict[tuple[str, ...], set[tuple[str, str]]] = {}
    for text, n, ok in zip(texts, chars, keep, strict=True):
        words = text.split(" ")
        if not ok or n < COPY_MIN_CHARS or len(words) <= COPY_PROBE_WORDS:
            continue
        span = len(words) - COPY_PROBE_WORDS
        for k in range(COPY_PROBES):
            probe = words[k * span // (COPY_PROBES - 1):][:COPY_PROBE_WORDS]
            variants.setdefault(tuple(probe[1:-1]), set()).add((probe[0], probe[-1]))
    return max(map(len, variants.values()), default=0)


# Words that are each other's prefixes and suffixes, so that probes are also found inside
# longer words (a substring search finds "ab cd" in "xab cde").
WORDS = ["a", "b", "ab", "ba", "aab", "bab", "abb", "x", "xa"]


@st.composite
def pages(draw: st.DrawFn, alphabet: st.SearchStrategy[str]) -> tuple[list[str], list[int],
                                                                        list[bool]]:
    """Blocks of words from ``alphabet``, some copied whole or in part from earlier blocks
    (joined, cut mid-word), each kept or not, long enough to be checked or not."""
    texts: list[str] = []
    for _ in range(draw(st.integers(1, 12))):
        how = draw(st.sampled_from(["new", "copy", "join", "slice"])) if texts else "new"
        if how == "new":
            text = " ".join(draw(st.lists(alphabet, min_size=1, max_size=40)))
        elif how == "copy":
            text = draw(st.sampled_from(texts))
        elif how == "join":
            text = " ".join(draw(st.lists(st.sampled_from(texts), min_size=2, max_size=4)))
        else:
            whole = " ".join(texts)
            start = draw(st.integers(0, len(whole)))
            text = whole[start:start + draw(st.integers(1, 400))] or "a"
        texts.append(text)
    chars = [draw(st.sampled_from([len(t) - t.count(" "), COPY_MIN_CHARS, 0])) for t in texts]
    keep = [draw(st.booleans()) or draw(st.booleans()) for _ in texts]
    return texts, chars, keep


@SETTINGS
@given(pages(st.sampled_from(WORDS)))
def test_the_answers_of_the_search_over_the_joined_text(page) -> None:
    texts, chars, keep = page
    assume(most_variants(texts, chars, keep) <= COPY_PROBE_VARIANTS)
    assert probe_copies(texts, chars, keep) == search_copies(texts, chars, keep)


@SETTINGS
@given(pages(st.text(st.sampled_from("ab \t\n\u00a0é"), max_size=4)))
def test_the_same_answers_for_texts_not_folded(page) -> None:
    # Empty words (a space at either end, two spaces), other white space: split at each space,
    # as the search saw the text, whatever a block's text holds.
    texts, chars, keep = page
    assume(most_variants(texts, chars, keep) <= COPY_PROBE_VARIANTS)
    assert probe_copies(texts, chars, keep) == search_copies(texts, chars, keep)


def _words(n: int, tag: str) -> list[str]:
    return [f"{tag}{i}" for i in range(n)]


def test_a_copy_joined_from_two_blocks_found_across_their_join() -> None:
    first, second = " ".join(_words(20, "p")), " ".join(_words(20, "q"))
    # Its probes: the first in the first block, the middle two across the join, the last in
    # the second block.
    copy = first + " " + second
    texts = [first, second, copy, copy[1:]]
    chars = [len(t) for t in texts]
    assert probe_copies(texts, chars, [True] * 4) == [False, False, True, True]
    assert search_copies(texts, chars, [True] * 4) == [False, False, True, True]


def test_probes_past_the_bound_are_not_looked_for() -> None:
    # COPY_PROBE_VARIANTS + 1 pairs of blocks, a head and a tail, whose heads share six inner
    # words and differ in their first; then a copy of each pair. The copies' first probes share
    # those inner words: past the bound, the last copy's first probe counts as not found, and
    # that copy stays, where the search found it.
    pairs = COPY_PROBE_VARIANTS + 1
    inner = " ".join(_words(COPY_PROBE_WORDS - 2, "m"))
    heads = [f"h{i} {inner} end" for i in range(pairs)]
    tails = [" ".join(_words(20, f"t{i}x")) for i in range(pairs)]
    texts = [t for pair in zip(heads, tails, strict=True) for t in pair]
    texts += [head + " " + tail for head, tail in zip(heads, tails, strict=True)]
    chars = [len(t) for t in texts]
    keep = [True] * len(texts)
    assert most_variants(texts, chars, keep) == pairs
    assert search_copies(texts, chars, keep)[-pairs:] == [True] * pairs
    assert probe_copies(texts, chars, keep)[-pairs:] == [True] * (pairs - 1) + [False]


def test_a_page_of_one_repeated_word_is_no_copy_of_one_block() -> None:
    # Every run of words matches every probe: each probe is found at the first run and never
    # looked for again. One source block: no copy.
    texts = [" ".join(["la"] * 500)] * 50
    chars = [1000] * 50
    assert probe_copies(texts, chars, [True] * 50) == search_copies(texts, chars, [True] * 50)


def test_a_page_is_searched_while_the_search_stays_under_its_budget(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The page of the test above: 50 blocks checked, each searched for COPY_PROBES times in at
    # most all the text kept (each block's 1,499 characters and a space). Up to that budget the
    # search answers, under it the probes.
    texts = [" ".join(["la"] * 500)] * 50
    chars = [1000] * 50
    worst = 50 * COPY_PROBES * 50 * 1500
    called = []
    for name in ("search_copies", "probe_copies"):
        original = getattr(copies_module, name)
        monkeypatch.setattr(copies_module, name,
                            lambda *args, name=name, original=original:
                            called.append(name) or original(*args))
    for budget, taken in ((worst, "search_copies"), (worst - 1, "probe_copies")):
        monkeypatch.setattr(copies_module, "SEARCH_BUDGET", budget)
        called.clear()
        assert find_copies(texts, chars, [True] * 50) == [False] * 50
        assert called == [taken]


EVAL_SETS = sorted(p.name.removesuffix(".warc.gz") for p in (SHARED / "eval").glob("*.warc.gz"))


@pytest.mark.slow
@pytest.mark.skipif(not EVAL_SETS, reason="../shared/eval is not beside this checkout")
@pytest.mark.parametrize("name", EVAL_SETS)
def test_the_evaluation_pages_as_the_search_judged_them(name: str) -> None:
    """On every page of ../shared/eval (its site's template and repeated blocks gone, as in a
    run), the copies the search found; and no page has probes near COPY_PROBE_VARIANTS that
    share their inner words."""
    trainer = load_script("train_content", ROOT / "scripts" / "train_content.py")
    pages = worst = 0
    for _, _, text, profile, _, _ in trainer.fitted_pages(SHARED / "eval", name):
        marked = remove_template(text, profile.template, profile.template_slots).marked
        blocks = split_blocks(marked.decode("utf-8", "surrogatepass"))
        verdicts = block_verdicts(blocks, repeated=profile.repeated)
        # What the check is given: the blocks kept, the copies among them.
        keep = [verdict in (None, COPIED_BLOCK) for verdict in verdicts]
        texts, chars = [b.text for b in blocks], [b.chars for b in blocks]
        found = find_copies(texts, chars, keep)
        assert found == search_copies(texts, chars, keep) == probe_copies(texts, chars, keep)
        assert found == [verdict == COPIED_BLOCK for verdict in verdicts]
        worst = max(worst, most_variants(texts, chars, keep))
        pages += 1
    assert pages >= 50  # 71 to 1,381 a set
    assert worst <= COPY_PROBE_VARIANTS // 4  # 13 on cleaneval, at most 3 on the others
