"""One parse per page: hashing, marked text, removal from text and from HTML."""

from __future__ import annotations

import pytest
from xxhash import xxh3_64_intdigest

from warcdeboil.page import dom
from warcdeboil.page.dom import OPEN, analyse, clean_html, clean_text, page_signature


def hashes_of(html: str) -> list[int]:
    return [h for h in analyse(html).hashes if h]


def test_hash_is_stable_across_processes_and_versions() -> None:
    # Pinned: a change here invalidates every stored index and profile. The representation of
    # <div>Hello <b>world</b> </div> is its text nodes, stripped and joined by one space, between
    # the spaces that separate them from the div's own markers: b" Hello world ", hashed with
    # xxh3-64 seeded by xxh3-64 of the tag name.
    expected = xxh3_64_intdigest(b" Hello world ", xxh3_64_intdigest(b"div"))
    assert expected == 0x335CC3A72949FB56
    assert hashes_of("<body><div>Hello <b>world</b> </div></body>") == [expected]


def test_attributes_do_not_count() -> None:
    a = hashes_of('<body><nav class="x" id="1"><a href="/a">Home</a></nav></body>')
    b = hashes_of('<body><nav style="y"><a href="/b" rel="x">Home</a></nav></body>')
    assert a == b


@pytest.mark.parametrize(
    ("left", "right", "same"),
    [
        ("<div>ab c</div>", "<div>a bc</div>", False),
        ("<div>\n   Home\n</div>", "<div>Home</div>", True),
        ("<div>Home</div>", "<nav>Home</nav>", False),
        ("<div><p>a</p><p>b</p></div>", "<div><p>a b</p></div>", False),
        ("<div>x<script>var a=1;</script></div>", "<div>x<script>var a=2;</script></div>", True),
        ("<div>x<style>.a{}</style></div>", "<div>x</div>", True),
    ],
)
def test_representation(left: str, right: str, same: bool) -> None:
    assert (hashes_of(f"<body>{left}</body>") == hashes_of(f"<body>{right}</body>")) is same


def test_subtrees_without_text_hash_to_zero() -> None:
    page = analyse("<body><div><img src=a.png></div><div>  </div><div>x</div></body>")
    assert [h == 0 for h in page.hashes] == [True, True, False]


@pytest.mark.parametrize("structure", [False, True])
def test_pages_with_many_candidates_find_the_empty_ones_alike(
    structure: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Past MANY_CANDIDATES, subtrees without text are found by counting the stretches between
    # marks (nested empty subtrees made the other way quadratic): both ways give equal hashes.
    html = ("<body><section class=sidebar><div><img src=a.png></div><div> <p> </p> </div>"
            "<div><p>x</p></div></section>" + "<div class=comment><p>re</p><p> </p>" * 40
            + "</div>" * 20 + "<ul><li><a href=/>A</a></li><li> </li></ul><div> y </div></body>")
    few = analyse(html, structure=structure)
    monkeypatch.setattr(dom, "MANY_CANDIDATES", 0)
    many = analyse(html, structure=structure)
    assert many.hashes == few.hashes and many.spans == few.spans
    assert 0 in few.hashes and sum(h != 0 for h in few.hashes) > 40


def test_deeply_nested_empty_subtrees() -> None:
    depth = 3 * dom.MANY_CANDIDATES
    page = analyse("<body>" + "<div>" * depth + "</body>")
    assert len(page.hashes) == depth and not any(page.hashes)
    page = analyse("<body>" + "<div> x" * depth + "</body>")
    assert all(page.hashes) and len(set(page.hashes)) == depth


def test_removal_of_nested_candidates() -> None:
    html = ("<body><div><nav>Menu</nav><ul><li>A</li></ul></div><div>Story</div>"
            "<div>Tail</div></body>")
    page = analyse(html)
    outer, nav, ul = page.hashes[0], page.hashes[1], page.hashes[2]
    assert clean_text(page, {nav}).text == "A\nStory\nTail"
    assert clean_text(page, {outer, nav, ul}).text == "Story\nTail"
    assert clean_text(page, {outer, nav, ul}).removed == 3
    cleaned = clean_html(html, page, {outer, nav, ul})
    assert "Menu" not in cleaned and "Story" in cleaned and "<ul>" not in cleaned


def test_text_after_script_and_in_forms_is_kept() -> None:
    html = ("<body><p>before</p><script>var x = '<p>no</p>';</script><p>after script</p>"
            "<form id='aspnetForm'><div><p>Article inside a form.</p></div></form></body>")
    assert clean_text(analyse(html), set()).text == "before\nafter script\nArticle inside a form."


# Content that is not text of the page. The parser keeps what is inside iframes, noframes and
# noembed as raw text, markup and all, which no browser shows; a select or datalist lists options.
_NOT_TEXT_CASES = [
    ("<body><p>before</p><iframe src='/ad'><a href='/click'><img src='/ad.gif'></a>"
     "</iframe><p>between</p><noframes><p>Your browser does not support frames.</p>"
     "</noframes><noembed>No plugin.</noembed><div>after</div></body>",
     "before\nbetween\nafter"),
    ("<body><p>Where do you live?</p><form><label>Country <select name='c'>"
     "<option>Albania<option selected>Belgium<optgroup label='C'><option>Chad</optgroup>"
     "</select></label> then send.<input list='d'><datalist id='d'><option value='x'>Ex"
     "</datalist></form><p>after</p></body>",
     "Where do you live?\nCountry then send.\nafter"),
]


@pytest.mark.parametrize("structure", [False, True])
@pytest.mark.parametrize(("html", "expected"), _NOT_TEXT_CASES, ids=["frames", "form-lists"])
def test_fallbacks_and_form_options_are_not_text(structure: bool, html: str, expected: str) -> None:
    assert clean_text(analyse(html, structure=structure), set()).text == expected


@pytest.mark.parametrize("structure", [False, True])
def test_elements_inside_form_lists_do_not_shift_the_candidates(structure: bool) -> None:
    # The parser builds elements inside a <select> (customizable select) and a <datalist>. Their
    # text goes, and so must their candidates: were their marks lost with them, every candidate
    # after would take its predecessor's hash, and WARC output would cut the wrong subtree.
    plain = "<body><div>menu one two three</div><aside>the sidebar</aside><p>article</p></body>"
    nested = ("<body><select><option>x</option><div>inside a select</div></select>"
              "<datalist><div>inside a datalist</div></datalist>"
              "<div>menu one two three</div><aside>the sidebar</aside><p>article</p></body>")
    page = analyse(nested, structure=structure)
    expected = analyse(plain, structure=structure)
    assert list(page.hashes) == list(expected.hashes)
    template = {page.hashes[0]}  # the menu <div>
    assert clean_text(page, template).text == "the sidebar\narticle"
    cleaned = clean_html(nested, page, template)
    assert "menu one" not in cleaned
    assert "inside a select" in cleaned and "the sidebar" in cleaned  # the form stays in HTML


@pytest.mark.parametrize("structure", [False, True])
def test_text_before_a_block_element_is_a_line_of_its_own(structure: bool) -> None:
    # Text right before a paragraph (or a heading, <center>, <blockquote> ...) in the same parent
    # is a line of its own, as a browser shows it, not the start of the paragraph.
    html = ("<body><div>Posted by Bob<p>First paragraph.<p>Second one.</div>"
            "<table><tr><td>Intro<h2>Heading</h2>left<center>centered</center>right"
            "<blockquote>quoted</blockquote></td></tr></table></body>")
    text = clean_text(analyse(html, structure=structure), set()).text
    assert text.splitlines() == ["Posted by Bob", "First paragraph.", "Second one.", "Intro",
                                 "Heading", "left", "centered", "right", "quoted"]


def test_text_keeps_block_structure() -> None:
    html = ("<body><h1>Title</h1><p>One <a href='#'>link</a> here.</p>"
            "<ul><li>first</li><li>second</li></ul>line<br>break"
            "<table><tr><td>a</td><td>b</td></tr></table><div>x</div><div>y</div></body>")
    assert clean_text(analyse(html), set()).text.split("\n") == [
        "Title", "One link here.", "first", "second", "line", "break", "a b", "x", "y",
    ]


def test_cleaned_html_keeps_scripts_and_declares_utf8() -> None:
    html = ("<html><head><meta charset='windows-1252'><script>var a=1;</script></head>"
            "<body><nav>Menu</nav><p>Text</p><script>track()</script></body></html>")
    page = analyse(html)
    cleaned = clean_html(html, page, {page.hashes[0]})
    assert "track()" in cleaned and "var a=1;" in cleaned
    assert 'charset="utf-8"' in cleaned
    assert "Menu" not in cleaned
    assert "__" not in cleaned  # no internal attributes leak


def test_every_charset_declaration_says_utf8() -> None:
    """Upper-case names, http-equiv in any case, a <meta> with both (its charset is set first,
    its content added after), one in the body; other attributes stay as they were."""
    html = ('<html><head><META CHARSET=latin1><meta http-equiv=Content-Type '
            'content="text/html; charset=iso-8859-1"><meta charset=x http-equiv=content-type>'
            '<meta name=viewport content=width></head><body><meta charset=q><p>hi</p></body>'
            '</html>')
    assert clean_html(html, analyse(html), set()) == (
        '<html><head><meta charset="utf-8"><meta http-equiv="Content-Type" '
        'content="text/html; charset=utf-8"><meta charset="utf-8" http-equiv="content-type" '
        'content="text/html; charset=utf-8"><meta name="viewport" content="width"></head>'
        '<body><meta charset="utf-8"><p>hi</p></body></html>'
    )


def test_pages_that_contain_our_markers_are_still_right() -> None:
    html = f"<body><div>odd {OPEN} text</div><div>two</div></body>"
    page = analyse(html)
    assert len(page.hashes) == 2
    assert clean_text(page, {page.hashes[1]}).text == "odd text"


@pytest.mark.parametrize(("before", "mark", "text"), [
    ("", OPEN, "odd text"),
    ("\uff0c", OPEN, "odd \uff0c text"),  # another character whose UTF-8 starts EF, first
    ("\ufeff\uff0c", dom.LINE, "odd \ufeff\uff0c text"),
    ("\uff0c", "", "odd \uff0c text"),  # EF bytes, no marker
])
def test_utf8_pages_that_contain_our_markers_are_still_right(
    before: str, mark: str, text: str
) -> None:
    html = f"<body><div>odd {before}{mark} text</div><div>two</div></body>".encode()
    page = analyse(html)
    assert len(page.hashes) == 2
    assert clean_text(page, {page.hashes[1]}).text == text


def test_page_signature_blocks_are_long_text_only() -> None:
    long = "This paragraph is certainly longer than forty characters in all."
    sig = page_signature(analyse(f"<body><p>short</p><p>{long}</p><p>{long}</p></body>"))
    assert len(sig.blocks) == 1
    assert list(sig.block_sizes) == [len(long)]


def test_role_marks_stay_out_of_the_candidate_hashes() -> None:
    # With structure, a class word ("comments") and a tag (<aside>) put role marks in the text;
    # the candidates hash the same as without them, so attributes still do not count.
    marked = '<body><div class="comments"><p>First!</p></div><aside><p>Ad</p></aside></body>'
    plain = "<body><div><p>First!</p></div><section><p>Ad</p></section></body>"
    structured = analyse(marked, structure=True)
    assert "\ufde1" in structured.marked.decode()  # the comments role opens
    assert structured.hashes[0] == analyse(plain, structure=True).hashes[0]
    assert structured.hashes[0] != 0


def test_an_unclosed_title_does_not_swallow_the_page() -> None:
    # Without </title>, HTML5 reads the rest of the document as the title (a page of the l3s-gn1
    # set came out empty); the title ends at the next tag instead, as browsers used to end it.
    story = " ".join(["The minister said the plan would go ahead next week."] * 30)
    page = (f"<html><head><title>Plan goes ahead<script>var x = 1;</script></head>"
            f"<body><div><p>{story}</p></div></body></html>")
    for markup in (page, page.encode()):
        text = analyse(markup)
        assert text.title == "Plan goes ahead"
        assert story in text.marked.decode()
        html = clean_html(markup, text, set())
        assert "<title>Plan goes ahead</title>" in html and story in html
    # A long title that is closed is left alone.
    closed = f"<html><head><title>{story}</title></head><body><p>x</p></body></html>"
    assert analyse(closed).title == story


def test_mark_inserts_take_selectolax_bytes_version() -> None:
    # A Cython fused method picks its version by the argument's type at every call; analyse
    # calls the bytes version itself. A method without versions is used as it is.
    def plain(node: object, value: bytes) -> None:
        """No versions."""

    def for_bytes(node: object, value: bytes) -> None:
        """The bytes version."""

    def fused(node: object, value: object) -> None:
        """Chooses."""

    fused.__signatures__ = {"str": plain, "bytes": for_bytes}  # type: ignore[attr-defined]
    assert dom._for_bytes(fused) is for_bytes
    assert dom._for_bytes(plain) is plain
    # On the selectolax installed, the inserts are its bytes versions, and insert text.
    from selectolax.lexbor import LexborHTMLParser, LexborNode

    versions = LexborNode.insert_before.__signatures__
    assert dom._INSERT_BEFORE is versions["bytes"]
    tree = LexborHTMLParser("<p>text</p>")
    paragraph = tree.css_first("p")
    dom._INSERT_BEFORE(paragraph, OPEN.encode())
    dom._INSERT_AFTER(paragraph, dom.CLOSE.encode())
    assert tree.body.text() == f"{OPEN}text{dom.CLOSE}"


@pytest.mark.parametrize(("marked", "start"), [
    # The first of the longest blocks, by its byte offset; inline marks (links) do not end one.
    (f"ab{OPEN}cdef{dom.LINE}cdef{OPEN}x", 5),
    (f"{OPEN}{dom.LINE}a{dom.LINK_OPEN}bc{dom.LINK_CLOSE}d", 6),
    (f"a{OPEN}é", 4),  # bytes, not characters: "é" is two
    (f"{OPEN}{dom.LINE}", -1),  # no text at all
    ("", -1),
])
def test_longest_block_is_the_first_of_the_longest(marked: str, start: int) -> None:
    assert dom._longest_block(marked.encode()) == start


def test_repeated_elements_are_judged_on_their_text_after_removals() -> None:
    """Block elements go innermost first, each judged on the text it has left: an item that
    only became a repeated block once its paragraph went goes too; one that was a repeated
    block before its paragraph went, and is not after, stays."""
    html = ("<html><body><ul><li>More <p>Share this</p></li><li>Keep <p>Share this</p></li>"
            "<li>Stay</li></ul></body></html>")
    repeated = {dom.block_digest(text) for text in ("More", "Share this", "Keep Share this")}
    cleaned = clean_html(html, analyse(html), set(), repeated)
    assert "Share this" not in cleaned and "More" not in cleaned
    assert "<li>Keep </li>" in cleaned and "<li>Stay</li>" in cleaned
