"""The fit: neighbour pairs, the IoU guard, the near-duplicate guard, min_occurrence."""

from __future__ import annotations

from conftest import site_pages

from warcdeboil.api import Deboiler
from warcdeboil.page.dom import analyse, page_signature
from warcdeboil.site.fit import FitParams, fit_site


def signatures(pages: list[tuple[str, str]]) -> list:
    return [page_signature(analyse(html)) for _, html in sorted(pages)]


def test_shared_template_is_learned_and_articles_are_not() -> None:
    pages = site_pages("news.example", 5)
    profile = fit_site("news.example", signatures(pages), FitParams())
    template = set(analyse(pages[0][1]).hashes) - {0}  # header, logo div, nav, ul, footer
    assert profile.pairs == 4
    assert profile.hashes == template


def test_identical_pages_are_skipped_by_the_iou_guard() -> None:
    page = site_pages("a.example", 1)[0][1]
    profile = fit_site("a.example", signatures([("a", page), ("b", page)]), FitParams())
    assert profile.pairs == 0
    assert not profile.hashes


def test_near_duplicates_do_not_erase_their_article() -> None:
    # /story and /story?page=1 hold the same article; a per-page widget keeps their IoU low.
    story = site_pages("n.example", 1, article_words=200)[0][1]
    story = story.replace("<article>", "<div class='c'><article>")
    story = story.replace("</article>", "</article></div>")
    pages = [("http://n.example/a", site_pages("n.example", 2)[1][1])]
    for i, suffix in enumerate(["", "?page=1"]):
        widget = f"<div class='w'><div>Widget {i}</div><ul><li>only here {i}</li></ul></div>"
        page = story.replace("<footer>", widget + "<footer>")
        pages.append((f"http://n.example/story{suffix}", page))
    deboiler = Deboiler().fit(pages)
    texts = {p.url: p.text for p in deboiler.transform(pages)}
    assert "word0x199" in texts["http://n.example/story"]
    assert "word0x199" in texts["http://n.example/story?page=1"]
    without_guard = Deboiler(params=FitParams(near_duplicate=1.01)).fit(pages)
    texts = {p.url: p.text for p in without_guard.transform(pages)}
    assert "word0x199" not in texts["http://n.example/story"]  # deboiler's failure, reproduced


def test_min_occurrence_needs_that_many_pairs() -> None:
    pages = site_pages("m.example", 3)
    # A block shared by one pair only (pages 1 and 2).
    pages[1] = (pages[1][0], pages[1][1].replace("</article>", "</article><aside>Rare box</aside>"))
    pages[2] = (pages[2][0], pages[2][1].replace("</article>", "</article><aside>Rare box</aside>"))
    aside = (set(analyse(pages[1][1]).hashes) - set(analyse(pages[0][1]).hashes)).pop()
    assert aside in fit_site("m", signatures(pages), FitParams(min_occurrence=1)).hashes
    assert aside not in fit_site("m", signatures(pages), FitParams(min_occurrence=2)).hashes


def test_transform_twice_gives_the_same_answer() -> None:
    pages = site_pages("t.example", 4)
    deboiler = Deboiler().fit(pages)
    first = list(deboiler.transform(pages))
    assert list(deboiler.transform(pages)) == first
    assert all("Copyright" not in page.text for page in first)
    assert all("Headline number" in page.text for page in first)


def test_fit_transform_is_fit_then_transform() -> None:
    pages = site_pages("f.example", 3)
    assert Deboiler().fit_transform(pages, html=True) == list(
        Deboiler().fit(pages).transform(pages, html=True)
    )
