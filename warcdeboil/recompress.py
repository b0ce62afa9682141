"""``warcdeboil recompress``: rewrite an archive one gzip member (or zstd frame) per record.

Files compressed as one gzip stream, members that hold several records, records split across
members, and ARC files all come out as standard record-per-member WARC files that can be read
by offset. Record bytes are kept as they are; a record that cannot be read whole is written as
it survives (marked ``WARC-Truncated``) and a stretch with nothing readable is skipped — both
counted by reason.
"""

from __future__ import annotations

import logging
from pathlib import Path

from .compression import Codec
from .errors import InputError
from .reader import WarcRecord, iter_records
from .tally import Tally
from .writer import AtomicFile, WarcWriter, rebuild_record

__all__ = ["recompress_file", "repaired_record"]

log = logging.getLogger(__name__)


def repaired_record(record: WarcRecord) -> tuple[str, list[tuple[str, str]], bytes]:
    """A record read only in part, made valid as it survives: Content-Length and digests true
    of the bytes there are, and ``WARC-Truncated`` when the block is not whole."""
    headers = list(record.headers)
    if "truncated" in (record.error or "") and not record.get("WARC-Truncated"):
        headers.append(("WARC-Truncated", "length"))
    end = record.block.find(b"\r\n\r\n")
    payload = end + 4 if record.block.startswith(b"HTTP/") and end >= 0 else None
    version = record.version if record.version.startswith("WARC/") else "WARC/1.0"
    return version, rebuild_record(headers, record.block, payload), record.block


def recompress_file(source: Path, target: Path, codec: Codec = Codec.GZIP) -> Tally:
    """Copy every readable record of ``source`` to ``target``, compressed record by record."""
    tally = Tally(str(source), str(target))
    try:
        with AtomicFile(target) as out:
            writer = WarcWriter(out, codec)
            for record in iter_records(source):
                tally.records += 1
                if record.error is not None:
                    tally.problem(record.error)
                    log.warning("%s@%d: %s", source, record.offset, record.error)
                    if not record.headers:
                        tally.skipped += 1
                        continue
                    writer.write(*repaired_record(record))
                else:
                    writer.write_raw(record.to_bytes())
                tally.carried += 1
    except InputError as exc:
        tally.problem(str(exc).split(": ", 1)[-1])
        tally.output = ""
        log.error("%s", exc)
    return tally
