"""scripts/convert_wceb.py: a WCXB checkout becomes an evaluation archive and its gold, in the
layout of ../shared/eval. (Content mode's F1 on the converted data, which is not part of the
project, is measured by benchmarks/pagetypes.py: benchmarks/results/pagetypes-2026-11-27.md.)"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from conftest import ROOT, load_script

from warcdeboil.evaluate import load_gold
from warcdeboil.page.html import html_page
from warcdeboil.warc.reader import iter_records


def _page(source: Path, page_id: str, url: str, page_type: str, html: str, gold: str,
          gold_dir: str = "benchmark/ground-truth", html_dir: str = "release/html") -> None:
    truth = {"url": url, "file_id": page_id, "_internal": {"page_type": {"primary": page_type}},
             "ground_truth": {"title": "t", "main_content": gold}}
    for folder in (gold_dir, html_dir):
        (source / folder).mkdir(parents=True, exist_ok=True)
    (source / gold_dir / f"{page_id}.json").write_text(json.dumps(truth))
    with gzip.open(source / html_dir / f"{page_id}.html.gz", "wt") as fh:
        fh.write(html)


def _split_page(source: Path, split: str, page_id: str, url: str, text: str) -> None:
    _page(source, page_id, url, "article", f"<html><body><p>{text}</p></body></html>", text,
          f"{split}/ground-truth", f"{split}/html")


def test_checkout_becomes_archive_and_gold(tmp_path: Path) -> None:
    source = tmp_path / "wcxb"
    (source / "benchmark" / "ground-truth").mkdir(parents=True)
    (source / "release" / "html").mkdir(parents=True)
    story = "Caf\u00e9 story text."
    _page(source, "0001", "https://www.a.example/post", "article",
          f"<html><body><nav>Home</nav><p>{story}</p></body></html>", story)
    _page(source, "0002", "https://www.a.example/post", "forum",  # the same URL fetched again
          "<html><body><p>Second copy.</p></body></html>", "Second copy.")
    _page(source, "0003", "https://b.example/x", "product", "<p>Lost</p>", "no html for it")
    (source / "release" / "html" / "0003.html.gz").unlink()  # a page without its HTML is left out
    converter = load_script("convert_wceb", ROOT / "scripts" / "convert_wceb.py")
    out = tmp_path / "out"
    converter.main([str(source), "--out", str(out)])
    first = (out / "wceb.warc.gz").read_bytes(), (out / "wceb.gold.jsonl.gz").read_bytes()
    converter.main([str(source), "--out", str(out)])
    assert ((out / "wceb.warc.gz").read_bytes(), (out / "wceb.gold.jsonl.gz").read_bytes()) == first

    gold = load_gold(out / "wceb.gold.jsonl.gz")
    urls = ["https://www.a.example/post", "https://www.a.example/post#wceb-0002"]
    assert list(gold) == urls
    assert [g.site for g in gold.values()] == ["a.example", "a.example"]
    assert gold[urls[0]].gold == "Caf\u00e9 story text." and gold[urls[1]].dataset == "wceb"
    with gzip.open(out / "wceb.gold.jsonl.gz", "rt", encoding="utf-8") as fh:
        assert [json.loads(line)["page_type"] for line in fh] == ["article", "forum"]
    pages = [html_page(r) for r in iter_records(out / "wceb.warc.gz") if r.rec_type == "response"]
    assert [p.url for p in pages if p is not None] == urls
    markup = pages[0].markup if pages[0] is not None else b""
    text = markup if isinstance(markup, str) else markup.decode("utf-8")
    assert "Caf\u00e9 story text." in text


def test_release_splits_become_two_sets_and_the_test_split_is_never_fitted(
        tmp_path: Path) -> None:
    source = tmp_path / "wcxb"
    _split_page(source, "dev", "0001", "https://a.example/1", "Dev page one.")
    _split_page(source, "dev", "0002", "https://b.example/2", "Dev page two.")
    _split_page(source, "test", "4011", "https://a.example/1", "Test page.")  # same URL: own set
    # release 1.0 has gold without a URL and gold without a main text: both are left out
    kind = {"page_type": {"primary": "article"}}
    (source / "dev" / "ground-truth" / "0003.json").write_text(json.dumps(
        {"_internal": kind, "ground_truth": {"main_content": "x"}}))
    (source / "dev" / "ground-truth" / "0004.json").write_text(json.dumps(
        {"url": "https://c.example/", "file_id": "0004", "_internal": kind,
         "ground_truth": {"title": "t"}}))
    for page_id in ("0003", "0004"):
        with gzip.open(source / "dev" / "html" / f"{page_id}.html.gz", "wt") as fh:
            fh.write("<p>x</p>")
    converter = load_script("convert_wceb", ROOT / "scripts" / "convert_wceb.py")
    out = tmp_path / "out"
    converter.main([str(source), "--out", str(out)])

    dev, test = load_gold(out / "wceb.gold.jsonl.gz"), load_gold(out / "wceb-test.gold.jsonl.gz")
    assert list(dev) == ["https://a.example/1", "https://b.example/2"]
    assert list(test) == ["https://a.example/1"]
    assert test["https://a.example/1"].gold == "Test page."
    assert test["https://a.example/1"].dataset == "wceb-test"
    with gzip.open(out / "wceb-test.gold.jsonl.gz", "rt", encoding="utf-8") as fh:
        assert [json.loads(line)["split"] for line in fh] == ["test"]
    for name, urls in (("wceb", list(dev)), ("wceb-test", list(test))):
        records = [r for r in iter_records(out / f"{name}.warc.gz")]
        assert [r.rec_type for r in records] == ["warcinfo"] + ["response"] * len(urls)
        assert [html_page(r).url for r in records[1:]] == urls  # type: ignore[union-attr]
    ids = [r.record_id for name in ("wceb", "wceb-test")
           for r in iter_records(out / f"{name}.warc.gz")]
    assert len(set(ids)) == len(ids) == 5  # two warcinfo records and three pages, none shared

    trainer = load_script("train_content", ROOT / "scripts" / "train_content.py")
    calibration = next(s for s in ("a.example", "b.example", "c.example", "d.example")
                       if not trainer.held_out(s))
    assert trainer.fitted_on("wceb", calibration)
    assert not trainer.fitted_on("wceb-test", calibration)  # the test split, whatever its sites
