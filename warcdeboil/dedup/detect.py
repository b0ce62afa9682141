"""The whole duplicate search, streaming: pages in one at a time, signatures on disk, groups out.

A :class:`SignatureWriter` turns each page's text into its MinHash signature and writes it, with
what the keep rule and the outputs need of the page (URL, date, text length, payload digest),
to files of one *part* (the stage writes one part per input, in parallel). A
:class:`PageSignatures` reads the parts of a directory back as one run of pages, numbered in
part order (memory-mapped: nothing grows with the pages but the operating system's cache).
:func:`search` finds the exact duplicates (equal payload digests) and the near ones (LSH
candidates confirmed by their estimated similarity) and joins them in a union-find on disk;
:func:`duplicate_groups` does all of it for pages given by an iterator.

>>> import tempfile
>>> story = " ".join(f"word{i}" for i in range(60))
>>> pages = [PageText(0, "http://a.com/x?utm_source=feed", story, "2024-01-02"),
...          PageText(1, "http://a.com/x", story, "2024-01-02"),
...          PageText(2, "http://b.org/y", "another story entirely, nothing alike " * 5, "")]
>>> with tempfile.TemporaryDirectory() as tmp:
...     list(duplicate_groups(iter(pages), Path(tmp)))
[DuplicateGroup(keep=1, drop=(0,))]
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import numpy as np

from .groups import Copy, DuplicateGroup, UnionFind, choose_keeper, exact_groups, group_members
from .lsh import LshParams, candidate_pairs, confirms
from .minhash import MinHasher
from .shingles import shingle_hashes
from .spill import DEFAULT_RUN_ITEMS
from .text import lead_digest

__all__ = ["DedupStats", "PageSignatures", "PageText", "SignatureWriter", "duplicate_groups",
           "search"]

# What is kept of each page beside its signature: fixed-size, so page n is found by arithmetic.
MAX_DIGEST = 32  # bytes of a payload digest (SHA-1: 20, SHA-256: 32)
META = np.dtype([
    ("ordinal", "<u8"),  # the caller's number for the page (the stage: its record's place)
    ("chars", "<i8"),  # characters of the text the signature was made from
    ("shingles", "<i8"),  # shingles of that text, repeats included (the containment test)
    ("has_text", "u1"),  # 0: an empty text, never a near duplicate of anything
    ("digest_len", "u1"),
    ("digest", "u1", (MAX_DIGEST,)),
    ("strings", "<u8"),  # where the page's strings start in the part's strings file
    ("lead", "<u8"),  # the text's lead paragraph (text.lead_digest; 0: none): the lead rule
    ("no_template", "u1"),  # 1: its site has no template: pairs within it get a second look
])
# META's bytes, packed here a record at a time (a structured array a page cost 4x as much).
_META_RECORD = struct.Struct(f"<QqqBB{MAX_DIGEST}sQQB")
assert _META_RECORD.size == META.itemsize
_STRINGS = struct.Struct("<IIII")  # lengths of URL, date, record id, site


@dataclass(frozen=True, slots=True)
class PageText:
    """One page as duplicate search sees it: its number, URL, template-removed text, capture
    date, and payload digest (``b""``: unknown, no exact-duplicate check). ``site`` and
    ``no_template`` (its site has no template): two pages of one site without template are
    near duplicates only if the search's second look says so too (:mod:`.own`)."""

    page: int
    url: str
    text: str
    date: str = ""
    digest: bytes = b""
    site: str = ""
    no_template: bool = False


@dataclass(slots=True)
class DedupStats:
    pages: int = 0  # pages searched
    exact_pairs: int = 0  # pages joined by an equal payload digest
    candidates: int = 0  # LSH candidate pairs compared (pairs already joined are not)
    confirmed: int = 0  # candidates at or above the threshold (second looks passed included)
    # Of the candidates at or above it, pairs of pages of one site without template given a
    # second look (:mod:`.own`), and those it refused (their own texts differ).
    looked: int = 0
    refused: int = 0
    skipped_empty: int = 0  # pages without text: never near duplicates of anything
    spill: dict[str, int] = field(default_factory=dict)


def _part_paths(directory: Path, part: int) -> tuple[Path, Path, Path]:
    stem = f"p{part:06d}"
    return directory / f"{stem}.sig", directory / f"{stem}.meta", directory / f"{stem}.str"


class SignatureWriter:
    """Writes one part: each page's signature, metadata and strings, appended as they come
    (a context manager; the files appear under their final names only when it closes cleanly)."""

    def __init__(self, directory: Path, part: int, hasher: MinHasher | None = None) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.hasher = hasher or MinHasher()
        self.pages = 0
        self._paths = _part_paths(directory, part)
        self._tmp = [p.with_name(p.name + ".tmp") for p in self._paths]
        self._files: list[BinaryIO] = [open(p, "wb") for p in self._tmp]  # noqa: SIM115
        self._strings_at = 0

    def add(self, text: str, *, url: str = "", date: str = "", digest: bytes = b"",
            ordinal: int | None = None, record_id: str = "", site: str = "",
            shingles: np.ndarray | None = None, no_template: bool = False) -> None:
        """One page: its signature is made from ``text`` (``shingles``: its shingle hashes,
        when the caller made them already); the rest is kept as given (``no_template``: its
        site has no template, see :mod:`.own`)."""
        if len(digest) > MAX_DIGEST:
            raise ValueError(f"digest of {len(digest)} bytes (at most {MAX_DIGEST})")
        if shingles is None:
            shingles = shingle_hashes(text)
        signature = self.hasher.signature(shingles)
        strings = [s.encode("utf-8", "surrogatepass") for s in (url, date, record_id, site)]
        sig_file, meta_file, str_file = self._files
        sig_file.write(signature.astype("<u4", copy=False).tobytes())
        meta_file.write(_META_RECORD.pack(
            self.pages if ordinal is None else ordinal, len(text), len(shingles),
            bool(text.strip()), len(digest), digest, self._strings_at, lead_digest(text),
            no_template))
        blob = _STRINGS.pack(*map(len, strings)) + b"".join(strings)
        str_file.write(blob)
        self._strings_at += len(blob)
        self.pages += 1

    def __enter__(self) -> SignatureWriter:
        return self

    def __exit__(self, exc_type: object, *_: object) -> None:
        for fh in self._files:
            fh.close()
        for tmp, path in zip(self._tmp, self._paths, strict=True):
            if exc_type is None:
                tmp.replace(path)
            else:
                tmp.unlink(missing_ok=True)


@dataclass(frozen=True, slots=True)
class PageStrings:
    url: str
    date: str
    record_id: str
    site: str


class PageSignatures:
    """The parts ``0 .. parts-1`` of a directory as one run of pages: page numbers run through
    part 0, then part 1…, so the numbering depends only on the order of the parts."""

    def __init__(self, directory: Path, parts: int, num_perm: int | None = None) -> None:
        self.num_perm = num_perm or MinHasher().num_perm
        self._signatures: list[np.ndarray] = []
        self._meta: list[np.ndarray] = []
        self._strings: list[Path] = []
        self._open: dict[int, BinaryIO] = {}
        sizes = []
        for part in range(parts):
            sig, meta, strings = _part_paths(directory, part)
            count = meta.stat().st_size // META.itemsize
            sizes.append(count)
            self._meta.append(_map(meta, META, (count,)))
            self._signatures.append(_map(sig, np.dtype("<u4"), (count, self.num_perm)))
            self._strings.append(strings)
        self.starts = np.concatenate(([0], np.cumsum(sizes, dtype=np.int64)))
        self.size = int(self.starts[-1])

    def locate(self, page: int) -> tuple[int, int]:
        """(part, place in the part) of a page number."""
        part = int(np.searchsorted(self.starts, page, side="right")) - 1
        return part, page - int(self.starts[part])

    def part_pages(self, part: int) -> range:
        return range(int(self.starts[part]), int(self.starts[part + 1]))

    def signature(self, page: int) -> np.ndarray:
        part, at = self.locate(page)
        return self._signatures[part][at]

    def meta(self, page: int) -> np.void:
        part, at = self.locate(page)
        return self._meta[part][at]  # type: ignore[no-any-return]

    def lead(self, page: int) -> int:
        return int(self.meta(page)["lead"])

    def leads(self, path: Path) -> np.ndarray:
        """Every page's lead digest, indexed by page number, in a memory-mapped file."""
        leads = np.lib.format.open_memmap(path, mode="w+", dtype=np.uint64,
                                          shape=(max(self.size, 1),))
        for part, meta in enumerate(self._meta):
            leads[int(self.starts[part]):int(self.starts[part + 1])] = meta["lead"]
        return leads

    def digest(self, page: int) -> bytes:
        meta = self.meta(page)
        return bytes(meta["digest"][: int(meta["digest_len"])])

    def strings(self, page: int) -> PageStrings:
        part, at = self.locate(page)
        start = int(self._meta[part][at]["strings"])
        fh = self._open.get(part)
        if fh is None:
            fh = self._open[part] = open(self._strings[part], "rb")  # noqa: SIM115
        fh.seek(start)
        lengths = _STRINGS.unpack(fh.read(_STRINGS.size))
        data = fh.read(sum(lengths))
        values, pos = [], 0
        for length in lengths:
            values.append(data[pos : pos + length].decode("utf-8", "surrogatepass"))
            pos += length
        return PageStrings(*values)

    def copy(self, page: int) -> Copy:
        """What the keep rule looks at."""
        strings = self.strings(page)
        return Copy(page, strings.url, int(self.meta(page)["chars"]), strings.date)

    def similarity(self, first: int, second: int) -> float:
        """The estimated Jaccard similarity of two pages' texts (1.0 for equal digests)."""
        digest = self.digest(first)
        if digest and digest == self.digest(second):
            return 1.0
        agree = np.count_nonzero(self.signature(first) == self.signature(second))
        return float(agree) / self.num_perm

    def with_text(self) -> Iterator[tuple[int, np.ndarray]]:
        """(page, signature) of every page with text, in page order."""
        for part, signatures in enumerate(self._signatures):
            start = int(self.starts[part])
            for at in np.flatnonzero(self._meta[part]["has_text"]):
                yield start + int(at), signatures[at]

    def digests(self) -> Iterator[tuple[int, bytes]]:
        """(page, digest) of every page with a digest, the digest padded to one width (its
        length first, so that digests of other lengths never compare equal)."""
        for part, meta in enumerate(self._meta):
            start = int(self.starts[part])
            for at in np.flatnonzero(meta["digest_len"]):
                yield start + int(at), bytes([int(meta[at]["digest_len"])]) + meta[at][
                    "digest"].tobytes()

    def close(self) -> None:
        for fh in self._open.values():
            fh.close()
        self._open = {}
        self._signatures = []
        self._meta = []


def _map(path: Path, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
    """A read-only memory map of a raw file (an empty array for an empty file: mmap refuses
    those)."""
    if shape[0] == 0:
        return np.zeros(shape, dtype=dtype)
    # Viewed as a plain ndarray (the mapping stays): np.memmap indexing is a Python method.
    return np.memmap(path, dtype=dtype, mode="r", shape=shape).view(np.ndarray)


SecondLook = Callable[[np.ndarray], Iterable[bool]]
"""Given pairs of pages (an array of shape (n, 2)), whether each is a near duplicate by the
second look of :mod:`.own`."""


def search(signatures: PageSignatures, work_dir: Path, *, params: LshParams | None = None,
           run_items: int = DEFAULT_RUN_ITEMS, stats: DedupStats | None = None,
           key_run_items: int | None = None, second_look: SecondLook | None = None,
           ) -> UnionFind:
    """Join every pair of duplicates of the run in a union-find (a file of ``work_dir``):
    equal payload digests first, then LSH candidates that :func:`~.lsh.confirms`. External
    sorts hold ``run_items`` records, those of the LSH bucket keys ``key_run_items`` keys
    (``run_items`` when None).

    A confirmed pair of two pages of one site without template (``no_template``) is joined
    only if ``second_look`` says so too; those pairs are kept on disk until the candidates are
    all read, then given to it at once (without it, they are joined as the others)."""
    params = params or LshParams()
    stats = stats if stats is not None else DedupStats()
    work_dir.mkdir(parents=True, exist_ok=True)
    size = signatures.size
    stats.pages = size
    union = UnionFind(size, work_dir / "parents.npy")
    for members in exact_groups(signatures.digests(), work_dir, run_items=run_items):
        for other in members[1:]:
            stats.exact_pairs += union.union(members[0], other)
    with_text = 0

    def counted() -> Iterator[tuple[int, np.ndarray]]:
        nonlocal with_text
        for item in signatures.with_text():
            with_text += 1
            yield item

    leads = signatures.leads(work_dir / "leads.npy")
    looks = work_dir / "second-look.pairs"
    # The pairs waiting for their second look (a pair comes once per band its pages share):
    # pairs of pages of one site without template, a few in a crawl.
    waiting: set[tuple[int, int]] = set()
    with open(looks, "wb") as pending:
        for first, second in candidate_pairs(counted(), work_dir, params,
                                             run_items=key_run_items or run_items,
                                             stats=stats.spill, leads=leads):
            if union.find(first) == union.find(second) or (first, second) in waiting:
                continue
            stats.candidates += 1
            agree = np.count_nonzero(signatures.signature(first) == signatures.signature(second))
            a, b = signatures.meta(first), signatures.meta(second)
            same_lead = bool(a["lead"]) and a["lead"] == b["lead"]
            if confirms(float(agree) / signatures.num_perm, int(a["shingles"]),
                        int(b["shingles"]), params, same_lead=same_lead):
                if (second_look is not None and a["no_template"] and b["no_template"]
                        and _same_site(signatures, first, second)):
                    pending.write(_PAIR.pack(first, second))
                    waiting.add((first, second))
                    continue
                stats.confirmed += 1
                union.union(first, second)
    stats.skipped_empty = size - with_text
    del leads
    (work_dir / "leads.npy").unlink(missing_ok=True)
    if second_look is not None:
        _look_again(np.fromfile(looks, dtype="<i8").reshape(-1, 2), union, second_look, stats)
    looks.unlink()
    return union


_PAIR = struct.Struct("<qq")


def _same_site(signatures: PageSignatures, first: int, second: int) -> bool:
    site = signatures.strings(first).site
    return bool(site) and site == signatures.strings(second).site


def _look_again(pairs: np.ndarray, union: UnionFind, second_look: SecondLook,
                stats: DedupStats) -> None:
    """Join the pairs the second look confirms (those not joined through others meanwhile)."""
    apart = np.fromiter((union.find(a) != union.find(b) for a, b in pairs.tolist()), dtype=bool,
                        count=len(pairs))
    pairs = pairs[apart]
    stats.looked += len(pairs)
    for (first, second), same in zip(pairs.tolist(), second_look(pairs), strict=True):
        if same:
            stats.confirmed += 1
            union.union(first, second)
        else:
            stats.refused += 1


def duplicate_groups(pages: Iterable[PageText], work_dir: Path, *,
                     params: LshParams | None = None, hasher: MinHasher | None = None,
                     run_items: int = DEFAULT_RUN_ITEMS, stats: DedupStats | None = None,
                     second_look: SecondLook | None = None) -> Iterator[DuplicateGroup]:
    """Groups of duplicate pages, each with the page it keeps; ``pages`` come one at a time,
    numbered 0, 1, 2… in order (``page.page``), and are not held. ``second_look``: for the
    confirmed pairs of two pages of one site without template (see :func:`search`).

    Signatures, page metadata and the union-find live in files of ``work_dir`` (memory-mapped,
    removed at the end), bucket keys and groups go through external sorts of at most
    ``run_items`` records in memory.
    """
    hasher = hasher or MinHasher()
    work_dir.mkdir(parents=True, exist_ok=True)
    with SignatureWriter(work_dir, 0, hasher) as writer:
        for number, page in enumerate(pages):
            if page.page != number:
                raise ValueError(f"page {number} is numbered {page.page}")
            writer.add(page.text, url=page.url, date=page.date, digest=page.digest,
                       site=page.site, no_template=page.no_template)
    signatures = PageSignatures(work_dir, 1, hasher.num_perm)
    try:
        union = search(signatures, work_dir, params=params, run_items=run_items, stats=stats,
                       second_look=second_look)
        for members in group_members(union, work_dir, run_items=run_items):
            yield choose_keeper(members, signatures.copy)
        del union
    finally:
        signatures.close()
        for path in (*_part_paths(work_dir, 0), work_dir / "parents.npy"):
            path.unlink(missing_ok=True)
