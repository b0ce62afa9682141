"""Records chosen from an index (CDXJ, CDX, Common Crawl's Parquet) and read by range."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest
from conftest import FIXTURES, http_response, outputs_of, warc_record

from warcdeboil.errors import ConfigError
from warcdeboil.output.formats import OutputFormat
from warcdeboil.run.local import clean
from warcdeboil.run.options import Options
from warcdeboil.run.selection import (
    SelectedRecord,
    SiteFilter,
    index_kind,
    parse_cdx,
    read_cdx,
    read_selection,
)
from warcdeboil.warc.compression import Codec
from warcdeboil.warc.reader import WarcRecord, iter_records, iter_spans, read_record_at

CRAWL = FIXTURES / "crawl"
SITES = ["news.example.com", "www.blog.example.org"]  # the blog is also reached without www.
CHOSEN = {"news.example.com", "blog.example.org"}


def _responses() -> list[tuple[str, int, int, str]]:
    """(file, offset, length, url) of every response and resource record of the fixture crawl
    (what a pywb CDXJ lists)."""
    return [
        (path.name, record.offset, record.length, record.target_uri)
        for path in sorted(CRAWL.iterdir())
        for record in iter_records(path) if record.rec_type in ("response", "resource")
    ]


def _host(url: str) -> str:
    return url.split("/")[2]


def write_cdxj(path: Path) -> Path:
    lines = [
        f"{_host(url)})/x 20240501120000 " + json.dumps(
            {"url": url, "filename": name, "offset": str(offset), "length": str(length),
             "status": "200"})
        for name, offset, length, url in _responses()
    ]
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.write("!meta 0 {}\n" + "\n".join(lines) + "\n")
    return path


def write_cdx(path: Path) -> Path:
    lines = [" CDX N b a m s k r M S V g"] + [
        f"{_host(url)})/x 20240501120000 {url} text/html 200 AAAA - - {length} {offset} {name}"
        for name, offset, length, url in _responses()
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_sites(path: Path) -> Path:
    path.write_text("# the sites to clean\n" + "\n".join(SITES) + "\n", encoding="utf-8")
    return path


def _expected_spans() -> dict[str, list[tuple[int, int]]]:
    spans: dict[str, list[tuple[int, int]]] = {}
    for name, offset, length, url in _responses():
        host = _host(url).removeprefix("www.")
        if host in CHOSEN:
            spans.setdefault(name, []).append((offset, length))
    return spans


# -- reading indexes ---------------------------------------------------------------------------


@pytest.mark.parametrize("writer", [write_cdxj, write_cdx], ids=["cdxj", "cdx"])
def test_an_index_selects_the_records_of_the_chosen_sites(tmp_path: Path, writer) -> None:
    index = writer(tmp_path / "index")
    sites = SiteFilter.load(str(write_sites(tmp_path / "sites.txt")))
    assert sites.sites == frozenset(CHOSEN)
    selection = read_selection(str(index), sites)
    assert selection == _expected_spans()
    assert sum(map(len, selection.values())) == 17  # 14 pages, and three that are not HTML


def test_without_sites_every_record_is_selected(tmp_path: Path) -> None:
    index = write_cdxj(tmp_path / "index.cdxj.gz")
    assert index_kind(str(index)) == "cdxj"
    assert sum(map(len, read_selection(str(index), SiteFilter()).values())) == len(_responses())


def write_cc_parquet(path: Path, rows_per_group: int = 4) -> Path:
    """The fixture crawl as Common Crawl's columnar index names it: one Parquet file, small row
    groups (so that the site filter can skip some by their statistics), sorted by SURT key."""
    pq = pytest.importorskip("pyarrow.parquet", reason="needs pyarrow (the spark extra)")
    import pyarrow as pa

    rows = sorted(
        (".".join(reversed(_host(url).split("."))) + f")/{i}", _host(url),
         ".".join(_host(url).split(".")[-2:]),
         name, offset, length)
        for i, (name, offset, length, url) in enumerate(_responses())
    )
    names = ["url_surtkey", "url_host_name", "url_host_registered_domain", "warc_filename",
             "warc_record_offset", "warc_record_length"]
    table = pa.table({name: [row[i] for row in rows] for i, name in enumerate(names)})
    pq.write_table(table, path, row_group_size=rows_per_group)
    return path


def test_a_parquet_index_selects_the_records_of_the_chosen_sites(tmp_path: Path) -> None:
    index = write_cc_parquet(tmp_path / "part-00000.parquet")
    sites = SiteFilter.load(str(write_sites(tmp_path / "sites.txt")))
    assert index_kind(str(index)) == "parquet"
    assert read_selection(str(index), sites) == _expected_spans()
    everything = read_selection(str(index), SiteFilter())
    assert sum(map(len, everything.values())) == len(_responses())


def test_a_parquet_directory_is_read_in_batches(tmp_path: Path, monkeypatch) -> None:
    import warcdeboil.run.selection as selection

    root = tmp_path / "cc-index"
    directory = root / "crawl=CC-MAIN-2024-33" / "subset=warc"
    directory.mkdir(parents=True)
    write_cc_parquet(directory / "part-00000.parquet")
    monkeypatch.setattr(selection, "PARQUET_BATCH_ROWS", 3)
    sites = SiteFilter.load(str(write_sites(tmp_path / "sites.txt")))
    assert read_selection(str(root), sites) == _expected_spans()


def test_a_parquet_file_without_the_index_columns_is_refused(tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet", reason="needs pyarrow (the spark extra)")
    import pyarrow as pa

    path = tmp_path / "other.parquet"
    pq.write_table(pa.table({"url": ["https://example.com/"]}), path)
    with pytest.raises(ConfigError, match="other.parquet: not a Common Crawl columnar index"):
        read_selection(str(path), SiteFilter())


def test_a_cdx_without_offsets_is_refused(tmp_path: Path) -> None:
    index = tmp_path / "nine.cdx"
    index.write_text(" CDX N b a m s k r M g\ncom,x)/ 2024 http://x.com/ t 200 A - - a.warc\n")
    with pytest.raises(ConfigError, match="no file, offset or length"):
        list(read_cdx(str(index), SiteFilter()))


def test_cdx_fields_follow_the_legend() -> None:
    assert parse_cdx("a.warc.gz 100 20 http://x.com/", "g V S a") == SelectedRecord(
        "a.warc.gz", 100, 20, "http://x.com/")
    assert parse_cdx("too few fields", "g V S a") is None


def test_a_site_filter_matches_hosts_and_registered_domains() -> None:
    sites = SiteFilter.parse(["example.co.uk", "https://www.other.org/page"])
    assert sites.keeps_url("http://news.example.co.uk/a")
    assert sites.keeps_url("https://other.org/b")
    assert not sites.keeps_url("http://example.com/")
    assert sites.keeps_host("www.other.org", "other.org")
    assert sites.keeps_host("news.example.co.uk", "example.co.uk")
    assert not sites.keeps_host("elsewhere.net", "elsewhere.net")


# -- range reads -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(p.name for p in (FIXTURES / "codecs").iterdir()))
def test_spans_read_the_same_records_as_offsets(name: str) -> None:
    path = FIXTURES / "codecs" / name
    records = list(iter_records(path))
    spans = [(r.offset, r.length) for r in records[1::3]]
    got = list(iter_spans(path, spans))
    assert [r.to_bytes() for r in got] == [r.to_bytes() for r in records[1::3]]
    assert [r.to_bytes() for r in got] == [
        read_record_at(path, offset, length).to_bytes() for offset, length in spans
    ]


def test_a_bad_span_is_a_damaged_record_and_reading_goes_on() -> None:
    path = FIXTURES / "codecs" / "sample.warc.gz"
    good = list(iter_records(path))[2]
    got = list(iter_spans(path, [(7, 100), (good.offset, good.length)]))
    assert got[0].error is not None and not got[0].headers
    assert got[1].to_bytes() == good.to_bytes()


@pytest.fixture
def counting_fs():
    """A filesystem whose reads are all range fetches, counted: what s3:// does."""
    fsspec = pytest.importorskip("fsspec")
    from fsspec.spec import AbstractBufferedFile, AbstractFileSystem

    class CountingFile(AbstractBufferedFile):
        def _fetch_range(self, start: int, end: int) -> bytes:
            with open(self.path, "rb") as fh:
                fh.seek(start)
                data = fh.read(end - start)
            CountingFileSystem.fetched += len(data)
            CountingFileSystem.requests += 1
            return data

    class CountingFileSystem(AbstractFileSystem):
        protocol = "counting"
        fetched = 0
        requests = 0

        @classmethod
        def _strip_protocol(cls, path):
            return path.removeprefix("counting://") if isinstance(path, str) else path

        def info(self, path, **kwargs):
            return {"name": path, "size": os.path.getsize(path), "type": "file"}

        def _open(self, path, mode="rb", block_size=None, autocommit=True, cache_options=None,
                  **kwargs):
            return CountingFile(self, path, mode, block_size or 5 << 20,
                                cache_options=cache_options, **kwargs)

    fsspec.register_implementation("counting", CountingFileSystem, clobber=True)
    return CountingFileSystem


def test_range_reads_fetch_the_records_not_the_file(tmp_path: Path, write_archive,
                                                    counting_fs) -> None:
    records = []
    for i in range(200):
        body = f"<html><body><div>{os.urandom(4000).hex()}</div></body></html>".encode()
        url = f"http://big.example/{i}"
        records.append(warc_record("response", url, http_response(body)))
    path = write_archive(tmp_path / "big.warc.gz", records, Codec.GZIP)
    local = list(iter_records(path))
    chosen = [local[5], local[120], local[199]]
    spans = [(r.offset, r.length) for r in chosen]
    got = list(iter_spans(f"counting://{path}", spans))
    assert [r.to_bytes() for r in got] == [r.to_bytes() for r in chosen]
    wanted = sum(length for _, length in spans)
    assert counting_fs.fetched <= wanted + 8  # the records, and the 8 bytes that tell the codec
    assert counting_fs.fetched < path.stat().st_size / 50
    assert counting_fs.requests == len(spans) + 1


# -- on the local engine -----------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["cdxj", "cdx", "parquet"])
def test_the_local_engine_cleans_only_the_selected_sites(tmp_path: Path, kind: str,
                                                        local_jsonl) -> None:
    sites = SiteFilter.load(str(write_sites(tmp_path / "sites.txt")))
    base = CRAWL
    if kind == "cdxj":
        index = write_cdxj(tmp_path / "index.cdxj.gz")
    elif kind == "cdx":
        index = write_cdx(tmp_path / "index.cdx")
    else:
        index = write_cc_parquet(tmp_path / "part-00000.parquet")
    out = tmp_path / "out"
    summary = clean([base], out, Options(workers=1, format=OutputFormat.JSONL),
                    select=(str(index), sites))
    assert _jsonl_lines(out) == local_jsonl
    assert summary.to_dict()["pages"] == 14
    assert summary.fit.sites == 2
    assert summary.scan.records == 17  # only the chosen records were read


def test_the_local_engine_reads_only_the_selected_byte_ranges(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """WARC output through the command line: the chosen records, cleaned as in the full run,
    and not one byte of the records that were not chosen read from the archives."""
    import builtins

    from typer.testing import CliRunner

    from warcdeboil.cli import app

    full = tmp_path / "full"
    clean([CRAWL], full, Options(workers=1))
    index = write_cdxj(tmp_path / "index.cdxj.gz")
    sites = write_sites(tmp_path / "sites.txt")
    read: dict[str, list[tuple[int, int]]] = {}
    real_open = builtins.open

    class Counting:
        def __init__(self, fh, name: str) -> None:
            self._fh, self._name = fh, name

        def read(self, size: int = -1) -> bytes:
            start = self._fh.tell()
            data = self._fh.read(size)
            if data:
                read.setdefault(self._name, []).append((start, start + len(data)))
            return data

        def __getattr__(self, attr: str):
            return getattr(self._fh, attr)

        def __enter__(self):
            return self

        def __exit__(self, *exc) -> None:
            self._fh.close()

    def counting_open(file, mode="r", *args, **kwargs):
        fh = real_open(file, mode, *args, **kwargs)
        if "b" in mode and "r" in mode and str(file).startswith(str(CRAWL)):
            return Counting(fh, Path(file).name)
        return fh

    monkeypatch.setattr(builtins, "open", counting_open)
    done = CliRunner().invoke(app, ["clean", str(CRAWL), "-o", str(tmp_path / "out"), "-j", "1",
                                    "--select-index", str(index), "--sites", str(sites),
                                    "--json"])
    monkeypatch.undo()
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["records"] == 17
    _assert_chosen_records_as_in(tmp_path / "out", full)
    for name, spans in _expected_spans().items():
        # Every byte read is in a chosen record, or among the 8 that tell the codec.
        allowed = [(0, 8)] + [(offset, offset + length) for offset, length in spans]
        assert read[name], name
        for start, end in read[name]:
            assert any(a <= start and end <= b for a, b in allowed), (name, start, end)


# -- on Spark ----------------------------------------------------------------------------------


def _jsonl_lines(directory: Path) -> dict[str, list[bytes]]:
    return {
        p.name: gzip.decompress(p.read_bytes()).splitlines()
        for p in outputs_of(directory)
    }


@pytest.fixture(scope="module")
def local_jsonl(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[bytes]]:
    out = tmp_path_factory.mktemp("local")
    clean([CRAWL], out, Options(workers=1, format=OutputFormat.JSONL))
    lines = _jsonl_lines(out)
    return {
        name: [line for line in found if json.loads(line)["site"] in CHOSEN]
        for name, found in lines.items()
    }


def _parquet_index(spark, path: Path) -> Path:
    rows = []
    for name, offset, length, url in _responses():
        host = _host(url)
        rows.append((f"com,example)/{len(rows)}", host, ".".join(host.split(".")[-2:]),
                     f"crawl-data/{name}", offset, length, url))
    frame = spark.createDataFrame(rows, [
        "url_surtkey", "url_host_name", "url_host_registered_domain", "warc_filename",
        "warc_record_offset", "warc_record_length", "url",
    ])
    frame.coalesce(1).write.parquet(str(path))
    return path


@pytest.mark.spark
@pytest.mark.parametrize("kind", ["cdxj", "cdx", "parquet"])
def test_spark_cleans_only_the_selected_sites(spark, tmp_path: Path, kind: str,
                                              local_jsonl) -> None:
    from warcdeboil.spark import run_spark

    sites = SiteFilter.load(str(write_sites(tmp_path / "sites.txt")))
    base = CRAWL
    if kind == "cdxj":
        index = write_cdxj(tmp_path / "index.cdxj.gz")
    elif kind == "cdx":
        index = write_cdx(tmp_path / "index.cdx")
    else:
        index = _parquet_index(spark, tmp_path / "cc-index.parquet")
        base = tmp_path / "prefix"
        (base / "crawl-data").mkdir(parents=True)
        for path in CRAWL.iterdir():
            (base / "crawl-data" / path.name).symlink_to(path)
    out = tmp_path / "out"
    summary = run_spark([str(base)], str(out), Options(format=OutputFormat.JSONL),
                        session=spark, select=(str(index), sites))
    found = out / "crawl-data" if kind == "parquet" else out
    assert _jsonl_lines(found) == local_jsonl
    assert summary.to_dict()["pages"] == 14
    assert summary.fit.sites == 2
    assert summary.scan.records == 17  # only the chosen records were read


@pytest.mark.spark
def test_spark_selected_warc_records_are_cleaned_as_in_the_full_run(spark, tmp_path: Path) -> None:
    from warcdeboil.spark import run_spark

    full = tmp_path / "full"
    clean([CRAWL], full, Options(workers=1))
    index = write_cdxj(tmp_path / "index.cdxj.gz")
    sites = SiteFilter.load(str(write_sites(tmp_path / "sites.txt")))
    run_spark([f"file://{CRAWL}"], str(tmp_path / "out"), Options(), session=spark,
              select=(str(index), sites))
    _assert_chosen_records_as_in(tmp_path / "out", full)


def _assert_chosen_records_as_in(out: Path, full: Path) -> None:
    """Each output holds its own warcinfo (dated by its first record), which its cleaned records
    name, then exactly the chosen records of the full run's output, byte for byte."""
    for path in outputs_of(out):
        info, *records = iter_records(path)
        (full_info, *_) = iter_records(full / path.name)
        assert info.rec_type == full_info.rec_type == "warcinfo"
        got = [_unlinked(r, info.record_id) for r in records]
        ids = {r.record_id for r in records}
        expected = [_unlinked(r, full_info.record_id) for r in iter_records(full / path.name)
                    if r.record_id in ids]
        assert got == expected
        assert len(got) == len(_expected_spans()[path.name])


def _unlinked(record: WarcRecord, warcinfo_id: str) -> bytes:
    """A record's bytes with its link to its file's warcinfo (which must be there) blanked."""
    data = record.to_bytes()
    if record.get("WARC-Warcinfo-ID") is None:
        return data
    assert record.get("WARC-Warcinfo-ID") == warcinfo_id
    return data.replace(warcinfo_id.encode(), b"<warcinfo>", 1)


@pytest.mark.spark
def test_select_index_takes_one_base_location(spark, tmp_path: Path) -> None:
    from warcdeboil.spark import run_spark

    index = write_cdxj(tmp_path / "index.cdxj.gz")
    with pytest.raises(ConfigError, match="takes one input"):
        run_spark([str(CRAWL), str(CRAWL)], str(tmp_path / "out"), Options(), session=spark,
                  select=(str(index), SiteFilter()))
