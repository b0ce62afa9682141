"""Build a test crawl with known duplicate groups from the real pages of an evaluation archive.

    python scripts/make_dup_crawl.py ../shared/eval/dragnet.warc.gz --out dup-crawl

writes ``dup-crawl/dup-crawl.warc.gz`` (one ``response`` record per page) and
``dup-crawl/truth.json``: per page its WARC-Record-ID, URL, date, ``kind`` and ``group``; pages of
one group are copies of one page (positive pairs), pages of different groups are not (negative
pairs). The archive's gold file (``NAME.gold.jsonl.gz`` beside it) gives each article's text.
Same input and seed, same output (record ids included).

Sites with at least five pages are taken whole: their pages are the originals, and every pair
among them is a negative (distinct pages of one template). Then, each on pages of its own:

positives
  ``url-variant``   the same page under another URL: utm_* parameters, ``sid``/``jsessionid``
                    (with the session id also written into the page's links, so the payload
                    differs), ``sort``/``start`` that change nothing, https, www, a trailing
                    slash, ``/index.html``;
  ``print``         a print-style copy: the article's text alone, no template;
  ``mirror``        five pages of a site copied to another host, its name written into them;
  ``syndicated``    the article inside another site's template (in place of that site's own
                    article);
  ``updated``       the article recaptured later with one paragraph added;
  (``--more-variants`` adds more URL variants and ``/?p=N`` negatives: see
  :func:`add_more_variants`)
negatives
  ``index``         two index pages of one site with the same list of articles and different
                    introductions;
  ``id-param``      articles at ``article.php?id=N``: URLs differing only in a relevant
                    parameter;
  ``page-2``        ``?page=2`` of a long article (6 paragraphs, 300 words or more): its
                    second half by characters, in the site's template (bare when the
                    article's element cannot be found in any long article of the site).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import html
import io
import json
import random
import re
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from selectolax.lexbor import LexborHTMLParser
from warcio.archiveiterator import ArchiveIterator
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

SEED = 20261124
BASE_DATE = "2024-03-01T10:00:00Z"
LATER_DATE = "2024-09-15T08:30:00Z"
_CONTAINERS = "div, article, section, main, td"
_COMMENTS_LINE = re.compile(r"^[^\w\n]*COMMENTS[ \t]*$", re.MULTILINE)
# Originals whose gold texts share this much (Jaccard of 5-word shingles) are one story.
SAME_STORY = 0.8


@dataclass
class Original:
    url: str
    site: str
    html: str
    gold: str

    @property
    def paragraphs(self) -> list[str]:
        # Each once, in order: a gold text can hold its article twice (a page that repeats it).
        # Dragnet's gold has the page's comments after a line of symbols ending "COMMENTS":
        # they are not the article, and a copy of the article does not carry them.
        article = _COMMENTS_LINE.split(self.gold, maxsplit=1)[0]
        found = (p.strip() for p in re.split(r"\n\s*\n|\n", article))
        return list(dict.fromkeys(p for p in found if p))


@dataclass
class Crawl:
    pages: list[dict[str, str]] = field(default_factory=list)
    bodies: list[bytes] = field(default_factory=list)

    def add(self, url: str, body: str, group: str, kind: str, date: str = BASE_DATE) -> None:
        data = body.encode("utf-8")
        digest = hashlib.sha1(data).hexdigest()
        record_id = f"<urn:uuid:{uuid.uuid5(uuid.NAMESPACE_URL, f'{url} {date} {digest}')}>"
        self.pages.append({"record_id": record_id, "url": url, "date": date, "group": group,
                           "kind": kind})
        self.bodies.append(data)


def read_originals(archive: Path) -> dict[str, list[Original]]:
    """The archive's pages with their gold text, by site (pages in URL order)."""
    gold_path = archive.with_name(archive.name.replace(".warc.gz", ".gold.jsonl.gz"))
    with gzip.open(gold_path, "rt", encoding="utf-8") as fh:
        gold = {row["url"]: row for row in map(json.loads, fh)}
    by_site: dict[str, list[Original]] = defaultdict(list)
    with open(archive, "rb") as fh:
        for record in ArchiveIterator(fh):
            url = record.rec_headers.get_header("WARC-Target-URI")
            if record.rec_type != "response" or url not in gold:
                continue
            body = record.content_stream().read().decode("utf-8", "replace")
            row = gold[url]
            site = row["site"] or url.split("://", 1)[-1].split("/", 1)[0]
            by_site[site].append(Original(url, site, body, row["gold"]))
    return {site: sorted(pages, key=lambda p: p.url) for site, pages in by_site.items()}


def _squash(text: str) -> str:
    return " ".join(text.split())


def content_node_html(page: Original) -> tuple[LexborHTMLParser, object] | None:
    """The page parsed, and the smallest element holding its whole article (first and last
    paragraphs of the gold text), or None when no element does."""
    paragraphs = page.paragraphs
    if len(paragraphs) < 2:
        return None
    first, last = _squash(paragraphs[0])[:40], _squash(paragraphs[-1])[:40]
    tree = LexborHTMLParser(page.html)
    best = None
    best_len = 0
    for node in tree.css(_CONTAINERS):
        text = _squash(node.text(separator=" "))
        if first in text and last in text and (best is None or len(text) < best_len):
            best, best_len = node, len(text)
    return (tree, best) if best is not None else None


def with_content(page: Original, inner: str) -> str | None:
    """``page`` with its article replaced by ``inner`` (HTML), template untouched; None when the
    article cannot be found, or is also elsewhere in the page (a teaser, a second copy)."""
    found = content_node_html(page)
    if found is None:
        return None
    tree, node = found
    node.inner_html = inner  # type: ignore[attr-defined]
    body = tree.body
    left = _squash(body.text(separator=" ")) if body is not None else ""
    # The headline often stands outside the article's element as well: one paragraph may stay.
    if sum(_squash(p)[:40] in left for p in page.paragraphs[1:] if len(p) >= 40) > 1:
        return None
    return str(tree.html)


def second_half(paragraphs: list[str]) -> list[str]:
    """The paragraphs after the middle of the text, by characters: at most half of it, so that
    no more than half of page 1's shingles are on page 2."""
    total = sum(map(len, paragraphs))
    seen = 0
    for index, paragraph in enumerate(paragraphs):
        seen += len(paragraph)
        if seen >= total / 2:
            return paragraphs[index + 1 :]
    return []


def paragraphs_html(paragraphs: list[str]) -> str:
    return "".join(f"<p>{html.escape(p)}</p>\n" for p in paragraphs)


def url_variants(url: str) -> list[tuple[str, str]]:
    """(variant URL, name) for each URL rule; the session variants are marked for the page."""
    sep = "&" if "?" in url else "?"
    scheme, rest = url.split("://", 1)
    host, _, path = rest.partition("/")
    bare = host[4:] if host.startswith("www.") else host
    return [
        (f"{url}{sep}utm_source=newsletter&utm_medium=email&utm_campaign=spring", "utm"),
        (f"{url}{sep}sid=9f2c41d07be3a6a1", "sid"),
        (f"{scheme}://{host}/{path};jsessionid=0A3F5C77E1B2D9C4F1A2B3C4D5E6F708", "jsessionid"),
        (f"{url}{sep}sort=asc", "sort"),
        (f"{url}{sep}start=0", "start"),
        (f"https://{rest}" if scheme == "http" else f"http://{rest}", "scheme"),
        (f"{scheme}://www.{bare}/{path}" if host == bare else f"{scheme}://{bare}/{path}", "www"),
        (url.rstrip("/") + "/" if not url.endswith("/") else url.rstrip("/"), "slash"),
        (url.rstrip("/") + "/index.html", "index.html"),
    ]


def with_session(body: str, token: str) -> str:
    """Every relative or absolute link of the page carries a session id (payload differs)."""
    return re.sub(r'href="([^"#]*)"', lambda m: f'href="{m.group(1)};{token}"', body)


def print_page(page: Original) -> str:
    title = html.escape(page.paragraphs[0])
    return (f"<html><head><title>{title}</title></head><body>"
            f"{paragraphs_html(page.paragraphs)}</body></html>")


def updated_page(page: Original, extra: str) -> str | None:
    """The page with ``extra`` as a new paragraph before one of its own (found in the HTML)."""
    for paragraph in page.paragraphs[2:-1]:
        snippet = html.escape(paragraph[:30], quote=False)
        at = page.html.find(snippet)
        if at < 0:
            continue
        opening = page.html.rfind("<p", 0, at)
        if opening < 0 or at - opening > 200:
            continue
        return page.html[:opening] + f"<p>{html.escape(extra)}</p>\n" + page.html[opening:]
    return None


def _flip(url: str, scheme: bool = False, www: bool = False, upper: bool = False) -> str:
    head, _, rest = url.partition("://")
    host, slash, path = rest.partition("/")
    if scheme:
        head = "https" if head == "http" else "http"
    if www:
        host = host[4:] if host.startswith("www.") else "www." + host
    if upper:
        path, question, query = path.partition("?")
        path = path.upper() + question + query
    return f"{head}://{host}{slash}{path}"


def add_more_variants(crawl: Crawl, sites: list[list[Original]], group_of: dict[str, str],
                      rng: random.Random) -> None:
    """``--more-variants``: URL variants beyond the default set, appended after every other page
    (so the default crawl is unchanged): ``fbclid``, ``ref=rss`` (a parameter on no list),
    ``#comments``, the path in upper case (every third site, a case-insensitive server),
    ``/index.php`` or ``/default.aspx``, https and ``www.`` changed at once; negatives: WordPress
    ``/?p=N`` permalinks of three articles (a relevant parameter on the home path)."""
    for number, pages in enumerate(sites):
        def variant(page: Original, url: str, name: str) -> None:
            crawl.add(url, page.html, group_of[page.url], f"url-variant:{name}")

        sep = "&" if "?" in pages[1].url else "?"
        variant(pages[1], f"{pages[1].url}{sep}fbclid=IwAR{rng.getrandbits(64):016x}", "fbclid")
        for page in pages[2:4]:
            variant(page, f"{page.url}{'&' if '?' in page.url else '?'}ref=rss", "ref")
        variant(pages[2], pages[2].url + "#comments", "fragment")
        if number % 3 == 1:
            variant(pages[3], _flip(pages[3].url, upper=True), "case")
        page = pages[min(5, len(pages) - 1)]
        if "?" not in page.url:
            document = "index.php" if number % 2 == 0 else "default.aspx"
            variant(page, page.url.rstrip("/") + "/" + document, document)
        page = pages[min(6, len(pages) - 1)]
        variant(page, _flip(page.url, scheme=True, www=True), "scheme+www")
        host = pages[0].url.split("://", 1)[1].split("/", 1)[0]
        for k, page in enumerate(pages[:3]):
            crawl.add(f"http://{host}/?p={101 + 7 * k + number}", page.html, group_of[page.url],
                      "p-param")




def _shingles(text: str, width: int = 5) -> set[str]:
    words = text.lower().split()
    return {" ".join(words[i : i + width]) for i in range(max(1, len(words) - width + 1))}


def _joined_story(page: Original, stories: list[tuple[set[str], str]], group: str) -> str:
    """``group``, or the group of an earlier original whose gold text is the same story
    (:data:`SAME_STORY` Jaccard of 5-word shingles or more): the truth must not call two copies
    that the source data already holds distinct pages."""
    shingles = _shingles(page.gold)
    for other, other_group in stories:
        if len(shingles & other) >= SAME_STORY * len(shingles | other):
            return other_group
    stories.append((shingles, group))
    return group


def holds_first_half(body: str, paragraphs: list[str]) -> bool:
    """Whether a page-2 ``body`` still holds a paragraph of the article's first half (a page
    that repeats its article elsewhere keeps it whole: no page 2 at all)."""
    tree = LexborHTMLParser(body)
    text = _squash(tree.body.text(separator=" ")) if tree.body is not None else ""
    rest = set(second_half(paragraphs))
    first = [p for p in paragraphs[1:] if p not in rest and len(p) >= 40]
    return any(_squash(p)[:40] in text for p in first)


def build(archive: Path, seed: int = SEED, sites: int = 16, more: bool = False) -> Crawl:
    rng = random.Random(seed)
    by_site = read_originals(archive)
    eligible = sorted(site for site, pages in by_site.items() if len(pages) >= 5)
    chosen = sorted(rng.sample(eligible, min(sites, len(eligible))))
    crawl = Crawl()
    group_of: dict[str, str] = {}
    donors = [p for site in sorted(by_site) if site not in chosen for p in by_site[site]]
    spare_paragraphs = [q for p in donors for q in p.paragraphs if len(q.split()) >= 30]
    rng.shuffle(spare_paragraphs)
    variant_cycle = 0
    stories: list[tuple[set[str], str]] = []
    for number, site in enumerate(chosen):
        pages = by_site[site][:8]
        id_params = number % 4 == 3
        for index, page in enumerate(pages):
            if id_params:
                host = page.url.split("://", 1)[1].split("/", 1)[0]
                page.url = f"http://{host}/article.php?id={index + 1}"
            # Two sites of the data may carry one story (a wire report): one group, not two.
            group = _joined_story(page, stories, f"{site}#{index}")
            group_of[page.url] = group
            crawl.add(page.url, page.html, group, "id-param" if id_params else "original")
        # Positives, each on a page of its own.
        first, second, third, fourth = pages[0], pages[1], pages[2], pages[3]
        for _ in range(2):
            url, name = url_variants(first.url)[variant_cycle % 9]
            variant_cycle += 1
            body = first.html
            if name in ("sid", "jsessionid"):
                body = with_session(body, url.rsplit("sid=", 1)[-1][:16])
            crawl.add(url, body, group_of[first.url], f"url-variant:{name}")
        if len(second.paragraphs) >= 3:
            crawl.add(second.url.rstrip("/") + "/print", print_page(second),
                      group_of[second.url], "print")
        if number % 2 == 0:
            host = third.url.split("://", 1)[1].split("/", 1)[0]
            mirror = f"mirror.archive-{number}.example.net"
            for page in pages[2:7]:  # a mirror of most of the site: its template is learned
                crawl.add(page.url.replace(host, mirror), page.html.replace(host, mirror),
                          group_of[page.url], "mirror")
        other = by_site[chosen[(number + 1) % len(chosen)]]
        if len(fourth.paragraphs) >= 3:
            host_page = other[-1]
            inner = f"<h1>{html.escape(fourth.paragraphs[0])}</h1>" + paragraphs_html(
                fourth.paragraphs[1:])
            body = with_content(host_page, inner)
            if body is not None:
                host = host_page.url.split("://", 1)[1].split("/", 1)[0]
                crawl.add(f"http://{host}/syndicated/{number}-{len(crawl.pages)}", body,
                          group_of[fourth.url], "syndicated")
        fifth = pages[4]
        if spare_paragraphs:
            body = updated_page(fifth, spare_paragraphs.pop())
            if body is not None:
                crawl.add(fifth.url, body, group_of[fifth.url], "updated", LATER_DATE)
        # Negatives.
        host = pages[0].url.split("://", 1)[1].split("/", 1)[0]
        if number % 3 == 0 and len(spare_paragraphs) >= 4:
            titles = "".join(
                f'<li><a href="{html.escape(p.url)}">{html.escape(p.paragraphs[0])}</a></li>'
                for p in pages if p.paragraphs)
            for section in ("news", "latest"):
                intro = paragraphs_html([spare_paragraphs.pop(), spare_paragraphs.pop()])
                body = with_content(pages[-1], f"{intro}<ul>{titles}</ul>")
                if body is not None:
                    url = f"http://{host}/section/{section}"
                    crawl.add(url, body, f"{site}#index-{section}", "index")
        # Long: what a site would cut in pages (6 paragraphs and 300 words at least). Page 2 is
        # in the site's template where the article's element can be found, else bare.
        long_articles = [p for p in pages
                         if len(p.paragraphs) >= 6 and len(p.gold.split()) >= 300]
        for article in long_articles:
            rest = second_half(article.paragraphs)
            body = with_content(article, paragraphs_html(rest))
            if body is not None and holds_first_half(body, article.paragraphs):
                body = None
            if body is None and article is not long_articles[-1]:
                continue
            if body is None:
                body = f"<html><body>{paragraphs_html(rest)}</body></html>"
            sep = "&" if "?" in article.url else "?"
            crawl.add(f"{article.url}{sep}page=2", body, f"{group_of[article.url]}-p2",
                      "page-2")
            break
    if more:
        add_more_variants(crawl, [by_site[site][:8] for site in chosen], group_of,
                          random.Random(seed + 1))
    return crawl


def write(crawl: Crawl, out: Path) -> tuple[Path, Path]:
    out.mkdir(parents=True, exist_ok=True)
    warc_path, truth_path = out / "dup-crawl.warc.gz", out / "truth.json"
    with open(warc_path, "wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        for page, body in zip(crawl.pages, crawl.bodies, strict=True):
            http = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8"),
                                               ("Content-Length", str(len(body)))],
                                    protocol="HTTP/1.1")
            record = writer.create_warc_record(
                page["url"], "response", payload=io.BytesIO(body), http_headers=http,
                warc_headers_dict={"WARC-Record-ID": page["record_id"],
                                   "WARC-Date": page["date"]})
            writer.write_record(record)
            record.raw_stream.close()  # warcio spools the payload to a temporary file
    groups: dict[str, list[str]] = defaultdict(list)
    for page in crawl.pages:
        groups[page["group"]].append(page["record_id"])
    truth = {
        "pages": crawl.pages,
        "groups": {name: ids for name, ids in sorted(groups.items()) if len(ids) > 1},
    }
    truth_path.write_text(json.dumps(truth, indent=1, ensure_ascii=False) + "\n",
                          encoding="utf-8")
    return warc_path, truth_path


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("archive", type=Path, help="an evaluation WARC with a .gold.jsonl.gz")
    parser.add_argument("--out", type=Path, default=Path("dup-crawl"))
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--sites", type=int, default=16, help="sites taken (default 16)")
    parser.add_argument("--more-variants", action="store_true",
                        help="add the URL variants of add_more_variants (after the others)")
    args = parser.parse_args(argv)
    crawl = build(args.archive, args.seed, args.sites, args.more_variants)
    warc_path, truth_path = write(crawl, args.out)
    kinds: dict[str, int] = defaultdict(int)
    for page in crawl.pages:
        kinds[page["kind"].split(":")[0]] += 1
    counts = ", ".join(f"{kind} {n}" for kind, n in sorted(kinds.items()))
    print(f"{warc_path}: {len(crawl.pages)} pages ({counts})")
    print(f"{truth_path}")


if __name__ == "__main__":
    main()
