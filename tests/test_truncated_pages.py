"""A page whose record is incomplete is written in every text output, marked truncated: cut short
by the end of the file (and counted as the problem it is), or marked ``WARC-Truncated`` by the
crawler; pass 1's page store and a second read of the records give the same lines."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from conftest import SHARED, incomplete_archives, outputs_of, site_pages

from warcdeboil.dedup.verdicts import DedupMode
from warcdeboil.output.formats import OutputFormat
from warcdeboil.run.local import apply_profiles, clean, discover_inputs
from warcdeboil.run.options import Options
from warcdeboil.warc.reader import iter_records
from warcdeboil.warc.writer import valid_uri

TEXT_FORMATS = [OutputFormat.JSONL, OutputFormat.MARKDOWN, OutputFormat.TEXT]
CUT = "record is truncated"
PROBLEMS = {"overshoot.warc": CUT, "clipped.warc.gz": CUT, "marked.warc": None}


def _lines(out: Path) -> list[dict]:
    return [json.loads(line) for path in outputs_of(out, "**/*.jsonl*")
            for line in gzip.decompress(path.read_bytes()).splitlines()]


def _conversions(out: Path) -> list:
    return [r for path in outputs_of(out, "**/*.wet*") for r in iter_records(path)
            if r.rec_type == "conversion"]


@pytest.fixture(params=sorted(PROBLEMS))
def archive(request, tmp_path: Path) -> tuple[Path, str, str | None]:
    """One of the incomplete archives, alone in its directory: (path, URL of the page whose
    record is incomplete, the problem it is counted as)."""
    urls = incomplete_archives(tmp_path / "all")
    src = tmp_path / "in" / request.param
    src.parent.mkdir()
    (tmp_path / "all" / request.param).rename(src)
    return src, urls[request.param], PROBLEMS[request.param]


@pytest.mark.parametrize("fmt", TEXT_FORMATS, ids=lambda f: f.value)
def test_the_page_of_an_incomplete_record_is_written_marked(
    tmp_path: Path, archive: tuple[Path, str, str | None], fmt: OutputFormat,
) -> None:
    src, url, problem = archive
    summary = clean([src.parent], tmp_path / "out", Options(workers=1, format=fmt))
    data = summary.to_dict()
    assert data["pages"] == 3
    if problem is None:
        assert data["problems"] == {}
    else:  # still the problem it is
        assert list(data["problems"]) in ([problem], [f"gzip member is truncated: {problem}"])
    if fmt is OutputFormat.TEXT:
        written = {r.target_uri: r.get("WARC-Truncated") for r in _conversions(tmp_path / "out")}
        assert written == {u: ("length" if u == url else None)
                           for u, _ in site_pages("cut.example", 3)}
    else:
        lines = _lines(tmp_path / "out")
        assert {line["url"]: line["truncated"] for line in lines} == {
            u: u == url for u, _ in site_pages("cut.example", 3)}
        (cut,) = [line for line in lines if line["url"] == url]
        assert "Headline number 2" in cut["text"]  # what the bytes there are hold


@pytest.mark.parametrize("fmt", TEXT_FORMATS, ids=lambda f: f.value)
def test_page_store_and_records_read_again_give_the_same_lines(
    tmp_path: Path, archive: tuple[Path, str, str | None], fmt: OutputFormat,
) -> None:
    """``clean`` writes text outputs from pass 1's page store; ``apply`` (and the Spark engine's
    pass 2) read the records again: the same bytes."""
    src, url, _ = archive
    options = Options(workers=1, format=fmt, dedup=DedupMode.OFF)
    clean([src.parent], tmp_path / "clean", options, work_dir=tmp_path / "work")
    apply_profiles(discover_inputs([src.parent]), tmp_path / "apply",
                   tmp_path / "work" / "profiles", options)
    clean_files = {p.name: p.read_bytes() for p in outputs_of(tmp_path / "clean")}
    applied = {p.name: p.read_bytes() for p in outputs_of(tmp_path / "apply")}
    assert applied == clean_files
    (written,) = applied.values()
    if written.startswith(b"\x1f\x8b"):
        written = gzip.decompress(written)
    assert url.encode() in written


def test_warc_output_keeps_the_record_as_it_survives(tmp_path: Path) -> None:
    """WARC output is unchanged: the cut record is carried, repaired and marked, not cleaned."""
    src = tmp_path / "in"
    incomplete_archives(src)
    for name in ("overshoot.warc", "marked.warc"):
        (src / name).unlink()
    summary = clean([src], tmp_path / "out", Options(workers=1))
    assert (summary.to_dict()["pages"], summary.to_dict()["carried"]) == (2, 1)
    last = list(iter_records(tmp_path / "out" / "clipped.warc.gz"))[-1]
    assert last.get("WARC-Truncated") == "length" and not last.get("WARC-Source-Record-ID")


@pytest.mark.skipif(not (SHARED / "warcs").is_dir(), reason="needs ../shared/warcs")
@pytest.mark.parametrize(("name", "url"), [
    ("chatnoir-eu__chatnoir-resiliparse__clipped.warc.gz",
     "http://www.houstonpress.com/music/"
     "a-humble-chance-the-rapper-leads-a-spiritual-awakening-at-revention-8866723"),
    ("webrecorder__warcio__example-space-in-url.arc",
     "http://example.com/index.cfm?FuseAction=Email&EmailTitle=Examples From The Live Web"
     "&IsPopUp=False"),
])
def test_real_archives_cut_short_keep_their_page(tmp_path: Path, name: str, url: str) -> None:
    src = tmp_path / "in" / name
    src.parent.mkdir()
    src.symlink_to(SHARED / "warcs" / name)
    clean([src.parent], tmp_path / "jsonl", Options(workers=1, format=OutputFormat.JSONL))
    (line,) = _lines(tmp_path / "jsonl")
    assert (line["url"], line["truncated"]) == (url, True)
    assert line["text"]
    summary = clean([src.parent], tmp_path / "text", Options(workers=1, format=OutputFormat.TEXT))
    (record,) = _conversions(tmp_path / "text")
    # A WET record's URI is written valid (percent-encoded), the page's own beside it.
    assert (record.target_uri, record.get("WARC-Truncated")) == (valid_uri(url), "length")
    assert record.get("WARC-Source-Target-URI") == (url if valid_uri(url) != url else None)
    assert sum(summary.problems.values()) == 1
