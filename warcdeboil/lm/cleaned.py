"""Pages as the stage before pass 2 cleaned them, per input file, in the input's order.

The language-model stage (:mod:`.stage`) cleans every page with its site's profile to learn
and score its text; it keeps what it made here, so that pass 2 writes those pages without
cleaning them a second time (on dragnet, content mode: 2.3 CPU-s of a 7.9 CPU-s run). An entry
is a page's :class:`~warcdeboil.page.dom.CleanText`, its kept blocks (every field, so pass 2
sees the very blocks it would have made), its removal counts and its text's language with the
confidence in it (pass 2 does not identify it again), as JSON, zstd-compressed, length-prefixed (no
pickle: a work directory must not be able to run code).

A lean store keeps of each block only its text and kind, all that JSONL and WET-style output
read of them (headings, lists, the text; the line filter keeps or drops whole blocks). Its entry
is a line of JSON with everything but the text, then the blocks' text as UTF-8, a block a line
(a block's text is one line): no character of the text is escaped or scanned by a JSON coder
(on dragnet, about 0.3 G instructions fewer to write and read back, of a 60.8 G ``--lm auto``
run: ``benchmarks/results/lm-cost-2026-11-25.md``). Markdown output renders every field of the
blocks, so its runs keep them all, as JSON. A lean store's blocks read back with zeros and
empty values in the other fields.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterator
from pathlib import Path

import zstandard

from warcdeboil.errors import WorkDirError
from warcdeboil.page.content import Block, Extraction
from warcdeboil.page.dom import CleanText
from warcdeboil.sidefile import SideFileWriter

__all__ = ["Cleaned", "CleanedStoreWriter", "iter_cleaned_store"]

Cleaned = tuple[int, str, CleanText, "Extraction | None", int, str, float]
"""(ordinal of the record, URL, text, kept blocks when the page has structure, blocks
removed, the text's language or "", the confidence in it:
:func:`~warcdeboil.page.language.identify`'s, which pass 2 then does not ask again)."""
_FRAME = struct.Struct("<I")


def _encode_lean(cleaned: Cleaned) -> bytes | None:
    """A lean entry: a JSON line, then the text (None: a block holds a line break, which
    only the JSON form keeps)."""
    ordinal, url, text, content, removed_blocks, language, confidence = cleaned
    if content is None:
        head = [ordinal, url, None, text.removed, text.slots, removed_blocks, None, None,
                language, confidence]
        body = text.text
    else:
        blocks = content.blocks
        body = content.text
        if body.count("\n") != max(len(blocks) - 1, 0):
            return None
        head = [ordinal, url, None if text.text == body else text.text, text.removed,
                text.slots, removed_blocks, [b.kind for b in blocks], content.removed,
                language, confidence]
    # json.dumps escapes every line break of a string: the first raw one ends the head.
    return b"%s\n%s" % (json.dumps(head, ensure_ascii=False, separators=(",", ":")).encode(
        "utf-8", "surrogatepass"), body.encode("utf-8", "surrogatepass"))


def _decode_lean(raw: bytes) -> Cleaned:
    head, _, body = raw.partition(b"\n")
    (ordinal, url, text, removed, slots, removed_blocks, kinds, counts, language,
     confidence) = json.loads(head.decode("utf-8", "surrogatepass"))
    tail = body.decode("utf-8", "surrogatepass")
    content = None
    if kinds is not None:
        texts = tail.split("\n") if kinds else []
        content = Extraction([Block(t, k, 0, 0, ()) for t, k in zip(texts, kinds, strict=True)],
                             dict(counts))
    return (ordinal, url, CleanText(tail if text is None else text, removed, slots), content,
            removed_blocks, language, confidence)


def _encode(cleaned: Cleaned, lean: bool = False) -> bytes:
    if lean and (entry := _encode_lean(cleaned)) is not None:
        return entry
    ordinal, url, text, content, removed_blocks, language, confidence = cleaned
    blocks = None
    removed = None
    whole: str | None = text.text
    if content is not None:
        blocks = ([[b.text, b.kind] for b in content.blocks] if lean else
                  [[b.text, b.kind, b.chars, b.link_chars, list(b.ancestors), b.marked, b.roles,
                    b.link_first] for b in content.blocks])
        removed = content.removed
        if whole == content.text:
            whole = None  # the blocks' text joined (as clean_page makes it): not stored twice
    obj = [ordinal, url, whole, text.removed, text.slots, removed_blocks, blocks, removed,
           language, confidence]
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode(
        "utf-8", "surrogatepass")


def _decode(raw: bytes) -> Cleaned:
    if b"\n" in raw:  # a lean entry: the JSON form holds no raw line break
        return _decode_lean(raw)
    (ordinal, url, text, removed, slots, removed_blocks, blocks, counts, language,
     confidence) = json.loads(raw.decode("utf-8", "surrogatepass"))
    content = None
    if blocks is not None:
        if blocks and len(blocks[0]) == 2:  # a lean store's
            content = Extraction([Block(t, k, 0, 0, ()) for t, k in blocks], dict(counts))
        else:
            content = Extraction([Block(t, k, c, lc, tuple(a), m, r, lf)
                                  for t, k, c, lc, a, m, r, lf in blocks], dict(counts))
        if text is None:
            text = content.text
    return (ordinal, url, CleanText(text, removed, slots), content, removed_blocks, language,
            confidence)


class CleanedStoreWriter(SideFileWriter):
    """Appends cleaned pages to one input file's store (a context manager, atomic); ``lean``:
    of each block, its text and kind only."""

    def __init__(self, path: Path, lean: bool = False) -> None:
        super().__init__(path)
        # zstd's level -1, as the page store: dragnet's lean store took 0.77 G instructions
        # to write and read back at level 1 for 2.5 MB, 0.67 G at -1 for 3.3 MB.
        self._compressor = zstandard.ZstdCompressor(level=-1)
        self._lean = lean

    def add(self, cleaned: Cleaned) -> None:
        blob = self._compressor.compress(_encode(cleaned, self._lean))
        self._fh.write(_FRAME.pack(len(blob)) + blob)


def iter_cleaned_store(path: Path) -> Iterator[Cleaned]:
    """The cleaned pages of one store, in the input's order."""
    decompressor = zstandard.ZstdDecompressor()
    try:
        with open(path, "rb", buffering=1 << 16) as fh:
            while header := fh.read(_FRAME.size):
                (size,) = _FRAME.unpack(header)
                blob = fh.read(size)
                if len(header) < _FRAME.size or len(blob) < size:
                    raise WorkDirError(f"{path}: truncated store of cleaned pages")
                yield _decode(decompressor.decompress(blob))
    except (OSError, ValueError, TypeError, zstandard.ZstdError, struct.error) as exc:
        raise WorkDirError(f"{path}: unreadable store of cleaned pages ({exc})") from exc
