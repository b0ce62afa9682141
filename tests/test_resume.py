"""Interrupted runs: no partial file under a final name, and --resume finishes the job."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FIXTURES

from warcdeboil.run import apply as apply_module
from warcdeboil.run.local import clean
from warcdeboil.run.options import Options
from warcdeboil.warc.reader import iter_records

CRAWL = FIXTURES / "crawl"


def outputs(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


def where_they_differ(got: Path, reference: Path) -> str:
    """The outputs of two runs compared name by name, and for each that differs its first
    record that does: what an assertion says, so a failure seen once can be told apart."""
    names = sorted({p.name for p in got.iterdir()} | {p.name for p in reference.iterdir()})
    said = []
    for name in names:
        a, b = got / name, reference / name
        if not a.exists() or not b.exists():
            said.append(f"{name}: only in {'the reference' if b.exists() else 'the run'}")
        elif a.read_bytes() != b.read_bytes():
            ours, theirs = list(iter_records(a)), list(iter_records(b))
            first = next((i for i, (x, y) in enumerate(zip(ours, theirs, strict=False))
                          if (x.headers, x.block) != (y.headers, y.block)), None)
            at = ("records equal, bytes not" if first is None else
                  f"record {first} ({theirs[first].rec_type} {theirs[first].target_uri}) "
                  f"at {ours[first].offset} / {theirs[first].offset}")
            said.append(f"{name}: {len(ours)} records against {len(theirs)}; first change: {at}")
    return "; ".join(said)


def test_interrupted_write_leaves_no_partial_output_and_resume_finishes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reference = tmp_path / "reference"
    clean([CRAWL], reference, Options(workers=1))

    work, out = tmp_path / "work", tmp_path / "out"
    real_emit = apply_module._emit
    calls = {"n": 0}

    def interrupted(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 20:  # in the second file
            raise KeyboardInterrupt
        return real_emit(*args, **kwargs)

    monkeypatch.setattr(apply_module, "_emit", interrupted)
    with pytest.raises(KeyboardInterrupt):
        clean([CRAWL], out, Options(workers=1), work_dir=work)
    monkeypatch.undo()
    # The first output is complete; the second never appeared under its final name.
    assert sorted(p.name for p in out.iterdir()) == ["crawl-00000.warc.gz"]
    finished_first = (out / "crawl-00000.warc.gz").stat().st_mtime_ns
    index_written = (work / "index.json").stat().st_mtime_ns

    summary = clean([CRAWL], out, Options(workers=1), work_dir=work, resume=True)
    assert summary.resumed == 1
    assert [t.records for t in summary.scan_files] == [27, 29]  # the finished index's tallies
    assert (work / "index.json").stat().st_mtime_ns == index_written
    assert (out / "crawl-00000.warc.gz").stat().st_mtime_ns == finished_first
    assert outputs(out) == outputs(reference)


def test_parts_left_by_a_killed_run_are_cleared(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    stale = out / ".crawl-00000.warc.gz.4242.part"  # what SIGKILL leaves behind
    stale.write_bytes(b"half a file")
    clean([CRAWL], out, Options(workers=1))
    assert sorted(p.name for p in out.iterdir()) == ["crawl-00000.warc.gz", "crawl-00001.warc.gz"]


def test_resume_with_everything_done_does_nothing(tmp_path: Path) -> None:
    clean([CRAWL], tmp_path / "out", Options(workers=1))
    summary = clean([CRAWL], tmp_path / "out", Options(workers=1), resume=True)
    assert summary.resumed == 2
    assert summary.files == []


def test_a_changed_input_is_indexed_again(tmp_path: Path) -> None:
    src = tmp_path / "in"
    src.mkdir()
    for path in CRAWL.iterdir():
        (src / path.name).write_bytes(path.read_bytes())
    work = tmp_path / "work"
    clean([src], tmp_path / "out", Options(workers=1), work_dir=work)
    (tmp_path / "out" / "crawl-00001.warc.gz").unlink()
    (src / "crawl-00001.warc.gz").write_bytes((CRAWL / "crawl-00001.warc.gz").read_bytes()[:-1])
    summary = clean([src], tmp_path / "out", Options(workers=1), work_dir=work, resume=True)
    assert len(summary.scan_files) == 2  # the index no longer matched its inputs


def test_a_killed_process_leaves_nothing_partial_and_resume_finishes(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys
    import time

    from conftest import shared_file

    archive = shared_file("eval", "l3s-gn1.warc.gz")
    src = tmp_path / "in"
    src.mkdir()
    (src / "a.warc.gz").symlink_to(archive)
    (src / "b.warc.gz").symlink_to(CRAWL / "crawl-00000.warc.gz")
    out, work = tmp_path / "out", tmp_path / "work"
    command = [sys.executable, "-m", "warcdeboil", "clean", str(src), "-o", str(out),
               "--work-dir", str(work), "-j", "1", "-q"]
    clean([src], tmp_path / "reference", Options(workers=1))
    reference = outputs(tmp_path / "reference")
    process = subprocess.Popen(command)
    started = time.monotonic()
    time.sleep(1.5)  # somewhere in the scan or the writing: both must be safe to kill
    process.send_signal(signal.SIGKILL)
    elapsed = time.monotonic() - started
    process.wait()
    present = outputs(out) if out.exists() else {}
    for name, data in present.items():  # whatever is under a final name is complete
        assert name.endswith(".part") or data == reference[name], (
            f"killed after {elapsed:.2f} s: {where_they_differ(out, tmp_path / 'reference')}")
    subprocess.run([*command, "--resume"], check=True, timeout=300)
    assert outputs(out) == reference, (
        f"killed after {elapsed:.2f} s, resumed: {where_they_differ(out, tmp_path / 'reference')}")


def test_payload_digests_are_taken_only_for_runs_that_read_them(tmp_path: Path) -> None:
    # WARC output without --dedup reads no payload digest: pass 1 leaves them out. A run that
    # needs them (--dedup revisit) does not reuse that index; one that needs none reuses an
    # index with them.
    from warcdeboil.dedup.verdicts import DedupMode
    from warcdeboil.site.pagestore import iter_page_store, page_store_path

    src = tmp_path / "in"
    src.mkdir()
    for name in ("crawl-00000.warc.gz", "crawl-00001.warc.gz"):
        (src / name).write_bytes((CRAWL / name).read_bytes())
    (src / "copy.warc.gz").write_bytes((CRAWL / "crawl-00000.warc.gz").read_bytes())

    def digests(work: Path) -> list[bytes]:
        return [entry.digest for i in range(3)
                for entry in iter_page_store(page_store_path(work / "pages", i))]

    work = tmp_path / "work"
    clean([src], tmp_path / "plain", Options(workers=1), work_dir=work)
    assert digests(work) and set(digests(work)) == {b""}

    revisit = Options(workers=1, dedup=DedupMode.REVISIT)
    clean([src], tmp_path / "reference", revisit)
    summary = clean([src], tmp_path / "revisit", revisit, work_dir=work, resume=True)
    assert len(summary.scan_files) == 3 and summary.dedup is not None
    assert summary.dedup["exact"] == 12 and summary.apply.revisits_written > 0
    assert all(len(digest) == 20 for digest in digests(work))
    assert outputs(tmp_path / "revisit") == outputs(tmp_path / "reference")

    index_written = (work / "index.json").stat().st_mtime_ns
    clean([src], tmp_path / "again", Options(workers=1), work_dir=work, resume=True)
    assert (work / "index.json").stat().st_mtime_ns == index_written
    assert outputs(tmp_path / "again") == outputs(tmp_path / "plain")


def test_runs_that_only_compare_digests_take_xxh3_and_revisits_take_sha1(tmp_path: Path) -> None:
    # JSONL's --dedup mark finds exact copies by comparing digests: pass 1 takes XXH3-128 (padded
    # to SHA-1's 20 bytes). A revisit run, whose records carry the digest, does not reuse that
    # index (it indexes again, with SHA-1s); a run that compares reuses an index of SHA-1s.
    import hashlib
    import json

    from xxhash import xxh3_128_digest

    from warcdeboil.dedup.verdicts import DedupMode
    from warcdeboil.output.formats import OutputFormat
    from warcdeboil.page.html import html_page
    from warcdeboil.site.clean import Mode
    from warcdeboil.site.pagestore import iter_page_store, page_store_path
    from warcdeboil.warc.reader import iter_selected

    src = tmp_path / "in"
    src.mkdir()
    for name in ("crawl-00000.warc.gz", "crawl-00001.warc.gz"):
        (src / name).write_bytes((CRAWL / name).read_bytes())
    (src / "copy.warc.gz").write_bytes((CRAWL / "crawl-00000.warc.gz").read_bytes())
    def payloads(path: Path) -> dict[int, bytes]:
        """Each HTML page's payload as stored, by the offset pass 1 reads it at."""
        found = {}
        for record in iter_selected(str(path), None):
            page = html_page(record) if record.error is None else None
            if page is not None:
                found[record.offset] = page.response.body if page.response else page.body
        return found

    def digests(work: Path) -> dict[str, dict[int, bytes]]:
        """Each input's stored digests by offset, the inputs named as the index names them."""
        inputs = json.loads((work / "index.json").read_text())["inputs"]
        return {Path(name).name: {entry.offset: entry.digest for entry in iter_page_store(
            page_store_path(work / "pages", i))} for i, name in enumerate(inputs)}

    jsonl = Options(workers=1, format=OutputFormat.JSONL)
    work = tmp_path / "work"
    marked = clean([src], tmp_path / "jsonl", jsonl, work_dir=work)
    assert marked.dedup is not None and marked.dedup["exact"] == 12
    taken = digests(work)
    for name, stored in taken.items():
        assert stored == {offset: xxh3_128_digest(body) + bytes(4)
                          for offset, body in payloads(src / name).items()}
    assert taken["copy.warc.gz"] == taken["crawl-00000.warc.gz"]  # exact copies: equal digests

    revisit = Options(workers=1, dedup=DedupMode.REVISIT)
    clean([src], tmp_path / "reference", revisit)
    summary = clean([src], tmp_path / "revisit", revisit, work_dir=work, resume=True)
    assert len(summary.scan_files) == 3 and summary.apply.revisits_written > 0
    for name, stored in digests(work).items():
        assert stored == {offset: hashlib.sha1(body).digest()
                          for offset, body in payloads(src / name).items()}
    assert outputs(tmp_path / "revisit") == outputs(tmp_path / "reference")

    # Template-mode text dropping duplicates compares digests, and analyses pages as WARC output
    # does: it reuses the index.
    dropping = Options(workers=1, format=OutputFormat.TEXT, mode=Mode.TEMPLATE,
                       dedup=DedupMode.DROP)
    clean([src], tmp_path / "text", dropping)
    index_written = (work / "index.json").stat().st_mtime_ns
    again = clean([src], tmp_path / "again", dropping, work_dir=work, resume=True)
    assert (work / "index.json").stat().st_mtime_ns == index_written
    assert again.dedup is not None and again.dedup["exact"] == 12
    assert outputs(tmp_path / "again") == outputs(tmp_path / "text")


def test_a_resumed_run_fits_again_with_other_fit_parameters(tmp_path: Path) -> None:
    """A --work-dir's profiles are reused only when fitted with this run's parameters (else a
    resumed run would write, and record, outputs of the new options with the old template)."""
    from warcdeboil.site.fit import FitParams

    work = tmp_path / "work"
    clean([CRAWL], tmp_path / "first", Options(workers=1), work_dir=work)
    other = Options(workers=1, fit=FitParams(min_occurrence=4))
    clean([CRAWL], tmp_path / "reference", other)
    summary = clean([CRAWL], tmp_path / "out", other, work_dir=work, resume=True)
    assert summary.fit.sites > 0  # fitted again, not read back
    assert outputs(tmp_path / "out") == outputs(tmp_path / "reference")
