"""Whether a record's block is whole, and if not, the ``WARC-Truncated`` reason it is given.

A block is incomplete in two ways that every output treats alike: the crawler said so (its
record carries ``WARC-Truncated``, e.g. a payload over its size limit), or the reader could not
read all the bytes the record declares (the file, or damage, ends inside the block: the record's
``error`` says it is truncated). WARC output writes what survives of the second kind marked
``WARC-Truncated`` (:mod:`.recompress`); text outputs mark the page of either kind.
"""

from __future__ import annotations

from .reader import WarcRecord

__all__ = ["CUT_SHORT", "cut_short", "truncation"]

# The reason given to a block the reader cut short. WARC 1.1 names four (length, time,
# disconnect, unspecified); "length" is what `recompress` and WARC output have always written
# for such records, so that a page's WARC and text outputs say the same.
CUT_SHORT = "length"


def cut_short(record: WarcRecord) -> bool:
    """Whether the reader read fewer bytes of the block than the record declares (the input,
    or damage in it, ends inside the block): its ``error`` says the record is truncated."""
    return "truncated" in (record.error or "")


def truncation(record: WarcRecord) -> str:
    """The record's ``WARC-Truncated`` reason: its own field's value when the crawler marked
    it, :data:`CUT_SHORT` when the reader cut its block short, ``""`` when the block is whole.

    >>> from warcdeboil.warc.reader import WarcRecord
    >>> truncation(WarcRecord(0, 0, "WARC/1.0", [("WARC-Truncated", "time")], b""))
    'time'
    >>> cut = "record is truncated (3 of 9 bytes)"
    >>> truncation(WarcRecord(0, 0, "WARC/1.0", [], b"", error=cut))
    'length'
    >>> truncation(WarcRecord(0, 0, "WARC/1.0", [], b""))
    ''
    """
    own = (record.get("WARC-Truncated") or "").strip()
    if own:
        return own
    return CUT_SHORT if cut_short(record) else ""
