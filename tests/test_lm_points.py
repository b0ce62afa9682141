"""Scoring's fast ways (``lm.points``, ``lm.dense``, ``noise.mojibake`` on code points) give
what the strings' ways give, to the last bit: the units of every code point and of any text,
a line's words reversed, the n-gram lookups by rows, the mojibake counted."""

from __future__ import annotations

import gzip
import json
import sys

import numpy as np
import pytest
from conftest import shared_file
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from warcdeboil import LanguageModel
from warcdeboil.lm.chars import char_text
from warcdeboil.lm.dense import DenseLevels
from warcdeboil.lm.noise import _CONTINUATION, _MOJIBAKE, mojibake
from warcdeboil.lm.points import WordUnits, code_points, reversed_rows
from warcdeboil.lm.units import LINE

SENTENCES = ["The cat sat on the mat.", "A dog, 12 cats and 3,50 € — Straße!",
             "北京欢迎你 ok", "Ελληνικά γράμματα", "naïve café résumé", "THE END"]


@pytest.fixture(scope="module")
def model() -> LanguageModel:
    return LanguageModel.train(SENTENCES * 3, char_sample=1)


def _string_rows(model: LanguageModel, text: str) -> np.ndarray:
    return model._string_rows(text)


def _reversed_text(text: str) -> str:
    return "\n".join(" ".join(line.split()[::-1]) for line in text.split("\n"))


def _check(model: LanguageModel, text: str, reverse: bool = True) -> bool:
    """The fast units of ``text`` (words, their reversal, characters) are the strings'; False
    when the text takes the strings' way (its folding is not one code point for one)."""
    points = code_points(text)
    found = model.found_units(points)
    assert model.chars is not None
    chars = model.chars.found_chars(points)
    if chars is not None:
        assert np.array_equal(chars, model.chars._string_rows(char_text(text))), text
    if found is None:
        return False
    assert np.array_equal(found.rows, _string_rows(model, text)), text
    if reverse:
        assert np.array_equal(reversed_rows(found), _string_rows(model, _reversed_text(text)))
    return True


@pytest.mark.slow
def test_every_code_point_is_found_as_its_units(model: LanguageModel) -> None:
    """Every code point, alone, inside a word, next to marks, digits and capitals, and as the
    capital of a character unit: the same rows as the strings' way (or that way taken)."""
    everything = [chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF]
    fast = 0
    for start in range(0, len(everything), 4096):
        text = " ".join(f"A{c}a7{c}.{c}\u00c9 {c}\n" for c in everything[start:start + 4096])
        fast += _check(model, text, reverse=False)
    assert fast >= 250  # most blocks of code points go the fast way


@pytest.mark.parametrize("text", [
    "", "\n", "\n\n\n", "a", "  leading and trailing  ", "a\ue000b c\ue000 \ue000d",
    "Tab\there, NBSP\u00a0and\u2003em\u3000space\r\nCRLF", "a\x1cb\x1dc\u2028d\u0085e",
    "emoji 😀 and 𐐀𐐨 (Deseret capital, small)", "lone \ud800 surrogate", "北京欢迎你 OK",
    "12,50 € / 3.5 km — «quoted» (paren)", "x\n\ny z\n", "ǅ titlecase Ⓐ circled",
])
def test_texts_of_every_kind_of_space_and_mark(model: LanguageModel, text: str) -> None:
    assert _check(model, text)


@pytest.mark.parametrize("text", ["ΟΔΟΣ. Β", "İstanbul", "plain ΣΑΣ text"])
def test_a_folding_of_more_than_one_code_point_takes_the_strings_way(
        model: LanguageModel, text: str) -> None:
    assert not _check(model, text)
    assert np.array_equal(model.unit_rows(text, keep_empty=True), _string_rows(model, text))


@settings(max_examples=200, deadline=None)
@given(st.text(st.characters(blacklist_categories=("Cs",)), max_size=60))
def test_any_text_is_found_as_its_units(model: LanguageModel, text: str) -> None:
    _check(model, text)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["the", "Cat", "sat", ",", ".", "12", "€", " ", "  ", "\n",
                                 "\t", "\ue000", "北", "é", "X7"]), max_size=40).map("".join))
def test_words_reversed_are_a_permutation_of_the_units(model: LanguageModel, text: str) -> None:
    assert _check(model, text)


def test_colliding_vocabulary_keys_take_the_strings_way() -> None:
    """A vocabulary whose units' keys collide (here: a unit twice) finds no unit by key."""
    units = WordUnits("a\nb\na", 0, 1)
    assert not units.usable and units.find(code_points("a b")) is None


def test_unseen_units_are_unknown(model: LanguageModel) -> None:
    found = model.found_units(code_points("cat zebra"))
    assert found is not None
    assert found.rows[2] == model._unk_row and found.rows[1] != model._unk_row


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["a", "b", "c", "d"]), max_size=8).map(" ".join),
                min_size=1, max_size=30),
       st.sampled_from([(2, (1, 1)), (3, (1, 2, 2)), (4, (1, 1, 2, 3))]),
       st.lists(st.sampled_from(["a", "b", "c", "d", "e", "\n"]), max_size=40))
def test_lookups_by_rows_are_those_by_keys(lines: list[str], settings_: tuple,
                                           text: list[str]) -> None:
    order, floors = settings_
    model = LanguageModel.train([*lines, "a b c d"], order=order, min_counts=floors,
                                chars=False)
    rows = model.unit_rows(" ".join(text), keep_empty=True)
    usable = DenseLevels.usable(model.levels)
    assume(len(usable) > 1)  # an order of no n-gram ends the model's lookups there
    model._dense = None  # keys
    by_keys = model._log10_probs(rows)
    assert np.array_equal(DenseLevels(usable).log10_probs(rows), by_keys)


def test_a_model_too_large_for_tables_looks_up_by_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    import warcdeboil.lm.dense as dense

    model = LanguageModel.train(SENTENCES, chars=False)
    assert DenseLevels.usable(model.levels)
    monkeypatch.setattr(dense, "DENSE_BYTES", 10)
    assert DenseLevels.usable(model.levels) == []


@pytest.fixture(scope="module")
def gold_model() -> tuple[LanguageModel, list[str]]:
    with gzip.open(shared_file("eval", "l3s-gn1.gold.jsonl.gz"), "rt", encoding="utf-8") as fh:
        pages = [json.loads(line)["gold"] for line in fh]
    return LanguageModel.train(pages[:-40]), pages[-40:]


def test_real_pages_score_as_by_strings_and_keys(gold_model: tuple[LanguageModel, list[str]],
                                                 ) -> None:
    """Unseen gold pages (their mojibake included): units, lookups by rows and the noise
    score's signals are those of the strings' ways and of the keys, bit for bit."""
    from warcdeboil.lm.noise import line_signals

    model, pages = gold_model
    assert model.chars is not None
    text = "\n".join(line for line in "\n".join(pages).split("\n") if "\u03a3" not in line)
    assert _check(model, text)
    fast = line_signals(model, text)
    model.chars._dense = model._dense = None  # by keys
    model._words = model.chars._chars = None  # the strings' ways
    slow = line_signals(model, text)
    assert np.array_equal(fast[0], slow[0]) and np.array_equal(fast[1], slow[1])


@pytest.mark.parametrize("columns", [1, 3, 20, 45])
def test_units_without_a_column_are_looked_up_by_keys(
        gold_model: tuple[LanguageModel, list[str]], monkeypatch: pytest.MonkeyPatch,
        columns: int) -> None:
    """Tables of the commonest characters only (as many as ``DENSE_BYTES`` holds): the others'
    n-grams are found by their keys, and every log10 p is that of the keys, bit for bit."""
    import warcdeboil.lm.dense as dense

    model, pages = gold_model
    chars = model.chars
    assert chars is not None
    rows = chars.char_rows("\n".join(pages))
    chars._dense = None  # by keys
    by_keys = chars._log10_probs(rows)
    levels = [level for level in chars.levels if len(level)]
    assert len(levels[0]) > 50  # the gold text's characters
    monkeypatch.setattr(dense, "DENSE_BYTES", 4 * (columns + 1) * dense._table_rows(levels))
    monkeypatch.setattr(dense, "MIN_COLUMNS", 1)
    assert DenseLevels.usable(chars.levels) == levels
    tables = DenseLevels(levels, chars.frequencies)
    assert tables.width == columns
    rare = tables._columns[rows[1:]] == columns
    assert 0 < rare.sum() < len(rare)
    assert np.array_equal(tables.log10_probs(rows), by_keys)
    # The commonest have the columns.
    assert tables._columns[int(np.argmax(chars.frequencies))] == 0


def test_the_continuation_table_is_the_patterns_class() -> None:
    from warcdeboil.lm.noise import _CONTINUES

    everything = "".join(map(chr, range(0x10000)))
    import re

    found = {ord(c) for c in re.findall(f"[{_CONTINUATION}]", everything.replace("\n", ""))}
    assert set(np.flatnonzero(_CONTINUES).tolist()) == found


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["\u00c3", "\u00e2", "\u00f0", "\u00a9", "\u20ac", "\u2122",
                                 "\u0178", "\ufffd", "a", " ", "\n", "\u00c2", "\u00f4",
                                 "\u00bf", "é"]), max_size=30).map("".join))
def test_mojibake_on_code_points_counts_the_patterns_matches(text: str) -> None:
    lines = text.count("\n") + 1
    expected = np.zeros(lines)
    for match in _MOJIBAKE.finditer(text):
        expected[text.count("\n", 0, match.start())] += 1
    assert np.array_equal(mojibake(text, lines), expected)


def test_line_unit_stays_a_space_between_units(model: LanguageModel) -> None:
    """``units.LINE`` in a text splits units (as splitting reads it) but not words."""
    found = model.found_units(code_points(f"a{LINE}b c"))
    assert found is not None and len(found.rows) == 5
    assert found.words.tolist() == [1, 1, 2]
