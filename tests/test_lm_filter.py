"""--lm on clean and apply: perplexity in JSONL, and the line and page filters of text outputs."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from conftest import jsonl_pages, lines_kept, shared_file
from typer.testing import CliRunner

from warcdeboil.cli import app
from warcdeboil.lm import LanguageModel
from warcdeboil.warc.reader import iter_records

runner = CliRunner()


@pytest.fixture(scope="module")
def model_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A model of dragnet's gold text (another dataset than the archive cleaned below)."""
    texts = []
    with gzip.open(shared_file("eval", "dragnet.gold.jsonl.gz"), "rt", encoding="utf-8") as fh:
        for line in fh:
            texts.append(json.loads(line)["gold"])
    path = tmp_path_factory.mktemp("lm") / "dragnet.lm.npz"
    LanguageModel.train(texts[:300]).save(path)
    return path


@pytest.fixture(scope="module")
def archive() -> Path:
    return shared_file("eval", "cleanportaleval.warc.gz")


def _clean(archive: Path, out: Path, *options: str) -> dict:
    result = runner.invoke(app, ["clean", str(archive), "-o", str(out), "-j", "1", "--json",
                                 "-q", *options])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _spoken(line: str) -> bool:
    return bool(line.strip())


def test_jsonl_perplexity_is_the_models_score_of_the_text(
    model_path: Path, archive: Path, tmp_path: Path
) -> None:
    _clean(archive, tmp_path / "out", "-f", "markdown", "--lm", str(model_path),
           "--line-perplexity")
    model = LanguageModel.load(model_path)
    pages = jsonl_pages(tmp_path / "out")
    assert len(pages) == 71
    scored = 0
    for page in pages:
        text = page["text"]
        lines = text.split("\n")
        assert len(page["line_perplexities"]) == len(lines)
        if not any(map(_spoken, lines)):
            assert page["perplexity"] is None
            continue
        scored += 1
        assert page["perplexity"] == pytest.approx(model.perplexity(text), rel=1e-9)
        expected = model.line_perplexities(lines)
        for line, got, want in zip(lines, page["line_perplexities"], expected, strict=True):
            assert got == (pytest.approx(want, rel=1e-9) if _spoken(line) else None)
    assert scored > 60
    # Without --lm the field is there, null.
    _clean(archive, tmp_path / "plain", "-f", "jsonl")
    plain = jsonl_pages(tmp_path / "plain")
    assert [p["perplexity"] for p in plain] == [None] * 71
    assert "line_perplexities" not in plain[0]
    assert [p["text"] for p in plain] == [p["text"] for p in pages]


def _conversions(out: Path) -> dict[str, str]:
    (path,) = out.glob("*.gz")
    return {r.get("WARC-Target-URI") or "": r.block.decode("utf-8")
            for r in iter_records(path) if r.rec_type == "conversion"}


def test_filters_drop_exactly_what_is_above_the_limits(
    model_path: Path, archive: Path, tmp_path: Path
) -> None:
    model = LanguageModel.load(model_path)
    whole = _jsonl_of(archive, tmp_path / "whole", model_path)
    scores = sorted(s for p in whole for s in p["line_perplexities"] if s is not None)
    max_line = scores[len(scores) * 3 // 4]  # a quarter of the lines go
    # What the filters should leave, worked out here from the unfiltered text.
    expected_text, dropped_lines = lines_kept(whole, "line_perplexities", max_line)
    page_scores = sorted(model.perplexity(t) for t in expected_text.values() if t.strip())
    max_page = page_scores[len(page_scores) * 2 // 3]
    expected_pages = {url for url, t in expected_text.items()
                      if not t.strip() or model.perplexity(t) <= max_page}
    markdown = {page["url"]: page["markdown"] for page in whole}
    whole_text = {page["url"]: page["text"] for page in whole}
    assert dropped_lines > 0 and 0 < len(expected_pages) < len(whole)

    limits = ["--max-line-perplexity", str(max_line), "--max-page-perplexity", str(max_page)]
    summary = _clean(archive, tmp_path / "md", "-f", "markdown", "--lm", str(model_path),
                     *limits)
    pages = jsonl_pages(tmp_path / "md")
    assert {p["url"] for p in pages} == expected_pages
    for page in pages:
        assert page["text"] == expected_text[page["url"]]
        assert page["perplexity"] is None or page["perplexity"] <= max_page
        # The Markdown loses the blocks of the dropped lines, and nothing else.
        before = markdown[page["url"]]
        if page["text"] == whole_text[page["url"]]:
            assert page["markdown"] == before
        else:
            assert len(page["markdown"]) < len(before)
            rest = iter(before.split("\n"))
            assert all(line in rest for line in page["markdown"].split("\n"))
    assert summary["pages"] == 71  # every page cleaned; some not written
    assert summary["pages_dropped_perplexity"] == len(whole) - len(expected_pages)
    kept_drops = sum(len(w["text"].split("\n")) - len(expected_text[w["url"]].split("\n"))
                     for w in whole if w["url"] in expected_pages)
    assert sum(p["removed"].get("perplexity_lines", 0) for p in pages) == kept_drops
    assert summary["lines_dropped_perplexity"] == dropped_lines

    # WET-style text output: the same pages, the same text.
    text_summary = _clean(archive, tmp_path / "wet", "-f", "text", "--lm", str(model_path),
                          *limits)
    conversions = _conversions(tmp_path / "wet")
    (wet,) = (tmp_path / "wet").glob("*.gz")
    info = next(iter_records(wet)).block.decode()
    assert f"max-line-perplexity: {max_line!r}\r\n" in info
    assert "language-model: dragnet.lm.npz\r\n" in info
    assert conversions == {url: expected_text[url] for url in expected_pages}
    assert text_summary["lines_dropped_perplexity"] == dropped_lines
    assert text_summary["pages_dropped_perplexity"] == len(whole) - len(expected_pages)


def _jsonl_of(archive: Path, out: Path, model_path: Path) -> list[dict]:
    _clean(archive, out, "-f", "markdown", "--lm", str(model_path), "--line-perplexity")
    return jsonl_pages(out)


def test_apply_takes_the_model_too(model_path: Path, archive: Path, tmp_path: Path) -> None:
    work, profiles = tmp_path / "work", tmp_path / "profiles"
    assert runner.invoke(app, ["index", str(archive), "--work-dir", str(work), "-q"]).exit_code == 0
    assert runner.invoke(app, ["fit", "--work-dir", str(work), "--profiles", str(profiles),
                               "-q"]).exit_code == 0
    result = runner.invoke(app, ["apply", str(archive), "-o", str(tmp_path / "out"),
                                 "--profiles", str(profiles), "-f", "jsonl", "-q", "--json",
                                 "--lm", str(model_path), "--max-page-perplexity", "1"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    written = jsonl_pages(tmp_path / "out")
    assert all(p["perplexity"] is None for p in written)  # every scored page is above 1
    assert summary["pages_dropped_perplexity"] == 71 - len(written) > 60


@pytest.mark.parametrize("content", [None, b"PK\x03\x04 not a zip", b"\x00\x01garbage"])
def test_a_missing_or_damaged_model_is_one_line_before_any_record(
    archive: Path, tmp_path: Path, content: bytes | None
) -> None:
    model = tmp_path / "model.npz"
    if content is not None:
        model.write_bytes(content)
    out = tmp_path / "out"
    result = runner.invoke(app, ["clean", str(archive), "-o", str(out), "-f", "jsonl",
                                 "--lm", str(model)])
    assert result.exit_code in (1, 2)
    assert result.stderr.strip().count("\n") == 0
    assert "model.npz" in result.stderr and "Traceback" not in result.output
    assert not out.exists()


@pytest.mark.parametrize("options", [
    ["--max-line-perplexity", "100"],
    ["--max-page-perplexity", "100"],
    ["--line-perplexity"],
    ["-f", "warc", "--lm", "MODEL"],
    ["-f", "warc", "--lm", "MODEL", "--max-line-perplexity", "100"],
    ["-f", "text", "--lm", "MODEL", "--line-perplexity"],
    ["-f", "jsonl", "--lm", "MODEL", "--max-line-perplexity", "-1"],
])
def test_usage_errors(model_path: Path, archive: Path, tmp_path: Path,
                      options: list[str]) -> None:
    options = [str(model_path) if o == "MODEL" else o for o in options]
    for command in (["clean", str(archive)],
                    ["apply", str(archive), "--profiles", str(tmp_path / "profiles")]):
        result = runner.invoke(app, [*command, "-o", str(tmp_path / "out"), *options])
        assert result.exit_code == 2, (command, result.output)
        assert not (tmp_path / "out").exists()


def test_api_pages_carry_the_jsonl_perplexity(
    model_path: Path, archive: Path, tmp_path: Path
) -> None:
    from test_api import _pages

    from warcdeboil import Deboiler
    from warcdeboil.site.clean import Mode

    _clean(archive, tmp_path / "out", "-f", "jsonl", "--lm", str(model_path))
    lines = jsonl_pages(tmp_path / "out")
    model = LanguageModel.load(model_path)
    pages = Deboiler(mode=Mode.CONTENT, language_model=model).fit_transform(_pages([archive]))
    assert [p.url for p in pages] == [line["url"] for line in lines]
    assert [p.perplexity for p in pages] == [line["perplexity"] for line in lines]
    assert sum(p.perplexity is not None for p in pages) > 60
    assert Deboiler(mode=Mode.CONTENT).fit_transform(_pages([archive]))[0].perplexity is None


def test_a_model_url_is_read_through_fsspec(model_path: Path) -> None:
    """What Spark executors do with --lm s3://…: the model copied from the URL, then loaded."""
    fsspec = pytest.importorskip("fsspec")
    from warcdeboil.errors import InputError
    from warcdeboil.lm.scoring import check_model, load_model

    url = "memory://lm-test/dragnet.lm.npz"
    with fsspec.open(url, "wb") as fh:
        fh.write(model_path.read_bytes())
    try:
        check_model(url)
        text = "The minister said on Tuesday that the talks would go on."
        assert load_model(url).perplexity(text) == LanguageModel.load(model_path).perplexity(text)
        with pytest.raises(InputError, match="missing.npz"):
            load_model("memory://lm-test/missing.npz")
    finally:
        fsspec.filesystem("memory").rm("/lm-test", recursive=True)
