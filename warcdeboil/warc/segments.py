"""A segment: a run of an archive's decompressed bytes and where it came from in the file.

The compression layers (:mod:`.compression` for gzip and plain files, :mod:`.zstdio` for zstd)
cut a file into segments; the reader maps its records' offsets back to the file through them.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = ["Kind", "Segment"]


class Kind(enum.Enum):
    """Where a segment's bytes come from, which decides how offsets map back to the file."""

    PLAIN = "plain"  # a chunk of an uncompressed file: every byte has its own offset
    START = "start"  # the first piece of a gzip member or zstd frame
    INNER = "inner"  # a later piece of the same member: records starting here are unaddressable


@dataclass(frozen=True, slots=True)
class Segment:
    """A run of decompressed bytes and where it came from in the file.

    ``offset`` is where the segment's member (or, for plain files, the chunk) starts; ``end``,
    where the file goes on after it when this is the last piece of its member (else -1).
    A *damaged* segment holds what could be read before the damage (possibly nothing) and says
    why; reading resumes at ``end``.
    """

    offset: int
    end: int
    data: bytes
    kind: Kind
    damage: str | None = None
