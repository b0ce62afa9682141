"""The whole job on small archives: outputs valid, template gone, the rest untouched."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from conftest import outputs_of, synthetic_crawl, warcio_check
from typer.testing import CliRunner

from warcdeboil.cli import app
from warcdeboil.errors import ConfigError
from warcdeboil.output.formats import OutputFormat
from warcdeboil.output.provenance import SOURCE_FIELD
from warcdeboil.run.local import apply_profiles, build_index, clean, discover_inputs, fit_profiles
from warcdeboil.run.options import Options
from warcdeboil.site.clean import Mode
from warcdeboil.warc.compression import Codec
from warcdeboil.warc.reader import iter_records


@pytest.fixture(params=list(Codec), ids=lambda c: c.value)
def crawl(request, tmp_path: Path, write_archive) -> Path:
    codec: Codec = request.param
    src = tmp_path / "in"
    src.mkdir()
    records = synthetic_crawl()
    half = len(records) // 2
    write_archive(src / f"part-0.warc{codec.suffix}", records[:half], codec)
    write_archive(src / f"part-1.warc{codec.suffix}", records[half:], codec)
    return src


def run(src: Path, out: Path, **kwargs) -> None:
    clean([src], out, Options(workers=1, **kwargs))


def test_warc_output_is_valid_and_keeps_every_record(crawl: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    run(crawl, out)
    for source in sorted(crawl.iterdir()):
        target = out / source.name
        assert warcio_check(target)[0] == 0
        before = list(iter_records(source))
        info, *after = iter_records(target)
        assert info.rec_type == "warcinfo"
        # Cleaned records have new ids and name their source's.
        assert [r.get(SOURCE_FIELD) or r.record_id for r in after] == [
            r.record_id for r in before]


def test_records_that_are_not_pages_are_byte_identical(crawl: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    run(crawl, out)
    for source in sorted(crawl.iterdir()):
        pairs = zip(iter_records(source), list(iter_records(out / source.name))[1:], strict=True)
        for before, after in pairs:
            is_page = before.rec_type == "response" and b"text/html" in before.block[:200]
            if not is_page:
                assert after.to_bytes() == before.to_bytes()


def test_template_is_removed_and_articles_stay(crawl: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    run(crawl, out, format=OutputFormat.JSONL, mode=Mode.TEMPLATE)
    pages = [json.loads(line) for f in outputs_of(out) for line in _lines(f)]
    assert len(pages) == 11
    for page in pages:
        assert "Headline number" in page["text"]
        assert "Second paragraph of story" in page["text"]
        if page["site"] == "single.example":
            assert "All rights reserved" in page["text"]  # nothing to learn from one page
        else:
            assert "All rights reserved" not in page["text"]
            assert "Home" not in page["text"]


def _lines(path: Path) -> list[str]:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as fh:
        return fh.read().splitlines()


def test_the_summary_counts_what_was_written(crawl: Path, tmp_path: Path) -> None:
    # WARC output: the bytes of the cleaned documents; text outputs: the characters of the text.
    warc = clean([crawl], tmp_path / "warc", Options(workers=1)).to_dict()
    written = 0
    cleaned = 0
    for target in outputs_of(tmp_path / "warc"):
        for record in iter_records(target):
            head, _, body = record.block.partition(b"\r\n\r\n")
            if record.rec_type == "response" and b"charset=utf-8" in head:
                written += len(body)
                cleaned += 1
    assert cleaned == warc["pages"] and 0 < written == warc["html_bytes_after"]
    assert warc["html_bytes_after"] < warc["html_bytes_before"]
    jsonl = clean([crawl], tmp_path / "jsonl", Options(workers=1, format=OutputFormat.JSONL))
    summary = jsonl.to_dict()
    pages = [json.loads(line) for f in outputs_of(tmp_path / "jsonl")
             for line in _lines(f)]
    assert summary["text_chars"] == sum(len(page["text"]) for page in pages) > 0
    assert summary["html_bytes_before"] == warc["html_bytes_before"]
    assert summary["html_bytes_after"] == 0


def test_text_output_is_wet_style(crawl: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    run(crawl, out, format=OutputFormat.TEXT)
    for source in sorted(crawl.iterdir()):
        targets = list(out.glob(source.name.split(".")[0] + ".warc.wet*"))
        assert len(targets) == 1
        assert warcio_check(targets[0])[0] == 0
        records = list(iter_records(targets[0]))
        assert records[0].rec_type == "warcinfo"
        sources = {r.record_id: r for r in iter_records(source) if r.rec_type == "response"}
        for record in records[1:]:
            assert record.rec_type == "conversion"
            assert record.get("Content-Type") == "text/plain"
            refers = sources[record.get("WARC-Refers-To")]
            assert record.target_uri == refers.target_uri
            assert b"Headline number" in record.block


@pytest.mark.parametrize("fmt", list(OutputFormat))
def test_output_is_identical_whatever_the_workers(crawl: Path, tmp_path: Path, fmt) -> None:
    clean([crawl], tmp_path / "one", Options(workers=1, format=fmt))
    clean([crawl], tmp_path / "two", Options(workers=2, format=fmt))
    one = {p.name: p.read_bytes() for p in (tmp_path / "one").iterdir()}
    two = {p.name: p.read_bytes() for p in (tmp_path / "two").iterdir()}
    assert one == two  # the records of their options beside them too
    assert len(outputs_of(tmp_path / "one")) == 2


def test_tiny_sort_runs_give_the_same_output(crawl: Path, tmp_path: Path) -> None:
    clean([crawl], tmp_path / "big", Options(workers=1))
    clean([crawl], tmp_path / "tiny", Options(workers=1, run_bytes=1))
    for path in (tmp_path / "big").iterdir():
        assert path.read_bytes() == (tmp_path / "tiny" / path.name).read_bytes()


def test_stages_one_by_one_equal_clean(crawl: Path, tmp_path: Path) -> None:
    options = Options(workers=1)
    clean([crawl], tmp_path / "all", options)
    found = discover_inputs([crawl])
    build_index([p for p, _ in found], tmp_path / "work", options)
    fit_profiles(tmp_path / "work", tmp_path / "profiles", options)
    apply_profiles(found, tmp_path / "staged", tmp_path / "profiles", options)
    for path in (tmp_path / "all").iterdir():
        assert path.read_bytes() == (tmp_path / "staged" / path.name).read_bytes()


def test_profiles_apply_to_archives_not_in_the_fit(crawl: Path, tmp_path: Path) -> None:
    options = Options(workers=1, format=OutputFormat.JSONL)
    files = sorted(crawl.iterdir())
    build_index(files[:1], tmp_path / "work", options)
    fit_profiles(tmp_path / "work", tmp_path / "profiles", options)
    apply_profiles([(files[1], Path(files[1].name))], tmp_path / "out", tmp_path / "profiles",
                   options)
    (result,) = outputs_of(tmp_path / "out")
    pages = [json.loads(line) for line in _lines(result)]
    news = [page["text"] for page in pages if page["site"] == "news.example"]
    assert news
    assert all("All rights reserved" not in text for text in news)


@pytest.mark.parametrize("compress", list(Codec))
def test_compression_can_be_chosen(crawl: Path, tmp_path: Path, compress: Codec) -> None:
    clean([crawl], tmp_path / "out", Options(workers=1, compress=compress))
    for path in outputs_of(tmp_path / "out"):
        assert path.name.endswith(".warc" + compress.suffix)
        assert warcio_check(path)[0] == 0


def test_no_archives_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(ConfigError, match="no WARC or ARC files") as raised:
        clean([tmp_path], tmp_path / "out")
    assert str(raised.value).endswith(f" found in {tmp_path}")  # where it looked
    runner = CliRunner()
    (tmp_path / "empty").mkdir()
    done = runner.invoke(app, ["clean", str(tmp_path), str(tmp_path / "empty"), "-o",
                               str(tmp_path / "out")])
    assert done.exit_code == 1
    assert done.output.strip().endswith(f"found in {tmp_path}, {tmp_path / 'empty'}")


def test_outputs_are_written_atomically(crawl: Path, tmp_path: Path) -> None:
    run(crawl, tmp_path / "out")
    assert not [p for p in (tmp_path / "out").rglob("*") if p.name.endswith(".part")]


@pytest.mark.parametrize("workers", [1, 2])
def test_progress_reaches_the_caller(crawl: Path, tmp_path: Path, workers: int) -> None:
    seen: dict[str, list[int]] = {}

    def progress(stage: str, done: int, items: int, total: int, nbytes: int, size: int) -> None:
        counts = seen.setdefault(stage, [0, 0, total, 0, size])
        counts[0] += done
        counts[1] += items
        counts[3] += nbytes

    summary = clean([crawl], tmp_path / "out", Options(workers=workers), progress=progress)
    size = sum(p.stat().st_size for p in crawl.iterdir())
    assert seen["scan"] == [2, summary.scan.records, 2, size, size]
    assert seen["write"] == [2, summary.apply.records, 2, size, size]
    assert seen["fit"][0] == seen["fit"][2]
    assert seen["fit"][1] == summary.fit.sites == 3
    assert seen["fit"][3:] == [0, 0]  # the fit reads no archive


def test_one_big_input_reports_its_bytes_as_it_goes(tmp_path: Path) -> None:
    """Bytes move before the only input is done: what a bar needs for speed and time left."""
    from conftest import shared_file

    archive = shared_file("eval", "dragnet.warc.gz")
    size = archive.stat().st_size
    reports: list[tuple[str, int, int]] = []

    def progress(stage: str, done: int, items: int, total: int, nbytes: int, s: int) -> None:
        assert s == (0 if stage in ("fit", "dedup") else size)
        reports.append((stage, done, nbytes))

    clean([archive], tmp_path / "out", Options(workers=1, format=OutputFormat.JSONL),
          progress=progress)
    for stage in ("scan", "write"):
        mine = [(done, nbytes) for name, done, nbytes in reports if name == stage]
        before_done = [nbytes for done, nbytes in mine[:mine.index((1, 0))] if nbytes]
        assert len(before_done) >= 3, stage  # every 4 MiB or 256 records, not at the end only
        assert sum(nbytes for _, nbytes in mine) == size


def test_the_meter_reports_in_batches_and_never_passes_the_size() -> None:
    from warcdeboil.run.meter import EVERY_BYTES, EVERY_RECORDS, Meter

    sent: list[tuple[int, int]] = []
    meter = Meter(lambda records, nbytes: sent.append((records, nbytes)), 10 * EVERY_BYTES)
    for i in range(EVERY_RECORDS - 1):
        meter.record(i * 100, 100)
    assert sent == []  # neither enough records nor enough bytes yet
    meter.record(EVERY_RECORDS * 100, 100)
    assert sent == [(EVERY_RECORDS, (EVERY_RECORDS + 1) * 100)]
    meter.record(3 * EVERY_BYTES, EVERY_BYTES)  # a big record: reported at once
    meter.record(50 * EVERY_BYTES, 1)  # an offset past the size (a stream's): capped
    meter.finish()
    assert sum(records for records, _ in sent) == EVERY_RECORDS + 2
    assert sum(nbytes for _, nbytes in sent) == 10 * EVERY_BYTES
    assert all(nbytes >= 0 for _, nbytes in sent)
    chosen: list[tuple[int, int]] = []
    meter = Meter(lambda records, nbytes: chosen.append((records, nbytes)), 300, selected=True)
    meter.record(10_000, 100)
    meter.record(50_000, 200)
    meter.finish()
    assert chosen == [(2, 300)]  # chosen records: their lengths, wherever they lie


def test_zstd_output_with_a_dictionary_trained_on_the_input(crawl: Path, tmp_path: Path) -> None:
    from warcdeboil.warc.zstdio import read_dictionary

    plain = tmp_path / "plain"
    trained = tmp_path / "trained"
    clean([crawl], plain, Options(workers=1, compress=Codec.ZSTD))
    clean([crawl], trained, Options(workers=1, compress=Codec.ZSTD, zstd_dictionary=True))
    for path in outputs_of(trained):
        with open(path, "rb") as fh:
            assert read_dictionary(fh) is not None
        records = [r.to_bytes() for r in iter_records(path)]
        assert records == [r.to_bytes() for r in iter_records(plain / path.name)]
        assert warcio_check(path)[0] == 0


def test_site_key_domain_groups_subdomains(tmp_path: Path, write_archive) -> None:
    from conftest import http_response, site_pages, warc_record

    pages = site_pages("a.example.co.uk", 2) + site_pages("b.example.co.uk", 2)
    records = [warc_record("response", url, http_response(html.encode())) for url, html in pages]
    src = write_archive(tmp_path / "d.warc", records, Codec.NONE)
    by_host = clean([src], tmp_path / "host", Options(workers=1))
    from warcdeboil.site.sitekey import SiteKeyMode

    by_domain = clean([src], tmp_path / "domain",
                      Options(workers=1, site_key=SiteKeyMode.DOMAIN))
    assert (by_host.fit.sites, by_domain.fit.sites) == (2, 1)


_NUMPY_PROBE = """
import sys
from warcdeboil.run import local as pipeline
from warcdeboil.output.formats import OutputFormat
found = []
stage = pipeline.find_duplicates
def probed(*args, **kwargs):
    found.append("numpy" in sys.modules)
    return stage(*args, **kwargs)
pipeline.find_duplicates = probed
fmt = OutputFormat(sys.argv[3])
pipeline.clean([sys.argv[1]], sys.argv[2], pipeline.Options(workers=1, format=fmt))
print(found, "numpy" in sys.modules)
"""


@pytest.mark.parametrize(("fmt", "probed"), [("jsonl", "[True] True"), ("warc", "[] False")])
def test_numpy_is_loaded_before_the_stage_only_where_pass_2_loads_it(
    tmp_path: Path, fmt: str, probed: str
) -> None:
    # Content mode's pass 2 loads numpy: loaded before the duplicate stage's worker is forked,
    # the worker does not load it again. A WARC output (template mode) never loads it here.
    import subprocess
    import sys

    from conftest import FIXTURES

    done = subprocess.run(
        [sys.executable, "-c", _NUMPY_PROBE, str(FIXTURES / "crawl"), str(tmp_path / "out"), fmt],
        check=True, capture_output=True, text=True)
    assert done.stdout.strip() == probed
