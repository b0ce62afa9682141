"""The report in a real browser: headless Chromium (the distribution's package; `.ci/run`
installs it) opens every kind of page from ``file://`` with no console error, draws the charts,
and every link lands on a page that opens too. Skipped only where Chromium is absent."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
from chromium_pipe import Chromium, chromium_binary, png_pixels
from conftest import synthetic_crawl
from typer.testing import CliRunner

from warcdeboil.cli import app
from warcdeboil.report import report_work_dir
from warcdeboil.site.clean import Mode
from warcdeboil.warc.compression import Codec

BINARY = chromium_binary()
pytestmark = pytest.mark.skipif(BINARY is None, reason="chromium is not installed")
runner = CliRunner()

# The colours of the charts (see warcdeboil.report.render): HTML in, template subtrees, kept.
BLUE, RED, GREEN = (0x4C, 0x72, 0xB0), (0xD6, 0x27, 0x28), (0x2C, 0xA0, 0x2C)


@pytest.fixture(scope="module")
def browser():
    assert BINARY is not None
    with Chromium(BINARY, 1280, 1000) as chromium:
        yield chromium


def _report(tmp_path: Path, write_archive) -> Path:
    src = tmp_path / "crawl"
    src.mkdir()
    write_archive(src / "a.warc.gz", synthetic_crawl(), Codec.GZIP)
    report = tmp_path / "report"
    result = runner.invoke(app, ["clean", str(src), "-o", str(tmp_path / "out"), "-j", "1",
                                 "--format", "jsonl", "--report", str(report), "-q"])
    assert result.exit_code == 0, result.output
    return report


def _links(browser: Chromium) -> list[Path]:
    """The files the page's links point to, as the browser resolved them."""
    hrefs = browser.evaluate("[...document.querySelectorAll('a[href]')].map(a => a.href)")
    assert all(href.startswith("file://") for href in hrefs), hrefs
    return [Path(unquote(urlparse(href).path)) for href in hrefs]


def _screenshot(browser: Chromium, path: Path) -> Counter[tuple[int, ...]]:
    """The colours of the whole page, from a screenshot a quarter of its size (the full size
    is kept at ``path`` for a person to look at)."""
    browser.screenshot(path)
    return Counter(png_pixels(browser.screenshot(scale=0.25)))


def _open(browser: Chromium, page: Path) -> None:
    browser.open(page)
    assert browser.errors() == [], page
    # The report's stylesheet was found and applied (its rules cannot be read from file://).
    assert browser.evaluate("getComputedStyle(document.body).maxWidth") == "1200px"
    assert browser.evaluate("document.querySelector('h1').textContent.length") > 0


def test_every_page_opens_and_every_link_resolves(tmp_path: Path, write_archive,
                                                  browser: Chromium) -> None:
    report = _report(tmp_path, write_archive)
    seen: set[Path] = set()
    todo = [(report / "index.html").resolve()]
    while todo:
        page = todo.pop()
        if page in seen:
            continue
        seen.add(page)
        _open(browser, page)
        for target in _links(browser):
            assert target.is_file(), (page, target)
            assert report.resolve() in target.parents
            todo.append(target)
    # The index, a page per site (3) and a page per sample (3 + 3 + 1): all reached by links.
    assert len(seen) == 1 + 3 + 7
    assert seen == {p.resolve() for p in report.rglob("*.html")}


def test_charts_are_drawn(tmp_path: Path, write_archive, browser: Chromium) -> None:
    report = _report(tmp_path, write_archive)
    _open(browser, report / "index.html")
    # Bars with a width in the two charts, and a share bar for each of the 3 sites.
    widths = browser.evaluate(
        "[...document.querySelectorAll('svg.chart')].map(svg => "
        "[...svg.querySelectorAll('rect')].map(r => r.getBBox().width))")
    assert len(widths) == 2
    assert all(len(bars) >= 2 and max(bars) > 100 for bars in widths), widths
    assert browser.evaluate("document.querySelectorAll('svg.share').length") == 3
    colours = _screenshot(browser, tmp_path / "index.png")
    assert colours[(255, 255, 255)] < 0.97 * sum(colours.values())  # not a blank page
    assert colours[BLUE] > 20 and colours[RED] > 20 and colours[GREEN] > 5


def test_sample_page_shows_removed_blocks_struck(tmp_path: Path, write_archive,
                                                 browser: Chromium) -> None:
    report = _report(tmp_path, write_archive)
    page = next((report / "pages").glob("news.example-*-1.html"))
    _open(browser, page)
    struck = browser.evaluate(
        "[...document.querySelectorAll('p.gone')].map(p => [getComputedStyle(p.firstChild)"
        ".textDecorationLine, getComputedStyle(p).color, p.title])")
    assert struck and all(line == "line-through" for line, _, _ in struck)
    assert ["line-through", "rgb(214, 39, 40)", "template subtree"] in [list(s) for s in struck]
    colours = _screenshot(browser, tmp_path / "page.png")
    assert colours[RED] > 10  # struck lines drawn in their reason's colour


@pytest.mark.slow
def test_dragnet_report_opens_with_no_error(tmp_path: Path, browser: Chromium,
                                            dragnet_work: Path) -> None:
    report = tmp_path / "report"
    report_work_dir(dragnet_work, report, mode=Mode.CONTENT)
    _open(browser, report / "index.html")
    assert browser.evaluate("document.querySelectorAll('tbody tr').length") > 501
    largest = max((report / "pages").glob("*.html"), key=lambda p: p.stat().st_size)
    _open(browser, largest)
    _open(browser, max((report / "sites").glob("*.html"), key=lambda p: p.stat().st_size))
