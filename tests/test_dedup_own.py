"""What a site's pages share does not make them duplicates, even where the fit learned no
template (issue 38, item 6): two pages of one site without template are near duplicates only
when their main contents are too (:mod:`warcdeboil.dedup.own`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import (
    ArchiveBuilder,
    request_response_crawl,
    shared_file,
    site_pages,
)

from warcdeboil.dedup import DedupStats, PageText, iter_url_groups
from warcdeboil.dedup.detect import duplicate_groups
from warcdeboil.dedup.own import own_texts, same_own
from warcdeboil.dedup.verdicts import DedupMode
from warcdeboil.output.formats import OutputFormat
from warcdeboil.page.dom import analyse
from warcdeboil.run.local import build_index, clean, find_duplicates, fit_profiles
from warcdeboil.run.options import Options
from warcdeboil.warc.compression import Codec

STATS = "http://stats.example/rider/anthony-ravard"
OTHER_STATS = "http://stats.example/game/petzi"
POST = "http://blog.example/2012/11/pink"
POST_AGAIN = "http://blog.example/2012/11/pink?ref=feed"
SYNDICATED = "http://news.example/story/001"
WIRE = "http://wire.example/story/001"


def _sidebar(visits: int) -> str:
    """A site's sidebar: its prediction game's races and its visit counters (long lines, none
    linked), a login box."""
    races = "".join(f"<li>Tour de Pologne, stage {k}: {150 + k},9 km, 0{k % 9 + 1}.08.2020</li>"
                    for k in range(16))
    counts = "".join(f"<li>Visits in the year {2012 - k}: {5369350 - 1000 * k} pages seen by "
                     "our readers</li>" for k in range(8))
    return (f"<div class='right'><h3>Predictions</h3><ul>{races}</ul><h3>Visits</h3>"
            f"<ul>{counts}</ul><p>Today: {visits}</p><p>Login</p><p>Remember me</p></div>")


def _page(title: str, main: str, visits: int) -> str:
    return (f"<html><head><title>{title}</title></head><body>"
            "<div id='head'><a href='/'>Home</a> <a href='/results'>Results</a></div>"
            f"<div id='main'><h1>{title}</h1>{main}</div>{_sidebar(visits)}"
            "<div id='foot'>(c) the site, all rights reserved</div></body></html>")


@pytest.fixture
def small_sites(tmp_path: Path, write_archive: ArchiveBuilder) -> Path:
    """stats.example: two different pages (a rider's, a player's) under one big sidebar, most
    of their text; blog.example: a post, and the post updated with a paragraph under another
    URL, their sidebars' counters apart (a near duplicate); a story of news.example (a site
    with a template) copied on wire.example, a one-page site. The sites of two pages get no
    template: their pages' long blocks are the sidebar's, the fit takes them for copies."""
    src = tmp_path / "crawl"
    src.mkdir()
    rider = ("<p>Anthony Ravard, born in Nantes in 1987, rode for Agritubel and then Cofidis, "
             "and won a stage of the Tour de l'Avenir in 2008.</p>")
    player = ("<p>Petzi has played the prediction game since 2006 and is the only player who "
              "tipped the winners of all three grand tours of 2014.</p>")
    post = ("<p>In the pink: a coat seen on Brick Lane on Saturday afternoon, worn over a grey "
            "jumper with white trainers, and a bag found at a market in Portobello.</p>"
            "<p>Photographs by the author; more looks from London in the archive below.</p>")
    updated = post + "<p>Update: the coat is from a charity shop on Cheshire Street.</p>"
    pages = [(STATS, _page("Rider statistics: Anthony Ravard", rider, 10537)),
             (OTHER_STATS, _page("Prediction game: petzi", player, 11131)),
             (POST, _page("In the pink", post, 2200)),
             (POST_AGAIN, _page("In the pink", updated, 2291))]
    news = dict(site_pages("news.example", 5))
    story = news[SYNDICATED]
    article = story[story.index("<article>"):story.index("</article>")] + "</article>"
    pages += list(news.items())
    pages.append((WIRE, "<html><head><title>Wire</title></head><body><div>Wire service</div>"
                        f"{article}<p>Distributed by the wire.</p></body></html>"))
    write_archive(src / "a.warc.gz", request_response_crawl(pages), Codec.GZIP)
    return src


def _groups(work: Path) -> dict[str, int]:
    return {url: group for _, url, group in iter_url_groups(work)}


@pytest.mark.parametrize("options", [
    Options(workers=1, format=OutputFormat.JSONL),
    Options(workers=2, format=OutputFormat.WARC, dedup=DedupMode.REVISIT),
], ids=["jsonl", "warc-revisit"])
def test_pages_of_a_site_without_template_need_their_own_text_alike(
        small_sites: Path, tmp_path: Path, options: Options) -> None:
    work = tmp_path / "work"
    summary = clean([small_sites], tmp_path / "out", options, work_dir=work)
    group = _groups(work)
    assert group[STATS] != group[OTHER_STATS]  # the sidebar alone: not copies
    assert group[POST] == group[POST_AGAIN]  # the post, and the post updated: copies
    assert group[SYNDICATED] == group[WIRE]  # two sites: compared as before
    assert summary.dedup is not None
    assert {k: summary.dedup[k] for k in ("groups", "looked", "refused")} == {
        "groups": 2, "looked": 2, "refused": 1}


def test_what_two_pages_share_is_left_out() -> None:
    sidebar = "<div>" + "".join(f"<p>Thread {k} about the race</p>" for k in range(40)) + "</div>"
    rider = "<div><p>Born 1987 in Nantes, rode for Cofidis and Agritubel</p></div>"
    player = "<div><p>Plays the prediction game since 2006, tipped three winners</p></div>"
    first = analyse(f"<body>{rider}{sidebar}<p>today 10537</p></body>", structure=True)
    second = analyse(f"<body>{player}{sidebar}<p>today 11131</p></body>", structure=True)
    assert own_texts(first, second, None) == (
        "Born 1987 in Nantes, rode for Cofidis and Agritubel\ntoday 10537",
        "Plays the prediction game since 2006, tipped three winners\ntoday 11131")
    assert not same_own(*own_texts(first, second, None))
    # The same page twice: what no shared subtree holds, the same on both. Two pages that hold
    # nothing else, or one that holds the other and more (an updated copy): copies.
    assert own_texts(first, first, None) == ("today 10537", "today 10537")
    assert same_own(*own_texts(first, first, None))
    assert same_own("", "") and same_own("", "an added paragraph of the update")
    assert same_own("a paragraph of the article, then a second one that goes on",
                    "a paragraph of the article, then a second one that goes on and on")
    # What it cannot tell apart: two captures of one page that differ only in a counter alone
    # in its box look like two pages that differ only in their date.
    story = "<div><p>" + "A story of its own, long enough to be one. " * 5 + "</p></div>"
    counted = [analyse(f"<body>{story}{sidebar}<div>visits {n}</div></body>", structure=True)
               for n in (2200, 2291)]
    assert own_texts(*counted, None) == ("visits 2200", "visits 2291")
    assert not same_own(*own_texts(*counted, None))


def test_the_search_asks_the_second_look_about_pages_of_one_site_only(tmp_path: Path) -> None:
    """:func:`duplicate_groups`: a confirmed pair of two pages of one site without template is
    joined only if ``second_look`` says so; other pairs are not looked at."""
    def text(topic: str) -> str:
        return " ".join(f"{topic} thread {k} about the race in the mountains" for k in range(30))

    pages = [PageText(0, "http://s.example/a", text("forum"), site="s.example",
                      no_template=True),
             PageText(1, "http://s.example/b", text("forum") + " b", site="s.example",
                      no_template=True),
             PageText(2, "http://t.example/a", text("wire"), site="t.example", no_template=True),
             PageText(3, "http://u.example/a", text("wire") + " c", site="u.example",
                      no_template=True),
             PageText(4, "http://v.example/a", text("news"), site="v.example", no_template=True),
             PageText(5, "http://v.example/b", text("news") + " d", site="v.example")]
    asked: list[list[int]] = []

    def refuse(pairs: np.ndarray) -> list[bool]:
        asked.extend(pairs.tolist())
        return [False] * len(pairs)

    stats = DedupStats()
    groups = [sorted((g.keep, *g.drop)) for g in duplicate_groups(
        iter(pages), tmp_path, stats=stats, second_look=refuse)]
    assert asked == [[0, 1]]
    assert (stats.looked, stats.refused) == (1, 1)
    assert sorted(groups) == [[2, 3], [4, 5]]
    assert not list(tmp_path.iterdir())  # its files are gone


def test_radsport_pages_are_not_duplicates(tmp_path: Path) -> None:
    """Two pages of live-radsport.ch (the site has no other page in the file) shared a
    sidebar and were near duplicates at 0.72."""
    archive = shared_file("warcs", "chatnoir-eu__chatnoir-resiliparse__warcfile.warc.gz")
    work = tmp_path / "work"
    summary = clean([archive], tmp_path / "out", Options(workers=1, format=OutputFormat.JSONL),
                    work_dir=work)
    assert summary.dedup is not None
    assert (summary.dedup["groups"], summary.dedup["refused"]) == (0, 1)
    group = _groups(work)
    assert group["http://06.live-radsport.ch/fahrerstatistik_801/Anthony_Ravard.html"] != group[
        "http://06.live-radsport.ch/tippspiel/stats_140_petzi.html"]


@pytest.mark.slow
def test_dragnet_keeps_its_copies_and_parts_its_photo_posts(tmp_path: Path) -> None:
    """dragnet: the two ``?dup=2`` pages and the Yahoo story under two URLs stay duplicates;
    two photo posts of thestreethearts.com and two of stylescout.blogspot.com (one line of
    text each under their blog's sidebar; gold Jaccard 0.09 and 0.00) are no longer."""
    archive = shared_file("eval", "dragnet.warc.gz")
    options = Options(workers=2, format=OutputFormat.JSONL)
    work = tmp_path / "work"
    build_index([archive], work, options)
    fit_profiles(work, work / "profiles", options)
    counts = find_duplicates(work, work / "profiles", 1, options)
    group = _groups(work)
    together = [
        ("http://blogs.discovermagazine.com/badastronomy/2012/08/09/"
         "first-color-360-degree-panorama-from-curiosity/"),
        "http://chinadigitaltimes.net/2012/08/heywood-murder-trial-ends-without-verdict/",
    ]
    for url in together:
        assert group[url] == group[url + "?dup=2"], url
    assert group["http://sports.yahoo.com/news/overhaul-brazil-world-cup-stadium-under-"
                 "investigation-162934452--sow.html"] == group[
        "http://sports.yahoo.com/news/soccer-overhaul-brazil-world-cup-stadium-under-"
        "investigation-162502042--sow.html"]
    assert group["http://thestreethearts.com/2011/07/summertime/"] != group[
        "http://thestreethearts.com/2011/07/velvet-shine/"]
    assert group["http://stylescout.blogspot.com/2012/11/in-pink.html"] != group[
        "http://stylescout.blogspot.com/2012/11/lfw.html"]
    assert counts["groups"] == 3


@pytest.mark.spark
def test_spark_takes_the_same_second_look(spark, small_sites: Path, tmp_path: Path) -> None:
    from warcdeboil.spark import run_spark

    options = Options(workers=1, format=OutputFormat.JSONL)
    local = clean([small_sites], tmp_path / "local", options)
    distributed = run_spark([str(small_sites)], str(tmp_path / "spark"), options, session=spark)
    assert (tmp_path / "spark" / "a.jsonl.gz").read_bytes() == (
        tmp_path / "local" / "a.jsonl.gz").read_bytes()
    assert distributed.dedup is not None and local.dedup is not None
    assert {k: distributed.dedup[k] for k in ("groups", "looked", "refused")} == {
        "groups": 2, "looked": 2, "refused": 1} == {
        k: local.dedup[k] for k in ("groups", "looked", "refused")}
