"""--favor precision|balanced|recall: content mode's operating points, on every path that cleans
a page in content mode (clean, apply, eval, the language-model stage, the API) and nowhere else.
What each setting does to precision and recall on ../shared/eval: tests/test_quality.py."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from conftest import FIXTURES, fitted_profiles, http_response, jsonl_pages, warc_record
from typer.testing import CliRunner

from warcdeboil.cli import app
from warcdeboil.dedup.verdicts import DedupMode
from warcdeboil.errors import ConfigError, PlanError
from warcdeboil.output.formats import OutputFormat
from warcdeboil.page.content import (
    FEATURE_NAMES,
    OPERATING_POINTS,
    ContentModel,
    extract,
    operating_point,
)
from warcdeboil.page.dom import analyse
from warcdeboil.page.favor import Favor, as_favor
from warcdeboil.run.local import clean
from warcdeboil.run.options import Options
from warcdeboil.site.clean import Mode
from warcdeboil.warc.compression import Codec
from warcdeboil.warc.reader import iter_records
from warcdeboil.warc.writer import WarcWriter

CRAWL = FIXTURES / "crawl"


def test_each_setting_has_its_point_and_names_are_checked() -> None:
    balanced, precision, recall = (operating_point(f) for f in ("balanced", "precision",
                                                                 "recall"))
    assert set(OPERATING_POINTS) == set(Favor)
    assert operating_point() is balanced is OPERATING_POINTS[Favor.BALANCED]
    # Precision drops more after the model (balanced drops nothing there); recall lowers the
    # bars a block must reach.
    assert precision.threshold >= balanced.threshold > recall.threshold
    assert precision.listing_threshold >= balanced.listing_threshold > recall.listing_threshold
    assert not (balanced.drop_link_dense or balanced.drop_asides or balanced.edge_chars)
    assert precision.drop_link_dense and precision.edge_chars
    assert as_favor("recall") is Favor.RECALL
    with pytest.raises(ConfigError, match="'most' is none of precision, balanced, recall"):
        as_favor("most")


def _story(i: int) -> str:
    """An article with a byline and a photo credit around its prose, and a link-dense line."""
    return (f"<article><h1>Harbour wall {i} finished</h1><p>By Reporter {i}</p>"
            f"<p>Workers finished harbour wall {i} on Friday after two months of work on the "
            "stones, the council said, and the fishermen paid for the crane themselves, as "
            "they did for the last wall forty years ago when the storm took the old one.</p>"
            f"<p>Pier {i} is next, in the spring, when the weather allows the divers to work "
            "under it for a few weeks and the boats can be moved to the other side.</p>"
            f"<p>Read more: <a href='/plans/{i}'>the council's plans for harbour {i}</a></p>"
            f"<p>Photo: Camera {i}</p></article>")


def _texts(body: str, model: ContentModel | None = None) -> dict[Favor, str]:
    marked = analyse(f"<html><body>{body}</body></html>",
                     structure=True).marked.decode("utf-8", "surrogatepass")
    return {favor: extract(marked, model, point=operating_point(favor)).text for favor in Favor}


def test_precision_leaves_the_edges_and_the_linked_line_out() -> None:
    texts = _texts(_story(1))
    lines = texts[Favor.BALANCED].split("\n")
    assert lines[1] == "By Reporter 1" and lines[-2:] == [
        "Read more: the council's plans for harbour 1", "Photo: Camera 1"]
    # The byline and the credit lie outside the prose and are short; the line is mostly link.
    # The headline stays: it is a heading.
    assert texts[Favor.PRECISION].split("\n") == [lines[0], *lines[2:-2]]
    assert texts[Favor.RECALL] == texts[Favor.BALANCED]


def _constant(probability: float) -> ContentModel:
    """A model that gives every block the same probability."""
    return ContentModel((0.0,) * len(FEATURE_NAMES), math.log(probability / (1 - probability)),
                        0.5)


def test_recall_keeps_what_balanced_finds_borderline() -> None:
    # Every block at 0.47: under balanced's bar (0.5), over recall's (0.45).
    texts = _texts(_story(1), _constant(0.47))
    assert texts[Favor.BALANCED] == texts[Favor.PRECISION] == ""
    assert texts[Favor.RECALL] == _texts(_story(1), _constant(0.52))[Favor.BALANCED]
    # On a page without prose the bars are 0.2 and 0.1.
    items = "".join(f"<li><a href='/p/{i}'>Product {i}</a> in stock</li>" for i in range(8))
    texts = _texts(f"<ul>{items}</ul>", _constant(0.15))
    assert texts[Favor.BALANCED] == ""
    assert texts[Favor.RECALL].split("\n") == [f"Product {i} in stock" for i in range(8)]


@pytest.fixture(scope="module")
def crawl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Six such articles on two sites."""
    root = tmp_path_factory.mktemp("favor-crawl")
    with open(root / "stories.warc.gz", "wb") as fh:
        writer = WarcWriter(fh, Codec.GZIP)
        for i in range(6):
            html = f"<html><body>{_story(i)}</body></html>".encode()
            writer.write("WARC/1.0", *warc_record(
                "response", f"http://site{i % 2}.test/story/{i}", http_response(html)))
    return root


@pytest.fixture(scope="module")
def runs(crawl: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[Favor, list[dict]]:
    """The crawl as JSONL (content mode) at each setting."""
    root = tmp_path_factory.mktemp("favor")
    for favor in Favor:
        clean([crawl], root / favor.value,
              Options(workers=1, format=OutputFormat.JSONL, favor=favor))
    return {favor: jsonl_pages(root / favor.value) for favor in Favor}


def test_a_run_writes_each_settings_text(runs) -> None:
    for favor, pages in runs.items():
        assert len(pages) == 6
        for page in pages:
            assert page["text"] == _texts(_story(int(page["url"].rsplit("/", 1)[1])))[favor]
    assert runs[Favor.PRECISION] != runs[Favor.BALANCED]


@pytest.mark.parametrize("args", [["-f", "warc"], ["-f", "jsonl", "--mode", "template"]],
                         ids=["warc", "template"])
def test_the_option_needs_content_mode_and_a_text_output(args: list[str],
                                                         tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["clean", str(CRAWL), "-o", str(tmp_path / "out"),
                                      "--favor", "precision", "-q", *args])
    assert result.exit_code == 2
    assert "Invalid value for --favor: chooses what content mode keeps" in result.output
    assert not (tmp_path / "out").exists()
    with pytest.raises(ConfigError, match="use --mode content"):
        Options(format=OutputFormat(args[1]), mode=Mode(args[3]) if len(args) > 2 else None,
                favor=Favor.RECALL)
    # Balanced is every mode's default: saying it is no error.
    Options(format=OutputFormat(args[1]), mode=Mode(args[3]) if len(args) > 2 else None,
            favor="balanced")


def test_an_unknown_setting_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["clean", str(CRAWL), "-o", str(tmp_path / "out"),
                                      "-f", "jsonl", "--favor", "most", "-q"])
    assert result.exit_code == 2
    message = " ".join(result.output.replace("│", " ").split())  # the box's line breaks gone
    assert "Invalid value for '--favor': 'most' is not one of 'precision', 'balanced', 'recall'" \
        in message


def test_apply_and_the_language_model_stage_clean_at_the_same_point(
        crawl: Path, runs, tmp_path: Path) -> None:
    from warcdeboil.lm.scoring import LmSettings

    want = {page["url"]: page["text"] for page in runs[Favor.PRECISION]}
    profiles = fitted_profiles(crawl, tmp_path)
    result = CliRunner().invoke(app, ["apply", str(crawl), "-o", str(tmp_path / "apply"),
                                      "--profiles", str(profiles), "-f", "jsonl",
                                      "--favor", "precision", "-q", "-j", "1"])
    assert result.exit_code == 0, result.output
    assert {p["url"]: p["text"] for p in jsonl_pages(tmp_path / "apply")} == want
    # --lm auto writes pass 2's text from the stage's cleaned pages: at the same point.
    clean([crawl], tmp_path / "lm", Options(workers=1, format=OutputFormat.JSONL,
                                            favor=Favor.PRECISION,
                                            lm=LmSettings("auto", True, None, None)))
    assert {p["url"]: p["text"] for p in jsonl_pages(tmp_path / "lm")} == want


def test_eval_scores_the_chosen_setting(crawl: Path, runs, tmp_path: Path) -> None:
    # Gold that is the precision run's text: perfect at that setting only.
    gold = tmp_path / "gold.jsonl"
    gold.write_text("".join(json.dumps({"url": page["url"], "gold": page["text"]}) + "\n"
                            for page in runs[Favor.PRECISION]), encoding="utf-8")

    def scores(*extra: str) -> dict[str, float]:
        result = CliRunner().invoke(app, ["eval", str(crawl), "--gold", str(gold), "--json",
                                          "-j", "1", *extra])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)["overall"]

    assert scores("--favor", "precision")["precision"] == 1.0
    balanced = scores()
    assert balanced["precision"] < 1.0 and balanced["recall"] == 1.0


def test_resume_refuses_outputs_made_at_another_point(tmp_path: Path) -> None:
    clean([CRAWL], tmp_path / "out", Options(workers=1, format=OutputFormat.JSONL))
    with pytest.raises(PlanError, match="favor"):
        clean([CRAWL], tmp_path / "out",
              Options(workers=1, format=OutputFormat.JSONL, favor=Favor.RECALL), resume=True)
    side = next((tmp_path / "out").glob(".*.options.json"))
    assert "favor" not in json.loads(side.read_text())["options"]  # balanced: not recorded
    clean([CRAWL], tmp_path / "recall",
          Options(workers=1, format=OutputFormat.JSONL, favor=Favor.RECALL))
    side = next((tmp_path / "recall").glob(".*.options.json"))
    assert json.loads(side.read_text())["options"]["favor"] == "recall"


def test_the_in_memory_api_takes_the_same_setting(crawl: Path, tmp_path: Path) -> None:
    from warcdeboil import Deboiler

    archive = crawl / "stories.warc.gz"
    clean([archive], tmp_path / "out", Options(workers=1, format=OutputFormat.MARKDOWN,
                                               dedup=DedupMode.OFF, favor=Favor.PRECISION))
    lines = jsonl_pages(tmp_path / "out")
    pages = Deboiler(mode=Mode.CONTENT, favor="precision").fit_transform(
        list(iter_records(archive)), warc_file=archive)
    assert len(pages) == len(lines) == 6
    assert [page.text for page in pages] == [line["text"] for line in lines]
    for page, line in zip(pages, lines, strict=True):
        assert {name: getattr(page, name) for name in line} == line
    with pytest.raises(ConfigError, match="favor"):
        Deboiler(favor=Favor.RECALL)
    with pytest.raises(ConfigError, match="none of"):
        Deboiler(mode=Mode.CONTENT, favor="most")
