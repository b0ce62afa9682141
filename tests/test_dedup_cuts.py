"""The duplicate stage finds what a template removes with numpy, many pages at once
(:mod:`warcdeboil.dedup.cuts`): the same candidates and slots, in the same order, as the
reference walk of :func:`warcdeboil.page.dom.find_doomed` that pass 2 runs."""

from __future__ import annotations

import json
import random
from array import array
from pathlib import Path

import pytest
from conftest import shared_file

from warcdeboil.dedup.cuts import find_doomed_batch, longest_block
from warcdeboil.dedup.verdicts import DedupMode
from warcdeboil.output.formats import OutputFormat
from warcdeboil.page import dom
from warcdeboil.page.dom import LINE, OPEN, ROLE_CLOSE, ROLE_MAIN, ROLE_OPEN, ROLES, PageText
from warcdeboil.run.local import clean
from warcdeboil.run.options import Options
from warcdeboil.site.pagestore import iter_page_store, page_store_path
from warcdeboil.site.profiles import ProfileReader
from warcdeboil.site.sitekey import SiteKeyer, SiteKeyMode


def _batches(pages: list[PageText], templates: list, slots: list, size: int) -> list[dom.Doomed]:
    found: list[dom.Doomed] = []
    for start in range(0, len(pages), size):
        end = start + size
        found += find_doomed_batch(pages[start:end], templates[start:end], slots[start:end])
    return found


def _random_page(rng: random.Random) -> tuple[PageText, frozenset[int]]:
    """A page of random role marks: nested, interleaved, unbalanced (closings with nothing
    open, elements never closed), text of random lengths between them, some of its slots the
    site's, some of its openings without a slot (more openings than ``slots``)."""
    pieces: list[str] = []
    openings = 0
    for _ in range(rng.randrange(0, 40)):
        role = rng.randrange(ROLES)
        pieces.append(ROLE_OPEN[role] if rng.random() < 0.55 else ROLE_CLOSE[role])
        openings += pieces[-1] in ROLE_OPEN
        pieces.append(rng.choice(["", " ", "a" * rng.randrange(1, 60), LINE, OPEN,
                                  "é" * rng.randrange(1, 20)]))
    slots = array("Q", (rng.choice([0, 1, 2, 3]) for _ in range(max(0, openings
                                                                        - rng.randrange(3)))))
    page = PageText("", "".join(pieces).encode("utf-8"), array("Q"), array("Q"), slots=slots)
    return page, frozenset(rng.sample([1, 2, 3], rng.randrange(0, 4)))


def test_random_marks_give_the_references_slots() -> None:
    rng = random.Random(7)
    made = [_random_page(rng) for _ in range(3000)]
    pages = [page for page, _ in made]
    slots = [site_slots for _, site_slots in made]
    templates = [frozenset[int]()] * len(pages)
    expected = [dom.find_doomed(page, (), site_slots) for page, site_slots in made]
    assert sum(len(doomed.slots) for doomed in expected) > 1000  # the test tests something
    for size in (1, 5, 64, len(pages)):
        assert _batches(pages, templates, slots, size) == expected
    assert [longest_block(page.marked) for page in pages] == [
        dom._longest_block(page.marked) for page in pages]


def test_what_stops_a_slot_from_going() -> None:
    main_open, main_close = ROLE_OPEN[ROLE_MAIN], ROLE_CLOSE[ROLE_MAIN]
    aside_open, aside_close = ROLE_OPEN[1], ROLE_CLOSE[1]
    article = "word " * 30
    cases = [
        # a slot of the site around a little text goes; one holding the article (a main-role
        # element, or the longest block) stays, as does one holding most of the page
        f"{aside_open}menu{aside_close}{LINE}{article}",
        f"{aside_open}{main_open}{article}{main_close}{aside_close}",
        f"{aside_open}{article}{aside_close}{LINE}short",
        f"{aside_open}{'x' * 40}{aside_close}{LINE}{'y' * 30}",
        f"{aside_close}{aside_open}menu{aside_close}{aside_close}{LINE}{article}",
        f"{LINE}{article}",  # slots said, no mark found (last: the batch ends without marks)
    ]
    pages = [PageText("", text.encode(), array("Q"), array("Q"),
                      slots=array("Q", [5] * max(1, text.count(aside_open))
                                  + [0] * text.count(main_open)))
             for text in cases]
    found = [doomed.slots for doomed in _batches(pages, [()] * len(pages), [{5}] * len(pages),
                                                  len(pages))]
    assert found == [dom.find_doomed(page, (), {5}).slots for page in pages]
    assert [len(slots) for slots in found] == [1, 0, 0, 0, 1, 0]


@pytest.fixture(scope="module")
def eval_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A JSONL run over a real evaluation archive, its work directory kept (page stores and
    fitted profiles)."""
    archive = shared_file("eval", "l3s-gn1.warc.gz")
    tmp = tmp_path_factory.mktemp("cuts")
    clean([archive], tmp / "out", Options(workers=1, format=OutputFormat.JSONL,
                                          dedup=DedupMode.MARK), work_dir=tmp / "work")
    return tmp / "work"


def test_real_pages_give_the_references_candidates_and_slots(eval_run: Path) -> None:
    meta = json.loads((eval_run / "profiles" / "profiles.json").read_text(encoding="utf-8"))
    keyer = SiteKeyer(SiteKeyMode(meta["site_key"]))
    reader = ProfileReader(eval_run / "profiles", int(meta["partitions"]))
    pages, templates, slots = [], [], []
    try:
        for entry in iter_page_store(page_store_path(eval_run / "pages", 0)):
            site = keyer(entry.url)
            profile = reader.get(site) if site else None
            pages.append(entry.page)
            templates.append(profile.template if profile is not None else frozenset())
            slots.append(profile.template_slots if profile is not None else frozenset())
    finally:
        reader.close()
    expected = [dom.find_doomed(page, template, site_slots)
                for page, template, site_slots in zip(pages, templates, slots, strict=True)]
    assert len(pages) > 600
    assert sum(len(doomed.slots) for doomed in expected) > 1000
    assert sum(len(doomed.candidates) for doomed in expected) > 1000
    for size in (1, 64):
        assert _batches(pages, templates, slots, size) == expected
    assert [longest_block(page.marked) for page in pages] == [
        dom._longest_block(page.marked) for page in pages]
