"""Property tests of the reader and writer: round trips, and damage that never loses what came
before it."""

from __future__ import annotations

import io

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from warcdeboil.warc.compression import Codec, iter_segments
from warcdeboil.warc.reader import _RecordParser
from warcdeboil.warc.writer import WarcWriter, rebuild_record

SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

header_value = st.text(
    st.characters(min_codepoint=33, max_codepoint=0x2FF, blacklist_characters="\x7f"),
    min_size=1, max_size=30,
)
record = st.tuples(
    st.sampled_from(["response", "request", "resource", "metadata", "revisit", "warcinfo"]),
    st.lists(st.tuples(st.sampled_from(["X-Note", "WARC-Target-URI", "X-Other"]), header_value),
             max_size=3),
    st.binary(max_size=3000),
)
archives = st.tuples(st.lists(record, min_size=1, max_size=6), st.sampled_from(list(Codec)))


def write(records, codec: Codec) -> tuple[bytes, list[tuple[list, bytes]]]:
    out = io.BytesIO()
    writer = WarcWriter(out, codec)
    written = []
    for i, (rec_type, extra, block) in enumerate(records):
        headers = rebuild_record(
            [("WARC-Type", rec_type), ("WARC-Record-ID", f"<urn:x:{i}>"), *extra], block, None
        )
        writer.write("WARC/1.1", headers, block)
        written.append((headers, block))
    return out.getvalue(), written


def read(data: bytes, codec: Codec) -> list:
    segments = iter_segments(io.BytesIO(data), codec)
    return list(_RecordParser(segments, codec, "mem", 1 << 30))


@SETTINGS
@given(archives)
def test_any_records_round_trip_through_every_codec(archive) -> None:
    records, codec = archive
    data, written = write(records, codec)
    read_back = read(data, codec)
    assert [(r.headers, r.block) for r in read_back] == written
    assert all(r.error is None and r.addressable for r in read_back)


@SETTINGS
@given(archives, st.data())
def test_truncation_never_crashes_nor_loses_earlier_records(archive, data) -> None:
    records, codec = archive
    full, written = write(records, codec)
    whole = read(full, codec)
    cut = data.draw(st.integers(min_value=0, max_value=len(full)))
    damaged = read(full[:cut], codec)
    intact = [r for r in whole if r.offset + r.length <= cut]
    assert [(r.headers, r.block) for r in damaged[: len(intact)]] == [
        (r.headers, r.block) for r in intact
    ]


@SETTINGS
@given(archives, st.data())
def test_corruption_never_crashes_nor_loses_earlier_records(archive, data) -> None:
    records, codec = archive
    full, _ = write(records, codec)
    whole = read(full, codec)
    at = data.draw(st.integers(min_value=0, max_value=len(full) - 1))
    flip = data.draw(st.integers(min_value=1, max_value=255))
    corrupt = bytearray(full)
    corrupt[at] ^= flip
    damaged = read(bytes(corrupt), codec)
    intact = [r for r in whole if r.offset + r.length <= at]
    assert [(r.headers, r.block) for r in damaged[: len(intact)]] == [
        (r.headers, r.block) for r in intact
    ]
