"""Hashing, removal and text extraction on the parsed DOM."""

from __future__ import annotations

import pytest

from warcdeboil.dom import candidate_hashes, extract_text, page_signature, parse_html, remove_subtrees


def hashes_of(html: str) -> list[int]:
    return [h for h in candidate_hashes(parse_html(html))[1] if h]


def test_hash_is_stable_across_processes_and_versions() -> None:
    # Pinned: a change here invalidates every stored index and profile. The representation is
    # tag, U+001E, then the stripped text nodes joined by one space; the hash is xxh3-64 of it.
    assert hashes_of("<body><div>Hello <b>world</b> </div></body>") == [0x405996D5669D327D]


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
        ("<div>x<script>var a=1;</script></div>", "<div>x<script>var a=2;</script></div>", True),
        ("<div>x<style>.a{}</style></div>", "<div>x</div>", True),
    ],
)
def test_representation(left: str, right: str, same: bool) -> None:
    assert (hashes_of(f"<body>{left}</body>") == hashes_of(f"<body>{right}</body>")) is same


def test_subtrees_without_text_are_not_candidates() -> None:
    assert hashes_of("<body><div><img src=a.png></div><div>  </div></body>") == []


def test_remove_subtrees_removes_nested_matches_safely() -> None:
    html = "<body><div><nav>Menu</nav><ul><li>A</li></ul></div><div>Story</div></body>"
    tree = parse_html(html)
    nodes, hashes = candidate_hashes(tree)
    outer, nav, ul = hashes[0], hashes[1], hashes[2]
    assert remove_subtrees(tree, {outer, nav, ul}) == 3
    assert extract_text(tree) == "Story"


def test_text_after_script_and_in_forms_is_kept() -> None:
    html = ("<body><p>before</p><script>var x = '<p>no</p>';</script><p>after script</p>"
            "<form id='aspnetForm'><div><p>Article inside a form.</p></div></form></body>")
    assert extract_text(parse_html(html)) == "before\nafter script\nArticle inside a form."


def test_extract_text_keeps_block_structure() -> None:
    html = ("<body><h1>Title</h1><p>One <a href='#'>link</a> here.</p>"
            "<ul><li>first</li><li>second</li></ul>line<br>break"
            "<table><tr><td>a</td><td>b</td></tr></table></body>")
    assert extract_text(parse_html(html)).split("\n") == [
        "Title", "One link here.", "first", "second", "line", "break", "a b",
    ]


def test_page_signature_blocks_are_long_text_only() -> None:
    long = "This paragraph is certainly longer than forty characters in all."
    sig = page_signature(parse_html(f"<body><p>short</p><p>{long}</p><p>{long}</p></body>"))
    assert len(sig.blocks) == 1
    assert list(sig.block_sizes) == [len(long)]
    assert sig.text_chars == len("short") + 2 * len(long)
