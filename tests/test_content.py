"""Content mode: blocks, the shipped model, page attributes, Markdown, languages."""

from __future__ import annotations

import gzip
import json
import math
from dataclasses import replace
from html import escape
from pathlib import Path

import pytest
from conftest import (
    ArchiveBuilder,
    http_response,
    outputs_of,
    shared_file,
    site_pages,
    warc_record,
)
from typer.testing import CliRunner

from warcdeboil.api import Deboiler
from warcdeboil.cli import app
from warcdeboil.errors import ConfigError
from warcdeboil.evaluate import score_text
from warcdeboil.output.formats import OutputFormat
from warcdeboil.page.content import (
    DISCUSSION_COMMENT_CHARS,
    FEATURE_NAMES,
    KIND_ITEM,
    LISTING_THRESHOLD,
    MARKUP_BLOCK,
    MAX_ANCESTORS,
    PROSE_ITEMS_KEPT,
    PROSE_ITEMS_OUTSIDE,
    REPEATED_BLOCK,
    THREAD_COMMENT_CHARS,
    Block,
    ContentModel,
    block_verdicts,
    comment_roles,
    copied_blocks,
    discussion_address,
    extract,
    extract_blocks,
    feature_columns,
    fill_core_gaps,
    is_listing,
    is_markup,
    is_thread,
    judge,
    keep_items,
    keep_prose_items,
    load_model,
    section_titles,
    select_blocks,
    split_blocks,
    without_linked_chrome,
)
from warcdeboil.page.dom import ROLE_COMMENTS, analyse, plain_block_digests, plain_text
from warcdeboil.page.language import detect
from warcdeboil.report.annotate import annotate
from warcdeboil.run.local import clean
from warcdeboil.run.options import Options
from warcdeboil.site.clean import Mode
from warcdeboil.warc.compression import Codec

ARTICLE = (
    "<!DOCTYPE html><html lang='en-GB'><head><title>Storm closes the coast road</title>"
    "<meta name='description' content='The coast road is shut after a storm.'>"
    "<link rel='canonical' href='https://news.example/storm'></head><body>"
    "<nav class='menu'><ul><li><a href='/'>Home</a></li><li><a href='/world'>World</a></li>"
    "<li><a href='/sport'>Sport</a></li><li><a href='/weather'>Weather</a></li></ul></nav>"
    "<ol class='breadcrumb'><li><a href='/'>Home</a></li><li><a href='/local'>Local</a></li></ol>"
    "<main><h1>Storm closes the <em>coast</em> road</h1>"
    "<p>Council workers closed the coast road on Tuesday morning after high waves threw rocks and "
    "sand across both lanes near the harbour wall, the second closure this month.</p>"
    "<p>Engineers will inspect the sea defences on Wednesday before deciding when traffic can "
    "return. Buses are being diverted through the town centre in the meantime.</p>"
    "<h2>What residents can do</h2><ul><li>Use the inland route through the town centre.</li>"
    "<li>Check the council's website before travelling.</li></ul>"
    "<table><tr><th>Day</th><th>Tide</th></tr><tr><td>Tuesday</td><td>5.1 m</td></tr></table>"
    "<p>A spokesperson said the <strong>safety of drivers</strong> came first and thanked "
    "residents for their patience while the work is done.</p></main>"
    "<aside><h3>Most read</h3><ul><li><a href='/a'>Cat rescued from tree</a></li>"
    "<li><a href='/b'>Bakery wins award</a></li><li><a href='/c'>New bus timetable</a></li>"
    "</ul></aside><footer><a href='/privacy'>Privacy</a> <a href='/terms'>Terms</a></footer>"
    "</body></html>"
)


def test_blocks_carry_kind_links_and_nesting() -> None:
    page = analyse(ARTICLE, structure=True)
    blocks = split_blocks(page.marked.decode())
    by_text = {b.text: b for b in blocks}
    assert by_text["Storm closes the coast road"].kind == 1
    assert by_text["What residents can do"].kind == 2
    assert by_text["Use the inland route through the town centre."].kind == KIND_ITEM
    home = by_text["Home"]
    assert home.link_chars == home.chars == 4
    first = next(b for b in blocks if b.text.startswith("Council workers"))
    assert first.link_chars == 0 and first.kind == 0
    assert len(first.ancestors) < len(home.ancestors)  # nav > ul > li vs <main>'s paragraph
    # Block text is the page's text: the same as template mode's lines.
    assert "\n".join(b.text for b in blocks) == plain_text(page.marked.decode(), True)


def test_deep_nesting_names_only_the_innermost_ancestors() -> None:
    depth = 3 * MAX_ANCESTORS
    page = analyse("<body>" + "<div>level" * depth + "</body>", structure=True)
    blocks = split_blocks(page.marked.decode())
    assert [b.text for b in blocks] == ["level"] * depth
    assert max(len(b.ancestors) for b in blocks) == MAX_ANCESTORS
    # Each block's innermost ancestor is its own div: the block before it is its parent's.
    parents = [b.ancestors[-1] for b in blocks]
    assert len(set(parents)) == depth
    assert all(b.ancestors[-2] == parents[i] for i, b in enumerate(blocks[1:]))
    assert blocks[-1].ancestors == tuple(parents[-MAX_ANCESTORS:])


TEASERS = (
    "<html><body><div class='more'>"
    "<a href='/a'><div>Bakery wins award</div><p>The bakery on the corner won a national prize "
    "for its sourdough.</p></a>"
    "<a href='/b'><div>New bus timetable</div><p>Buses run every ten minutes from Monday.</p></a>"
    "</div><div class='story'><p>Council workers closed the coast road on Tuesday, with "
    "<a href='/roads'>a map</a> of the diversions.</p><p>Council workers closed the coast road "
    "on Tuesday, with a map of the diversions.</p><p>Bakery wins award</p></div></body></html>"
)


def test_links_around_block_elements_are_links() -> None:
    blocks = split_blocks(analyse(TEASERS, structure=True).marked.decode())
    by_text = {b.text: b for b in blocks}
    # <a><div>headline</div><p>summary</p></a>: every block of the teaser is link text.
    for text in ("Bakery wins award", "The bakery on the corner won a national prize for its "
                 "sourdough.", "Buses run every ten minutes from Monday."):
        teaser = next(b for b in blocks if b.text == text)
        assert teaser.link_chars == teaser.chars and teaser.link_first, text
    # After the link closes, nothing is linked but what a link holds.
    story = next(b for b in blocks if b.text.startswith("Council workers") and b.link_chars)
    assert story.link_chars == len("amap") and not story.link_first
    # The last block of each text (the dict keeps the last) is the story's, outside links.
    again = by_text["Council workers closed the coast road on Tuesday, with a map of the "
                    "diversions."]
    assert again.link_chars == 0 and not again.link_first
    assert by_text["Bakery wins award"].link_chars == 0


SELF_LINKED = (
    "<html><body><main><h2 id='use'><a href='#use'>Using the API</a></h2>"
    "<p>Open a connection first.</p>"
    "<h2 id='events'>Events<a class='headerlink' href=\"#events\">¶</a></h2>"
    "<p>Listen for <a href='#close'>close</a> and for errors.</p>"
    "<h3><a href='/guide'>Read the guide</a></h3>"
    "<p>A link <a href='#top'>back up</a> outside a heading.</p></main></body></html>"
)


@pytest.mark.parametrize("as_bytes", [False, True])
def test_a_heading_linked_to_its_own_page_is_no_link(as_bytes: bool) -> None:
    markup = SELF_LINKED.encode() if as_bytes else SELF_LINKED
    blocks = split_blocks(analyse(markup, structure=True).marked.decode())
    by_text = {b.text: b for b in blocks}
    # Links to a section of the page itself, around a heading's text or after it: no link text.
    assert by_text["Using the API"].kind == 2 and by_text["Using the API"].link_chars == 0
    assert by_text["Events ¶"].link_chars == 0
    # A heading that links to another page is still a linked title; links outside headings
    # keep their marks, to the page itself or not.
    guide = by_text["Read the guide"]
    assert guide.kind == 3 and guide.link_chars == guide.chars
    assert by_text["Listen for close and for errors."].link_chars == len("close")
    assert by_text["A link back up outside a heading."].link_chars == len("backup")
    # The text itself is the same as without the rule.
    plain = SELF_LINKED.replace("href='#", "href='/x#").replace('href="#', 'href="/x#')
    assert [b.text for b in blocks] == [
        b.text for b in split_blocks(analyse(plain, structure=True).marked.decode())]


def test_teaser_and_repetition_features() -> None:
    blocks = split_blocks(analyse(TEASERS, structure=True).marked.decode())
    columns = dict(zip(FEATURE_NAMES, feature_columns(blocks), strict=True))
    texts = [b.text for b in blocks]
    repeated = [i for i, t in enumerate(texts) if texts.count(t) > 1]
    assert [i for i, v in enumerate(columns["repeated_in_page"]) if v] == repeated
    assert len(repeated) == 4  # the headline and the paragraph, twice each
    assert columns["starts_with_link"] == [float(b.link_first) for b in blocks]
    # The two teaser <div>s share the list's <div>; the story's paragraphs sit in one <div>.
    siblings = dict(zip(texts, columns["parent_siblings"], strict=True))
    assert siblings["New bus timetable"] == pytest.approx(math.log1p(2))
    story = [v for t, v in zip(texts, columns["parent_siblings"], strict=True)
             if t.startswith("Council")]
    assert story == [pytest.approx(math.log1p(2))] * 2  # <div class=more> and <div class=story>


# Three paragraphs of an article, and the same text again in one piece (a hidden articleBody).
COPY_PARAGRAPHS = (
    "The harbour authority reopened the north pier on Monday after three weeks of repairs to "
    "the timber decking that the January storms had torn loose along its outer half.",
    "Fishing boats had been mooring at the south quay in the meantime, which meant a longer "
    "walk for the crews and a queue at the only crane able to lift the day's catch.",
    "The repairs cost less than the council had set aside, and the remaining money will go "
    "towards new lighting on the promenade before the summer season begins in June.",
)


def _copy_page(copy: str) -> list:
    html = ("<html><body><main>" + "".join(f"<p>{p}</p>" for p in COPY_PARAGRAPHS)
            + f"</main><div class='body-copy'>{copy}</div></body></html>")
    return split_blocks(analyse(html, structure=True).marked.decode())


def test_a_copy_of_the_article_in_one_piece_goes() -> None:
    blocks = _copy_page(" ".join(COPY_PARAGRAPHS))
    keep_all = ContentModel((0.0,) * len(FEATURE_NAMES), 10.0, 0.5)
    assert copied_blocks(blocks, [True] * len(blocks)) == [False, False, False, True]
    result = extract_blocks(blocks, keep_all)
    assert [b.text for b in result.blocks] == list(COPY_PARAGRAPHS)
    assert result.removed == {"copied_block": 1}
    # A block the model dropped is no source: the copy is then the first and stays.
    assert copied_blocks(blocks, [False, False, False, True]) == [False] * 4


def test_a_paragraph_repeated_from_one_block_stays() -> None:
    # A lead repeated by the article's first paragraph copies one block only: both stay (gold
    # texts keep both), as does a block that shares a few words with the text before it.
    assert copied_blocks(_copy_page(COPY_PARAGRAPHS[1]), [True] * 4) == [False] * 4
    unrelated = ("The harbour authority reopened the north pier on Monday, and a new ferry "
                 "timetable starts next week with two more sailings to the islands each day.")
    assert copied_blocks(_copy_page(unrelated), [True] * 4) == [False] * 4


def _linked_aside_page(prose: bool) -> list:
    # Prose: a paragraph of 150 characters or more (see is_listing).
    paragraphs = ((" ".join(COPY_PARAGRAPHS[:2]), COPY_PARAGRAPHS[2]) if prose
                  else ("Opening times", "Monday to Friday, 9 to 5"))
    html = ("<html><body><main>" + "".join(f"<p>{p}</p>" for p in paragraphs) + "</main>"
            "<aside><p><a href='/a'>Council approves a second ferry route to the islands after "
            "a year of talks</a></p><p>Read <a href='/b'>the ferry timetable</a> for the new "
            "sailings</p></aside></body></html>")
    return split_blocks(analyse(html, structure=True).marked.decode())


def test_wholly_linked_blocks_of_an_aside_go_on_a_page_with_prose() -> None:
    keep_all = ContentModel((0.0,) * len(FEATURE_NAMES), 10.0, 0.5)
    blocks = _linked_aside_page(prose=True)
    assert [b.text[:12] for b in blocks][-2:] == ["Council appr", "Read the fer"]
    keep, _ = judge(blocks, keep_all)
    assert keep == [True, True, False, True]  # the partly linked line is the model's
    assert without_linked_chrome(blocks, [True] * 4) == keep
    result = extract_blocks(blocks, keep_all)
    assert result.removed == {"link_dense_block": 1}
    # A page without prose is a listing: its linked items are its content and stay.
    listing = _linked_aside_page(prose=False)
    assert judge(listing, keep_all)[0] == [True] * 4


def test_readers_comments_are_not_main_content() -> None:
    comments = "".join(
        f"<div class='comment'><p>{text}</p></div>" for text in (
            "I read this twice and I still think the council should have closed the road a "
            "week earlier, before the second storm arrived, since the waves were already "
            "throwing sand across both lanes.",
            "The diversion through the town centre added twenty minutes to my drive to work on "
            "Tuesday morning, and the buses were full by the second stop.",
            "Thanks to the engineers who were out in the rain checking the sea defences; they "
            "deserve more credit than they get for work like this.",
        ))
    html = ARTICLE.replace("</main>", f"<div id='comments'><h2>3 Responses</h2>{comments}"
                                      "</div></main>")
    blocks = split_blocks(analyse(html, structure=True).marked.decode())
    # A model that keeps every block: what goes, goes by the rule.
    keep_all = ContentModel((0.0,) * len(FEATURE_NAMES), 10.0, 0.5)
    result = extract_blocks(blocks, keep_all)
    assert "Council workers closed the coast road" in result.text
    assert "Most read" in result.text  # an aside is the model's to judge
    for text in ("3 Responses", "I read this twice", "The diversion", "Thanks to the engineers"):
        assert text not in result.text, text
    # ... and the wholly linked blocks of the menu, breadcrumb, aside and footer, by
    # without_linked_chrome (the aside's heading, not a link, stays).
    assert result.removed == {"comment_block": 4, "link_dense_block": 10}
    shipped = extract(analyse(html, structure=True).marked.decode())
    assert "The diversion" not in shipped.text and "Council workers" in shipped.text


def test_a_discussion_keeps_its_comments() -> None:
    # A forum thread: the question is a short paragraph, the replies (marked as comments by
    # their class) hold nearly all of the text. They are the page's content.
    replies = "".join(
        f"<div class='comment'><p>{text}</p></div>" for text in (
            "Check the thermostat wiring first: on most of these boilers the common wire comes "
            "loose behind the front panel, and the display then resets every few minutes "
            "while the pump keeps running for no reason at all.",
            "Mine did the same last winter. The installer replaced the pressure sensor, which "
            "was reading low, and the error code has not come back since then, even on the "
            "coldest nights we had in January and February.",
            "Before you pay for a sensor, bleed the radiators and top the pressure up to one "
            "and a half bar; a low reading is often just air in the system after a service.",
        ))
    html = (f"<html><body><main><p>Boiler resets itself?</p>"
            f"<div id='comments'>{replies}</div></main></body></html>")
    blocks = split_blocks(analyse(html, structure=True).marked.decode())
    keep_all = ContentModel((0.0,) * len(FEATURE_NAMES), 10.0, 0.5)
    assert comment_roles(blocks, [True] * len(blocks)) == 0
    result = extract_blocks(blocks, keep_all)
    assert "Check the thermostat wiring" in result.text and "Before you pay" in result.text
    assert "comment_block" not in result.removed
    # What the model drops does not count: kept, the question alone is no discussion.
    keep = [not block.roles for block in blocks]
    assert comment_roles(blocks, keep) == 1 << ROLE_COMMENTS
    assert comment_roles(blocks, [False] * len(blocks)) == 1 << ROLE_COMMENTS


# A forum thread as many forums mark it up: every post, the first one too, in an element whose
# class says "comment"; around it the forum's menu, a list of other threads and a footer.
THREAD_POSTS = (
    ("marta_k", "My sourdough starter doubled every day for two weeks and then stopped rising "
     "almost completely. I feed it equal weights of flour and water twice a day, keep it on the "
     "kitchen counter, and the smell has turned sharp, almost like nail varnish. Has anyone had "
     "this happen after switching flour brands? I moved from a stoneground wholemeal to a "
     "supermarket white flour about ten days ago."),
    ("bakerjon", "The nail varnish smell is acetone from a hungry starter. White flour has far "
     "less for the yeast to eat than wholemeal, so at your feeding rate it runs out of food well "
     "before the next meal. Try one part starter to five parts flour and five parts water for a "
     "few days and see whether the rise comes back before you change anything else."),
    ("pete_in_leeds", "Temperature matters more than people think. My kitchen drops to about "
     "sixteen degrees at night in November and the starter barely moves; I now keep the jar in "
     "the oven with only the light switched on, which holds it near twenty-four degrees, and it "
     "peaks in six hours again instead of twelve."),
    ("marta_k", "Thank you both. I changed the ratio yesterday morning and the jar already looks "
     "livelier, with bubbles right through it rather than only on the top. The sharp smell is "
     "weaker too. I will try the oven light trick tonight because our flat is cold at night "
     "and report back at the weekend."),
    ("ruthbakes", "One more thing to check: chlorinated tap water can slow a young culture down. "
     "If your water smells of the swimming pool, leave a jug of it out overnight before using "
     "it, or use filtered water for a week. It costs nothing and rules one cause out while you "
     "work on the feeding schedule and the temperature."),
    ("bakerjon", "Good point about the water. Also, do not judge the starter by the first day "
     "after a change. Give any new routine at least four or five feeds before deciding it did "
     "not work; the balance between the yeast and the bacteria takes a while to settle after "
     "you change the flour, the ratio or the temperature."),
    ("marta_k", "Update at the weekend: with the new ratio, filtered water and the oven light the "
     "starter now triples in about seven hours and smells of yoghurt, not of nail varnish. I "
     "baked a loaf on Saturday and the crumb was open and even for the first time. Marking this "
     "thread as solved, and thanks again to everyone who answered."),
    ("oven_spring", "Glad it worked out. For anyone finding this thread later: hungry starter, "
     "cold kitchen and chlorinated water are the three usual suspects, roughly in that order, "
     "and a stiffer feeding ratio fixes the first one within a couple of days in most cases."),
    ("kneadmore", "I had the same trouble with a rye starter last spring. What finally helped "
     "was a smaller jar: in a big jar a small starter spreads thin, dries at the edges and you "
     "cannot see the rise properly, so you think it is dead when it is only slow. A straight "
     "sided jar with a rubber band at the level after feeding makes the progress obvious."),
    ("marta_k", "That is a neat trick with the rubber band. I used a wide bowl with a plate on "
     "top until now, so I never really knew how far it had risen. I moved it into a tall jar "
     "this morning and marked the level; it is already a third higher after four hours."),
    ("pete_in_leeds", "If you ever go on holiday, a fed starter keeps in the fridge for two or "
     "three weeks without trouble. Take it out a day before baking, give it two warm feeds, and "
     "it will be back to full strength by the evening, with no need for anyone to look after it."),
    ("ruthbakes", "Last tip from me: write down every feed for a week, with the time, the ratio "
     "and the room temperature. After a few days the notebook tells you far more than any of us "
     "can from a distance, because every kitchen and every bag of flour behaves differently."),
)


def _posts() -> str:
    return "".join(
        f"<div class='comment post'><div class='comment-meta'><a href='/u/{user}'>{user}</a> "
        f"<span>{n + 1} Nov 2026</span></div><div class='comment-body'><p>{text}</p></div></div>"
        for n, (user, text) in enumerate(THREAD_POSTS))


def _thread_page() -> str:
    posts = _posts()
    others = "".join(f"<li><a href='/t/{n}'>Another thread about bread number {n}</a></li>"
                     for n in range(8))
    return ("<html><head><title>Starter stopped rising</title></head><body>"
            "<nav><ul><li><a href='/'>Forums</a></li><li><a href='/new'>New posts</a></li>"
            "<li><a href='/search'>Search</a></li><li><a href='/login'>Log in</a></li></ul></nav>"
            f"<main><h1>Starter stopped rising after two weeks</h1>{posts}</main>"
            f"<aside><h3>Similar threads</h3><ul>{others}</ul></aside>"
            "<footer><a href='/terms'>Terms and rules</a> <a href='/privacy'>Privacy</a>"
            "</footer></body></html>")


def test_a_thread_of_comments_keeps_its_posts_and_drops_the_menus() -> None:
    blocks = split_blocks(analyse(_thread_page(), structure=True).marked.decode())
    model = load_model()
    # The model alone, which weighs "in a comments element" against a block, keeps no post.
    alone = model.keep_columns(feature_columns(blocks), blocks)
    assert not any(ok for block, ok in zip(blocks, alone, strict=True)
                   if block.roles & 1 << ROLE_COMMENTS and block.chars > 100)
    assert is_thread(blocks, alone)
    keep, dropped_roles = judge(blocks, model)
    assert dropped_roles == 0
    text = extract_blocks(blocks).text
    # The model still weighs position: all posts but the last stay (the last goes, as the
    # tail of a page often is boilerplate).
    kept = [post for _, post in THREAD_POSTS if post in text]
    assert kept == [post for _, post in THREAD_POSTS][:len(kept)] and len(kept) >= 11
    for junk in ("New posts", "Log in", "Another thread about bread", "Terms and rules"):
        assert junk not in text, junk
    gold = "\n".join(post for _, post in THREAD_POSTS)
    assert score_text(text, gold).f1 >= 0.9


def test_an_article_with_a_long_comment_thread_still_drops_the_comments() -> None:
    # The same posts below an article: the model keeps the article, so the page is no thread
    # and its comments go (dragnet's gold and scrapinghub's leave them out).
    html = ARTICLE.replace("</main>", f"<div id='comments'>{_posts()}</div></main>")
    blocks = split_blocks(analyse(html, structure=True).marked.decode())
    assert sum(b.chars for b in blocks if b.roles & 1 << ROLE_COMMENTS) >= THREAD_COMMENT_CHARS
    keep, dropped_roles = judge(blocks)
    assert not is_thread(blocks, keep) and dropped_roles == 1 << ROLE_COMMENTS
    text = extract(analyse(html, structure=True).marked.decode()).text
    assert "Council workers closed the coast road" in text
    assert "Engineers will inspect the sea defences" in text
    for _, post in THREAD_POSTS:
        assert post[:40] not in text


# A forum thread whose opening post lies outside the elements the replies are in (as on many
# XenForo and Discourse boards), with replies of a line or two in elements whose class says
# "comment". Kept outside the comments, the opening post is more than an article's worth of
# prose, so the page is no thread by its text alone; its address says it is one.
OPENING_POST = (
    "We are moving into a flat with a north facing kitchen this spring and I would like to keep "
    "herbs on the window sill all year round. Last time basil and coriander went leggy within a "
    "month and then died off, even though I watered them every other day and turned the pots. "
    "Is it the light, the watering, or should I give up on some herbs indoors and grow only the "
    "tough ones? Any advice on pots, soil or grow lights would be welcome, as would names of "
    "herbs that have done well for you on a window that never gets direct sun at any time.")
SHORT_REPLIES = (
    ("fern_and_fig", "Mint and chives shrug off a dark sill, basil never will without a lamp."),
    ("greenhands", "Water less: leggy and dying usually means soggy roots, not thirst."),
    ("ollie_p", "A cheap LED strip on a timer for twelve hours a day changed everything."),
    ("fern_and_fig", "Parsley did fine on my north window, coriander bolted every time."),
    ("windowbox", "Terracotta pots with a drainage hole, and never leave them in a saucer."),
    ("greenhands", "Buy supermarket basil, split the clump into four and pot each part."),
    ("ollie_p", "Thyme and rosemary hate wet feet, so let them dry out between waterings."),
    ("windowbox", "Turn the pots a quarter every few days or they lean towards the glass."),
)


def _forum_page() -> str:
    replies = "".join(
        f"<div class='comment'><div class='comment-meta'><a href='/u/{user}'>{user}</a> "
        f"<span>{n + 2} Mar</span></div><div class='comment-body'><p>{text}</p></div></div>"
        for n, (user, text) in enumerate(SHORT_REPLIES))
    return ("<html><head><title>Herbs on a north window</title></head><body>"
            "<nav><ul><li><a href='/'>Forums</a></li><li><a href='/new'>New posts</a></li>"
            "<li><a href='/login'>Log in</a></li></ul></nav>"
            f"<main><h1>Herbs on a north facing window sill?</h1><div class='first-post'>"
            f"<p>{OPENING_POST}</p></div><div class='replies'>{replies}</div></main>"
            "<footer><a href='/terms'>Terms and rules</a></footer></body></html>")


@pytest.mark.parametrize(("url", "thread"), [
    ("https://www.example-forum.com/threads/herbs-on-a-north-window.1231381/", True),
    ("https://community.example.org/t/herbs-on-a-north-window/931828", True),
    ("https://forum.example.net/viewtopic.php?f=20&t=487157", True),
    ("https://boards.example.com/index.php?topic=3", True),
    ("https://www.example.com/showthread.php?t=7481802", True),
    ("https://old.example.com/r/gardening/comments/1rku5x9/herbs/", True),
    # a Q&A page: its answers are posts already, the comments under them are not content
    ("https://gardening.example.com/questions/964/herbs-indoors", False),
    ("https://www.example.com/2024/03/herbs-on-a-north-window/", False),
    ("https://example.tumblr.com/post/29021369240/herbs", False),  # a blog's post, no thread
    ("https://www.example.com/talking-points/herbs", False),
    ("https://www.example.com/topical/herbs", False),
    ("", False),
    # malformed (an unclosed bracket, which urlsplit refuses): read as it is, no error
    ("http://[forum.example.com/threads/x.1/", True),
    ("http://[forum.example.com/2024/x/", False),
    ("https://user@forums.example.com/x", True),
])
def test_discussion_addresses(url: str, thread: bool) -> None:
    assert discussion_address(url) is thread


def test_a_thread_at_a_thread_address_keeps_its_short_replies() -> None:
    blocks = split_blocks(analyse(_forum_page(), structure=True).marked.decode())
    # By its text alone the page is an article with comments: the replies go.
    keep, _ = judge(blocks)
    assert not is_thread(blocks, keep)
    alone = extract_blocks(blocks).text
    assert OPENING_POST in alone
    assert not any(reply in alone for _, reply in SHORT_REPLIES)

    url = "https://forum.example.org/threads/herbs-on-a-north-window.48213/"
    comments = sum(block.chars for block in blocks if block.roles & 1 << ROLE_COMMENTS)
    assert DISCUSSION_COMMENT_CHARS <= comments < THREAD_COMMENT_CHARS
    assert is_thread(blocks, keep, discussion=True)
    text = extract_blocks(blocks, url=url).text
    assert OPENING_POST in text
    assert [reply for _, reply in SHORT_REPLIES if reply in text] == \
        [reply for _, reply in SHORT_REPLIES]
    for junk in ("New posts", "Log in", "Terms and rules"):
        assert junk not in text, junk
    # The posts' names and dates are short and linked: the rule adds none of them (the model
    # keeps the first, right after the opening post).
    lines = text.splitlines()
    assert [line for line in lines if line.endswith(" Mar")] == ["fern_and_fig 2 Mar"]
    # The same page at an article's address is judged by its text, as before.
    assert extract_blocks(blocks, url="https://news.example/herbs").text == alone


def test_the_page_address_reaches_the_judgement_in_every_path(
        tmp_path: Path, write_archive: ArchiveBuilder) -> None:
    thread_url = "https://forum.example.org/threads/herbs-on-a-north-window.48213/"
    article_url = "https://news.example/herbs-on-a-north-window"
    pages = [(thread_url, _forum_page()), (article_url, _forum_page())]
    reply = SHORT_REPLIES[0][1]
    # The library, the command line's pipeline, and the report's verdicts
    texts = {page.url: page.text for page in Deboiler(mode="content").fit(pages).transform(pages)}
    assert reply in texts[thread_url] and reply not in texts[article_url]
    source = _archive(tmp_path, write_archive, pages)
    clean([source], tmp_path / "out", Options(workers=1, format=OutputFormat.JSONL))
    lines = _jsonl(tmp_path / "out")
    assert reply in lines[thread_url]["text"] and reply not in lines[article_url]["text"]
    page = analyse(_forum_page(), structure=True)
    for url, kept in ((thread_url, True), (article_url, False)):
        annotated = annotate(page, None, Mode.CONTENT, load_model(), url)
        [line] = [line for line in annotated.lines if line.text == reply]
        assert (line.reason is None) is kept


def test_the_text_between_kept_blocks_of_the_core_stays() -> None:
    long_a = "Tailwind scans your templates for class names and writes the styles they use. " * 2
    long_b = "Run the build again whenever you add a template, or keep the watcher running. " * 2
    html = ("<html><body><nav><ul><li><a href='/'>Docs</a></li><li><a href='/b'>Blog</a></li>"
            "</ul></nav><main><div class='doc'>"
            f"<h1>Installation</h1><p>{long_a}</p>"
            "<h3>Install the plugin</h3>"  # a heading without links
            "<p>Install tailwindcss and the plugin with npm, then restart.</p>"  # 40+ characters
            "<div class='step'><p>npm run dev</p></div>"  # short, and no kept sibling
            "<p>Short, beside kept text.</p>"  # short, but a sibling of kept paragraphs
            "<div class='byline'>Written by the docs team, who keep this page up to date</div>"
            "<p><a href='/more'>Read the full guide to every framework we support</a></p>"
            f"<p>{long_b}</p>"
            "<p>Also after the last kept block, which no gap reaches.</p>"
            "</div></main><aside><p>Our sponsors make this documentation possible for all.</p>"
            "</aside></body></html>")
    blocks = split_blocks(analyse(html, structure=True).marked.decode())
    texts = [block.text for block in blocks]
    keep = [text in (long_a.strip(), long_b.strip()) for text in texts]
    assert sum(keep) == 2
    filled = dict(zip(texts, fill_core_gaps(blocks, keep), strict=True))
    assert filled["Install the plugin"]
    assert filled["Install tailwindcss and the plugin with npm, then restart."]
    assert filled["Short, beside kept text."]
    assert not filled["npm run dev"]
    assert not filled["Written by the docs team, who keep this page up to date"]  # a byline
    assert not filled["Read the full guide to every framework we support"]  # a link
    assert not filled["Also after the last kept block, which no gap reaches."]
    assert not filled["Installation"]  # before the first kept block
    assert not filled["Docs"]
    assert not filled["Our sponsors make this documentation possible for all."]
    # Nothing kept, nothing to fill; the list given back unchanged where nothing is added
    assert fill_core_gaps(blocks, [False] * len(blocks)) == [False] * len(blocks)
    every = [True] * len(blocks)
    assert fill_core_gaps(blocks, every) is every
    # Kept blocks without characters hold no core to fill (and no subtree of them is searched)
    empty = [Block("", 0, 0, 0, (1, 2)), Block("", 0, 0, 0, (1, 2)),
             Block("Text between two empty kept blocks, long.", 0, 36, 0, (1, 3)),
             Block("", 0, 0, 0, (1, 4))]
    assert fill_core_gaps(empty, [True, False, False, True]) == [True, False, False, True]


def test_html_source_shown_as_text_goes() -> None:
    story = ("The council will rebuild the harbour wall this summer, after two winters of storms "
             "left gaps that the sea now reaches at every spring tide.")
    prose = "Wrap the page in <header> and <main> elements, and close tags like <br /> yourself."
    html = ("<html><body><main>"
            f"<h1>Harbour wall to be rebuilt</h1><p>{story}</p><p>{escape(prose)}</p>"
            "<div class='republish'><h3>Republish this story</h3><textarea>"
            f'<h1>Harbour wall to be rebuilt</h1> <p class="byline">by Ann Reporter</p> '
            f'<p>{story}</p> <img src="https://pixel.example/p.gif" width="1" height="1">'
            "</textarea></div></main></body></html>")
    blocks = split_blocks(analyse(html, structure=True).marked.decode())
    keep_all = ContentModel((0.0,) * len(FEATURE_NAMES), 10.0, 0.5)
    result = extract_blocks(blocks, keep_all)
    lines = result.text.splitlines()
    assert story in lines and prose in lines
    assert not any("class=" in line for line in lines)
    assert result.removed.get(MARKUP_BLOCK) == 1
    source = next(block for block in blocks if "class=" in block.text)
    assert is_markup(source) and not is_markup(next(b for b in blocks if b.text == prose))
    # Code is code: the same source in a code block stays.
    coded = html.replace("<textarea>", "<pre><code>").replace("</textarea>", "</code></pre>")
    coded = coded.replace('<h1>Harbour wall to be rebuilt</h1> <p class', '&lt;h1&gt;Harbour wall '
                          'to be rebuilt&lt;/h1&gt; &lt;p class')
    code_blocks = split_blocks(analyse(coded, structure=True).marked.decode())
    assert MARKUP_BLOCK not in extract_blocks(code_blocks, keep_all).removed


# A shop's category page: a grid of products (name, a line about it, a price), no paragraph of
# prose anywhere; around it the shop's menu, filters and footer.
PRODUCTS = (
    ("Oak chopping board", "End grain, oiled, 40 x 30 cm", "£45.00"),
    ("Cast iron skillet", "Pre-seasoned, 26 cm, any hob", "£38.50"),
    ("Linen tea towels", "Set of three, stonewashed", "£19.00"),
    ("Enamel pie dish", "Speckled blue, 24 cm", "£16.00"),
    ("Copper measuring cups", "Four sizes on a ring", "£27.00"),
    ("Stoneware mixing bowl", "Cream glaze, 3 litres", "£32.00"),
    ("Beech rolling pin", "French style, tapered ends", "£14.50"),
    ("Glass storage jars", "Set of four with cork lids", "£24.00"),
)


def _listing_page() -> str:
    items = "".join(
        f"<li class='product'><a href='/p/{n}'><h3>{name}</h3></a><p>{line}</p>"
        f"<span class='price'>{price}</span></li>"
        for n, (name, line, price) in enumerate(PRODUCTS))
    menu = "".join(f"<li><a href='/c/{n}'>{name}</a></li>" for n, name in enumerate(
        ("Kitchen", "Dining", "Garden", "Bathroom", "Sale", "Gift cards")))
    return ("<html><head><title>Kitchenware</title></head><body>"
            f"<header><nav><ul>{menu}</ul></nav><a href='/basket'>Basket (0)</a></header>"
            "<div id='shop'><h1>Kitchenware</h1><div class='filters'>"
            "<a href='?sort=price'>Sort by price</a> <a href='?sort=new'>Newest first</a></div>"
            f"<ul class='products'>{items}</ul></div>"
            "<footer><a href='/delivery'>Delivery and returns</a> <a href='/contact'>Contact us"
            "</a> <a href='/privacy'>Privacy policy</a></footer></body></html>")


def test_a_listing_keeps_its_items_and_drops_the_menus() -> None:
    blocks = split_blocks(analyse(_listing_page(), structure=True).marked.decode())
    assert is_listing(blocks)
    kept = [b.text for b, ok in zip(blocks, judge(blocks)[0], strict=True) if ok]
    text = extract_blocks(blocks).text
    assert text == "\n".join(kept)
    for _, line, price in PRODUCTS:
        assert line in kept and price in kept, line
    # The names (links, the model's weakest signal) all but the last: the tail of a page scores
    # lowest.
    assert [name for name, _, _ in PRODUCTS if name in kept] == [n for n, _, _ in PRODUCTS][:-1]
    for junk in ("Garden", "Gift cards", "Basket", "Delivery and returns", "Privacy policy"):
        assert junk not in text, junk
    # At the model's own threshold no name stayed, and the last items' lines went too.
    alone = [b.text for b, ok in zip(blocks, select_blocks(blocks), strict=True) if ok]
    assert not any(name in alone for name, _, _ in PRODUCTS)
    assert PRODUCTS[-1][1] not in alone


STORIES = (
    ("Council approves the new bridge over the river", "2 hours ago"),
    ("Library opens its doors on Sundays from March", "3 hours ago"),
    ("Bus fares rise by ten pence next month", "5 hours ago"),
    ("School wins the county chess final again", "6 hours ago"),
    ("Farmers market moves to the old station yard", "8 hours ago"),
    ("Road works close the high street for a week", "9 hours ago"),
)
SECTIONS = ("News", "Sport", "Weather", "Business", "Opinion", "Contact")


def _cards_page(menu_class: str) -> str:
    """A news index: cards of a linked headline and a time, under a menu of the same shape."""
    cards = "".join(
        f"<div class='card'><div class='body'><a href='/s/{n}'><h3>{title}</h3></a>"
        f"<div class='time'>{when}</div></div></div>" for n, (title, when) in enumerate(STORIES))
    menu = "".join(f"<div class='entry'><div><a href='/c/{n}'>{name}</a></div></div>"
                   for n, name in enumerate(SECTIONS))
    return ("<html><head><title>Latest</title></head><body>"
            f"<div class='{menu_class}'>{menu}</div>"
            f"<div id='main'><h1>Latest news</h1><div class='cards'>{cards}</div></div>"
            "<div class='foot'><a href='/privacy'>Privacy</a> <a href='/terms'>Terms</a></div>"
            "</body></html>")


@pytest.mark.parametrize("menu_class", ["menu", "sections"])
def test_a_listing_keeps_its_linked_items_and_drops_its_menu(menu_class: str) -> None:
    blocks = split_blocks(analyse(_cards_page(menu_class), structure=True).marked.decode())
    assert is_listing(blocks)
    text = extract_blocks(blocks).text.splitlines()
    # Every headline stays (a list of cards of one shape, one of whose times the model kept);
    # the model alone, at the listing bar, kept none of them.
    assert text == ["Latest news", *(line for story in STORIES for line in story)]
    alone = load_model().keep_columns(feature_columns(blocks), blocks, LISTING_THRESHOLD)
    kept_alone = [b.text for b, ok in zip(blocks, alone, strict=True) if ok]
    assert not any(title in kept_alone for title, _ in STORIES)
    # The menu is a list of the same shape too, but the model kept none of it (with a neutral
    # class) or it is navigation (class "menu"): it goes either way.
    assert not set(SECTIONS) & set(text)


def test_keep_items_needs_a_kept_block_and_skips_navigation() -> None:
    blocks = split_blocks(analyse(_cards_page("sections"), structure=True).marked.decode())
    nothing = [False] * len(blocks)
    assert keep_items(blocks, nothing) == nothing
    # One kept entry of the menu makes it a list of items; inside a <nav> it stays dropped.
    first = [b.text == SECTIONS[0] for b in blocks]
    assert [b.text for b, ok in zip(blocks, keep_items(blocks, first), strict=True) if ok] == \
        list(SECTIONS)
    nav = _cards_page("sections").replace("<div class='sections'>", "<nav>").replace(
        "</div></div></div><div id='main'>", "</div></div></nav><div id='main'>")
    in_nav = split_blocks(analyse(nav, structure=True).marked.decode())
    first = [b.text == SECTIONS[0] for b in in_nav]
    assert keep_items(in_nav, first) == first


def test_a_page_with_prose_is_no_listing() -> None:
    # One paragraph of LISTING_PROSE_CHARS characters outside links makes a page prose; ARTICLE's
    # paragraphs are short, and the rule's cost shows there: its breadcrumb's last entry stays.
    short = split_blocks(analyse(ARTICLE, structure=True).marked.decode())
    assert is_listing(short)
    assert "Local" in extract_blocks(short).text
    assert "Local" not in [b.text for b, ok in zip(short, select_blocks(short), strict=True) if ok]
    longer = ARTICLE.replace("second closure this month.", "second closure this month, and "
                             "the fourth since the start of the year, which the council says "
                             "is the most it has recorded.")
    blocks = split_blocks(analyse(longer, structure=True).marked.decode())
    assert not is_listing(blocks)
    text = extract_blocks(blocks).text
    assert "Local" not in text and "the most it has recorded" in text


POSTS = (
    ("How we moved our build to a single machine",
     "Our nightly build used to spread over nine servers. This post walks through the profiling "
     "that showed most of the time went to copying files, and the cache that removed the "
     "copies, with the numbers from before and after the change."),
    ("A year of running our own mail server",
     "Twelve months ago we stopped paying for hosted mail. Here is what broke, what it cost in "
     "evenings and weekends, and why we would still make the same choice again next year, "
     "with the costs laid out month by month."),
    ("Why our tests run in random order now",
     "Hidden dependencies between tests hid three real bugs for a year. Shuffling the order on "
     "every run found them in a week; the seed printed on failure makes every run repeatable, "
     "and the bugs are fixed."),
    ("Notes from rewriting the search page",
     "The old search page made four requests before it showed anything. The new one makes one, "
     "renders on the server, and is twice as fast on the slow phones most of our readers use, "
     "which we measured for a month."),
    ("What we learned from a week without meetings",
     "We cancelled every recurring meeting for a week and wrote down what we missed. The list "
     "was short: two decisions waited a day longer, and nobody asked for the meetings back "
     "when the week was over."),
)


def _blog_index() -> list:
    """A blog's home page: a menu, then posts of a linked title and a summary of prose."""
    posts = "".join(f"<div class='entry'><h2><a href='/p/{n}'>{title}</a></h2><p>{summary}</p>"
                    f"<a href='/p/{n}'>Read more</a></div>"
                    for n, (title, summary) in enumerate(POSTS))
    menu = "".join(f"<li><a href='/c/{n}'>{name}</a></li>"
                   for n, name in enumerate(("Home", "Archive", "About", "Jobs")))
    html = (f"<html><head><title>Engineering blog</title></head><body><nav><ul>{menu}</ul></nav>"
            f"<div id='content'><h1>Engineering blog</h1><div class='entries'>{posts}</div></div>"
            "<footer><a href='/privacy'>Privacy</a> <a href='/rss'>RSS</a></footer></body></html>")
    return split_blocks(analyse(html, structure=True).marked.decode())


def test_a_list_of_posts_with_prose_keeps_every_title() -> None:
    blocks = _blog_index()
    assert not is_listing(blocks)  # the summaries are prose
    text = extract_blocks(blocks).text.splitlines()
    for title, summary in POSTS:
        assert title in text and summary in text, title
    for junk in ("Home", "Archive", "Jobs", "Privacy RSS"):
        assert junk not in text, junk
    # The model alone dropped the titles of the last posts (linked, near the page's end); the
    # posts hold the page's prose, so their list is its content and every title stays.
    alone = [b.text for b, ok in zip(blocks, select_blocks(blocks), strict=True) if ok]
    assert POSTS[-1][0] not in alone and POSTS[-1][1] in alone
    assert [b.text for b, ok in zip(blocks, keep_prose_items(blocks, select_blocks(blocks)),
                                    strict=True) if ok] == text


def _article_with_stories(paragraphs: list[str]) -> list:
    """An article, then four stories of the blog under it: a linked title and a summary."""
    stories = "".join(f"<div class='story'><h3><a href='/p/{n}'>{title}</a></h3><p>{summary}</p>"
                      "</div>" for n, (title, summary) in enumerate(POSTS[:4]))
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    html = ("<html><body><nav><a href='/'>Home</a> <a href='/blog'>Blog</a></nav><main><article>"
            f"<h1>The north pier reopens</h1>{body}</article>"
            f"<div class='more'><h2>More from the blog</h2>{stories}</div></main></body></html>")
    return split_blocks(analyse(html, structure=True).marked.decode())


def test_an_article_still_drops_the_titles_of_the_stories_under_it() -> None:
    p = COPY_PARAGRAPHS
    article = [" ".join(p), " ".join(p[1:] + p[:1]), " ".join(p[2:] + p[:2])]
    blocks = _article_with_stories(article)
    kept = [b.text for b, ok in zip(blocks, judge(blocks)[0], strict=True) if ok]
    assert all(paragraph in kept for paragraph in article)
    # The model kept three of the stories' summaries, but the article's paragraphs (1,200
    # characters, the longest text) hold the page's prose: the titles go.
    assert sum(summary in kept for _, summary in POSTS[:4]) >= PROSE_ITEMS_KEPT
    assert not any(title in kept for title, _ in POSTS[:4])
    # An article of one paragraph leaves less than PROSE_ITEMS_OUTSIDE characters of prose
    # beside the stories: they are taken for the page's list of posts (the rule's cost).
    short = _article_with_stories(article[:1])
    assert sum(b.chars - b.link_chars for b in short[2:3]) < PROSE_ITEMS_OUTSIDE
    kept = [b.text for b, ok in zip(short, judge(short)[0], strict=True) if ok]
    assert all(title in kept for title, _ in POSTS[:4])


def test_prose_items_skip_navigation_and_comments() -> None:
    blocks = _blog_index()
    keep = select_blocks(blocks)
    # The same page with its posts inside readers' comments: the comments rule's to judge.
    in_comments = [replace(b, roles=b.roles | 1 << ROLE_COMMENTS) if b.kind == 2 or
                   b.text in {s for _, s in POSTS} or b.text == "Read more" else b
                   for b in blocks]
    assert keep_prose_items(in_comments, keep) == keep
    assert keep_prose_items([], []) == []


def test_a_single_page_gets_its_main_content() -> None:
    page = analyse(ARTICLE, structure=True)
    result = extract(page.marked.decode())
    text = result.text
    assert "Council workers closed the coast road" in text
    assert "Engineers will inspect the sea defences" in text
    assert "safety of drivers" in text
    for junk in ("Cat rescued from tree", "Privacy", "Weather"):
        assert junk not in text, junk
    assert result.removed.get("link_dense_block", 0) >= 5


def test_the_model_ships_with_the_package() -> None:
    model = load_model()
    assert 0.0 < model.threshold < 1.0
    assert len(model.weights) == len(json.loads(
        (Path(__file__).parent.parent / "warcdeboil" / "page" / "content_model.json").read_text()
    )["features"])


def _archive(tmp_path: Path, write_archive: ArchiveBuilder,
             pages: list[tuple[str, str]]) -> Path:
    records = [warc_record("response", url, http_response(html.encode()))
               for url, html in pages]
    return write_archive(tmp_path / "in.warc.gz", records, Codec.GZIP)


def _jsonl(out: Path) -> dict[str, dict]:
    pages = {}
    for path in outputs_of(out, "**/*.jsonl*"):
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            for line in fh:
                obj = json.loads(line)
                pages[obj["url"]] = obj
    return pages


def test_jsonl_page_attributes(tmp_path: Path, write_archive: ArchiveBuilder) -> None:
    source = _archive(tmp_path, write_archive, [("https://news.example/storm", ARTICLE)])
    summary = clean([source], tmp_path / "out", Options(workers=1, format=OutputFormat.JSONL))
    page = _jsonl(tmp_path / "out")["https://news.example/storm"]
    blocks = sum(n for reason, n in page["removed"].items() if reason != "template_subtrees")
    assert summary.to_dict()["removed_blocks"] == blocks >= 5
    assert page["title"] == "Storm closes the coast road"
    assert page["description"] == "The coast road is shut after a storm."
    assert page["canonical_url"] == "https://news.example/storm"
    assert page["html_lang"] == "en" and page["language"] == "en"
    assert page["breadcrumbs"] == ["Home", "Local"]
    assert page["headings"][:2] == [
        {"level": 1, "text": "Storm closes the coast road"},  # nested <em> included
        {"level": 2, "text": "What residents can do"},
    ]
    assert ["Use the inland route through the town centre.",
            "Check the council's website before travelling."] in page["lists"]
    lines = page["text"].split("\n")
    # One block per line. (The fixture's paragraphs are all shorter than LISTING_PROSE_CHARS, so
    # the page is judged at the lower bar of a listing and its breadcrumb's "Local" is kept.)
    assert lines[:2] == ["Local", "Storm closes the coast road"]
    assert "Cat rescued from tree" not in page["text"]
    assert page["removed"]["template_subtrees"] == 0  # one page: nothing learned
    assert sum(page["removed"].values()) >= 5


def test_markdown_format(tmp_path: Path, write_archive: ArchiveBuilder) -> None:
    source = _archive(tmp_path, write_archive, [("https://news.example/storm", ARTICLE)])
    # Template mode keeps every block (the model drops this page's small table): all of the
    # structure is rendered.
    clean([source], tmp_path / "out",
          Options(workers=1, format=OutputFormat.MARKDOWN, mode=Mode.TEMPLATE))
    [path] = outputs_of(tmp_path / "out")
    assert path.name == "in.md.jsonl.gz"
    markdown = _jsonl(tmp_path / "out")["https://news.example/storm"]["markdown"]
    assert "\n# Storm closes the *coast* road\n" in markdown
    assert "\n## What residents can do\n" in markdown
    assert "\n- Use the inland route through the town centre.\n" in markdown
    assert "| Day | Tide |\n| --- | --- |\n| Tuesday | 5.1 m |" in markdown
    assert "**safety of drivers**" in markdown


def test_template_then_content_on_a_site(tmp_path: Path, write_archive: ArchiveBuilder) -> None:
    source = _archive(tmp_path, write_archive, site_pages("blog.example", 6))
    clean([source], tmp_path / "t", Options(workers=1, format=OutputFormat.JSONL,
                                            mode=Mode.TEMPLATE))
    clean([source], tmp_path / "c", Options(workers=1, format=OutputFormat.JSONL))
    template, content = _jsonl(tmp_path / "t"), _jsonl(tmp_path / "c")
    for url, page in content.items():
        assert page["removed"]["template_subtrees"] > 0
        assert "Second paragraph of story" in page["text"]
        assert "All rights reserved" not in page["text"]
        # Content is what template removal kept, less some blocks: never more.
        assert set(page["text"].split("\n")) <= set(template[url]["text"].split("\n"))


def test_content_mode_needs_a_text_format() -> None:
    with pytest.raises(ConfigError, match="--mode content writes text"):
        Options(format=OutputFormat.WARC, mode=Mode.CONTENT)
    result = CliRunner().invoke(app, ["clean", "x.warc", "-o", "out", "--mode", "content"])
    assert result.exit_code != 0
    assert "--mode content writes text" in result.output
    assert "Traceback" not in result.output


def test_api_content_mode() -> None:
    pages = [("https://news.example/storm", ARTICLE)]
    [page] = Deboiler(mode=Mode.CONTENT).fit_transform(pages)
    assert "Council workers" in page.text and "Most read" not in page.text
    [page] = Deboiler().fit_transform(pages)
    assert "Most read" in page.text  # template mode: nothing learned from one page


CHINESE = (
    "<html><body><div class='nav'><a href='/'>首页</a> <a href='/n'>新闻</a>"
    " <a href='/s'>体育</a> <a href='/e'>娱乐</a> <a href='/t'>科技</a></div>"
    "<div class='article'><h1>城市公园改造完成</h1>"
    "<p>经过一年的施工，市中心公园的改造工程于本周正式完成，新增了步行道、儿童游乐区和大片绿地，"
    "预计每天将吸引数千名市民前来休闲。</p><p>市园林局负责人表示，公园在改造期间保留了原有的古树，"
    "并增加了雨水收集系统，以减少夏季的用水量。</p></div>"
    "<div class='links'><a href='/1'>更多新闻</a> <a href='/2'>联系我们</a></div></body></html>"
)
ARABIC = (
    "<html dir='rtl' lang='ar'><body><nav><ul><li><a href='/'>الرئيسية</a></li>"
    "<li><a href='/a'>أخبار</a></li><li><a href='/b'>رياضة</a></li><li><a href='/c'>اقتصاد</a></li>"
    "<li><a href='/d'>ثقافة</a></li></ul></nav>"
    "<article><p>افتتحت المدينة اليوم مكتبة عامة جديدة تضم أكثر من "
    "عشرين ألف كتاب، وقاعات للقراءة والدراسة مفتوحة للجميع طوال أيام الأسبوع.</p>"
    "<p>وقال مدير المكتبة إن الهدف هو تشجيع الشباب على القراءة وتوفير مكان هادئ للتعلم.</p>"
    "</article></body></html>"
)


@pytest.mark.parametrize(("html", "kept", "dropped", "language"), [
    (CHINESE, "经过一年的施工", "联系我们", "zh"),
    (ARABIC, "افتتحت المدينة اليوم مكتبة عامة جديدة", "رياضة", "ar"),
])
def test_scripts_without_spaces_or_right_to_left(
    html: str, kept: str, dropped: str, language: str
) -> None:
    text = extract(analyse(html, structure=True).marked.decode()).text
    assert kept in text  # in logical order, untouched
    assert dropped not in text
    assert detect(text) == language


@pytest.mark.parametrize(("text", "language"), [
    ("O governo anunciou hoje que as escolas vão reabrir na próxima semana, mas com regras.", "pt"),
    ("Правительство объявило, что школы откроются на следующей неделе, но с новыми правилами.",
     "ru"),
    ("政府は来週から学校を再開すると発表しましたが、新しい規則が適用されます。", "ja"),
    ("정부는 다음 주에 학교가 다시 문을 열 것이라고 발표했습니다.", "ko"),
    ("Le gouvernement a annoncé que les écoles rouvriront la semaine prochaine, avec des règles.",
     "fr"),
    ("ok", ""),
    # Mixed scripts: the letters of the script with the most decide, digits and signs do not.
    ("Компания Apple представила новый iPhone 15 Pro, который поступит в продажу в пятницу.",
     "ru"),
    ("The Russian word мир is the name of the space station, and it means peace and world.",
     "en"),
    ("2024-05-17 12:30:45 +0200 № 123456 — 7 × 8 = 56 €, ½ ², 42 %, ok", ""),
])
def test_language_detection(text: str, language: str) -> None:
    assert detect(text) == language


def test_real_non_english_pages(tmp_path: Path) -> None:
    """Common Crawl pages in Chinese, Russian, Dutch, German… come out with text and language."""
    source = shared_file("warcs", "chatnoir-eu__chatnoir-resiliparse__warcfile.warc.gz")
    clean([source], tmp_path, Options(workers=1, format=OutputFormat.JSONL))
    pages = _jsonl(tmp_path)
    languages = [page["language"] for page in pages.values()]
    assert languages.count("zh") >= 5 and "ru" in languages and "de" in languages
    chinese = [p for p in pages.values() if p["language"] == "zh"]
    assert sum(1 for p in chinese if len(p["text"]) >= 100) >= 5


# Replies of a thread, each a name and one to three paragraphs (a post of one paragraph and one
# of three are items of one list: see content._shape).
REPLIES = (
    ("harbourwatch", POSTS[0][1:]),
    ("mooring_line", (POSTS[1][1], POSTS[2][1], POSTS[3][1])),
    ("south_quay", (POSTS[4][1], COPY_PARAGRAPHS[0])),
    ("tidetable", (COPY_PARAGRAPHS[1],)),
)


def _replies_page() -> list:
    replies = "".join(
        f"<div class='msg'><h4><a href='/u/{name}'>{name}</a></h4><div class='text'>"
        + "".join(f"<p>{p}</p>" for p in paragraphs) + "</div></div>"
        for name, paragraphs in REPLIES)
    html = ("<html><body><nav><a href='/'>Home</a> <a href='/forum'>Forum</a></nav><main>"
            f"<h1>The north pier reopens</h1><div class='thread'>{replies}</div></main>"
            "<footer><a href='/privacy'>Privacy</a></footer></body></html>")
    return split_blocks(analyse(html, structure=True).marked.decode())


def test_items_of_different_lengths_are_one_list() -> None:
    blocks = _replies_page()
    alone = [b.text for b, ok in zip(blocks, select_blocks(blocks), strict=True) if ok]
    kept = [b.text for b, ok in zip(blocks, judge(blocks)[0], strict=True) if ok]
    # The model alone dropped the last reply (its author's name and its paragraph, near the
    # page's end); the replies hold the page's prose, so their list is its content.
    assert REPLIES[-1][0] not in alone and REPLIES[-1][1][0] not in alone
    assert REPLIES[0][1][0] in alone
    for name, paragraphs in REPLIES:
        assert name in kept and all(p in kept for p in paragraphs), name
    assert "Home Forum" not in kept and "Privacy" not in kept


def _sections_page(teasers: bool) -> list:
    """A short article in one div of paragraphs, and beside it, in sibling divs, a list of
    dated headlines and a box of promotions: three children of one container, each a run of
    plain blocks at one depth."""
    article = "".join(f"<p>{p}</p>" for p in COPY_PARAGRAPHS)
    headlines = "".join(f"<br>January 15 <a href='/s/{n}'>{title}</a>"
                        for n, (title, _) in enumerate(POSTS))
    promos = ("<br>Win tickets<br>Enter our draw for two seats at the harbour festival this "
              "summer.<br>On the go<br>Read the news on your phone wherever you are.")
    more = f"<div class='latest'>{headlines}</div><div class='box'>{promos}</div>" \
        if teasers else ""
    html = ("<html><body><h1>The north pier reopens</h1><div id='page'><div class='story'>"
            f"{article}</div>{more}</div></body></html>")
    return split_blocks(analyse(html, structure=True).marked.decode())


def test_an_article_beside_lists_in_sibling_divs_is_no_list() -> None:
    # Runs of plain blocks fold to one block: such shapes must match whole, or the article's
    # div and the two boxes beside it would make a list of three items kept whole.
    blocks = _sections_page(teasers=True)
    keep = judge(blocks)[0]
    kept = [b.text for b, ok in zip(blocks, keep, strict=True) if ok]
    assert all(p in kept for p in COPY_PARAGRAPHS)
    assert not any(title in " ".join(kept) for title, _ in POSTS)
    assert "Win tickets" not in kept
    assert keep_prose_items(blocks, select_blocks(blocks)) == select_blocks(blocks)


SPECS = (
    ("Luxe Sateen", (("Feel", "Smooth and lustrous"), ("Fabric", "100% long-staple cotton"),
                     ("Thread count", "480"))),
    ("Classic Percale", (("Feel", "Crisp and cool"), ("Fabric", "100% long-staple cotton"),
                         ("Thread count", "270"))),
    ("Washed Linen", (("Feel", "Soft and airy"), ("Fabric", "100% European flax"),
                      ("Weight", "155 GSM"))),
    ("Organic Cotton", (("Feel", "Crisp and breathable"), ("Fabric", "100% organic cotton"),
                        ("Thread count", "300"))),
)
DESCRIPTION = (
    "Our sheets are woven from long-staple cotton and finished without harsh chemicals, so "
    "they soften with every wash. Each set is tested for harmful substances and certified, and "
    "comes with a year to try it at home.")


def _product_page(comment: bool, description: tuple[str, ...] = (DESCRIPTION,)) -> list:
    cards = "".join(
        f"<div class='card'><h4>{name}</h4>" + "".join(
            f"<div class='row'><div>{label}</div><div>{value}</div></div>"
            for label, value in rows) + "</div>"
        for name, rows in SPECS)
    menu = "".join(f"<div class='m'><a href='/c/{n}'>{x}</a> <a href='/d/{n}'>{x} sale</a></div>"
                   for n, x in enumerate(("Sheets", "Towels", "Duvets", "Pillows")))
    comments = ("<div class='comments'><p>Lovely sheets, I bought a second set for the guest "
                "room.</p></div>") if comment else ""
    paragraphs = "".join(f"<p>{p}</p>" for p in description)
    html = ("<html><body><nav><a href='/'>Home</a></nav><main><h1>Core sheet set</h1>"
            f"{paragraphs}<h2>Meet our sheets</h2><div class='cards'>{cards}</div>"
            f"<div class='menu'>{menu}</div>{comments}</main></body></html>")
    return split_blocks(analyse(html, structure=True).marked.decode())


def test_a_list_of_unlinked_items_the_model_dropped_is_kept() -> None:
    blocks = _product_page(comment=False)
    assert not is_listing(blocks)
    alone = [b.text for b, ok in zip(blocks, select_blocks(blocks), strict=True) if ok]
    kept = [b.text for b, ok in zip(blocks, judge(blocks)[0], strict=True) if ok]
    assert DESCRIPTION in alone and DESCRIPTION in kept
    # The model kept no line of the cards (short labels and values); they are outside links.
    assert sum(name in alone for name, _ in SPECS) < PROSE_ITEMS_KEPT
    for name, rows in SPECS:
        assert name in kept, name
        assert all(label in kept and value in kept for label, value in rows), name
    # A list of links of one shape (a menu) is no such list.
    assert not any(text.startswith(("Sheets", "Towels")) for text in kept)


def test_unlinked_items_wait_for_a_kept_block_on_a_page_with_comments() -> None:
    # With readers' comments on the page, such lists were search forms and help pop-ups: a
    # list the model kept nothing of goes, as before.
    blocks = [replace(b, roles=b.roles | 1 << ROLE_COMMENTS) if "guest room" in b.text else b
              for b in _product_page(comment=True)]
    keep = select_blocks(blocks)
    kept = [b.text for b, ok in zip(blocks, keep_prose_items(blocks, keep), strict=True) if ok]
    assert not any(name in kept for name, _ in SPECS)


def test_an_article_keeps_its_judgement_beside_unlinked_items() -> None:
    # The guard: a page whose prose (1,000 characters or more, in one parent) is an article is
    # not searched for lists; the cards under it go as the model judged them.
    p = COPY_PARAGRAPHS
    article = (" ".join(p), " ".join(p[1:] + p[:1]), " ".join(p[2:] + p[:2]))
    blocks = _product_page(comment=False, description=article)
    keep = select_blocks(blocks)
    assert keep_prose_items(blocks, keep) == keep
    kept = [b.text for b, ok in zip(blocks, judge(blocks)[0], strict=True) if ok]
    assert all(paragraph in kept for paragraph in article)
    assert not any(name in kept for name, _ in SPECS)


def test_a_repeated_heading_above_kept_text_stays() -> None:
    stories = "".join(f"<li><a href='/p/{n}'>{title}</a></li>" for n, (title, _) in
                      enumerate(POSTS))
    body = "".join(f"<p>{p}</p>" for p in COPY_PARAGRAPHS)
    html = ("<html><body><main><h1>The north pier reopens</h1><h2>About this story</h2>"
            f"{body}<h2>Related stories</h2><div class='related'><ul>{stories}</ul></div>"
            "</main></body></html>")
    blocks = split_blocks(analyse(html, structure=True).marked.decode())
    # The site repeats both headings on every page (as a shop repeats "Description").
    repeated = set(plain_block_digests(["About this story", "Related stories"]))
    keep = judge(blocks)[0]
    kept = {b.text for b, ok in zip(blocks, keep, strict=True) if ok}
    assert {"About this story", "Related stories"} <= kept  # the model kept both
    verdicts = dict(zip((b.text for b in blocks), block_verdicts(blocks, repeated=repeated),
                        strict=True))
    # The first titles the article's paragraphs, which follow it: it stays. The second is
    # followed by links the model dropped: the site's boilerplate, it goes.
    assert verdicts["About this story"] is None
    assert verdicts["Related stories"] == REPEATED_BLOCK
    assert all(verdicts[p] is None for p in COPY_PARAGRAPHS)
    text = extract_blocks(blocks, repeated=repeated).text.splitlines()
    assert text[:2] == ["The north pier reopens", "About this story"]
    # Without the site's repetition nothing changes.
    assert section_titles(blocks, keep, [False] * len(blocks)) == [False] * len(blocks)


def test_markdown_quotes_code_and_links() -> None:
    """Quotes and code come out as Markdown's; a link keeps its text, not its target; a
    character Markdown would read as emphasis is escaped."""
    html = ("<html><body><h1>Notes</h1><p>See <a href='https://x.example/y'>the guide</a> "
            "first.</p><blockquote>Measure twice.</blockquote><pre>x = 1</pre>"
            "<p>Then cut once, and mind the *stars* line.</p></body></html>")
    [page] = Deboiler().fit_transform([("https://n.example/a", html)])
    assert page.markdown == ("# Notes\n\nSee the guide first.\n\n> Measure twice.\n\n"
                             "```\nx = 1\n```\n\nThen cut once, and mind the \\*stars\\* line.\n")
