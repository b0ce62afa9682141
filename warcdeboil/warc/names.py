"""File names as text: what a JSONL field or a WARC header may hold of a name that may not be
UTF-8 (names on disk are bytes; Python holds the bytes that are not UTF-8 as surrogates)."""

from __future__ import annotations

__all__ = ["escape_name"]

_HEX = frozenset("0123456789abcdefABCDEF")


def escape_name(name: str) -> str:
    """A file name as valid UTF-8 text for JSONL fields and WARC headers.

    Bytes that are not UTF-8 (held as surrogates, Python's surrogateescape), control
    characters, and a ``%`` that two hex digits follow become ``%XX``; everything else is kept,
    so a name of printable UTF-8 without such a ``%`` is unchanged, and decoding every ``%XX``
    gives the name's bytes back.

    >>> escape_name("caf\\udce9.warc"), escape_name("50%.warc"), escape_name("a%41\\n.warc")
    ('caf%E9.warc', '50%.warc', 'a%2541%0A.warc')
    """
    out = []
    for i, char in enumerate(name):
        code = ord(char)
        if 0xDC80 <= code <= 0xDCFF:  # one byte that was not UTF-8
            out.append(f"%{code - 0xDC00:02X}")
        elif 0xD800 <= code <= 0xDFFF or code < 0x20 or code == 0x7F:
            out.append("".join(f"%{b:02X}" for b in char.encode("utf-8", "surrogatepass")))
        elif char == "%" and _hex2(name[i + 1 : i + 3]):
            out.append("%25")
        else:
            out.append(char)
    return "".join(out)


def _hex2(text: str) -> bool:
    return len(text) == 2 and all(c in _HEX for c in text)
