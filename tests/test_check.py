"""``warcdeboil check``: records, lengths and declared digests verified, problems by reason and
offset, nothing written; the same verdicts as ``warcio check`` where both read the same bytes."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

import pytest
from conftest import FIXTURES, ArchiveBuilder, http_response, shared_file, warc_record
from typer.testing import CliRunner

from warcdeboil.cli import app
from warcdeboil.warc.check import BLOCK_MISMATCH, PAYLOAD_MISMATCH, check_file, digest_matches
from warcdeboil.warc.compression import Codec

runner = CliRunner()
PAGE = http_response(b"<html><body><p>A sound page.</p></body></html>")


@pytest.mark.parametrize("name", ["sample.warc", "sample.warc.gz", "sample.warc.zst",
                                  "sample-dict.warc.zst"])
def test_a_sound_archive_passes(name: str) -> None:
    from warcio.archiveiterator import ArchiveIterator

    report = check_file(str(FIXTURES / "codecs" / name))
    assert report.problems == {}
    with open(FIXTURES / "codecs" / "sample.warc", "rb") as fh:
        records = list(ArchiveIterator(fh))
    assert report.records == len(records)
    declared = sum(bool(r.rec_headers.get_header("WARC-Block-Digest")) for r in records)
    assert report.digests >= declared > 0  # every block digest, and the payload digests


@pytest.mark.parametrize("codec", list(Codec))
def test_a_changed_byte_is_found_with_its_offset(tmp_path: Path, write_archive: ArchiveBuilder,
                                                 codec: Codec,
                                                 caplog: pytest.LogCaptureFixture) -> None:
    good = warc_record("response", "http://a.example/", PAGE)
    headers, block = warc_record("response", "http://a.example/b", PAGE)
    spoiled = (headers, block.replace(b"sound", b"SOUND"))  # the digests are the old bytes'
    path = write_archive(tmp_path / f"x.warc{codec.suffix}", [good, spoiled, good], codec)
    done = runner.invoke(app, ["check", str(path), "--json"])
    assert done.exit_code == 3
    data = json.loads(done.stdout)
    assert data["records"] == 3 and data["digests"] == 6
    assert data["problems"] == {BLOCK_MISMATCH: 1, PAYLOAD_MISMATCH: 1}
    from warcdeboil.warc.reader import iter_records

    second = [r.offset for r in iter_records(path)][1]
    caplog.clear()
    assert check_file(str(path)).problems == {BLOCK_MISMATCH: 1, PAYLOAD_MISMATCH: 1}
    assert [r.getMessage() for r in caplog.records] == [
        f"{path}@{second}: {BLOCK_MISMATCH}", f"{path}@{second}: {PAYLOAD_MISMATCH}"]


def test_a_record_cut_short_is_its_reason_not_a_digest(tmp_path: Path,
                                                       write_archive: ArchiveBuilder) -> None:
    path = write_archive(tmp_path / "x.warc", [warc_record("response", "http://a.example/",
                                                           PAGE)], Codec.NONE)
    path.write_bytes(path.read_bytes()[:-30])
    report = check_file(str(path))
    assert report.records == 1 and report.digests == 0
    assert list(report.problems) == ["record is truncated"]


def test_digests_in_other_algorithms_and_encodings() -> None:
    data = [b"some ", b"bytes"]
    whole = b"".join(data)
    sha256 = hashlib.sha256(whole).digest()
    assert digest_matches("sha256:" + base64.b32encode(sha256).decode(), data)
    assert digest_matches("sha-256:" + sha256.hex(), data)
    assert digest_matches("md5:" + hashlib.md5(whole).hexdigest(), data)
    assert digest_matches("sha1:" + hashlib.sha1(whole).hexdigest().upper(), data)
    assert digest_matches("sha1:" + hashlib.sha1(b"other").hexdigest(), data) is False
    assert digest_matches("crc32:12345678", data) is None
    assert digest_matches("sha1:not-a-digest", data) is None


def test_an_unreadable_input_is_counted_and_the_others_checked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from warcdeboil.errors import InputError
    from warcdeboil.warc import check

    def refuse(path: str):  # as the reader refuses a file it cannot open
        if path.endswith("gone.warc.gz"):
            raise InputError(f"{path}: cannot open (Permission denied)")
        return iter_records(path)

    iter_records = check.iter_records
    monkeypatch.setattr(check, "iter_records", refuse)
    (tmp_path / "gone.warc.gz").write_bytes(b"")
    done = runner.invoke(app, ["check", str(tmp_path / "gone.warc.gz"),
                               str(FIXTURES / "codecs" / "sample.warc.gz"), "--json"])
    data = json.loads(done.stdout)
    assert done.exit_code == 3 and data["inputs"] == 2
    assert data["files"][0]["problems"] == {"cannot open": 1}
    assert data["files"][1]["problems"] == {} and data["files"][1]["records"] > 0


def test_nothing_is_written(tmp_path: Path) -> None:
    before = sorted(p.name for p in tmp_path.iterdir())
    done = runner.invoke(app, ["check", str(FIXTURES / "crawl"), "-q"])
    assert done.exit_code == 0 and done.output == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == before


@pytest.mark.parametrize(("name", "expected"), [
    # warcio check reports the same failures on these files
    ("webrecorder__pywb__example-extra.warc", {PAYLOAD_MISMATCH: 1}),
    ("webrecorder__warcio__example-trunc.warc", {BLOCK_MISMATCH: 1, PAYLOAD_MISMATCH: 1}),
    ("webrecorder__pywb__iana.warc.gz", {}),
    ("iipc__jwarc__cc.warc.gz", {}),
    # node-warc declares the digest of the whole block as the payload's: warcio, which does not
    # parse these records' HTTP heads, compares it with the block and passes it
    ("N0taN3rd__node-warc__parseMe.warc.gz", {PAYLOAD_MISMATCH: 2}),
])
def test_real_archives(name: str, expected: dict[str, int]) -> None:
    assert dict(check_file(str(shared_file("warcs", name))).problems) == expected
