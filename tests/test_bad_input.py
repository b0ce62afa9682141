"""Archives in the wild: every readable record through, every other one accounted for."""

from __future__ import annotations

import gzip
import json
import re
import zlib
from pathlib import Path

import pytest
from conftest import http_response, outputs_of, synthetic_crawl, warc_record, warcio_check
from typer.testing import CliRunner
from warcio.archiveiterator import ArchiveIterator

from warcdeboil.cli import app
from warcdeboil.output.formats import OutputFormat
from warcdeboil.page.html import PageLimits, html_page
from warcdeboil.run.local import clean
from warcdeboil.run.options import Options
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
