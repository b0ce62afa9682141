"""The Spark engine on a local[2] master: the local engine's outputs, byte for byte."""

from __future__ import annotations

import contextlib
import gzip
import importlib
import json
import pickle
import random
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import (
    FIXTURES,
    declare_length,
    http_response,
    incomplete_archives,
    jsonl_pages,
    outputs_of,
    pack,
    pages_crawl,
    pywb_bad_arc,
    shared_file,
    synthetic_crawl,
    warc_record,
)

from warcdeboil.errors import JobError
from warcdeboil.output.formats import OutputFormat
from warcdeboil.run.local import clean
from warcdeboil.run.options import Options
from warcdeboil.run.summary import RunSummary
from warcdeboil.spark import entrypoint, run_spark
from warcdeboil.warc.compression import Codec
from warcdeboil.warc.reader import iter_records
from warcdeboil.warc.writer import serialise

pytestmark = pytest.mark.spark

FORMATS = [OutputFormat.WARC, OutputFormat.TEXT, OutputFormat.JSONL]
WITH_PARQUET = [*FORMATS, OutputFormat.PARQUET]  # pyarrow: the spark extra's


def _files(directory: Path) -> dict[str, bytes]:
    """Every file under ``directory``: the outputs and the records of their options beside them."""
    return {
        p.relative_to(directory).as_posix(): p.read_bytes()
        for p in sorted(directory.rglob("*")) if p.is_file()
    }


def _counts(summary: RunSummary) -> dict:
    """The summary without the paths (which name each run's own directories)."""
    data = summary.to_dict()
    data.pop("outputs")
    data["files"] = [{k: v for k, v in f.items() if k not in ("path", "output")}
                     for f in data["files"]]
    return data


def _both(spark, src: Path, tmp_path: Path, options: Options) -> tuple[Path, Path]:
    local, distributed = tmp_path / "local", tmp_path / "spark"
    expected = clean([src], local, options)
    summary = run_spark([str(src)], str(distributed), options, session=spark)
    assert _counts(summary) == _counts(expected)
    assert summary.outputs == sorted(
        str(distributed / p.relative_to(local)) for p in outputs_of(local, "**/*"))
    return local, distributed


def _assert_same_outputs(local: Path, distributed: Path) -> None:
    expected = _files(local)
    assert expected, "the local run wrote nothing"
    assert _files(distributed) == expected


@pytest.mark.parametrize("fmt", WITH_PARQUET, ids=lambda f: f.value)
def test_fixture_crawl_equals_the_local_run(spark, tmp_path: Path, fmt: OutputFormat) -> None:
    local, distributed = _both(spark, FIXTURES / "crawl", tmp_path,
                               Options(workers=1, format=fmt))
    _assert_same_outputs(local, distributed)


@pytest.fixture
def codecs_apart(tmp_path: Path) -> Path:
    """The codec fixtures, one directory each (their JSONL outputs would share a name)."""
    src = tmp_path / "codecs"
    for path in sorted((FIXTURES / "codecs").iterdir()):
        (src / path.name.replace(".", "-")).mkdir(parents=True)
        shutil.copy(path, src / path.name.replace(".", "-") / path.name)
    return src


@pytest.mark.parametrize("fmt", WITH_PARQUET, ids=lambda f: f.value)
def test_every_codec_equals_the_local_run(
    spark, codecs_apart: Path, tmp_path: Path, fmt: OutputFormat
) -> None:
    local, distributed = _both(spark, codecs_apart, tmp_path, Options(workers=1, format=fmt))
    _assert_same_outputs(local, distributed)
    assert len(outputs_of(distributed, "**/*")) == 4


@pytest.mark.parametrize("fmt", [OutputFormat.WARC, OutputFormat.JSONL], ids=lambda f: f.value)
def test_inputs_of_one_stem_get_the_local_engines_names(
    spark, tmp_path: Path, fmt: OutputFormat
) -> None:
    """sample.warc, .warc.gz and .warc.zst side by side (JSONL names once met), and a link to one
    of them (read once): both engines plan the same four outputs."""
    src = tmp_path / "codecs"
    shutil.copytree(FIXTURES / "codecs", src)
    (src / "link.warc.gz").symlink_to(src / "sample.warc.gz")
    local, distributed = _both(spark, src, tmp_path, Options(workers=1, format=fmt))
    _assert_same_outputs(local, distributed)
    assert len(outputs_of(distributed, "**/*")) == 4


def test_an_output_directory_holding_an_input_is_refused(spark, tmp_path: Path) -> None:
    from warcdeboil.errors import PlanError

    src = tmp_path / "in"
    shutil.copytree(FIXTURES / "crawl", src)
    with pytest.raises(PlanError, match="the output directory is or holds the input"):
        run_spark([str(src)], str(src), Options(), session=spark)
    assert sorted(p.name for p in src.iterdir()) == ["crawl-00000.warc.gz", "crawl-00001.warc.gz"]
    summary = run_spark([str(src)], str(src / "out"), Options(), session=spark)
    assert summary.inputs == 2  # the output inside the input is not searched
    again = run_spark([str(src)], str(src / "out"), Options(), session=spark)
    assert again.inputs == 2 and again.to_dict()["pages"] == summary.to_dict()["pages"]


def _records(path: Path) -> list[bytes]:
    if path.name.endswith((".jsonl.gz", ".jsonl")):
        opener = gzip.open if path.name.endswith(".gz") else open
        with opener(path, "rb") as fh:
            return fh.read().splitlines()
    return [record.to_bytes() for record in iter_records(path)]


@pytest.mark.slow
@pytest.mark.parametrize("dataset", ["cleanportaleval", "l3s-gn1"])
@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.value)
def test_eval_archives_equal_the_local_run(
    spark, tmp_path: Path, dataset: str, fmt: OutputFormat
) -> None:
    src = tmp_path / "in"
    src.mkdir()
    shutil.copy(shared_file("eval", f"{dataset}.warc.gz"), src)
    local, distributed = _both(spark, src, tmp_path, Options(workers=2, format=fmt))
    (name,) = [p.name for p in outputs_of(local)]
    # Record for record (decompressed), then byte for byte.
    assert _records(distributed / name) == _records(local / name)
    assert len(_records(local / name)) > 70
    _assert_same_outputs(local, distributed)


def test_urls_through_fsspec_read_and_write_like_paths(spark, tmp_path: Path) -> None:
    """``local://`` goes through fsspec (listing, range reads, upload then move), as s3:// does."""
    pytest.importorskip("fsspec")
    options = Options(workers=1, format=OutputFormat.TEXT, compress=Codec.ZSTD)
    clean([FIXTURES / "crawl"], tmp_path / "local", options)
    summary = run_spark([f"local://{FIXTURES / 'crawl'}"], f"local://{tmp_path / 'remote'}",
                        options, session=spark)
    _assert_same_outputs(tmp_path / "local", tmp_path / "remote")
    assert summary.outputs == [f"local://{tmp_path / 'remote'}/crawl-0000{i}.warc.gz.warc.wet.zst"
                               for i in range(2)]
    # No temporary part left behind; the records of the options beside the outputs, uploaded.
    assert sorted(p.name for p in (tmp_path / "remote").glob(".*")) == [
        f".crawl-0000{i}.warc.gz.warc.wet.zst.options.json" for i in range(2)]


def test_a_bad_input_is_one_problem_and_the_run_goes_on(spark, tmp_path: Path,
                                                        write_archive) -> None:
    src = tmp_path / "in"
    src.mkdir()
    write_archive(src / "good.warc.gz", synthetic_crawl(), Codec.GZIP)
    (src / "junk.warc.gz").write_bytes(b"this is not an archive at all\n" * 10)
    truncated = write_archive(src / "short.warc", synthetic_crawl(), Codec.NONE)
    truncated.write_bytes(truncated.read_bytes()[:-500])
    options = Options(workers=1, format=OutputFormat.WARC)
    local, distributed = _both(spark, src, tmp_path, options)
    _assert_same_outputs(local, distributed)
    summary = run_spark([str(src)], str(tmp_path / "again"), options, session=spark)
    assert sum(summary.problems.values()) >= 2
    assert (tmp_path / "again" / "good.warc.gz").exists()


def test_on_error_fail_stops_the_job_with_one_line(spark, tmp_path: Path, write_archive) -> None:
    src = write_archive(tmp_path / "short.warc", synthetic_crawl(), Codec.NONE)
    src.write_bytes(src.read_bytes()[:-500])
    with pytest.raises(JobError) as failed:
        run_spark([str(src)], str(tmp_path / "out"), Options(fail_fast=True), session=spark)
    message = str(failed.value)
    assert "\n" not in message
    assert "RecordError" in message and "truncated" in message
    assert not (tmp_path / "out" / "short.warc").exists()


def test_progress_and_summary_come_back_to_the_driver(spark, tmp_path: Path) -> None:
    seen: dict[str, list[int]] = {}

    def progress(stage: str, done: int, items: int, total: int, nbytes: int, size: int) -> None:
        counts = seen.setdefault(stage, [0, 0, total, 0, size])
        counts[0] += done
        counts[1] += items
        counts[3] += nbytes

    summary = run_spark([str(FIXTURES / "crawl")], str(tmp_path / "out"),
                        Options(format=OutputFormat.WARC), session=spark, progress=progress)
    size = sum(p.stat().st_size for p in (FIXTURES / "crawl").iterdir())
    assert seen["scan"] == [2, summary.scan.records, 2, size, size]
    assert seen["write"] == [2, summary.apply.records, 2, size, size]
    assert seen["fit"][0] == seen["fit"][2] == 4  # the session's shuffle partitions
    assert summary.fit.sites == 5 and summary.fit.sites_fitted == 4
    assert [t.records for t in summary.scan_files] == [27, 29]  # the two fixture files


def test_entrypoint_is_a_driver_script() -> None:
    done = subprocess.run([sys.executable, "-m", "warcdeboil.spark", "--entrypoint"],
                          capture_output=True, text=True, timeout=60, check=True)
    path = Path(done.stdout.strip())
    assert path == entrypoint() and path.is_file()
    assert "warcdeboil.cli" in path.read_text(encoding="utf-8")


def test_command_line_runs_the_job_on_a_local_master(tmp_path: Path) -> None:
    local = tmp_path / "local"
    expected = clean([FIXTURES / "crawl"], local, Options(workers=1, format=OutputFormat.JSONL))
    done = subprocess.run(
        [sys.executable, "-m", "warcdeboil", "clean", f"file://{FIXTURES / 'crawl'}",
         "-o", str(tmp_path / "spark"), "--format", "jsonl", "--engine", "spark",
         "--spark-master", "local[2]", "--spark-conf", "spark.ui.enabled=false", "--json", "-q"],
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["pages"] == expected.to_dict()["pages"] == 25
    assert summary["sites"] == 5
    _assert_same_outputs(local, tmp_path / "spark")


def test_index_dataframe_groups_sites_in_the_local_order(spark) -> None:
    """Pass 1's DataFrame, shuffled as the fit reads it: every site in one partition, its pages
    in the order of the local engine's sorted index (site, URL key, file, offset)."""
    from warcdeboil.run.scan import ScanSpec, scan_pages
    from warcdeboil.site.index import decode_entry, sort_key
    from warcdeboil.spark.engine import by_site_in_order, index_frame
    from warcdeboil.spark.tasks import INDEX_COLUMNS, InputFile, TaskSettings, is_entry, scan_task
    from warcdeboil.warc.remote import discover
    from warcdeboil.warc.tally import Tally

    options = Options(workers=1)
    files = [InputFile(i, loc, rel) for i, (loc, rel) in enumerate(discover([str(FIXTURES)]))]
    local = []
    for file in files:
        spec = ScanSpec(file.location, file.file_id, options.site_key, options.limits,
                        options.fail_fast, options.structure)
        local += [p.index for p in scan_pages(spec, Tally(file.location)) if p.index is not None]
    local.sort(key=sort_key)
    assert len({entry.site for entry in local}) > 3

    rows = spark.sparkContext.parallelize(files, len(files)).flatMap(
        lambda file: scan_task(TaskSettings(options, ""), file)).filter(is_entry)
    frame = index_frame(spark, rows)
    assert tuple(frame.columns) == INDEX_COLUMNS
    shuffled = by_site_in_order(frame, 3).select("entry")
    partitions = shuffled.rdd.glom().collect()
    seen: dict[str, int] = {}
    for number, partition in enumerate(partitions):
        for row in partition:
            site = decode_entry(row.entry).site
            assert seen.setdefault(site, number) == number, f"{site} in two partitions"
    for site in seen:
        spark_order = [(e.url_key, e.file_id, e.offset)
                       for e in map(decode_entry, (r.entry for r in partitions[seen[site]]))
                       if e.site == site]
        local_order = [(e.url_key, e.file_id, e.offset) for e in local if e.site == site]
        assert spark_order == local_order


def test_messy_archives_are_summed_up_as_by_the_local_engine(spark, tmp_path: Path) -> None:
    """../shared/warcs (broken on purpose): the same records, pages and problems, file by file,
    and the same outputs."""
    local, distributed = _both(spark, shared_file("warcs"), tmp_path,
                               Options(workers=1, format=OutputFormat.JSONL))
    _assert_same_outputs(local, distributed)


@pytest.mark.parametrize("fmt", [OutputFormat.TEXT, OutputFormat.JSONL], ids=lambda f: f.value)
def test_pages_of_incomplete_records_are_written_as_by_the_local_engine(
    spark, tmp_path: Path, fmt: OutputFormat,
) -> None:
    """Spark's pass 2 reads the records again: a page cut short by the end of its file, or
    marked WARC-Truncated by its crawler, is written marked, as from pass 1's page store."""
    urls = incomplete_archives(tmp_path / "in")
    local, distributed = _both(spark, tmp_path / "in", tmp_path, Options(workers=1, format=fmt))
    _assert_same_outputs(local, distributed)
    if fmt is OutputFormat.TEXT:
        marked = [(r.target_uri, r.get("WARC-Truncated")) for path in sorted(distributed.iterdir())
                  for r in iter_records(path) if r.get("WARC-Truncated")]
    else:
        marked = [(line["url"], line["truncated"]) for line in jsonl_pages(distributed)
                  if line["truncated"]]
    assert sorted(marked) == sorted((url, "length" if fmt is OutputFormat.TEXT else True)
                                    for url in urls.values())


def test_lengths_that_lie_and_cut_members_are_summed_up_as_by_the_local_engine(
    spark, tmp_path: Path
) -> None:
    """Issue 38's faults of the archive layer: a plain file with an overlong Content-Length, a
    whole-file gzip, a .warc.gz missing its last byte, pywb's bad.arc and a response that is
    not HTTP. The Spark engine reads and counts them as the local engine does."""
    records = [serialise("WARC/1.0", headers, block) for headers, block in pages_crawl()]
    src = tmp_path / "in"
    src.mkdir()
    (src / "liar.warc").write_bytes(pack(
        [*records[:2], declare_length(records[2], 99_999_999), *records[3:]], "plain"))
    (src / "whole.warc.gz").write_bytes(pack(records, "one-member"))
    (src / "cut.warc.gz").write_bytes(pack(records, "gzip")[:-1])
    (src / "bad.arc").write_bytes(pywb_bad_arc())
    httpx = warc_record("response", "http://h.example/", http_response(b"<p>x</p>").replace(
        b"HTTP/1.1", b"HTTPX/1.1"))
    (src / "httpx.warc").write_bytes(pack([records[1], serialise("WARC/1.0", *httpx)], "plain"))
    options = Options(workers=1, format=OutputFormat.JSONL)
    expected = clean([src], tmp_path / "local", options)
    summary = run_spark([str(src)], str(tmp_path / "spark"), options, session=spark)
    assert _counts(summary) == _counts(expected)
    _assert_same_outputs(tmp_path / "local", tmp_path / "spark")
    assert summary.problems == {
        "Content-Length runs past the end of the record": 1,
        "records share gzip members or zstd frames, so random access is impossible: "
        "`warcdeboil recompress` rewrites the file one member per record": 1,
        "gzip member is truncated": 1,
        "ARC header with an invalid length": 3,
        "ARC header with a date that is not 14 digits": 2,
        "HTTP response with a malformed status line": 1,
    }


def test_resume_skips_the_inputs_whose_output_exists(spark, tmp_path: Path) -> None:
    out = tmp_path / "out"
    options = Options(format=OutputFormat.JSONL)
    first = run_spark([str(FIXTURES / "crawl")], str(out), options, session=spark)
    written = _files(out)
    kept, gone = outputs_of(out)
    kept_at = kept.stat().st_mtime_ns
    gone.unlink()
    again = run_spark([str(FIXTURES / "crawl")], str(out), options, session=spark, resume=True)
    assert (again.inputs, again.resumed) == (2, 1)
    assert again.outputs == [str(gone)]
    assert kept.stat().st_mtime_ns == kept_at
    assert _files(out) == written  # the same bytes: the fit still saw every input
    assert again.to_dict()["records"] == first.files[1].records == 29
    with gzip.open(gone, "rt", encoding="utf-8") as fh:
        assert again.to_dict()["pages"] == sum(1 for _ in fh)
    nothing = run_spark([str(FIXTURES / "crawl")], str(out), options, session=spark, resume=True)
    assert (nothing.resumed, nothing.files) == (2, [])


def test_a_language_model_scores_and_filters_as_the_local_run(spark, tmp_path: Path) -> None:
    """--lm reaches the executors (a local path: local[2] shares this file system)."""
    from warcdeboil.lm import LanguageModel
    from warcdeboil.lm.scoring import LmSettings

    with gzip.open(shared_file("eval", "dragnet.gold.jsonl.gz"), "rt", encoding="utf-8") as fh:
        texts = [json.loads(line)["gold"] for line, _ in zip(fh, range(200), strict=False)]
    model = tmp_path / "model.npz"
    LanguageModel.train(texts).save(model)
    options = Options(workers=1, format=OutputFormat.JSONL,
                      lm=LmSettings(str(model), line_scores=True, max_line=2000.0,
                                    max_page=3000.0))
    local, distributed = _both(spark, FIXTURES / "crawl", tmp_path, options)
    _assert_same_outputs(local, distributed)
    pages = []
    for path in local.rglob("*.jsonl.gz"):
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            pages += [json.loads(line) for line in fh]
    assert pages and all(p["perplexity"] is None or p["perplexity"] <= 3000 for p in pages)
    assert any(p["perplexity"] is not None for p in pages)
    summary = clean([FIXTURES / "crawl"], tmp_path / "again", options).to_dict()
    assert summary["lines_dropped_perplexity"] > 0


@pytest.mark.parametrize(("buckets", "line_noise"), [(False, True), (True, True), (False, False)],
                         ids=["pass-2", "buckets", "default-filter"])
def test_the_noise_filter_drops_the_lines_of_the_local_run(spark, tmp_path: Path,
                                                           buckets: bool, line_noise: bool,
                                                           ) -> None:
    """--max-line-noise and --line-noise on both engines: the same lines dropped and scored
    (with buckets, the stage before pass 2 scores the pages with the filter too); the default
    filter alone (full scores only near its limit) drops the same lines on both too."""
    from conftest import calibrated_model

    from warcdeboil.lm.scoring import DEFAULT_MAX_NOISE, LmSettings

    model = calibrated_model(tmp_path / "made-up.lm")
    options = Options(workers=1, format=OutputFormat.JSONL,
                      lm=LmSettings(str(model), buckets=buckets, line_noise=line_noise,
                                    max_noise=0.5 if line_noise else DEFAULT_MAX_NOISE))
    local, distributed = _both(spark, FIXTURES / "crawl", tmp_path, options)
    _assert_same_outputs(local, distributed)
    summary = clean([FIXTURES / "crawl"], tmp_path / "again", options).to_dict()
    assert summary["lines_dropped_noise"] > 0


def test_parquet_rows_with_every_field_are_the_local_runs(spark, tmp_path: Path) -> None:
    """Duplicates, URL rules, perplexity and line scores: the same Parquet files, byte for
    byte, so the same rows; and those rows are the local run's JSONL lines."""
    pq = pytest.importorskip("pyarrow.parquet")
    from warcdeboil.lm import LanguageModel
    from warcdeboil.lm.scoring import LmSettings

    with gzip.open(shared_file("eval", "dragnet.gold.jsonl.gz"), "rt", encoding="utf-8") as fh:
        texts = [json.loads(line)["gold"] for line, _ in zip(fh, range(200), strict=False)]
    model = tmp_path / "model.npz"
    LanguageModel.train(texts).save(model)
    lm = LmSettings(str(model), line_scores=True)
    options = Options(workers=1, format=OutputFormat.PARQUET, lm=lm,
                      url_rules=str(tmp_path / "rules.json"))
    local, distributed = _both(spark, FIXTURES / "crawl", tmp_path, options)
    _assert_same_outputs(local, distributed)
    rows = [row for path in outputs_of(distributed, "*.parquet")
            for row in pq.read_table(path).to_pylist()]
    clean([FIXTURES / "crawl"], tmp_path / "jsonl",
          Options(workers=1, format=OutputFormat.JSONL, lm=lm,
                  url_rules=str(tmp_path / "rules2.json")))
    lines = jsonl_pages(tmp_path / "jsonl")
    assert len(rows) == len(lines) == 25
    for row, line in zip(rows, lines, strict=True):
        row["removed"] = {e["key"]: e["value"] for e in row["removed"]}
        assert {k: v for k, v in row.items() if v is not None} == {
            k: v for k, v in line.items() if v is not None}
    assert all(row["url_canonical"] and row["line_perplexities"] is not None for row in rows)


class DriverIntake:
    """What Spark's actions bring back to the driver: the pickled size of every item read from
    an action's socket (``collect``, and ``count``, ``fold``, ``sum``, ``take``… built on it)."""

    def __init__(self) -> None:
        self.bytes = 0
        self.items = 0

    def add(self, item: object) -> object:
        self.bytes += len(pickle.dumps(item))
        self.items += 1
        return item


@pytest.fixture
def intake(monkeypatch: pytest.MonkeyPatch) -> DriverIntake:
    """Every reader of an action's results in pyspark (3.5 and 4 name the modules differently)
    wrapped to count what it reads."""
    seen = DriverIntake()
    patched = []
    for name in ("pyspark.core.rdd", "pyspark.rdd", "pyspark.core.context", "pyspark.context",
                 "pyspark.sql.classic.dataframe", "pyspark.sql.dataframe"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        original = getattr(module, "_load_from_socket", None)
        if original is None:
            continue

        @contextlib.contextmanager
        def counted(*args: object, _original=original) -> Iterator[Iterator[object]]:
            with _original(*args) as stream:
                yield (seen.add(item) for item in stream)

        monkeypatch.setattr(module, "_load_from_socket", counted)
        patched.append(name)
    assert any(name.endswith(".rdd") for name in patched), patched
    return seen


_SENTENCES = [
    "The people of the town said that it was the first time in years that the park was open.",
    "They would come back with their children when the weather is warm again.",
    "A new bridge over the river was built by the city in less than a year.",
    "Most of the shops on the main street close early on a Sunday.",
    "The council will meet on Monday to talk about the cost of the new school.",
    "Our reporter spoke with the farmers who sell their fruit at the market.",
    "Heavy rain in the north has led to floods on several roads.",
    "The museum has opened a room for the old maps of the region.",
    "Tickets for the summer concert were sold out within an hour.",
    "Police asked drivers to be careful near the station after the storm.",
]


def _story(number: int, i: int) -> str:
    """An English article of its own: sentences drawn for this page (seeded)."""
    chosen = random.Random(f"{number}-{i}").choices(_SENTENCES, k=12)
    return " ".join(f"{sentence} ({number}.{i}.{j})" for j, sentence in enumerate(chosen))


def _english_crawl(directory: Path, write_archive, pages_per_site: int) -> Path:
    """Two archives of three sites, each page an English article of its own."""
    directory.mkdir()
    for number in range(2):
        records = []
        for host in ("news.example", "blog.example", "shop.example"):
            for i in range(pages_per_site):
                html = (f"<html><head><title>{host} {i}</title></head><body><nav><a href='/'>"
                        f"Home of {host}</a></nav><article><p>{_story(number, i)}</p></article>"
                        f"<footer>All rights reserved by {host}.</footer></body></html>")
                url = f"http://{host}/{number}/story/{i:04d}"
                records.append(warc_record("response", url, http_response(html.encode())))
        write_archive(directory / f"part-{number}.warc.gz", records, Codec.GZIP)
    return directory


@pytest.mark.parametrize("case", ["url-rules", "buckets"])
def test_the_driver_receives_counts_not_pages(
    spark, intake: DriverIntake, tmp_path: Path, write_archive, case: str
) -> None:
    """Ten times the pages in the same files and sites: what reaches the driver does not grow
    (tallies, counts, percentiles; no row per page), so neither does the driver's memory. Each
    case is a stage that brings something back: duplicates with URL rules, and perplexity
    buckets (every page scored on the cluster, of which each language's percentiles matter)."""
    from warcdeboil.lm import LanguageModel
    from warcdeboil.lm.scoring import LmSettings

    model = tmp_path / "model.lm"
    LanguageModel.train(_SENTENCES[:5]).save(model)
    seen = []
    for name, pages_per_site in (("small", 6), ("large", 60)):
        src = _english_crawl(tmp_path / name, write_archive, pages_per_site)
        options = Options(format=OutputFormat.JSONL, url_rules=str(tmp_path / f"{name}.json"))
        if case == "buckets":
            options = Options(format=OutputFormat.JSONL, lm=LmSettings(str(model), buckets=True))
        before = intake.bytes
        summary = run_spark([str(src)], str(tmp_path / f"out-{name}"), options, session=spark)
        seen.append((summary.to_dict()["pages"], intake.bytes - before))
        if case == "buckets":  # every page was scored and bucketed
            pages = jsonl_pages(tmp_path / f"out-{name}")
            assert {p["perplexity_bucket"] for p in pages} == {"head", "middle", "tail"}
    (small_pages, small_bytes), (large_pages, large_bytes) = seen
    assert large_pages == 10 * small_pages == 360
    assert small_bytes > 0
    # Measured: 8.3 -> 8.4 kB (URL rules), 10.1 -> 11.8 kB (buckets: the sort's range sample,
    # 20 scores a partition at most, is all of the small crawl's). A row a page, even a bare
    # score (18 B pickled, as buckets took before), adds over 50 %: 324 more pages.
    assert large_bytes < 1.5 * small_bytes, seen


@pytest.mark.parametrize("fmt", [OutputFormat.TEXT, OutputFormat.JSONL], ids=lambda f: f.value)
def test_pii_redaction_equals_the_local_run(spark, tmp_path: Path, write_archive,
                                            fmt: OutputFormat) -> None:
    """--redact-pii: the same redacted text, the same counts per page and in the summary."""
    src = tmp_path / "crawl"
    src.mkdir()
    records = []
    for i in range(1, 5):
        html = ("<html><body><nav><a href='/'>Home</a> <a href='/n'>News</a></nav><article>"
                f"<h1>Story {i} by desk{i}@news.example.org</h1><p>Readers wrote from "
                f"198.51.100.{i} and 2001:db8::{i} to editor{i}@example.org about version "
                f"1.2.3.{i} of it, at length, for a good many words.</p></article></body></html>")
        records.append(warc_record("response", f"http://site.test/s/{i}",
                                   http_response(html.encode())))
    write_archive(src / "a.warc.gz", records, Codec.GZIP)
    local, distributed = _both(spark, src, tmp_path, Options(workers=1, format=fmt,
                                                             redact_pii=True))
    _assert_same_outputs(local, distributed)
    summary = json.loads(json.dumps(clean([src], tmp_path / "again", Options(
        workers=1, format=fmt, redact_pii=True)).to_dict()))
    assert summary["pii_redacted"] == {"email": 8, "ipv4": 4, "ipv6": 4}
    if fmt is OutputFormat.JSONL:
        assert [p["pii_redacted"] for p in jsonl_pages(distributed)] == [
            {"email": 2, "ipv4": 1, "ipv6": 1}] * 4


def test_the_headline_left_out_equals_the_local_run(spark, tmp_path: Path) -> None:
    """--drop-headline: the same text and counts on both engines."""
    options = Options(workers=1, format=OutputFormat.JSONL, drop_headline=True)
    local, distributed = _both(spark, FIXTURES / "crawl", tmp_path, options)
    _assert_same_outputs(local, distributed)
    assert sum(page["removed"].get("headline", 0) for page in jsonl_pages(distributed)) == 25


def test_a_favored_setting_equals_the_local_run(spark, tmp_path: Path) -> None:
    """--favor recall: the same text and counts on both engines, and not balanced's."""
    from warcdeboil.page.favor import Favor

    options = Options(workers=1, format=OutputFormat.JSONL, favor=Favor.RECALL)
    local, distributed = _both(spark, FIXTURES / "crawl", tmp_path, options)
    _assert_same_outputs(local, distributed)
    clean([FIXTURES / "crawl"], tmp_path / "balanced", Options(workers=1,
                                                               format=OutputFormat.JSONL))
    assert sum(len(page["text"]) for page in jsonl_pages(distributed)) > sum(
        len(page["text"]) for page in jsonl_pages(tmp_path / "balanced"))


def test_lm_auto_trains_on_the_text_without_the_headline_as_locally(
        spark, tmp_path: Path, write_archive) -> None:
    """--lm auto with --drop-headline: both engines train the run's models on the text without
    the headlines (the perplexities depend on it), and write that text."""
    from warcdeboil.lm.scoring import LmSettings

    src = tmp_path / "crawl"
    src.mkdir()
    rng = random.Random(7)
    words = ["the", "harbour", "wall", "river", "council", "crane", "stone", "fishermen",
             "volunteers", "library", "budget", "school", "bread", "bakery", "garden", "seeds",
             "marathon", "museum", "masks", "strike"]
    records = []
    for i in range(40):
        prose = " ".join(rng.choice(words) for _ in range(80))
        html = (f"<html><body><article><h1>Headline number {i} of the day</h1>"
                f"<p>{prose.capitalize()}.</p></article></body></html>")
        records.append(warc_record("response", f"http://site{i % 4}.test/story/{i}",
                                   http_response(html.encode())))
    write_archive(src / "a.warc.gz", records, Codec.GZIP)
    options = Options(workers=1, format=OutputFormat.JSONL, drop_headline=True,
                      lm=LmSettings("auto", True, None, None))
    local, distributed = _both(spark, src, tmp_path, options)
    _assert_same_outputs(local, distributed)
    pages = jsonl_pages(distributed)
    assert all(page["perplexity"] is not None for page in pages)  # models were trained
    assert not any(page["text"].startswith("Headline") for page in pages)


@pytest.mark.parametrize("fmt", [OutputFormat.TEXT, OutputFormat.JSONL], ids=lambda f: f.value)
def test_a_given_identification_model_decides_as_in_the_local_run(
    spark, tmp_path: Path, write_archive, fmt: OutputFormat,
) -> None:
    """--language-model on both engines: the given model's languages, the same bytes."""
    from test_language import KLINGON, _tiny_model

    model = str(_tiny_model(tmp_path))
    src = tmp_path / "crawl"
    src.mkdir()
    records = [warc_record("response", f"https://a.example/tlh/{i}", http_response(
        f"<html><body><p>{KLINGON}</p><p>page {i}</p></body></html>".encode()))
        for i in range(3)]
    write_archive(src / "a.warc.gz", records, Codec.GZIP)
    local, distributed = _both(spark, src, tmp_path, Options(workers=1, format=fmt,
                                                             language_model=model))
    _assert_same_outputs(local, distributed)
    if fmt is OutputFormat.JSONL:
        assert [p["language"] for p in jsonl_pages(distributed)] == ["tlh"] * 3
    else:
        [wet] = outputs_of(distributed)
        assert [r.get("WARC-Identified-Content-Language") for r in iter_records(wet)
                if r.rec_type == "conversion"] == ["tlh"] * 3


@pytest.mark.parametrize("fmt", [OutputFormat.JSONL, OutputFormat.TEXT], ids=lambda f: f.value)
def test_quality_flags_drops_and_excluded_pages_as_the_local_run(
        spark, tmp_path: Path, fmt: OutputFormat) -> None:
    """--quality-filters all --drop-flagged --excluded: the same outputs, summary counts per
    flag, and excluded file, byte for byte; and without --drop-flagged, the same flags."""
    from test_quality_run import quality_crawl

    from warcdeboil.corpus.settings import QualitySettings

    crawl = quality_crawl(tmp_path / "crawl", files=3, pages=6)
    names = ("gopher_quality", "gopher_repetition", "c4_quality", "fineweb_quality")
    for drop in (False, True):
        listed = {side: tmp_path / f"{side}-{drop}.jsonl" for side in ("local", "spark")}
        runs = tmp_path / f"drop-{drop}"
        for side in ("local", "spark"):
            options = Options(workers=2, format=fmt, quality=QualitySettings(
                names, drop=drop, excluded=str(listed[side]) if drop else None))
            if side == "local":
                expected = clean([crawl], runs / side, options)
            else:
                summary = run_spark([str(crawl)], str(runs / side), options, session=spark)
        counted = [_counts(summary), _counts(expected)]
        for data in counted:  # each names its own excluded file
            data["quality"].pop("excluded")
        assert counted[0] == counted[1]
        quality = summary.to_dict()["quality"]
        assert quality["pages_flagged"] > 0
        assert quality["pages_dropped"] == (quality["pages_flagged"] if drop else 0)
        _assert_same_outputs(runs / "local", runs / "spark")
        if drop:
            assert listed["spark"].read_bytes() == listed["local"].read_bytes()
            assert len(listed["local"].read_bytes().splitlines()) == quality["pages_dropped"]
