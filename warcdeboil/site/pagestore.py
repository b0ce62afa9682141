"""What pass 1 keeps of every page, per input file, in the input's order.

Pass 1 writes one store per input file: for each HTML page, the record's identity (offset, URL,
record ID, date, whether its block is whole) and its :class:`~warcdeboil.page.dom.PageText`.
Pass 2 reads it back in step with the input, so text outputs need no second parse, and WARC
output knows which candidates to remove.
Entries are length-prefixed, zstd-compressed binary (no pickle: a store in a shared work directory
must not be able to run code).
"""

from __future__ import annotations

import struct
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import zstandard

from warcdeboil.errors import WorkDirError
from warcdeboil.page.dom import NO_META, PageMeta, PageText
from warcdeboil.page.html import HtmlPage
from warcdeboil.sidefile import SideFileWriter
from warcdeboil.warc.reader import WarcRecord
from warcdeboil.warc.truncation import truncation

__all__ = ["PAGE_STORE_FORMAT", "PageEntry", "PageStoreWriter", "entry_from_bytes",
           "entry_to_bytes", "iter_page_store", "page_entry", "page_store_path"]

# Bumped whenever an entry changes shape (2: no per-candidate HTML sizes; 3: the payload's SHA-1;
# 4: where each role element is among the page's elements, PageText.owners; 5: the record's
# WARC-Truncated reason, PageEntry.truncated):
# a work directory whose stores were written by another version is indexed again (see
# run.local.index_is_current).
PAGE_STORE_FORMAT = 5
_FRAME = struct.Struct("<I")
_FIXED = struct.Struct("<QQQQIIB20s")
_STRINGS = 10
_CRUMB_SEPARATOR = "\x1f"  # ASCII unit separator: never in a label (whitespace is folded)
# The store is written once and read once or twice (the duplicate stage, pass 2): a negative
# zstd level, which leaves literals without Huffman codes. On the dragnet eval archive (26.8 MB
# of entries): level 1 took 0.083 CPU-s to write and 0.036 to read, 11.6 MB on disk; -1 takes
# 0.066 and 0.021 for 13.7 MB; -3 0.057 and 0.020 for 14.7 MB (zlib's level 1 took 0.34 to
# write). -1 has most of the gain for the least disk.
_LEVEL = -1


@dataclass(slots=True)
class PageEntry:
    """One HTML page as pass 2 needs it."""

    ordinal: int  # the record's position in the input (0-based): how pass 2 finds it again
    offset: int
    length: int
    url: str
    record_id: str
    date: str
    charset: str
    html_bytes_before: int
    page: PageText
    # The digest of the payload as stored (the HTTP entity before content codings are undone, as
    # WARC-Payload-Digest covers it): SHA-1, or XXH3-128 and four zero bytes in a run that only
    # compares digests (pages.payload_digest); b"" when not taken. Exact duplicates share it.
    digest: bytes = b""
    # Why the record's block is not whole (its WARC-Truncated reason: warc.truncation), "" when
    # it is: the page is written all the same, and every text output says it is truncated.
    truncated: str = ""


def page_entry(ordinal: int, record: WarcRecord, page: HtmlPage, text: PageText,
               digest: bytes = b"") -> PageEntry:
    """The entry of the HTML ``page`` found in ``record``, the ``ordinal``-th record of its
    input, with its analysed ``text``: what pass 1 stores, and what pass 2 makes again when it
    reads the archive instead (the same fields, so both give the same outputs)."""
    return PageEntry(
        ordinal, record.offset, record.length, page.url, record.record_id,
        record.get("WARC-Date") or "", page.charset, len(page.body), text, digest,
        truncation(record),
    )


def page_store_path(directory: Path, file_id: int) -> Path:
    return directory / f"f{file_id:06d}.pages"


def _encode(entry: PageEntry, compressor: zstandard.ZstdCompressor) -> bytes:
    page = entry.page
    strings = [
        s.encode("utf-8", "surrogatepass")
        for s in (entry.url, entry.record_id, entry.date, entry.charset, page.title,
                  page.meta.description, page.meta.canonical_url, page.meta.lang,
                  _CRUMB_SEPARATOR.join(page.meta.breadcrumbs), entry.truncated)
    ]
    head = _FIXED.pack(
        entry.ordinal, entry.offset, entry.length, entry.html_bytes_before,
        len(page.hashes), len(page.slots), page.structured, entry.digest,
    )
    lengths = struct.pack(f"<{_STRINGS + 1}I", *map(len, strings), len(page.marked))
    raw = b"".join([
        head, lengths, *strings, page.marked, page.hashes.tobytes(), page.spans.tobytes(),
        page.slots.tobytes(), page.owners.tobytes(),
    ])
    return compressor.compress(raw)


def _decode(blob: bytes, path: Path, decompressor: zstandard.ZstdDecompressor) -> PageEntry:
    try:
        raw = decompressor.decompress(blob)
        ordinal, offset, length, before, n, n_slots, structured, digest = _FIXED.unpack_from(raw)
        pos = _FIXED.size
        lengths = struct.unpack_from(f"<{_STRINGS + 1}I", raw, pos)
        pos += 4 * (_STRINGS + 1)
        strings = []
        for size in lengths[:_STRINGS]:
            strings.append(raw[pos : pos + size].decode("utf-8", "surrogatepass"))
            pos += size
        marked = raw[pos : pos + lengths[_STRINGS]]
        pos += lengths[_STRINGS]
        hashes = array("Q", raw[pos : pos + 8 * n])
        pos += 8 * n
        spans = array("I", raw[pos : pos + 8 * n])
        pos += 8 * n
        slots = array("Q", raw[pos : pos + 8 * n_slots])
        pos += 8 * n_slots
        owners = array("I", raw[pos:])  # as many as slots, or none (not known)
        if len(spans) != 2 * n or len(slots) != n_slots or len(owners) not in (0, n_slots):
            raise ValueError("entry is short")
    except (zstandard.ZstdError, struct.error, UnicodeDecodeError, ValueError) as exc:
        raise WorkDirError(
            f"{path}: damaged page store ({exc}): delete the work directory"
        ) from exc
    url, record_id, date, charset, title, description, canonical, lang, crumbs, cut = strings
    meta = PageMeta(description, canonical, lang, tuple(crumbs.split(_CRUMB_SEPARATOR))
                    if crumbs else ()) if structured else NO_META
    return PageEntry(
        ordinal, offset, length, url, record_id, date, charset, before,
        PageText(title, marked, hashes, spans, bool(structured), meta, slots, owners),
        digest if any(digest) else b"",  # 20 zero bytes: written without a digest
        cut,
    )


def entry_to_bytes(entry: PageEntry) -> bytes:
    """One entry as a store holds it (the Spark engine ships pages between stages so)."""
    return _encode(entry, zstandard.ZstdCompressor(level=_LEVEL))


def entry_from_bytes(blob: bytes, where: str = "a page row") -> PageEntry:
    return _decode(blob, Path(where), zstandard.ZstdDecompressor())


class PageStoreWriter(SideFileWriter):
    """Appends page entries to one input file's store (a context manager, atomic)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        # One (de)compressor a store: a new one a page cost more than its page (16 us vs 7 us).
        self._compressor = zstandard.ZstdCompressor(level=_LEVEL)

    def add(self, entry: PageEntry) -> None:
        blob = _encode(entry, self._compressor)
        self._fh.write(_FRAME.pack(len(blob)))
        self._fh.write(blob)


def iter_page_store(path: Path) -> Iterator[PageEntry]:
    """The entries of one store, in the input's order."""
    try:
        fh = open(path, "rb", buffering=1 << 16)  # noqa: SIM115 - closed below
    except OSError as exc:
        raise WorkDirError(f"{path}: cannot read the page store ({exc.strerror})") from exc
    decompressor = zstandard.ZstdDecompressor()
    with fh:
        while header := fh.read(_FRAME.size):
            (size,) = _FRAME.unpack(header)
            blob = fh.read(size)
            if len(header) < _FRAME.size or len(blob) < size:
                raise WorkDirError(f"{path}: truncated page store: delete the work directory")
            yield _decode(blob, path, decompressor)
