"""``warcdeboil check``: whether archives are sound, record by record, without writing anything.

Each file is read with the reader both passes use, so a record it finds damaged (cut short, a
``Content-Length`` that does not fit, a malformed header, a corrupt gzip member or zstd frame) is
a problem here too, counted by the same reason. Then the digests each record declares are
recomputed over its bytes as stored: ``WARC-Block-Digest`` over the block and
``WARC-Payload-Digest`` over the payload of an ``application/http`` record (the bytes after the
HTTP head), in ``sha1``, ``sha256``, ``sha512`` or ``md5``, written in base32 or base16. A
revisit's payload digest names its original's payload, which the revisit does not hold, so it
is not checked (neither does ``warcio check``). Blocks of any size are digested a piece at a
time.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import logging
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from .reader import WarcRecord, iter_records
from .tally import reason_key

__all__ = ["CheckReport", "check_file", "digest_matches"]

log = logging.getLogger(__name__)

_ALGORITHMS = {"sha1": "sha1", "sha-1": "sha1", "sha256": "sha256", "sha-256": "sha256",
               "sha512": "sha512", "sha-512": "sha512", "md5": "md5"}
# An HTTP head longer than this is not looked through for its end (the payload digest of such a
# record is then reported unchecked): real heads are a few KiB.
MAX_HTTP_HEAD = 1 << 20

BLOCK_MISMATCH = "WARC-Block-Digest does not match the block"
PAYLOAD_MISMATCH = "WARC-Payload-Digest does not match the payload"
UNKNOWN_DIGEST = "digest of an unknown algorithm or encoding"
NO_HTTP_HEAD = "payload digest not checked: no end of the HTTP head"


@dataclass
class CheckReport:
    """What checking one file found: its records, the digests checked, problems by reason."""

    path: str
    records: int = 0
    digests: int = 0  # declared digests recomputed and compared
    problems: Counter[str] = field(default_factory=Counter)

    def problem(self, record: WarcRecord, reason: str) -> None:
        self.problems[reason_key(reason)] += 1
        log.warning("%s@%d: %s", self.path, record.offset, reason)

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "records": self.records, "digests": self.digests,
                "problems": dict(sorted(self.problems.items()))}


def _parse(value: str) -> tuple[str, bytes] | None:
    """A declared digest as (hashlib name, digest bytes), or None when it cannot be read.

    >>> _parse("sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ")[1].hex()[:8]
    'da39a3ee'
    >>> _parse("md5:d41d8cd98f00b204e9800998ecf8427e")[0]
    'md5'
    """
    label, sep, encoded = value.strip().partition(":")
    name = _ALGORITHMS.get(label.strip().lower())
    if not sep or name is None:
        return None
    size = hashlib.new(name).digest_size
    encoded = encoded.strip()
    for decode in (_base32, _base16):
        raw = decode(encoded)
        if raw is not None and len(raw) == size:
            return name, raw
    return None


def _base32(text: str) -> bytes | None:
    try:
        return base64.b32decode(text.upper() + "=" * (-len(text) % 8))
    except (binascii.Error, ValueError):
        return None


def _base16(text: str) -> bytes | None:
    try:
        return bytes.fromhex(text)
    except ValueError:
        return None


def digest_matches(declared: str, pieces: Iterable[bytes]) -> bool | None:
    """Whether ``declared`` is the digest of the bytes given in ``pieces``; None when it names
    an algorithm or encoding this does not read.

    >>> digest_matches("sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ", [b""])
    True
    >>> digest_matches("sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ", [b"x"])
    False
    """
    parsed = _parse(declared)
    if parsed is None:
        return None
    name, expected = parsed
    digest = hashlib.new(name)
    for piece in pieces:
        digest.update(piece)
    return digest.digest() == expected


def _payload_offset(record: WarcRecord) -> int | None:
    """Where an ``application/http`` record's payload starts in its block, or None."""
    head = record.block_head(min(record.block_size, MAX_HTTP_HEAD))
    end = head.find(b"\r\n\r\n")
    return end + 4 if end >= 0 else None


def _skip(pieces: Iterator[bytes], count: int) -> Iterator[bytes]:
    """``pieces`` without their first ``count`` bytes."""
    for piece in pieces:
        if count >= len(piece):
            count -= len(piece)
            continue
        yield piece[count:] if count else piece
        count = 0


def _check_record(record: WarcRecord, report: CheckReport) -> None:
    declared = record.get("WARC-Block-Digest")
    if declared:
        matches = digest_matches(declared, record.iter_block())
        if matches is None:
            report.problem(record, f"{UNKNOWN_DIGEST} ({declared})")
        else:
            report.digests += 1
            if not matches:
                report.problem(record, BLOCK_MISMATCH)
    declared = record.get("WARC-Payload-Digest")
    kind = (record.get("Content-Type") or "").split(";", 1)[0].strip().lower()
    if not declared or record.rec_type == "revisit" or kind != "application/http":
        return
    offset = _payload_offset(record)
    if offset is None:
        report.problem(record, NO_HTTP_HEAD)
        return
    matches = digest_matches(declared, _skip(record.iter_block(), offset))
    if matches is None:
        report.problem(record, f"{UNKNOWN_DIGEST} ({declared})")
    else:
        report.digests += 1
        if not matches:
            report.problem(record, PAYLOAD_MISMATCH)


def check_file(path: str) -> CheckReport:
    """Check every record of one archive (a file that cannot be opened raises InputError)."""
    report = CheckReport(path)
    for record in iter_records(path):
        report.records += 1
        if record.error is not None:
            # Damaged: its declared digests are of bytes it does not hold as read.
            report.problem(record, record.error)
            continue
        _check_record(record, report)
    return report
