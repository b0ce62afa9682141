"""Named header fields, as WARC and HTTP both write them."""

from __future__ import annotations

__all__ = ["parse_fields"]

# Only spaces and tabs surround a value (RFC 2616 LWS); U+00A0 and kin are content.
LWS = " \t"


def parse_fields(lines: list[str]) -> tuple[list[tuple[str, str]], str | None]:
    """``Name: value`` lines (with folded continuations) in order, and the first line that is
    none (or None when all are well formed).

    >>> parse_fields(["A: 1", "B:  two", "  more", "junk"])
    ([('A', '1'), ('B', 'two more')], 'junk')
    """
    fields: list[tuple[str, str]] = []
    malformed = None
    for line in lines:
        if line[:1] in (" ", "\t") and fields:
            key, value = fields[-1]
            fields[-1] = (key, f"{value} {line.strip(LWS)}")
            continue
        key, colon, value = line.partition(":")
        if colon:
            fields.append((key.strip(LWS), value.strip(LWS)))
        elif malformed is None and line.strip(LWS):
            malformed = line
    return fields, malformed
