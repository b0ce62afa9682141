"""Reader: round trips on every codec, exact offsets, random access, real-world files."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import (
    PACKINGS,
    SHARED,
    declare_length,
    http_response,
    pack,
    shared_file,
    warc_record,
)
from warcio.archiveiterator import ArchiveIterator

from warcdeboil.warc.compression import Codec
from warcdeboil.warc.reader import iter_records, read_record_at
from warcdeboil.warc.writer import serialise

RECORDS = [
    warc_record("warcinfo", "", b"software: test\r\n", content_type="application/warc-fields"),
    warc_record("request", "http://example.com/", b"GET / HTTP/1.1\r\nHost: example.com\r\n\r\n"),
    warc_record("response", "http://example.com/", http_response(b"<html><p>hi</p></html>")),
    warc_record("resource", "http://example.com/x.bin", bytes(range(256)) * 300),
    warc_record("metadata", "http://example.com/", b"", content_type="text/plain"),
]


@pytest.mark.parametrize("codec", list(Codec))
def test_round_trip_keeps_headers_and_blocks(tmp_path: Path, write_archive, codec: Codec) -> None:
    path = write_archive(tmp_path / f"a.warc{codec.suffix}", RECORDS, codec)
    read = [(r.headers, r.block) for r in iter_records(path)]
    assert read == RECORDS


@pytest.mark.parametrize("codec", list(Codec))
def test_offsets_read_back_the_same_record(tmp_path: Path, write_archive, codec: Codec) -> None:
    path = write_archive(tmp_path / f"a.warc{codec.suffix}", RECORDS, codec)
    records = list(iter_records(path))
    for record in records:
        again = read_record_at(path, record.offset, record.length)
        assert (again.headers, again.block) == (record.headers, record.block)


@pytest.mark.parametrize("codec", list(Codec))
def test_records_tile_the_file(tmp_path: Path, write_archive, codec: Codec) -> None:
    path = write_archive(tmp_path / f"a.warc{codec.suffix}", RECORDS, codec)
    records = list(iter_records(path))
    ends = [r.offset + r.length for r in records]
    starts = [r.offset for r in records[1:]]
    assert ends[:-1] == starts
    assert ends[-1] == path.stat().st_size


def test_truncated_file_yields_records_before_the_damage(tmp_path: Path, write_archive) -> None:
    path = write_archive(tmp_path / "a.warc.gz", RECORDS, Codec.GZIP)
    data = path.read_bytes()
    last = list(iter_records(path))[-2]
    cut = tmp_path / "cut.warc.gz"
    cut.write_bytes(data[: last.offset + last.length // 2])
    records = list(iter_records(cut))
    assert [r.rec_type for r in records[:3]] == ["warcinfo", "request", "response"]
    assert all(r.error is None for r in records[:3])
    (damaged,) = records[3:]
    assert damaged.error is not None
    assert damaged.error.startswith("gzip member is truncated: record is truncated")
    assert damaged.rec_type == last.rec_type  # its header was read: the record is salvaged
    assert (damaged.offset, damaged.offset + damaged.length) == (last.offset, len(cut.read_bytes()))


@pytest.mark.parametrize("packing", ["plain", "gzip", "zstd"])
@pytest.mark.parametrize("declared", [99_999_999, 100_000])
def test_records_after_an_overlong_length_tile_the_file_and_read_back(
    tmp_path: Path, packing: str, declared: int
) -> None:
    records = [serialise("WARC/1.0", headers, block) for headers, block in RECORDS]
    records[1] = declare_length(records[1], declared)
    path = tmp_path / f"liar{PACKINGS[packing]}"
    path.write_bytes(pack(records, packing))
    read = list(iter_records(path))
    assert [r.record_id for r in read] == [headers[1][1] for headers, _ in RECORDS]
    assert [r.offset + r.length for r in read[:-1]] == [r.offset for r in read[1:]]
    assert read[-1].offset + read[-1].length == path.stat().st_size
    for record in read[2:]:
        again = read_record_at(path, record.offset, record.length)
        assert (again.headers, again.block) == (record.headers, record.block)


SHARED_WARCS = sorted(
    p.name for p in (SHARED / "warcs").glob("*.warc*") if not p.name.endswith(".bad")
) if (SHARED / "warcs").is_dir() else []
READABLE = [n for n in SHARED_WARCS if "clipped" not in n]


@pytest.mark.parametrize("name", READABLE)
def test_offsets_match_warcio_on_real_files(name: str) -> None:
    path = shared_file("warcs", name)
    with open(path, "rb") as fh:
        it = ArchiveIterator(fh)
        theirs = [(it.get_record_offset(), r.rec_type) for r in it]
    ours = [(r.offset, r.rec_type) for r in iter_records(path)]
    assert ours == theirs


def test_arc_file_reads_as_warc_records() -> None:
    path = shared_file("warcs", "archivesunleashed__aut__example.arc.gz")
    records = list(iter_records(path))
    assert len(records) == 300
    assert records[0].rec_type == "warcinfo"
    assert sum(r.rec_type == "response" for r in records) >= 200
    again = read_record_at(path, records[5].offset, records[5].length)
    assert again.block == records[5].block
