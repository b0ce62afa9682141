"""Repeated blocks: text a site repeats on many pages, outside any subtree its neighbours share."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import pytest
from conftest import http_response, site_pages, warc_record

from warcdeboil.api import Deboiler
from warcdeboil.output.formats import OutputFormat
from warcdeboil.page.dom import LINE, analyse, block_digest, page_signature, remove_template
from warcdeboil.run.local import clean
from warcdeboil.run.options import Options
from warcdeboil.site.fit import BlockCounter, FitParams, SiteProfile, fit_site
from warcdeboil.site.index import IndexEntry, decode_entry, encode_entry
from warcdeboil.site.profiles import ProfileReader, ProfileWriter, profile_path
from warcdeboil.warc.compression import Codec
from warcdeboil.warc.reader import iter_records

PITCH = "Subscribe to the newsletter for the best stories of the week in your inbox."


def pitched_pages(host: str, count: int, every: int = 1) -> list[tuple[str, str]]:
    """A site whose pages carry a newsletter pitch as a paragraph of the article itself, each
    time beside different neighbours (so no candidate subtree around it is ever shared)."""
    pages = []
    for i, (url, html) in enumerate(site_pages(host, count)):
        if i % every == 0:
            html = html.replace("</h1>", f"</h1><p>{PITCH}</p>")
        pages.append((url, html))
    return pages


def signatures(pages: list[tuple[str, str]]) -> list:
    return [page_signature(analyse(html)) for _, html in sorted(pages)]


def test_a_block_on_most_pages_is_repeated_and_an_article_block_is_not() -> None:
    profile = fit_site("p.example", signatures(pitched_pages("p.example", 8)), FitParams())
    assert block_digest(PITCH) in profile.repeated
    assert block_digest("Second paragraph of story 3 keeps going for a while.") not in (
        profile.repeated
    )


def test_share_and_minimum_pages_decide() -> None:
    pages = pitched_pages("s.example", 20, every=5)  # on 4 pages of 20
    digest = block_digest(PITCH)
    assert digest in fit_site("s", signatures(pages), FitParams(repeated_share=0.2)).repeated
    assert digest not in fit_site("s", signatures(pages), FitParams(repeated_share=0.25)).repeated
    assert digest not in fit_site(
        "s", signatures(pages), FitParams(repeated_min_pages=5)
    ).repeated
    # Two pages are too few to tell a site's boilerplate from a shared quote.
    assert not fit_site("s", signatures(pitched_pages("s.example", 2)), FitParams()).repeated


def test_near_duplicates_count_once() -> None:
    story = site_pages("d.example", 1, article_words=200)[0][1]
    pages = [(f"http://d.example/story?page={i}", story.replace("<footer>", f"<b>{i}</b><footer>"))
             for i in range(4)]
    pages.append(("http://d.example/other", site_pages("d.example", 2)[1][1]))
    profile = fit_site("d", signatures(pages), FitParams())
    article = block_digest(" ".join(f"word0x{j}" for j in range(200)))
    assert article not in profile.repeated  # four copies of one story, counted as one page


def test_block_counter_is_bounded_and_never_overcounts() -> None:
    rng = random.Random(7)
    counter = BlockCounter(capacity=512)
    truth: dict[int, int] = {}
    for _ in range(500):
        page = {1, 2} | {rng.randrange(10_000) for _ in range(30)}
        counter.add(page)
        for digest in page:
            truth[digest] = truth.get(digest, 0) + 1
        assert len(counter.counts) <= 512
    assert all(count <= truth[d] for d, count in counter.counts.items())
    # Low by at most (blocks added) / (capacity + 1) = 500 * 32 / 513 < 32: the two blocks on
    # every page are found, and no random one comes near.
    assert counter.frequent(500 - 32) == {1, 2}


def test_removing_a_subtree_keeps_the_text_around_it_apart() -> None:
    page = analyse("<body><div>Before the box <nav>Menu</nav> after the box</div></body>")
    nav = page.hashes[1]
    marked, removed, _ = remove_template(page, {nav})
    assert removed == 1
    assert [part.strip() for part in marked.decode().replace("\ufdd0", LINE)
            .replace("\ufdd1", LINE).split(LINE) if part.strip()] == [
        "Before the box", "after the box"]


def test_index_entries_and_profiles_keep_the_block_digests(tmp_path: Path) -> None:
    signature = signatures(pitched_pages("i.example", 1))[0]
    assert len(signature.texts) >= 5
    entry = IndexEntry("i.example", "key", 3, 10, 20, "http://i.example/", signature)
    assert decode_entry(encode_entry(entry)).signature.texts == signature.texts
    profile = SiteProfile("i.example", 9, 0, frozenset({5, 6}), frozenset({7, 8}))
    with ProfileWriter(profile_path(tmp_path, 0)) as writer:
        writer.add(profile)
    with ProfileReader(tmp_path, 1) as reader:
        back = reader.get("i.example")
    assert back is not None and back.repeated == profile.repeated
    assert back.template == frozenset()  # no pair taught a template: nothing of it is removed


def test_api_template_mode_removes_the_repeated_block_from_text_and_html() -> None:
    pages = pitched_pages("a.example", 6)
    for page in Deboiler().fit(pages).transform(pages, html=True):
        assert PITCH not in page.text
        assert page.html is not None and PITCH not in page.html
        assert "Headline number" in page.text and "Second paragraph" in page.text
        assert "Headline number" in page.html


def _archive(tmp_path: Path, write_archive, pages: list[tuple[str, str]]) -> Path:
    records = [warc_record("response", url, http_response(html.encode())) for url, html in pages]
    return write_archive(tmp_path / "site.warc.gz", records, Codec.GZIP)


def _rows(path: Path) -> list[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def test_pipeline_counts_repeated_blocks_in_every_mode(tmp_path: Path, write_archive) -> None:
    src = _archive(tmp_path, write_archive, pitched_pages("c.example", 6))
    template = clean([src], tmp_path / "t", Options(workers=1, format=OutputFormat.JSONL,
                                                    mode="template"))
    assert template.fit.repeated_blocks >= 1
    rows = _rows(tmp_path / "t" / "site.jsonl.gz")
    assert len(rows) == 6
    assert all(PITCH not in row["text"] and row["removed"]["repeated_block"] >= 1
               for row in rows)
    warc = clean([src], tmp_path / "w", Options(workers=1, format=OutputFormat.WARC))
    assert warc.apply.cleaned == 6
    bodies = [r.block for r in iter_records(tmp_path / "w" / "site.warc.gz")
              if r.rec_type == "response"]
    assert len(bodies) == 6 and all(PITCH.encode() not in body for body in bodies)
    assert all(b"Second paragraph" in body for body in bodies)
    content = clean([src], tmp_path / "c", Options(workers=1, format=OutputFormat.JSONL))
    assert content.to_dict()["repeated_blocks"] >= 1
    rows = _rows(tmp_path / "c" / "site.jsonl.gz")
    assert all(PITCH not in row["text"] and row["removed"]["repeated_block"] >= 1
               and "Second paragraph" in row["text"] for row in rows)


def test_content_mode_names_repeated_blocks_it_drops(tmp_path: Path, write_archive) -> None:
    # A repeated block is named as such, whether the model kept it or not.
    share = "<p><a href='/share'>Share this story with a friend</a></p>"
    pages = [(url, html.replace("</h1>", "</h1>" + share))
             for url, html in site_pages("r.example", 6)]
    src = _archive(tmp_path, write_archive, pages)
    clean([src], tmp_path / "c", Options(workers=1, format=OutputFormat.JSONL))
    rows = _rows(tmp_path / "c" / "site.jsonl.gz")
    assert len(rows) == 6
    for row in rows:
        assert "Share this story" not in row["text"] and "Second paragraph" in row["text"]
        assert row["removed"].get("repeated_block", 0) >= 1
        assert "link_dense_block" not in row["removed"]


def _dragnet_pages(count: int, structure: bool) -> list:
    from conftest import shared_file

    from warcdeboil.page.html import html_page

    pages = []
    for record in iter_records(str(shared_file("eval", "dragnet.warc.gz"))):
        page = html_page(record) if record.error is None else None
        if page is not None:
            pages.append(analyse(page.markup, structure=structure))
            if len(pages) == count:
                return pages
    return pages


@pytest.mark.parametrize("structure", [False, True])
def test_count_repeated_is_what_remove_repeated_removes(structure: bool) -> None:
    # Each page's repeated set: every third of its own block digests, and of its neighbour's
    # (some blocks are on both), as a fitted site's would be; counted with and without cuts.
    from warcdeboil.page.dom import count_repeated, remove_repeated

    pages = _dragnet_pages(120, structure)
    counted = 0
    for page, neighbour in zip(pages, pages[1:] + pages[:1], strict=True):
        own, other = page_signature(page).texts, page_signature(neighbour).texts
        repeated = frozenset(list(own)[::3]) | frozenset(list(other)[1::3])
        for marked in (page.marked, remove_template(page, set(page.hashes[::4])).marked):
            text = marked.decode("utf-8", "surrogatepass")
            expected = remove_repeated(text, repeated)[1]
            assert count_repeated(text, repeated) == expected
            counted += expected
    assert counted > 1000
    marks = f" {LINE} a\u00a0b {LINE}  {LINE}\u2003{LINE} c "
    digests = {block_digest(" a b "), block_digest("c"), 0}
    assert count_repeated(marks, digests) == remove_repeated(marks, digests)[1] == 5  # 3 blank
    assert count_repeated(marks, digests - {0}) == 2
