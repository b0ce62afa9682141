"""The quality filters of warcdeboil.corpus (docs/quality.md): each rule on both sides of its
threshold, the parameters read from TOML, words counted by script, and the flags of the fixture
crawl's pages."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from conftest import FIXTURES, SHARED, jsonl_pages
from hypothesis import given, settings
from hypothesis import strategies as st

from warcdeboil.corpus import QualityConfig, QualityFilters, filter_names, load_config
from warcdeboil.corpus import codes as codes_module
from warcdeboil.corpus.c4 import C4Quality, _sentences, c4_lines
from warcdeboil.corpus.codes import WordCache
from warcdeboil.corpus.config import config_from_mapping
from warcdeboil.corpus.fineweb import FineWebQuality
from warcdeboil.corpus.gopher import GopherQuality, GopherRepetition
from warcdeboil.corpus.words import _framed, _split_marks, iter_words, split_chunk, word_code
from warcdeboil.errors import ConfigError

VOCABULARY = (
    "the", "and", "garden", "houses", "trees", "with", "flowers", "near", "river", "stone",
    "bridge", "town", "market", "square", "quiet", "evening", "light", "morning", "window",
    "street", "corner", "summer", "winter", "autumn", "spring", "rain", "wind", "cloud",
    "forest", "meadow", "valley", "mountain", "harbour", "village", "castle", "tower", "church",
    "school", "bakery",
)


def prose(words: int, seed: int = 0) -> str:
    """``words`` words of plain text, no marks: "the and" and then words drawn at random (seeded)
    from forty, too varied for any repetition rule."""
    draw = random.Random(seed)
    picked = ["the", "and", *(draw.choice(VOCABULARY) for _ in range(words - 2))]
    return " ".join(picked[:words])


def reasons(text: str, name: str, language: str = "", **settings_: object) -> list[str]:
    config = config_from_mapping({name: settings_}) if settings_ else QualityConfig()
    return QualityFilters(config, names=(name,)).reasons(text, language)[name]


# --- words ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("piece", "words"), [
    ("house", ("house",)),
    ("house.", ("house", ".")),
    ("(see", ("(", "see")),
    ("don't", ("do", "n't")),
    ("it’s", ("it", "’s")),
    ("well-known", ("well", "-", "known")),
    ("uranium-235", ("uranium-235",)),
    ("1990-2000", ("1990", "-", "2000")),
    ("3.50", ("3.50",)),
    ("1,000", ("1,000",)),
    ("5km", ("5", "km")),
    ("Mr.", ("Mr.",)),
    ("U.S.", ("U.S.",)),
    ("e.g.,", ("e.g.", ",")),
    ("wait...", ("wait", "...")),
    ("http://example.com/a?b=1.", ("http://example.com/a?b=1", ".")),
    ("slate.com/articles/news", ("slate.com/articles/news",)),
    ("someone@example.org", ("someone@example.org",)),
    ("dont", ("do", "nt")),
    ("cannot", ("can", "not")),
    ("北京欢迎你。", ("北", "京", "欢", "迎", "你", "。")),
    ("กรุงเทพ", ("ก", "ร", "ุ", "ง", "เ", "ท", "พ")),
    ("カタカナ", ("カ", "タ", "カ", "ナ")),
])
def test_a_piece_of_text_splits_into_words(piece: str, words: tuple[str, ...]) -> None:
    assert split_chunk(piece) == words


def test_chinese_japanese_and_thai_count_a_word_a_character() -> None:
    filters = QualityFilters()
    # 60 characters of Chinese are 60 words: not too few; the mean length rule does not apply
    # (a character says nothing of it), the English stop words are not there.
    chinese = "今天天气很好我们一起去公园散步看花听鸟唱歌" * 3
    assert filters.reasons(chinese, "zh")["gopher_quality"] == ["stop_words"]
    assert filters.page(chinese, "zh").counts[1:3] == (63, 0)
    assert reasons(chinese[:40], "gopher_quality") == ["few_words", "stop_words"]
    # A Japanese line of three characters has three words for C4; of two, too few.
    lines = "\n".join(["猫が来た。"] * 5)
    assert reasons(lines, "c4_quality", end_marks="。") == []
    assert reasons("\n".join(["猫。"] * 5), "c4_quality", end_marks="。") == ["few_sentences"]
    # Thai marks no sentence end: C4 keeps none of its lines.
    assert reasons("\n".join(["กรุงเทพมหานครเป็นเมืองหลวงของประเทศไทย"] * 6),
                   "c4_quality") == ["few_sentences"]
    # The page's words for FineWeb's newline ratio: characters.
    assert reasons("\n".join(["今天天气很好我们一起去公园散步看花听鸟唱歌。"] * 4
                             + ["不同的一行文字在这里结束。"]), "fineweb_quality") \
        == ["short_line_ratio", "char_dup_ratio"]


# --- Gopher quality -------------------------------------------------------------------------


@pytest.mark.parametrize(("words", "flagged"), [(49, True), (50, False)])
def test_gopher_quality_wants_fifty_words(words: int, flagged: bool) -> None:
    assert ("few_words" in reasons(prose(words), "gopher_quality")) is flagged


@pytest.mark.parametrize(("words", "flagged"), [(60, False), (61, True)])
def test_gopher_quality_max_words(words: int, flagged: bool) -> None:
    got = reasons(prose(words), "gopher_quality", max_words=60)
    assert ("many_words" in got) is flagged


@pytest.mark.parametrize(("short", "flagged"), [(0, False), (1, True)])
def test_gopher_quality_mean_word_length_of_three_at_least(short: int, flagged: bool) -> None:
    # 60 words of three letters: a mean of 3.0, kept; one of two letters: under 3, flagged.
    words = ["the", "and", "cat", "dog", "sun", "sky"] * 10
    words[:short] = ["at"] * short
    assert reasons(" ".join(words), "gopher_quality") == (["short_words"] if flagged else [])


@pytest.mark.parametrize(("long", "flagged"), [(0, False), (1, True)])
def test_gopher_quality_mean_word_length_of_ten_at_most(long: int, flagged: bool) -> None:
    # 600 characters over 60 words: a mean of 10.0, kept; one letter more, flagged.
    words = ["the", "and"] + ["abcdefghij"] * 56 + ["abcdefghijklmnopq"] * 2
    words[2:2 + long] = ["abcdefghijk"] * long
    assert reasons(" ".join(words), "gopher_quality") == (["long_words"] if flagged else [])


@pytest.mark.parametrize(("marks", "flagged"), [(10, False), (11, True)])
@pytest.mark.parametrize("mark", ["#", "...", "…"])
def test_gopher_quality_hash_and_ellipsis_per_word(mark: str, marks: int, flagged: bool) -> None:
    # A mark standing alone is a word: 10 of 100 words is 0.1, not more than 0.1.
    text = prose(90) + " " + " ".join([mark] * marks)
    reason = "hash_ratio" if mark == "#" else "ellipsis_ratio"
    assert (reason in reasons(text, "gopher_quality")) is flagged


@pytest.mark.parametrize(("bullets", "flagged"), [(9, False), (10, True)])
def test_gopher_quality_bullet_lines(bullets: int, flagged: bool) -> None:
    lines = [f"{'• ' if i < bullets else ''}{prose(8, i)}" for i in range(10)]
    # Blank lines are not lines: they change nothing.
    text = "\n\n".join(lines)
    assert ("bullet_lines" in reasons(text, "gopher_quality")) is flagged


@pytest.mark.parametrize(("ending", "flagged"), [(3, False), (4, True)])
def test_gopher_quality_ellipsis_lines(ending: int, flagged: bool) -> None:
    lines = [f"{prose(8, i)}{'…' if i < ending else '.'}" for i in range(10)]
    assert ("ellipsis_lines" in reasons("\n".join(lines), "gopher_quality")) is flagged


@pytest.mark.parametrize(("numbers", "flagged"), [(20, False), (21, True)])
def test_gopher_quality_words_with_a_letter(numbers: int, flagged: bool) -> None:
    # 80 of 100 words with a letter is enough.
    text = prose(100 - numbers) + " " + " ".join(["2024"] * numbers)
    assert ("alpha_words" in reasons(text, "gopher_quality")) is flagged


def test_gopher_quality_two_stop_words_in_any_case() -> None:
    base = " ".join(["garden", "houses", "trees", "flowers"] * 13)
    assert reasons(base + " the and", "gopher_quality") == []
    assert reasons(base + " the the", "gopher_quality") == ["stop_words"]
    assert reasons(base + " The AND", "gopher_quality") == []
    assert reasons(base + " The AND", "gopher_quality", stop_words_any_case=False) \
        == ["stop_words"]
    german = " ".join(["Garten", "Häuser", "Bäume", "Blumen"] * 13) + " der und"
    assert reasons(german, "gopher_quality", "de") == ["stop_words"]
    assert reasons(german, "gopher_quality", "de-AT",
                   stop_words_by_language={"de": ["der", "die", "und"]}) == []


# --- Gopher repetition ----------------------------------------------------------------------


def test_gopher_repetition_keeps_varied_text_and_flags_an_empty_page() -> None:
    assert reasons("\n".join(prose(30, i) for i in range(12)), "gopher_repetition") == []
    assert reasons(" \n\n ", "gopher_repetition") == ["empty"]


@pytest.mark.parametrize(("repeats", "flagged"), [(3, False), (4, True)])
def test_gopher_repetition_duplicate_lines(repeats: int, flagged: bool) -> None:
    # Ten lines, the repeats short: only the share of lines passes its threshold (0.3).
    lines = [prose(30, i) for i in range(10 - repeats - 1)] + ["Menu"] * (repeats + 1)
    got = reasons("\n".join(lines), "gopher_repetition")
    assert ("dup_line_frac" in got) is flagged
    assert "dup_line_char_frac" not in got


def test_gopher_repetition_duplicate_line_characters() -> None:
    body = [prose(30, i) for i in range(8)]
    repeated = body + [body[0]] * 2  # two long repeats: 0.2 of the lines, more of the text
    got = reasons("\n".join(repeated), "gopher_repetition")
    assert "dup_line_char_frac" in got and "dup_line_frac" not in got


def test_gopher_repetition_duplicate_paragraphs() -> None:
    paragraphs = [f"{prose(12, i)}\n{prose(12, i + 20)}" for i in range(6)]
    paragraphs += [paragraphs[0]] * 3
    got = reasons("\n\n".join(paragraphs), "gopher_repetition")
    assert {"dup_para_frac", "dup_para_char_frac"} <= set(got)
    # As lines, each paragraph's two lines repeat too; as one paragraph (no blank line), no.
    assert "dup_para_frac" not in reasons("\n".join(paragraphs), "gopher_repetition")


def test_gopher_repetition_top_ngrams() -> None:
    spam = " ".join(["buy cheap watches", prose(3, 5)] * 25)
    assert {"top_2_gram", "top_3_gram"} <= set(reasons(spam, "gopher_repetition"))
    # A threshold is a share of the characters: raised above it, nothing.
    assert reasons(spam, "gopher_repetition", max_top_2_gram=0.9, max_top_3_gram=0.9,
                   max_top_4_gram=0.9, max_dup_5_gram=0.9, max_dup_6_gram=0.9,
                   max_dup_7_gram=0.9, max_dup_8_gram=0.9, max_dup_9_gram=0.9,
                   max_dup_10_gram=0.9) == []


def test_gopher_repetition_top_ngram_of_ngrams_as_frequent_is_the_first() -> None:
    # Every n-gram occurs once: the first is "the most frequent". "a b" is 3 characters of 87,
    # "a b xxx..." 44: the 2-gram passes, the 3- and 4-gram do not.
    text = "a b " + "x" * 40 + " " + "y" * 40
    assert repetition(text) == ["top_3_gram", "top_4_gram"]


def repetition(text: str, **settings_: object) -> list[str]:
    config = QualityConfig(gopher_repetition=GopherRepetition(**settings_))  # type: ignore[arg-type]
    return QualityFilters(config, names=("gopher_repetition",)).reasons(text)["gopher_repetition"]


def test_gopher_repetition_duplicate_ngrams_taken_from_the_left() -> None:
    # The same 12 words twice among 40 words seen once. The repeats taken from the left without
    # overlap cover the first 12 // n * n of those words (10 for n = 5, 12 for n = 6...); their
    # letters, over the page's characters, against a threshold just under and just over.
    sentence = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
                "juliet", "kilo", "lima"]
    filler = [f"filler{i}" for i in range(40)]
    text = " ".join([*filler[:20], *sentence, *filler[20:], *sentence])
    chars = QualityFilters().page(text).chars
    left = {n: sum(map(len, sentence[:12 // n * n])) / chars for n in range(5, 11)}
    top = {"max_top_2_gram": 1.0, "max_top_3_gram": 1.0, "max_top_4_gram": 1.0}
    assert repetition(text, **top, **{f"max_dup_{n}_gram": left[n] - 0.001 for n in left}) \
        == [f"dup_{n}_gram" for n in range(5, 11)]
    assert repetition(text, **top, **{f"max_dup_{n}_gram": left[n] + 0.001 for n in left}) == []
    # The paper's other reading counts every word a repeat covers: all 12, for every n; only
    # where the left-to-right count misses some does it pass the same thresholds.
    assert repetition(text, dup_ngrams_union=True, **top,
                      **{f"max_dup_{n}_gram": left[n] + 0.001 for n in left}) \
        == [f"dup_{n}_gram" for n in range(5, 11) if 12 % n]


# --- C4 -------------------------------------------------------------------------------------


def c4_text(sentences: int) -> str:
    return "\n".join(f"{prose(6, i).capitalize()}." for i in range(sentences))


@pytest.mark.parametrize(("sentences", "flagged"), [(4, True), (5, False)])
def test_c4_wants_five_sentences(sentences: int, flagged: bool) -> None:
    assert reasons(c4_text(sentences), "c4_quality") == (["few_sentences"] if flagged else [])


def test_c4_counts_sentences_inside_a_line_but_not_at_abbreviations() -> None:
    assert reasons("One two three. Four five six! Seven eight nine? Ten and more. Last one.",
                   "c4_quality") == []
    assert reasons("Mr. Smith met Dr. Jones at St. Paul in the U.S. on Jan. 5. They talked.",
                   "c4_quality") == ["few_sentences"]


@pytest.mark.parametrize(("line", "reason"), [
    ("Home | News | Sport", "no_end_mark"),
    ("And then it went on and on...", "no_end_mark"),
    ("Too short.", "few_words"),
    ("Please enable JavaScript to see the comments.", "javascript"),
    ("Read our privacy policy before you go.", "policy"),
    ("This site uses cookies to work well.", "policy"),
    ("He said it would rain all week.", ""),
    ('"It will rain all week," he said.', ""),
    ("It rained all week, as forecast.[1]", ""),
    ("x" * 1001 + " is a very long word.", "long_word"),
])
def test_c4_drops_lines(line: str, reason: str) -> None:
    page = QualityFilters().page(line)
    assert c4_lines(page, C4Quality()) == [(line.removesuffix("[1]"), reason)]


def test_c4_typographic_quotes_end_a_line_only_when_asked() -> None:
    text = c4_text(4) + "\n“It will rain all week,” he said, “and then stop.”"
    assert reasons(text, "c4_quality") == ["few_sentences"]
    assert reasons(text, "c4_quality", end_marks=".!?\"'”’") == []


@pytest.mark.parametrize("rule", ["lorem_ipsum", "curly_bracket"])
def test_c4_page_rules_look_at_the_lines_kept(rule: str) -> None:
    odd = "Lorem ipsum dolor sit amet, it says." if rule == "lorem_ipsum" else \
        "The code was function f() { return 1; } in the end."
    assert reasons(c4_text(5) + "\n" + odd, "c4_quality") == [rule]
    assert reasons(c4_text(5) + "\n" + odd.rstrip("."), "c4_quality") == []  # a line dropped
    assert reasons(c4_text(5) + "\n" + odd, "c4_quality", **{rule: False}) == []


def test_c4_reasons_of_a_page_are_those_of_its_kept_lines() -> None:
    text = c4_text(3) + "\nMenu\nPlease enable javascript now.\nAnother good line here."
    page = QualityFilters().page(text)
    kept = [line for line, reason in c4_lines(page, C4Quality()) if not reason]
    assert len(kept) == 4
    assert reasons(text, "c4_quality") == ["few_sentences"]
    assert reasons(text + "\nAnd a fifth one at last.", "c4_quality") == []


# --- FineWeb --------------------------------------------------------------------------------


@pytest.mark.parametrize(("ended", "flagged"), [(3, True), (4, False)])
def test_fineweb_lines_ending_in_punctuation(ended: int, flagged: bool) -> None:
    # 3 of 25 lines is 0.12: at most 0.12 is flagged. A trailing space hides no mark.
    lines = [f"{prose(8, i)}{'. ' if i < ended else ''}" for i in range(25)]
    assert ("line_punct_ratio" in reasons("\n".join(lines), "fineweb_quality")) is flagged


@pytest.mark.parametrize(("short", "flagged"), [(66, False), (67, True)])
def test_fineweb_short_lines(short: int, flagged: bool) -> None:
    lines = [f"{prose(6, i)[:28]}." if i < short else f"{prose(12, i)}." for i in range(100)]
    assert all(len(line) < 30 for line in lines[:short])
    assert ("short_line_ratio" in reasons("\n".join(lines), "fineweb_quality")) is flagged


def test_fineweb_lines_of_thirty_characters_are_not_short() -> None:
    lines = ["a" * 29 + "."] * 3 + ["b" * 29 + ".", "c" * 29 + "!"]  # 30 characters each
    assert "short_line_ratio" not in reasons("\n".join(lines), "fineweb_quality")
    assert "short_line_ratio" in reasons("\n".join(lines), "fineweb_quality",
                                         short_line_length=31)


def test_fineweb_duplicated_line_characters() -> None:
    # One line of 31 repeated: about 1/31 of the characters, at least 0.01; not 0.1.
    lines = [f"{prose(20, i)}." for i in range(30)]
    assert "char_dup_ratio" not in reasons("\n".join(lines), "fineweb_quality")
    assert "char_dup_ratio" in reasons("\n".join([*lines, lines[0]]), "fineweb_quality")
    assert "char_dup_ratio" not in reasons("\n".join([*lines, lines[0]]), "fineweb_quality",
                                           max_char_dup_ratio=0.1)


@pytest.mark.parametrize(("extra", "flagged"), [(0, True), (1, False)])
@pytest.mark.parametrize("breaks", ["\n", "\n\n"])
def test_fineweb_line_breaks_a_word(extra: int, flagged: bool, breaks: str) -> None:
    # Four line breaks and 13 words (the marks are words): more than 0.3 a word; 14: not.
    # Blank lines are not lines: a break between two lines counts once.
    text = breaks.join(["one two.", "three four.", "five six.", "seven.",
                        "eight" + " nine" * extra + "."])
    assert QualityFilters().page(text).word_count == 13 + extra
    assert ("list_ratio" in reasons(text, "fineweb_quality")) is flagged


# --- the parameters -------------------------------------------------------------------------


def test_load_config_sets_what_the_file_names(tmp_path: Path) -> None:
    path = tmp_path / "quality.toml"
    path.write_text('[gopher_quality]\nmin_words = 30\nmax_mean_word_length = 12\n'
                    'stop_words_by_language = { de = ["der", "und"] }\n'
                    '[c4_quality]\nend_marks = ".!?"\nlorem_ipsum = false\n'
                    '[fineweb_quality]\nmax_char_dup_ratio = 0.1\n', encoding="utf-8")
    config = load_config(path)
    assert config.gopher_quality == GopherQuality(
        min_words=30, max_mean_word_length=12.0, stop_words_by_language={"de": ("der", "und")})
    assert config.c4_quality == C4Quality(end_marks=".!?", lorem_ipsum=False)
    assert config.fineweb_quality == FineWebQuality(max_char_dup_ratio=0.1)
    assert config.gopher_repetition == GopherRepetition()


@pytest.mark.parametrize(("toml", "message"), [
    ("[gopher_quality]\nmin_word = 3\n", "unknown key gopher_quality.min_word"),
    ("[gopher]\nmin_words = 3\n", "unknown filter [gopher]"),
    ("min_words = 3\n", "unknown filter [min_words]"),
    ("[gopher_quality]\nmin_words = 3.5\n", "gopher_quality.min_words must be a whole number"),
    ("[gopher_quality]\nmin_words = true\n", "gopher_quality.min_words must be a whole number"),
    ("[gopher_quality]\nmin_words = -1\n", "gopher_quality.min_words must be a whole number"),
    ('[fineweb_quality]\nmax_char_dup_ratio = "0.1"\n',
     "fineweb_quality.max_char_dup_ratio must be a number"),
    ("[c4_quality]\nlorem_ipsum = 1\n", "c4_quality.lorem_ipsum must be true or false"),
    ("[c4_quality]\npolicy_phrases = [1, 2]\n", "c4_quality.policy_phrases must be a list"),
    ("[gopher_quality]\nstop_words_by_language = { de = 3 }\n",
     "gopher_quality.stop_words_by_language.de must be a list"),
    ("[gopher_quality\n", "not a TOML file"),
])
def test_load_config_names_the_bad_key_in_one_line(tmp_path: Path, toml: str,
                                                   message: str) -> None:
    path = tmp_path / "quality.toml"
    path.write_text(toml, encoding="utf-8")
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    assert message in str(raised.value)
    assert str(path) in str(raised.value) and "\n" not in str(raised.value)


def test_load_config_of_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read the quality config"):
        load_config(tmp_path / "nowhere.toml")


def test_an_integer_stands_for_a_float() -> None:
    assert config_from_mapping({"fineweb_quality": {"max_newlines_per_word": 1}}) \
        .fineweb_quality.max_newlines_per_word == 1.0


def test_filter_names() -> None:
    assert filter_names("all") == ("gopher_quality", "gopher_repetition", "c4_quality",
                                   "fineweb_quality")
    assert filter_names(" fineweb_quality,c4_quality ") == ("c4_quality", "fineweb_quality")
    with pytest.raises(ConfigError, match="unknown quality filter gopher"):
        filter_names("gopher,c4_quality")
    with pytest.raises(ConfigError):
        filter_names("")


# --- properties -----------------------------------------------------------------------------

texts = st.lists(st.sampled_from([*"ab cd.,!?'-\n#…{}[]1\t", "the ", "and ", "北京", "Mr. ",
                                  "dont ", "5km ", "U.S. ", "www.x.org/a "]),
                 max_size=150).map("".join)


@settings(max_examples=150, deadline=None)
@given(texts, st.text(" \t\n\r\u00a0", max_size=5))
def test_flags_do_not_depend_on_trailing_white_space(text: str, space: str) -> None:
    assert QualityFilters().flags(text) == QualityFilters().flags(text + space)


@settings(max_examples=150, deadline=None)
@given(texts, st.text(" \t\u00a0", min_size=1, max_size=3))
def test_flags_do_not_depend_on_white_space_at_the_ends_of_lines(text: str, space: str) -> None:
    assert QualityFilters().flags(text) == \
        QualityFilters().flags(text.replace("\n", f"{space}\n").replace("\n", f"\n{space}"))


@settings(max_examples=150, deadline=None)
@given(texts, texts)
def test_flags_do_not_depend_on_the_pages_before(first: str, text: str) -> None:
    # The cache of words is shared by the pages of a process: a page seen first changes nothing.
    used = QualityFilters()
    used.flags(first)
    assert used.flags(text) == QualityFilters().flags(text) == used.flags(text)


@settings(max_examples=150, deadline=None)
@given(texts)
def test_the_words_of_a_text_are_those_of_its_pieces(text: str) -> None:
    page = QualityFilters().page(text)
    words = [word for piece in text.split() for word in split_chunk(piece)]
    assert list(iter_words(text)) == words
    assert page.word_count == len(words) == len(WordCache().codes(text))


_CORES = ["word", "dont", "Cannot", "cannot", "Mr", "J", "eg", "well-known", "dont-care",
          "a-b-c", "Im", "s", "n", "Jan", "vs", "AB", "x-Mr"]


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(["", "(", '"', "'", "[", "-"]), st.sampled_from(_CORES),
       st.text(alphabet=".,;:!?)\"'-s", max_size=4))
def test_a_framed_word_splits_as_the_general_loop_splits_it(opening: str, core: str,
                                                              closing: str) -> None:
    # The shortcut for "(word", "word,\"", "well-known.)": the loop's words or no answer.
    piece = opening + core + closing
    framed = _framed(piece)
    assert framed is None or framed == _split_marks(piece)
    assert split_chunk(piece) == _split_marks(piece)


def test_the_framed_shortcut_answers_the_common_forms() -> None:
    assert _framed('"well-known,"') == ('"', "well", "-", "known", ",", '"')
    assert _framed("(Hello.)") == ("(", "Hello", ".", ")")
    assert _framed("Mr.)") is None and _framed("(dont") is None and _framed("3,") is None


@settings(max_examples=150, deadline=None)
@given(texts)
def test_the_codes_of_a_text_are_those_of_its_words(text: str) -> None:
    # The cache's shortcuts (a word of ASCII letters, codes kept by word) give word_code's.
    page = QualityFilters().page(text)
    assert page.codes.tolist() == [word_code(word) for piece in text.split()
                                   for word in split_chunk(piece)]


_PIECES = st.sampled_from([
    "the", "The", "said.", "Mr.", "MR.", "J.", "a.", "dont", "DoNt", "cannot", "Cannot", "im",
    "Im,", "gonna!", "vs.", "Jan.", "Jan,", "word;", "word)", "(word", "e.g.", "Zürich",
    "Zürich,", "naïve", "é", "e\u0301", "Ελλάδα.", "Москва,", "北京", "กรุง", "𝔘𝔫𝔦", "a𝔘",
    "\ud800", "x\udfff.", "5km", "3.5", "U.S.", "'s", "-", "—", "…", "well-known,", "ab" * 40,
    ".", ",", "!!", "a!", "a?", "Ok:", "\x00", "\x1bz", "2009", "2009,", "10.", "3:", "1)", "7'",
    "0.5", "1990-2000", "3D", "–", "|", "•", "\u0301", "北", "ก", "\uffff", "𝔘", "&", "'",
    "(word", "“Zürich”", "(1)", "'90", "-30", "(J.", "(Mr.", "“dont", "word’", "$395", "[edit]",
    "'s", "’s", "(cannot", "(a.", "É.", "Ελλάδα»", "«Москва»", "(word)", "'word'", "(2009.",
    "(U.S.", "J.)", "(x", "()", "((", "(.", "…", "a…", "¿Qué", "(北京", "北京)", "„Ja“", "(‘"])
_SPACES = st.sampled_from([" ", "  ", "\n", "\t", "\u00a0", "\u3000", "\x1c", "\u2028", "\x85"])


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(_SPACES, _PIECES), max_size=60), _SPACES)
def test_the_passes_over_a_text_give_the_codes_of_its_pieces(pieces: list[tuple[str, str]],
                                                              end: str) -> None:
    # The numpy passes (codes.page_codes) against each piece split and coded alone (the
    # compiled coder's own tests are in tests/test_word_codes.py).
    text = "".join(space + piece for space, piece in pieces) + end
    assert WordCache(coder=None).codes(text).tolist() == WordCache().piece_codes(text).tolist() \
        == [word_code(word) for piece in text.split() for word in split_chunk(piece)]


def test_the_passes_give_the_codes_of_every_eval_page() -> None:
    # Every page text of ../shared/eval's gold files: the same codes both ways, through one
    # cache (the pieces each way shared, as in a run).
    import gzip
    import json

    golds = sorted((SHARED / "eval").glob("*.gold.jsonl.gz"))
    if not golds:
        pytest.skip("../shared/eval is not here")
    cache, oracle = WordCache(coder=None), WordCache(coder=None)
    pages = chars = 0
    for gold in golds:
        with gzip.open(gold, "rt", encoding="utf-8") as lines:
            for line in lines:
                text = json.loads(line)["gold"]
                cache.next_text()
                oracle.next_text()
                assert np.array_equal(cache.codes(text), oracle.piece_codes(text)), gold.name
                pages += 1
                chars += len(text)
    assert pages > 2000 and chars > 5_000_000


def test_a_text_over_the_passes_limit_is_coded_piece_by_piece(
        monkeypatch: pytest.MonkeyPatch) -> None:
    text = "One (two) three, dont Mr. Smith. " * 40
    whole = WordCache(coder=None).codes(text)
    passes = []
    monkeypatch.setattr(codes_module, "MAX_CHARS", 100)
    monkeypatch.setattr(codes_module, "page_codes",
                        lambda *args: passes.append(args[0]) or whole[:0])
    assert np.array_equal(WordCache(coder=None).codes(text), whole)
    assert passes == []
    WordCache(coder=None).codes(text[:100])
    assert passes == [text[:100]]


def test_the_cache_of_words_starts_again_when_full(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(codes_module, "CACHE_SIZE", 3)
    used = QualityFilters()
    pages = [prose(60, i) + ". " + prose(30, i + 9) for i in range(6)]
    assert [used.flags(page) for page in pages] == [QualityFilters().flags(page) for page in pages]
    assert len(used._cache.pieces) < 100


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(["One two three.", "Mr. Smith came home. He ate.", "Menu",
                                 "Home | News", "A b c d e f? G h i!", "Short.", "x y z."]),
                max_size=8))
def test_c4_flags_few_sentences_when_its_kept_lines_hold_few(lines: list[str]) -> None:
    # c4_quality stops counting at five kept lines (each holds a sentence at least): the same
    # as counting every sentence of every kept line.
    text = "\n".join(lines)
    page = QualityFilters().page(text)
    kept = [line for line, reason in c4_lines(page, C4Quality()) if not reason]
    counted = sum(_sentences(iter_words(line)) for line in kept)
    assert ("few_sentences" in reasons(text, "c4_quality")) is (counted < 5)


# --- the fixture crawl ------------------------------------------------------------------------


def test_the_fixture_crawl_pages_are_flagged_as_short_pages(tmp_path: Path) -> None:
    from warcdeboil.output.formats import OutputFormat
    from warcdeboil.run.local import clean
    from warcdeboil.run.options import Options

    clean([FIXTURES / "crawl"], tmp_path, Options(format=OutputFormat.JSONL, workers=1))
    filters = QualityFilters()
    flags = {page["url"]: filters.flags(page["text"], page["language"] or "")
             for page in jsonl_pages(tmp_path)}
    # Every page is a few lines long: too few words for Gopher, too few sentences for C4.
    assert all({"gopher_quality:few_words", "c4_quality:few_sentences"} <= set(f)
               for f in flags.values())
    # An English article of three lines: only that. One whose only stop word is "the": that too.
    assert flags["http://news.example.com/2024/05/rail-strike"] == [
        "gopher_quality:few_words", "c4_quality:few_sentences"]
    assert flags["http://news.example.com/2024/05/marathon"] == [
        "gopher_quality:few_words", "gopher_quality:stop_words", "c4_quality:few_sentences"]
    # German has none of the English stop words; a text this short has its first 3- and
    # 4-gram cover more than 0.18 and 0.16 of it.
    assert flags["http://nachrichten.example.de/artikel/4"] == [
        "gopher_quality:few_words", "gopher_quality:stop_words", "gopher_repetition:top_3_gram",
        "gopher_repetition:top_4_gram", "c4_quality:few_sentences"]
    # Chinese: its two lines are shorter than 30 characters, so FineWeb finds them short.
    assert flags["https://zh.example.cn/news/1.html"] == [
        "gopher_quality:few_words", "gopher_quality:stop_words", "gopher_repetition:top_3_gram",
        "gopher_repetition:top_4_gram", "c4_quality:few_sentences",
        "fineweb_quality:short_line_ratio"]


def _han_with_phrases(sentences: int = 40, seed: int = 3) -> str:
    """Sentences of Han characters, each with a phrase of 5 characters of its own and the
    phrase of the sentence before: each 5-character phrase occurs twice, no 10-character
    stretch does."""
    rng = random.Random(seed)

    def han(count: int) -> str:
        return "".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(count))

    phrases = [han(5) for _ in range(sentences)]
    return "\n".join(han(10) + phrases[k] + han(10) + (phrases[k - 1] if k else "") + "。"
                     for k in range(sentences))


def test_unspaced_ngrams_are_of_about_two_characters_a_word() -> None:
    """A phrase of 5 characters is 2 or 3 words of Chinese: Gopher's 5-gram rule is not for
    it. Counted a character a word (unspaced_chars_per_word = 1), phrases met twice flag the
    page; at 1.9 characters a word (the default) the 5-gram rule reads 10 characters and
    keeps it."""
    text = _han_with_phrases()
    kept = QualityFilters(names=("gopher_repetition",))
    assert kept.flags(text, "zh") == []
    by_character = config_from_mapping({"gopher_repetition": {"unspaced_chars_per_word": 1}})
    flags = QualityFilters(by_character, names=("gopher_repetition",)).flags(text, "zh")
    assert "gopher_repetition:dup_5_gram" in flags


def test_spaced_pages_do_not_depend_on_unspaced_chars_per_word() -> None:
    repeated = "\n".join(f"{prose(12, seed)} the same closing words of every line here."
                         for seed in range(30))
    for text in (prose(400), repeated):
        flags = [QualityFilters(config_from_mapping({"gopher_repetition": {
            "unspaced_chars_per_word": value}})).flags(text, "en") for value in (1, 1.9, 3)]
        assert flags[0] == flags[1] == flags[2]
    assert any(f.startswith("gopher_repetition:dup_") for f in QualityFilters().flags(repeated))


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab \t\n\r\x0b\x0c\x1c\x85\u2028\u00a0", max_size=40))
def test_paragraphs_are_the_runs_of_lines_between_blank_lines(text: str) -> None:
    # PageText cuts the joined lines at blank lines in one pass: the same as walking them.
    expected: list[str] = []
    current: list[str] = []
    for line in (line.strip() for line in text.splitlines()):
        if line:
            current.append(line)
        elif current:
            expected.append("\n".join(current))
            current = []
    if current:
        expected.append("\n".join(current))
    page = QualityFilters().page(text)
    assert page.paragraphs == expected
    assert page.lines == [line for paragraph in expected for line in paragraph.split("\n")]
