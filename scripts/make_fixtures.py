"""Write the tiny synthetic crawl in ``fixtures/``: deterministic, byte for byte.

    python scripts/make_fixtures.py [--out fixtures]

Five sites, each page with a shared template and its own content:

- ``news.example.com`` (7 articles + home): header with nav menu, cookie banner, an ``<aside>``
  "Most read" box and a ``<footer>`` on every page; a per-page "Related" list. One article is
  also at ``?page=1`` (a near-duplicate whose article must survive), one has text after an
  inline ``<script>``, one keeps its article inside an ASP.NET-style ``<form>``, one uses
  ``<section>`` and ``<table>`` for content.
- ``blog.example.org`` (5 posts, URLs with and without ``www.``): a different template whose
  footer is a ``<section>``, not a ``<footer>``.
- ``shop.example.net``: one page only, nothing to learn: its text must pass untouched.
- ``nachrichten.example.de`` (5 pages): windows-1252 bytes declared only by ``<meta charset>``.
- ``zh.example.cn`` (5 pages): Chinese text, no spaces between words.

HTTP variety: one body chunked, one gzip-encoded, one without Content-Type (sniffed), one page
stored as a ``resource`` record. Records that are not pages: warcinfo, requests, a PNG, a PDF,
a JSON response, a revisit, a metadata record — all must come out unchanged.

Files: ``crawl/crawl-0000{0,1}.warc.gz`` (the crawl split in two, sites interleaved),
``codecs/sample.warc``, ``.warc.gz``, ``.warc.zst`` and ``sample-dict.warc.zst`` (the whole crawl
once per codec), and ``expected.json`` (per page: site, content that must survive, template that
must go).
"""

from __future__ import annotations

import argparse
import gzip
import json
import uuid
from pathlib import Path

from warcdeboil.warc.compression import Codec
from warcdeboil.warc.writer import WarcWriter, rebuild_record, serialise
from warcdeboil.warc.zstdio import train_dictionary

NAMESPACE = uuid.UUID("0f7c5d2e-8b1a-4c3d-9e6f-5a4b3c2d1e0f")
DATE = "2024-05-{day:02d}T10:{minute:02d}:00Z"
Record = tuple[list[tuple[str, str]], bytes]


def record(rec_type: str, url: str, block: bytes, content_type: str, n: int,
           extra: list[tuple[str, str]] | None = None) -> Record:
    headers = [
        ("WARC-Type", rec_type),
        ("WARC-Record-ID", f"<urn:uuid:{uuid.uuid5(NAMESPACE, f'{rec_type}:{url}:{n}')}>"),
        ("WARC-Date", DATE.format(day=1 + n // 60, minute=n % 60)),
    ]
    if url:
        headers.append(("WARC-Target-URI", url))
    headers += [("Content-Type", content_type), *(extra or [])]
    payload = None
    if rec_type in ("response", "revisit") and content_type.startswith("application/http"):
        end = block.find(b"\r\n\r\n")
        payload = end + 4 if end >= 0 else None
    return rebuild_record(headers, block, payload), block


def http(body: bytes, headers: list[tuple[str, str]]) -> bytes:
    lines = ["HTTP/1.1 200 OK", *(f"{k}: {v}" for k, v in headers)]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


class Crawl:
    """Collects records and what the tests expect of every page."""

    def __init__(self) -> None:
        self.records: list[Record] = []
        self.expected: dict[str, dict[str, object]] = {}

    def _n(self) -> int:
        return len(self.records)

    def page(self, url: str, site: str, html: str, content: list[str], template: list[str],
             *, encoding: str = "utf-8", content_type: str | None = "text/html; charset=utf-8",
             coding: str = "", as_resource: bool = False) -> None:
        body = html.encode(encoding)
        if as_resource:
            self.records.append(record("resource", url, body, "text/html", self._n()))
        else:
            self.records.append(record(
                "request", url, f"GET {url.split('/', 3)[-1]} HTTP/1.1\r\n\r\n".encode(),
                "application/http; msgtype=request", self._n()))
            headers = [] if content_type is None else [("Content-Type", content_type)]
            if coding == "gzip":
                body = gzip.compress(body, mtime=0)
                headers.append(("Content-Encoding", "gzip"))
            if coding == "chunked":
                half = len(body) // 2
                body = b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in (body[:half], body[half:]))
                body += b"0\r\n\r\n"
                headers.append(("Transfer-Encoding", "chunked"))
            else:
                headers.append(("Content-Length", str(len(body))))
            self.records.append(record("response", url, http(body, headers),
                                       "application/http; msgtype=response", self._n()))
        self.expected[url] = {"site": site, "content": content, "template": template,
                              "record_type": "resource" if as_resource else "response"}

    def other(self, rec_type: str, url: str, block: bytes, content_type: str,
              extra: list[tuple[str, str]] | None = None) -> None:
        self.records.append(record(rec_type, url, block, content_type, self._n(), extra))


NEWS_TEMPLATE = (
    "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{title} | Daily News"
    "</title><style>body{{font:14px serif}}</style></head><body>"
    "<div class='cookie'><p>We use cookies to improve your experience on Daily News.</p>"
    "<a href='/privacy'>Privacy policy</a></div>"
    "<header><div class='logo'>Daily News</div><nav><ul><li><a href='/'>Home</a></li>"
    "<li><a href='/world'>World</a></li><li><a href='/sport'>Sport</a></li></ul></nav></header>"
    "<main>{main}<div class='related'><h3>Related</h3><ul>{related}</ul></div></main>"
    "<aside><h3>Most read</h3><ul><li><a href='/a'>Council approves the new harbour plan</a>"
    "</li><li><a href='/b'>Heatwave expected this weekend</a></li></ul></aside>"
    "<footer><p>© 2024 Daily News Ltd. All rights reserved.</p>"
    "<p>Contact the newsroom at news@example.com</p></footer></body></html>"
)
NEWS_BOILER = ["We use cookies to improve your experience on Daily News.", "Privacy policy",
               "Daily News", "World", "Sport", "Most read",
               "Council approves the new harbour plan", "Heatwave expected this weekend",
               "© 2024 Daily News Ltd. All rights reserved.",
               "Contact the newsroom at news@example.com"]
STORIES = [
    ("river-cleanup", "Volunteers clear two tonnes of litter from the river",
     ["More than three hundred volunteers spent Saturday pulling plastic from the banks.",
      "Organisers said the haul was the largest since the clean-up began in 2015."]),
    ("rail-strike", "Rail workers announce a two-day strike",
     ["Services across the region will be cut to one train an hour on both days.",
      "The union said talks over pay had broken down on Thursday evening."]),
    ("library-opening", "The new central library opens its doors",
     ["The building holds four floors of books and a rooftop reading garden.",
      "Visitors queued from dawn to see the glass atrium designed by local architects."]),
    ("budget", "City budget puts schools first",
     ["Education receives the largest share of next year's spending plan.",
      "Opposition councillors called the transport allocation far too small."]),
    ("marathon", "Record field for the spring marathon",
     ["Twelve thousand runners crossed the start line under clear skies.",
      "The winning time beat the course record by almost a minute."]),
    ("bakery", "Family bakery celebrates its centenary",
     ["Four generations have baked bread on the same corner since 1924.",
      "Regular customers were given a slice of anniversary cake on Monday."]),
    ("museum", "Museum returns artefacts to their homeland",
     ["The collection of carved masks left the city on Tuesday morning.",
      "Curators described the handover as long overdue and deeply moving."]),
]


def news(crawl: Crawl) -> None:
    host = "http://news.example.com"
    for i, (slug, title, paragraphs) in enumerate(STORIES):
        related = "".join(f"<li><a href='/r{i}{j}'>Related story {i}.{j} about {slug}</a></li>"
                          for j in range(2))
        body = "".join(f"<p>{p}</p>" for p in paragraphs)
        article = f"<article><h1>{title}</h1>{body}</article>"
        content = [title, *paragraphs]
        if slug == "rail-strike":
            article = (f"<article><h1>{title}</h1><p>{paragraphs[0]}</p>"
                       "<script>var strikeDays = ['Mon', 'Tue'];</script>"
                       f"<p>{paragraphs[1]}</p></article>")
        if slug == "budget":
            article = (f"<form id='aspnetForm' method='post'><div class='content'><h1>{title}</h1>"
                       + body + "</div></form>")
        if slug == "library-opening":
            article = (f"<section class='story'><h1>{title}</h1>{body}<table><tr><td>Opening hours"
                       "</td><td>9am to 8pm daily</td></tr></table></section>")
            content.append("Opening hours 9am to 8pm daily")
        html = NEWS_TEMPLATE.format(title=title, main=article, related=related)
        url = f"{host}/2024/05/{slug}"
        kind = {1: "chunked", 3: "gzip"}.get(i, "")
        crawl.page(url, "news.example.com", html, content, NEWS_BOILER, coding=kind)
        if slug == "river-cleanup":
            again = html.replace("Related story 0.", "See also 0.")
            crawl.page(url + "?page=1", "news.example.com", again, content, NEWS_BOILER)
        if i == 2:
            crawl.other("response", f"{host}/logo.png", http(PNG, [("Content-Type", "image/png")]),
                        "application/http; msgtype=response")
    home = NEWS_TEMPLATE.format(
        title="Front page", related="<li><a href='/x'>Weather for the week ahead</a></li>",
        main="<div class='lead'><h2>Today's top stories</h2><p>Read about the river clean-up,"
             " the rail strike and the new central library.</p></div>")
    crawl.page(f"{host}/", "news.example.com", home,
               ["Today's top stories", "Read about the river clean-up, the rail strike and the "
                "new central library."], NEWS_BOILER, content_type=None)


def blog(crawl: Crawl) -> None:
    posts = [
        ("sourdough", "Keeping a sourdough starter alive", "Feed it twice a day with equal weights"
         " of flour and water, and keep it somewhere warm."),
        ("compost", "Composting in a small garden", "A closed bin and a mix of green and brown "
         "waste turns kitchen scraps into soil in a few months."),
        ("bees", "Planting for bees", "Lavender, borage and foxgloves flower across the summer "
         "and feed bumblebees from May to September."),
        ("tomatoes", "Growing tomatoes on a balcony", "Choose a bush variety, give it a deep pot "
         "and water it every evening in July."),
        ("seeds", "Saving seeds for next year", "Let the best plants go to seed, dry the pods "
         "indoors and store them in paper envelopes."),
    ]
    template = ["Green Thumb Journal", "Posts", "About", "Archive",
                "Written by Sam in a very small garden.", "Subscribe by email for new posts."]
    for i, (slug, title, text) in enumerate(posts):
        html = (
            f"<html><head><title>{title}</title></head><body><div id='top'><div class='brand'>"
            "Green Thumb Journal</div><div class='menu'><a href='/'>Posts</a> <a href='/about'>"
            f"About</a> <a href='/archive'>Archive</a></div></div><div class='post'><h2>{title}"
            f"</h2><p>{text}</p><p>Posted on day {i + 1} of the month.</p></div>"
            "<section class='footer'><p>Written by Sam in a very small garden.</p>"
            "<p>Subscribe by email for new posts.</p></section></body></html>"
        )
        host = "http://www.blog.example.org" if i % 2 else "http://blog.example.org"
        crawl.page(f"{host}/{slug}", "blog.example.org", html,
                   [title, text, f"Posted on day {i + 1} of the month."], template,
                   as_resource=(i == 4))


def shop(crawl: Crawl) -> None:
    html = ("<html><head><title>Hand-thrown mugs</title></head><body><nav><a href='/'>Shop home"
            "</a></nav><h1>Hand-thrown mugs</h1><p>Each mug is glazed by hand and fired twice.</p>"
            "<footer>Free delivery on orders over 40 euros.</footer></body></html>")
    crawl.page("http://shop.example.net/mugs", "shop.example.net", html,
               ["Shop home", "Hand-thrown mugs", "Each mug is glazed by hand and fired twice.",
                "Free delivery on orders over 40 euros."], [])


def german(crawl: Crawl) -> None:
    items = [("Bürgermeister eröffnet das Straßenfest", "Tausende Besucher genossen die Musik"
              " und das schöne Wetter auf dem Marktplatz."),
             ("Neue Brücke über die Ems", "Die Fußgängerbrücke verkürzt den Weg zur Schule um "
              "zwölf Minuten."),
             ("Schwimmbad öffnet früher", "Wegen der Hitze öffnet das Freibad schon um sechs Uhr"
              " morgens."),
             ("Bäckerei gewinnt Preis", "Das Roggenbrot überzeugte die Jury mit seiner Kruste."),
             ("Radweg wird verlängert", "Die Arbeiten an der Strecke sollen im Herbst beginnen.")]
    template = ["Nachrichten aus Großstadt", "Startseite", "Lokales", "Über uns",
                "Impressum und Datenschutz für alle Leserinnen und Leser."]
    for i, (title, text) in enumerate(items):
        html = (
            "<html><head><meta charset='windows-1252'><title>" + title + "</title></head><body>"
            "<header><div>Nachrichten aus Großstadt</div><ul><li>Startseite</li><li>Lokales</li>"
            f"<li>Über uns</li></ul></header><div class='artikel'><h1>{title}</h1><p>{text}</p>"
            "</div><footer><p>Impressum und Datenschutz für alle Leserinnen und Leser.</p>"
            "</footer></body></html>"
        )
        crawl.page(f"http://nachrichten.example.de/artikel/{i}", "nachrichten.example.de", html,
                   [title, text], template, encoding="cp1252", content_type="text/html")


def chinese(crawl: Crawl) -> None:
    items = [("城市公园重新开放", "经过一年的整修，城市公园今天重新向市民开放。"),
             ("地铁新线路通车", "新线路连接机场和市中心，全程只需二十五分钟。"),
             ("图书馆延长开放时间", "考试期间图书馆每天开放到晚上十一点。"),
             ("春季花展开幕", "本届花展展出了来自全国各地的三百多种花卉。"),
             ("老街改造完成", "改造后的老街保留了传统建筑的风貌。")]
    template = ["本地新闻网", "首页", "社会", "文化", "版权所有 本地新闻网 保留所有权利"]
    for i, (title, text) in enumerate(items):
        html = (
            "<html><head><meta charset='utf-8'><title>" + title + "</title></head><body>"
            "<div class='top'><div class='name'>本地新闻网</div><ul><li>首页</li><li>社会</li>"
            f"<li>文化</li></ul></div><div class='main'><h1>{title}</h1><p>{text}</p></div>"
            "<div class='foot'>版权所有 本地新闻网 保留所有权利</div></body></html>"
        )
        crawl.page(f"https://zh.example.cn/news/{i}.html", "zh.example.cn", html,
                   [title, text], template)


PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d4944415478da63f8cfc0f01f0005000201a5e0d3bb0000000049454e44ae426082"
)


def build() -> Crawl:
    crawl = Crawl()
    for part in (news, blog, shop, german, chinese):
        part(crawl)
    crawl.other("response", "http://news.example.com/report.pdf",
                http(b"%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n",
                     [("Content-Type", "application/pdf")]), "application/http; msgtype=response")
    crawl.other("response", "http://news.example.com/api/scores.json",
                http(b'{"home": 2, "away": 1}', [("Content-Type", "application/json")]),
                "application/http; msgtype=response")
    crawl.other("revisit", "http://news.example.com/logo.png",
                b"HTTP/1.1 200 OK\r\nContent-Type: image/png\r\n\r\n",
                "application/http; msgtype=response",
                [("WARC-Profile", "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"),
                 ("WARC-Refers-To-Target-URI", "http://news.example.com/logo.png"),
                 ("WARC-Refers-To-Date", "2024-05-01T10:03:00Z")])
    crawl.other("metadata", "http://news.example.com/", b"outlinks: 14\r\n",
                "application/warc-fields")
    return crawl


def interleave(records: list[Record]) -> tuple[list[Record], list[Record]]:
    """Split the crawl in two files, keeping each request next to its response."""
    groups: list[list[Record]] = []
    for rec in records:
        if groups and groups[-1][-1][0][0][1] == "request":
            groups[-1].append(rec)
        else:
            groups.append([rec])
    first = [r for i, g in enumerate(groups) if i % 2 == 0 for r in g]
    second = [r for i, g in enumerate(groups) if i % 2 == 1 for r in g]
    return first, second


def warcinfo(name: str) -> Record:
    fields = f"software: warcdeboil scripts/make_fixtures.py\r\nfilename: {name}\r\n".encode()
    return record("warcinfo", "", fields, "application/warc-fields", 999)


def write(path: Path, records: list[Record], codec: Codec, dictionary: bytes | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:
        writer = WarcWriter(fh, codec, zstd_dictionary=dictionary)
        for headers, block in [warcinfo(path.name), *records]:
            writer.write("WARC/1.1", headers, block)


def main() -> None:
    parser = argparse.ArgumentParser(description="Write the fixture crawl.")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent.parent
                        / "fixtures")
    out = parser.parse_args().out
    crawl = build()
    first, second = interleave(crawl.records)
    write(out / "crawl" / "crawl-00000.warc.gz", first, Codec.GZIP)
    write(out / "crawl" / "crawl-00001.warc.gz", second, Codec.GZIP)
    for codec in Codec:
        write(out / "codecs" / f"sample.warc{codec.suffix}", crawl.records, codec)
    samples = [serialise("WARC/1.1", h, b) for h, b in crawl.records] * 4
    write(out / "codecs" / "sample-dict.warc.zst", crawl.records, Codec.ZSTD,
          train_dictionary(samples, size=4096))
    counts: dict[str, int] = {}
    for headers, _ in crawl.records:
        counts[headers[0][1]] = counts.get(headers[0][1], 0) + 1
    counts["warcinfo"] = counts.get("warcinfo", 0) + 1
    summary = {"pages": crawl.expected, "records_by_type": dict(sorted(counts.items()))}
    (out / "expected.json").write_text(
        json.dumps(summary, indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
