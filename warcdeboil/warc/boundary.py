"""Where a record really ends when its declared length does not check out: the next header.

A record's declared length is a claim. The reader checks what follows the declared end: the next
record (after its trailer) or the end of the input. When something else follows, the first
record header inside the declared block is where the record really ends, and the records after
it are read as usual. The block is searched only then: a block may hold bytes that look like a
header (a WARC archived inside a WARC, a page quoting one), and a right length keeps it whole.

A header found this way is checked, not just matched: a whole WARC header (version line, fields,
a Content-Length) or a whole ARC header line that looks like one.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .arc import is_arc_header
from .fields import parse_fields
from .spill import SpilledBlock

__all__ = ["HEADER_PROBE", "find_header", "find_header_in_spill", "is_warc_header"]

# How many bytes from a candidate are read to check it is a header: WARC headers of real writers
# take a few hundred bytes, an ARC header line at most ARC_LINE_BYTES. A longer header found
# inside a block is not taken for one (the record then keeps its declared length).
HEADER_PROBE = 1 << 16
# Candidates: a line that starts like a WARC header, or like an ARC header line (a URL scheme).
_WARC_CANDIDATE = re.compile(rb"\nWARC/")
_ARC_CANDIDATE = re.compile(rb"\n[A-Za-z][A-Za-z0-9+.\-]{0,31}:\S")
# Bytes a search must see again at the end of what it searched, for a candidate cut in two.
OVERLAP = 40
_VERSION = re.compile(r"WARC/\d+\.\d+")
_SEARCH_PIECE = 1 << 20


def is_warc_header(data: bytes) -> bool:
    """Whether ``data`` starts with a whole WARC header: its version line, fields, the blank
    line that ends them, and one numeric Content-Length.

    >>> is_warc_header(b"WARC/1.0\\r\\nWARC-Type: resource\\r\\nContent-Length: 3\\r\\n\\r\\nabc")
    True
    >>> is_warc_header(b"WARC/1.0\\r\\nsee the record above\\r\\n\\r\\n")
    False
    """
    end = data.find(b"\r\n\r\n", 0, HEADER_PROBE)
    if end < 0:
        return False
    version, _, rest = data[:end].decode("utf-8", "surrogateescape").partition("\r\n")
    if not _VERSION.fullmatch(version.strip()):
        return False
    fields, malformed = parse_fields(rest.split("\r\n"))
    lengths = [value for name, value in fields if name.lower() == "content-length"]
    return malformed is None and len(lengths) == 1 and lengths[0].isdigit()


def find_header(
    data: bytes, start: int, end: int, arc: bool, probe: Callable[[int], bytes]
) -> int:
    """Where in ``data`` the first record header starts whose line begins at a newline in
    ``data[start:end]`` (-1 when none does). ``probe(i)``: the bytes from ``i`` on, as many
    as :data:`HEADER_PROBE` where there are (a header may run past ``data``)."""
    pattern = _ARC_CANDIDATE if arc else _WARC_CANDIDATE
    check = is_arc_header if arc else is_warc_header
    for found in pattern.finditer(data, start, min(len(data), end + OVERLAP)):
        if found.start() >= end:
            break
        if check(probe(found.start() + 1)):
            return found.start() + 1
    return -1


def find_header_in_spill(spill: SpilledBlock, arc: bool, after: bytes) -> int:
    """Where in a spilled block the first record header starts (-1 when none does), read a
    piece at a time; ``after``: the bytes that follow the block, for a header that runs past it.
    A header at the very start of the block counts (the line before it is the record's own)."""

    def probe(at: int) -> bytes:
        data = spill.read_at(at, HEADER_PROBE)
        return data if len(data) == HEADER_PROBE else data + after[: HEADER_PROBE - len(data)]

    def probe_piece(at: int) -> bytes:  # ``at`` in the piece searched
        return probe(base + at)

    position = 0
    while position < spill.size:
        # The first piece gets the newline that ends the record's header before it.
        lead = b"\n" if position == 0 else b""
        base = position - len(lead)  # where in the block the piece starts
        piece = lead + spill.read_at(position, _SEARCH_PIECE + OVERLAP)
        end = len(lead) + min(_SEARCH_PIECE, spill.size - position)
        found = find_header(piece, 0, end, arc, probe_piece)
        if found >= 0:
            return base + found
        position += _SEARCH_PIECE
    return -1
