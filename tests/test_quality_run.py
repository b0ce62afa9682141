"""The quality filters in runs: ``--quality-filters``, ``--quality-config``, ``--drop-flagged``,
``--excluded``; JSONL's ``quality_flags``, the summary's counts, every text format's drops."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest
from conftest import http_response, jsonl_pages, outputs_of, warc_record
from typer.testing import CliRunner

from warcdeboil.cli import app
from warcdeboil.corpus import QualityConfig, QualityFilters
from warcdeboil.corpus.gopher import GopherQuality
from warcdeboil.corpus.settings import QualitySettings
from warcdeboil.errors import ConfigError, PlanError
from warcdeboil.output.formats import OutputFormat
from warcdeboil.run.local import clean
from warcdeboil.run.options import Options
from warcdeboil.warc.compression import Codec
from warcdeboil.warc.reader import iter_records
from warcdeboil.warc.writer import WarcWriter

runner = CliRunner()
ALL = QualitySettings(("gopher_quality", "gopher_repetition", "c4_quality", "fineweb_quality"))

_STOP = ["the", "of", "and", "to", "with", "that", "have", "be", "in", "a"]
_SYLLABLES = ["ka", "lo", "mi", "ren", "tas", "vel", "dor", "pin", "sul", "gor", "mat", "ne",
              "bri", "cho", "fa", "les", "tur", "wen"]


def _prose(rng: random.Random, sentences: int) -> list[str]:
    """Sentences of made-up words and English stop words: text every filter keeps."""
    vocabulary = ["".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 3)))
                  for _ in range(400)]
    out = []
    for _ in range(sentences):
        words = [rng.choice(_STOP) if rng.random() < 0.3 else rng.choice(vocabulary)
                 for _ in range(rng.randint(10, 16))]
        out.append(" ".join(words).capitalize() + ".")
    return out


def _page(host: str, i: int, paragraphs: list[str]) -> tuple[str, str]:
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    html = (f"<!DOCTYPE html><html><head><title>Page {i}</title></head><body>"
            f"<header><div class='logo'>{host} daily</div><nav><ul><li><a href='/'>Home</a>"
            "</li><li><a href='/news'>News</a></li></ul></nav></header>"
            f"<article><h1>Headline number {i}</h1>{body}</article>"
            "<footer>Copyright the site, all rights kept.</footer></body></html>")
    return f"http://{host}/story/{i}", html


def quality_crawl(directory: Path, files: int = 2, pages: int = 8) -> Path:
    """Archives of one site whose pages are prose (kept), a line repeated (flagged by the
    repetition and FineWeb's filters), a few words (Gopher's quality filter), or "lorem ipsum"
    (C4's)."""
    directory.mkdir(parents=True, exist_ok=True)
    rng = random.Random(37)
    n = 0
    for f in range(files):
        records = [warc_record("warcinfo", "", b"software: tests\r\n",
                               content_type="application/warc-fields")]
        for _ in range(pages):
            kind = n % 4
            if kind == 0 or kind == 3 and n % 8 == 3:
                paragraphs = [" ".join(_prose(rng, 6)) for _ in range(3)]
            elif kind == 1:
                paragraphs = ["Buy the new model now and save."] * 12
            elif kind == 2:
                paragraphs = ["Short note here."]
            else:
                paragraphs = [" ".join(_prose(rng, 6)),
                              "Lorem ipsum dolor sit amet, with the usual filler text here."]
            url, html = _page("q.example", n, paragraphs)
            records.append(warc_record("response", url, http_response(html.encode())))
            n += 1
        with open(directory / f"q-{f}.warc.gz", "wb") as fh:
            writer = WarcWriter(fh, Codec.GZIP)
            for headers, block in records:
                writer.write("WARC/1.0", headers, block)
    return directory


@pytest.fixture
def crawl(tmp_path: Path) -> Path:
    return quality_crawl(tmp_path / "crawl")


def _jsonl(directory: Path) -> list[dict]:
    return jsonl_pages(directory)


def test_jsonl_flags_are_the_filters_flags_of_its_text(crawl: Path, tmp_path: Path) -> None:
    summary = clean([crawl], tmp_path / "out", Options(workers=2, format=OutputFormat.JSONL,
                                                       quality=ALL)).to_dict()
    pages = _jsonl(tmp_path / "out")
    assert len(pages) == 16
    filters = QualityFilters()
    for page in pages:
        assert list(page)[-1] == "quality_flags"
        assert page["quality_flags"] == filters.flags(page["text"], page["language"] or "")
    flagged = [p for p in pages if p["quality_flags"]]
    assert 0 < len(flagged) < len(pages)
    assert any(f.startswith("gopher_repetition:") for p in flagged for f in p["quality_flags"])
    assert any(f == "c4_quality:lorem_ipsum" for p in flagged for f in p["quality_flags"])
    quality = summary["quality"]
    assert quality["filters"] == list(ALL.names)
    assert quality["pages_flagged"] == len(flagged)
    assert quality["flags"] == dict(sorted(Counter(
        f for p in pages for f in p["quality_flags"]).items()))
    assert quality["pages_dropped"] == 0 and quality["dropped"] == {}


def test_without_the_option_nothing_changes(crawl: Path, tmp_path: Path) -> None:
    summary = clean([crawl], tmp_path / "out", Options(workers=1, format=OutputFormat.JSONL))
    assert summary.to_dict()["quality"] is None
    assert all("quality_flags" not in page for page in _jsonl(tmp_path / "out"))
    # The flags are one field more, and nothing else changes.
    clean([crawl], tmp_path / "flags", Options(workers=1, format=OutputFormat.JSONL,
                                               quality=ALL))
    flagged = _jsonl(tmp_path / "flags")
    assert [{k: v for k, v in p.items() if k != "quality_flags"} for p in flagged] == _jsonl(
        tmp_path / "out")


def test_drop_flagged_leaves_pages_out_and_lists_each(crawl: Path, tmp_path: Path) -> None:
    clean([crawl], tmp_path / "all", Options(workers=1, format=OutputFormat.JSONL, quality=ALL))
    every = _jsonl(tmp_path / "all")
    excluded = tmp_path / "excluded.jsonl"
    settings = QualitySettings(ALL.names, drop=True, excluded=str(excluded))
    summary = clean([crawl], tmp_path / "out", Options(workers=2, format=OutputFormat.JSONL,
                                                       quality=settings)).to_dict()
    kept = _jsonl(tmp_path / "out")
    assert kept == [p for p in every if not p["quality_flags"]]
    listed = [json.loads(line) for line in excluded.read_text(encoding="utf-8").splitlines()]
    assert listed == [{"url": p["url"], "record_id": p["record_id"], "warc_file": p["warc_file"],
                       "offset": p["offset"], "length": p["length"],
                       "quality_flags": p["quality_flags"]} for p in every if p["quality_flags"]]
    quality = summary["quality"]
    assert quality["pages_dropped"] == quality["pages_flagged"] == len(listed)
    assert quality["dropped"] == quality["flags"]
    assert quality["excluded"] == str(excluded)
    assert summary["pages"] == len(every)  # cleaned, then left out
    assert summary["text_chars"] == sum(len(p["text"]) for p in kept)
    # The records named are the pages' own.
    offsets = {(r.offset, r.record_id) for path in sorted(crawl.iterdir())
               for r in iter_records(path)}
    assert {(p["offset"], p["record_id"]) for p in listed} <= offsets


@pytest.mark.parametrize("fmt", [OutputFormat.TEXT, OutputFormat.MARKDOWN, OutputFormat.PARQUET],
                         ids=lambda f: f.value)
def test_every_text_format_drops_the_same_pages(crawl: Path, tmp_path: Path,
                                                fmt: OutputFormat) -> None:
    clean([crawl], tmp_path / "all", Options(workers=1, format=OutputFormat.JSONL, quality=ALL))
    kept_urls = [p["url"] for p in _jsonl(tmp_path / "all") if not p["quality_flags"]]
    settings = QualitySettings(ALL.names, drop=True)
    summary = clean([crawl], tmp_path / "out", Options(workers=1, format=fmt, quality=settings))
    if fmt is OutputFormat.TEXT:
        urls = [r.target_uri for path in outputs_of(tmp_path / "out")
                for r in iter_records(path) if r.rec_type == "conversion"]
    elif fmt is OutputFormat.PARQUET:
        pq = pytest.importorskip("pyarrow.parquet")
        rows = [row for path in outputs_of(tmp_path / "out", "*.parquet")
                for row in pq.read_table(path).to_pylist()]
        urls = [row["url"] for row in rows]
        assert all(row["quality_flags"] == [] for row in rows)
    else:
        urls = [p["url"] for p in _jsonl(tmp_path / "out")]
        assert all("markdown" in p for p in _jsonl(tmp_path / "out"))
    assert urls == kept_urls
    assert summary.to_dict()["quality"]["pages_dropped"] == 16 - len(kept_urls)


def test_warc_output_refuses_the_filters(crawl: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="WARC output is an archive, not a corpus"):
        Options(format=OutputFormat.WARC, quality=ALL)
    result = runner.invoke(app, ["clean", str(crawl), "-o", str(tmp_path / "o"),
                                 "--quality-filters", "all", "--drop-flagged"])
    assert result.exit_code == 2
    assert "WARC output is an archive" in result.output
    assert not (tmp_path / "o").exists()


def test_config_file_sets_parameters(crawl: Path, tmp_path: Path) -> None:
    config = tmp_path / "quality.toml"
    config.write_text("[gopher_quality]\nmin_words = 100000\n", encoding="utf-8")
    result = runner.invoke(app, ["clean", str(crawl), "-o", str(tmp_path / "o"), "-f", "jsonl",
                                 "-j", "1", "-q", "--quality-filters", "gopher_quality",
                                 "--quality-config", str(config), "--json"])
    assert result.exit_code == 0, result.output
    pages = _jsonl(tmp_path / "o")
    assert all("gopher_quality:few_words" in p["quality_flags"] for p in pages)
    assert all(f.startswith("gopher_quality:") for p in pages for f in p["quality_flags"])
    assert json.loads(result.stdout)["quality"]["flags"]["gopher_quality:few_words"] == 16


@pytest.mark.parametrize(("args", "message"), [
    (["--quality-filters", "gopher,c4_quality"], "unknown quality filter gopher"),
    (["--quality-filters", "all", "--quality-config", "BAD"],
     "unknown key gopher_quality.min_word"),
    (["--quality-filters", "all", "--quality-config", "NOPE"], "cannot read the quality config"),
    (["--drop-flagged"], "--drop-flagged needs --quality-filters"),
    (["--quality-filters", "all", "--excluded", "x.jsonl"], "give both"),
    (["--quality-filters", "all", "--drop-flagged", "--excluded", "no/such/dir/x.jsonl"],
     "no directory"),
], ids=["filter", "key", "file", "drop", "excluded", "excluded-dir"])
@pytest.mark.parametrize("command", ["clean", "apply"])
def test_bad_quality_options_are_usage_errors(crawl: Path, tmp_path: Path, args: list[str],
                                              message: str, command: str) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[gopher_quality]\nmin_word = 3\n", encoding="utf-8")
    args = [str(bad) if a == "BAD" else str(tmp_path / "nope.toml") if a == "NOPE"
            else str(tmp_path / a) if a.endswith(".jsonl") else a for a in args]
    extra = ["--profiles", str(tmp_path / "p")] if command == "apply" else []
    result = runner.invoke(app, [command, str(crawl), "-o", str(tmp_path / "o"), "-f", "jsonl",
                                 *extra, *args])
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.output.split())
    assert not (tmp_path / "o").exists()


def test_apply_takes_the_filters_as_clean_does(crawl: Path, tmp_path: Path) -> None:
    options = ["-f", "jsonl", "-j", "1", "-q", "--dedup", "off", "--quality-filters", "all",
               "--drop-flagged"]
    done = runner.invoke(app, ["clean", str(crawl), "-o", str(tmp_path / "clean"),
                               "--work-dir", str(tmp_path / "work"), *options,
                               "--excluded", str(tmp_path / "c.jsonl")])
    assert done.exit_code == 0, done.output
    done = runner.invoke(app, ["apply", str(crawl), "-o", str(tmp_path / "apply"), "--profiles",
                               str(tmp_path / "work" / "profiles"), *options,
                               "--excluded", str(tmp_path / "a.jsonl"), "--json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["quality"]["pages_dropped"] > 0
    for path in outputs_of(tmp_path / "clean"):
        assert (tmp_path / "apply" / path.name).read_bytes() == path.read_bytes()
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "c.jsonl").read_bytes()


def test_resume_refuses_outputs_flagged_otherwise(crawl: Path, tmp_path: Path) -> None:
    clean([crawl], tmp_path / "out", Options(workers=1, format=OutputFormat.JSONL, quality=ALL))
    other = QualitySettings(ALL.names, QualityConfig(gopher_quality=GopherQuality(min_words=10)))
    with pytest.raises(PlanError, match="quality-config"):
        clean([crawl], tmp_path / "out", Options(workers=1, format=OutputFormat.JSONL,
                                                 quality=other), resume=True)
    with pytest.raises(PlanError, match="quality-filters"):
        clean([crawl], tmp_path / "out", Options(workers=1, format=OutputFormat.JSONL),
                  resume=True)


def test_printed_summary_counts_per_filter_and_reason(crawl: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, ["clean", str(crawl), "-o", str(tmp_path / "o"), "-f", "jsonl",
                                 "-j", "1", "--quality-filters", "all", "--drop-flagged",
                                 "--excluded", str(tmp_path / "x.jsonl")])
    assert result.exit_code == 0, result.output
    lines = result.stderr.splitlines()
    flagged = next(line for line in lines if line.startswith("quality flags"))
    dropped = next(line for line in lines if line.startswith("quality drops"))
    count = len((tmp_path / "x.jsonl").read_text(encoding="utf-8").splitlines())
    assert f" {count}   pages flagged" in flagged
    assert f" {count}   pages left out" in dropped and str(tmp_path / "x.jsonl") in dropped
    assert any(line.split()[-1] == "c4_quality:lorem_ipsum" for line in lines)


def test_the_api_flags_pages_as_a_run_does(crawl: Path, tmp_path: Path) -> None:
    """``Deboiler(quality_filters=...)``: each page's ``quality_flags``, those of the JSONL of
    a run with the same mode (``--format markdown --dedup off``, as the API's other fields)."""
    from warcdeboil import Deboiler
    from warcdeboil.dedup.verdicts import DedupMode
    from warcdeboil.site.clean import Mode

    clean([crawl], tmp_path / "out", Options(workers=1, format=OutputFormat.MARKDOWN,
                                             dedup=DedupMode.OFF, quality=ALL))
    written = {p["url"]: p["quality_flags"] for p in _jsonl(tmp_path / "out")}
    records = [r for path in sorted(crawl.iterdir()) for r in iter_records(path)]
    deboiler = Deboiler(mode=Mode.CONTENT, quality_filters=QualityFilters())
    pages = deboiler.fit_transform(records)
    assert {page.url: page.quality_flags for page in pages} == written
    assert Deboiler().fit_transform(records)[0].quality_flags is None


def test_the_filters_judge_the_text_after_the_language_model(crawl: Path, tmp_path: Path) -> None:
    """With --lm's line and page filters, the flags are those of the text written (lines
    above --max-line-perplexity gone), and pages the page filter drops are not judged."""
    from warcdeboil.lm import LanguageModel
    from warcdeboil.lm.scoring import LmSettings

    clean([crawl], tmp_path / "plain", Options(workers=1, format=OutputFormat.JSONL))
    texts = [p["text"] for p in _jsonl(tmp_path / "plain")]
    model = tmp_path / "model.npz"
    LanguageModel.train(texts[::2]).save(model)
    options = Options(workers=1, format=OutputFormat.JSONL, quality=ALL,
                      lm=LmSettings(str(model), max_line=300.0, max_page=200.0))
    summary = clean([crawl], tmp_path / "out", options).to_dict()
    pages = _jsonl(tmp_path / "out")
    assert summary["lines_dropped_perplexity"] > 0 and summary["pages_dropped_perplexity"] > 0
    filters = QualityFilters()
    for page in pages:
        assert page["quality_flags"] == filters.flags(page["text"], page["language"] or "")
    assert summary["quality"]["pages_flagged"] == sum(bool(p["quality_flags"]) for p in pages)
    assert summary["pages"] == len(pages) + summary["pages_dropped_perplexity"]


@pytest.mark.parametrize("redact", [False, True], ids=["filters", "filters-and-pii"])
def test_the_filters_read_the_language_by_the_runs_model(tmp_path: Path, write_archive,
                                                         redact: bool) -> None:
    """With --language-model, the language the filters (and PII redaction) find for a page is
    the given model's, as JSONL's ``language`` without them."""
    from test_language import KLINGON, _tiny_model

    model = str(_tiny_model(tmp_path))
    records = [warc_record("response", f"https://a.example/tlh/{i}", http_response(
        f"<html><body><p>{KLINGON}</p><p>someone{i}@example.org</p></body></html>"
        .encode())) for i in range(3)]
    src = write_archive(tmp_path / "in.warc.gz", records, Codec.GZIP)
    clean([src], tmp_path / "out", Options(workers=1, format=OutputFormat.JSONL, quality=ALL,
                                           language_model=model, redact_pii=redact))
    assert [p["language"] for p in jsonl_pages(tmp_path / "out")] == ["tlh"] * 3
