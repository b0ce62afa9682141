"""The report: what it says is what the run did, its pages link up, and its size is bounded."""

from __future__ import annotations

import importlib
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from conftest import http_response, site_pages, synthetic_crawl, warc_record
from typer.testing import CliRunner

from warcdeboil.cli import app
from warcdeboil.output.formats import OutputFormat
from warcdeboil.page.content import HEADLINE
from warcdeboil.page.favor import Favor
from warcdeboil.report.annotate import SLOT, SUBTREE, annotate
from warcdeboil.report.collect import ArchivePages, StorePages, collect
from warcdeboil.run.local import build_index, fit_profiles
from warcdeboil.run.options import Options
from warcdeboil.site.clean import Mode, clean_page
from warcdeboil.site.pagestore import iter_page_store, page_store_path
from warcdeboil.site.profiles import ProfileReader
from warcdeboil.site.sitekey import SiteKeyer
from warcdeboil.warc.compression import Codec

# The modules themselves (the package's names ``collect`` and ``render`` are functions).
collect_module = importlib.import_module("warcdeboil.report.collect")
render_module = importlib.import_module("warcdeboil.report.render")
runner = CliRunner()
_HREF = re.compile(r'(?:href|src)="([^"]*)"')


def _run(*args: str) -> dict:
    result = runner.invoke(app, [*args, "-j", "1"] if args[0] == "clean" else list(args))
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout) if "--json" in args else {}


def _links_resolve(report: Path) -> int:
    """Every link and stylesheet of every page of the report names a file of the report."""
    checked = 0
    for page in report.rglob("*.html"):
        for target in _HREF.findall(page.read_text(encoding="utf-8")):
            assert "://" not in target, (page, target)  # nothing leaves the report
            assert (page.parent / target).resolve().is_file(), (page, target)
            assert report.resolve() in (page.parent / target).resolve().parents
            checked += 1
    return checked


def _pages_of(work: Path, mode: Mode, structure: bool, favor: Favor = Favor.BALANCED,
              drop_headline: bool = False):
    """(annotation, clean_page's cleaning) of every page of a work directory."""
    meta = json.loads((work / "profiles" / "profiles.json").read_text())
    reader = ProfileReader(work / "profiles", meta["partitions"])
    keyer = SiteKeyer()
    for entry in iter_page_store(page_store_path(work / "pages", 0)):
        assert entry.page.structured is structure
        profile = reader.get(keyer(entry.url))
        yield (annotate(entry.page, profile, mode, favor=favor, drop_headline=drop_headline),
               clean_page(entry.page, profile, mode, favor=favor, drop_headline=drop_headline))
    reader.close()


def _check_annotations(work: Path, mode: Mode, structure: bool, **choices: Any) -> int:
    pages = 0
    for annotated, cleaning in _pages_of(work, mode, structure, **choices):
        assert annotated.kept_text == cleaning.cleaned.text
        reasons = Counter(line.reason for line in annotated.lines if line.reason)
        blocks = cleaning.content.removed if cleaning.content is not None else {}
        for reason, count in blocks.items():
            assert reasons[reason] == count
        # Subtrees struck went from the page (one can go inside a slot, struck as the slot).
        assert reasons[SUBTREE] <= 0 or cleaning.cleaned.removed > 0
        assert reasons[SLOT] <= 0 or cleaning.cleaned.slots > 0
        pages += 1
    return pages


@pytest.mark.parametrize(("fmt", "mode", "structure"), [
    (OutputFormat.WARC, Mode.TEMPLATE, False), (OutputFormat.JSONL, Mode.TEMPLATE, True),
    (OutputFormat.JSONL, Mode.CONTENT, True),
])
def test_annotation_keeps_what_the_run_keeps(crawl: Path, tmp_path: Path, fmt: OutputFormat,
                                              mode: Mode, structure: bool) -> None:
    work = tmp_path / "work"
    options = Options(workers=1, mode=mode, format=fmt, partitions=4)
    build_index([crawl / "a.warc.gz"], work, options)
    fit_profiles(work, work / "profiles", options)
    assert _check_annotations(work, mode, structure) == 11


@pytest.mark.parametrize("favor", [Favor.PRECISION, Favor.RECALL])
def test_annotation_follows_the_runs_content_choices(crawl: Path, tmp_path: Path,
                                                    favor: Favor) -> None:
    work = tmp_path / "work"
    options = Options(workers=1, format=OutputFormat.JSONL, partitions=4)
    build_index([crawl / "a.warc.gz"], work, options)
    fit_profiles(work, work / "profiles", options)
    assert _check_annotations(work, Mode.CONTENT, True, favor=favor, drop_headline=True) == 11
    headlines = sum(line.reason == HEADLINE for annotated, _ in _pages_of(
        work, Mode.CONTENT, True, favor=favor, drop_headline=True) for line in annotated.lines)
    assert headlines > 0


@pytest.mark.slow
@pytest.mark.parametrize("mode", [Mode.TEMPLATE, Mode.CONTENT])
def test_annotation_keeps_what_the_run_keeps_on_dragnet(dragnet_work: Path, mode: Mode) -> None:
    assert _check_annotations(dragnet_work, mode, True) == 1381


@pytest.mark.slow
def test_annotation_keeps_what_a_precision_run_keeps_on_dragnet(dragnet_work: Path) -> None:
    assert _check_annotations(dragnet_work, Mode.CONTENT, True, favor=Favor.PRECISION,
                              drop_headline=True) == 1381


def test_the_report_shows_the_runs_setting(tmp_path: Path, write_archive) -> None:
    # clean --report, and report after the fact, annotate as the run cleaned: the text kept is
    # the run's to the character; report --favor shows another setting.
    from test_favor import _story  # articles whose edges --favor precision leaves out

    crawl = tmp_path / "crawl"
    crawl.mkdir()
    write_archive(crawl / "stories.warc.gz", [warc_record(
        "response", f"http://site{i % 2}.test/story/{i}",
        http_response(f"<html><body>{_story(i)}</body></html>".encode())) for i in range(6)],
        Codec.GZIP)
    report, work = tmp_path / "report", tmp_path / "work"
    summary = _run("clean", str(crawl), "-o", str(tmp_path / "out"), "--format", "jsonl",
                   "--favor", "precision", "--drop-headline", "--work-dir", str(work),
                   "--report", str(report), "--json")
    data = collect(StorePages(work), work / "profiles", Mode.CONTENT, summary,
                   favor=Favor.PRECISION, drop_headline=True)
    assert data.total("kept_chars") == summary["text_chars"] > 0
    assert data.removed("removed_blocks")[HEADLINE] == 6
    assert f"{summary['text_chars']:,} chars" in (report / "index.html").read_text("utf-8")
    _run("report", str(work), "-o", str(tmp_path / "again"))
    assert f"{summary['text_chars']:,} chars" in (tmp_path / "again" / "index.html").read_text(
        "utf-8")
    balanced = collect(StorePages(work), work / "profiles", Mode.CONTENT, summary,
                       drop_headline=True)
    assert balanced.total("kept_chars") > summary["text_chars"]
    _run("report", str(work), "-o", str(tmp_path / "balanced"), "--favor", "balanced")
    index = (tmp_path / "balanced" / "index.html").read_text("utf-8")
    assert f"{balanced.total('kept_chars'):,} chars" in index


def test_clean_report_says_what_the_run_did(crawl: Path, tmp_path: Path) -> None:
    report, work = tmp_path / "report", tmp_path / "work"
    summary = _run("clean", str(crawl), "-o", str(tmp_path / "out"), "--format", "jsonl",
                   "--work-dir", str(work), "--report", str(report), "--json")
    index = (report / "index.html").read_text(encoding="utf-8")
    assert "<svg" in index and "Text kept against HTML in" in index
    assert "Why text was removed" in index and "Sites, by pages" in index
    # The figures are the run's: text kept to the character, pages, sites.
    data = collect(StorePages(work), work / "profiles", Mode.CONTENT, summary)
    assert data.total("kept_chars") == summary["text_chars"] > 0
    assert data.pages == summary["pages"] == 11
    assert len(data.sites) == summary["sites"] == 3
    assert data.total("html_bytes") == summary["html_bytes_before"]
    assert f"{summary['text_chars']:,} chars" in index
    # A page per site, samples of each, and every link lands on a page of the report.
    assert len(list((report / "sites").glob("*.html"))) == 3
    assert len(list((report / "pages").glob("*.html"))) == 3 + 3 + 1
    assert _links_resolve(report) > 20


def test_sample_page_strikes_what_went_in_place(crawl: Path, tmp_path: Path) -> None:
    report = tmp_path / "report"
    _run("clean", str(crawl), "-o", str(tmp_path / "out"), "--format", "warc",
         "--report", str(report))
    page = next((report / "pages").glob("news.example-*-1.html")).read_text(encoding="utf-8")
    read, kept = page.split("<h2>Kept</h2>")
    # The footer went as a template subtree: struck where it was, after the article.
    footer = re.search(r'<p class="gone r-template_subtrees"[^>]*><del>Copyright news.example',
                       read)
    article = read.index("Headline number")
    assert footer is not None and footer.start() > article
    assert read.index("<del>news.example daily</del>") < article
    assert "Copyright" not in kept and "Headline number" in kept
    site = next((report / "sites").glob("news.example-*.html")).read_text(encoding="utf-8")
    # Each template subtree with the pages it went from: the 6 pages of the site.
    assert re.search(r'<td class=n>6</td><td class=n>100%</td><td><div class="item">'
                     r"Copyright news.example", site)


def test_report_after_the_fact_is_the_same(crawl: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    _run("clean", str(crawl), "-o", str(tmp_path / "out"), "--format", "jsonl",
         "--work-dir", str(work), "--report", str(tmp_path / "now"))
    _run("report", str(work), "-o", str(tmp_path / "later"), "-q")
    now = sorted(p.relative_to(tmp_path / "now") for p in (tmp_path / "now").rglob("*"))
    later = sorted(p.relative_to(tmp_path / "later") for p in (tmp_path / "later").rglob("*"))
    assert now == later
    for name in now:
        if (tmp_path / "now" / name).is_file():
            assert (tmp_path / "now" / name).read_bytes() == (tmp_path / "later" /
                                                              name).read_bytes()


def test_report_of_a_temporary_work_dir_is_made_before_it_goes(crawl: Path,
                                                               tmp_path: Path) -> None:
    report = tmp_path / "report"
    _run("clean", str(crawl), "-o", str(tmp_path / "out"), "--report", str(report))
    index = (report / "index.html").read_text(encoding="utf-8")
    assert "template mode: 11 pages of 3 sites" in index


def test_apply_report_reads_the_archives_again(crawl: Path, tmp_path: Path) -> None:
    work, profiles = tmp_path / "work", tmp_path / "profiles"
    _run("index", str(crawl), "--work-dir", str(work), "-q")
    _run("fit", "--work-dir", str(work), "--profiles", str(profiles), "-q")
    _run("apply", str(crawl), "-o", str(tmp_path / "out"), "--profiles", str(profiles),
         "--format", "jsonl", "--report", str(tmp_path / "report"), "-q")
    assert _links_resolve(tmp_path / "report") > 20
    assert "content mode: 11 pages of 3 sites" in (tmp_path / "report" / "index.html").read_text()
    # Read again from the archives, the pages are those pass 1 stored (the index was made
    # without structure marks, so these are read without): the same figures, site by site.
    from_archives = collect(ArchivePages([crawl / "a.warc.gz"], False), profiles, Mode.TEMPLATE)
    from_stores = collect(StorePages(work), profiles, Mode.TEMPLATE)

    def figures(data):
        return [(s.site, s.pages, s.html_bytes, s.chars, s.kept_chars, s.removed_chars)
                for s in data.sites]

    assert figures(from_archives) == figures(from_stores)
    assert from_stores.removed()[SUBTREE] > 0


def test_report_refuses_a_directory_that_is_not_a_report(crawl: Path, tmp_path: Path) -> None:
    work, report = tmp_path / "work", tmp_path / "mine"
    _run("index", str(crawl), "--work-dir", str(work), "-q")
    _run("fit", "--work-dir", str(work), "--profiles", str(work / "profiles"), "-q")
    report.mkdir()
    (report / "notes.txt").write_text("mine")
    result = runner.invoke(app, ["report", str(work), "-o", str(report)])
    assert result.exit_code == 1
    assert "not empty and not a report" in result.stderr
    assert (report / "notes.txt").read_text() == "mine"


def test_report_of_no_work_dir_is_one_line(tmp_path: Path) -> None:
    result = runner.invoke(app, ["report", str(tmp_path), "-o", str(tmp_path / "r")])
    assert result.exit_code == 1
    assert "no index here" in result.stderr and "Traceback" not in result.output


def test_report_of_an_index_without_profiles_says_what_is_missing(crawl: Path,
                                                                 tmp_path: Path) -> None:
    """Without profiles every page would look untouched: the report is refused, in one line
    naming the missing profiles and the command that makes them."""
    work = tmp_path / "work"
    _run("index", str(crawl), "--work-dir", str(work), "-q")
    result = runner.invoke(app, ["report", str(work), "-o", str(tmp_path / "r")])
    assert result.exit_code == 1
    assert result.stderr.strip() == (
        f"warcdeboil: error: {work / 'profiles'}: no site profiles (the fit did not run, or did "
        f"not finish): run `warcdeboil fit --work-dir {work} --profiles {work / 'profiles'}`, "
        "or give --profiles")
    assert not (tmp_path / "r").exists()


def test_report_of_index_and_fit_without_a_run(crawl: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    _run("index", str(crawl), "--work-dir", str(work), "-q")
    _run("fit", "--work-dir", str(work), "--profiles", str(work / "profiles"), "-q")
    _run("report", str(work), "-o", str(tmp_path / "r"), "-q")
    index = (tmp_path / "r" / "index.html").read_text(encoding="utf-8")
    assert "holds no summary of its run" in index and "11 pages of 3 sites" in index


def _one_site(tmp_path: Path, write_archive, pages: int) -> Path:
    records = [warc_record("response", url, http_response(html.encode()))
               for url, html in site_pages("big.example", pages, article_words=8)]
    return write_archive(tmp_path / "big.warc.gz", records, Codec.GZIP)


@pytest.mark.slow
def test_a_large_site_gives_a_bounded_report(tmp_path: Path, write_archive) -> None:
    archive = _one_site(tmp_path, write_archive, 10_000)
    report = tmp_path / "report"
    summary = _run("clean", str(archive), "-o", str(tmp_path / "out"), "--format", "jsonl",
                   "--report", str(report), "--json")
    assert summary["pages"] == 10_000
    files = sorted(p for p in report.rglob("*") if p.is_file())
    assert len(files) == 1 + 1 + 1 + collect_module.SAMPLES_PER_SITE  # css, index, site, pages
    assert sum(p.stat().st_size for p in files) < 100_000
    assert "10,000" in (report / "index.html").read_text(encoding="utf-8")


def test_many_sites_are_capped(tmp_path: Path, write_archive, monkeypatch) -> None:
    monkeypatch.setattr(collect_module, "MAX_SITE_PAGES", 3)
    monkeypatch.setattr(render_module, "MAX_INDEX_SITES", 5)
    records = []
    for n in range(8):
        records += [warc_record("response", url, http_response(html.encode()))
                    for url, html in site_pages(f"s{n}.example", 2 + n)]
    archive = write_archive(tmp_path / "many.warc.gz", records, Codec.GZIP)
    report = tmp_path / "report"
    _run("clean", str(archive), "-o", str(tmp_path / "out"), "--report", str(report))
    sites = sorted(p.name.split("-")[0] for p in (report / "sites").glob("*.html"))
    assert sites == ["s5.example", "s6.example", "s7.example"]  # the largest
    assert len(list((report / "pages").glob("*.html"))) == 3 * collect_module.SAMPLES_PER_SITE
    index = (report / "index.html").read_text(encoding="utf-8")
    assert "3 more sites" in index and index.count('href="sites/') == 3
    _links_resolve(report)


def test_resume_with_nothing_to_do_says_no_report_was_written(crawl: Path,
                                                              tmp_path: Path) -> None:
    args = ["clean", str(crawl), "-o", str(tmp_path / "out"), "--work-dir", str(tmp_path / "w"),
            "-j", "1", "-q"]
    assert runner.invoke(app, args).exit_code == 0
    result = runner.invoke(app, [*args, "--resume", "--report", str(tmp_path / "r")])
    assert result.exit_code == 0
    assert "report        not written: no input was cleaned (--resume)" in result.stderr
    assert not (tmp_path / "r").exists()
    _run("report", str(tmp_path / "w"), "-o", str(tmp_path / "r"), "-q")
    assert (tmp_path / "r" / "index.html").exists()


def test_report_into_a_file_is_refused(crawl: Path, tmp_path: Path) -> None:
    _run("index", str(crawl), "--work-dir", str(tmp_path / "w"), "-q")
    _run("fit", "--work-dir", str(tmp_path / "w"), "--profiles", str(tmp_path / "w" / "profiles"),
         "-q")
    (tmp_path / "f").write_text("x")
    result = runner.invoke(app, ["report", str(tmp_path / "w"), "-o", str(tmp_path / "f")])
    assert result.exit_code == 1 and "not a directory" in result.stderr


def test_content_report_of_pages_without_structure_is_refused(crawl: Path,
                                                              tmp_path: Path) -> None:
    work = tmp_path / "work"
    _run("clean", str(crawl), "-o", str(tmp_path / "out"), "--work-dir", str(work))
    result = runner.invoke(app, ["report", str(work), "-o", str(tmp_path / "r"), "-m",
                                 "content"])
    assert result.exit_code == 1
    assert "without structure marks" in result.stderr and "--mode template" in result.stderr
    _run("report", str(work), "-o", str(tmp_path / "r"), "-q")  # the run's own mode
    assert "template mode" in (tmp_path / "r" / "index.html").read_text(encoding="utf-8")


def test_the_report_is_the_same_for_any_number_of_workers(tmp_path: Path,
                                                          write_archive) -> None:
    src = tmp_path / "crawl"
    src.mkdir()
    records = synthetic_crawl()
    write_archive(src / "a.warc.gz", records[: len(records) // 2], Codec.GZIP)
    write_archive(src / "b.warc", records[len(records) // 2 :], Codec.NONE)
    work = tmp_path / "work"
    _run("clean", str(src), "-o", str(tmp_path / "out"), "--work-dir", str(work))
    reports = []
    for workers in ("1", "2"):
        report = tmp_path / f"r{workers}"
        _run("report", str(work), "-o", str(report), "-j", workers, "-q")
        reports.append({p.relative_to(report): p.read_bytes() for p in report.rglob("*.html")})
    assert reports[0] == reports[1]
    # Both inputs' pages are in it: the sites' figures add up across the files.
    index = (tmp_path / "r2" / "index.html").read_text(encoding="utf-8")
    assert "11 pages of 3 sites" in index and len(reports[0]) == 1 + 3 + 7


def test_a_run_record_with_an_unknown_setting_is_one_line(crawl: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    _run("clean", str(crawl), "-o", str(tmp_path / "out"), "--format", "jsonl", "--work-dir",
         str(work))
    record = json.loads((work / "run.json").read_text(encoding="utf-8"))
    (work / "run.json").write_text(json.dumps({**record, "favor": "most"}), encoding="utf-8")
    result = runner.invoke(app, ["report", str(work), "-o", str(tmp_path / "report")])
    assert result.exit_code == 1
    assert "run.json: favor 'most' is none of precision, balanced, recall" in result.output
    assert "Traceback" not in result.output


def test_a_setting_for_a_template_mode_report_is_refused(crawl: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    _run("clean", str(crawl), "-o", str(tmp_path / "out"), "--format", "warc", "--work-dir",
         str(work))
    result = runner.invoke(app, ["report", str(work), "-o", str(tmp_path / "report"),
                                 "--favor", "recall"])
    assert result.exit_code == 1
    assert "--favor chooses what content mode keeps" in result.output
    assert not (tmp_path / "report").exists()
