"""benchmarks/content_rules.py: content mode's judgement scored in one process, by split and page
type (results: benchmarks/results/ceiling-2026-11-28.md)."""

from __future__ import annotations

import gzip
import json
import zlib
from pathlib import Path

import pytest
from conftest import ArchiveBuilder, http_response, load_script, warc_record

from warcdeboil.warc.compression import Codec

ROOT = Path(__file__).resolve().parent.parent
content_rules = load_script("content_rules_bench", ROOT / "benchmarks" / "content_rules.py")

PARAGRAPHS = (
    "The harbour authority reopened the north pier on Monday after three weeks of repairs to "
    "the timber decking that the January storms had torn loose along its outer half.",
    "Fishing boats had been mooring at the south quay in the meantime, which meant a longer "
    "walk for the crews and a queue at the only crane able to lift the day's catch.",
)
# blog.example's CRC-32 is even (a calibration site), news.example's odd (held out).
SITES = {"blog.example": "article", "news.example": "listing"}


def _dataset(tmp_path: Path, write_archive: ArchiveBuilder) -> Path:
    body = "".join(f"<p>{p}</p>" for p in PARAGRAPHS)
    html = f"<html><body><nav><a href='/'>Home</a></nav><main>{body}</main></body></html>"
    records, gold = [], []
    for site, page_type in SITES.items():
        url = f"https://{site}/pier"
        records.append(warc_record("response", url, http_response(html.encode())))
        gold.append({"url": url, "site": site, "gold": "\n".join(PARAGRAPHS),
                     "page_type": page_type})
    with gzip.open(tmp_path / "tiny.gold.jsonl.gz", "wt", encoding="utf-8") as fh:
        fh.writelines(json.dumps(obj) + "\n" for obj in gold)
    return write_archive(tmp_path / "tiny.warc.gz", records, Codec.GZIP)


def test_only_the_calibration_sites_unless_asked(tmp_path: Path,
                                                 write_archive: ArchiveBuilder) -> None:
    assert [zlib.crc32(site.encode()) % 2 for site in SITES] == [0, 1]
    archive = _dataset(tmp_path, write_archive)
    calibration = content_rules.page_f1(archive, "calibration")
    assert list(calibration) == ["https://blog.example/pier"]
    f1, split, page_type, large = calibration["https://blog.example/pier"]
    assert (split, page_type, large) == ("calibration", "article", False)
    assert f1 > 0.95  # the two paragraphs, kept whole
    every = content_rules.page_f1(archive, "all")
    assert every["https://news.example/pier"][1:3] == ("held-out", "listing")
    assert set(content_rules.page_f1(archive, "held-out")) == {"https://news.example/pier"}


def test_the_command_prints_each_group_and_writes_the_pages(
        tmp_path: Path, write_archive: ArchiveBuilder, capsys: pytest.CaptureFixture[str]) -> None:
    archive = _dataset(tmp_path, write_archive)
    f1 = {url: f"{row[0]:.4f}" for url, row in content_rules.page_f1(archive, "all").items()}
    content_rules.main([str(archive), "--split", "all", "--json", str(tmp_path / "pages.json")])
    lines = capsys.readouterr().out.splitlines()
    blog, news = f1["https://blog.example/pier"], f1["https://news.example/pier"]
    assert [line.split() for line in lines] == [
        ["tiny", "calibration", blog, "(1)"], ["tiny", "calibration,", "article", blog, "(1)"],
        ["tiny", "held-out", news, "(1)"], ["tiny", "held-out,", "listing", news, "(1)"]]
    pages = json.loads((tmp_path / "pages.json").read_text())
    assert set(pages["tiny"]) == {"https://blog.example/pier", "https://news.example/pier"}
