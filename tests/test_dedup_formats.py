"""The duplicate groups do not depend on the output format nor the mode (issue 38, item 5).

A page's signature leaves out its link-dense blocks, which only pages analysed with structure
marks show, and its site's template, which the fit learns from what pass 1 indexed. So pass 1
analyses every page with structure marks whenever the duplicate stage runs, the fit reads pages
without them, and an output that needs none (WARC, template-mode text) takes them out again:
the same groups, kept pages and verdicts every way, and the outputs of a run with the stage are
those of a run without it but for what the stage decides.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import (
    ArchiveBuilder,
    request_response_crawl,
    shared_file,
    site_pages,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from warcdeboil.dedup import iter_url_groups
from warcdeboil.dedup.verdicts import DedupMode, iter_verdicts, verdicts_path
from warcdeboil.output.formats import OutputFormat
from warcdeboil.page.dom import analyse, page_signature, without_structure
from warcdeboil.run.local import clean
from warcdeboil.run.options import Options
from warcdeboil.site.clean import Mode
from warcdeboil.warc.compression import Codec
from warcdeboil.warc.reader import iter_records

STORY = "http://news.example/story/001"
COPY = "http://news.example/story/001?utm_source=feed"
SYNDICATED = "http://wire.example/story/002"

# Every combination a run can be made with that runs the duplicate stage.
RUNS = {
    "warc revisit": Options(workers=1, format=OutputFormat.WARC, dedup=DedupMode.REVISIT),
    "text drop": Options(workers=1, format=OutputFormat.TEXT, dedup=DedupMode.DROP),
    "text template drop": Options(workers=1, format=OutputFormat.TEXT, mode=Mode.TEMPLATE,
                                  dedup=DedupMode.DROP),
    "jsonl": Options(workers=1, format=OutputFormat.JSONL),
    "jsonl template": Options(workers=2, format=OutputFormat.JSONL, mode=Mode.TEMPLATE),
    "markdown drop": Options(workers=1, format=OutputFormat.MARKDOWN, dedup=DedupMode.DROP),
}


def _with_related(html: str, i: int) -> str:
    """The page with a list of links to other stories after its article, its own on each page
    (so no template), as long as the article: link-dense, left out of the signature."""
    links = "".join(f"<li><a href='/s/{i}{k}'>Another story {i} {k} with a long linked headline"
                    "</a></li>" for k in range(12))
    # A list with a line before its first item: a line of its own with structure marks (before
    # the item), not without them, where the item only ends a line.
    notes = (f"<ul>Notes on story {i}:<li>a first note on {i}</li>"
             f"<li>a second note on {i}</li></ul>")
    return html.replace("</article>", f"{notes}</article><ul class='more'>{links}</ul>")


@pytest.fixture
def link_crawl(tmp_path: Path, write_archive: ArchiveBuilder) -> Path:
    """news.example: six stories under a template, each followed by its own list of links to
    other stories, and an exact copy of story 1 under a tracking parameter; wire.example: four
    stories under another template, one of them story 1 of news.example without the links.
    The articles' paragraphs are short (no lead paragraph): the copy is found by its
    similarity to the story once the links are left out, as they are on pages analysed with
    structure marks (on pages analysed without them, the links keep it below 0.6)."""
    src = tmp_path / "crawl"
    src.mkdir()
    news = [(url, _with_related(html, i)) for i, (url, html) in
            enumerate(site_pages("news.example", 6, article_words=15))]
    news = [(url, html.replace("</p><p>", "</p><p>more words for this story ").replace(
        "<p>Second", "<p>Then a third short paragraph of it.</p><p>Second")) for url, html in news]
    story = dict(news)[STORY]
    news.append((COPY, story))
    write_archive(src / "a.warc.gz", request_response_crawl(news), Codec.GZIP)
    article = story[story.index("<article>"):story.index("</article>")] + "</article>"
    wire = []
    for url, html in site_pages("wire.example", 4, article_words=40):
        if url == SYNDICATED:
            html = html[: html.index("<article>")] + article + html[html.index("<footer>"):]
        wire.append((url, html.replace("Headline number", "Wire headline")))
    write_archive(src / "b.warc.gz", request_response_crawl(wire), Codec.GZIP)
    return src


def _groups_and_verdicts(crawl: Path, options: Options, tmp: Path) -> tuple[list, list, tuple]:
    """The run's groups (URL, group id), each input's verdicts, and its summary's counts."""
    work = tmp / "work"
    summary = clean([crawl], tmp / "out", options, work_dir=work)
    groups = sorted((url, group) for _, url, group in iter_url_groups(work))
    verdicts = [list(iter_verdicts(verdicts_path(work / "dedup", i))) for i in range(2)]
    counts = summary.to_dict()["duplicates"]
    return groups, verdicts, (counts["groups"], counts["exact"], counts["near"])


def test_every_format_and_mode_finds_the_same_groups(link_crawl: Path, tmp_path: Path) -> None:
    found = {name: _groups_and_verdicts(link_crawl, options, tmp_path / name.replace(" ", "-"))
             for name, options in RUNS.items()}
    groups, verdicts, counts = found["jsonl"]
    group = dict(groups)
    assert group[STORY] == group[COPY] == group[SYNDICATED]
    assert len(set(group.values())) == len(group) - 2  # that group, every other page alone
    # Equal texts and dates: the shortest URL, then the first in code-point order.
    assert {v.keep_url for vs in verdicts for v in vs} == {STORY}
    assert counts == (1, 1, 1)
    for name, other in found.items():
        assert other == found["jsonl"], name


def test_revisit_changes_nothing_but_the_revisits(link_crawl: Path, tmp_path: Path) -> None:
    """A WARC run with --dedup revisit writes the records of a WARC run without the stage,
    byte for byte, but the exact copy (a revisit); pass 1 analysed its pages with structure
    marks, pass 2 took them out again."""
    clean([link_crawl], tmp_path / "plain", Options(workers=1, format=OutputFormat.WARC))
    summary = clean([link_crawl], tmp_path / "dedup", RUNS["warc revisit"])
    assert summary.dedup is not None and summary.dedup["groups"] == 1
    assert summary.to_dict()["duplicates"]["revisits"] == 1
    assert (tmp_path / "dedup" / "b.warc.gz").read_bytes() == (
        tmp_path / "plain" / "b.warc.gz").read_bytes()
    before = list(iter_records(tmp_path / "plain" / "a.warc.gz"))
    after = list(iter_records(tmp_path / "dedup" / "a.warc.gz"))
    assert len(before) == len(after)
    changed = [(b.target_uri, a.rec_type) for b, a in zip(before, after, strict=True)
               if b.to_bytes() != a.to_bytes()]
    assert changed == [(COPY, "revisit")]


def test_template_mode_text_is_the_same_with_the_stage(link_crawl: Path, tmp_path: Path) -> None:
    """Template-mode WET output reads its pages without structure marks, whether pass 1 made
    them for the duplicate stage or not: --dedup drop leaves out the duplicates, nothing else."""
    off = Options(workers=1, format=OutputFormat.TEXT, mode=Mode.TEMPLATE)
    clean([link_crawl], tmp_path / "off", off)
    clean([link_crawl], tmp_path / "drop", RUNS["text template drop"])
    for name in ("a.warc.wet.gz", "b.warc.wet.gz"):
        kept = {r.target_uri: r.block for r in iter_records(tmp_path / "drop" / name)
                if r.rec_type == "conversion"}
        every = {r.target_uri: r.block for r in iter_records(tmp_path / "off" / name)
                 if r.rec_type == "conversion"}
        assert kept == {url: block for url, block in every.items()
                        if url not in (COPY, SYNDICATED)}


def test_the_language_model_stage_cleans_template_mode_text_without_marks(
        link_crawl: Path, tmp_path: Path) -> None:
    """With a model's perplexity buckets, the language-model stage cleans the pages for pass 2
    (and signs them for the duplicate stage): for template-mode text, as pass 2 would clean
    them, without the structure marks pass 1 made for the duplicate stage. The WET output is
    that of the run without the stage, but for the duplicates it leaves out."""
    from warcdeboil.lm import LanguageModel
    from warcdeboil.lm.scoring import LmSettings

    model = str(tmp_path / "en.lm")
    LanguageModel.train([f"Headline number {i} of the story with a word or two"
                         for i in range(50)]).save(model)
    lm = LmSettings(model, buckets=True)
    off = Options(workers=1, format=OutputFormat.TEXT, mode=Mode.TEMPLATE, lm=lm)
    clean([link_crawl], tmp_path / "off", off)
    clean([link_crawl], tmp_path / "drop", Options(workers=1, format=OutputFormat.TEXT,
                                                   mode=Mode.TEMPLATE, lm=lm,
                                                   dedup=DedupMode.DROP))
    for name in ("a.warc.wet.gz", "b.warc.wet.gz"):
        kept = [r.to_bytes() for r in iter_records(tmp_path / "drop" / name)
                if r.rec_type == "conversion"]
        every = [r.to_bytes() for r in iter_records(tmp_path / "off" / name)
                 if r.rec_type == "conversion" and r.target_uri not in (COPY, SYNDICATED)]
        assert kept == every


def test_l3s_gn1_groups_are_the_same_for_warc_and_jsonl(tmp_path: Path) -> None:
    """On l3s-gn1, a WARC run found 4 groups and a JSONL run 6: its syndicated copies were
    missed where link-dense blocks stayed in the signature."""
    archive = shared_file("eval", "l3s-gn1.warc.gz")
    found = {}
    for name in ("warc revisit", "jsonl template"):
        work = tmp_path / name.replace(" ", "-")
        summary = clean([archive], work / "out", RUNS[name], work_dir=work / "work")
        assert summary.dedup is not None
        found[name] = (summary.dedup["groups"], summary.dedup["near"],
                       sorted((url, group) for _, url, group in iter_url_groups(work / "work")),
                       list(iter_verdicts(verdicts_path(work / "work" / "dedup", 0))))
    assert found["warc revisit"][:2] == (6, 7)
    assert found["warc revisit"] == found["jsonl template"]


# -- a page analysed with structure marks, and without -------------------------------------

_TAGS = ["div", "p", "a", "b", "i", "em", "strong", "span", "h1", "h3", "ul", "li", "table",
         "tr", "td", "th", "blockquote", "pre", "nav", "aside", "section", "br", "footer"]
_WORDS = st.sampled_from(["alpha", "Beta", "gamma", " ", "  delta\n", "", "é", "x"])


@st.composite
def _html(draw: st.DrawFn, depth: int = 3) -> str:
    parts = []
    for _ in range(draw(st.integers(0, 4))):
        if depth and draw(st.booleans()):
            tag = draw(st.sampled_from(_TAGS))
            attrs = draw(st.sampled_from(["", " class='sidebar'", " href='#x'", " id=comments",
                                          " class='article'"]))
            parts.append(f"<{tag}{attrs}>{draw(_html(depth - 1))}</{tag}>")
        else:
            parts.append(draw(_WORDS))
    return "".join(parts)


@settings(max_examples=300, deadline=None)
@given(_html())
def test_structure_marks_come_out_as_analyse_leaves_them_out(body: str) -> None:
    html = f"<html><head><title>t</title></head><body>{body}</body></html>"
    marked, plain = analyse(html, structure=True), analyse(html, structure=False)
    assert without_structure(marked) == plain
    assert page_signature(marked) == page_signature(plain)


def test_real_pages_analysed_either_way_sign_and_fit_alike() -> None:
    """Every page of l3s-gn1: the same index entry, and the page of a run without structure
    marks, from the page of a run with them."""
    from warcdeboil.page.html import PageLimits, html_page
    from warcdeboil.warc.reader import iter_selected

    archive = shared_file("eval", "l3s-gn1.warc.gz")
    pages = 0
    for record in iter_selected(str(archive), None):
        page = html_page(record, PageLimits()) if record.error is None else None
        if page is None:
            continue
        marked = analyse(page.markup, structure=True)
        plain = analyse(page.markup, structure=False)
        assert without_structure(marked) == plain, page.url
        assert page_signature(marked) == page_signature(plain), page.url
        pages += 1
    assert pages == 621


def test_a_warc_runs_report_reads_its_pages_as_its_outputs_do(link_crawl: Path,
                                                              tmp_path: Path) -> None:
    """The report of a WARC run with the stage is the report of a WARC run without it (its
    pages read without the structure marks the stage needed), but for the duplicates its
    summary counts; its pages keep the marks, so a content-mode report of it can be made too."""
    import re

    from warcdeboil.report import report_work_dir

    for name, options in (("plain", Options(workers=1, format=OutputFormat.WARC)),
                          ("dedup", RUNS["warc revisit"])):
        clean([link_crawl], tmp_path / name / "out", options, work_dir=tmp_path / name / "work")
        report_work_dir(tmp_path / name / "work", tmp_path / name / "report")
    files = sorted(p.relative_to(tmp_path / "plain" / "report")
                   for p in (tmp_path / "plain" / "report").rglob("*") if p.is_file())
    assert files
    duplicates = re.compile(r"<tr><td>[^<]*(duplicates|revisits)[^<]*</td><td[^>]*>\d+</td></tr>")
    for path in files:
        with_stage = (tmp_path / "dedup" / "report" / path).read_text(encoding="utf-8")
        assert duplicates.sub("", with_stage) == (tmp_path / "plain" / "report" / path).read_text(
            encoding="utf-8"), path
    assert len(duplicates.findall(
        (tmp_path / "dedup" / "report" / "index.html").read_text(encoding="utf-8"))) == 5
    index = report_work_dir(tmp_path / "dedup" / "work", tmp_path / "content", mode=Mode.CONTENT)
    assert "content mode" in index.read_text(encoding="utf-8")
