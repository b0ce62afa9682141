"""The compiled walks of pass 1 (warcdeboil/page/_walk.c) against the Python path, their oracle:
the same PageText, field for field, on generated HTML, on awkward pages and on every page of the
evaluation sets; and the checks that decide, at import, which path a process takes."""

from __future__ import annotations

import math
import os
import re
import struct
import subprocess
import sys

import pytest
from conftest import ROOT, shared_file
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from warcdeboil.page import content, dom, walker
from warcdeboil.page.html import html_page
from warcdeboil.warc.reader import iter_selected

WALKER = dom._WALKS.walker


def compiled() -> walker.Walker:
    """The compiled walker, as a process that may use it loads it (a fallback run, with
    WARCDEBOIL_PURE_PYTHON set, loads it here all the same); a skip where it was not built."""
    if WALKER is not None:
        return WALKER
    pytest.importorskip("warcdeboil.page._walk", reason="the C extension was not built")
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv(walker.PURE_PYTHON, raising=False)
        loaded = walker.load(dom._walk_kinds(), dom._walks_agree, dom._describe)
    assert loaded.walker is not None, loaded.status
    return loaded.walker


def same_both_ways(markup: str | bytes) -> dom.PageText:
    """The page as both paths analyse it, with and without structure marks, and what is read
    from its text; they must agree."""
    fast = compiled()
    for structure in (False, True):
        python = dom._analyse(markup, structure, None)
        assert dom._analyse(markup, structure, fast) == python
        same_from_the_text(python)
    return python


def test_a_built_extension_is_taken_unless_the_python_path_is_asked_for() -> None:
    pytest.importorskip("warcdeboil.page._walk", reason="the C extension was not built")
    if os.environ.get(walker.PURE_PYTHON):
        assert WALKER is None and walker.PURE_PYTHON in dom.walk_status()
    else:  # built, and it reads this selectolax's lexbor: a layout change would land here
        assert WALKER is not None, dom.walk_status()
        assert dom.walk_status() == "page walks in C (warcdeboil.page._walk)"


def test_the_python_path_is_taken_when_asked_for_or_when_the_walks_disagree(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(walker.PURE_PYTHON, "1")
    asked = walker.load(dom._walk_kinds(), lambda _: True, dom._describe)
    assert asked.walker is None and walker.PURE_PYTHON in asked.status
    monkeypatch.setenv(walker.PURE_PYTHON, "0")
    pytest.importorskip("warcdeboil.page._walk", reason="the C extension was not built")
    differing = walker.load(dom._walk_kinds(), lambda _: False, dom._describe)
    assert differing.walker is None and "differs" in differing.status
    agreeing = walker.load(dom._walk_kinds(), dom._walks_agree, dom._describe)
    assert agreeing.walker is not None


def test_a_process_without_the_extension_says_so_and_takes_the_python_path() -> None:
    # The compiled module hidden from the import: what a machine without a compiler has.
    script = (
        "import sys; sys.modules['warcdeboil.page._walk'] = None\n"
        "from warcdeboil.page import dom\n"
        "print(dom.walk_status())\n"
        "print(dom.analyse('<body><div><p>Hello</p></div></body>').marked.decode())\n"
    )
    env = {k: v for k, v in os.environ.items() if k != walker.PURE_PYTHON}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=ROOT, env=env, check=True)
    status, text = done.stdout.splitlines()
    assert status == "page walks in Python (the C extension was not built)"
    assert "Hello" in text


def test_the_check_page_exercises_every_kind_of_mark() -> None:
    page = same_both_ways(dom._WALK_CHECK_PAGE)
    structured = dom._analyse(dom._WALK_CHECK_PAGE, True, None).marked.decode()
    # every mark analyse() can make: candidate, line, structure and role marks, each role
    marks = {*dom.OPEN, *dom.CLOSE, *dom.LINE, dom.LINK_OPEN, dom.LINK_CLOSE, *dom.HEADINGS[:2],
             dom.ITEM, dom.CELL, dom.QUOTE, dom.CODE, dom.STRONG, dom.EMPHASIS,
             *dom.ROLE_OPEN, *dom.ROLE_CLOSE}
    assert marks - set(structured) == set()
    assert "Pick" not in structured and "inert" not in structured and "var x" not in structured
    assert len(page.hashes) > 5 and any(page.hashes) and any(page.slots)


@pytest.mark.parametrize("markup", [
    "",
    "<p>no body element written</p>",
    "<html><body></body></html>",
    "<body>\u00a0</body>",
    "<body> <p>\u2003 spaced \u3000</p>\x0b<p>\x1c</p> </body>",
    "<body><div>" * 3000 + "deep" + "</div>" * 3000 + "</body>",
    "<body>" + "<div></div>" * 2500 + "</body>",
    "<body><div class=\u212aip-link>Kelvin sign</div><nav class=MENU>Upper</nav></body>",
    "<body><div class='" + "x" * 2000 + " nav'>long class</div></body>",
    "<body><section role=navigation itemprop=articleBody>both</section>"
    "<div ROLE=main>upper-case name</div><div role>no value</div><div itemprop>x</div></body>",
    "<body><h2><a href='#a'>anchor</a> and <a href=/b>link</a></h2><h3><span><a href=#c>c</a>"
    "</span></h3></body>",
    "<body><select><div class=nav><div>in a list</div></div></select><div>after</div>"
    "<datalist><ul><li>x</li></ul></datalist><div>last</div></body>",
    "<body><template><div>inert<nav>x</nav></div></template><noscript><div class=menu>ns"
    "</div></noscript><iframe><div>raw</div></iframe><div>after</div></body>",
    "<body><svg><a href='#x'><text>svg</text></a><section class=sidebar>s</section></svg>"
    "<math><mi>x</mi></math></body>",
    "<body><a href=/t><div>Teaser</div><p>summary</p></a><table><tr><td>a<td>b</table></body>",
    "<body>text \ufdd0 with our \ufde1 marks in it<div>\ufdd1</div></body>",
    "<body><div id=comment-8812 class='comment reply'><div class='sharing share'>x</div></div>"
    "<div data-very-long-attribute-name-over-sixteen=1 class=widget>w</div></body>",
    b"<body><div>bytes \xe2\x80\x94 \xf0\x9f\x98\x80</div></body>",
])
def test_awkward_pages_give_the_same_page_both_ways(markup: str | bytes) -> None:
    same_both_ways(markup)


def test_text_that_is_not_utf8_goes_the_python_way() -> None:
    # lexbor passes bytes it cannot decode through: the C walk declines the page, and analyse
    # gives what the Python path gives (selectolax's replacement characters)
    markup = b"<body><div class=nav>ok</div><p>caf\xe9 \xed\xa0\x80 \xc0\xaf</p></body>"
    tree = dom._parse(markup)
    assert tree.body is not None
    assert compiled().text(tree.body.mem_id, b"", False) is None
    page = same_both_ways(markup)
    assert "\ufffd" in page.marked.decode()


TAGS = ["div", "p", "span", "a", "ul", "li", "nav", "aside", "section", "h1", "h3", "table",
        "tr", "td", "b", "em", "pre", "blockquote", "br", "select", "script", "template", "dl",
        "dt", "footer", "article", "figure", "figcaption", "form", "center", "details"]
ATTRS = ["", " class=nav", " class='post-content main'", " id=sidebar-3", " role=main",
         " role=complementary", " itemprop=articleBody", " href='#x'", " href=/y",
         " class=\u212aip", " id=Comments"]
TEXTS = ["", " ", "word", "Two words.", "\u00a0", "\u3000x\u3000", "&amp;", "\ufdd2", "a\tb",
         "\u00e9t\u00e9", "<!-- c -->"]


@st.composite
def html(draw: st.DrawFn, depth: int = 0) -> str:
    parts = []
    for _ in range(draw(st.integers(0, 4 if depth < 4 else 1))):
        if depth < 5 and draw(st.booleans()):
            tag = draw(st.sampled_from(TAGS))
            attrs = draw(st.sampled_from(ATTRS))
            inner = draw(html(depth + 1))
            closed = draw(st.booleans()) or tag in ("script", "template")
            parts.append(f"<{tag}{attrs}>{inner}" + (f"</{tag}>" if closed else ""))
        else:
            parts.append(draw(st.sampled_from(TEXTS)))
    return "".join(parts)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=html())
def test_generated_html_gives_the_same_page_both_ways(body: str) -> None:
    same_both_ways(f"<html><head><title>t</title></head><body>{body}</body></html>")


def python_block_texts(marked: bytes, inline_spaces: bool) -> list[bytes]:
    text = marked.decode("utf-8", "surrogatepass")
    if inline_spaces:
        text = dom.inline_as_spaces(text)
    return [" ".join(piece.split()).encode() for piece in dom._BLOCK_RUN.split(text)]


# Every mark, block and inline, every kind of whitespace str.split knows, and text.
MARKED_ALPHABET = [*(chr(c) for c in range(0xFDD0, 0xFDF0)), " ", "\t", "\n", "\x0b", "\x1c",
                   "\x85", "\u00a0", "\u2003", "\u3000", "\u200b", "a", "Z", "\u00e9", "\U0001f600",
                   "\ufffd", "."]


@settings(max_examples=400, deadline=None)
@given(text=st.lists(st.sampled_from(MARKED_ALPHABET), max_size=60).map("".join),
       inline_spaces=st.booleans())
def test_block_texts_are_the_python_split_both_ways(text: str, inline_spaces: bool) -> None:
    marked = text.encode()
    expected = python_block_texts(marked, inline_spaces)
    assert compiled().block_texts(marked, inline_spaces) == expected


@settings(max_examples=400, deadline=None)
@given(text=st.lists(st.sampled_from(MARKED_ALPHABET), max_size=60).map("".join),
       deepest=st.sampled_from([1, 2, content.MAX_ANCESTORS]))
def test_content_blocks_are_the_python_ones_both_ways(text: str, deepest: int) -> None:
    with_surrogate = text.replace("Z", "\udc80")  # a surrogatepass decode can hold one
    for marked in (text, with_surrogate):
        blocks = content._split_blocks(marked, deepest)
        assert compiled().split_blocks(marked, content.Block, deepest) == blocks
        same_judgement(blocks)


@settings(max_examples=300, deadline=None)
@given(text=st.lists(st.sampled_from(MARKED_ALPHABET), max_size=40).map("".join))
def test_structure_marks_go_as_the_python_path_takes_them_out(text: str) -> None:
    marked = text.encode()
    assert compiled().without_structure_marks(marked) == \
        dom._without_structure_marks(marked, None)


def test_block_texts_leave_what_is_not_utf8_to_python() -> None:
    assert compiled().block_texts(b"ok \xef\xb7\x90 caf\xe9", False) is None
    # an encoded surrogate (which surrogatepass lets through) is kept as it is
    assert compiled().block_texts(b"caf\xed\xa0\x80", False) is None
    assert dom._block_texts(b"ok \xef\xb7\x90 caf\xed\xa0\x80", compiled()) == [
        b"ok", b"caf\xed\xa0\x80"]


def doubles(columns: list[list[float]]) -> list[bytes]:
    """Columns of floats as their bytes: equal to the last bit, every NaN as one (which NaN an
    operation on two gives, its sign and payload, depends on the order of the operands in the
    processor's instruction, which numpy's vector loops choose; any NaN is "not kept")."""
    nan = float("nan")
    return [struct.pack(f"{len(column)}d", *(nan if math.isnan(v) else v for v in column))
            for column in columns]


def same_judgement(blocks: list[content.Block]) -> None:
    """Content mode's features and both stages' scores of the blocks, equal to the bit."""
    fast = compiled()
    python = content._feature_columns(blocks)
    assert doubles(fast.feature_columns(blocks, content._SENTENCE_END_CHARS,
                                        content.SHORT_BLOCK_CHARS)) == doubles(python)
    if not blocks:
        return
    model = content.load_model()
    scores = content._weighted_sum_python(python, model.weights, model.bias)
    assert doubles([fast.weighted_sum(python, model.weights, model.bias)]) == doubles([scores])
    context = content._context_columns(blocks, scores)
    assert doubles(fast.context_columns(blocks, scores, content.CONTEXT_WINDOW,
                                        content.CORE_SHARE, content.SCORE_CLIP)) == doubles(context)
    both = python + context
    assert doubles([fast.weighted_sum(both, model.context_weights, model.context_bias)]) == \
        doubles([content._weighted_sum_python(both, model.context_weights, model.context_bias)])


@settings(max_examples=300, deadline=None)
@given(columns=st.integers(1, 5).flatmap(lambda n: st.lists(
           st.lists(st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from([0.0, -0.0]),
                    min_size=n, max_size=n), min_size=1, max_size=6)),
       weights=st.lists(st.floats(allow_nan=True, allow_infinity=True) | st.just(0.0),
                        min_size=6, max_size=6),
       bias=st.floats(allow_nan=False, allow_infinity=False))
def test_weighted_sums_are_numpy_s_to_the_bit(
    columns: list[list[float]], weights: list[float], bias: float,
) -> None:
    used = tuple(weights[:len(columns)])
    assert doubles([compiled().weighted_sum(columns, used, bias)]) == \
        doubles([content._weighted_sum_python(columns, used, bias)])


def test_weighted_sums_of_other_columns_go_the_numpy_way() -> None:
    assert compiled().weighted_sum([[1, 2]], (0.5,), 1.0) is None  # ints
    assert compiled().weighted_sum([[1.0], [1.0, 2.0]], (0.5, 0.5), 1.0) is None  # lengths
    assert content._weighted_sum([[1, 2]], (0.5,), 1.0) == [1.5, 2.0]


def same_from_the_text(page: dom.PageText) -> None:
    """What the later steps read from a page's marked text, both ways: its signature, the slots
    a site would remove (all its own, and every other one), the blocks a site repeats."""
    fast = compiled()
    text = page.marked.decode("utf-8", "surrogatepass")
    blocks = content._split_blocks(text)
    assert fast.split_blocks(text, content.Block, content.MAX_ANCESTORS) == blocks
    same_judgement(blocks)
    assert fast.without_structure_marks(page.marked) == \
        dom._without_structure_marks(page.marked, None)
    signature = dom._page_signature(page, None)
    assert dom._page_signature(page, fast) == signature
    own = sorted(set(page.slots) - {0})
    for slots in (set(own), set(own[::2]), frozenset(own[1::2])):
        assert dom._doomed_slots(page, slots, fast) == dom._doomed_slots(page, slots, None)
    repeated = set(signature.texts[::3])
    if repeated:
        counted = dom.remove_repeated(text, repeated)[1]
        assert dom.count_repeated(page.marked, repeated) == counted == \
            dom.count_repeated(text, repeated)


def test_role_words_expand_to_the_strings_re_tries_in_its_order() -> None:
    assert walker.word_literals("shar(?:e|ing)") == ["share", "sharing"]
    assert walker.word_literals("most-?read") == ["most-read", "mostread"]
    for words in dom._ROLE_WORDS:
        for pattern in words:
            literals = walker.word_literals(pattern)
            assert all(re.fullmatch(pattern, word) for word in literals)
            # what re finds first at a place is the first of these that matches there
            for word in literals:
                assert re.match(pattern, word + "ing-x").group() == next(
                    w for w in literals if (word + "ing-x").startswith(w))
    for refused in ("a+b", "x{2}", "[ab]", "Nav", "caf\u00e9"):
        with pytest.raises(ValueError):
            walker.word_literals(refused)


# Pieces of class and id names: role words and their beginnings, overlapping words ("popular"
# then "article" in "popularticle"), digits, separators, upper case, non-ASCII (the Kelvin sign
# lowercases to k) and characters that are no word.
NAME_PIECES = ["nav", "NAV", "menu", "popul", "ar", "ticle", "share", "sharing", "shar", "most",
               "-", "read", "post", "body", "content", "main", "comment", "8812", "0", " ",
               "\t", "\x1c", "_", "tags", "meta", "\u212aip", "s", "kip", "\u00e9", "widget",
               "foot", "er", "story", "cookie", "x"]
name = st.lists(st.sampled_from(NAME_PIECES), max_size=8).map("".join)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tag=st.sampled_from(["div", "section", "aside", "nav", "ul", "p", "article", "span"]),
       class_=st.none() | name, id_=st.none() | name,
       aria=st.sampled_from(["", " role=navigation", " role=main", " role=Main", " role"]),
       itemprop=st.sampled_from(["", " itemprop=articleBody", " itemprop=articlebody"]))
def test_roles_and_slots_by_class_and_id_are_the_python_ones(
    tag: str, class_: str | None, id_: str | None, aria: str, itemprop: str,
) -> None:
    names = "".join(f" {attr}='{value}'" for attr, value in (("class", class_), ("id", id_))
                    if value is not None)
    same_both_ways(f"<body><{tag}{names}{aria}{itemprop}><p>Some text</p></{tag}></body>")


EVAL_SETS = ("dragnet", "scrapinghub", "l3s-gn1", "cleaneval", "cleanportaleval")


@pytest.mark.parametrize("name", EVAL_SETS)
def test_every_page_of_the_evaluation_sets_gives_the_same_page_both_ways(name: str) -> None:
    archive = shared_file("eval", f"{name}.warc.gz")
    fast = compiled()
    pages = 0
    for record in iter_selected(archive):
        page = html_page(record)
        if page is None:
            continue
        pages += 1
        for structure in (False, True):
            analysed = dom._analyse(page.markup, structure, None)
            assert dom._analyse(page.markup, structure, fast) == analysed, \
                (name, record.offset, structure)
            same_from_the_text(analysed)
    assert pages >= 50


def test_clean_says_which_walks_it_takes_under_verbose(tmp_path) -> None:
    crawl = ROOT / "fixtures" / "crawl"
    env = {k: v for k, v in os.environ.items() if k != walker.PURE_PYTHON}
    command = [sys.executable, "-m", "warcdeboil", "clean", str(crawl), "-o", str(tmp_path / "o"),
               "-j", "1", "-q", "-v"]
    with pytest.MonkeyPatch.context() as patch:  # what a process without the variable takes
        patch.delenv(walker.PURE_PYTHON, raising=False)
        status = walker.load(dom._walk_kinds(), dom._walks_agree, dom._describe).status
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=True)
    assert f"INFO warcdeboil.cli.clean: {status}" in done.stderr.splitlines()
    env[walker.PURE_PYTHON] = "1"
    done = subprocess.run([*command[:6], str(tmp_path / "p"), *command[7:]], capture_output=True,
                          text=True, env=env, check=True)
    assert ("INFO warcdeboil.cli.clean: page walks in Python (WARCDEBOIL_PURE_PYTHON is set)"
            in done.stderr.splitlines())
