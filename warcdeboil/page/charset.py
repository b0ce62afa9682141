"""Deciding a page's charset: byte-order mark, then the HTTP label and the ``<meta>`` label, each
checked against the bytes, else UTF-8 when the bytes are UTF-8, else a detector.

A label fits when the bytes decode under it without error and, for a single-byte charset, the
text is plausible (:func:`implausible`): windows-1251 bytes read as windows-1252 give words of
accented Latin letters only ("Íîâîñòè"), which real text does not have. Non-ASCII bytes that are
valid UTF-8 are UTF-8 whatever a legacy label says (legacy text is almost never valid UTF-8);
bytes that are UTF-8 but for a few (a page pasted together) are read as UTF-8, those few as
windows-1252. A legacy label that fits is also checked by the detector: text in another Latin
charset (Czech in windows-1250) reads as plausible windows-1252, many servers' default label, and
East Asian charsets (GBK, Big5, EUC-KR, Shift_JIS, EUC-JP) decode one another's bytes into
plausible-looking characters. With too few non-ASCII bytes for a detector to go on (a "café" in
an English page), no detector: the label, else windows-1252 if plausible.

The detector is chardet 7, chosen by ``benchmarks/charsets.py --detectors`` (the pages of the
benchmark, unlabelled, as :func:`detector_input` gives them; ISO-2022-JP's ASCII bytes whole):
it decoded all 123 pages of the issue's 15 charsets and all 48 of 12 others to their true text,
at 1.3 ms a page; faust-cchardet 112 and 45 at 0.5 ms (it takes Nordic windows-1252 for IBM852,
Yiddish windows-1255 for KOI8-R, KOI8-U for KOI8-R), charset-normalizer 103 and 37 at 0.8 ms.
It reads only the runs of text that hold non-ASCII bytes (:func:`detector_input`: scripts and
style sheets drown the text), and is called only when no label fits or to check a legacy label:
ASCII and UTF-8 pages never pay.

``source`` says what decided: ``bom``, ``http``, ``meta``, ``detected`` (the bytes, when no label
fits: valid UTF-8, or the detector), ``default`` (nothing declared and the bytes are ASCII or
valid UTF-8: read as UTF-8, no detector), or ``fallback`` (nothing fits the bytes: decoded with
replacement characters). :attr:`Decoding.sure` is False for a fallback, for bytes mostly UTF-8,
and for a detector's answer whose text is implausible: WARC output then keeps the record's own
bytes.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["Decoding", "decode_page", "detector_input", "implausible", "web_name"]

_META_CHARSET = re.compile(
    rb"""<meta[^>]+charset\s*=\s*["']?\s*([a-zA-Z0-9_:.\-]+)""", re.IGNORECASE
)
_CHARSET_PARAM = re.compile(r"""charset\s*=\s*["']?([^"';\s]+)""", re.IGNORECASE)
# How far into the page a <meta> charset is looked for (the HTML standard's prescan reads 1024
# bytes; pages put it later behind long comments and scripts, so a little more).
_META_BYTES = 4096
# WHATWG Encoding Standard: labels whose real decoder is a superset we must use instead.
_ALIASES = {
    "iso-8859-1": "cp1252", "latin1": "cp1252", "latin-1": "cp1252", "ascii": "cp1252",
    "us-ascii": "cp1252", "iso8859-1": "cp1252", "l1": "cp1252", "windows-1252": "cp1252",
    "gb2312": "gb18030", "gbk": "gb18030", "x-gbk": "gb18030", "euc-kr": "cp949",
    "ks_c_5601-1987": "cp949", "shift_jis": "cp932", "sjis": "cp932", "x-sjis": "cp932",
    "windows-31j": "cp932", "tis-620": "cp874", "iso-8859-11": "cp874", "iso-8859-9": "cp1254",
    "big5": "big5hkscs", "x-user-defined": "cp1252", "utf8": "utf-8",
    "unicode-1-1-utf-8": "utf-8", "iso-8859-8-i": "iso8859-8", "windows-874": "cp874",
    "dos-874": "cp874", "x-mac-cyrillic": "mac-cyrillic", "macintosh": "mac-roman",
    "x-mac-roman": "mac-roman", "koi8-ru": "koi8-u", "x-euc-jp": "euc_jp",
    "cp1252": "cp1252",
}
# A detector names one of two charsets that share most letters (ISO and Windows): when its
# text is implausible, the other is tried (ISO-8859-2 Polish is taken for windows-1250, whose
# bytes 0xA1-0xBF differ: "rodz±" for "rodzą").
_SIBLINGS = {
    "cp1250": "iso8859-2", "iso8859-2": "cp1250", "cp1255": "iso8859-8", "iso8859-8": "cp1255",
    "cp1254": "iso8859-9", "iso8859-9": "cp1254", "cp1253": "iso8859-7", "iso8859-7": "cp1253",
    "cp1257": "iso8859-13", "iso8859-13": "cp1257", "koi8-r": "koi8-u",
    "iso8859-5": "cp1251", "cp1256": "iso8859-6", "iso8859-6": "cp1256",
    "iso8859-15": "cp1252", "iso8859-11": "cp874",
}
# The escape that starts a 7-bit ISO-2022 charset's shift (ISO-2022-JP pages are ASCII bytes).
_ESCAPE = b"\x1b"
_HIGH = bytes(range(128, 256))
# Python codec names -> the WHATWG Encoding Standard's names (lower case, as labels match
# whatever the case), what JSONL's ``charset`` says.
_WEB_NAMES = {
    "utf-8": "utf-8", "cp1252": "windows-1252", "cp932": "shift_jis", "euc_jp": "euc-jp",
    "gb18030": "gb18030", "big5hkscs": "big5", "big5": "big5", "cp949": "euc-kr",
    "euc_kr": "euc-kr", "koi8-r": "koi8-r", "koi8-u": "koi8-u", "cp874": "windows-874",
    "iso2022_jp": "iso-2022-jp", "mac-roman": "macintosh", "mac-cyrillic": "x-mac-cyrillic",
    "utf-16-le": "utf-16le", "utf-16-be": "utf-16be", "cp866": "ibm866", "shift_jis": "shift_jis",
    "gbk": "gbk",
}
# Codecs whose every byte below 0x80 is ASCII: a page of ASCII bytes reads the same in any.
_ASCII_SAFE = re.compile(r"^(cp125\d|cp874|cp866|cp932|cp949|iso8859-\d+|koi8-[ru]|mac-\w+|"
                         r"euc_\w+|gb18030|gbk|big5\w*|shift_jis|utf-8)$")
# Fewer non-ASCII bytes than this are too little for a detector (it took a page with one "é"
# for Greek, and one with two windows-1252 dashes for IBM855): windows-1252 is read first, if
# plausible. And a windows-1252 label is overruled only with at least this much to go on.
_FEW_BYTES = 16
# Latin charsets that differ from windows-1252 in a few letters only: a detector's choice among
# them on Western text is no reason to overrule a windows-1252 label.
_WESTERN = re.compile(r"^(iso8859-(1|3|4|10|14|15|16)|cp85\d|cp437|mac-\w+|hp.*|viscii|cp1258|"
                      r"latin.*)$")
# East Asian multi-byte charsets: each decodes much of the others' bytes without an error (EUC-KR
# Korean reads as GBK Chinese, "葛电 牢埃篮"), so a page labelled with one is checked by the
# detector, which may name another.
_CJK = frozenset({"gb18030", "gbk", "big5hkscs", "big5", "cp949", "euc_kr", "cp932", "shift_jis",
                  "euc_jp"})
# A page labelled (or taken for) UTF-8 whose bytes are UTF-8 but for a few: at least this many
# valid multi-byte sequences for each invalid byte (legacy text makes valid sequences rarely).
_MOSTLY_UTF8 = 4
# Of the words holding non-ASCII letters, the share that may look like mojibake before a
# single-byte decoding is implausible (real text: a few in a hundred at most; windows-1251 read
# as windows-1252: nearly all).
_IMPLAUSIBLE_SHARE = 0.25
# Text a plausibility check reads: the start of the page is enough to judge it.
_CHECK_CHARS = 1 << 16
# What the detector reads: the runs of text between tags that hold non-ASCII bytes, each with
# up to 40 bytes before its first (a bounded prefix keeps the search linear). A page's style
# sheets and scripts are ASCII: left in, they drown the text (chardet took a Russian page behind
# 100 KB of script for windows-1252).
_NON_ASCII_RUN = re.compile(rb"[^<>\x80-\xff]{0,40}[\x80-\xff][^<>]*")
# The most of those runs given to the detector: enough to know a charset by (chardet reads 16 KB
# of Russian or Chinese in 2-4 ms, once its models are loaded: 0.1 s, once per process).
_DETECT_BYTES = 1 << 14
_WORD = re.compile(r"[^\W\d_]+")
# A Latin-1 or maths symbol between two letters ("mo¿e"), or after a letter one that never ends
# a word ("rodz±"; box drawing: KOI8-U's і read as KOI8-R, "в╕льними"): another charset's letter.
_GLUED = re.compile(
    r"(?<=[^\W\d_])(?:[\xa1-\xbf\xd7\xf7\u2219\u221a\u2248\u2264\u2265\u2320\u2321]"
    r"(?=[^\W\d_])|[\xa4\xa5\xa6\xac\xb1\xb6\xbc\xbe\u2500-\u25ff])")
# C1 control characters: what windows-125x bytes become when read as ISO-8859-x.
_C1 = re.compile("[\x80-\x9f]")


@dataclass(frozen=True, slots=True)
class Decoding:
    """A page's bytes as the parser takes them, and how they were read."""

    markup: str | bytes  # UTF-8 bytes as they are (without a BOM), else the decoded text
    codec: str  # the Python codec used
    source: str  # bom, http, meta, detected, default, fallback
    # False when nothing fitted (decoded with replacement characters) or the detector was unsure
    sure: bool = True

    @property
    def charset(self) -> str:
        """The charset's WHATWG name (lower case)."""
        return web_name(self.codec)


def web_name(codec: str) -> str:
    """The WHATWG name of a Python codec.

    >>> web_name("cp1251"), web_name("iso8859-7"), web_name("cp932")
    ('windows-1251', 'iso-8859-7', 'shift_jis')
    """
    if codec in _WEB_NAMES:
        return _WEB_NAMES[codec]
    if codec.startswith("cp125"):
        return "windows-" + codec[2:]
    if codec.startswith("iso8859-"):
        return "iso-8859-" + codec[8:]
    return codec.replace("_", "-")


@lru_cache(maxsize=256)
def normalise(label: str) -> str | None:
    """The Python codec of a charset label, or None when it names none.

    >>> normalise("ISO-8859-1"), normalise("Shift_JIS"), normalise("x-nonsense")
    ('cp1252', 'cp932', None)
    """
    label = label.strip().strip("\"'").lower()
    if not label:
        return None
    label = _ALIASES.get(label, label)
    try:
        name = codecs.lookup(label).name
    except LookupError:
        return None
    # A page cannot declare UTF-16/32 in ASCII: the HTML standard reads such a label as UTF-8.
    return "utf-8" if name.startswith(("utf-16", "utf-32")) else name


def labels(content_type: str, body: bytes) -> list[tuple[str, str]]:
    """The page's charset labels that name a codec, with where each is: HTTP, then <meta>."""
    found = []
    match = _CHARSET_PARAM.search(content_type)
    if match and (codec := normalise(match.group(1))):
        found.append((codec, "http"))
    meta = _META_CHARSET.search(body, 0, _META_BYTES)
    if meta and (codec := normalise(meta.group(1).decode("ascii", "replace"))):
        found.append((codec, "meta"))
    return found


def implausible(text: str) -> bool:
    """Whether text decoded with a single-byte charset looks like mojibake: C1 controls, or many
    of its non-ASCII words made of accented Latin letters only ("Íîâîñòè"), of Latin and another
    script at once ("Dйclaration"), in capitals, or with capitals after small letters
    ("бНОПНЯШ").

    >>> implausible("Íîâîñòè è ñïîðò"), implausible("Новости и спорт"), implausible("Déjà vu")
    (True, False, False)
    """
    text = text[:_CHECK_CHARS]
    if _C1.search(text):
        return True
    words, bad = 0, len(_GLUED.findall(text))
    for word in _WORD.findall(text):
        if word.isascii():
            continue
        words += 1
        if _odd_word(word):
            bad += 1
    return words > 0 and bad > _IMPLAUSIBLE_SHARE * words


def _odd_word(word: str) -> bool:
    if not word.isalpha():  # superscript digits, fractions inside a word ("b³¹d")
        return True
    has_ascii = has_other_script = False
    latin_only = True
    for char in word:
        code = ord(char)
        if code < 0x80:
            has_ascii = True
        elif code < 0x250 or 0x1E00 <= code < 0x1F00:
            pass
        else:
            has_other_script = True
            latin_only = False
    if has_ascii and has_other_script:
        return True
    if latin_only and not has_ascii and len(word) >= 3:
        return True
    if len(word) >= 3 and word.isupper():  # KOI8-R read as windows-1251: "вСЕ ЛЮДИ"
        return True
    # A small letter followed by a capital (one of them not ASCII): case inverted.
    return any(a.islower() and b.isupper() and not (a + b).isascii()
               for a, b in zip(word, word[1:], strict=False))


@lru_cache(maxsize=64)
def _single_byte(codec: str) -> bool:
    """Whether ``codec`` gives one character per byte: its text must be plausible to fit."""
    high = bytes(range(128, 256))
    return codec != "utf-8" and len(high.decode(codec, "replace")) == len(high)


def _strict(body: bytes, codec: str) -> str | None:
    try:
        return body.decode(codec)
    except (UnicodeDecodeError, LookupError):
        return None


def _fits(body: bytes, codec: str) -> str | None:
    """The text of ``body`` under ``codec`` if the codec fits it (decodes it, and plausibly)."""
    text = _strict(body, codec)
    if text is not None and _single_byte(codec) and implausible(text):
        return None
    return text


def detector_input(body: bytes) -> bytes:
    r"""The runs of ``body``'s text that hold non-ASCII bytes, joined by spaces, up to
    ``_DETECT_BYTES``: what the detector reads.

    >>> detector_input(b"<script>var a=1;</script><p>caf\xe9 au lait</p>")
    b'caf\xe9 au lait'
    """
    runs, size = [], 0
    for match in _NON_ASCII_RUN.finditer(body):
        runs.append(match.group())
        size += len(runs[-1]) + 1
        if size >= _DETECT_BYTES:
            break
    return b" ".join(runs)[:_DETECT_BYTES]


def _detect(body: bytes) -> str | None:
    """The detector's charset for ``body`` (as a Python codec), or None."""
    import chardet

    found = chardet.detect(detector_input(body))
    label = found.get("encoding")
    return normalise(label) if label else None


def _mostly_utf8(body: bytes) -> str | None:
    """The text of bytes that are UTF-8 but for a few (a page pasted together from two
    charsets), the others read as windows-1252; None when they are not mostly UTF-8."""
    text = body.decode("utf-8", "replace")
    bad = text.count("\ufffd")
    good = sum(not c.isascii() for c in text) - bad
    if bad == 0 or good < _MOSTLY_UTF8 * bad:
        return None
    return body.decode("utf-8", _ERRORS)


def _as_windows_1252(error: UnicodeError) -> tuple[str, int]:
    """A decoding error handler: the bytes UTF-8 could not decode, as windows-1252 (the five
    bytes it leaves undefined as the C1 controls of the same value, as browsers do)."""
    assert isinstance(error, UnicodeDecodeError)
    raw = error.object[error.start : error.end]
    return "".join(bytes([b]).decode("cp1252", "ignore") or chr(b) for b in raw), error.end


_ERRORS = "warcdeboil-cp1252"
codecs.register_error(_ERRORS, _as_windows_1252)


def _detected_text(body: bytes, guess: str) -> tuple[str, str, bool] | None:
    """The text of ``body`` in the detector's ``guess``, the codec, and whether the text is
    plausible; in the guess's sibling when the guess's text is implausible and the sibling's is
    not; None when the guess does not decode the bytes."""
    text = _strict(body, guess)
    if text is None:
        return None
    if _single_byte(guess) and implausible(text):
        sibling = _SIBLINGS.get(guess)
        other = _fits(body, sibling) if sibling else None
        if sibling and other is not None:
            return other, sibling, True
        return text, guess, False
    return text, guess, True


def _seven_bit(body: bytes, declared: list[tuple[str, str]]) -> Decoding | None:
    """ASCII bytes with escapes in a 7-bit ISO-2022 charset (ISO-2022-JP, -KR, -CN): the label
    that says so, else the detector's; None when neither names one that decodes them."""
    for codec, source in declared:
        if codec.startswith("iso2022") and (text := _strict(body, codec)) is not None:
            return Decoding(text, codec, source)
    import chardet  # ASCII bytes: the runs detector_input gives would be empty

    label = chardet.detect(body).get("encoding")
    guess = normalise(label) if label else None
    if guess and guess.startswith("iso2022") and (text := _strict(body, guess)) is not None:
        return Decoding(text, guess, "detected")
    return None


def decode_page(content_type: str, body: bytes) -> Decoding:
    """How to read the page ``body`` served with ``content_type`` (see the module's rules).

    >>> d = decode_page("text/html; charset=utf-8", "<p>Новости дня</p>".encode("cp1251"))
    >>> d.markup, d.charset, d.source
    ('<p>Новости дня</p>', 'windows-1251', 'detected')
    >>> decode_page("text/html", b"<p>plain</p>").source
    'default'
    """
    if body.startswith(b"\xef\xbb\xbf"):
        text = _strict(body[3:], "utf-8")
        if text is not None:
            return Decoding(body[3:], "utf-8", "bom")
        return Decoding(body[3:].decode("utf-8", _ERRORS), "utf-8", "bom", sure=False)
    if body.startswith((b"\xff\xfe", b"\xfe\xff")):
        codec = "utf-16-le" if body[:2] == b"\xff\xfe" else "utf-16-be"
        text = _strict(body[2:], codec)
        if text is not None:
            return Decoding(text, codec, "bom")
        return Decoding(body[2:].decode(codec, "replace"), codec, "bom", sure=False)
    match = _CHARSET_PARAM.search(content_type)
    if match and normalise(match.group(1)) == "utf-8" and _ESCAPE not in body and (
            body.isascii() or _strict(body, "utf-8") is not None):
        return Decoding(body, "utf-8", "http")  # most pages: a UTF-8 label that fits
    declared = labels(content_type, body)
    if body.isascii():
        if _ESCAPE in body:
            shifted = _seven_bit(body, declared)
            if shifted is not None:
                return shifted
        for codec, source in declared:
            if _ASCII_SAFE.match(codec):
                return Decoding(body if codec == "utf-8" else body.decode(codec), codec, source)
        return Decoding(body, "utf-8", "default")
    if _strict(body, "utf-8") is not None:
        # Non-ASCII bytes that are valid UTF-8 are UTF-8, whatever a legacy label says.
        for codec, source in declared:
            if codec == "utf-8":
                return Decoding(body, codec, source)
        return Decoding(body, "utf-8", "detected" if declared else "default")
    few = len(body) - len(body.translate(None, _HIGH)) < _FEW_BYTES  # non-ASCII bytes
    for codec, source in declared:
        if codec == "utf-8":
            mixed = _mostly_utf8(body)
            if mixed is not None:  # UTF-8 but for a few bytes: those read as windows-1252
                return Decoding(mixed, "utf-8", source, sure=False)
            continue
        text = _fits(body, codec)
        if text is None:
            continue
        if not few:
            # A legacy label that decodes the bytes plausibly may still be wrong: Czech read as
            # windows-1252 (many servers' default label) looks plausible, and East Asian
            # charsets decode one another's bytes. The detector wins when it names another
            # charset whose text is plausible and differs: for a single-byte label, one that is
            # neither Western (a cousin of windows-1252), nor East Asian, nor the label's
            # ISO/Windows sibling.
            guess = _detect(body)
            if guess and guess not in (codec, _SIBLINGS.get(codec)) and (
                    codec in _CJK or not _WESTERN.match(guess) and guess not in _CJK):
                found = _detected_text(body, guess)
                if found is not None and found[2] and found[0] != text:
                    return Decoding(found[0], found[1], "detected")
        return Decoding(text, codec, source)
    if not declared:
        mixed = _mostly_utf8(body)
        if mixed is not None:
            return Decoding(mixed, "utf-8", "detected", sure=False)
    if few and (text := _fits(body, "cp1252")) is not None:
        return Decoding(text, "cp1252", "detected")
    guess = _detect(body)
    if guess is not None and guess != "utf-8":
        found = _detected_text(body, guess)
        if found is not None:
            return Decoding(found[0], found[1], "detected", found[2])
    # Nothing fits: the first label that decodes, else windows-1252 (which maps nearly every
    # byte), else UTF-8 with replacement characters. Not sure: WARC output keeps the bytes.
    for codec in [codec for codec, _ in declared if codec != "utf-8"] + ["cp1252"]:
        text = _strict(body, codec)
        if text is not None:
            return Decoding(text, codec, "fallback", sure=False)
    return Decoding(body.decode("utf-8", "replace"), "utf-8", "fallback", sure=False)
