"""The language model: Kneser-Ney estimates, units, bounded counts, model and ARPA files, CLI."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import FIXTURES, ROOT
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from warcdeboil import LanguageModel
from warcdeboil.cli import app
from warcdeboil.errors import InputError
from warcdeboil.lm.arpa import write_arpa
from warcdeboil.lm.chars import char_text
from warcdeboil.lm.counts import NgramCounts
from warcdeboil.lm.model import WORD_NOISE_BIAS, WORD_NOISE_WEIGHTS
from warcdeboil.lm.units import BOUNDARY, LINE, extend_keys, split_units, token_id, token_ids, units


def _prob(model: LanguageModel, context: list[str], unit: str) -> float:
    """p(unit | context at a line's start); "</s>" ends the line, "<unk>" is any unseen unit."""
    ids = [BOUNDARY, *map(token_id, context)]
    ids.append(BOUNDARY if unit == "</s>" else token_id("never-seen" if unit == "<unk>" else unit))
    return float(10 ** model.log10_probs(np.array(ids, np.uint64))[-1])


def _every_unit(model: LanguageModel) -> list[str]:
    return list(model.vocabulary)  # the units, "</s>" and "<unk>"


WORDS = st.sampled_from(["a", "b", "c", "d", "e"])
LINES = st.lists(st.lists(WORDS, min_size=0, max_size=8).map(" ".join), min_size=1, max_size=30)


@settings(max_examples=60, deadline=None)
@given(LINES, st.lists(WORDS, max_size=3), st.sampled_from([(1, 1, 1), (1, 2, 2), (1, 1, 3)]))
def test_probabilities_of_a_context_sum_to_one(lines: list[str], context: list[str],
                                               floors: tuple[int, int, int]) -> None:
    if not any(line.strip() for line in lines):
        lines = [*lines, "a"]
    model = LanguageModel.train(lines, order=3, min_counts=floors)
    total = sum(_prob(model, context, unit) for unit in _every_unit(model))
    assert total == pytest.approx(1.0, abs=1e-5)


def test_known_values_of_a_small_corpus() -> None:
    # Worked out by hand: lines "a b", "a b", "b a", order 2, nothing pruned, the fallback
    # discounts (D1, D2, D3+) = (0.5, 1, 1.5) since no count reaches 3.
    model = LanguageModel.train(["a b", "a b", "b a"], order=2, min_counts=(1, 1))
    assert model.info["discounts"] == [[0.5, 1.0, 1.5], [0.5, 1.0, 1.5]]
    # Unigrams (after an unknown unit, which is no context): a, b and </s> each have 2
    # distinct predecessors, u = (2 - 1) / 6; gamma = 3/6 shared by a, b, </s>, <unk>.
    assert _prob(model, ["zz"], "a") == pytest.approx(1 / 6 + 1 / 8)
    assert _prob(model, ["zz"], "</s>") == pytest.approx(1 / 6 + 1 / 8)
    assert _prob(model, ["zz"], "<unk>") == pytest.approx(1 / 8)
    # After <s>: a twice, b once, so gamma(<s>) = (1 + 0.5) / 3 = 1/2.
    assert _prob(model, [], "a") == pytest.approx((2 - 1) / 3 + 0.5 * 7 / 24)
    assert _prob(model, [], "b") == pytest.approx((1 - 0.5) / 3 + 0.5 * 7 / 24)
    assert _prob(model, [], "</s>") == pytest.approx(0.5 * 7 / 24)
    # "a b" is a, b, </s>: each the twice-seen continuation of its context, 23/48.
    assert model.line_perplexities(["a b"])[0] == pytest.approx(48 / 23)
    assert model.perplexity("a b") == pytest.approx(48 / 23)


# A hand-written ARPA model: every score below is worked out from these numbers.
ARPA = """\\data\\
ngram 1=6
ngram 2=3
ngram 3=1

\\1-grams:
-1.0\t<unk>
-99\t<s>\t-0.5
-0.5\t</s>
-0.3\ta\t-0.2
-0.6\tb\t-0.1

\\2-grams:
-0.1\t<s> a\t-0.25
-0.2\ta b\t-0.15
-0.4\tb a

\\3-grams:
-0.05\t<s> a b

\\end\\
"""


def test_arpa_scores_follow_its_backoff(tmp_path: Path) -> None:
    path = tmp_path / "hand.arpa"
    path.write_text(ARPA)
    model = LanguageModel.load(path)
    # "a b": p(a|<s>) -0.1, p(b|<s> a) -0.05, p(</s>|a b) = bow(a b) + bow(b) + p(</s>).
    sums, counts = model.line_log10_probs("a b\nb a b\nzz")
    assert sums[0] == pytest.approx(-0.1 - 0.05 + (-0.15 - 0.1 - 0.5))
    # "b a b": bow(<s>) + p(b), then "b a" (no context "<s> b"), then "a b" (no "b a b"; "b a"
    # has no weight), then </s> after "a b" as above.
    assert sums[1] == pytest.approx(-0.5 - 0.6 - 0.4 - 0.2 + (-0.15 - 0.1 - 0.5))
    # "zz" is <unk>: bow(<s>) + p(<unk>), then </s> after <unk> (no weight).
    assert sums[2] == pytest.approx(-0.5 - 1.0 - 0.5)
    assert counts.tolist() == [3, 4, 2]
    assert model.line_perplexities(["a b"])[0] == pytest.approx(10 ** (0.9 / 3))


def test_arpa_round_trip_keeps_every_score(tmp_path: Path) -> None:
    lines = ["the cat sat on the mat", "the dog sat on the cat", "a cat and a dog"] * 3
    model = LanguageModel.train(lines + ["the end"], order=3, min_counts=(1, 1, 2))
    write_arpa(model, tmp_path / "m.arpa")
    again = LanguageModel.load(tmp_path / "m.arpa")
    text = "the cat sat\nthe mat sat on a dog\nzebra the cat\n\nend the"
    ids = token_ids(text, keep_empty=True)
    assert np.array_equal(model.log10_probs(ids), again.log10_probs(ids))
    write_arpa(again, tmp_path / "again.arpa")
    assert (tmp_path / "again.arpa").read_text() == (tmp_path / "m.arpa").read_text()


def test_arpa_without_context_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "bad.arpa"
    path.write_text(ARPA.replace("-0.05\t<s> a b", "-0.05\tb b a"))
    with pytest.raises(InputError, match="3-gram 'b b a'"):
        LanguageModel.load(path)


def test_model_file_round_trip(tmp_path: Path) -> None:
    model = LanguageModel.train(["北京欢迎你", "我们 在 北京", "the 3 cats"] * 2, order=4)
    model.save(tmp_path / "m.lm")
    again = LanguageModel.load(tmp_path / "m.lm")
    assert list(again.vocabulary) == list(model.vocabulary)
    assert again.info == model.info
    for mine, theirs in zip(model.levels, again.levels, strict=True):
        for name in ("keys", "logp", "bow", "contexts", "words"):
            assert np.array_equal(getattr(mine, name), getattr(theirs, name)), name
    text = "北京欢迎我们\nthe 7 cats"
    assert again.line_perplexities(text) == model.line_perplexities(text)


def test_damaged_model_file_is_an_input_error(tmp_path: Path) -> None:
    model = LanguageModel.train(["a b c"] * 3)
    model.save(tmp_path / "m.lm")
    data = bytearray((tmp_path / "m.lm").read_bytes())
    (tmp_path / "cut.lm").write_bytes(bytes(data[: len(data) // 2]))
    with pytest.raises(InputError, match="cut.lm"):
        LanguageModel.load(tmp_path / "cut.lm")


@pytest.mark.parametrize(("text", "expected"), [
    ("北京欢迎你", ["北", "京", "欢", "迎", "你"]),                  # Han: characters
    ("東京へ行きます", ["東", "京", "へ", "行", "き", "ま", "す"]),    # kanji and kana
    ("ภาษาไทย", ["ภ", "า", "ษ", "า", "ไ", "ท", "ย"]),                # Thai: characters
    ("한국어 문장입니다", ["한국어", "문장입니다"]),                  # Hangul: spaced words
    ("Москва, 2024!", ["москва", ",", "0000", "!"]),               # words, marks, digits
    ("Home | News", ["home", "|", "news"]),
    ("cafÃ© mojibake", ["cafã", "©", "mojibake"]),
    ("हिन्दी भाषा", ["हिन्दी", "भाषा"]),                            # marks stay in their word
])
def test_units_of_every_script(text: str, expected: list[str]) -> None:
    assert units(text) == expected


def test_token_ids_mark_line_boundaries() -> None:
    ids = token_ids("a b\n\nc")
    assert ids.tolist() == [BOUNDARY, token_id("a"), token_id("b"), BOUNDARY, token_id("c"),
                            BOUNDARY]
    assert token_ids("a\n\nc", keep_empty=True).tolist().count(BOUNDARY) == 4


def test_count_tables_never_exceed_their_capacity() -> None:
    rng = np.random.default_rng(7)
    letters = "abcdefghijklmnopqrst"
    words = [a + b for a in letters for b in letters]  # 400 (digits would all read as 0)
    counts = NgramCounts(order=3, capacity=256, vocabulary=256)
    for _ in range(20):
        lines = [" ".join(rng.choice(words, size=12)) for _ in range(50)]
        counts.add_text("\n".join(lines))
        assert all(len(table) <= 256 for table in counts.tables)
    assert all(table.threshold >= 1 for table in counts.tables)
    assert counts.snapshot is not None  # discounts from the counts before the first pruning
    model = LanguageModel.train([" ".join(rng.choice(words, size=12)) for _ in range(1000)],
                                capacity=256, vocabulary=256, min_counts=(1, 1, 1))
    assert model.info["pruned_below"][2] >= 1
    total = sum(_prob(model, ["aa", "ab"], unit) for unit in _every_unit(model))
    assert total == pytest.approx(1.0, abs=1e-5)


def test_training_ranks_real_text_above_noise() -> None:
    lines = ["the cat sat on the mat", "the dog sat on the rug", "a cat and a dog sat"] * 5
    model = LanguageModel.train(lines)
    scores = model.line_perplexities(["the cat sat on the rug", "rug the on sat cat the",
                                      "qz xv kk pp"])
    assert scores[0] < scores[1] < scores[2]


def _jsonl(path: Path, texts: list[str]) -> Path:
    path.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts) + "{broken\n")
    return path


def test_cli_trains_and_scores(tmp_path: Path) -> None:
    runner = CliRunner()
    plain = tmp_path / "plain.txt"
    plain.write_text("the cat sat on the mat\nthe dog sat on the rug\n" * 5)
    jsonl = _jsonl(tmp_path / "pages.jsonl", ["a cat and a dog sat\nthe end"] * 3)
    model = tmp_path / "m.lm"
    result = runner.invoke(app, ["lm", "train", str(plain), str(jsonl), "-o", str(model),
                                 "--arpa", str(tmp_path / "m.arpa"), "--json"])
    assert result.exit_code == 3, result.output  # the broken JSONL line is counted
    report = json.loads(result.stdout)
    assert report["skipped_lines"] == 1
    assert report["units"] == 10 * 7 + 3 * (7 + 3)  # units and line ends of every line
    scored = runner.invoke(app, ["perplexity", "--model", str(model)],
                           input="the cat sat on the rug\nrug the on cat\n\nzz qq\n")
    assert scored.exit_code == 0, scored.output
    lines = scored.stdout.split("\n")
    assert lines[2] == "" and lines[4:] == [""]  # one line out per line in: none for the empty
    scores = [float(line) for line in lines[:2] + lines[3:4]]
    assert scores[0] < scores[1] < scores[2]
    arpa = runner.invoke(app, ["perplexity", "the cat sat on the rug", "-m",
                               str(tmp_path / "m.arpa")])
    assert float(arpa.stdout) == pytest.approx(scores[0], rel=1e-4)


def test_cli_refuses_a_missing_model_in_one_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["perplexity", "x", "--model", str(tmp_path / "none")])
    assert result.exit_code == 1
    assert result.output.count("\n") == 1 and "error" in result.output


def test_cli_trains_on_archives(tmp_path: Path) -> None:
    # A real process: the archives are cleaned to their main content first.
    model = tmp_path / "crawl.lm"
    done = subprocess.run(
        [sys.executable, "-m", "warcdeboil", "lm", "train", str(FIXTURES / "crawl"),
         "-o", str(model), "-j", "1"],
        cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    trained = LanguageModel.load(model)
    assert trained.info["units"] > 500
    assert math.isfinite(trained.perplexity("the"))


def test_texts_scored_together_score_as_one_by_one() -> None:
    model = LanguageModel.train(["the cat sat on the mat", "the dog sat", "a cat"] * 4)
    texts = ["the cat sat\n\non the mat", "", "\n\n", "zz the dog", "a\nb\nc"]
    together = model.perplexities(texts)
    assert together == [model.perplexity(text) for text in texts]
    assert [score is None for score in together] == [False, True, True, False, False]


@pytest.mark.parametrize("text", ["", "\n\n", "  \n\t"])
def test_a_text_with_nothing_to_score_has_no_perplexity(text: str) -> None:
    """As JSONL's perplexity and line_perplexities give null for it (a page or line without a
    unit), not the score of a line end alone."""
    model = LanguageModel.train(["the cat sat on the mat", "the dog sat", "a cat"] * 4)
    assert model.perplexity(text) is None
    assert model.perplexities([text, "the cat"])[0] is None
    assert model.line_perplexities(text) == [None] * (text.count("\n") + 1)
    assert model.line_perplexities(["the cat", text])[0] is not None


def test_one_string_is_refused_where_texts_are_wanted() -> None:
    """A str is an iterable of characters: training on it, or scoring it as many texts, is a
    mistake said in one line, naming what to pass instead."""
    from warcdeboil.errors import ConfigError

    with pytest.raises(ConfigError, match=r"not one str: pass a list of strings"):
        LanguageModel.train("the cat sat on the mat")
    with pytest.raises(ConfigError, match=r"not one bytes"):
        LanguageModel.train(b"the cat sat on the mat")  # type: ignore[arg-type]
    model = LanguageModel.train(["the cat sat on the mat"] * 4)
    with pytest.raises(ConfigError, match=r"use perplexity\(text\)"):
        model.perplexities("the cat")


@settings(max_examples=30, deadline=None)
@given(st.integers(min_value=1, max_value=5000), st.integers(min_value=0, max_value=2**32),
       st.booleans())
def test_table_lookup_agrees_with_a_binary_search(size: int, seed: int, largest: bool) -> None:
    from warcdeboil.lm.keyindex import KeyIndex
    from warcdeboil.lm.kneserney import Level

    rng = np.random.default_rng(seed)
    keys = np.unique(rng.integers(0, 2**64 - 1, size=size, dtype=np.uint64))
    if largest:  # the largest key there is: a probe past the end reads a key equal to it
        keys[-1] = np.uint64(2**64 - 1)
    level = Level(keys.copy(), np.zeros(len(keys), np.float32), np.zeros(len(keys), np.float32),
                  np.zeros(len(keys), np.int32), np.zeros(len(keys), np.int32))
    absent = rng.integers(0, 2**64 - 1, size=200, dtype=np.uint64)
    wanted = np.concatenate([rng.choice(keys, 200), absent, keys[:1], keys[-1:],
                             np.array([0, 2**64 - 1], np.uint64)])
    # The model's padded lookup, and training's on keys it does not copy.
    for rows, found in (level.rows(wanted), KeyIndex(keys).rows(wanted)):
        assert found.tolist() == np.isin(wanted, keys).tolist()
        assert np.array_equal(keys[rows[found]], wanted[found])
        assert not rows[~found].any()


def test_model_file_holds_its_settings_not_its_vocabulary_twice(tmp_path: Path) -> None:
    model = LanguageModel.train(["one two three"] * 2, vocabulary=64, capacity=1024)
    assert model.info["vocabulary"] == 64 and model.info["capacity"] == 1024
    model.save(tmp_path / "m.lm")
    assert LanguageModel.load(tmp_path / "m.lm").info == model.info


def test_cli_counts_damaged_archives_and_still_trains(tmp_path: Path) -> None:
    archive = sorted((FIXTURES / "crawl").glob("*.warc.gz"))[0].read_bytes()
    (tmp_path / "cut.warc.gz").write_bytes(archive[: len(archive) - 300])  # last member cut
    result = CliRunner().invoke(app, ["lm", "train", str(tmp_path / "cut.warc.gz"), "-o",
                                      str(tmp_path / "m.lm"), "-j", "1", "--json"])
    assert result.exit_code == 3, result.output
    report = json.loads(result.stdout)
    assert report["archive_problems"] >= 1 and report["units"] > 100
    assert LanguageModel.load(tmp_path / "m.lm").info["units"] == report["units"]


def test_a_huge_text_is_counted_in_pieces_with_the_same_counts() -> None:
    text = "\n".join(f"line {'ab' * (i % 7)} of the long page" for i in range(3000))
    whole, pieces = NgramCounts(), NgramCounts()
    whole.add_texts([text], chunk_chars=len(text) + 1)
    pieces.add_texts([text], chunk_chars=1000)
    assert pieces.units_seen == whole.units_seen
    for mine, theirs in zip(pieces.tables, whole.tables, strict=True):
        assert np.array_equal(mine.keys, theirs.keys)
        assert np.array_equal(mine.counts, theirs.counts)


@settings(max_examples=25, deadline=None)
@given(LINES, st.sampled_from([2, 3, 4]))
def test_arpa_round_trip_of_any_corpus(tmp_path_factory: pytest.TempPathFactory,
                                       lines: list[str], order: int) -> None:
    model = LanguageModel.train([*lines, "a b"], order=order, min_counts=(1, 2, 1, 2))
    path = tmp_path_factory.mktemp("arpa") / "m.arpa"
    write_arpa(model, path)
    again = LanguageModel.load(path)
    ids = token_ids("\n".join([*lines, "e d c b a", ""]), keep_empty=True)
    assert np.array_equal(model.log10_probs(ids), again.log10_probs(ids))


# The character component and the noise score ---------------------------------------------------

CHARS = st.sampled_from(list("abAB .é"))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(CHARS, max_size=10).map("".join), min_size=1, max_size=20),
       st.lists(st.sampled_from(["a", "b", "⇧", "▁", ".", "é"]), max_size=4))
def test_character_probabilities_of_a_context_sum_to_one(lines: list[str],
                                                         context: list[str]) -> None:
    lines = [*lines, "Ab a"]
    model = LanguageModel.train(lines, order=2, char_sample=1)
    assert model.chars is not None and model.chars.order == 5
    chars = model.chars
    total = sum(_prob(chars, context, unit) for unit in _every_unit(chars))
    assert total == pytest.approx(1.0, abs=1e-5)


def test_char_units_keep_case_spaces_and_line_breaks() -> None:
    assert split_units(char_text("Hi, 2 you\nÃ©")) == [
        "⇧", "h", "i", ",", "▁", "0", "▁", "y", "o", "u", LINE, "⇧", "ã", "©"]


@pytest.mark.parametrize("text", [
    "", "\n", "A", "Tab\there, NBSP\u00a0and\u2003em\u3000space\r\nCRLF",
    "Ǆemal ǅ titlecase, ΣΑΣ İstanbul ß", "emoji 😀 and 𐐀𐐨 (Deseret capital, small)",
    "marks ⇧ ▁ kept, lone \ud800 surrogate", "北京欢迎你 OK\n\n\nÃ©",
])
def test_char_text_is_a_unit_a_character(text: str) -> None:
    """Each character becomes one unit (a space's mark, a capital's mark and the capital, or
    itself; the line break stays), the units joined with one space."""
    def unit(char: str) -> str:
        if char != "\n" and char.isspace():
            return "\u2581"
        return f"\u21e7 {char}" if char.isupper() else char

    assert char_text(text) == " ".join(map(unit, text))


def test_one_text_in_char_sample_feeds_the_character_model() -> None:
    texts = ["ab", "cdefgh", "xy", "klmnop"]
    sampled = LanguageModel.train(texts, char_sample=2)
    alone = LanguageModel.train(["ab", "xy"], char_sample=1)
    assert sampled.chars is not None and alone.chars is not None
    assert sampled.chars.info["units"] == alone.chars.info["units"] == 6  # 2 + </s>, twice
    assert set(sampled.chars.vocabulary) == set(alone.chars.vocabulary)
    assert LanguageModel.train(texts, chars=False).chars is None


def test_noise_scores_rank_mojibake_and_menus_above_sentences(tmp_path: Path) -> None:
    lines = ["The cat’s mat is on the floor, and the dog sat on it.",
             "A cat and a dog sat on the rug – it was warm.",
             "The dog’s rug is red; the cat sat by the door."] * 20
    model = LanguageModel.train(lines)
    real = "The dog sat on the cat’s mat by the door."
    scores = model.line_noise_scores([real, real.encode().decode("cp1252", "replace"),
                                      "Home News Sport Weather Login", "qz xv kk pp"])
    assert all(0.0 < score < 1.0 for score in scores)
    assert scores[0] < min(scores[1:])
    model.save(tmp_path / "m.lm")
    again = LanguageModel.load(tmp_path / "m.lm")
    assert again.chars is not None
    for mine, theirs in zip(model.chars.levels, again.chars.levels, strict=True):  # type: ignore[union-attr]
        assert np.array_equal(mine.keys, theirs.keys) and np.array_equal(mine.logp, theirs.logp)
    assert again.line_noise_scores(real) == model.line_noise_scores(real)
    # An ARPA model is a word model: its noise score is the logistic of its word features.
    write_arpa(model, tmp_path / "m.arpa")
    words = LanguageModel.load(tmp_path / "m.arpa")
    assert words.chars is None
    features = words.line_features(real)[0, :2]
    expected = 1 / (1 + math.exp(-(features @ np.array(WORD_NOISE_WEIGHTS) + WORD_NOISE_BIAS)))
    assert words.line_noise_scores([real]) == pytest.approx([expected])


def test_line_features_are_the_log_probabilities_of_each_line() -> None:
    model = LanguageModel.train(["the cat sat", "the dog sat", "a cat"] * 3, chars=False)
    text = "the cat sat\n\nzz dog"
    features = model.line_features(text)
    sums, counts = model.line_log10_probs(text)
    assert features[:, 0] == pytest.approx(-sums / counts)
    for line, row in zip(text.split("\n"), features, strict=True):
        logp = model.log10_probs(token_ids(line, keep_empty=True))
        assert row[1] == pytest.approx(np.mean(logp < -3)) and row[2] == pytest.approx(-logp.min())


@settings(max_examples=40, deadline=None)
@given(st.lists(LINES, min_size=1, max_size=4), st.integers(min_value=1, max_value=4))
def test_counts_are_those_of_every_ngram_of_the_text(chunks: list[list[str]], order: int) -> None:
    # Each chunk counted on its own and merged: keys, counts, contexts and suffixes of every
    # order are those of the n-grams of the lines, <s> only at their start.
    from collections import Counter

    counts = NgramCounts(order=order)
    every: Counter[tuple[str, ...]] = Counter()
    for lines in chunks:
        counts.add_text("\n".join(lines))
        for line in lines:
            if not line.strip():
                continue
            words = ["\n", *line.split(), "\n"]
            for k in range(1, order + 1):
                every.update(tuple(words[i - k + 1:i + 1]) for i in range(max(k - 1, 1),
                                                                           len(words)))

    def key(gram: tuple[str, ...]) -> int:
        ids = np.array([token_id(unit) for unit in gram], np.uint64)
        value = ids[:1]
        for unit in ids[1:]:
            value = extend_keys(value, np.array([unit], np.uint64))
        return int(value[0])

    for k, table in enumerate(counts.tables, 1):
        grams = {key(gram): gram for gram in every if len(gram) == k}
        assert table.keys.tolist() == sorted(grams)
        assert table.counts.tolist() == [every[grams[x]] for x in table.keys.tolist()]
        if k == 1:
            assert table.units.tolist() == ["</s>" if grams[x] == ("\n",) else grams[x][0]
                                            for x in table.keys.tolist()]
        else:
            assert table.contexts.tolist() == [key(grams[x][:-1]) for x in table.keys.tolist()]
            assert table.suffixes.tolist() == [key(grams[x][1:]) for x in table.keys.tolist()]


def test_keys_alike_in_their_high_bits_are_still_sorted_and_grouped() -> None:
    # Training packs positions into the keys' low bits to sort them; keys that differ only
    # there (rare for hashes) are put in order afterwards.
    from warcdeboil.lm.counts import _key_order

    rng = np.random.default_rng(3)
    keys = np.concatenate([rng.integers(0, 64, 500).astype(np.uint64) + np.uint64(2**63),
                           rng.integers(0, 2**64 - 1, 500, dtype=np.uint64)])
    keys = np.concatenate([keys, keys[:300]])  # repeated keys
    rng.shuffle(keys)
    order, ordered = _key_order(keys)
    assert np.array_equal(ordered, np.sort(keys))
    assert np.array_equal(keys[order], ordered)
    assert sorted(order.tolist()) == list(range(len(keys)))


def test_units_are_numbered_by_first_occurrence_with_their_ids() -> None:
    from warcdeboil.lm.units import numbered_units

    distinct, ids, numbers = numbered_units("b A B\nc a")  # folded: "A" is "a"
    assert distinct == ["b", "a", LINE, "c"]
    assert numbers.tolist() == [0, 1, 0, 2, 3, 1]
    assert ids.tolist() == [token_id("b"), token_id("a"), BOUNDARY, token_id("c")]
    distinct, ids, numbers = numbered_units("x X")  # no line break: one is added, last
    assert distinct == ["x", LINE] and numbers.tolist() == [0, 0]
    assert ids.tolist() == [token_id("x"), BOUNDARY]
    distinct, ids, numbers = numbered_units("Price 12 or 34.")  # digits read as 0
    assert distinct == ["price", "00", "or", ".", LINE] and numbers.tolist() == [0, 1, 2, 1, 3]
    distinct, _, numbers = numbered_units("")
    assert distinct == [LINE] and numbers.tolist() == []


def test_units_folded_one_by_one_are_those_of_the_text_folded_whole() -> None:
    """Training folds each distinct unit (lower case, digits as 0) instead of the whole text:
    the same units for every code point, beside letters, marks and digits, and for a capital
    sigma, whose lower case depends on what follows it (the text is then folded whole)."""
    from warcdeboil.lm.units import folded, numbered_units, split_units, unfolded_units

    everything = [chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF]
    for start in range(0, len(everything), 4096):
        text = " ".join(f"A{c}a{c}7{c}.{c}\u00c9" for c in everything[start:start + 4096])
        found, done = unfolded_units(text)
        assert not done or "\u03a3" in text
        assert (found if done else folded(found)) == split_units(text), start
    for text in ["ΟΔΟΣ. Β", "ΑΣ.Β ΣΑΣ", "Straße İstanbul ǅ 12,50 €"]:
        distinct, _, numbers = numbered_units(text)
        assert [distinct[n] for n in numbers.tolist()] == split_units(text)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(st.characters(blacklist_characters="\n"), max_size=6), min_size=1,
                max_size=30), st.data())
def test_a_lazy_vocabulary_picks_the_units_of_its_rows(vocabulary: list[str],
                                                       data: st.DataObject) -> None:
    # A model's language reads a thousand of its units by row without decoding them all: the
    # same units as the whole vocabulary decoded, empty ones and the first and last included.
    from warcdeboil.lm.model import _LazyVocabulary

    blob = "\n".join(vocabulary).encode("utf-8", "surrogatepass")
    rows = data.draw(st.lists(st.integers(0, len(vocabulary) - 1), max_size=40))
    assert _LazyVocabulary(blob).pick(rows) == [vocabulary[row] for row in rows]
