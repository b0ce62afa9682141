"""The .warc.zst format: frames per record, dictionaries, skippable frames, damage."""

from __future__ import annotations

import io
import random

import pytest
import zstandard

from warcdeboil.errors import RecordError
from warcdeboil.warc.zstdio import (
    DICTIONARY_FRAME_MAGIC,
    ZstdRecordCompressor,
    decompress_range,
    iter_frames,
    read_dictionary,
    train_dictionary,
)


def records(n: int = 40) -> list[bytes]:
    rng = random.Random(3)
    out = [b""]
    for i in range(n):
        words = b" ".join(rng.choice([b"warc", b"record", b"http", b"header", b"page"])
                          for _ in range(rng.randint(10, 400)))
        out.append(b"WARC/1.1\r\nWARC-Type: response\r\nN: %d\r\n\r\n%s\r\n\r\n" % (i, words))
    out.append(bytes(rng.getrandbits(8) for _ in range(1 << 16)) * 20)  # > 1 MiB
    return out


def archive(recs: list[bytes], dictionary: bytes | None) -> bytes:
    compressor = ZstdRecordCompressor(dictionary=dictionary)
    return compressor.header() + b"".join(compressor.compress(r) for r in recs)


@pytest.fixture(scope="module")
def dictionary() -> bytes:
    return train_dictionary(records(200)[1:-1], size=4096)


@pytest.mark.parametrize("with_dictionary", [False, True])
def test_round_trip(dictionary: bytes, with_dictionary: bool) -> None:
    recs = records()
    data = archive(recs, dictionary if with_dictionary else None)
    frames = list(iter_frames(io.BytesIO(data)))
    assert [f.data for f in frames] == recs
    fh = io.BytesIO(data)
    assert read_dictionary(fh) == (dictionary if with_dictionary else None)
    for frame in frames:
        assert decompress_range(fh, frame.offset, frame.length, read_dictionary(fh)) == frame.data


def test_frames_carry_content_size_and_checksum() -> None:
    frame = ZstdRecordCompressor().compress(b"WARC/1.1\r\n\r\n")
    params = zstandard.get_frame_parameters(frame)
    assert params.content_size == 12
    assert params.has_checksum


def test_compressed_and_raw_dictionary_frames_both_read(dictionary: bytes) -> None:
    raw = DICTIONARY_FRAME_MAGIC.to_bytes(4, "little") + len(dictionary).to_bytes(4, "little")
    data = raw + dictionary + ZstdRecordCompressor(dictionary=dictionary).compress(b"x" * 100)
    assert [f.data for f in iter_frames(io.BytesIO(data))] == [b"x" * 100]


def test_skippable_frames_are_skipped_with_exact_offsets() -> None:
    compressor = ZstdRecordCompressor()
    a, b = compressor.compress(b"first"), compressor.compress(b"second")
    skip = (0x184D2A50).to_bytes(4, "little") + (5).to_bytes(4, "little") + b"hello"
    frames = list(iter_frames(io.BytesIO(a + skip + b)))
    assert [(f.offset, f.data) for f in frames] == [(0, b"first"), (len(a) + 13, b"second")]


def test_frames_without_content_size_read() -> None:
    plain = zstandard.ZstdCompressor(write_content_size=False)
    data = plain.compress(b"abc") + plain.compress(b"def")
    assert [f.data for f in iter_frames(io.BytesIO(data))] == [b"abc", b"def"]


def test_truncation_keeps_frames_before_the_damage() -> None:
    recs = records(5)
    data = archive(recs, None)
    frames = list(iter_frames(io.BytesIO(data)))
    cut = data[: frames[3].offset + frames[3].length - 2]
    got = []
    with pytest.raises(RecordError, match=f"^cut.warc.zst@{frames[3].offset}: "):
        got.extend(f.data for f in iter_frames(io.BytesIO(cut), path="cut.warc.zst"))
    assert got == recs[:3]


def test_corruption_is_detected() -> None:
    data = bytearray(archive([b"x" * 5000], None))
    data[len(data) // 2] ^= 0xFF
    with pytest.raises(RecordError):
        list(iter_frames(io.BytesIO(bytes(data))))


def test_decompression_bomb_is_refused() -> None:
    data = ZstdRecordCompressor().compress(b"\0" * (4 << 20))
    with pytest.raises(RecordError, match="inflates past"):
        list(iter_frames(io.BytesIO(data), max_frame_size=1 << 20))
    unsized = zstandard.ZstdCompressor(write_content_size=False).compress(b"\0" * (4 << 20))
    with pytest.raises(RecordError, match="inflates past"):
        list(iter_frames(io.BytesIO(unsized), max_frame_size=1 << 20))
