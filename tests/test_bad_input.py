"""Archives in the wild: every readable record through, every other one accounted for."""

from __future__ import annotations

import gzip
import json
import re
import zlib
from pathlib import Path

import pytest
from conftest import (
    PACKINGS,
    arc_record,
    declare_length,
    http_response,
    jsonl_pages,
    outputs_of,
    pack,
    pages_crawl,
    pywb_bad_arc,
    synthetic_crawl,
    warc_record,
    warcio_check,
)
from typer.testing import CliRunner
from warcio.archiveiterator import ArchiveIterator

from warcdeboil.cli import app
from warcdeboil.output.formats import OutputFormat
from warcdeboil.page.html import PageLimits, html_page
from warcdeboil.run.local import clean
from warcdeboil.run.options import Options
from warcdeboil.run.scan import UNADDRESSABLE
from warcdeboil.warc.compression import Codec
from warcdeboil.warc.reader import iter_records, read_record_at
from warcdeboil.warc.recompress import recompress_file
from warcdeboil.warc.writer import serialise

RECORDS = synthetic_crawl()[:9]  # warcinfo, then request/response pairs


def raw(records=RECORDS) -> list[bytes]:
    return [serialise("WARC/1.0", headers, block) for headers, block in records]


def member(data: bytes) -> bytes:
    deflater = zlib.compressobj(6, zlib.DEFLATED, 31)
    return deflater.compress(data) + deflater.flush()


def run_clean(src: Path, out: Path, **options) -> dict:
    summary = clean([src], out, Options(workers=1, **options))
    data = summary.to_dict()
    for tally in summary.files:
        assert tally.balanced, tally
    return data


def assert_valid_output(path: Path, allowed: set[str] = frozenset()) -> None:
    status, report = warcio_check(path)
    faulted = set(re.findall(r"WARC-Record-ID (<[^>]+>)", report))
    assert faulted <= allowed and (status == 0 or faulted), report
    if not path.name.endswith(".zst"):
        with open(path, "rb") as fh:  # a second, independent reader agrees record for record
            theirs = [r.rec_headers.get_header("WARC-Record-ID") for r in ArchiveIterator(fh)]
        assert theirs == [r.record_id for r in iter_records(path)]


# -- compression gone wrong ---------------------------------------------------------------


def test_truncated_last_member_keeps_everything_before(tmp_path: Path) -> None:
    data = b"".join(member(r) for r in raw())
    src = tmp_path / "in" / "cut.warc.gz"
    src.parent.mkdir()
    src.write_bytes(data[:-40])
    result = run_clean(src.parent, tmp_path / "out")
    assert result["records"] == len(RECORDS)
    assert result["problems"] == {"gzip member is truncated: record is truncated": 1}
    out = tmp_path / "out" / "cut.warc.gz"
    assert_valid_output(out)
    last = list(iter_records(out))[-1]
    assert last.get("WARC-Truncated") == "length"
    assert last.record_id == RECORDS[-1][0][1][1]


def test_members_that_do_not_match_records(tmp_path: Path) -> None:
    records = raw()
    two_in_one = member(records[0] + records[1])
    split = member(records[2][:100]) + member(records[2][100:])
    rest = b"".join(member(r) for r in records[3:])
    src = tmp_path / "odd.warc.gz"
    src.write_bytes(two_in_one + split + rest)
    read = list(iter_records(src))
    assert [r.to_bytes() for r in read] == records
    # Sharing a member, neither record has bytes of its own; the split one spans two members.
    assert [r.addressable for r in read[:3]] == [False, False, True]
    assert read_record_at(src, read[2].offset, read[2].length).to_bytes() == records[2]
    assert all(r.addressable for r in read[3:])
    run_clean(src, tmp_path / "out")
    assert_valid_output(tmp_path / "out" / "odd.warc.gz")


def test_whole_file_gzip_is_read_streaming_and_recompress_fixes_it(tmp_path: Path) -> None:
    src = tmp_path / "one-stream.warc.gz"
    src.write_bytes(gzip.compress(b"".join(raw()), mtime=0))
    read = list(iter_records(src))
    assert [r.to_bytes() for r in read] == raw()
    assert not any(r.addressable for r in read[1:])
    fixed = tmp_path / "fixed.warc.gz"
    tally = recompress_file(src, fixed)
    assert (tally.records, tally.carried, tally.problems) == (len(RECORDS), len(RECORDS), {})
    for record in iter_records(fixed):
        assert record.addressable
        assert read_record_at(fixed, record.offset, record.length).block == record.block
    assert_valid_output(fixed)


def test_corrupt_member_in_the_middle_is_skipped_and_reading_resumes(tmp_path: Path) -> None:
    members = [member(r) for r in raw()]
    broken = bytearray(members[4])
    broken[20:30] = b"\xff" * 10
    src = tmp_path / "corrupt.warc.gz"
    src.write_bytes(b"".join(members[:4]) + bytes(broken) + b"".join(members[5:]))
    read = list(iter_records(src))
    assert [r.to_bytes() for r in read if r.error is None] == raw()[:4] + raw()[5:]
    (bad,) = [r for r in read if r.error]
    assert bad.error.startswith("corrupt gzip member")
    result = run_clean(src, tmp_path / "out")
    assert result["skipped"] == 1
    assert_valid_output(tmp_path / "out" / "corrupt.warc.gz")


# -- WARC records gone wrong --------------------------------------------------------------


@pytest.mark.parametrize("version", ["WARC/0.17", "WARC/0.18", "WARC/1.0", "WARC/1.1"])
def test_versions(tmp_path: Path, version: str) -> None:
    src = tmp_path / "v.warc"
    src.write_bytes(b"".join(r.replace(b"WARC/1.0", version.encode(), 1) for r in raw()))
    assert [r.version for r in iter_records(src)] == [version] * len(RECORDS)
    run_clean(src, tmp_path / "out")
    info, *records = iter_records(tmp_path / "out" / "v.warc")
    # Our warcinfo is WARC/1.1 after a WARC/1.1 record, else WARC/1.0 (which has every field).
    assert (info.rec_type, info.version) == ("warcinfo", max(version, "WARC/1.0"))
    assert [r.version for r in records] == [version] * 9


@pytest.mark.parametrize("codec", [Codec.NONE, Codec.GZIP])
@pytest.mark.parametrize("delta", [+37, -25])
def test_wrong_content_length_loses_no_other_record(tmp_path: Path, codec, delta) -> None:
    records = raw()
    header_end = records[3].index(b"\r\n\r\n")
    declared = int(records[3].split(b"Content-Length: ")[1].split(b"\r\n")[0])
    records[3] = records[3].replace(
        b"Content-Length: %d" % declared, b"Content-Length: %d" % (declared + delta), 1
    )
    assert header_end
    data = b"".join(member(r) if codec is Codec.GZIP else r for r in records)
    src = tmp_path / f"len.warc{codec.suffix}"
    src.write_bytes(data)
    read = list(iter_records(src))
    ids = [r.record_id for r in read if r.headers]
    assert ids == [r[0][1][1] for r in RECORDS]
    # Reported once: as the record with the wrong length, or (a plain file declaring too
    # short) as the stretch after it that is no record.
    assert sum(r.error is not None for r in read) == 1
    run_clean(src, tmp_path / "out")
    # Declared too short, the record keeps its declared (now wrong) digest: warcio may fault
    # that record, as it would in the input, and no other.
    assert_valid_output(tmp_path / "out" / src.name, allowed={RECORDS[3][0][1][1]})


PAGES = pages_crawl()  # a warcinfo record and five pages
OVERLONG = "Content-Length runs past the end of the record"
ARC_OVERLONG = "ARC length runs past the end of the record"


@pytest.mark.parametrize("packing", list(PACKINGS))
@pytest.mark.parametrize("declared", [99_999_999, 100_000, 600], ids=lambda d: f"+{d}")
def test_an_overlong_length_swallows_no_neighbour(tmp_path: Path, packing: str,
                                                  declared: int) -> None:
    """Record 3 of 6 declares a block longer than the rest of the file (spilled to disk, or
    held), or ending inside record 5: record 4's header ends it, and records 4 to 6 are read."""
    records = raw(PAGES)
    real = len(PAGES[2][1])
    records[2] = declare_length(records[2], declared if declared > 1000 else real + declared)
    src = tmp_path / "in" / f"liar{PACKINGS[packing]}"
    src.parent.mkdir()
    src.write_bytes(pack(records, packing))
    read = list(iter_records(src))
    assert [r.record_id for r in read] == [headers[1][1] for headers, _ in PAGES]
    assert [r.error for r in read] == [None, None, OVERLONG, None, None, None]
    assert read[2].block == PAGES[2][1]  # cut where it ends, its trailer left out
    assert [r.block for r in read[3:]] == [block for _, block in PAGES[3:]]
    result = run_clean(src.parent, tmp_path / "jsonl", format=OutputFormat.JSONL)
    # The cut record's page is whole: it is written, as every page of a record whose length
    # was wrong (docs/messy-archives.md); the warcinfo record is carried.
    assert (result["records"], result["pages"], result["carried"]) == (6, 5, 1)
    assert result["problems"] == {OVERLONG: 1} | (
        {UNADDRESSABLE: 1} if packing == "one-member" else {})
    pages = jsonl_pages(tmp_path / "jsonl")
    assert [p["url"] for p in pages] == [headers[3][1] for headers, _ in PAGES[1:]]
    assert not any(p["truncated"] for p in pages)  # the cut page is whole
    run_clean(src.parent, tmp_path / "warc")
    out = tmp_path / "warc" / src.name
    assert_valid_output(out)
    info, *written = iter_records(out)
    assert len(written) == 6 and written[2].record_id == PAGES[2][0][1][1]
    assert written[2].block == PAGES[2][1] and written[2].get("Content-Length") == str(real)


@pytest.mark.parametrize("packing", list(PACKINGS))
@pytest.mark.parametrize("spill_bytes", [0, 16 << 20], ids=["spilled", "held"])
def test_an_overlong_length_in_a_file_cut_short_loses_no_record_before_the_cut(
    tmp_path: Path, packing: str, spill_bytes: int
) -> None:
    records = raw(PAGES)
    records[2] = declare_length(records[2], 99_999_999)
    src = tmp_path / f"cut{PACKINGS[packing]}"
    src.write_bytes(pack(records, packing)[:-300])
    read = list(iter_records(src, spill_bytes=spill_bytes))
    named = [r for r in read if r.headers]  # (a zstd frame cut short yields none of its bytes)
    assert [r.record_id for r in named] == [headers[1][1] for headers, _ in PAGES[: len(named)]]
    assert len(named) >= 5 and [r.error for r in named[:4]] == [None, None, OVERLONG, None]
    assert "truncated" in (read[-1].error or "")


@pytest.mark.parametrize("packing", list(PACKINGS))
@pytest.mark.parametrize("spill_bytes", [0, 16 << 20], ids=["spilled", "held"])
def test_a_block_quoting_warc_headers_is_whole_when_its_length_is_right(
    tmp_path: Path, packing: str, spill_bytes: int
) -> None:
    """A WARC archived in a WARC, and a page quoting a record, hold lines that start WARC/:
    their declared length checks out, so nothing inside them is taken for a record."""
    inner = b"".join(raw(PAGES[:3]))
    quoted = http_response(b"<html><body><pre>\r\nWARC/1.0\r\nWARC-Type: response\r\n"
                           b"Content-Length: 5\r\n\r\nhello\r\n\r\n</pre></body></html>")
    records = [*PAGES[:2], warc_record("resource", "http://a.example/x.warc", inner,
                                       content_type="application/warc"),
               warc_record("response", "http://a.example/quote", quoted), *PAGES[2:4]]
    src = tmp_path / f"nested{PACKINGS[packing]}"
    src.write_bytes(pack(raw(records), packing))
    read = list(iter_records(src, spill_bytes=spill_bytes))
    assert [(r.headers, r.block, r.error) for r in read] == [(h, b, None) for h, b in records]


# -- ARC headers read as leniently as warcio reads them ---------------------------------------


ARC_PAGE = http_response(b"<html><body><p>An ARC page with some words.</p></body></html>")


def warcio_arc(path: Path) -> list[tuple[str, str | None]]:
    with open(path, "rb") as fh:
        return [(r.rec_type, r.rec_headers.get_header("WARC-Target-URI"))
                for r in ArchiveIterator(fh, arc2warc=True)]


@pytest.mark.parametrize("packing", ["plain", "gzip"])
def test_pywb_bad_arc_gives_every_record_warcio_gives(tmp_path: Path, packing: str) -> None:
    """Lengths of -1 and abc, dates of 18 digits: each record runs to the next header line,
    its date is cut to 14 digits, and each repair is counted."""
    *records, last = pywb_bad_arc().split(b"\n\n")  # three records and the lines between
    src = tmp_path / "in" / ("bad.arc" + (".gz" if packing == "gzip" else ""))
    src.parent.mkdir()
    src.write_bytes(pack([record + b"\n\n" for record in records] + [last], packing))
    read = list(iter_records(src))
    assert [(r.rec_type, r.get("WARC-Target-URI")) for r in read] == warcio_arc(src) == [
        ("warcinfo", None), ("response", "http://example.com/"), ("response", "http://example.com/")]
    assert read[0].block == b"1 0 Bad Capture\nURL IP-address Archive-date Content-type " \
                            b"Archive-length\n"
    assert [r.get("WARC-Date") for r in read] == [
        "2014-03-01T00:00:00Z", "2014-04-01T00:00:00Z", "2014-04-01T00:00:00Z"]
    result = run_clean(src.parent, tmp_path / "out")
    assert (result["records"], result["carried"], result["skipped"]) == (3, 3, 0)
    assert result["problems"] == {"ARC header with an invalid length": 3,
                                  "ARC header with a date that is not 14 digits": 2}
    (out,) = outputs_of(tmp_path / "out")
    assert_valid_output(out)


@pytest.mark.parametrize("packing", ["plain", "gzip"])
@pytest.mark.parametrize("declared", [99_999_999, 300, -1, "abc"])
def test_an_arc_length_that_lies_swallows_no_neighbour(tmp_path: Path, packing: str,
                                                       declared: int | str) -> None:
    """Record 2 of 4 declares a length past the file's end (or past record 3's header), or
    none: the next ARC header line ends it, and the records after it are read."""
    urls = [f"http://arc.example/{i}" for i in range(4)]
    records = [arc_record("filedesc://lie.arc", b"1 0 test\nURL IP-address Archive-date "
                          b"Content-type Archive-length\n")]
    for i, url in enumerate(urls):
        length = None if i != 1 else (len(ARC_PAGE) + declared if declared == 300 else declared)
        records.append(arc_record(url, ARC_PAGE, length))
    src = tmp_path / "in" / ("lie.arc" + (".gz" if packing == "gzip" else ""))
    src.parent.mkdir()
    src.write_bytes(pack(records, packing))
    read = list(iter_records(src))
    assert [r.target_uri for r in read[1:]] == urls
    assert [r.block for r in read[1:]] == [ARC_PAGE] * 4
    valid = isinstance(declared, int) and declared > 0
    assert read[2].error == (ARC_OVERLONG if valid else None)
    assert read[2].repairs == (() if valid else (f"ARC header with an invalid length "
                                                 f"({str(declared)!r})",))
    result = run_clean(src.parent, tmp_path / "out", format=OutputFormat.JSONL)
    assert result["records"] == 5 and result["pages"] == 4
    assert result["problems"] == {
        (ARC_OVERLONG if valid else "ARC header with an invalid length"): 1}


def test_arc_dates_are_cut_padded_or_lent(tmp_path: Path) -> None:
    dates = ["20140216050221", "2014021605022199", "201402160502", "null"]
    src = tmp_path / "dates.arc"
    src.write_bytes(b"".join(arc_record(f"http://arc.example/{i}", ARC_PAGE, date=date)
                             for i, date in enumerate(dates)))
    read = list(iter_records(src))
    assert [r.get("WARC-Date") for r in read] == ["2014-02-16T05:02:21Z"] * 2 + [
        "2014-02-16T05:02:00Z"] * 2
    assert [[reason.split(" (")[0] for reason in r.repairs] for r in read] == [
        [], ["ARC header with a date that is not 14 digits"],
        ["ARC header with a date that is not 14 digits"], ["ARC header with an invalid date"]]
    result = run_clean(src, tmp_path / "out", format=OutputFormat.JSONL)
    assert result["pages"] == 4


def test_a_malformed_arc_header_skips_to_the_next_header_line(tmp_path: Path) -> None:
    """In an uncompressed ARC file, reading goes on at the next ARC header line (not at a WARC
    line that an ARC file has none of)."""
    records = [arc_record("filedesc://m.arc", b"1 0 test\n"),
               arc_record(" ", ARC_PAGE).replace(b"  93.184", b" 93.184"),  # no URL
               arc_record("http://arc.example/after", ARC_PAGE)]
    src = tmp_path / "m.arc"
    src.write_bytes(b"".join(records))
    read = list(iter_records(src))
    assert [r.error is None for r in read] == [True, False, True]
    assert read[1].error.startswith("malformed ARC header line")
    assert (read[2].target_uri, read[2].block) == ("http://arc.example/after", ARC_PAGE)


# -- responses that are not HTTP ----------------------------------------------------------------


@pytest.mark.parametrize("codec", list(Codec))
def test_a_response_whose_head_is_not_http_is_counted_and_carried(
    tmp_path: Path, codec: Codec, write_archive
) -> None:
    page = http_response(b"<html><body><p>A page.</p></body></html>")
    records = [
        warc_record("response", "http://h.example/a", page),
        warc_record("response", "http://h.example/b", page.replace(b"HTTP/1.1", b"HTTPX/1.1")),
        warc_record("response", "https://h.example/c", page.replace(b" 200 OK", b" OK")),
        warc_record("response", "dns:h.example", b"20240501120000\nh.example. 60 IN A 1.2.3.4\n",
                    content_type="text/dns"),
        warc_record("response", "http://h.example/empty", b""),
        warc_record("response", "http://h.example/d", b"HTTP/1.1 200 OK\r\nServer: x\r\n"),
    ]
    (tmp_path / "in").mkdir()
    src = write_archive(tmp_path / "in" / f"h.warc{codec.suffix}", records, codec)
    result = run_clean(src, tmp_path / "out", format=OutputFormat.JSONL)
    assert (result["records"], result["pages"], result["carried"]) == (6, 1, 5)
    assert result["problems"] == {"HTTP response with a malformed status line": 2,
                                  "HTTP response head without an end": 1}
    run_clean(src, tmp_path / "warc")
    _, *written = iter_records(tmp_path / "warc" / src.name)
    assert [r.to_bytes() for r in written[1:]] == [r.to_bytes() for r in iter_records(src)][1:]


# -- a gzip member or zstd frame cut after its record --------------------------------------------


@pytest.mark.parametrize("packing", ["gzip", "zstd", "one-member"])
def test_a_file_missing_its_last_byte_says_its_last_member_is_truncated(
    tmp_path: Path, packing: str
) -> None:
    """The last member (or frame) lost only its trailer: its record is read whole and cleaned,
    and the one problem says what happened (not that records share members)."""
    src = tmp_path / "in" / f"cut{PACKINGS[packing]}"
    src.parent.mkdir()
    src.write_bytes(pack(raw(PAGES), packing)[:-1])
    read = list(iter_records(src))
    assert [(r.headers, r.block, r.error) for r in read] == [(h, b, None) for h, b in PAGES]
    damage = "zstd frame is truncated" if packing == "zstd" else "gzip member is truncated"
    assert read[-1].repairs == (damage,)
    if packing != "one-member":
        assert read[-1].addressable and read[-1].offset + read[-1].length == src.stat().st_size
        assert read_record_at(src, read[-1].offset, read[-1].length).block == PAGES[-1][1]
    result = run_clean(src.parent, tmp_path / "out", format=OutputFormat.JSONL)
    assert (result["records"], result["pages"], result["skipped"]) == (6, 5, 0)
    assert result["problems"] == {damage: 1} | (
        {UNADDRESSABLE: 1} if packing == "one-member" else {})
    tally = recompress_file(src, tmp_path / "fixed.warc.gz")
    assert (tally.records, tally.problems) == (6, {damage: 1})


def test_a_whole_file_gzip_is_one_problem_not_one_per_record(tmp_path: Path) -> None:
    src = tmp_path / "in" / "whole.warc.gz"
    src.parent.mkdir()
    src.write_bytes(pack(raw(PAGES), "one-member"))
    result = run_clean(src.parent, tmp_path / "out")
    assert (result["records"], result["pages"]) == (6, 5)
    assert result["problems"] == {UNADDRESSABLE: 1}


# What the checks cannot tell (docs/messy-archives.md, known limitations).


def test_a_length_ending_exactly_where_a_later_record_starts_is_not_told(tmp_path: Path) -> None:
    records = raw(PAGES)
    # Record 3 declares its block and record 4: record 5 follows its declared end.
    records[2] = declare_length(records[2], len(PAGES[2][1]) + len(records[3]))
    src = tmp_path / "exact.warc"
    src.write_bytes(b"".join(records))
    read = list(iter_records(src))
    assert [r.record_id for r in read] == [h[1][1] for h, _ in PAGES[:3] + PAGES[4:]]
    assert read[2].error is None
    assert read[2].block == PAGES[2][1] + b"\r\n\r\n" + records[3][:-4]


def test_a_block_declared_too_long_that_holds_a_warc_is_cut_at_its_first_record(
    tmp_path: Path,
) -> None:
    inner = b"".join(raw(PAGES[1:3]))
    archived = warc_record("resource", "http://a.example/x.warc", inner,
                           content_type="application/warc")
    records = raw([PAGES[0], archived, PAGES[3]])
    records[1] = declare_length(records[1], 99_999_999)
    src = tmp_path / "nested.warc"
    src.write_bytes(b"".join(records))
    read = list(iter_records(src))
    assert [r.record_id for r in read] == [h[1][1] for h, _ in [PAGES[0], archived, *PAGES[1:4]]]
    assert read[1].error == OVERLONG and read[1].block == b""


def test_missing_and_duplicated_headers(tmp_path: Path) -> None:
    records = raw()
    records[2] = records[2].replace(b"Content-Length:", b"X-No-Length:", 1)  # cannot delimit
    records[3] = records[3].replace(b"WARC-Type: request\r\n", b"", 1)  # no type: carried
    records[6] = records[6].replace(b"WARC-Target-URI:", b"WARC-Target-URI: http://dup/\r\n"
                                    b"WARC-Target-URI:", 1)
    src = tmp_path / "headers.warc"
    src.write_bytes(b"".join(records))
    read = list(iter_records(src))
    assert read[2].error is not None and not read[2].headers
    assert [r.record_id for r in read[3:]] == [r[0][1][1] for r in RECORDS[3:]]
    result = run_clean(src, tmp_path / "out")
    assert result["skipped"] == 1
    assert_valid_output(tmp_path / "out" / "headers.warc")


def test_nul_bytes_between_records(tmp_path: Path) -> None:
    src = tmp_path / "nul.warc"
    src.write_bytes(b"\0\0\r\n".join(raw()))
    assert [r.to_bytes() for r in iter_records(src)] == raw()


@pytest.mark.parametrize(
    "url",
    ["http://example.com/a page with spaces", "http://bücher.example/straße", "", "not a url"],
)
def test_odd_urls_are_cleaned_without_trouble(tmp_path: Path, url: str, write_archive) -> None:
    html = b"<html><body><nav>Menu</nav><p>Body text</p></body></html>"
    records = [warc_record("response", url, http_response(html))]
    src = write_archive(tmp_path / "u.warc", records, Codec.NONE)
    result = run_clean(src, tmp_path / "out", format=OutputFormat.JSONL)
    assert result["pages"] == 1 and result["problems"] == {}


# -- payloads -----------------------------------------------------------------------------


def page_record(body: bytes, headers: list[tuple[str, str]]):
    return iter_records_of(http_response(body, headers))


def iter_records_of(block: bytes):
    from warcdeboil.warc.reader import WarcRecord

    return WarcRecord(0, 0, "WARC/1.0", [("WARC-Type", "response"),
                                         ("WARC-Target-URI", "http://x.example/")], block)


@pytest.mark.parametrize(
    ("body", "content_type", "text"),
    [
        ("<p>café crème</p>".encode("cp1252"), "text/html; charset=utf-8", "café crème"),
        ("<p>Съешь же ещё этих мягких булок</p>".encode("koi8_r"),
         "text/html; charset=koi8-r", "Съешь же ещё этих мягких булок"),
        ("<meta charset='windows-1251'><p>Привет, мир</p>".encode("cp1251"), "text/html",
         "Привет, мир"),
        ("<meta charset='gb2312'><p>北京欢迎你</p>".encode("gb18030"), "text/html", "北京欢迎你"),
        ("<meta charset='shift_jis'><p>日本語のページ</p>".encode("cp932"), "text/html",
         "日本語のページ"),
        ("<meta charset='euc-kr'><p>한국어 페이지</p>".encode("cp949"), "text/html",
         "한국어 페이지"),
        ("\ufeff<p>Ωμέγα</p>".encode("utf-16-le"), "text/html", "Ωμέγα"),
    ],
)
def test_charsets(body: bytes, content_type: str, text: str) -> None:
    from warcdeboil.page.dom import analyse, clean_text

    page = html_page(page_record(body, [("Content-Type", content_type)]))
    assert page is not None
    assert clean_text(analyse(page.markup), set()).text == text


def test_broken_chunking_keeps_the_page() -> None:
    body = b"20\r\n<html><body><p>Hello chunked world</p>\r\nzz\r\n"
    page = html_page(page_record(body, [("Content-Type", "text/html"),
                                        ("Transfer-Encoding", "chunked")]))
    assert page is not None and b"Hello chunked world" in page.body


@pytest.mark.parametrize(
    ("body", "headers", "reason"),
    [
        (b"<html><body>" + b"<p>" + b"x" * 1000 + b"</p>" * 1 + b"</body></html>", [],
         "payload is too large"),
        (b"<html><body>" + b"<div>" * 90_000 + b"x" + b"</div>" * 90_000, [],
         "page nests too deep"),
        (b"<html><body>" + b"<div>a</div>" * 1_000_000, [], "page has too many tags"),
        (gzip.compress(b"<html>" + b" " * (64 << 20)), [("Content-Encoding", "gzip")],
         "gzip body inflates past the limit"),
    ],
)
def test_hostile_pages_pass_through_with_a_reason(body, headers, reason, tmp_path: Path,
                                                  write_archive) -> None:
    limits = PageLimits(max_bytes=900 if reason == "payload is too large" else 16 << 20)
    records = [warc_record("response", "http://h.example/", http_response(
        body, [("Content-Type", "text/html"), *headers]))]
    src = write_archive(tmp_path / "h.warc", records, Codec.NONE)
    result = run_clean(src, tmp_path / "out", limits=limits)
    assert (result["pages"], result["carried"]) == (0, 1)
    assert list(result["problems"]) == [reason]
    info, carried = iter_records(tmp_path / "out" / "h.warc")
    assert info.rec_type == "warcinfo"
    assert carried.to_bytes() == src.read_bytes()


# -- whole inputs -------------------------------------------------------------------------


def test_empty_non_warc_and_unreadable_inputs_do_not_stop_the_run(
    tmp_path: Path, write_archive, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = tmp_path / "in"
    src.mkdir()
    (src / "empty.warc").write_bytes(b"")
    (src / "notes.warc.gz").write_bytes(gzip.compress(b"just some text\n"))
    (src / "secret.warc").write_bytes(b"WARC/1.0\r\n")
    write_archive(src / "good.warc", RECORDS, Codec.NONE)
    real_open = open

    def guarded_open(path, *args, **kwargs):
        if str(path).endswith("secret.warc"):
            raise PermissionError(13, "Permission denied")
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr("builtins.open", guarded_open)
    summary = clean([src], tmp_path / "out", Options(workers=1))
    by_name = {Path(t.path).name: t for t in summary.files}
    assert by_name["empty.warc"].records == 0
    assert by_name["notes.warc.gz"].skipped == 1
    assert list(by_name["notes.warc.gz"].problems) == ["not a WARC or ARC record"]
    assert list(by_name["secret.warc"].problems) == ["cannot open"]
    assert by_name["good.warc"].records == len(RECORDS)
    monkeypatch.undo()
    assert [p.name for p in outputs_of(tmp_path / "out")] == [
        "empty.warc", "good.warc", "notes.warc.gz"]


def test_on_error_fail_stops_with_one_line(tmp_path: Path) -> None:
    src = tmp_path / "cut.warc.gz"
    src.write_bytes(b"".join(member(r) for r in raw())[:-40])
    result = CliRunner().invoke(app, ["clean", str(src), "-o", str(tmp_path / "out"),
                                      "--on-error", "fail", "-j", "1"])
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1
    assert f"{src}@" in result.stderr and "truncated" in result.stderr
    assert not (tmp_path / "out" / "cut.warc.gz").exists()


def test_skip_is_the_default_and_exits_3(tmp_path: Path) -> None:
    src = tmp_path / "cut.warc.gz"
    src.write_bytes(b"".join(member(r) for r in raw())[:-40])
    result = CliRunner().invoke(app, ["clean", str(src), "-o", str(tmp_path / "out"), "-q",
                                      "--json", "-j", "1"])
    assert result.exit_code == 3
    assert json.loads(result.stdout)["problems"]
