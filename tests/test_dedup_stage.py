"""The duplicate stage of a run: groups, kept pages, what each output format does with them."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import (
    ArchiveBuilder,
    http_response,
    jsonl_pages,
    site_pages,
    warc_record,
    warcio_check,
)
from typer.testing import CliRunner

from warcdeboil.cli import app
from warcdeboil.dedup import iter_url_groups
from warcdeboil.dedup.verdicts import DedupMode
from warcdeboil.errors import ConfigError
from warcdeboil.output.formats import OutputFormat
from warcdeboil.run.local import clean
from warcdeboil.run.options import Options
from warcdeboil.warc.compression import Codec
from warcdeboil.warc.reader import iter_records

ORIGINAL = "http://news.example/story/001"
COPY = "http://news.example/story/001?utm_source=feed"
SYNDICATED = "http://news.example/story/002"
MIRROR = "http://mirror.example/story/000"
DUPLICATE_KEYS = ("duplicate_of", "duplicate_group_size", "duplicate_similarity",
                  "duplicate_kind")


def _page_records(pages: list[tuple[str, bytes, str]]) -> list[tuple[list[tuple[str, str]], bytes]]:
    records = [warc_record("warcinfo", "", b"software: tests\r\n",
                           content_type="application/warc-fields")]
    for url, body, date in pages:
        request = f"GET {url} HTTP/1.1\r\n\r\n".encode()
        records.append(warc_record("request", url, request))
        headers, block = warc_record("response", url, http_response(body))
        records.append(([(k, date if k == "WARC-Date" else v) for k, v in headers], block))
    return records


@pytest.fixture
def dup_crawl(tmp_path: Path, write_archive: ArchiveBuilder) -> Path:
    """a.warc.gz: six pages of news.example, then a byte-for-byte copy of story 1 under a
    tracking parameter, captured a day later (an exact duplicate). b.warc.gz: four pages of
    mirror.example under its own template, the first carrying story 2 of news.example without
    its last paragraph (a near duplicate, across sites and files)."""
    src = tmp_path / "crawl"
    src.mkdir()
    news = [(url, html.encode(), "2024-05-01T12:00:00Z") for url, html in
            site_pages("news.example", 6)]
    copy = next(body for url, body, _ in news if url == ORIGINAL)
    news.append((COPY, copy, "2024-05-02T12:00:00Z"))
    write_archive(src / "a.warc.gz", _page_records(news), Codec.GZIP)
    story = dict(site_pages("news.example", 6))[SYNDICATED]
    article = story[story.index("<article>"):story.index("<p>Second")] + "</article>"
    mirror = []
    for url, html in site_pages("mirror.example", 4):
        if url == MIRROR:
            html = html[: html.index("<article>")] + article + html[html.index("<footer>"):]
        else:  # the mirror's own stories
            html = html.replace("word", "item").replace("Headline number", "Mirror title")
            html = html.replace("Second paragraph of story", "A closing line for the entry")
        mirror.append((url, html.encode(), "2024-06-01T00:00:00Z"))
    write_archive(src / "b.warc.gz", _page_records(mirror), Codec.GZIP)
    return src


def test_groups_and_kept_pages_across_sites_and_files(dup_crawl: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    summary = clean([dup_crawl], tmp_path / "out", Options(workers=2, format=OutputFormat.JSONL),
                    work_dir=work)
    rows = list(iter_url_groups(work))
    assert [site for site, _, _ in rows] == ["mirror.example"] * 4 + ["news.example"] * 7
    assert rows == sorted(rows)  # site, then URL
    group = {url: gid for _, url, gid in rows}
    # Pages are numbered in input order (a.warc.gz: 0-6, b.warc.gz: 7-10); a group's id is
    # its first page's number, a page alone keeps its own.
    assert group[ORIGINAL] == group[COPY] == 1
    assert group[SYNDICATED] == group[MIRROR] == 2
    assert sorted(group.values()) == [0, 1, 1, 2, 2, 3, 4, 5, 8, 9, 10]
    assert summary.to_dict()["duplicates"] == {
        "groups": 2, "pages_searched": 11, "exact": 1, "near": 1,
        "dropped": {"exact": 0, "near": 0}, "revisits": 0,
    }


def test_jsonl_says_each_pages_group(dup_crawl: Path, tmp_path: Path) -> None:
    clean([dup_crawl], tmp_path / "out", Options(workers=1, format=OutputFormat.JSONL))
    pages = {page["url"]: page for page in jsonl_pages(tmp_path / "out")}
    assert len(pages) == 11
    fields = {url: tuple(page[k] for k in DUPLICATE_KEYS) for url, page in pages.items()}
    assert fields[ORIGINAL] == (None, 2, None, None)  # the copy captured first is kept
    assert fields[COPY] == (ORIGINAL, 2, 1.0, "exact")
    assert fields[SYNDICATED] == (None, 2, None, None)  # more text than the mirror's copy
    of, size, similarity, kind = fields[MIRROR]
    assert (of, size, kind) == (SYNDICATED, 2, "near")
    # 59 of the original's 68 five-word shingles (the last paragraph's 9 words are gone):
    # Jaccard 0.868, estimated from 128 positions (standard error 0.03).
    assert 0.77 < similarity < 0.97 and similarity == round(similarity, 4)
    alone = [v for url, v in fields.items() if url not in (ORIGINAL, COPY, SYNDICATED, MIRROR)]
    assert alone == [(None, 1, None, None)] * 7


@pytest.mark.parametrize("fmt", [OutputFormat.JSONL, OutputFormat.MARKDOWN, OutputFormat.TEXT],
                         ids=lambda f: f.value)
def test_drop_leaves_duplicates_out_and_counts_them(dup_crawl: Path, tmp_path: Path,
                                                    fmt: OutputFormat) -> None:
    summary = clean([dup_crawl], tmp_path / "out",
                    Options(workers=1, format=fmt, dedup=DedupMode.DROP))
    if fmt is OutputFormat.TEXT:
        urls = [r.target_uri for path in sorted((tmp_path / "out").glob("*.wet.gz"))
                for r in iter_records(path) if r.rec_type == "conversion"]
    else:
        written = jsonl_pages(tmp_path / "out")
        urls = [page["url"] for page in written]
        assert all(page["duplicate_of"] is None for page in written)
    assert len(urls) == 9 and COPY not in urls and MIRROR not in urls
    assert ORIGINAL in urls and SYNDICATED in urls
    data = summary.to_dict()
    assert data["duplicates"]["dropped"] == {"exact": 1, "near": 1}
    assert data["pages"] == 11  # cleaned, as pages dropped by perplexity are: none unaccounted
    assert all(f["records"] == f["cleaned"] + f["carried"] + f["skipped"] for f in data["files"])


def test_revisit_replaces_the_later_exact_copy(dup_crawl: Path, tmp_path: Path) -> None:
    from warcio.archiveiterator import ArchiveIterator

    out = tmp_path / "out"
    summary = clean([dup_crawl], out, Options(workers=1, dedup=DedupMode.REVISIT))
    assert summary.to_dict()["duplicates"]["revisits"] == 1
    output = out / "a.warc.gz"
    status, report = warcio_check(output)
    assert status == 0, report
    source = {r.target_uri: r for r in iter_records(dup_crawl / "a.warc.gz")
              if r.rec_type == "response"}
    with open(output, "rb") as fh:
        records = [(r.rec_headers, r.http_headers, r.content_stream().read())
                   for r in ArchiveIterator(fh)]
    assert len(records) == 1 + len(list(iter_records(dup_crawl / "a.warc.gz")))  # + warcinfo
    revisits = [r for r in records if r[0].get_header("WARC-Type") == "revisit"]
    assert len(revisits) == 1
    headers, http, payload = revisits[0]
    assert headers.protocol == "WARC/1.1"
    assert headers.get_header("WARC-Profile") == (
        "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest")
    assert headers.get_header("WARC-Target-URI") == COPY
    assert headers.get_header("WARC-Date") == "2024-05-02T12:00:00Z"
    assert headers.get_header("WARC-Refers-To-Target-URI") == ORIGINAL
    assert headers.get_header("WARC-Refers-To-Date") == "2024-05-01T12:00:00Z"
    assert headers.get_header("WARC-Source-Record-ID") == source[COPY].record_id
    # It names the original's record as written (cleaned: a new id and payload digest).
    cleaned = next(r for r in records if r[0].get_header("WARC-Target-URI") == ORIGINAL
                   and r[0].get_header("WARC-Type") == "response")
    assert headers.get_header("WARC-Refers-To") == cleaned[0].get_header("WARC-Record-ID")
    assert headers.get_header("WARC-Payload-Digest") == cleaned[0].get_header(
        "WARC-Payload-Digest")
    assert payload == b""  # the payload is gone, the HTTP headers stay
    assert http.get_statuscode() == "200"
    assert http.get_header("Content-Type") == "text/html; charset=utf-8"
    head = source[COPY].block[: source[COPY].block.index(b"\r\n\r\n") + 4]
    assert int(headers.get_header("Content-Length")) == len(head)
    # The near duplicate in b.warc.gz is cleaned like any page: revisits are for exact copies.
    assert [r.rec_type for r in iter_records(out / "b.warc.gz")].count("revisit") == 0


def test_each_format_has_its_default_and_refuses_what_it_cannot_do(dup_crawl: Path,
                                                                   tmp_path: Path) -> None:
    defaults = {fmt: Options(format=fmt).effective_dedup for fmt in OutputFormat}
    assert defaults == {OutputFormat.WARC: DedupMode.OFF, OutputFormat.TEXT: DedupMode.OFF,
                        OutputFormat.JSONL: DedupMode.MARK,
                        OutputFormat.MARKDOWN: DedupMode.MARK,
                        OutputFormat.PARQUET: DedupMode.MARK}
    with pytest.raises(ConfigError, match="--dedup drop does not apply to --format warc"):
        Options(format=OutputFormat.WARC, dedup=DedupMode.DROP)
    runner = CliRunner()
    for fmt, mode in (("warc", "mark"), ("text", "revisit"), ("jsonl", "revisit")):
        result = runner.invoke(app, ["clean", str(dup_crawl), "-o", str(tmp_path / "o"),
                                     "--format", fmt, "--dedup", mode])
        assert result.exit_code == 2, result.output
        assert "does not apply to --format" in result.output
    assert not (tmp_path / "o").exists()
    result = runner.invoke(app, ["clean", str(dup_crawl), "-o", str(tmp_path / "d"), "-j", "1",
                                 "--format", "jsonl", "--dedup", "drop", "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["duplicates"]["dropped"] == {"exact": 1, "near": 1}
    result = runner.invoke(app, ["clean", str(dup_crawl), "-o", str(tmp_path / "t"), "-j", "1",
                                 "--format", "text", "--dedup", "drop"])
    assert result.exit_code == 0, result.output
    assert ("duplicates               2   exact: 1, near: 1 (groups: 2); dropped: exact 1, "
            "near 1") in result.stderr


def test_off_writes_what_a_run_without_the_stage_writes(dup_crawl: Path, tmp_path: Path) -> None:
    """JSONL without --dedup is JSONL with it, less its four fields, byte for byte; the text
    summary names duplicates only when the stage ran."""
    clean([dup_crawl], tmp_path / "off", Options(workers=1, format=OutputFormat.JSONL,
                                                  dedup=DedupMode.OFF))
    summary = clean([dup_crawl], tmp_path / "mark", Options(workers=1, format=OutputFormat.JSONL))
    for name in ("a.jsonl.gz", "b.jsonl.gz"):
        off = gzip.decompress((tmp_path / "off" / name).read_bytes()).decode().splitlines()
        marked = gzip.decompress((tmp_path / "mark" / name).read_bytes()).decode().splitlines()
        stripped = []
        for line in marked:
            page = json.loads(line)
            keys = list(page)  # the four together, in the schema's order
            at = keys.index("duplicate_of")
            assert keys[at:at + 4] == list(DUPLICATE_KEYS)
            stripped.append(json.dumps({k: v for k, v in page.items()
                                        if k not in DUPLICATE_KEYS}, ensure_ascii=False))
        assert off == stripped
        assert all("duplicate_of" not in line for line in off)
    assert summary.dedup is not None and summary.dedup["groups"] == 2
    clean([dup_crawl], tmp_path / "warc", Options(workers=1), work_dir=tmp_path / "w")
    assert not (tmp_path / "w" / "dedup").exists()  # WARC's default: no stage at all


def test_stale_verdicts_are_redone(dup_crawl: Path, tmp_path: Path) -> None:
    """A work directory reused for other inputs: the index, the profiles and the verdicts are
    made again, so the second run's pages get the second run's groups."""
    work = tmp_path / "work"
    first = tmp_path / "first"
    first.mkdir()
    (first / "a.warc.gz").write_bytes((dup_crawl / "a.warc.gz").read_bytes())
    options = Options(workers=1, format=OutputFormat.JSONL)
    clean([first], tmp_path / "o1", options, work_dir=work, resume=True)
    assert {p["url"]: p["duplicate_group_size"] for p in jsonl_pages(tmp_path / "o1")}[
        SYNDICATED] == 1
    key = json.loads((work / "dedup" / "dedup.json").read_text())["key"]
    again = clean([first], tmp_path / "o1b", options, work_dir=work, resume=True)
    assert json.loads((work / "dedup" / "dedup.json").read_text())["key"] == key  # reused
    assert again.dedup == {"pages": 7, "groups": 1, "exact": 1, "near": 0, "candidates": 0,
                           "confirmed": 0, "looked": 0, "refused": 0}
    clean([dup_crawl], tmp_path / "o2", options, work_dir=work, resume=True)
    assert json.loads((work / "dedup" / "dedup.json").read_text())["key"] != key
    pages = {p["url"]: p for p in jsonl_pages(tmp_path / "o2")}
    assert pages[SYNDICATED]["duplicate_group_size"] == 2
    assert pages[MIRROR]["duplicate_of"] == SYNDICATED


@pytest.mark.spark
@pytest.mark.parametrize("mode", [DedupMode.MARK, DedupMode.DROP], ids=lambda m: m.value)
def test_spark_finds_the_local_groups(spark, dup_crawl: Path, tmp_path: Path,
                                      mode: DedupMode) -> None:
    from warcdeboil.spark import run_spark

    options = Options(workers=1, format=OutputFormat.JSONL, dedup=mode)
    local = clean([dup_crawl], tmp_path / "local", options)
    distributed = run_spark([str(dup_crawl)], str(tmp_path / "spark"), options, session=spark)
    assert distributed.to_dict()["duplicates"] == local.to_dict()["duplicates"]
    assert distributed.dedup is not None and local.dedup is not None
    assert {k: distributed.dedup[k] for k in ("pages", "groups", "exact", "near")} == {
        k: local.dedup[k] for k in ("pages", "groups", "exact", "near")}
    for name in ("a.jsonl.gz", "b.jsonl.gz"):
        assert (tmp_path / "spark" / name).read_bytes() == (tmp_path / "local" / name).read_bytes()
    marked = {p["url"]: p["duplicate_of"] for p in jsonl_pages(tmp_path / "spark")}
    if mode is DedupMode.MARK:
        assert marked[COPY] == ORIGINAL and marked[MIRROR] == SYNDICATED
    else:
        assert COPY not in marked and MIRROR not in marked


@pytest.mark.spark
def test_spark_writes_the_local_revisit(spark, dup_crawl: Path, tmp_path: Path) -> None:
    from warcdeboil.spark import run_spark

    options = Options(workers=1, dedup=DedupMode.REVISIT)
    clean([dup_crawl], tmp_path / "local", options)
    run_spark([str(dup_crawl)], str(tmp_path / "spark"), options, session=spark)
    for name in ("a.warc.gz", "b.warc.gz"):
        assert (tmp_path / "spark" / name).read_bytes() == (tmp_path / "local" / name).read_bytes()
    assert [r.rec_type for r in iter_records(tmp_path / "spark" / "a.warc.gz")].count(
        "revisit") == 1


def test_the_report_counts_duplicates(dup_crawl: Path, tmp_path: Path) -> None:
    import re

    result = CliRunner().invoke(app, ["clean", str(dup_crawl), "-o", str(tmp_path / "out"),
                                      "-j", "1", "--format", "jsonl", "--dedup", "drop",
                                      "--report", str(tmp_path / "report")])
    assert result.exit_code == 0, result.output
    index = (tmp_path / "report" / "index.html").read_text(encoding="utf-8")
    counts = dict(re.findall(r"<td>(duplicates [^<]*|[a-z]+ duplicates)</td><td[^>]*>([\d,]+)<",
                             index))
    assert counts == {"exact duplicates": "1", "near duplicates": "1",
                      "duplicates dropped (exact)": "1", "duplicates dropped (near)": "1",
                      "duplicates written as revisits": "0"}


@pytest.mark.parametrize(("lm", "workers"), [("auto", 1), ("given", 2)])
def test_the_language_model_stage_signs_the_pages_as_the_stage_would(
        dup_crawl: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lm: str,
        workers: int) -> None:
    """With buckets (or --lm auto), the language-model stage's walk of the page stores signs
    the pages for the duplicate stage, which then only decides: the signature files are byte
    for byte those the stage's own signing writes, and the groups those of a run without a
    model."""
    from warcdeboil.dedup.stage import sign_file
    from warcdeboil.dedup.verdicts import SignJob, signatures_dir
    from warcdeboil.lm import LanguageModel
    from warcdeboil.lm.scoring import LmSettings
    from warcdeboil.run import local as pipeline
    from warcdeboil.site.pagestore import page_store_path
    from warcdeboil.site.sitekey import SiteKeyMode

    model = "auto"
    if lm == "given":
        model = str(tmp_path / "en.lm")
        LanguageModel.train([f"Headline number {i} of the story with a word or two"
                             for i in range(50)]).save(model)
    signed: list[bool] = []
    find = pipeline.find_duplicates
    monkeypatch.setattr(pipeline, "find_duplicates", lambda *args, **kwargs: (
        signed.append(kwargs["signed"]), find(*args, **kwargs))[1])
    work = tmp_path / "work"
    clean([dup_crawl], tmp_path / "lm", Options(workers=workers, format=OutputFormat.JSONL,
                                                 lm=LmSettings(model, buckets=True)),
          work_dir=work)
    assert signed == [True]
    profiles = json.loads((work / "profiles" / "profiles.json").read_text())
    own = tmp_path / "own"
    for part in range(2):
        sign_file(SignJob(str(page_store_path(work / "pages", part)), str(own), part,
                          str(work / "profiles"), profiles["partitions"],
                          SiteKeyMode(profiles["site_key"])))
    names = sorted(path.name for path in own.iterdir())
    assert names == [f"p00000{part}.{kind}" for part in (0, 1) for kind in ("meta", "sig", "str")]
    for name in names:
        assert (own / name).read_bytes() == (signatures_dir(work / "dedup") / name).read_bytes()
    clean([dup_crawl], tmp_path / "plain", Options(workers=1, format=OutputFormat.JSONL))
    groups = [[page[k] for k in ("url", *DUPLICATE_KEYS)] for page in jsonl_pages(tmp_path / "lm")]
    assert groups == [[page[k] for k in ("url", *DUPLICATE_KEYS)]
                      for page in jsonl_pages(tmp_path / "plain")]
    assert sum(size == 2 for _, _, size, _, _ in groups) == 4


def test_pass_2_takes_what_the_stage_found_each_template_removes(
        dup_crawl: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The stage keeps, for every page, what its template removes (warcdeboil.dedup.doomed):
    the very candidates and slots dom.find_doomed finds; pass 2 takes them instead of finding
    them again, and writes what it writes without them, byte for byte. (A WARC output reads its
    pages without the structure marks the stage signed them with, and finds them again.)"""
    from warcdeboil.dedup.doomed import doomed_path, iter_doomed
    from warcdeboil.page import dom
    from warcdeboil.run import apply
    from warcdeboil.site import clean as site_clean
    from warcdeboil.site.pagestore import iter_page_store, page_store_path
    from warcdeboil.site.profiles import ProfileReader
    from warcdeboil.site.sitekey import SiteKeyer, SiteKeyMode

    options = Options(workers=1, format=OutputFormat.JSONL)
    work = tmp_path / "work"
    clean([dup_crawl], tmp_path / "found", options, work_dir=work, keep_work_dir=True)
    meta = json.loads((work / "profiles" / "profiles.json").read_text())
    keyer = SiteKeyer(SiteKeyMode(meta["site_key"]))
    profiles = ProfileReader(work / "profiles", meta["partitions"])
    doomed_pages = 0
    for part in range(2):
        entries = list(iter_page_store(page_store_path(work / "pages", part)))
        kept = list(iter_doomed(doomed_path(work / "dedup", part)))
        assert [ordinal for ordinal, _ in kept] == [entry.ordinal for entry in entries]
        for entry, (_, known) in zip(entries, kept, strict=True):
            profile = profiles.get(keyer(entry.url))
            assert profile is not None
            assert known == dom.find_doomed(entry.page, profile.template,
                                            profile.template_slots)
            doomed_pages += bool(known.candidates or known.slots)
    profiles.close()
    assert doomed_pages == 11  # every page has template to lose

    def never(*_: object) -> dom.Doomed:
        raise AssertionError("pass 2 found again what the stage found")

    monkeypatch.setattr(dom, "find_doomed", never)
    monkeypatch.setattr(site_clean, "find_doomed", never)
    clean([dup_crawl], tmp_path / "taken-jsonl", Options(workers=1, format=OutputFormat.JSONL))
    monkeypatch.undo()
    clean([dup_crawl], tmp_path / "taken-warc", Options(workers=1, dedup=DedupMode.REVISIT))
    for fmt, extra in ((OutputFormat.JSONL, {}), (OutputFormat.WARC,
                                                  {"dedup": DedupMode.REVISIT})):
        # The same run, pass 2 finding everything itself (side files that name no page).
        monkeypatch.setattr(apply, "DoomedReader", lambda _: SimpleNamespace(get=lambda _: None))
        found = tmp_path / f"found-{fmt.value}"
        clean([dup_crawl], found, Options(workers=1, format=fmt, **extra))  # type: ignore[arg-type]
        monkeypatch.undo()
        for name in ("a", "b"):
            suffix = ".jsonl.gz" if fmt is OutputFormat.JSONL else ".warc.gz"
            assert ((tmp_path / f"taken-{fmt.value}" / f"{name}{suffix}").read_bytes()
                    == (found / f"{name}{suffix}").read_bytes())


def test_damaged_template_cuts_are_one_line(tmp_path: Path) -> None:
    from warcdeboil.dedup.doomed import DoomedWriter, iter_doomed
    from warcdeboil.errors import WorkDirError
    from warcdeboil.page.dom import Doomed

    path = tmp_path / "f000000.doomed"
    with DoomedWriter(path) as out:
        out.add(4, Doomed({1, 2, 3}, [(5, 9, 0), (20, 30, 2)]))
    assert list(iter_doomed(path)) == [(4, Doomed({1, 2, 3}, [(5, 9, 0), (20, 30, 2)]))]
    path.write_bytes(path.read_bytes()[:-2])
    with pytest.raises(WorkDirError, match="damaged template cuts"):
        list(iter_doomed(path))
