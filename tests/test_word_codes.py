"""The quality filters' words in C (warcdeboil.corpus._words) against their Python oracles: the
words of every piece (split_chunk), the codes of every text (WordCache.piece_codes), the counts,
the stop words found and the n-gram rules (gopher._ngram_reasons); and the checks that decide
which way a process takes."""

from __future__ import annotations

import dataclasses
import gzip
import json
import os
import re
import subprocess
import sys
from typing import Any

import numpy as np
import pytest
from conftest import ROOT, SHARED
from hypothesis import given, settings
from hypothesis import strategies as st

from warcdeboil.corpus import codes, gopher
from warcdeboil.corpus.codes import CASE_FOLDS_TO_ASCII, WordCache, build_coder, load_coder
from warcdeboil.corpus.page import PageText
from warcdeboil.corpus.words import iter_words, split_chunk, unspaced
from warcdeboil.page.walker import PURE_PYTHON


@pytest.fixture(scope="module")
def coder() -> Any:
    """The compiled coder, built here even in a run with WARCDEBOIL_PURE_PYTHON set; a skip
    where the extension was not built."""
    pytest.importorskip("warcdeboil.corpus._words", reason="the C extension was not built")
    return build_coder()


def deferred(piece: str) -> bool:
    """Whether the compiled coder leaves the piece to the Python split."""
    return unspaced(piece) or any(c in piece for c in CASE_FOLDS_TO_ASCII)


def assert_splits_as_oracle(coder: Any, pieces: list[str]) -> None:
    wrong = []
    for piece in pieces:
        words = coder.split(piece)
        if words is None:
            if not deferred(piece):
                wrong.append((piece, "deferred"))
        elif deferred(piece) or words != split_chunk(piece):
            wrong.append((piece, words, split_chunk(piece)))
    assert not wrong, wrong[:10]


def eval_texts() -> list[str]:
    golds = sorted((SHARED / "eval").glob("*.gold.jsonl.gz"))
    if not golds:
        pytest.skip("../shared/eval is not here")
    texts = []
    for gold in golds:
        with gzip.open(gold, "rt", encoding="utf-8") as lines:
            texts += [json.loads(line)["gold"] for line in lines]
    assert sum(map(len, texts)) > 5_000_000
    return texts


# ---- the words of a piece ----

_CONTEXTS = ("{c}", "a{c}b", "({c}.", "1{c}2", "{c}a", "a{c}", "don{c}t", "A.{c}.")


def test_every_character_splits_as_the_oracle_splits_it(coder: Any) -> None:
    # Every character of the BMP and of the emoji planes, alone and in seven settings; a piece
    # goes to the Python split exactly when it holds an unspaced or case-folding character.
    points = [*range(0x10000), *range(0x1F000, 0x1FB00), *range(0x10000, 0x10200), 0x10FFFF]
    pieces = [form.format(c=chr(point)) for point in points if not chr(point).isspace()
              for form in _CONTEXTS]
    assert len(pieces) > 500_000
    assert_splits_as_oracle(coder, pieces)


_ALPHABET = [*"aAbBdDeEgGiIjJkKlLmMnNoOpPrRsStTvVwWxXzZ0123456789",
             *".,;:!?'\"()[]{}<>-–—~_/@#$%^&*+=|`\\…’‘“”«»¿¡·•©°",
             *"é߲½١😀ﬁ\ud800ſK北\u0301"]
_STRINGS = ["http://", "https://", "WWW.", "dont", "cannot", "Cannot", "Mr", "Jan", "n't", "'s",
            "'LL", "’ve", "km", "GB", "mph", "e.g.", ".com", "and/or", ":)", ":-)", "<3", "''",
            "IM", "gonna", "U.S.", "..", "--", "a@b.cd", "x.org/"]
_PIECES = st.lists(st.one_of(st.sampled_from(_ALPHABET), st.sampled_from(_STRINGS)),
                   min_size=1, max_size=9).map("".join)


@settings(max_examples=3000, deadline=None)
@given(st.lists(_PIECES, min_size=1, max_size=20))
def test_pieces_of_marks_letters_and_addresses_split_as_the_oracle(coder: Any,
                                                                   pieces: list[str]) -> None:
    assert_splits_as_oracle(coder, pieces)


def test_the_split_of_a_deferred_piece_is_the_fallbacks(coder: Any) -> None:
    assert coder.split("北京。") is None
    assert coder.split("北京。", split_chunk) == split_chunk("北京。") == ("北", "京", "。")
    assert coder.split("ſtraße,") is None
    assert coder.split("(well-known,", split_chunk) == ("(", "well", "-", "known", ",")
    with pytest.raises(ValueError):
        coder.split("two words")


def test_the_characters_paired_with_ascii_letters_are_those_re_pairs(coder: Any) -> None:
    # The compiled rules compare ASCII letters in any case; Python's re, under IGNORECASE, pairs
    # these four letters above ASCII with ASCII ones too, so a piece holding one is deferred.
    letter = re.compile("[a-z]", re.IGNORECASE)
    paired = "".join(chr(c) for c in range(128, 0x110000)
                     if not 0xD800 <= c < 0xE000 and letter.match(chr(c)))
    assert paired == CASE_FOLDS_TO_ASCII
    for ascii_letter in "abcdefghijklmnopqrstuvwxyz":
        pattern = re.compile(ascii_letter, re.IGNORECASE)
        assert all(pattern.match(c) is None or c in CASE_FOLDS_TO_ASCII
                   for c in map(chr, range(128, 0x3000)))


# ---- the codes of a text ----


def test_the_codes_of_every_eval_page_are_the_oracles(coder: Any) -> None:
    cache, oracle = WordCache(coder=coder), WordCache(coder=None)
    texts = eval_texts()
    for text in texts:
        cache.next_text()
        oracle.next_text()
        assert np.array_equal(cache.codes(text), oracle.piece_codes(text))
    assert len(texts) > 2000
    # pieces of scripts without spaces went through the cache, as in the Python path
    assert any(unspaced(piece) for piece in cache.pieces)


_SPACES = st.sampled_from([" ", "  ", "\n", "\t", "\u00a0", "\u3000", "\x1c", "\u2028", "\x85"])


@settings(max_examples=500, deadline=None)
@given(st.lists(st.tuples(_SPACES, _PIECES), max_size=40), _SPACES)
def test_the_codes_of_a_text_are_the_oracles(coder: Any, pieces: list[tuple[str, str]],
                                             end: str) -> None:
    text = "".join(space + piece for space, piece in pieces) + end
    assert WordCache(coder=coder).codes(text).tolist() \
        == WordCache(coder=None).piece_codes(text).tolist()


def test_a_text_longer_than_the_numpy_passes_take_is_coded_in_one_call(coder: Any) -> None:
    text = "One (two) three, dont Mr. Smith 北京. " * (codes.MAX_CHARS // 30)
    assert len(text) > codes.MAX_CHARS
    assert np.array_equal(WordCache(coder=coder).codes(text), WordCache(coder=None).codes(text))


def test_the_coder_refuses_tables_it_cannot_hold(coder: Any) -> None:
    from warcdeboil.corpus import _words  # type: ignore[attr-defined]

    tables = {"abbreviations": ["Mr"], "informal": {"dont": 2}, "whole": {"cannot": ("can", "not")},
              "last_marks": ",.", "prefix": [(40, 40)], "suffix": [(41, 41)], "deferred": []}
    _words.Coder(**tables)
    for key, bad in (("whole", {"cannot": ("can", "nut")}), ("informal", {"dont": 4}),
                     ("abbreviations", ["Zürich"]), ("prefix", [(50, 40)]),
                     ("suffix", [(40, 45), (44, 50)]), ("last_marks", "…")):
        with pytest.raises(ValueError):
            _words.Coder(**{**tables, key: bad})


# ---- what the filters count ----

_REPETITION = gopher.GopherRepetition()
_VARIANTS = [
    _REPETITION,
    dataclasses.replace(_REPETITION, dup_ngrams_union=True),
    dataclasses.replace(_REPETITION, unspaced_chars_per_word=1.0),
    dataclasses.replace(_REPETITION, unspaced_chars_per_word=3.0, max_dup_7_gram=3.0),
    dataclasses.replace(_REPETITION, max_top_2_gram=0.05, max_top_3_gram=0.0, max_top_4_gram=0.03,
                        max_dup_5_gram=0.02, max_dup_10_gram=0.01),
]


def assert_counts_as_oracle(coder: Any, texts: list[str]) -> int:
    """The compiled counts, stop words and n-gram rules against the Python path's, for every
    text; how many (text, rules) were flagged by an n-gram rule."""
    compiled, oracle = WordCache(coder=coder), WordCache(coder=None)
    quality = gopher.GopherQuality()
    flagged = 0
    for text in texts:
        fast, slow = PageText(text, compiled, "en"), PageText(text, oracle, "en")
        assert fast.counts == slow.counts
        assert gopher.gopher_quality(fast, quality) == gopher.gopher_quality(slow, quality)
        for rules in _VARIANTS:
            reasons = gopher._ngram_reasons(slow, rules)
            assert gopher._ngram_reasons(fast, rules) == reasons, text[:80]
            flagged += bool(reasons)
        assert list(fast.iter_words(text)) == list(iter_words(text))
    return flagged


def test_counts_and_ngram_rules_of_every_eval_page_are_the_oracles(coder: Any) -> None:
    texts = eval_texts()
    assert assert_counts_as_oracle(coder, texts) > 1000


_WORDS = st.sampled_from(["the", "a", "cat", "sat", "on", "mat", "北", "京", "—", ".", "x",
                          "Anticonstitutionnellement", "dog", "The"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(_WORDS, min_size=1, max_size=12), min_size=1, max_size=8),
       st.integers(1, 30))
def test_counts_and_ngram_rules_of_repetitive_texts_are_the_oracles(
        coder: Any, phrases: list[list[str]], repeats: int) -> None:
    # Texts made of a few phrases said again and again: every n-gram rule on both sides.
    text = "\n".join(" ".join(phrase) for phrase in phrases * repeats)
    assert_counts_as_oracle(coder, [text])


def test_present_finds_the_words_asked_for(coder: Any) -> None:
    page = PageText("The cat and THE dog", WordCache(coder=coder))
    assert page.present(("the", "The", "THE", "dog", "cat", "cats", "the")).tolist() \
        == [False, True, True, True, True, False, False]


# ---- which way a process takes ----


def test_a_process_takes_the_compiled_coder_unless_told_otherwise(
        coder: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PURE_PYTHON, raising=False)
    loaded = load_coder()
    assert loaded.coder is not None
    assert loaded.status == "word codes in C (warcdeboil.corpus._words)"
    monkeypatch.setenv(PURE_PYTHON, "1")
    assert load_coder() == (None, "word codes in Python (WARCDEBOIL_PURE_PYTHON is set)")
    monkeypatch.delenv(PURE_PYTHON)

    class Wrong:
        def codes(self, text: str, pieces: Any) -> bytes:
            return coder.codes(text + " extra", pieces)

    assert load_coder(Wrong) == (None, "word codes in Python (the C extension's answer differs)")

    def missing() -> Any:
        raise ImportError("no _words")

    assert load_coder(missing) == (None, "word codes in Python (the C extension was not built)")

    def refused() -> Any:  # a table word of words.py longer than the C tables hold
        from warcdeboil.corpus import _words  # type: ignore[attr-defined]

        return _words.Coder(abbreviations=["Incorporatedness" * 2], informal={}, whole={},
                            last_marks=".", prefix=[], suffix=[], deferred=[])

    loaded = load_coder(refused)
    assert loaded.coder is None
    assert loaded.status.startswith("word codes in Python (the C extension refused the tables: ")
    assert WordCache(coder=None).coder is None


def test_clean_says_which_way_the_filters_split_words(coder: Any, tmp_path) -> None:
    env = {k: v for k, v in os.environ.items() if k != PURE_PYTHON}
    command = [sys.executable, "-m", "warcdeboil", "clean", str(ROOT / "fixtures" / "crawl"),
               "-o", str(tmp_path / "o"), "-f", "jsonl", "-j", "1", "-q", "-v",
               "--quality-filters", "all"]
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=True)
    assert "INFO warcdeboil.cli.clean: word codes in C (warcdeboil.corpus._words)" \
        in done.stderr.splitlines()
    env[PURE_PYTHON] = "1"
    command[6] = str(tmp_path / "p")
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=True)
    assert "INFO warcdeboil.cli.clean: word codes in Python (WARCDEBOIL_PURE_PYTHON is set)" \
        in done.stderr.splitlines()
    written = [sorted(tmp_path.joinpath(name).rglob("*.jsonl*")) for name in ("o", "p")]
    assert written[0] and [gzip.decompress(path.read_bytes()) if path.suffix == ".gz"
                           else path.read_bytes() for path in written[0]] \
        == [gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
            for path in written[1]]
