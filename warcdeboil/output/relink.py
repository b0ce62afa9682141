"""Revisits whose original was cleaned in another output, or later in their own: found and
pointed at the cleaned record once every output of a run is written.

While it writes a WARC output, pass 2 points a revisit at a page cleaned above it in the same
file (:class:`.provenance.Revisits`). Whatever else it needs, it leaves in a *links file* next
to the work (:class:`LinkLog`): one line per cleaned page (the keys a revisit finds it by, its
new id and payload digest) and one per revisit it could not resolve (where it lies in the
output and the keys it looks its original up by). :func:`relink` then loads the cleaned pages
of all outputs into an SQLite table on disk, looks each unresolved revisit up there, and
rewrites only the outputs that hold a revisit it found: every other record's compressed bytes
are copied as they are (one gzip member or zstd frame per record), the revisit's header fields
are changed (its block is not), and the output is replaced atomically.

Which cleaned record a revisit is pointed at does not depend on the workers or the engine: one
of its own output first (the first below it), else the first in the first output by name.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from warcdeboil.errors import InputError, WarcDeboilError
from warcdeboil.warc.compression import Codec
from warcdeboil.warc.reader import WarcRecord, iter_records, iter_spans, open_archive
from warcdeboil.warc.writer import AtomicFile, WarcWriter, serialise

from .provenance import Fields, cleaned_keys, field, pointed_at, revisit_keys

__all__ = ["LinkLog", "lines", "links_name", "patch_output", "relink"]

CLEANED_SUFFIX = ".cleaned"
REVISITS_SUFFIX = ".revisits"
_COPY_CHUNK = 1 << 20


def links_name(output_name: str) -> str:
    """The file name (no suffix) of an output's links files: its name relative to the output
    directory, made flat."""
    return hashlib.sha1(output_name.encode("utf-8", "surrogateescape")).hexdigest()


class LinkLog:
    """What one WARC output leaves for :func:`relink`: its cleaned pages and the revisits it
    could not resolve. Both files appear under their names only by :meth:`close` (before the
    output itself does), so an output under its final name always has its links files."""

    def __init__(self, base: Path) -> None:
        self._base = base
        base.parent.mkdir(parents=True, exist_ok=True)
        self._tmp = [base.with_name(base.name + suffix + ".tmp")
                     for suffix in (CLEANED_SUFFIX, REVISITS_SUFFIX)]
        self._cleaned = open(self._tmp[0], "w", encoding="utf-8")  # noqa: SIM115 - close()
        self._revisits = open(self._tmp[1], "w", encoding="utf-8")  # noqa: SIM115 - close()
        self._pages = 0

    def cleaned(self, source: Fields, cleaned: Fields) -> None:
        keys, (new_id, new_digest) = cleaned_keys(source, cleaned)
        if keys:
            _line(self._cleaned, [self._pages, keys, new_id, new_digest])
        self._pages += 1

    def unresolved(self, headers: Fields, offset: int, length: int) -> None:
        """A revisit written at ``offset`` (``length`` bytes, compressed) of the output."""
        keys = revisit_keys(headers)
        if keys:
            _line(self._revisits, [offset, length, keys, field(headers, "WARC-Record-ID") or ""])

    def close(self) -> None:
        for fh in (self._cleaned, self._revisits):
            fh.close()
        for tmp, suffix in zip(self._tmp, (CLEANED_SUFFIX, REVISITS_SUFFIX), strict=True):
            os.replace(tmp, self._base.with_name(self._base.name + suffix))

    def discard(self) -> None:
        for fh in (self._cleaned, self._revisits):
            fh.close()
        for tmp in self._tmp:
            tmp.unlink(missing_ok=True)


def _line(fh: io.TextIOBase, value: object) -> None:
    # ASCII JSON: a URI's undecodable bytes (surrogate escapes) come back as they were.
    fh.write(json.dumps(value) + "\n")


def lines(path: Path) -> Iterator[list[Any]]:
    with open(path, encoding="ascii") as fh:
        for line in fh:
            yield json.loads(line)


def relink(outputs: Sequence[tuple[str, Path, Path]], database: Path) -> list[Path]:
    """Point the unresolved revisits of ``outputs`` — (name relative to the output directory,
    output path, links base path) — at cleaned records of any of them; the outputs rewritten.

    Outputs without links files (not WARC, or written by a run that kept none) take no part.
    Memory: SQLite's page cache, and one output's revisits to patch at a time.
    """
    present = sorted((name, out, base) for name, out, base in outputs
                     if out.exists() and _has(base, CLEANED_SUFFIX))
    waiting = [(rank, out, base) for rank, (_, out, base) in enumerate(present)
               if _has(base, REVISITS_SUFFIX, nonempty=True)]
    if not waiting:
        return []
    database.unlink(missing_ok=True)
    db = sqlite3.connect(database)
    try:
        db.execute("PRAGMA journal_mode=OFF")
        db.execute("PRAGMA synchronous=OFF")
        db.execute("CREATE TABLE cleaned (key BLOB, rank INTEGER, ord INTEGER, "
                   "new_id TEXT, new_digest TEXT)")
        for rank, (_, _, base) in enumerate(present):
            db.executemany("INSERT INTO cleaned VALUES (?, ?, ?, ?, ?)", (
                (_blob(key), rank, line[0], line[2], line[3])
                for line in lines(_with(base, CLEANED_SUFFIX))
                for key in line[1]
            ))
        db.execute("CREATE INDEX cleaned_key ON cleaned (key, rank, ord)")
        db.commit()
        rewritten = []
        for rank, out, base in waiting:
            entries = [(int(offset), int(length), rid, keys, _lookup(db, keys, rank))
                       for offset, length, keys, rid in lines(_with(base, REVISITS_SUFFIX))]
            if all(target is None for *_, target in entries):
                continue  # nothing found for it: not even read
            places = patch_output(out, [(o, n, rid, t) for o, n, rid, _, t in entries])
            if places is None:
                continue
            rewritten.append(out)
            # Records after a patched one moved: the revisits left say where they are now.
            _rewrite(_with(base, REVISITS_SUFFIX), [
                [*place, keys, rid] for place, (_, _, rid, keys, target)
                in zip(places, entries, strict=True) if target is None])
        return rewritten
    finally:
        db.close()
        database.unlink(missing_ok=True)


def _rewrite(path: Path, values: list[list[Any]]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        for value in values:
            _line(fh, value)
    os.replace(tmp, path)


def _has(base: Path, suffix: str, *, nonempty: bool = False) -> bool:
    try:
        size = _with(base, suffix).stat().st_size
    except OSError:
        return False
    return size > 0 or not nonempty


def _with(base: Path, suffix: str) -> Path:
    return base.with_name(base.name + suffix)


def _blob(key: str) -> bytes:
    """A key as SQLite stores it: bytes, as a URI may hold bytes that are not UTF-8."""
    return key.encode("utf-8", "surrogateescape")


def _lookup(db: sqlite3.Connection, keys: Sequence[str], rank: int) -> tuple[str, str] | None:
    """The cleaned record a revisit's keys find, first key first: one of its own output
    (``rank``) before those of others, the first of an output before later ones."""
    for key in keys:
        row = db.execute(
            "SELECT new_id, new_digest FROM cleaned WHERE key = ? "
            "ORDER BY rank <> ?, rank, ord LIMIT 1", (_blob(key), rank)).fetchone()
        if row is not None:
            return str(row[0]), str(row[1])
    return None


Revisit = tuple[int, int, str, "tuple[str, str] | None"]
"""(offset, length, its own record id, the (new id, new digest) to point it at, or None)."""


def patch_output(output: Path, revisits: Sequence[Revisit]) -> list[tuple[int, int]] | None:
    """Rewrite ``output`` with its revisits pointed at their targets; where each of them is
    now, as (offset, length) in the order given. None (the output unchanged) when every one
    already was pointed there (a rerun after an interruption).

    Each revisit is read at its offset and must carry its id there; if not (the output was
    rewritten and its links file not, the run having been killed in between) the output is read
    through once to find them.
    """
    places = [(offset, length) for offset, length, _, _ in revisits]
    records = _read_at(output, places, [rid for _, _, rid, _ in revisits])
    if records is None:
        places = _find(output, [rid for _, _, rid, _ in revisits])
        records = _read_at(output, places, [rid for _, _, rid, _ in revisits])
        if records is None:
            raise InputError(f"{output}: its revisits are not where its links file says")
    changes: dict[int, bytes] = {}
    for (offset, _), record, (_, _, _, target) in zip(places, records, revisits, strict=True):
        if target is not None:
            headers = pointed_at(record.headers, *target)
            if headers != record.headers:
                changes[offset] = serialise(record.version, headers, record.block)
    if not changes:
        return None
    source, codec = open_archive(output, random_access=True)
    moved: dict[int, tuple[int, int]] = {}
    try:
        encoder = _Encoder(codec, _dictionary(source, codec))
        with AtomicFile(output) as out:
            position = shift = 0
            for offset, length in sorted(set(places)):
                _copy(source, out, position, offset)
                raw = changes.get(offset)
                if raw is None:
                    _copy(source, out, offset, offset + length)
                    moved[offset] = (offset + shift, length)
                else:
                    member = encoder.encode(raw)
                    out.write(member)
                    moved[offset] = (offset + shift, len(member))
                    shift += len(member) - length
                position = offset + length
            _copy(source, out, position, None)
    finally:
        source.close()
    return [moved[offset] for offset, _ in places]


def _read_at(output: Path, places: Sequence[tuple[int, int]],
             ids: Sequence[str]) -> list[WarcRecord] | None:
    """The records at ``places`` (the file opened once), or None when one of them is not the
    revisit named there."""
    records = []
    try:
        for record, rid in zip(iter_spans(output, places), ids, strict=True):
            if record.error is not None or record.record_id != rid or record.rec_type != "revisit":
                return None
            records.append(record)
    except WarcDeboilError:
        return None
    return records


def _find(output: Path, ids: Sequence[str]) -> list[tuple[int, int]]:
    """Where the revisits with these ids are in ``output`` (read through once)."""
    wanted = set(ids)
    found: dict[str, tuple[int, int]] = {}
    for record in iter_records(output):
        if record.rec_type == "revisit" and record.record_id in wanted:
            found.setdefault(record.record_id, (record.offset, record.length))
    return [found.get(rid, (0, 0)) for rid in ids]


def _dictionary(source: BinaryIO, codec: Codec) -> bytes | None:
    if codec is not Codec.ZSTD:
        return None
    from warcdeboil.warc.zstdio import read_dictionary

    dictionary = read_dictionary(source)
    source.seek(0)
    return dictionary


class _Encoder:
    """One record compressed as the output's writer did (its codec, its zstd dictionary)."""

    def __init__(self, codec: Codec, dictionary: bytes | None) -> None:
        self._buffer = io.BytesIO()
        self._writer = WarcWriter(self._buffer, codec, zstd_dictionary=dictionary,
                                  valid_uris=True)
        self._start = self._buffer.tell()  # after the dictionary frame, if any

    def encode(self, raw: bytes) -> bytes:
        self._buffer.seek(self._start)
        self._buffer.truncate()
        self._writer.write_raw(raw)
        return self._buffer.getvalue()[self._start:]


def _copy(source: BinaryIO, out: BinaryIO, start: int, end: int | None) -> None:
    """Copy ``source``'s bytes from ``start`` to ``end`` (None: to its end) unchanged."""
    source.seek(start)
    left = None if end is None else end - start
    while left is None or left > 0:
        chunk = source.read(_COPY_CHUNK if left is None else min(left, _COPY_CHUNK))
        if not chunk:
            break
        out.write(chunk)
        if left is not None:
            left -= len(chunk)
