"""What pass 2 is told of each page's duplicates: one side file per input, in record order.

(Also the duplicate stage's job description and file names: what a process needs that starts
the stage without doing it. Nothing here imports numpy, so the main process of a run, whose
pass-2 workers are forked from it, stays as small as without the stage.)

The duplicate stage writes, for every input, the pages of it that are in a duplicate group
(two or more pages): the page's record ordinal, the group's size, whether the page is the one
the group keeps or an exact or near duplicate of it, its estimated similarity to the kept page,
and the kept page's URL, date and record id. Pages not listed are unique. Pass 2 reads the file
in step with the input (:class:`VerdictReader`), so it stays one streaming pass.

>>> import tempfile
>>> with tempfile.TemporaryDirectory() as tmp:
...     path = Path(tmp) / "f000000.dups"
...     with VerdictWriter(path) as out:
...         out.add(Verdict(3, 2, Kind.NEAR, 0.82, "http://a.com/x", "2024-01-01T00:00:00Z", ""))
...     reader = VerdictReader(path)
...     reader.get(1), reader.get(3).keep_url
(None, 'http://a.com/x')
"""

from __future__ import annotations

import enum
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from warcdeboil.sidefile import InStep, SideFileWriter, reading
from warcdeboil.site.sitekey import SiteKeyMode

__all__ = ["DEDUP_FORMAT", "DedupMode", "Kind", "SignJob", "Verdict", "VerdictReader",
           "VerdictWriter", "duplicate_fields", "iter_verdicts", "signatures_dir", "verdicts_path"]

# Bumped whenever the stage's files, or the parameters its groups depend on (shingles, MinHash,
# banding, thresholds: warcdeboil.dedup), change: a work directory's verdicts are then redone.
DEDUP_FORMAT = 2

_HEAD = struct.Struct("<QIBdIII")  # ordinal, group size, kind, similarity, 3 string lengths


class DedupMode(str, enum.Enum):
    """What ``--dedup`` does with the duplicates the stage found."""

    OFF = "off"  # no duplicate stage; outputs as without it
    MARK = "mark"  # JSONL: duplicate_of, duplicate_group_size, duplicate_similarity, duplicate_kind
    DROP = "drop"  # text outputs: duplicates left out (counted by kind)
    REVISIT = "revisit"  # WARC: a later exact copy becomes a revisit record


class Kind(enum.IntEnum):
    KEPT = 0  # the page its group keeps
    EXACT = 1  # the same payload digest as the kept page
    NEAR = 2  # a near duplicate of it (or of another copy of it)


@dataclass(frozen=True, slots=True)
class Verdict:
    """One page of a duplicate group, and the page the group keeps."""

    ordinal: int  # the page's record ordinal in its input
    group_size: int
    kind: Kind
    similarity: float  # estimated Jaccard similarity to the kept page (1.0: itself, or exact)
    keep_url: str
    keep_date: str
    keep_record_id: str

    @property
    def duplicate(self) -> bool:
        return self.kind is not Kind.KEPT


def duplicate_fields(verdict: Verdict | None) -> dict[str, object]:
    """The JSONL fields of a page (``verdict`` None: a page without duplicates).

    >>> duplicate_fields(None)["duplicate_group_size"]
    1
    """
    if verdict is None or not verdict.duplicate:
        return {"duplicate_of": None,
                "duplicate_group_size": verdict.group_size if verdict is not None else 1,
                "duplicate_similarity": None, "duplicate_kind": None}
    return {"duplicate_of": verdict.keep_url, "duplicate_group_size": verdict.group_size,
            "duplicate_similarity": round(verdict.similarity, 4),
            "duplicate_kind": "exact" if verdict.kind is Kind.EXACT else "near"}


def verdicts_path(directory: Path, file_id: int) -> Path:
    return directory / f"f{file_id:06d}.dups"


def signatures_dir(dedup_dir: Path) -> Path:
    """Where the stage keeps its signatures, page metadata and groups."""
    return dedup_dir / "signatures"


@dataclass(frozen=True, slots=True)
class SignJob:
    """One input's signatures (picklable): see :func:`warcdeboil.dedup.stage.sign_file`."""

    page_store: str
    directory: str  # where the parts go (signatures_dir)
    part: int  # the input's file id: parts are numbered like the page stores
    profiles_dir: str | None
    partitions: int
    site_key: SiteKeyMode
    # Where to keep what each page's template removes, for pass 2 (warcdeboil.dedup.doomed);
    # None: not kept.
    doomed: str | None = None


class VerdictWriter(SideFileWriter):
    """Writes one input's side file, verdicts in ordinal order (atomic, a context manager)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)

    def add(self, verdict: Verdict) -> None:
        strings = [s.encode("utf-8", "surrogatepass")
                   for s in (verdict.keep_url, verdict.keep_date, verdict.keep_record_id)]
        self._fh.write(_HEAD.pack(verdict.ordinal, verdict.group_size, int(verdict.kind),
                                  verdict.similarity, *map(len, strings)))
        self._fh.write(b"".join(strings))


def iter_verdicts(path: Path) -> Iterator[Verdict]:
    """The verdicts of one side file, in ordinal order."""
    with reading(path, "duplicate verdicts") as fh:
        while head := fh.read(_HEAD.size):
            ordinal, size, kind, similarity, *lengths = _HEAD.unpack(head)
            data = fh.read(sum(lengths))
            if len(data) < sum(lengths):
                raise ValueError("cut short")
            strings, pos = [], 0
            for length in lengths:
                strings.append(data[pos : pos + length].decode("utf-8", "surrogatepass"))
                pos += length
            yield Verdict(ordinal, size, Kind(kind), similarity, *strings)


class VerdictReader(InStep[Verdict]):
    """One input's verdicts read in step with its records (:meth:`get`: None for a page without
    duplicates)."""

    def __init__(self, path: Path) -> None:
        super().__init__((verdict.ordinal, verdict) for verdict in iter_verdicts(path))
