"""Charsets: each page decoded by its byte-order mark, its HTTP and <meta> labels checked against
the bytes, else the detector; JSONL says which charset and what decided it; WARC output never
destroys a page's bytes (its payload decodes to the text under the charset it declares, or the
record is kept as it was). Issue 36."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest
from conftest import http_response, outputs_of, warc_record
from warcio.archiveiterator import ArchiveIterator

from warcdeboil.output.formats import OutputFormat
from warcdeboil.page.charset import decode_page, implausible, normalise
from warcdeboil.run.local import clean
from warcdeboil.run.options import Options
from warcdeboil.warc.compression import Codec

# Article 1 of the Universal Declaration of Human Rights (article 3 for KOI8-R), in a language
# of each charset of the benchmark (benchmarks/charsets.py).
TEXTS = {
    "windows-1250": (
        "Všichni lidé rodí se svobodní a sobě rovní co do důstojnosti"
        " a práv. Jsou nadáni rozumem a svědomím a mají spolu jednat "
        "v duchu bratrství."),
    "windows-1251": (
        "Все люди рождаются свободными и равными в своем достоинстве "
        "и правах. Они наделены разумом и совестью и должны поступать"
        " в отношении друг друга в духе братства."),
    "windows-1252": (
        "Tous les êtres humains naissent libres et égaux en dignité "
        "et en droits. Ils sont doués de raison et de conscience et "
        "doivent agir les uns envers les autres dans un esprit de "
        "fraternité."),
    "windows-1254": (
        "Bütün insanlar hür, haysiyet ve haklar bakımından eşit "
        "doğarlar. Akıl ve vicdana sahiptirler ve birbirlerine karşı "
        "kardeşlik zihniyeti ile hareket etmelidirler."),
    "windows-1255": (
        "כל בני האדם נולדו בני חורין ושווים בערכם ובזכויותיהם. כולם "
        "חוננו בתבונה ובמצפון, לפיכך חובה עליהם לנהוג איש ברעהו ברוח "
        "של אחוה."),
    "windows-1256": (
        "يولد جميع الناس أحراراً متساوين في الكرامة والحقوق. وقد "
        "وهبوا عقلاً وضميراً وعليهم أن يعامل بعضهم بعضاً بروح الإخاء."),
    "koi8-r": (
        "Каждый человек имеет право на жизнь, на свободу и на личную "
        "неприкосновенность. Никто не должен содержаться в рабстве "
        "или в подневольном состоянии."),
    "iso-8859-2": (
        "Wszyscy ludzie rodzą się wolni i równi pod względem swej "
        "godności i swych praw. Są oni obdarzeni rozumem i sumieniem "
        "i powinni postępować wobec innych w duchu braterstwa."),
    "iso-8859-7": (
        "Όλοι οι άνθρωποι γεννιούνται ελεύθεροι και ίσοι στην "
        "αξιοπρέπεια και τα δικαιώματα. Είναι προικισμένοι με λογική "
        "και συνείδηση, και οφείλουν να συμπεριφέρονται μεταξύ τους "
        "με πνεύμα αδελφοσύνης."),
    "shift_jis": (
        "すべての人間は、生まれながらにして自由であり、かつ、尊厳と権利とについて平等である。人間は、理性と良心とを授けられており"
        "、互いに同胞の精神をもって行動しなければならない。"),
    "euc-jp": (
        "すべての人間は、生まれながらにして自由であり、かつ、尊厳と権利とについて平等である。人間は、理性と良心とを授けられており"
        "、互いに同胞の精神をもって行動しなければならない。"),
    "gb18030": (
        "人人生而自由，在尊严和权利上一律平等。他们赋有理性和良心，并应以兄弟关系的精神相对待。"),
    "big5": (
        "人人生而自由，在尊嚴和權利上一律平等。他們賦有理性和良心，並應以兄弟關係的精神相對待。"),
    "euc-kr": (
        "모든 인간은 태어날 때부터 자유로우며 그 존엄과 권리에 있어 동등하다. "
        "인간은 천부적으로 이성과 양심을 "
        "부여받았으며 서로 형제애의 정신으로 행동하여야 한다."),
    "windows-874": (
        "มนุษย์ทั้งหลายเกิดมามีอิสระและเสมอภาคกันในเกียรติศักดิ์และสิ"
        "ทธิ ต่างมีเหตุผลและมโนธรรม "
        "และควรปฏิบัติต่อกันด้วยเจตนารมณ์แห่งภราดรภาพ"),
}
CHARSET = "page's charset is unsure"


def _page(text: str, meta: str = "") -> str:
    return (f"<!DOCTYPE html><html><head>{meta}<title>UDHR</title></head><body><main><h1>UDHR"
            f"</h1><p>{text}</p><p>{text}</p></main></body></html>")


def _archive(path: Path, pages: list[tuple[str, str, bytes]], write_archive) -> Path:
    """Response records of (url, Content-Type, payload)."""
    records = [warc_record("response", url, http_response(body, [("Content-Type", ctype)]))
               for url, ctype, body in pages]
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_archive(path, records, Codec.GZIP)


def _jsonl(out: Path) -> dict[str, dict]:
    return {line["url"]: line for path in outputs_of(out, "**/*.jsonl.gz")
            for line in map(json.loads, gzip.decompress(path.read_bytes()).splitlines())}


def _declared(content_type: str, payload: bytes) -> str:
    """The payload's text read as it declares (HTTP label, else <meta>, else UTF-8)."""
    label = re.search(r"charset=([\w.:-]+)", content_type)
    meta = re.search(rb"<meta[^>]*charset=[\"']?([\w.:-]+)", payload)
    name = label.group(1) if label else meta.group(1).decode() if meta else "utf-8"
    return payload.decode(normalise(name) or name)


def _warc_payloads(out: Path) -> dict[str, tuple[str, bytes]]:
    found = {}
    for path in outputs_of(out, "**/*.warc.gz"):
        with path.open("rb") as stream:
            for record in ArchiveIterator(stream):
                if record.rec_type == "response":
                    found[record.rec_headers.get_header("WARC-Target-URI")] = (
                        record.http_headers.get_header("Content-Type") or "",
                        record.content_stream().read())
    return found


# The faults: windows-1251 labelled utf-8 or not at all (mojibake), Shift_JIS labelled
# utf-8 (U+FFFD), KOI8-R with <meta> saying iso-8859-1; and what each must come out as.
MISLABELLED = [
    ("http://a.example/1251-utf8", "windows-1251", "text/html; charset=utf-8", "",
     "windows-1251", "detected"),
    ("http://b.example/1251-none", "windows-1251", "text/html", "", "windows-1251", "detected"),
    ("http://c.example/sjis-utf8", "shift_jis", "text/html; charset=utf-8", "", "shift_jis",
     "detected"),
    ("http://d.example/koi8-meta", "koi8-r", "text/html", '<meta charset="iso-8859-1">',
     "koi8-r", "detected"),
    ("http://e.example/1250-meta", "windows-1250", "text/html", '<meta charset="iso-8859-1">',
     "windows-1250", "detected"),
    ("http://f.example/1251-right", "windows-1251", "text/html; charset=windows-1251", "",
     "windows-1251", "http"),
    ("http://g.example/gbk-meta", "gb18030", "text/html", '<meta charset="gbk">', "gb18030",
     "meta"),
]


@pytest.fixture
def mislabelled(tmp_path: Path, write_archive) -> Path:
    pages = [(url, ctype, _page(TEXTS[charset], meta).encode(normalise(charset) or charset))
             for url, charset, ctype, meta, _, _ in MISLABELLED]
    return _archive(tmp_path / "in" / "mislabelled.warc.gz", pages, write_archive)


def test_jsonl_holds_the_true_text_of_mislabelled_pages(tmp_path: Path,
                                                          mislabelled: Path) -> None:
    clean([mislabelled.parent], tmp_path / "out", Options(workers=1, format=OutputFormat.JSONL))
    lines = _jsonl(tmp_path / "out")
    for url, charset, _, _, name, source in MISLABELLED:
        line = lines[url]
        assert TEXTS[charset] in line["text"], url
        assert "\ufffd" not in line["text"]
        assert (line["charset"], line["charset_source"]) == (name, source), url


def test_warc_output_decodes_to_the_true_text_under_its_declared_charset(
        tmp_path: Path, mislabelled: Path) -> None:
    summary = clean([mislabelled.parent], tmp_path / "out",
                    Options(workers=1, format=OutputFormat.WARC))
    assert summary.to_dict()["problems"] == {}
    payloads = _warc_payloads(tmp_path / "out")
    for url, charset, *_ in MISLABELLED:
        content_type, payload = payloads[url]
        assert TEXTS[charset] in _declared(content_type, payload), url


@pytest.mark.parametrize("label", ["right", "http-utf8", "absent"])
def test_every_benchmark_charset_round_trips_through_warc_output(
        tmp_path: Path, write_archive, label: str) -> None:
    pages = []
    for charset, text in TEXTS.items():
        ctype = {"right": f"text/html; charset={charset}",
                 "http-utf8": "text/html; charset=utf-8", "absent": "text/html"}[label]
        pages.append((f"http://{charset}.example/", ctype,
                      _page(text).encode(normalise(charset) or charset)))
    src = _archive(tmp_path / "in" / "all.warc.gz", pages, write_archive)
    clean([src.parent], tmp_path / "out", Options(workers=1, format=OutputFormat.WARC))
    payloads = _warc_payloads(tmp_path / "out")
    for charset, text in TEXTS.items():
        content_type, payload = payloads[f"http://{charset}.example/"]
        assert text in _declared(content_type, payload), charset
    clean([src.parent], tmp_path / "jsonl", Options(workers=1, format=OutputFormat.JSONL))
    lines = _jsonl(tmp_path / "jsonl")
    for charset, text in TEXTS.items():
        assert text in lines[f"http://{charset}.example/"]["text"], charset


def test_a_page_whose_bytes_fit_no_charset_keeps_its_record_and_is_counted(
        tmp_path: Path, write_archive) -> None:
    # Invalid UTF-8, with bytes windows-1252 leaves undefined (0x81, 0x8d, 0x8f, 0x90, 0x9d).
    body = b"<html><body><p>caf\xc3 \x81\x8d\x8f\x90\x9d bar \xff\xfe\x81</p></body></html>"
    good = _page("plain text").encode()
    src = _archive(tmp_path / "in" / "bad.warc.gz",
                   [("http://x.example/bad", "text/html; charset=utf-8", body),
                    ("http://x.example/good", "text/html; charset=utf-8", good)], write_archive)
    data = clean([src.parent], tmp_path / "out",
                 Options(workers=1, format=OutputFormat.WARC)).to_dict()
    assert data["problems"] == {CHARSET: 1}
    assert (data["pages"], data["carried"]) == (1, 1)
    payloads = _warc_payloads(tmp_path / "out")
    assert payloads["http://x.example/bad"][1] == body  # byte for byte
    # Text outputs still write it (never dropped), saying nothing fitted.
    clean([src.parent], tmp_path / "jsonl", Options(workers=1, format=OutputFormat.JSONL))
    line = _jsonl(tmp_path / "jsonl")["http://x.example/bad"]
    # The detector names a charset (IBM862) whose text is implausible: used, but not sure.
    assert line["charset_source"] in ("fallback", "detected")


@pytest.mark.parametrize(
    ("content_type", "body", "charset", "source"),
    [
        ("text/html; charset=windows-1251", "<p>Привет, мир</p>".encode("cp1251"),
         "windows-1251", "http"),
        ("text/html", '<meta charset="gb2312"><p>北京欢迎你</p>'.encode("gb18030"), "gb18030",
         "meta"),
        ("text/html", '<meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS">'
         "<p>日本語のページ</p>".encode("cp932"), "shift_jis", "meta"),
        ("text/html; charset=windows-1252", "<p>Привет, мир</p>".encode(), "utf-8", "detected"),
        ("text/html; charset=utf-8", b"\xef\xbb\xbf<p>caf\xc3\xa9", "utf-8", "bom"),
        ("text/html", "\ufeff<p>Ωmega</p>".encode("utf-16-le"), "utf-16le", "bom"),
        ("text/html", b"<p>plain", "utf-8", "default"),
        ("text/html", "<p>café</p>".encode(), "utf-8", "default"),
        ("text/html; charset=bogus-charset", b"<p>plain", "utf-8", "default"),
        ("text/html; charset=iso-8859-1", b"<p>plain", "windows-1252", "http"),
        ("text/html; charset=utf-16", b"<p>plain", "utf-8", "http"),
        ("text/html; charset=windows-874", TEXTS["windows-874"].encode("cp874"), "windows-874",
         "http"),
        # East Asian charsets decode one another's bytes into other characters: the detector.
        ("text/html; charset=gbk", _page(TEXTS["big5"]).encode("big5"), "big5", "detected"),
        ("text/html; charset=gbk", _page(TEXTS["euc-kr"]).encode("euc_kr"), "euc-kr",
         "detected"),
        ("text/html; charset=shift_jis", _page(TEXTS["gb18030"]).encode("gb18030"), "gb18030",
         "detected"),
        ("text/html; charset=gbk", _page(TEXTS["gb18030"]).encode("gb18030"), "gb18030", "http"),
        # A wrong legacy label that decodes the bytes plausibly: the detector.
        ("text/html; charset=windows-1256", _page(TEXTS["windows-1251"]).encode("cp1251"),
         "windows-1251", "detected"),
        ("text/html; charset=windows-1257",
         _page(" ".join([TEXTS["windows-1252"]] * 2)).encode("cp1252"), "windows-1252",
         "detected"),
        ("text/html; charset=windows-1250", _page(TEXTS["windows-1250"]).encode("cp1250"),
         "windows-1250", "http"),
        ("text/html; charset=iso-8859-2", _page(TEXTS["iso-8859-2"]).encode("iso8859_2"),
         "iso-8859-2", "http"),
    ],
)
def test_decode_page(content_type: str, body: bytes, charset: str, source: str) -> None:
    decoding = decode_page(content_type, body)
    assert (decoding.charset, decoding.source, decoding.sure) == (charset, source, True)


def test_a_fitting_label_or_utf8_never_calls_the_detector(monkeypatch) -> None:
    import chardet

    def refuse(body: bytes, **options: object) -> dict:
        raise AssertionError("detector called")

    monkeypatch.setattr(chardet, "detect", refuse)
    for content_type, body in [("text/html", b"<p>ascii"), ("text/html", "<p>déjà".encode()),
                               ("text/html; charset=windows-1251", "<p>Мир".encode("cp1251")),
                               ("text/html; charset=shift_jis", "<p>日本".encode("cp932"))]:
        assert decode_page(content_type, body).sure


def test_implausible_single_byte_text() -> None:
    russian, czech = TEXTS["windows-1251"], TEXTS["windows-1250"]
    assert implausible(russian.encode("cp1251").decode("cp1252"))  # "Âñå ëþäè…"
    assert implausible(russian.encode("koi8-r").decode("cp1251"))  # case inverted
    assert implausible(TEXTS["iso-8859-2"].encode("iso8859-2").decode("cp1250"))  # "rodz±"
    assert implausible(TEXTS["windows-1252"].encode("cp1252").decode("cp1251"))  # "Dйclaration"
    assert not any(map(implausible, [russian, czech, TEXTS["windows-1252"],
                                     TEXTS["iso-8859-7"], TEXTS["windows-1254"]]))


@pytest.mark.parametrize(
    ("content_type", "body", "text", "charset", "source", "sure"),
    [
        # UTF-8 but for a few windows-1252 bytes (a page pasted together): both read right.
        ("text/html; charset=utf-8", "<p>einfach schön</p><a>Kouga".encode() + b"\xef</a>"
         + "<p>Größe, Grüße, Äpfel</p>".encode(), "Kougaï", "utf-8", "http", False),
        # Two dashes of windows-1252 in English: too little for a detector (IBM855, Greek).
        ("text/html; charset=utf-8", b"<p>with this Agreement \x97 no other \xa7 1280</p>",
         "Agreement \u2014 no other \u00a7 1280", "windows-1252", "detected", True),
        # An English page labelled iso-8859-1 with curly quotes keeps its label.
        ("text/html; charset=iso-8859-1", b"<p>It\x92s \x93quoted\x94 text, caf\xe9 au lait, "
         b"na\xefve r\xe9sum\xe9s \x96 and more caf\xe9s and cr\xe8mes br\xfbl\xe9es</p>",
         "It\u2019s \u201cquoted\u201d", "windows-1252", "http", True),
        # ISO-2022-JP is all ASCII bytes, with escapes.
        ("text/html", "<p>{}</p>".format(TEXTS["shift_jis"]).encode("iso2022_jp"),
         TEXTS["shift_jis"], "iso-2022-jp", "detected", True),
        # KOI8-U's Ukrainian letters are box drawing in KOI8-R.
        ("text/html", "<p>Всі люди народжуються вільними і рівними у своїй гідності та правах. "
         "Вони наділені розумом і совістю.</p>".encode("koi8_u"), "вільними і рівними",
         "koi8-u", "detected", True),
    ],
)
def test_what_detectors_get_wrong(content_type: str, body: bytes, text: str, charset: str,
                                  source: str, sure: bool) -> None:
    decoding = decode_page(content_type, body)
    assert isinstance(decoding.markup, str) and text in decoding.markup
    assert (decoding.charset, decoding.source, decoding.sure) == (charset, source, sure)


def test_a_mixed_page_is_read_but_its_record_kept(tmp_path: Path, write_archive) -> None:
    body = "<p>einfach schön, Größe, Grüße</p><p>Kouga".encode() + b"\xef</p>"
    src = _archive(tmp_path / "in" / "mixed.warc.gz",
                   [("http://m.example/", "text/html; charset=utf-8", body)], write_archive)
    data = clean([src.parent], tmp_path / "out",
                 Options(workers=1, format=OutputFormat.WARC)).to_dict()
    assert data["problems"] == {CHARSET: 1}
    assert _warc_payloads(tmp_path / "out")["http://m.example/"][1] == body
    clean([src.parent], tmp_path / "jsonl", Options(workers=1, format=OutputFormat.JSONL))
    line = _jsonl(tmp_path / "jsonl")["http://m.example/"]
    assert "einfach schön, Größe, Grüße" in line["text"] and "Kougaï" in line["text"]
