"""Gzip output of WarcWriter: standard gzip members (ISA-L deflates them), one per record."""

from __future__ import annotations

import gzip
import io
import shutil
import subprocess
import zlib
from pathlib import Path

import pytest
from conftest import warcio_check

from warcdeboil.warc.compression import Codec
from warcdeboil.warc.reader import iter_records
from warcdeboil.warc.writer import WarcWriter, rebuild_record, serialise

PAGE = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n" + b"<p>Bees and borage.</p>\n" * 400


def _records() -> list[bytes]:
    out = []
    for i in range(3):
        headers = [("WARC-Type", "response"), ("WARC-Target-URI", f"http://example.org/{i}"),
                   ("WARC-Record-ID", f"<urn:uuid:00000000-0000-0000-0000-00000000000{i}>"),
                   ("WARC-Date", "2024-01-01T00:00:00Z"),
                   ("Content-Type", "application/http; msgtype=response")]
        block = PAGE + str(i).encode()
        payload_offset = PAGE.index(b"\r\n\r\n") + 4
        out.append(serialise("WARC/1.0", rebuild_record(headers, block, payload_offset), block))
    return out


def _write(records: list[bytes]) -> bytes:
    out = io.BytesIO()
    writer = WarcWriter(out, Codec.GZIP)
    writer.write_raw(records[0])
    # Pieces as recompress gives them: the head, then the block (ISA-L's level 2 deflates
    # a first piece of a few bytes poorly: 7 bytes first took this record from 388 to 5367).
    pieces = [records[1][:300], records[1][300:5000], records[1][5000:]]
    writer.write_raw_pieces(pieces, len(records[1]))
    writer.write_raw(records[2])
    return out.getvalue()


def test_each_record_is_one_standard_gzip_member() -> None:
    records = _records()
    data = _write(records)
    rest, members = data, []
    while rest:  # stdlib zlib splits the members: no ISA-L needed to read them back
        inflater = zlib.decompressobj(31)
        members.append(inflater.decompress(rest))
        assert inflater.eof
        assert rest[:10] == b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"  # no name, mtime 0
        rest = inflater.unused_data
    assert members == records
    assert gzip.decompress(data) == b"".join(records)
    assert len(data) < len(b"".join(records)) // 10  # deflated, not stored


def test_gzip_output_is_the_same_bytes_every_time() -> None:
    assert _write(_records()) == _write(_records())


def test_gzip_tools_and_warcio_read_the_output(tmp_path: Path) -> None:
    path = tmp_path / "out.warc.gz"
    path.write_bytes(_write(_records()))
    assert warcio_check(path) == (0, "")
    assert [r.addressable for r in iter_records(path)] == [True] * 3
    gzip_tool = shutil.which("gzip")
    assert gzip_tool is not None
    subprocess.run([gzip_tool, "-t", str(path)], check=True)
    unpacked = subprocess.run([gzip_tool, "-dc", str(path)], check=True, capture_output=True)
    assert unpacked.stdout == b"".join(_records())


def test_a_writer_leaves_the_live_parts_of_other_outputs_alone(tmp_path: Path) -> None:
    """``x.warc`` beside ``x.warc.gz`` (and a name with glob characters): starting one output
    removes stale parts of that output only, never another worker's part of its neighbour."""
    from warcdeboil.warc.writer import AtomicFile

    for name, other in (("x.warc", "x.warc.gz"), ("[a].warc", "[a].warc.zst")):
        live = tmp_path / f".{other}.4242.part"
        stale = tmp_path / f".{name}.4242.part"
        live.write_bytes(b"another worker's output")
        stale.write_bytes(b"left by a killed run")
        with AtomicFile(tmp_path / name) as out:
            out.write(b"WARC")
        assert live.read_bytes() == b"another worker's output"
        assert not stale.exists()
        assert (tmp_path / name).read_bytes() == b"WARC"


@pytest.mark.parametrize("written_over", [False, True], ids=["new", "written-over"])
def test_a_file_beside_never_speaks_for_another_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, written_over: bool
) -> None:
    """An output and the record beside it are renamed into place together; killed between the
    two renames, what is left never pairs the new output with the old record (nor the old
    output with the new one): a new output has its record first, one written over loses the old
    record first."""
    import os

    from warcdeboil.warc.writer import AtomicFile

    output, side = tmp_path / "a.jsonl.gz", tmp_path / ".a.jsonl.gz.options.json"
    if written_over:
        output.write_bytes(b"old output")
        side.write_bytes(b"old record")
    with AtomicFile(output, (side, b"new record")) as out:  # no kill: both, and no part
        out.write(b"new output")
    assert (output.read_bytes(), side.read_bytes()) == (b"new output", b"new record")
    assert sorted(p.name for p in tmp_path.iterdir()) == [side.name, output.name]

    if written_over:
        output.write_bytes(b"old output")
        side.write_bytes(b"old record")
    else:
        output.unlink()
        side.unlink()
    real, renames = os.replace, []

    def killed_after_one(src: object, dst: object) -> None:
        if renames:
            raise KeyboardInterrupt  # what a kill leaves: the first rename done, not the second
        renames.append(dst)
        real(src, dst)

    monkeypatch.setattr(os, "replace", killed_after_one)
    with pytest.raises(KeyboardInterrupt), AtomicFile(output, (side, b"new record")) as out:
        out.write(b"newer output")
    monkeypatch.undo()
    if written_over:  # the new output with no record at all: "unknown"
        assert (output.read_bytes(), side.exists()) == (b"newer output", False)
    else:  # a record with nothing to speak of
        assert (output.exists(), side.read_bytes()) == (False, b"new record")
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".part")]


def test_no_file_beside_an_output_that_failed(tmp_path: Path) -> None:
    from warcdeboil.warc.writer import AtomicFile

    output, side = tmp_path / "a.warc.gz", tmp_path / ".a.warc.gz.options.json"
    with pytest.raises(ValueError), AtomicFile(output, (side, b"record")) as out:
        out.write(b"half")
        raise ValueError("a bad input")
    assert list(tmp_path.iterdir()) == []
