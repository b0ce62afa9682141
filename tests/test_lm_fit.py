"""--lm auto (models the run trains, a language and half of the pages each) and perplexity
buckets (--perplexity-buckets, --keep-buckets): the stage between the fit and pass 2."""

from __future__ import annotations

import gzip
import json
import math
import random
from pathlib import Path
from statistics import median

import pytest
from conftest import ArchiveBuilder, http_response, jsonl_pages, warc_record
from typer.testing import CliRunner

from warcdeboil.cli import app
from warcdeboil.lm import LanguageModel
from warcdeboil.lm.scoring import url_half
from warcdeboil.lm.stage import train_run_model
from warcdeboil.warc.compression import Codec

runner = CliRunner()

_WORDS = {
    "en": ("the of and to in is it that was for on are with as his they be at one have this "
           "from by hot word but what some we can out other were all there when up use your how "
           "said an each she which do their time if will way about many then them write would "
           "like so these her long make thing see him two has look more day could go come did "
           "number sound no most people my over know water than call first who may down side "
           "been now find river garden winter market doctor window letter morning village"),
    "de": ("der die und in den von zu das mit sich des auf für ist im dem nicht ein eine als "
           "auch es an werden aus er hat dass sie nach wird bei einer um am sind noch wie "
           "einem über einen so zum war haben nur oder aber vor zur bis mehr durch man sein "
           "wurde sei Jahr Zeit Stadt Wasser Garten Winter Markt Arzt Fenster Brief Morgen Dorf"),
    # Two languages the first identifier (function words of 33 languages) did not know.
    "cy": ("y yr a ac i o yn ar am gan mae oedd bod wedi ei eu hyn hon fel ond neu pan lle dim "
           "gyda rhwng dros heb tua bydd roedd mewn amser dyn blwyddyn byd gwaith plant tref "
           "dŵr gardd gaeaf marchnad meddyg ffenest llythyr bore pentref afon mynydd iaith pobl "
           "ysgol"),
    "ha": ("da a na ta ya su ba in ko cikin kuma wanda wannan shi ita yana tana suna za ga "
           "daga domin saboda amma don haka lokaci mutane gari ruwa kasuwa likita taga wasika "
           "safe kauye kogi dutse yara makaranta aiki shekara duniya gida"),
}


def _sentence(rng: random.Random, words: list[str]) -> str:
    chosen = [rng.choice(words) for _ in range(rng.randint(8, 16))]
    return " ".join(chosen).capitalize() + "."


def _pages(language: str, count: int, seed: int) -> list[tuple[str, str]]:
    """Pages of one site in one language: each a few paragraphs of sentences drawn from the
    language's common words (its function words make the language certain) and from names of
    its own, as a real page has (what a model that saw the page knows, and one that did not
    cannot)."""
    rng = random.Random(seed)
    common = _WORDS[language].split()
    pages = []
    for i in range(count):
        words = common + [f"{language}name{i}x{k}" for k in range(len(common) // 4)]
        paragraphs = "".join(
            f"<p>{' '.join(_sentence(rng, words) for _ in range(3))}</p>" for _ in range(4))
        html = (f"<html><head><title>{language} {i}</title></head><body>"
                f"<nav><a href='/'>Home</a> <a href='/a'>About</a></nav>"
                f"<article><h1>Story {i}</h1>{paragraphs}</article>"
                f"<footer>Footer of {language}.example</footer></body></html>")
        pages.append((f"http://{language}.example/story/{i:03d}", html))
    return pages


@pytest.fixture
def two_languages(tmp_path: Path, write_archive: ArchiveBuilder) -> Path:
    pages = _pages("en", 40, 1) + _pages("de", 40, 2)
    random.Random(3).shuffle(pages)
    records = [warc_record("response", url, http_response(html.encode()))
               for url, html in pages]
    return write_archive(tmp_path / "crawl.warc.gz", records, Codec.GZIP)


def _clean(archive: Path, out: Path, *options: str) -> dict:
    result = runner.invoke(app, ["clean", str(archive), "-o", str(out), "-j", "1", "--json",
                                 "-q", "-f", "jsonl", *options])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_auto_scores_each_page_with_its_language_model_of_the_other_half(
    two_languages: Path, tmp_path: Path
) -> None:
    summary = _clean(two_languages, tmp_path / "out", "--lm", "auto")
    pages = jsonl_pages(tmp_path / "out")
    assert summary["pages"] == len(pages) == 80
    assert {p["language"] for p in pages} == {"en", "de"}
    # The models, trained here from the run's own text (its pages in the input's order).
    models = {}
    for language in ("en", "de"):
        for half in (0, 1):
            texts = [p["text"] for p in pages
                     if p["language"] == language and url_half(p["url"]) == half]
            models[language, half] = LanguageModel.train(texts, chars=False)
    for page in pages:
        other = models[page["language"], 1 - url_half(page["url"])]
        assert page["perplexity"] == pytest.approx(other.perplexity(page["text"]), rel=1e-9)
        wrong = models["de" if page["language"] == "en" else "en", 1 - url_half(page["url"])]
        assert wrong.perplexity(page["text"]) > 5 * page["perplexity"]


def test_auto_trains_a_model_for_every_language_with_enough_text(
    tmp_path: Path, write_archive: ArchiveBuilder
) -> None:
    """Not only the languages of a fixed list: Welsh and Hausa pages get models of their own,
    and every page a perplexity under its language's model of the other half."""
    pages = _pages("en", 30, 1) + _pages("cy", 30, 2) + _pages("ha", 30, 3)
    records = [warc_record("response", url, http_response(html.encode()))
               for url, html in pages]
    archive = write_archive(tmp_path / "crawl.warc.gz", records, Codec.GZIP)
    _clean(archive, tmp_path / "out", "--lm", "auto", "--perplexity-buckets")
    found = jsonl_pages(tmp_path / "out")
    by_site = {(p["url"].split("/")[2], p["language"]) for p in found}
    assert by_site == {("en.example", "en"), ("cy.example", "cy"), ("ha.example", "ha")}
    assert all(p["perplexity"] is not None and p["perplexity_bucket"] for p in found)


def test_a_run_model_is_the_word_model_of_all_its_text() -> None:
    """A run scores with the word model only: its models count every text (none held out to
    calibrate a noise score no run reads) and have no character component."""
    rng = random.Random(7)
    words = [f"w{i}" for i in range(300)]
    # 64 texts of 10 lines: a calibrating trainer holds out 2 texts, too few lines (20) to
    # calibrate on, and counts them after all; 640 texts of 10 lines hold out 200 lines.
    texts = ["\n".join(" ".join(rng.choices(words, k=8)) for _ in range(10)) for _ in range(640)]
    run = train_run_model(texts)
    calibrated = LanguageModel.train(texts)
    assert run.chars is None and run.calibration is None
    assert calibrated.chars is not None and calibrated.calibration is not None
    assert run.info["units"] == 640 * 10 * 9  # 8 words and </s> a line
    assert calibrated.info["units"] == 620 * 10 * 9


def test_a_page_is_not_scored_by_a_model_that_saw_it(two_languages: Path, tmp_path: Path) -> None:
    """The bias the halves remove, measured: a model trained on all the pages gives them a
    quarter less perplexity than the run gives them (a model that did not see them: 1.36 times
    as much here, 2.2 times on dragnet's pages, benchmarks/lm_filter.py), and the run's two
    halves score alike."""
    pages = _jsonl_of(two_languages, tmp_path)
    for language in ("en", "de"):
        mine = [p for p in pages if p["language"] == language]
        seen = LanguageModel.train([p["text"] for p in mine]).perplexities(
            [p["text"] for p in mine])
        run = [p["perplexity"] for p in mine]
        assert median(run) > 1.25 * median(seen)
        halves = [median(p["perplexity"] for p in mine if url_half(p["url"]) == h)
                  for h in (0, 1)]
        assert 0.8 < halves[0] / halves[1] < 1.25


def _jsonl_of(archive: Path, tmp_path: Path, *options: str) -> list[dict]:
    _clean(archive, tmp_path / "auto", "--lm", "auto", *options)
    return jsonl_pages(tmp_path / "auto")


def _assert_exact_buckets(pages: list[dict], languages: set[str]) -> None:
    assert {p["language"] for p in pages} == languages
    for language in languages:
        mine = [p for p in pages if p["language"] == language]
        n = len(mine)
        by = {b: sorted(p["perplexity"] for p in mine if p["perplexity_bucket"] == b)
              for b in ("head", "middle", "tail")}
        assert len(by["head"]) == math.ceil(0.3 * n)
        assert len(by["head"]) + len(by["middle"]) == math.ceil(0.6 * n)
        assert len(by["tail"]) == n - math.ceil(0.6 * n)
        assert by["head"][-1] < by["middle"][0] and by["middle"][-1] < by["tail"][0]


def test_buckets_split_each_language_at_its_30th_and_60th_percentiles(
    two_languages: Path, tmp_path: Path
) -> None:
    pages = _jsonl_of(two_languages, tmp_path, "--perplexity-buckets")
    _assert_exact_buckets(pages, {"en", "de"})
    # Without buckets asked for, the field is not written.
    assert "perplexity_bucket" not in _jsonl_of(two_languages, tmp_path / "plain")[0]


def test_buckets_with_a_given_model(two_languages: Path, tmp_path: Path) -> None:
    model = tmp_path / "en.lm"
    LanguageModel.train([" ".join(_WORDS["en"].split()) + "."] * 5).save(model)
    _clean(two_languages, tmp_path / "out", "--lm", str(model), "--perplexity-buckets")
    pages = jsonl_pages(tmp_path / "out")
    _assert_exact_buckets(pages, {"en", "de"})
    loaded = LanguageModel.load(model)
    for page in pages:  # one model for every language; percentiles per language
        assert page["perplexity"] == pytest.approx(loaded.perplexity(page["text"]), rel=1e-9)


def test_a_given_models_scores_made_while_cleaning_are_those_read_back(
    two_languages: Path, tmp_path: Path
) -> None:
    """With a given model the stage scores each page as it cleans it: the very perplexities
    and languages that scoring its store of cleaned pages afterwards gives."""
    from warcdeboil.lm.cleaned import iter_cleaned_store
    from warcdeboil.lm.scoring import LmSettings
    from warcdeboil.lm.stage import _Scores, cleaned_store_path, read_scores, scores_path

    model = tmp_path / "en.lm"
    LanguageModel.train([" ".join(_WORDS["en"].split()) + "."] * 5).save(model)
    work = tmp_path / "work"
    _clean(two_languages, tmp_path / "out", "--lm", str(model), "--perplexity-buckets",
           "--work-dir", str(work))
    again = tmp_path / "again.npz"
    scores = _Scores(LmSettings(str(model), buckets=True))
    for page in iter_cleaned_store(cleaned_store_path(work, 0)):
        scores.add(page)
    scores.write(again)
    found = scores.found
    walked = list(read_scores(scores_path(work, 0)))
    assert walked == list(read_scores(again))
    assert len(walked) == 80 and {language for _, _, language in walked} == {"en", "de"}
    assert sorted(found) == ["de", "en"] and sum(map(len, found.values())) == 80


def test_keep_buckets_drops_the_other_buckets_and_counts_them(
    two_languages: Path, tmp_path: Path
) -> None:
    every = _jsonl_of(two_languages, tmp_path / "all", "--perplexity-buckets")
    summary = _clean(two_languages, tmp_path / "kept", "--lm", "auto", "--keep-buckets",
                     "middle,head", "--perplexity-buckets")
    kept = jsonl_pages(tmp_path / "kept")
    tail = [p for p in every if p["perplexity_bucket"] == "tail"]
    assert kept == [p for p in every if p["perplexity_bucket"] != "tail"]
    assert summary["pages_dropped_bucket"] == len(tail) == 80 - 2 * math.ceil(0.6 * 40)
    assert summary["pages"] == 80  # cleaned, though not all written
    assert summary["pages_dropped_perplexity"] == 0
    assert summary["text_chars"] == sum(len(p["text"]) for p in kept)
    summary = _clean(two_languages, tmp_path / "head", "--lm", "auto", "--keep-buckets", "head")
    assert summary["pages_dropped_bucket"] == 80 - 2 * math.ceil(0.3 * 40)
    assert {p["url"] for p in jsonl_pages(tmp_path / "head")} == {
        p["url"] for p in every if p["perplexity_bucket"] == "head"}


@pytest.mark.parametrize("args", [
    ["--lm", "auto", "--keep-buckets", "top"],
    ["--perplexity-buckets"],
    ["--keep-buckets", "head"],
    ["--lm", "auto", "-f", "warc"],
])
def test_usage_errors(two_languages: Path, tmp_path: Path, args: list[str]) -> None:
    fmt = [] if "-f" in args else ["-f", "jsonl"]
    result = runner.invoke(app, ["clean", str(two_languages), "-o", str(tmp_path / "o"), *fmt,
                                 *args])
    assert result.exit_code == 2, result.output
    result = runner.invoke(app, ["apply", str(two_languages), "-o", str(tmp_path / "o"),
                                 "--profiles", str(tmp_path), "-f", "jsonl", "--lm", "auto"])
    assert result.exit_code == 2, result.output


@pytest.fixture
def two_archives(tmp_path: Path, write_archive: ArchiveBuilder) -> Path:
    """The two languages' pages in two inputs, each holding some of both."""
    pages = _pages("en", 30, 4) + _pages("de", 30, 5)
    random.Random(6).shuffle(pages)
    crawl = tmp_path / "crawl"
    crawl.mkdir()
    for name, part in (("a", pages[:25]), ("b", pages[25:])):
        records = [warc_record("response", url, http_response(html.encode()))
                   for url, html in part]
        write_archive(crawl / f"{name}.warc.gz", records, Codec.GZIP)
    return crawl


def _outputs(directory: Path) -> dict[str, list[str]]:
    found = {}
    for path in sorted(directory.rglob("*.jsonl.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            found[path.name] = fh.read().splitlines()
    return found


@pytest.mark.parametrize("given", [False, True], ids=["auto", "given model"])
def test_spark_gives_the_local_scores_and_buckets(spark, two_archives: Path, tmp_path: Path,
                                                  given: bool) -> None:
    from warcdeboil.lm.scoring import LmSettings
    from warcdeboil.output.formats import OutputFormat
    from warcdeboil.run.local import clean
    from warcdeboil.run.options import Options
    from warcdeboil.spark import run_spark

    model = "auto"
    if given:
        model = str(tmp_path / "en.lm")
        LanguageModel.train([" ".join(_WORDS["en"].split()) + "."] * 5).save(model)
    # With a given model, no line score: pass 2 takes the stage's page scores (locally).
    lines = {} if given else {"line_scores": True, "max_line": 400.0}
    options = Options(workers=1, format=OutputFormat.JSONL, lm=LmSettings(
        model, buckets=True, keep_buckets=("head", "middle"), **lines))
    local = clean([two_archives], tmp_path / "local", options).to_dict()
    distributed = run_spark([str(two_archives)], str(tmp_path / "spark"), options,
                            session=spark).to_dict()
    for key in ("pages", "pages_dropped_bucket", "lines_dropped_perplexity", "text_chars"):
        assert distributed[key] == local[key], key
    assert local["pages_dropped_bucket"] > 0
    expected = _outputs(tmp_path / "local")
    assert _outputs(tmp_path / "spark") == expected
    pages = [json.loads(line) for lines in expected.values() for line in lines]
    assert {p["perplexity_bucket"] for p in pages} == {"head", "middle"}
    assert {p["language"] for p in pages} == {"en", "de"}


@pytest.mark.parametrize("fmt", ["markdown", "jsonl"])
@pytest.mark.parametrize("mode", ["content", "template"])
def test_pages_written_from_the_stage_are_those_pass_2_would_clean(
    two_languages: Path, tmp_path: Path, mode: str, fmt: str
) -> None:
    """Pass 2 takes the pages the stage cleaned (lm.stage's cleaned store): every field but the
    scores is what a run without a model writes, Markdown (made from the blocks) included; for
    JSONL the store keeps each block's text and kind only (headings and lists the same)."""
    _clean(two_languages, tmp_path / "plain", "-f", fmt, "--mode", mode)
    summary = _clean(two_languages, tmp_path / "auto", "-f", fmt, "--mode", mode,
                     "--lm", "auto", "--perplexity-buckets")
    plain, scored = jsonl_pages(tmp_path / "plain"), jsonl_pages(tmp_path / "auto")
    assert any(p["perplexity"] is not None for p in scored)
    for page in scored:
        page.pop("perplexity_bucket")
        page["perplexity"] = None
    assert scored == plain
    assert summary["removed_subtrees"] + summary["removed_blocks"] > 0


def test_duplicates_dropped_before_the_stored_scores(tmp_path: Path,
                                                     write_archive: ArchiveBuilder) -> None:
    """--dedup drop leaves pages out before the scoring sink reads the stage's stored scores:
    the scores of the pages after them stay theirs (the stage scored every page)."""
    pages = _pages("en", 40, 1)
    copies = [(url + "?utm_source=feed", html) for url, html in pages[::4]]
    crawl = pages + copies
    random.Random(9).shuffle(crawl)
    archive = write_archive(tmp_path / "crawl.warc.gz",
                            [warc_record("response", url, http_response(html.encode()))
                             for url, html in crawl], Codec.GZIP)
    marked = _jsonl_of(archive, tmp_path / "mark", "--perplexity-buckets", "--dedup", "mark")
    summary = _clean(archive, tmp_path / "drop", "--lm", "auto", "--perplexity-buckets",
                     "--dedup", "drop")
    dropped = jsonl_pages(tmp_path / "drop")
    assert sum(summary["duplicates"]["dropped"].values()) == len(copies)
    assert dropped == [p for p in marked if p["duplicate_of"] is None]
    assert {p["url"] for p in dropped} == {url for url, _ in pages}


def test_auto_scores_from_the_training_units_are_pass_2s(two_languages: Path,
                                                          tmp_path: Path) -> None:
    """--lm auto scores each page from the units its half's training kept, before pass 2;
    asked for each line's score, pass 2 scores the pages itself: the same perplexities to the
    last bit, and the same buckets (computed from the stage's scores in both runs)."""
    stage = _jsonl_of(two_languages, tmp_path / "stage", "--perplexity-buckets")
    again = _jsonl_of(two_languages, tmp_path / "again", "--perplexity-buckets",
                      "--line-perplexity")
    assert [(p["perplexity"], p["perplexity_bucket"]) for p in stage] == [
        (p["perplexity"], p["perplexity_bucket"]) for p in again]
    assert all(p["perplexity"] is not None for p in stage) and len(stage) == 80
    plain = _jsonl_of(two_languages, tmp_path / "plain")
    assert [p["perplexity"] for p in plain] == [p["perplexity"] for p in stage]


def test_auto_stage_scores_every_input_and_leaves_unscored_pages_null(
    tmp_path: Path, write_archive: ArchiveBuilder
) -> None:
    """Two inputs, English pages in both, two German pages (too little text for models of
    their own) and a page without text: the stage's scores land on their own pages in each
    input, null for the pages no model scores, and are those pass 2 gives when it scores the
    pages itself (asked for line scores)."""
    pages = _pages("en", 30, 4) + _pages("de", 2, 5)
    pages.append(("http://empty.example/", "<html><body><nav>Home</nav></body></html>"))
    random.Random(8).shuffle(pages)
    crawl = tmp_path / "crawl"
    crawl.mkdir()
    for name, part in (("a", pages[:14]), ("b", pages[14:])):
        write_archive(crawl / f"{name}.warc.gz",
                      [warc_record("response", url, http_response(html.encode()))
                       for url, html in part], Codec.GZIP)
    _clean(crawl, tmp_path / "stage", "--lm", "auto")
    _clean(crawl, tmp_path / "pass2", "--lm", "auto", "--line-perplexity")
    stage = {p["url"]: p for p in jsonl_pages(tmp_path / "stage")}
    again = {p["url"]: p for p in jsonl_pages(tmp_path / "pass2")}
    assert len(stage) == len(pages) == len(again)
    for url, page in stage.items():
        assert page["perplexity"] == again[url]["perplexity"], url
        scored = page["language"] == "en"
        assert (page["perplexity"] is not None) is scored, (url, page["language"])
    assert sum(p["language"] == "de" for p in stage.values()) == 2
