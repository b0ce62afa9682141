"""Template slots: the places a site's pages name as comments, sidebars and navigation, learned
from URL-neighbour pairs and removed whatever they hold; and the role marks behind them."""

from __future__ import annotations

import re
from pathlib import Path

from warcdeboil.api import Deboiler
from warcdeboil.page import dom
from warcdeboil.page.content import (
    CONTEXT_FEATURE_NAMES,
    FEATURE_NAMES,
    context_columns,
    feature_columns,
    load_model,
    split_blocks,
)
from warcdeboil.page.dom import (
    ROLE_ASIDE,
    ROLE_CHROME,
    ROLE_COMMENTS,
    ROLE_MAIN,
    ROLE_META,
    ROLE_OPEN,
    analyse,
    clean_html,
    page_signature,
    remove_template,
)
from warcdeboil.site.clean import Mode
from warcdeboil.site.fit import FitParams, fit_site
from warcdeboil.site.pagestore import PageEntry, PageStoreWriter, iter_page_store

STORY = ("The council said the new bridge would open in the spring after two years of work on "
         "its foundations, and that buses would use it first while the old one is repaired.")


def news_page(i: int, *, related: str = "div class='related-stories'", wrap: str = "") -> str:
    """A page of one site: its own article, a per-page related list and comments in slots that
    every page has, a site-wide nav."""
    related_items = "".join(f"<li><a href='/s{i}{j}'>Other story {i}.{j} of the day</a></li>"
                            for j in range(3))
    comments = "".join(f"<li class='comment' id='comment-{100 * i + j}'><p>Reader {j} on "
                       f"story {i}: I disagree with point {j}.</p></li>" for j in range(2))
    article = f"<article><h1>Bridge {i}</h1><p>{STORY} Story {i}.</p></article>"
    if wrap:
        article = f"<{wrap}>{article}</div>"
    tag = related.split()[0]
    return (
        f"<html><head><title>Bridge {i}</title></head><body>"
        "<nav class='top-menu'><a href='/'>Home</a> <a href='/news'>News</a></nav>"
        f"{article}"
        f"<{related}><h3>Related</h3><ul>{related_items}</ul></{tag}>"
        f"<ol class='commentlist'>{comments}</ol>"
        "</body></html>"
    )


def test_role_marks_name_what_the_page_says_its_parts_are() -> None:
    page = analyse(news_page(1), structure=True)
    roles = {b.text: b.roles for b in split_blocks(page.marked.decode())}
    assert roles["Home News"] == 1 << ROLE_CHROME
    assert roles["Related"] == 1 << ROLE_ASIDE
    assert roles["Reader 0 on story 1: I disagree with point 0."] == 1 << ROLE_COMMENTS
    assert roles["Bridge 1"] == 1 << ROLE_MAIN
    meta = analyse("<body><div class='byline'><p>By A. Writer</p></div></body>", structure=True)
    assert split_blocks(meta.marked.decode())[0].roles == 1 << ROLE_META
    # One slot digest per opening role mark; meta and main are never template (digest 0).
    opens = sum(page.marked.decode().count(mark) for mark in ROLE_OPEN)
    assert len(page.slots) == opens
    assert sum(1 for digest in page.slots if digest == 0) >= 1  # the <article>


def test_an_element_with_class_id_and_role_is_marked_once() -> None:
    # A selector list returns an element once per selector it matches: each got marks of its own.
    page = analyse("<body><div class='sidebar' id='side' role='complementary'><p>Latest</p></div>"
                   "<p>Story</p></body>")
    assert page.marked.decode().count(ROLE_OPEN[ROLE_ASIDE]) == 1
    assert len(page.slots) == 1


# Every form of every role word (the words with an optional part spelled out).
_WORD_FORMS = [w for ws in dom._ROLE_WORDS for w in ws if w.isalpha()] + [
    "share", "sharing", "mostread", "most-read", "postbody", "post-body", "postcontent",
    "post-content", "maincontent", "main-content",
]


def test_role_words_grouped_by_first_letter_match_as_the_plain_alternation() -> None:
    # The grouped expression must find the same words, hence the same roles, as one alternation
    # of each role's words in a group: for every word, and every pair run together or apart.
    plain = re.compile("|".join(f"({'|'.join(words)})" for words in dom._ROLE_WORDS))
    assert len(_WORD_FORMS) == sum(map(len, dom._ROLE_WORDS)) + 5
    names = [*_WORD_FORMS, *(f"{a}{sep}{b}" for a in _WORD_FORMS for b in _WORD_FORMS
                             for sep in ("", "-", " "))]
    for name in names:
        expected = 0
        for match in plain.finditer(name):
            expected |= 1 << (match.lastindex or 1) - 1
        assert dom._describe("div", name, None)[0] == expected, name


def test_slot_digest_ignores_numbers_and_content() -> None:
    a, b = analyse(news_page(1)), analyse(news_page(2))
    # Comment ids differ by number only; lists differ in content: the same slots on both pages.
    assert page_signature(a).slots == page_signature(b).slots
    assert len(page_signature(a).slots) >= 3  # nav, related list, comment list (and comments)


def test_pairs_teach_slots_and_removal_keeps_the_article() -> None:
    pages = [(f"http://news.example/story/{i}", news_page(i)) for i in range(4)]
    model = Deboiler(mode=Mode.TEMPLATE).fit(pages)
    profile = model.profiles_["news.example"]
    assert profile.template_slots
    for cleaned in model.transform(pages, html=True):
        assert STORY in cleaned.text
        assert "Other story" not in cleaned.text  # per-page list, shared slot
        assert "Reader 0" not in cleaned.text  # comments
        assert "Home" not in cleaned.text
        assert cleaned.removed_slots >= 3
        assert cleaned.html is not None
        assert STORY in cleaned.html and "Other story" not in cleaned.html
        assert "Reader 0" not in cleaned.html and "data-warcdeboil" not in cleaned.html


def test_one_page_teaches_no_slot() -> None:
    pages = [("http://lonely.example/a", news_page(1))]
    cleaned = Deboiler(mode=Mode.TEMPLATE).fit_transform(pages)[0]
    assert "Other story" in cleaned.text and cleaned.removed_slots == 0


def test_a_slot_holding_the_article_stays() -> None:
    # Blogger wraps every post in <div class="widget Blog">: "widget" is an aside word, but an
    # element holding what the page calls its article is never template.
    pages = [(f"http://blog.example/{i}", news_page(i, wrap="div class='widget Blog'"))
             for i in range(3)]
    for cleaned in Deboiler().fit_transform(pages):
        assert STORY in cleaned.text
        assert "Other story" not in cleaned.text


def test_a_slot_holding_the_longest_block_stays() -> None:
    # A sidebar-named element that holds the page's longest paragraph is the page, misnamed.
    def page(i: int) -> str:
        links = "".join(f"<li><a href='/{j}'>Section {j}</a></li>" for j in range(40))
        return (f"<html><body><nav class='menu'><ul><li><a href='/'>Home</a></li>{links}</ul></nav>"
                f"<div class='sidebar-layout'><p>{STORY} Number {i}.</p></div>"
                f"<div class='sidebar'><p>Archive {i}</p></div></body></html>")
    pages = [(f"http://misnamed.example/{i}", page(i)) for i in range(3)]
    for cleaned in Deboiler().fit_transform(pages):
        assert STORY in cleaned.text
        assert "Archive" not in cleaned.text and "Home" not in cleaned.text


def test_slot_and_subtree_removal_nest_in_html() -> None:
    # The nav is both a template subtree (same text on every page) and a slot; the related list
    # is a slot holding a candidate: every removal happens once, innermost first.
    texts = [analyse(news_page(i)) for i in range(3)]
    profile = fit_site("news.example", map(page_signature, texts), FitParams())
    html = clean_html(news_page(1), texts[1], profile.template, (), profile.template_slots)
    assert STORY in html and "Home" not in html and "Other story" not in html
    removal = remove_template(texts[1], profile.template, profile.template_slots)
    assert removal.slots >= 3 and STORY.encode() in removal.marked


def test_page_store_round_trip_keeps_slots(tmp_path: Path) -> None:
    page = analyse(news_page(3), structure=True)
    entry = PageEntry(4, 1000, 2000, "http://news.example/3", "<urn:uuid:x>", "2026-01-01",
                      "utf-8", 1234, page)
    path = tmp_path / "f000001.pages"
    with PageStoreWriter(path) as writer:
        writer.add(entry)
    (read,) = list(iter_page_store(path))
    assert read == entry
    assert read.page.slots == page.slots and len(page.slots) > 0
    assert read.page.owners == page.owners and len(page.owners) == len(page.slots)


def test_second_stage_reads_the_first_stage_scores() -> None:
    model = load_model()
    assert len(model.weights) == len(FEATURE_NAMES)
    assert len(model.context_weights) == len(FEATURE_NAMES) + len(CONTEXT_FEATURE_NAMES)
    blocks = split_blocks(analyse(news_page(2), structure=True).marked.decode())
    columns = feature_columns(blocks)
    scores = model.first_scores(columns)
    context = context_columns(blocks, scores)
    assert len(context) == len(CONTEXT_FEATURE_NAMES)
    assert all(len(column) == len(blocks) for column in context)
    # A block between two confident neighbours sees them; the first block has none before it.
    assert context[1][0] == 0.0 and context[2][-1] == 0.0
    # Probabilities and shares of what was kept lie in [0, 1].
    assert all(-1e-9 <= v <= 1.0 + 1e-9 for column in context[1:] for v in column)
    kept = [b.text for b, ok in zip(blocks, model.keep_columns(columns, blocks), strict=True)
            if ok]
    assert any(STORY[:40] in text for text in kept)
    assert not any(text.startswith("Reader") for text in kept)
