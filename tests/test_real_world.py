"""Every real-world file in ../shared/warcs: the run finishes and every record is accounted for."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import SHARED, shared_file, warcio_check
from warcio.archiveiterator import ArchiveIterator

from warcdeboil.run.local import clean
from warcdeboil.run.options import Options
from warcdeboil.warc.reader import iter_records

NAMES = sorted(p.name for p in (SHARED / "warcs").iterdir()
               if p.name not in ("README.md", "sources.json")) if (SHARED / "warcs").is_dir() \
    else []


def failing_ids(path: Path) -> set[str]:
    """Record IDs that `warcio check` reports a problem for."""
    _, report = warcio_check(path)
    return set(re.findall(r"WARC-Record-ID (<[^>]+>)", report))


@pytest.fixture(scope="module")
def cleaned(tmp_path_factory: pytest.TempPathFactory):
    shared_file("warcs", "README.md")
    out = tmp_path_factory.mktemp("out")
    summary = clean([SHARED / "warcs" / name for name in NAMES], out, Options(workers=2))
    return out, {Path(t.path).name: t for t in summary.files}, summary


def test_there_are_real_files_to_read() -> None:
    shared_file("warcs", "README.md")
    assert len(NAMES) == 22


@pytest.mark.parametrize("name", NAMES)
def test_every_record_is_accounted_for(cleaned, name: str) -> None:
    _, files, _ = cleaned
    tally = files[name]
    assert tally.balanced
    assert tally.records == len(list(iter_records(SHARED / "warcs" / name)))
    assert tally.records > 0


@pytest.mark.parametrize("name", NAMES)
def test_outputs_are_valid_and_read_back_by_warcio(cleaned, name: str) -> None:
    out, files, _ = cleaned
    tally = files[name]
    output = Path(tally.output)
    assert output.parent == out
    # We never add a problem: any record warcio faults in the output it faults in the input.
    assert failing_ids(output) <= failing_ids(SHARED / "warcs" / name)
    with open(output, "rb") as fh:
        theirs = [r.rec_headers.get_header("WARC-Record-ID") for r in ArchiveIterator(fh)]
    assert theirs == [r.record_id for r in iter_records(output)]
    assert len(theirs) == 1 + tally.cleaned + tally.carried  # our warcinfo, then the input's


def test_known_damage_is_reported_by_reason(cleaned) -> None:
    _, files, summary = cleaned
    assert summary.problems  # several of these files are broken on purpose
    clipped = files["chatnoir-eu__chatnoir-resiliparse__clipped.warc.gz"]
    assert list(clipped.problems) == ["gzip member is truncated: record is truncated"]
    arc = files["archivesunleashed__aut__example.arc.gz"]
    assert arc.records == 300 and not arc.problems
    assert files["webrecorder__pywb__example-bad.warc.gz.bad"].records == 6
    # One gzip stream whose ARC records declare 680 bytes, two of them followed by the next
    # record within those bytes, one with the date "null": every record is read.
    bad = files["archivesunleashed__aut__badexample.arc.gz"]
    assert (bad.records, bad.skipped) == (6, 0)
    assert bad.problems == {
        "ARC header with an invalid date": 1,
        "ARC length runs past the end of the record": 2,
        "ARC record is truncated": 1,
        "records share gzip members or zstd frames, so random access is impossible: "
        "`warcdeboil recompress` rewrites the file one member per record": 1,
    }
    # Its second response's status line is HTTPX/1.1 200 OK: carried, and said.
    extra = files["webrecorder__pywb__example-extra.warc"]
    assert extra.problems == {"HTTP response with a malformed status line": 1}
