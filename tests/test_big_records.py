"""Records of any size, and stretches that are no record at all, in bounded memory.

The large archives are generated here from repeated content, so a 1.1 GiB record is a few MB on
disk. Peak memory is measured as the ru_maxrss of a child process running the command line.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import random
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import zstandard
from conftest import FIXTURES, arc_record, http_response, outputs_of, pack, shared_file, warc_record
from isal import isal_zlib

from warcdeboil.page.html import PageLimits
from warcdeboil.run.local import clean
from warcdeboil.run.options import Options
from warcdeboil.warc.compression import Codec, Kind
from warcdeboil.warc.reader import SPILL_BYTES, WarcRecord, iter_records, read_record_at
from warcdeboil.warc.recompress import recompress_file
from warcdeboil.warc.writer import WarcWriter, serialise, stream_digests
from warcdeboil.warc.zstdio import iter_frame_segments

MiB = 1 << 20
_PATTERN = random.Random(7).randbytes(16 << 10)  # repeats within deflate's window: compresses
PAGE = http_response(b"<html><head><title>A page</title></head><body><p>Hello there, a page "
                     b"with some words.</p></body></html>", [("Content-Type", "text/html")])


def pattern(size: int) -> Iterator[bytes]:
    """``size`` bytes of a repeated pseudo-random pattern, a MiB at a time."""
    piece = _PATTERN * (MiB // len(_PATTERN))
    while size > 0:
        yield piece[:size]
        size -= len(piece)


def media_head(size: int, digest: str | None = None) -> bytes:
    fields = [("WARC-Type", "resource"), ("WARC-Target-URI", "http://example.com/clip.mp4"),
              ("WARC-Record-ID", "<urn:uuid:00000000-0000-4000-8000-000000000001>"),
              ("WARC-Date", "2024-01-01T00:00:00Z"), ("Content-Type", "video/mp4")]
    if digest is not None:
        fields.append(("WARC-Block-Digest", digest))
    fields.append(("Content-Length", str(size)))
    return serialise("WARC/1.1", fields, b"")[:-4]


def page_record(url: str = "http://example.com/a") -> bytes:
    headers, block = warc_record("response", url, PAGE)
    return serialise("WARC/1.0", headers, block)


def write_record(out: io.BufferedWriter, codec: Codec, pieces: Iterator[bytes] | list[bytes],
                 size: int) -> None:
    """One record (its pieces) as one gzip member or zstd frame, or plain."""
    if codec is Codec.GZIP:
        deflater = isal_zlib.compressobj(3, isal_zlib.DEFLATED, 31)
        for piece in pieces:
            out.write(deflater.compress(piece))
        out.write(deflater.flush())
    elif codec is Codec.ZSTD:
        compressor = zstandard.ZstdCompressor(write_checksum=True).compressobj(size=size)
        for piece in pieces:
            out.write(compressor.compress(piece))
        out.write(compressor.flush())
    else:
        for piece in pieces:
            out.write(piece)


def media_archive(path: Path, size: int, codec: Codec) -> str:
    """A page, a ``video/mp4`` resource of ``size`` bytes, a page; returns the media digest."""
    sha1 = hashlib.sha1()
    for piece in pattern(size):
        sha1.update(piece)
    digest = "sha1:" + base64.b32encode(sha1.digest()).decode("ascii")
    head = media_head(size, digest)
    with open(path, "wb") as out:
        first = page_record("http://example.com/a")
        write_record(out, codec, [first], len(first))
        write_record(out, codec, _chain(head, pattern(size)), len(head) + size + 4)
        last = page_record("http://example.com/b")
        write_record(out, codec, [last], len(last))
    return digest


def _chain(head: bytes, body: Iterator[bytes]) -> Iterator[bytes]:
    yield head
    yield from body
    yield b"\r\n\r\n"


# Runs a command and writes its exit status and peak RSS (KiB) to the file named first. The
# command is started from this small process, not from the test run: on Linux a child's
# ru_maxrss starts at the RSS of the process it was forked from (exec keeps the high-water mark).
_MEASURE = """
import json, os, subprocess, sys
child = subprocess.Popen(sys.argv[2:])
_, status, usage = os.wait4(child.pid, 0)
with open(sys.argv[1], "w") as fh:
    json.dump([os.waitstatus_to_exitcode(status), usage.ru_maxrss], fh)
"""


def run_cli(*args: str) -> tuple[int, float, float, dict]:
    """Run ``warcdeboil clean ARGS --json`` in a child: (exit status, peak RSS in MB, seconds,
    the summary)."""
    started = time.monotonic()
    report = Path(args[args.index("-o") + 1]).with_suffix(".rusage")
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(report), sys.executable, "-m", "warcdeboil",
         "clean", *args, "--json", "-q", "-j", "1"],
        stdout=subprocess.PIPE, text=True, check=True)
    seconds = time.monotonic() - started
    status, rss = json.loads(report.read_text())
    print(f"warcdeboil clean {' '.join(args)}: {seconds:.1f} s, {rss >> 10} MB")
    return status, rss / 1024, seconds, json.loads(done.stdout)


def file_sha1(path: Path, offset: int, length: int) -> str:
    sha1 = hashlib.sha1()
    with open(path, "rb") as fh:
        fh.seek(offset)
        while length > 0:
            chunk = fh.read(min(length, MiB))
            assert chunk
            sha1.update(chunk)
            length -= len(chunk)
    return sha1.hexdigest()


def block_digest(record: WarcRecord) -> str:
    return stream_digests(record.iter_block(), None)[0]


# -- a media record of 1.1 GiB ------------------------------------------------------------

GIANT = 1100 * MiB + 123  # over 1 GiB, the old limit


@pytest.fixture(scope="module")
def giant(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    path = tmp_path_factory.mktemp("giant") / "giant.warc.gz"
    return path, media_archive(path, GIANT, Codec.GZIP)


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["warc", "warc-zstd", "jsonl"])
def test_a_media_record_over_a_gib_goes_through_in_bounded_memory(
    giant: tuple[Path, str], tmp_path: Path, fmt: str
) -> None:
    src, digest = giant
    options = ["--format", "jsonl"] if fmt == "jsonl" else ["--compress", "zstd"] * (
        fmt == "warc-zstd")
    status, rss, _, summary = run_cli(str(src), "-o", str(tmp_path), *options)
    assert status == 0 and not summary["problems"]
    assert (summary["records"], summary["pages"], summary["carried"]) == (3, 2, 1)
    assert rss < 1024, f"peak RSS {rss:.0f} MB"
    if fmt == "jsonl":
        return
    (out,) = outputs_of(tmp_path)
    records = list(iter_records(out))
    assert records[0].rec_type == "warcinfo"  # the output's own (see Provenance)
    media = records[2]
    assert media.get("WARC-Block-Digest") == digest == block_digest(media)
    assert media.block_size == GIANT and media.spill is not None
    assert media.addressable  # its own gzip member or zstd frame
    if fmt == "warc":  # same codec: its compressed bytes are copied unchanged
        original = list(iter_records(src))[1]
        assert (file_sha1(out, media.offset, media.length)
                == file_sha1(src, original.offset, original.length))


# -- declared lengths are claims, not allocations -----------------------------------------


@pytest.mark.parametrize("followed", [False, True])
def test_a_declared_4_gib_block_in_a_small_file_ends_where_its_bytes_do(
    tmp_path: Path, followed: bool
) -> None:
    src = tmp_path / "in" / "liar.warc.gz"
    src.parent.mkdir()
    real = 4 * MiB
    head = media_head(4 << 30)
    with open(src, "wb") as out:
        write_record(out, Codec.GZIP, [head, *pattern(real)], len(head) + real)
        if followed:
            page = page_record()
            write_record(out, Codec.GZIP, [page], len(page))
    status, rss, seconds, summary = run_cli(str(src), "-o", str(tmp_path / "out"))
    assert status == 3 and rss < 150 and seconds < 60
    reason = ("Content-Length runs past the end of the record" if followed
              else "record is truncated")
    assert summary["problems"] == {reason: 1}
    assert summary["pages"] == int(followed)
    info, *kept = iter_records(tmp_path / "out" / "liar.warc.gz")  # the output's warcinfo first
    assert info.rec_type == "warcinfo"
    assert len(kept) == 1 + followed and all(r.error is None for r in kept)
    survivor = kept[0]
    assert survivor.block_size == real and survivor.get("Content-Length") == str(real)
    assert survivor.get("WARC-Block-Digest") == block_digest(survivor)
    assert survivor.get("WARC-Truncated") == (None if followed else "length")


# -- stretches that are no record ---------------------------------------------------------


@pytest.mark.parametrize("size", [16, 256 * MiB])
def test_a_member_of_nul_bytes_is_a_counted_problem(tmp_path: Path, size: int) -> None:
    src = tmp_path / "in" / "nul.warc.gz"
    src.parent.mkdir()
    with open(src, "wb") as out:
        for piece in ([page_record("http://example.com/a")], None, [page_record()]):
            if piece is None:
                zeros = bytes(min(size, MiB))
                write_record(out, Codec.GZIP, (zeros[: size - i] for i in range(0, size, MiB)),
                             size)
            else:
                write_record(out, Codec.GZIP, piece, len(piece[0]))
    status, rss, _, summary = run_cli(str(src), "-o", str(tmp_path / "out"))
    assert status == 3 and rss < 150
    assert summary["problems"] == {"no record header": 1}
    assert (summary["records"], summary["pages"], summary["skipped"]) == (3, 2, 1)


def test_a_member_that_holds_no_record_is_skipped_streaming(tmp_path: Path) -> None:
    src = tmp_path / "in" / "notes.warc.gz"
    src.parent.mkdir()
    text = b"Some notes, not an archive at all. " * 30000
    with open(src, "wb") as out:
        page = page_record("http://example.com/a")
        write_record(out, Codec.GZIP, [page], len(page))
        write_record(out, Codec.GZIP, [text] * 64, len(text) * 64)  # 64 MiB of it
        page = page_record()
        write_record(out, Codec.GZIP, [page], len(page))
    status, rss, _, summary = run_cli(str(src), "-o", str(tmp_path / "out"))
    assert status == 3 and rss < 150
    assert summary["problems"] == {"not a WARC or ARC record": 1}
    assert (summary["records"], summary["pages"], summary["skipped"]) == (3, 2, 1)


# -- the spilled path reads what the held path reads ---------------------------------------


def _fields(record: WarcRecord) -> tuple:
    return (record.offset, record.length, record.version, record.headers, record.block,
            record.error, record.addressable, record.framed, record.converted, record.repairs)


READ_BACK = sorted(p for p in FIXTURES.rglob("*") if p.name.endswith(
    (".warc", ".warc.gz", ".warc.zst", ".arc", ".arc.gz")))


@pytest.mark.parametrize("path", READ_BACK, ids=lambda p: p.name)
def test_spilling_every_block_reads_the_same_records(path: Path) -> None:
    spilled = list(iter_records(path, spill_bytes=0))
    assert [_fields(r) for r in spilled] == [_fields(r) for r in iter_records(path)]
    assert any(r.spill is not None for r in spilled)


@pytest.mark.parametrize("name", [
    "webrecorder__pywb__example-bad.warc.gz.bad", "webrecorder__warcio__example-trunc.warc",
    "chatnoir-eu__chatnoir-resiliparse__clipped.warc.gz", "archivesunleashed__aut__example.arc.gz",
    "archivesunleashed__aut__badexample.arc.gz", "archivesunleashed__aut__issue-514.warc",
    "webrecorder__warcio__example-iana.org-chunked.warc",
])
def test_spilling_reads_the_same_records_of_damaged_real_files(name: str) -> None:
    path = shared_file("warcs", name)
    assert [_fields(r) for r in iter_records(path, spill_bytes=0)] == [
        _fields(r) for r in iter_records(path)]


@pytest.mark.parametrize("codec", list(Codec))
@pytest.mark.parametrize("delta", [-7, 9, 300, 5000])
def test_spilling_reads_a_wrong_content_length_as_holding_does(
    tmp_path: Path, codec: Codec, delta: int
) -> None:
    records = [page_record(f"http://example.com/{i}") for i in range(4)]
    head, _, rest = records[1].partition(b"Content-Length: ")
    length, _, tail = rest.partition(b"\r\n")
    records[1] = head + b"Content-Length: %d\r\n" % (int(length) + delta) + tail
    src = tmp_path / f"wrong.warc{codec.suffix}"
    with open(src, "wb") as out:
        for record in records:
            write_record(out, codec, [record], len(record))
    held = [_fields(r) for r in iter_records(src)]
    assert [_fields(r) for r in iter_records(src, spill_bytes=0)] == held
    assert any(fields[5] is not None for fields in held)  # the damage is told


@pytest.mark.parametrize("packing", ["plain", "gzip", "one-member"])
@pytest.mark.parametrize("length", [-1, 99_999_999, 40], ids=["-1", "99999999", "+40"])
def test_spilling_reads_an_arc_length_that_lies_as_holding_does(
    tmp_path: Path, packing: str, length: int
) -> None:
    """An ARC record declaring no length (read to the next header line as it is searched), one
    past the end of the file, or one ending inside the next record."""
    # Longer than a piece of input (a MiB): the search for the next header goes on past one.
    page = http_response(b"<html><body><p>" + b"words " * (400 << 10) + b"</p></body></html>")
    declared = len(page) + length if length == 40 else length
    records = [arc_record("filedesc://x.arc", b"1 0 test\n")]
    records += [arc_record(f"http://arc.example/{i}", page, declared if i == 1 else None)
                for i in range(4)]
    src = tmp_path / ("x.arc" + (".gz" if packing != "plain" else ""))
    src.write_bytes(pack(records, packing))
    held = [_fields(r) for r in iter_records(src)]
    assert [_fields(r) for r in iter_records(src, spill_bytes=0)] == held
    assert [fields[4] for fields in held[1:]] == [page] * 4


# -- other codecs, and the pieces under them -----------------------------------------------


@pytest.mark.parametrize("codec", list(Codec))
def test_a_record_above_the_spill_size_is_carried_unchanged(tmp_path: Path, codec: Codec) -> None:
    size = SPILL_BYTES + 3 * MiB + 5
    src = tmp_path / "in" / f"media.warc{codec.suffix}"
    src.parent.mkdir()
    digest = media_archive(src, size, codec)
    tally = clean([src], tmp_path / "out", Options(workers=1)).files[0]
    assert (tally.records, tally.cleaned, tally.carried) == (3, 2, 1)
    assert not tally.problems
    out = tmp_path / "out" / src.name
    media = list(iter_records(out))[2]  # after the output's warcinfo and the first page
    assert media.spill is not None and media.block_size == size
    assert media.get("WARC-Block-Digest") == digest == block_digest(media)
    original = list(iter_records(src))[1]
    assert media.to_bytes() == original.to_bytes()
    again = read_record_at(src, original.offset, original.length)  # by offset: streamed too
    assert again.spill is not None and block_digest(again) == digest


def test_a_zstd_frame_comes_in_pieces(tmp_path: Path) -> None:
    data = b"".join(pattern(20 * MiB + 1))
    frame = zstandard.ZstdCompressor().compress(data)
    segments = list(iter_frame_segments(io.BytesIO(frame + frame), piece=4 * MiB))
    assert b"".join(s.data for s in segments) == data + data
    first = [s for s in segments if s.offset == 0]
    assert len(first) >= 5 and first[0].kind is Kind.START
    assert all(s.kind is Kind.INNER for s in first[1:])
    assert [s.end for s in first] == [-1] * (len(first) - 1) + [len(frame)]


@pytest.mark.parametrize("codec", list(Codec))
def test_a_record_written_in_pieces_is_one_member_or_frame(codec: Codec) -> None:
    record = b"WARC/1.0\r\nContent-Length: 6\r\n\r\nabcdef\r\n\r\n"
    out = io.BytesIO()
    WarcWriter(out, codec).write_raw_pieces([record[:5], record[5:20], record[20:]], len(record))
    whole = io.BytesIO()
    WarcWriter(whole, codec).write_raw(record)
    if codec is Codec.ZSTD:
        assert zstandard.frame_content_size(out.getvalue()) == len(record)
        assert zstandard.ZstdDecompressor().decompress(out.getvalue()) == record
    elif codec is Codec.GZIP:
        inflater = isal_zlib.decompressobj(31)
        assert inflater.decompress(out.getvalue()) == record and not inflater.unused_data
    else:
        assert out.getvalue() == whole.getvalue()


def test_recompress_streams_a_record_above_the_spill_size(tmp_path: Path) -> None:
    size = SPILL_BYTES + MiB + 1
    src = tmp_path / "media.warc"
    digest = media_archive(src, size, Codec.NONE)
    tally = recompress_file(src, tmp_path / "media.warc.zst", Codec.ZSTD)
    assert (tally.records, tally.carried, dict(tally.problems)) == (3, 3, {})
    again = list(iter_records(tmp_path / "media.warc.zst"))
    assert [r.addressable for r in again] == [True] * 3
    assert again[1].block_size == size and block_digest(again[1]) == digest


@pytest.mark.parametrize("max_page_mb", [16, 32])
def test_a_page_above_the_spill_size_is_cleaned_or_carried_by_the_page_limit(
    tmp_path: Path, max_page_mb: int
) -> None:
    words = b"<p>" + b"a word or two " * (SPILL_BYTES // 14 + 1000) + b"</p>"
    body = b"<html><head><title>Long</title></head><body>" + words + b"</body></html>"
    headers, block = warc_record("response", "http://example.com/long",
                                 http_response(body, [("Content-Type", "text/html")]))
    src = tmp_path / "in" / "long.warc"
    src.parent.mkdir()
    src.write_bytes(serialise("WARC/1.0", headers, block) + page_record())
    limits = PageLimits(max_bytes=max_page_mb * MiB)
    tally = clean([src], tmp_path / "out", Options(workers=1, limits=limits)).files[0]
    out = tmp_path / "out" / "long.warc"
    if max_page_mb == 16:  # too large: carried as it is, with the reason
        assert (tally.cleaned, tally.carried) == (1, 1)
        assert dict(tally.problems) == {"payload is too large": 1}
        info = next(iter_records(out))  # the output's warcinfo, then the page as it was
        start = info.offset + info.length
        assert out.read_bytes()[start : start + len(block)] == src.read_bytes()[: len(block)]
    else:  # within the limit: read into memory and cleaned like any page
        assert (tally.cleaned, tally.carried, dict(tally.problems)) == (2, 0, {})
        cleaned = list(iter_records(out))[1]  # after the output's warcinfo
        assert cleaned.get("WARC-Block-Digest") == block_digest(cleaned)
        assert b"a word or two" in cleaned.block_head(1 << 20)


def test_a_plain_stretch_that_is_no_record_is_searched_streaming(tmp_path: Path) -> None:
    src = tmp_path / "in" / "notes.warc"
    src.parent.mkdir()
    with open(src, "wb") as out:
        out.write(page_record("http://example.com/a"))
        for _ in range(64):
            out.write(b"Some notes, not an archive at all.\n" * 30000)  # 1 MB each
        out.write(page_record())
    status, rss, _, summary = run_cli(str(src), "-o", str(tmp_path / "out"))
    assert status == 3 and rss < 150
    assert summary["problems"] == {"not a WARC or ARC record": 1}
    assert (summary["records"], summary["pages"], summary["skipped"]) == (3, 2, 1)
