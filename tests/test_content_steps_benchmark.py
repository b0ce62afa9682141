"""benchmarks/content_steps.py times every per-page step of a content run on the pages the run
cleans (results: benchmarks/results/content-steps-2026-11-25.md)."""

from __future__ import annotations

from contextlib import suppress
from pathlib import Path

from conftest import load_script

from warcdeboil.errors import RecordError
from warcdeboil.page.html import html_page
from warcdeboil.warc.reader import iter_records

ROOT = Path(__file__).resolve().parent.parent
steps = load_script("content_steps_benchmark", ROOT / "benchmarks" / "content_steps.py")


def test_every_step_is_timed_over_the_pages_a_run_cleans() -> None:
    archive = ROOT / "fixtures" / "crawl" / "crawl-00000.warc.gz"
    pages = 0
    for record in iter_records(str(archive)):
        with suppress(RecordError):  # a page beyond the limits: not cleaned
            pages += record.error is None and html_page(record) is not None
    times = steps.measure(archive, 1)
    assert times.pop("pages") == pages > 0
    assert [step.split(":")[0] for step in times] == ["pass 1"] * 6 + ["stage"] * 4 + [
        "pass 2"] * 10
    assert all(seconds >= 0 for seconds in times.values())
    assert times["pass 1: analyse"] > 0  # the largest step: never under the clock's resolution
