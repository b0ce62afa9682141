"""The pass-1 index: one entry per HTML page, sorted by (site, URL) with bounded memory.

Entries are binary (no pickle: an index in a shared work directory must not be able to run code).
A scan spills *sorted runs* of at most ``run_bytes`` to disk, split into ``partitions`` by a stable
hash of the site key; the fit then k-way merges the runs of one partition at a time. Peak memory
depends on ``run_bytes`` and the number of runs open in a merge, never on the number of pages.

On disk::

    WORK/index/p0003/f000012-r0001.run     partition 3, input file 12, its second run
"""

from __future__ import annotations

import heapq
import struct
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path

from xxhash import xxh3_64_intdigest

from warcdeboil.errors import WorkDirError
from warcdeboil.page.dom import PageSignature

__all__ = [
    "INDEX_FORMAT",
    "IndexEntry",
    "RunWriter",
    "decode_entry",
    "encode_entry",
    "iter_partition",
    "merge_runs",
    "partition_of",
    "write_run",
]

_FRAME = struct.Struct("<II")
_FIXED = struct.Struct("<IQQIIIIIIII")
_TIEBREAK = struct.Struct(">IQ")
DEFAULT_RUN_BYTES = 64 << 20
# Bumped whenever entries change shape, or what their digests are of changes (4: line marks
# before paragraphs and other block elements, no text from iframes and selects; the long blocks
# of the near-duplicate signature digested normalised): a work directory indexed by another
# version is re-indexed.
INDEX_FORMAT = 5
# Runs open at once in a merge: well under the usual limit of 1024 open files per process.
MAX_FAN_IN = 128


@dataclass(slots=True)
class IndexEntry:
    """One HTML page as the fit sees it."""

    site: str
    url_key: str
    file_id: int
    offset: int
    length: int
    url: str
    signature: PageSignature


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def sort_key(entry: IndexEntry) -> bytes:
    """Bytes that order entries by site, then URL, then position in the input (a total order)."""
    return b"\0".join(
        (
            _utf8(entry.site).replace(b"\0", b""),
            _utf8(entry.url_key).replace(b"\0", b"\1"),
            _TIEBREAK.pack(entry.file_id, entry.offset),
        )
    )


def encode_entry(entry: IndexEntry) -> bytes:
    sig = entry.signature
    site, url_key, url = _utf8(entry.site), _utf8(entry.url_key), _utf8(entry.url)
    fixed = _FIXED.pack(
        entry.file_id, entry.offset, entry.length, sig.text_bytes,
        len(sig.hashes), len(sig.blocks), len(sig.texts), len(sig.slots), len(site),
        len(url_key), len(url),
    )
    return b"".join(
        (fixed, site, url_key, url, sig.hashes.tobytes(), sig.blocks.tobytes(),
         sig.block_sizes.tobytes(), sig.texts.tobytes(), sig.slots.tobytes())
    )


def decode_entry(payload: bytes) -> IndexEntry:
    (file_id, offset, length, text_bytes, n_hashes, n_blocks, n_texts, n_slots, n_site, n_key,
     n_url) = _FIXED.unpack_from(payload)
    pos = _FIXED.size
    site = payload[pos : pos + n_site].decode("utf-8", "surrogateescape")
    pos += n_site
    url_key = payload[pos : pos + n_key].decode("utf-8", "surrogateescape")
    pos += n_key
    url = payload[pos : pos + n_url].decode("utf-8", "surrogateescape")
    pos += n_url
    hashes = array("Q", payload[pos : pos + 8 * n_hashes])
    pos += 8 * n_hashes
    blocks = array("Q", payload[pos : pos + 8 * n_blocks])
    pos += 8 * n_blocks
    sizes = array("I", payload[pos : pos + 4 * n_blocks])
    pos += 4 * n_blocks
    texts = array("Q", payload[pos : pos + 8 * n_texts])
    pos += 8 * n_texts
    slots = array("Q", payload[pos : pos + 8 * n_slots])
    if len(slots) != n_slots:
        raise WorkDirError("index entry is truncated: delete the work directory and re-index")
    return IndexEntry(
        site, url_key, file_id, offset, length, url,
        PageSignature(hashes, blocks, sizes, text_bytes, texts, slots),
    )


def partition_of(site: str, partitions: int) -> int:
    """The partition a site's entries go to: stable across processes and machines."""
    return xxh3_64_intdigest(_utf8(site)) % partitions


class RunWriter:
    """Collects one input file's entries and spills them as sorted runs, one per partition."""

    def __init__(
        self, directory: Path, file_id: int, partitions: int, run_bytes: int = DEFAULT_RUN_BYTES
    ) -> None:
        self.directory = directory
        self.file_id = file_id
        self.partitions = partitions
        self.run_bytes = max(1, run_bytes)
        self._pending: list[tuple[int, bytes, bytes]] = []
        self._pending_bytes = 0
        self._runs = 0
        self.written: list[Path] = []

    def add(self, entry: IndexEntry) -> None:
        key = sort_key(entry)
        payload = encode_entry(entry)
        self._pending.append((partition_of(entry.site, self.partitions), key, payload))
        self._pending_bytes += len(key) + len(payload) + 64
        if self._pending_bytes >= self.run_bytes:
            self.flush()

    def flush(self) -> None:
        """Sort what is pending and write it out, one run file per partition touched."""
        if not self._pending:
            return
        self._pending.sort(key=lambda item: (item[0], item[1]))
        for partition, items in groupby(self._pending, key=lambda item: item[0]):
            path = self.run_path(partition)
            path.parent.mkdir(parents=True, exist_ok=True)
            write_run(path, ((key, payload) for _, key, payload in items))
            self.written.append(path)
        self._runs += 1
        self._pending = []
        self._pending_bytes = 0

    def run_path(self, partition: int) -> Path:
        return self.directory / f"p{partition:04d}" / f"f{self.file_id:06d}-r{self._runs:04d}.run"


def write_run(path: Path, pairs: Iterable[tuple[bytes, bytes]]) -> None:
    """Write (key, payload) pairs, already in key order, as one run file."""
    with open(path, "wb") as out:
        for key, payload in pairs:
            out.write(_FRAME.pack(len(key), len(payload)))
            out.write(key)
            out.write(payload)


def iter_run(path: Path) -> Iterator[tuple[bytes, bytes]]:
    """The (key, payload) pairs of one run file, in its (sorted) order."""
    with open(path, "rb", buffering=1 << 16) as fh:
        while header := fh.read(_FRAME.size):
            if len(header) < _FRAME.size:
                raise WorkDirError(f"{path}: truncated run file: delete the work directory")
            key_len, payload_len = _FRAME.unpack(header)
            key = fh.read(key_len)
            payload = fh.read(payload_len)
            if len(payload) != payload_len:
                raise WorkDirError(f"{path}: truncated run file: delete the work directory")
            yield key, payload


def _merge(paths: list[Path]) -> Iterator[tuple[bytes, bytes]]:
    streams = [iter_run(path) for path in paths]
    return heapq.merge(*streams, key=lambda item: item[0])


def merge_runs(paths: Iterable[Path], *, fan_in: int = MAX_FAN_IN) -> Iterator[bytes]:
    """K-way merge of sorted runs: payloads in global key order.

    At most ``fan_in`` runs are open at once: with more, groups of runs are first merged into
    longer runs (written beside the first run of each group and removed once merged again).
    """
    runs = sorted(paths)
    level = 0
    while len(runs) > fan_in:
        merged = []
        for start in range(0, len(runs), fan_in):
            group = runs[start : start + fan_in]
            target = group[0].with_name(f"{group[0].stem}.m{level}-{start}.merge")
            write_run(target, _merge(group))
            if level:
                for path in group:
                    path.unlink()
            merged.append(target)
        runs = merged
        level += 1
    try:
        for _key, payload in _merge(runs):
            yield payload
    finally:
        if level:
            for path in runs:
                path.unlink(missing_ok=True)


def partition_runs(index_dir: Path, partition: int) -> list[Path]:
    directory = index_dir / f"p{partition:04d}"
    if not directory.is_dir():
        return []
    return sorted(directory.glob("*.run"))


def iter_partition(
    index_dir: Path, partition: int, *, fan_in: int = MAX_FAN_IN
) -> Iterator[IndexEntry]:
    """Every entry of one partition, sorted by site then URL."""
    for payload in merge_runs(partition_runs(index_dir, partition), fan_in=fan_in):
        yield decode_entry(payload)

