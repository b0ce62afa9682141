"""Writing WARC records: gzip per record, zstd per record, or uncompressed; atomically.

:class:`WarcWriter` takes records (header fields + block) and compresses each on its own, so the
output stays addressable by offset. :func:`rebuild_record` makes a record consistent with a new
block: Content-Length, WARC-Block-Digest and WARC-Payload-Digest are recomputed.
:class:`AtomicFile` writes under a temporary name and renames on success: a final name never holds
a partial file.
"""

from __future__ import annotations

import base64
import glob
import hashlib
import os
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType
from typing import BinaryIO
from urllib.parse import quote

from isal import isal_zlib

from .compression import Codec

__all__ = [
    "AtomicFile", "WarcWriter", "rebuild_fields", "rebuild_record", "remove_parts", "sha1_digest",
    "stream_digests",
]

# Gzip members are deflated by ISA-L (standard gzip: mtime 0, no name, OS byte 255, the same
# bytes every run) at its level 2. On the WARC output of ../shared/eval/dragnet (57.7 MB in 2764
# records) it took 0.127 CPU-s for 16.43 MB, where zlib's level 4 (used before) took 0.693 CPU-s
# for 15.42 MB; ISA-L's level 3 took 0.229 CPU-s for 16.04 MB. WET text: +1.5 % in size.
GZIP_LEVEL = 2


def sha1_digest(data: bytes) -> str:
    """A WARC digest value: ``sha1:`` + base32 of the SHA-1.

    >>> sha1_digest(b'')
    'sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ'
    """
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode("ascii")


def stream_digests(pieces: Iterable[bytes], payload_offset: int | None) -> tuple[str, str | None]:
    """The block digest and payload digest (None without ``payload_offset``) of a block given
    in pieces, as :func:`sha1_digest` gives them for the whole.

    >>> stream_digests([b"HTTP/1.1 200\\r\\n", b"\\r\\nhi"], 16)[1] == sha1_digest(b"hi")
    True
    """
    block = hashlib.sha1()
    payload = hashlib.sha1() if payload_offset is not None else None
    position = 0
    for piece in pieces:
        block.update(piece)
        if payload is not None and payload_offset is not None:
            if position >= payload_offset:
                payload.update(piece)
            elif position + len(piece) > payload_offset:
                payload.update(piece[payload_offset - position :])
        position += len(piece)
    encode = base64.b32encode
    return ("sha1:" + encode(block.digest()).decode("ascii"),
            None if payload is None else "sha1:" + encode(payload.digest()).decode("ascii"))


def rebuild_record(
    headers: list[tuple[str, str]], block: bytes, payload_offset: int | None
) -> list[tuple[str, str]]:
    """Header fields made consistent with ``block``; the payload starts at ``payload_offset``."""
    payload = None if payload_offset is None else sha1_digest(block[payload_offset:])
    return rebuild_fields(headers, len(block), sha1_digest(block), payload)


def rebuild_fields(
    headers: list[tuple[str, str]], length: int, block_digest: str, payload_digest: str | None
) -> list[tuple[str, str]]:
    """Header fields made consistent with a block of ``length`` bytes and these digests
    (``payload_digest`` None: the block has no payload we can vouch for)."""
    replace = {
        "content-length": str(length),
        "warc-block-digest": block_digest,
    }
    if payload_digest is not None:
        replace["warc-payload-digest"] = payload_digest
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for key, value in headers:
        lower = key.lower()
        if lower == "warc-payload-digest" and payload_digest is None:
            continue  # no payload we can vouch for: a stale digest would be a false one
        if lower in replace:
            if lower in seen:
                continue  # a duplicated field would contradict the one we write
            seen.add(lower)
            out.append((key, replace[lower]))
        else:
            out.append((key, value))
    for lower, key in (
        ("warc-block-digest", "WARC-Block-Digest"),
        ("warc-payload-digest", "WARC-Payload-Digest"),
        ("content-length", "Content-Length"),
    ):
        if lower in replace and lower not in seen:
            out.append((key, replace[lower]))
    return out


# What a URI may hold as it is (RFC 3986: unreserved and reserved characters, and the "%" of
# its own escapes); anything else in a URI field is percent-encoded when a record is written.
_URI_SAFE = "-._~:/?#[]@!$&'()*+,;=%"
_URI_FIELDS = ("warc-target-uri", "warc-refers-to-target-uri")
ORIGINAL_URI_FIELD = "WARC-Source-Target-URI"


def valid_uri(value: str) -> str:
    """``value`` with what a URI may not hold percent-encoded (spaces, quotes, braces, non-ASCII
    as UTF-8, bytes that are not UTF-8 as themselves); a value in angle brackets (the WARC 1.0
    grammar) keeps them.

    >>> valid_uri("http://example.com/a b?q=caf\u00e9")
    'http://example.com/a%20b?q=caf%C3%A9'
    >>> valid_uri("<http://example.com/50%25 off>")
    '<http://example.com/50%25%20off>'
    """
    if len(value) > 1 and value.startswith("<") and value.endswith(">"):
        return "<" + valid_uri(value[1:-1]) + ">"
    return quote(value, safe=_URI_SAFE, errors="surrogateescape")


def with_valid_uris(headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The header fields with their URIs made valid (:func:`valid_uri`); a target URI that
    changes keeps its original, as read, in ``WARC-Source-Target-URI`` after it."""
    fields: list[tuple[str, str]] = []
    keeps_original = any(k.lower() == ORIGINAL_URI_FIELD.lower() for k, _ in headers)
    for key, value in headers:
        lower = key.lower()
        uri = valid_uri(value) if lower in _URI_FIELDS else value
        fields.append((key, uri))
        if uri != value and lower == "warc-target-uri" and not keeps_original:
            fields.append((ORIGINAL_URI_FIELD, value))
            keeps_original = True
    return fields


def serialise(version: str, headers: list[tuple[str, str]], block: bytes) -> bytes:
    """The uncompressed bytes of one record, trailer included."""
    head = "\r\n".join([version, *(f"{k}: {v}" for k, v in headers)]) + "\r\n\r\n"
    return head.encode("utf-8", "surrogateescape") + block + b"\r\n\r\n"


class WarcWriter:
    """Writes records to a binary stream, each compressed on its own."""

    def __init__(
        self, fh: BinaryIO, codec: Codec, *, zstd_dictionary: bytes | None = None,
        valid_uris: bool = False,
    ) -> None:
        """``valid_uris``: the records written through :meth:`write` get their URI fields made
        valid (:func:`with_valid_uris`): what the outputs do with the records warcdeboil makes.
        Records given as bytes are written as they are."""
        self._fh = fh
        self.codec = codec
        self.valid_uris = valid_uris
        self._zstd = None
        if codec is Codec.ZSTD:
            from .zstdio import ZstdRecordCompressor

            self._zstd = ZstdRecordCompressor(dictionary=zstd_dictionary)
            fh.write(self._zstd.header())

    def write(self, version: str, headers: list[tuple[str, str]], block: bytes) -> None:
        if self.valid_uris:
            headers = with_valid_uris(headers)
        self.write_raw(serialise(version, headers, block))

    def write_raw(self, record: bytes) -> None:
        """Write one complete uncompressed record."""
        if self._zstd is not None:
            self._fh.write(self._zstd.compress(record))  # one-shot: the frame as before
        else:
            self.write_raw_pieces((record,), len(record))

    def write_raw_pieces(self, pieces: Iterable[bytes], size: int) -> None:
        """Write one complete uncompressed record of ``size`` bytes given in pieces, still as
        one gzip member or zstd frame: a record of any size, in bounded memory."""
        write = self._fh.write
        if self.codec is Codec.GZIP:
            deflater = isal_zlib.compressobj(GZIP_LEVEL, isal_zlib.DEFLATED, 31)
            for piece in pieces:
                write(deflater.compress(piece))
            write(deflater.flush())
        elif self._zstd is not None:
            for out in self._zstd.compress_pieces(pieces, size):
                write(out)
        else:
            for piece in pieces:
                write(piece)

    def write_compressed(self, member: bytes) -> None:
        """Write a record already compressed with this writer's codec (copied from the input)."""
        self._fh.write(member)


class AtomicFile:
    """A file that appears under ``path`` only when closed without an error.

    ``beside`` (a path and its bytes): a small file that says what ``path`` holds (an output's
    record of the options it was made with), renamed into place with it, in the order that
    never pairs one with the other's predecessor. A new ``path`` gets its file beside it first:
    a process killed between the two renames leaves that file with nothing to speak of. A
    ``path`` written over loses the old file beside it first: killed between the two renames,
    it is left with none, which a reader takes for "unknown", never for the old one's word.
    """

    def __init__(self, path: Path, beside: tuple[Path, bytes] | None = None) -> None:
        self.path = path
        self.tmp = path.with_name(f".{path.name}.{os.getpid()}.part")
        self.beside = beside
        self._fh: BinaryIO | None = None

    def __enter__(self) -> BinaryIO:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # Parts left by a run that was killed (no chance to clean up) go before we write anew.
        remove_parts(self.path)
        if self.beside is not None:
            remove_parts(self.beside[0])
        self._fh = open(self.tmp, "wb")  # noqa: SIM115 - closed in __exit__
        return self._fh

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._fh is not None
        beside_tmp = None
        try:
            self._fh.close()  # flushes: a full disk can fail here too
            if exc_type is None and self.beside is None:
                os.replace(self.tmp, self.path)
            elif exc_type is None and self.beside is not None:
                side, data = self.beside
                beside_tmp = side.with_name(f".{side.name}.{os.getpid()}.part")
                beside_tmp.write_bytes(data)
                if self.path.exists():  # written over: the old record goes first
                    side.unlink(missing_ok=True)
                    os.replace(self.tmp, self.path)
                    os.replace(beside_tmp, side)
                else:  # a new file: its record first
                    os.replace(beside_tmp, side)
                    os.replace(self.tmp, self.path)
        except BaseException:
            self.tmp.unlink(missing_ok=True)
            if beside_tmp is not None:
                beside_tmp.unlink(missing_ok=True)
            raise
        if exc_type is not None:
            self.tmp.unlink(missing_ok=True)


def remove_parts(path: Path) -> None:
    """Remove the partial files of ``path`` that writers of any process left (a worker process
    ended by a signal has no chance to remove its own)."""
    # Only ``.NAME.PID.part``: a glob alone would also take ``.NAME.gz.PID.part``, the live part
    # of another output (x.warc beside x.warc.gz), from under the worker writing it.
    prefix = f".{path.name}."
    for part in path.parent.glob(f"{glob.escape(prefix)}*.part"):
        if part.name[len(prefix) : -len(".part")].isdigit():
            part.unlink(missing_ok=True)
