"""``warcdeboil recompress``: rewrite an archive one gzip member (or zstd frame) per record.

Files compressed as one gzip stream, members that hold several records, records split across
members, and ARC files all come out as standard record-per-member WARC files that can be read
by offset. Record bytes are kept as they are; a record that cannot be read whole is written as
it survives (marked ``WARC-Truncated``) and a stretch with nothing readable is skipped — both
counted by reason.
"""

from __future__ import annotations

import logging
from itertools import chain
from pathlib import Path

from warcdeboil.errors import InputError

from .compression import Codec
from .reader import WarcRecord, iter_records
from .tally import Tally
from .truncation import CUT_SHORT, cut_short
from .writer import (
    AtomicFile,
    WarcWriter,
    rebuild_fields,
    rebuild_record,
    serialise,
    stream_digests,
    with_valid_uris,
)

__all__ = ["carry_record", "recompress_file", "repaired_record", "write_record", "write_repaired"]

log = logging.getLogger(__name__)


# How much of a spilled block is searched for the end of its HTTP header.
_HTTP_HEAD_BYTES = 1 << 20


def repaired_record(record: WarcRecord) -> tuple[str, list[tuple[str, str]], bytes]:
    """A record read only in part, made valid as it survives: Content-Length and digests true
    of the bytes there are, and ``WARC-Truncated`` when the block is not whole."""
    block = record.block  # read once: for a spilled block each use reads the whole file
    version, headers, payload = _repair(record, block)
    return version, rebuild_record(headers, block, payload), block


def _repair(record: WarcRecord, head: bytes) -> tuple[str, list[tuple[str, str]], int | None]:
    """The version and header fields a repaired ``record`` is written with (before length and
    digests), and where its payload starts, judged from ``head`` (the block or its start)."""
    headers = list(record.headers)
    if cut_short(record) and not record.get("WARC-Truncated"):
        headers.append(("WARC-Truncated", CUT_SHORT))
    end = head.find(b"\r\n\r\n")
    payload = end + 4 if head.startswith(b"HTTP/") and end >= 0 else None
    version = record.version if record.version.startswith("WARC/") else "WARC/1.0"
    return version, headers, payload


def write_repaired(writer: WarcWriter, record: WarcRecord) -> None:
    """Write :func:`repaired_record` of ``record``; a spilled block streams through twice (its
    digests, then its bytes), never held whole."""
    if record.spill is None:
        writer.write(*repaired_record(record))
        return
    version, headers, payload = _repair(record, record.block_head(_HTTP_HEAD_BYTES))
    block_digest, payload_digest = stream_digests(record.iter_block(), payload)
    fields = rebuild_fields(headers, record.block_size, block_digest, payload_digest)
    write_record(writer, version, fields, record)


def write_record(
    writer: WarcWriter, version: str, headers: list[tuple[str, str]], record: WarcRecord
) -> None:
    """Write ``record``'s block (in memory or spilled) under ``version`` and ``headers``."""
    if record.spill is None:
        writer.write(version, headers, record.block)
        return
    if writer.valid_uris:
        headers = with_valid_uris(headers)
    head = serialise(version, headers, b"")[:-4]
    size = len(head) + record.block_size + 4
    writer.write_raw_pieces(chain((head,), record.iter_block(), (b"\r\n\r\n",)), size)


def carry_record(writer: WarcWriter, record: WarcRecord) -> None:
    """Write ``record`` as it was read (its header fields and block unchanged); a record made
    from an ARC record is one warcdeboil wrote, and gets the writer's valid URIs."""
    if record.converted and writer.valid_uris:
        write_record(writer, record.version, record.headers, record)
    elif record.spill is None:
        writer.write_raw(record.to_bytes())
    else:
        write_record(writer, record.version, record.headers, record)


def recompress_file(source: Path, target: Path, codec: Codec = Codec.GZIP) -> Tally:
    """Copy every readable record of ``source`` to ``target``, compressed record by record."""
    tally = Tally(str(source), str(target))
    try:
        with AtomicFile(target) as out:
            writer = WarcWriter(out, codec, valid_uris=True)  # ARC records made WARC
            for record in iter_records(source):
                tally.records += 1
                for reason in record.repairs:  # mended while reading: counted, record kept
                    tally.problem(reason)
                    log.warning("%s@%d: %s", source, record.offset, reason)
                if record.error is not None:
                    tally.problem(record.error)
                    log.warning("%s@%d: %s", source, record.offset, record.error)
                    if not record.headers:
                        tally.skipped += 1
                        continue
                    write_repaired(writer, record)
                else:
                    carry_record(writer, record)
                tally.carried += 1
    except InputError as exc:
        tally.problem(str(exc).split(": ", 1)[-1])
        tally.output = ""
        log.error("%s", exc)
    return tally
