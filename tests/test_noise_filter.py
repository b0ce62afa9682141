"""The noise score in the product: ``perplexity --noise``, and on ``clean`` and ``apply``
``--max-line-noise`` (the default line filter of a model with its calibration) and
``--line-noise`` (JSONL ``line_noise``)."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest
from conftest import (
    FIXTURES,
    calibrated_model,
    count_char_lookups,
    jsonl_pages,
    lines_kept,
    shared_file,
)
from typer.testing import CliRunner

from warcdeboil.cli import app
from warcdeboil.lm import LanguageModel
from warcdeboil.lm.arpa import write_arpa
from warcdeboil.lm.scoring import DEFAULT_MAX_NOISE, LmSettings, PageScorer
from warcdeboil.output.schema import FIELDS
from warcdeboil.page.dom import CleanText
from warcdeboil.warc.reader import iter_records

runner = CliRunner()


@pytest.fixture(scope="module")
def model_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A model of dragnet's gold text (not the archive cleaned below), with its calibration."""
    with gzip.open(shared_file("eval", "dragnet.gold.jsonl.gz"), "rt", encoding="utf-8") as fh:
        texts = [json.loads(line)["gold"] for line in fh]
    path = tmp_path_factory.mktemp("lm") / "dragnet.lm"
    model = LanguageModel.train(texts)
    assert model.calibrated and model.language == "en"
    model.save(path)
    return path


@pytest.fixture(scope="module")
def uncalibrated(tmp_path_factory: pytest.TempPathFactory, model_path: Path) -> dict[str, Path]:
    """The same model as ARPA, and a model trained on too little text to hold out any."""
    where = tmp_path_factory.mktemp("plain")
    write_arpa(LanguageModel.load(model_path), where / "dragnet.arpa")
    tiny = LanguageModel.train(["the cat sat on the mat"] * 40)
    assert not tiny.calibrated
    tiny.save(where / "tiny.lm")
    return {"arpa": where / "dragnet.arpa", "tiny": where / "tiny.lm"}


@pytest.fixture(scope="module")
def archive() -> Path:
    return shared_file("eval", "cleanportaleval.warc.gz")


@pytest.fixture(scope="module")
def whole(model_path: Path, archive: Path, tmp_path_factory: pytest.TempPathFactory,
          ) -> list[dict]:
    """Every page of the archive with each line's noise score and perplexity, none dropped."""
    out = tmp_path_factory.mktemp("whole")
    _clean(archive, out, "-f", "markdown", "--lm", str(model_path), "--line-noise",
           "--line-perplexity", "--max-line-noise", "1")
    return jsonl_pages(out)


def _clean(archive: Path, out: Path, *options: str) -> dict:
    result = runner.invoke(app, ["clean", str(archive), "-o", str(out), "-j", "1", "--json",
                                 "-q", *options])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


# perplexity --noise ------------------------------------------------------------------------------

LINES = ["The council approved the new budget for the town's schools on Tuesday.",
         "Home | News | Sport | Weather | Contact us", "", "itâ€™s a cafÃ© in the cityâ€™s heart",
         "x7#k@q zz9 qq_ 3f%a", "Mortgages Savings Deals Airports Beach Family"]


def test_cli_prints_each_lines_noise_score_as_the_library_gives_it(model_path: Path) -> None:
    result = runner.invoke(app, ["perplexity", "--noise", "--model", str(model_path)],
                           input="".join(line + "\n" for line in LINES))
    assert result.exit_code == 0, result.output
    printed = result.stdout.splitlines()
    assert len(printed) == len(LINES)
    # The empty line has nothing to score: an empty line, as for perplexity (JSONL: null).
    assert printed[2] == "" and all(printed[:2] + printed[3:])
    scores = [float(value) if value else None for value in printed]
    library = LanguageModel.load(model_path).line_noise_scores(LINES)
    assert scores == [None if not line else want for line, want in zip(LINES, library,
                                                                        strict=True)]  # every bit
    assert all(0.0 <= score <= 1.0 for score in scores if score is not None)
    assert scores[0] < 0.9 and min(scores[1], scores[3], scores[4], scores[5]) > scores[0]
    one = runner.invoke(app, ["perplexity", LINES[3], "--noise", "-m", str(model_path)])
    assert one.exit_code == 0 and [float(one.stdout)] == scores[3:4]
    # A line with nothing to score is an empty line, as for perplexity: one line out per line in.
    gaps = runner.invoke(app, ["perplexity", "--noise", "-m", str(model_path)],
                         input=f"{LINES[0]}\n\n   \n{LINES[3]}\n")
    assert gaps.exit_code == 0 and gaps.stdout.split("\n") == [
        repr(scores[0]), "", "", repr(scores[3]), ""]


@pytest.mark.parametrize("kind", ["arpa", "tiny"])
def test_cli_refuses_a_model_without_calibration_in_one_line(
        uncalibrated: dict[str, Path], kind: str) -> None:
    result = runner.invoke(app, ["perplexity", "a line", "--noise", "-m", str(uncalibrated[kind])])
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and result.stdout == ""
    assert "no noise calibration" in result.stderr and "warcdeboil lm train" in result.stderr
    assert str(uncalibrated[kind]) in result.stderr and "--max-line-perplexity" in result.stderr
    # Without --noise the same model prints perplexities.
    plain = runner.invoke(app, ["perplexity", "a line", "-m", str(uncalibrated[kind])])
    assert plain.exit_code == 0 and float(plain.stdout) > 1


# clean and apply ---------------------------------------------------------------------------------

def _spoken(line: str) -> bool:
    return bool(line.strip())


def test_jsonl_line_noise_is_the_models_score_of_each_line(
        model_path: Path, whole: list[dict]) -> None:
    model = LanguageModel.load(model_path)
    scored = 0
    for page in whole:
        lines = page["text"].split("\n")
        assert len(page["line_noise"]) == len(lines) == len(page["line_perplexities"])
        expected = model.line_noise_scores(lines)
        for line, got, want in zip(lines, page["line_noise"], expected, strict=True):
            assert got == (want if _spoken(line) else None)
            scored += got is not None
    assert scored > 500
    # In the schema's order (a field added last: at the end of FIELDS).
    order = [f.name for f in FIELDS]
    assert list(whole[0]) == sorted(whole[0], key=order.index)


def test_the_noise_filter_drops_exactly_the_lines_above_its_limit(
        model_path: Path, archive: Path, whole: list[dict], tmp_path: Path) -> None:
    scores = sorted(s for page in whole for s in page["line_noise"] if s is not None)
    limit = scores[len(scores) * 4 // 5]  # a fifth of the lines go
    expected, dropped = lines_kept(whole, "line_noise", limit)
    assert dropped > 100
    summary = _clean(archive, tmp_path / "md", "-f", "markdown", "--lm", str(model_path),
                     "--max-line-noise", str(limit), "--line-noise")
    pages = jsonl_pages(tmp_path / "md")
    assert {p["url"]: p["text"] for p in pages} == expected
    assert summary["lines_dropped_noise"] == dropped
    assert summary["lines_dropped_perplexity"] == 0
    assert sum(p["removed"].get("noise_lines", 0) for p in pages) == dropped
    for page in pages:  # the scores of the lines kept, which kept theirs
        assert all(s is None or s <= limit for s in page["line_noise"])
        assert len(page["line_noise"]) == len(page["text"].split("\n"))
        assert "perplexity_lines" not in page["removed"]

    text_summary = _clean(archive, tmp_path / "wet", "-f", "text", "--lm", str(model_path),
                          "--max-line-noise", str(limit))
    (wet,) = (tmp_path / "wet").glob("*.gz")
    records = list(iter_records(wet))
    assert f"max-line-noise: {limit!r}\r\n" in records[0].block.decode()
    conversions = {r.get("WARC-Target-URI"): r.block.decode() for r in records
                   if r.rec_type == "conversion"}
    assert conversions == {url: text for url, text in expected.items()}
    assert text_summary["lines_dropped_noise"] == dropped
    # The printed summary says it too.
    printed = runner.invoke(app, ["clean", str(archive), "-o", str(tmp_path / "printed"), "-j",
                                  "1", "-f", "text", "--lm", str(model_path), "--max-line-noise",
                                  str(limit)])
    assert printed.exit_code == 0, printed.output
    assert f"lines dropped {dropped:>12,}   noise: {dropped:,}, perplexity: 0\n" in printed.stderr


def test_a_line_above_both_limits_is_the_perplexity_filters(
        model_path: Path, archive: Path, whole: list[dict], tmp_path: Path) -> None:
    noise = sorted(s for page in whole for s in page["line_noise"] if s is not None)
    perplexity = sorted(s for page in whole for s in page["line_perplexities"] if s is not None)
    max_noise, max_line = noise[len(noise) // 2], perplexity[len(perplexity) // 2]
    by_perplexity = by_noise = 0
    for page in whole:
        for n, p in zip(page["line_noise"], page["line_perplexities"], strict=True):
            if p is not None and p > max_line:
                by_perplexity += 1
            elif n is not None and n > max_noise:
                by_noise += 1
    summary = _clean(archive, tmp_path / "both", "-f", "jsonl", "--lm", str(model_path),
                     "--max-line-noise", str(max_noise), "--max-line-perplexity", str(max_line))
    assert (summary["lines_dropped_perplexity"], summary["lines_dropped_noise"]) == (
        by_perplexity, by_noise)
    assert by_perplexity and by_noise


def test_a_calibrated_model_filters_by_noise_unless_told_otherwise(
        model_path: Path, archive: Path, whole: list[dict], tmp_path: Path) -> None:
    """The default line filter: --max-line-noise DEFAULT_MAX_NOISE with a calibrated model;
    --max-line-perplexity alone keeps its own filter (and no noise is scored), and
    --max-line-noise 1 keeps every line."""
    # The fixture crawl under a model of made-up sentences: lines above the default limit
    # (none of cleanportaleval's is, under dragnet's model).
    made_up = calibrated_model(tmp_path / "made-up.lm")
    _clean(FIXTURES / "crawl", tmp_path / "scored", "-f", "jsonl", "--lm", str(made_up),
           "--line-noise", "--max-line-noise", "1")
    expected, above = {}, 0
    for page in jsonl_pages(tmp_path / "scored"):
        own = page["language"] in ("en", None)  # another language's pages keep their lines
        kept = [line for line, s in zip(page["text"].split("\n"), page["line_noise"],
                                        strict=True)
                if not own or s is None or s <= DEFAULT_MAX_NOISE]
        above += len(page["line_noise"]) - len(kept)
        expected[page["url"]] = "\n".join(kept)
    summary = _clean(FIXTURES / "crawl", tmp_path / "default", "-f", "jsonl", "--lm",
                     str(made_up))
    assert summary["lines_dropped_noise"] == above > 0
    assert {p["url"]: p["text"] for p in jsonl_pages(tmp_path / "default")} == expected
    _clean(archive, tmp_path / "wet", "-f", "text", "--lm", str(model_path))
    (wet,) = (tmp_path / "wet").glob("*.gz")
    info = next(iter_records(wet)).block.decode()
    assert f"max-line-noise: {DEFAULT_MAX_NOISE!r}\r\n" in info
    plain = _clean(archive, tmp_path / "ppl", "-f", "jsonl", "--lm", str(model_path),
                   "--max-line-perplexity", "1e9")
    assert plain["lines_dropped_noise"] == plain["lines_dropped_perplexity"] == 0
    every = _clean(archive, tmp_path / "every", "-f", "jsonl", "--lm", str(model_path),
                   "--max-line-noise", "1")
    assert every["lines_dropped_noise"] == 0
    kept = jsonl_pages(tmp_path / "every")
    assert [p["text"] for p in kept] == [p["text"] for p in whole]
    assert "line_noise" not in kept[0]


def test_the_default_keeps_a_model_without_calibration_as_it_was(
        uncalibrated: dict[str, Path], archive: Path, tmp_path: Path) -> None:
    summary = _clean(archive, tmp_path / "arpa", "-f", "jsonl", "--lm", str(uncalibrated["arpa"]))
    assert summary["lines_dropped_noise"] == 0
    _clean(archive, tmp_path / "none", "-f", "jsonl")
    assert [p["text"] for p in jsonl_pages(tmp_path / "arpa")] == [
        p["text"] for p in jsonl_pages(tmp_path / "none")]


def test_pages_of_another_language_keep_their_lines(model_path: Path) -> None:
    """The noise score measures lines against the model's language: the filter leaves pages
    of another language alone (their lines are still scored)."""
    english = "The council approved the budget.\nHome | News | Sport\nThe schools will open."
    french = ("Le conseil municipal a approuvé le budget mardi soir.\nLes écoles de la ville "
              "ouvriront leurs portes en septembre.\nLa mairie a remercié les habitants.")
    above = sum(s > 0.0 for s in LanguageModel.load(model_path).line_noise_scores(english))
    scorer = PageScorer(LmSettings(str(model_path), max_noise=0.0, line_noise=True))
    mine, theirs = scorer.score_many([(CleanText(english, 0), None), (CleanText(french, 0), None)])
    assert mine.noise_dropped == above >= 2 and mine.guess is not None
    assert theirs.noise_dropped == 0 and theirs.cleaned.text == french
    assert theirs.noise is not None and all(s is not None and s > 0.9 for s in theirs.noise)
    assert theirs.guess is not None and theirs.guess.language == "fr"


def test_the_filter_alone_scores_in_full_only_lines_near_its_limit(
        model_path: Path, whole: list[dict], monkeypatch: pytest.MonkeyPatch) -> None:
    """Without --line-noise the default filter reads the character model for a fraction of
    the text (``noise.filter_scores``) and drops the same lines as the full score; with it,
    every line is scored in full."""
    model = LanguageModel.load(model_path)
    assert model.chars is not None
    seen = count_char_lookups(model, monkeypatch)
    pages = [(CleanText(page["text"], 0), None) for page in whole]
    read = {}
    for line_noise in (False, True):
        seen.clear()
        scorer = PageScorer(LmSettings(str(model_path), max_noise=DEFAULT_MAX_NOISE,
                                       line_noise=line_noise), model)
        texts = [score.cleaned.text for score in scorer.score_many(pages)]
        read[line_noise] = (sum(seen), texts)
    characters = sum(len(page["text"]) for page in whole)
    assert read[True][0] > characters > 5 * read[False][0]
    assert read[True][1] == read[False][1]
    # A limit some lines are above (none of cleanportaleval's is above the default): the same
    # lines dropped as by the scores of --line-noise.
    limit = 0.9995
    above = sum(s is not None and s > limit for page in whole for s in page["line_noise"])
    scorer = PageScorer(LmSettings(str(model_path), max_noise=limit), model)
    assert sum(score.noise_dropped for score in scorer.score_many(pages)) == above > 0


def test_apply_filters_as_clean(model_path: Path, archive: Path, whole: list[dict],
                                tmp_path: Path) -> None:
    work, profiles = tmp_path / "work", tmp_path / "profiles"
    assert runner.invoke(app, ["index", str(archive), "--work-dir", str(work), "-q"]).exit_code == 0
    assert runner.invoke(app, ["fit", "--work-dir", str(work), "--profiles", str(profiles),
                               "-q"]).exit_code == 0
    scores = sorted(s for page in whole for s in page["line_noise"] if s is not None)
    limit = scores[len(scores) // 2]

    def apply(out: str, max_noise: float) -> dict:
        result = runner.invoke(app, ["apply", str(archive), "-o", str(tmp_path / out),
                                     "--profiles", str(profiles), "-f", "jsonl", "-q", "--json",
                                     "--lm", str(model_path), "--max-line-noise",
                                     str(max_noise), "--line-noise"])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    assert apply("all", 1.0)["lines_dropped_noise"] == 0
    summary = apply("out", limit)
    expected, dropped = [], 0
    for page in jsonl_pages(tmp_path / "all"):
        kept = [(line, s) for line, s in zip(page["text"].split("\n"), page["line_noise"],
                                              strict=True) if s is None or s <= limit]
        dropped += len(page["line_noise"]) - len(kept)
        expected.append(("\n".join(line for line, _ in kept), [s for _, s in kept] or [None]))
    assert summary["lines_dropped_noise"] == dropped > 100
    assert [(p["text"], p["line_noise"]) for p in jsonl_pages(tmp_path / "out")] == expected


@pytest.mark.parametrize("options", [
    ["--max-line-noise", "0.9"],
    ["--line-noise"],
    ["-f", "text", "--lm", "MODEL", "--line-noise"],
    ["-f", "jsonl", "--lm", "MODEL", "--max-line-noise", "1.5"],
    ["-f", "jsonl", "--lm", "MODEL", "--max-line-noise", "-0.1"],
    ["-f", "warc", "--lm", "MODEL", "--max-line-noise", "0.9"],
    ["-f", "jsonl", "--lm", "ARPA", "--max-line-noise", "0.9"],
    ["-f", "jsonl", "--lm", "ARPA", "--line-noise"],
    ["-f", "jsonl", "--lm", "TINY", "--max-line-noise", "0.9"],
])
def test_usage_errors(model_path: Path, uncalibrated: dict[str, Path], archive: Path,
                      tmp_path: Path, options: list[str]) -> None:
    names = {"MODEL": model_path, "ARPA": uncalibrated["arpa"], "TINY": uncalibrated["tiny"]}
    options = [str(names.get(o, o)) for o in options]
    for command in (["clean", str(archive)],
                    ["apply", str(archive), "--profiles", str(tmp_path / "profiles")]):
        result = runner.invoke(app, [*command, "-o", str(tmp_path / "out"), *options])
        assert result.exit_code == 2, (command, result.output)
        assert "Traceback" not in result.output
        assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("options", [["--max-line-noise", "0.9"], ["--line-noise"]])
def test_the_runs_own_models_carry_no_calibration(archive: Path, tmp_path: Path,
                                                  options: list[str]) -> None:
    result = runner.invoke(app, ["clean", str(archive), "-o", str(tmp_path / "out"), "-f",
                                 "jsonl", "--lm", "auto", *options])
    assert result.exit_code == 2
    said = " ".join(re.sub("[\u2500-\u257f]", " ", result.stderr).split())  # the box drawn off
    assert "without a noise calibration: train one with `warcdeboil lm train`" in said


def test_a_made_up_model_scores_the_fixture_crawl(tmp_path: Path) -> None:
    model = calibrated_model(tmp_path / "made-up.lm")
    summary = _clean(FIXTURES / "crawl", tmp_path / "out", "-f", "jsonl", "--lm", str(model),
                     "--line-noise", "--max-line-noise", "0.5")
    pages = jsonl_pages(tmp_path / "out")
    assert pages and all(len(p["line_noise"]) == len(p["text"].split("\n")) for p in pages)
    assert summary["lines_dropped_noise"] == sum(p["removed"].get("noise_lines", 0)
                                                 for p in pages)


def test_what_scores_lines_for_noise(model_path: Path, uncalibrated: dict[str, Path]) -> None:
    """A filter that can drop a line, or JSONL's scores, compute the noise score; a limit of 1
    or the perplexity filter alone do not. ``check_model`` says which models can."""
    from warcdeboil.lm.scoring import check_model

    assert LmSettings("m", max_noise=0.9).noise and LmSettings("m", line_noise=True).noise
    assert LmSettings("m", max_noise=0.9).needs_lines
    assert not LmSettings("m", max_noise=1.0).noise
    assert not LmSettings("m", max_line=100.0).noise
    assert check_model(str(model_path))
    assert not check_model(str(uncalibrated["arpa"])) and not check_model(str(uncalibrated["tiny"]))
