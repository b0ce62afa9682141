"""Accounting for every record: what was cleaned, carried through, or skipped, and why.

For each input, ``records == cleaned + carried + skipped``: every item the reader yields is one
of the three. Problems (a payload that would not decode, a record cut short, a wrong
Content-Length…) are counted by reason; a record can be cleaned, carried or skipped *with* a
problem (a page cut short by the end of the file is cleaned in text outputs, carried in WARC
output).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from .names import escape_name

__all__ = ["Tally", "reason_key"]

_DETAILS = re.compile(r"\s*\([^)]*\)")


def reason_key(reason: str) -> str:
    """A reason without its particulars, so that like problems are counted together.

    >>> reason_key("record is truncated (75207 of 88275 bytes)")
    'record is truncated'
    """
    return _DETAILS.sub("", reason).strip()


@dataclass
class Tally:
    """What one stage did with one input (or, merged, with all of them)."""

    path: str = ""
    output: str = ""
    records: int = 0
    cleaned: int = 0  # HTML pages cleaned
    carried: int = 0  # records passed on as they are (or repaired, see problems)
    skipped: int = 0  # damaged stretches and records that could not be read at all
    indexed: int = 0  # pages in the index (scan only)
    html_bytes_before: int = 0  # the decoded payloads of the pages cleaned
    html_bytes_after: int = 0  # their cleaned documents as written (WARC output only)
    text_chars: int = 0  # characters of their cleaned text (text outputs only)
    removed_subtrees: int = 0
    removed_slots: int = 0  # template slots (role elements whose slot the site repeats)
    removed_blocks: int = 0  # repeated blocks; in content mode, blocks judged not main content
    lines_dropped_perplexity: int = 0  # --max-line-perplexity: lines above it (text outputs)
    pages_dropped_perplexity: int = 0  # --max-page-perplexity: cleaned pages not written
    duplicates_exact: int = 0  # --dedup: pages an exact copy of their group's kept page
    duplicates_near: int = 0  # --dedup: pages a near duplicate of it
    dropped_duplicate_exact: int = 0  # --dedup drop: of those, cleaned pages not written
    dropped_duplicate_near: int = 0
    revisits_written: int = 0  # --dedup revisit: exact copies written as revisit records
    pages_dropped_bucket: int = 0  # --keep-buckets: cleaned pages of other buckets not written
    pii_email: int = 0  # --redact-pii: e-mail addresses redacted in the text written
    pii_ipv4: int = 0  # IPv4 addresses
    pii_ipv6: int = 0  # IPv6 addresses
    lines_dropped_noise: int = 0  # --max-line-noise: lines above it (text outputs)
    pages_flagged: int = 0  # --quality-filters: cleaned pages with a flag
    pages_dropped_quality: int = 0  # --drop-flagged: of those, pages not written
    problems: Counter[str] = field(default_factory=Counter)
    quality_flags: Counter[str] = field(default_factory=Counter)  # flagged pages by FILTER:REASON
    quality_dropped: Counter[str] = field(default_factory=Counter)  # dropped pages by FILTER:REASON

    def problem(self, reason: str) -> None:
        self.problems[reason_key(reason)] += 1

    @property
    def balanced(self) -> bool:
        return self.records == self.cleaned + self.carried + self.skipped

    def merge(self, other: Tally) -> None:
        for name in _COUNTS:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for name in _COUNTERS:
            getattr(self, name).update(getattr(other, name))

    def to_state(self) -> dict[str, Any]:
        """Every field, as JSON can hold it (what :meth:`from_state` reads back)."""
        state = asdict(self)
        for name in _COUNTERS:
            state[name] = dict(getattr(self, name))
        return state

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> Tally:
        names = {f.name for f in fields(cls)}
        tally = cls(**{k: v for k, v in state.items() if k in names and k not in _COUNTERS})
        for name in _COUNTERS:
            setattr(tally, name, Counter(state.get(name) or {}))
        return tally

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": escape_name(self.path), "output": escape_name(self.output),
            "records": self.records,
            "cleaned": self.cleaned, "carried": self.carried, "skipped": self.skipped,
            "problems": dict(sorted(self.problems.items())),
        }


# The fields merge adds up: every count (all the int fields), so a new counter needs no list.
_COUNTS = tuple(f.name for f in fields(Tally) if f.type in ("int", int))
# The counts by reason merge adds up key by key.
_COUNTERS = tuple(f.name for f in fields(Tally) if str(f.type).startswith("Counter"))
