"""benchmarks/page_size.py times one generated page by its size (results:
benchmarks/results/page-size-2026-11-28.md): its pages are the same every time, of about the size
asked, and a run cleans each as one page."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from conftest import ROOT, load_script

from warcdeboil import Options, OutputFormat, clean

bench = load_script("page_size_benchmark", ROOT / "benchmarks" / "page_size.py")


@pytest.mark.parametrize("shape", bench.SHAPES)
def test_a_generated_page_is_cleaned_as_one_page(shape: str, tmp_path: Path) -> None:
    html = bench.make_page(shape, 200_000)
    assert html == bench.make_page(shape, 200_000)
    assert 190_000 < len(html) <= 200_000
    archive = tmp_path / "page.warc.gz"
    bench.write_archive(archive, html)
    clean([archive], tmp_path / "out", Options(format=OutputFormat.JSONL))
    (line,) = gzip.decompress((tmp_path / "out" / "page.jsonl.gz").read_bytes()).splitlines()
    page = json.loads(line)
    assert page["url"] == bench.URL
    # Most of a page of made-up prose is kept, none of it is a copy.
    assert len(page["text"]) > 0.5 * len(html)
    assert "copied_block" not in page["removed"]


def test_the_slope_on_log_log_axes() -> None:
    assert bench.slope([1, 2, 4], [3.0, 6.0, 12.0]) == pytest.approx(1.0)
    assert bench.slope([1, 2, 4], [1.0, 4.0, 16.0]) == pytest.approx(2.0)
    # Between 8 and 16 MiB, whatever else was measured.
    assert bench.top_slope([1, 8, 14, 16], [9.0, 1.0, 5.0, 4.0]) == pytest.approx(2.0)
