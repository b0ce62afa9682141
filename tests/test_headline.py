"""--drop-headline: content mode's text without the page's headline (the headings that open the
main content), in every text output, on both stages' paths, in the API and in eval."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import FIXTURES, fitted_profiles, jsonl_pages
from typer.testing import CliRunner

from warcdeboil.cli import app
from warcdeboil.dedup.verdicts import DedupMode
from warcdeboil.errors import ConfigError, PlanError
from warcdeboil.output.formats import OutputFormat
from warcdeboil.page.content import HEADLINE, extract, without_headline
from warcdeboil.page.dom import analyse
from warcdeboil.run.local import clean
from warcdeboil.run.options import Options
from warcdeboil.site.clean import Mode
from warcdeboil.warc.reader import iter_records

CRAWL = FIXTURES / "crawl"


def _extraction(body: str):
    return extract(analyse(f"<html><body>{body}</body></html>",
                           structure=True).marked.decode("utf-8", "surrogatepass"))


def test_the_headings_that_open_the_text_go() -> None:
    story = ("<article><h1>Harbour wall finished</h1><h2>Two months of work</h2>"
             "<p>Workers finished the harbour wall on Friday after two months of work on the "
             "stones, the council said, and the fishermen paid for the crane.</p>"
             "<h2>What comes next</h2><p>The pier is next, in the spring, when the weather "
             "allows the divers to work under it for a few weeks.</p></article>")
    content = _extraction(story)
    assert content.text.startswith("Harbour wall finished\nTwo months of work\nWorkers")
    dropped = without_headline(content)
    # The two headings above the first paragraph go; the heading inside the text stays.
    assert dropped.text == content.text.split("\n", 2)[2]
    assert "What comes next" in dropped.text
    assert dropped.removed[HEADLINE] == 2
    assert {k: v for k, v in dropped.removed.items() if k != HEADLINE} == content.removed


def test_a_text_that_starts_with_a_paragraph_or_holds_only_headings_is_kept() -> None:
    prose = _extraction("<p>Workers finished the harbour wall on Friday after two months of "
                        "work on the stones, and the fishermen paid for the crane.</p>"
                        "<h2>Next</h2><p>The pier is next, in the spring, when the weather "
                        "allows the divers to work under it.</p>")
    assert without_headline(prose) is prose
    headings = _extraction("<h1>Harbour wall finished</h1><h2>Two months of work</h2>")
    assert without_headline(headings) is headings


def _texts(out: Path) -> dict[str, dict]:
    return {page["url"]: page for page in jsonl_pages(out)}


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, dict], dict[str, dict]]:
    """The fixture crawl as Markdown JSONL (content mode), with and without the headline."""
    root = tmp_path_factory.mktemp("headline")
    kept = clean([CRAWL], root / "kept", Options(workers=1, format=OutputFormat.MARKDOWN))
    dropped = clean([CRAWL], root / "dropped",
                    Options(workers=1, format=OutputFormat.MARKDOWN, drop_headline=True))
    assert kept.to_dict()["removed_blocks"] + 25 == dropped.to_dict()["removed_blocks"]
    return _texts(root / "kept"), _texts(root / "dropped")


def test_jsonl_and_markdown_leave_the_headline_out(both) -> None:
    kept, dropped = both
    assert kept.keys() == dropped.keys()
    headlines = 0
    for url, page in dropped.items():
        before = kept[url]
        gone = page["removed"].get(HEADLINE, 0)
        headlines += gone
        # The text loses its first lines, one a heading, and nothing else.
        assert before["text"].split("\n")[gone:] == page["text"].split("\n"), url
        assert page["title"] == before["title"]
        if gone:
            assert before["markdown"].startswith("#")
            assert not page["markdown"].startswith("#")
            assert before["text"].split("\n")[0] not in page["markdown"].split("\n")[0]
    assert headlines == 25  # every article of the crawl opens with its headline


def test_the_language_model_stage_cleans_the_pages_the_same_way(both, tmp_path: Path) -> None:
    # --lm auto writes pass 2's text from the stage's cleaned pages: without the headline too.
    from warcdeboil.lm.scoring import LmSettings

    _, dropped = both
    clean([CRAWL], tmp_path / "lm", Options(workers=1, format=OutputFormat.MARKDOWN,
                                            drop_headline=True,
                                            lm=LmSettings("auto", True, None, None)))
    scored = _texts(tmp_path / "lm")
    assert {url: page["text"] for url, page in scored.items()} == {
        url: page["text"] for url, page in dropped.items()}


@pytest.mark.parametrize("args", [["-f", "warc"], ["-f", "jsonl", "--mode", "template"]],
                         ids=["warc", "template"])
def test_the_option_needs_content_mode_and_a_text_output(args: list[str],
                                                         tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["clean", str(CRAWL), "-o", str(tmp_path / "out"),
                                      "--drop-headline", "-q", *args])
    assert result.exit_code == 2
    assert "Invalid value for --drop-headline: leaves the headline out" in result.output
    assert not (tmp_path / "out").exists()
    # The same rule for the library's options.
    with pytest.raises(ConfigError, match="use --mode content"):
        Options(format=OutputFormat(args[1]), mode=Mode(args[3]) if len(args) > 2 else None,
                drop_headline=True)


def test_apply_leaves_it_out_too(both, tmp_path: Path) -> None:
    _, dropped = both
    profiles = fitted_profiles(CRAWL, tmp_path)
    result = CliRunner().invoke(app, ["apply", str(CRAWL), "-o", str(tmp_path / "out"),
                                      "--profiles", str(profiles), "-f", "markdown",
                                      "--dedup", "off", "--drop-headline", "-q", "-j", "1"])
    assert result.exit_code == 0, result.output
    assert {url: page["text"] for url, page in _texts(tmp_path / "out").items()} == {
        url: page["text"] for url, page in dropped.items()}


def test_eval_scores_the_text_without_it(both, tmp_path: Path) -> None:
    # A gold that leaves the headline out: perfect with the option, not without it.
    _, dropped = both
    gold = tmp_path / "gold.jsonl"
    gold.write_text("".join(json.dumps({"url": url, "gold": page["text"]}) + "\n"
                            for url, page in dropped.items()), encoding="utf-8")

    def f1(*extra: str) -> float:
        result = CliRunner().invoke(app, ["eval", str(CRAWL), "--gold", str(gold), "--json",
                                          "-j", "1", *extra])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)["overall"]["f1"]

    assert f1("--drop-headline") == 1.0
    assert f1() < 0.99


def test_resume_refuses_outputs_made_otherwise(tmp_path: Path) -> None:
    clean([CRAWL], tmp_path / "out", Options(workers=1, format=OutputFormat.JSONL))
    with pytest.raises(PlanError, match="--drop-headline not recorded"):
        clean([CRAWL], tmp_path / "out",
              Options(workers=1, format=OutputFormat.JSONL, drop_headline=True), resume=True)
    clean([CRAWL], tmp_path / "dropped",
          Options(workers=1, format=OutputFormat.JSONL, drop_headline=True))
    side = next((tmp_path / "dropped").glob(".*.options.json"))
    assert json.loads(side.read_text())["options"]["drop-headline"] == "yes"


def test_the_in_memory_api_leaves_it_out_as_jsonl_does(tmp_path: Path) -> None:
    from warcdeboil import Deboiler

    archive = CRAWL / "crawl-00000.warc.gz"
    clean([archive], tmp_path / "out", Options(workers=1, format=OutputFormat.MARKDOWN,
                                               dedup=DedupMode.OFF, drop_headline=True))
    lines = jsonl_pages(tmp_path / "out")
    records = list(iter_records(archive))
    pages = Deboiler(mode=Mode.CONTENT, drop_headline=True).fit_transform(
        records, warc_file=archive)
    assert len(pages) == len(lines) > 0
    for page, line in zip(pages, lines, strict=True):
        assert {name: getattr(page, name) for name in line} == line
    with pytest.raises(ConfigError, match="drop_headline"):
        Deboiler(drop_headline=True)
