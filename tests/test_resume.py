"""Interrupted runs: no partial file under a final name, and --resume finishes the job."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import FIXTURES, outputs_of

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
    # The first output is complete, with the record of its options; the second never appeared
    # under its final name.
    assert sorted(p.name for p in out.iterdir()) == [
        ".crawl-00000.warc.gz.options.json", "crawl-00000.warc.gz"]
    finished_first = (out / "crawl-00000.warc.gz").stat().st_mtime_ns
    index_written = (work / "index.json").stat().st_mtime_ns

    summary = clean([CRAWL], out, Options(workers=1), work_dir=work, resume=True)
    assert summary.resumed == 1
    assert [t.records for t in summary.scan_files] == [27, 29]  # the finished index's tallies
    assert (work / "index.json").stat().st_mtime_ns == index_written
    assert (out / "crawl-00000.warc.gz").stat().st_mtime_ns == finished_first
    assert outputs(out) == outputs(reference)  # the records beside them too


def test_parts_left_by_a_killed_run_are_cleared(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    stale = out / ".crawl-00000.warc.gz.4242.part"  # what SIGKILL leaves behind
    stale.write_bytes(b"half a file")
    clean([CRAWL], out, Options(workers=1))
    assert [p.name for p in outputs_of(out)] == ["crawl-00000.warc.gz", "crawl-00001.warc.gz"]


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


# -- --resume keeps an output only when it was made with this run's options ---------------------


def _cdxj(path: Path, hosts: set[str]) -> Path:
    """A CDXJ index of the fixture crawl's responses on ``hosts``."""
    import gzip

    lines = [
        "x)/ 20240501120000 " + json.dumps({
            "url": record.target_uri, "filename": source.name, "offset": str(record.offset),
            "length": str(record.length), "status": "200"})
        for source in sorted(CRAWL.iterdir()) for record in iter_records(source)
        if record.rec_type == "response" and record.target_uri.split("/")[2] in hosts
    ]
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    return path


class _Kit:
    """What the cases below refer to: a small language model, a URL rules path, two indexes."""

    def __init__(self, tmp_path: Path) -> None:
        from warcdeboil.lm import LanguageModel

        self.model = tmp_path / "tiny.lm"
        LanguageModel.train(["the storm closes the coast road", "a quiet day on the coast",
                             "the road opens again after the storm"] * 20).save(self.model)
        self.base = tmp_path
        self.all_sites = _cdxj(tmp_path / "all.cdxj.gz", {
            "news.example.com", "www.blog.example.org", "blog.example.org", "shop.example.net"})
        self.news = _cdxj(tmp_path / "news.cdxj.gz", {"news.example.com"})

    def lm(self, **filters: object) -> object:
        from warcdeboil.lm.scoring import LmSettings

        return LmSettings(str(self.model), **filters)  # type: ignore[arg-type]


def _run(kit: _Kit, out: Path, case: dict, **extra: object) -> object:
    """``clean`` of the fixture crawl into ``out`` with a case's options (``select``: one of the
    kit's indexes by name; ``lm``: the kit's model with these filters, or "auto")."""
    from warcdeboil.lm.scoring import LmSettings
    from warcdeboil.run.selection import SiteFilter

    kwargs = dict(case)
    select = kwargs.pop("select", None)
    if "lm" in kwargs:
        filters = kwargs.pop("lm")
        kwargs["lm"] = LmSettings("auto") if filters == "auto" else kit.lm(**filters)
    if "url_rules" in kwargs:  # the name of the file to write the rules to
        kwargs["url_rules"] = str(kit.base / kwargs["url_rules"])
    options = Options(**{"workers": 1, **kwargs})
    chosen = (str(getattr(kit, select)), SiteFilter()) if select else None
    return clean([CRAWL], out, options, select=chosen, **extra)


def _cases() -> list:
    from warcdeboil.dedup.verdicts import DedupMode
    from warcdeboil.output.formats import OutputFormat
    from warcdeboil.page.html import PageLimits
    from warcdeboil.site.clean import Mode
    from warcdeboil.site.fit import FitParams
    from warcdeboil.site.sitekey import SiteKeyMode
    from warcdeboil.warc.compression import Codec

    jsonl = {"format": OutputFormat.JSONL}
    scored = {**jsonl, "lm": {}}
    return [
        pytest.param(jsonl, {**jsonl, "mode": Mode.TEMPLATE}, "--mode content (this run: template)",
                     id="mode"),
        pytest.param({}, {"site_key": SiteKeyMode.DOMAIN}, "--site-key host (this run: domain)",
                     id="site-key"),
        pytest.param({}, {"fit": FitParams(max_iou=0.5)}, "--max-iou 0.95 (this run: 0.5)",
                     id="max-iou"),
        pytest.param({}, {"fit": FitParams(min_occurrence=3)},
                     "--min-occurrence 1 (this run: 3)", id="min-occurrence"),
        pytest.param({}, {"fit": FitParams(near_duplicate=0.5)},
                     "near_duplicate 0.8 (this run: 0.5)", id="near-duplicate"),
        pytest.param({}, {"fit": FitParams(repeated_share=0.5)},
                     "repeated_share 0.1 (this run: 0.5)", id="repeated-share"),
        pytest.param({}, {"fit": FitParams(repeated_min_pages=9)},
                     "repeated_min_pages 3 (this run: 9)", id="repeated-min-pages"),
        pytest.param({}, {"limits": PageLimits(max_bytes=1 << 20)},
                     "--max-page-mb (in bytes) 16777216 (this run: 1048576)", id="max-page-mb"),
        pytest.param({}, {"limits": PageLimits(max_tags=50)},
                     "--max-page-tags 200000 (this run: 50)", id="max-page-tags"),
        pytest.param({}, {"limits": PageLimits(max_depth=5)},
                     "--max-page-depth 10000 (this run: 5)", id="max-page-depth"),
        pytest.param({"compress": Codec.ZSTD}, {"compress": Codec.ZSTD, "zstd_dictionary": True},
                     "--zstd-dict no (this run: yes)", id="zstd-dict"),
        pytest.param({}, {"dedup": DedupMode.REVISIT}, "--dedup off (this run: revisit)",
                     id="dedup-revisit"),
        pytest.param(jsonl, {**jsonl, "dedup": DedupMode.OFF}, "--dedup mark (this run: off)",
                     id="dedup-off"),
        pytest.param({"format": OutputFormat.TEXT},
                     {"format": OutputFormat.TEXT, "dedup": DedupMode.DROP},
                     "--dedup off (this run: drop)", id="dedup-drop"),
        pytest.param(jsonl, {**jsonl, "url_rules": "rules.json"},
                     "--url-rules no (this run: yes)", id="url-rules"),
        pytest.param(jsonl, scored, "--lm none (this run: tiny.lm sha1:", id="lm"),
        pytest.param(scored, {**jsonl, "lm": "auto"}, "(this run: auto)", id="lm-auto"),
        pytest.param(scored, {**jsonl, "lm": {"line_scores": True}},
                     "--line-perplexity no (this run: yes)", id="line-perplexity"),
        pytest.param(scored, {**jsonl, "lm": {"max_line": 900.0}},
                     "--max-line-perplexity none (this run: 900.0)", id="max-line-perplexity"),
        pytest.param(scored, {**jsonl, "lm": {"max_page": 900.0}},
                     "--max-page-perplexity none (this run: 900.0)", id="max-page-perplexity"),
        pytest.param(scored, {**jsonl, "lm": {"buckets": True}},
                     "--perplexity-buckets no (this run: yes)", id="perplexity-buckets"),
        pytest.param(scored, {**jsonl, "lm": {"keep_buckets": ("head",)}},
                     "--keep-buckets none (this run: head)", id="keep-buckets"),
        pytest.param({"select": "all_sites"}, {}, "(the records chosen) sha1:", id="select-index"),
        pytest.param({"select": "all_sites"}, {"select": "news"}, "(the records chosen) sha1:",
                     id="sites"),
    ]


@pytest.mark.parametrize(("first", "second", "said"), _cases())
def test_resume_refuses_outputs_made_with_another_option(
    tmp_path: Path, first: dict, second: dict, said: str
) -> None:
    """Every option that shapes an output's bytes, changed between a run and its --resume: the
    run is refused in one line naming it, before any record is read; nothing is written."""
    from warcdeboil.errors import PlanError

    kit, out = _Kit(tmp_path), tmp_path / "out"
    _run(kit, out, first)
    before = outputs(out)
    with pytest.raises(PlanError) as refused:
        _run(kit, out, second, resume=True, work_dir=tmp_path / "work")
    message = str(refused.value)
    assert message.startswith(f"--resume: {out}/crawl-0000") and "\n" not in message
    assert "(and 1 other output) was made with other options: " in message
    assert said in message
    assert outputs(out) == before
    assert not (tmp_path / "work").exists()  # refused before the scan


def test_resume_refuses_a_model_trained_again_under_the_same_name(tmp_path: Path) -> None:
    from warcdeboil.errors import PlanError
    from warcdeboil.lm import LanguageModel
    from warcdeboil.output.formats import OutputFormat

    kit, out = _Kit(tmp_path), tmp_path / "out"
    case = {"format": OutputFormat.JSONL, "lm": {}}
    _run(kit, out, case)
    LanguageModel.train(["another text altogether"] * 20).save(kit.model)
    with pytest.raises(PlanError, match=r"--lm tiny\.lm sha1:\w+ \(this run: tiny\.lm sha1:"):
        _run(kit, out, case, resume=True)


def test_the_cli_refuses_the_testers_case_in_one_line(tmp_path: Path) -> None:
    """``clean --mode template``, then ``clean --mode content --resume``: exit status 2, one
    line naming --mode and saying how to go on; the template-mode text is not kept silently."""
    from typer.testing import CliRunner

    from warcdeboil.cli import app

    out = tmp_path / "out"
    command = ["clean", str(CRAWL), "-o", str(out), "-f", "jsonl", "-j", "1", "-q"]
    assert CliRunner().invoke(app, [*command, "--mode", "template"]).exit_code == 0
    before = outputs(out)
    result = CliRunner().invoke(app, [*command, "--mode", "content", "--resume"])
    assert result.exit_code == 2
    assert result.stderr == (
        f"warcdeboil: error: --resume: {out}/crawl-00000.jsonl.gz (and 1 other output) was "
        "made with other options: --mode template (this run: content). Resume with the options "
        "it was made with, or run without --resume to write every output anew\n")
    assert outputs(out) == before
    # Without --resume, the run writes every output anew in content mode.
    assert CliRunner().invoke(app, [*command, "--mode", "content"]).exit_code == 0
    assert outputs(out) != before


def _same_bytes() -> list:
    from warcdeboil.output.formats import OutputFormat
    from warcdeboil.warc.compression import Codec

    jsonl = {"format": OutputFormat.JSONL}
    return [
        pytest.param({}, {"workers": 2}, id="workers"),
        pytest.param({}, {"run_bytes": 1 << 10}, id="run-size"),
        pytest.param({}, {"partitions": 3}, id="partitions"),
        pytest.param({}, {"fail_fast": True}, id="on-error"),
        pytest.param({}, {"compress": Codec.GZIP}, id="compress-auto-is-gzip"),
        pytest.param({}, {"zstd_dictionary": True}, id="zstd-dict-without-zstd"),
        pytest.param({**jsonl, "url_rules": "rules.json"},
                     {**jsonl, "url_rules": "elsewhere.json"}, id="url-rules-path"),
    ]


@pytest.mark.parametrize(("first", "second"), _same_bytes())
def test_options_that_change_no_byte_do_not_stop_a_resume(
    tmp_path: Path, first: dict, second: dict
) -> None:
    """A run with such an option changed writes the same bytes (the records beside the outputs
    too), and --resume with it keeps every output."""
    kit = _Kit(tmp_path)
    _run(kit, tmp_path / "out", first)
    reference = outputs(tmp_path / "out")
    _run(kit, tmp_path / "fresh", second)
    assert outputs(tmp_path / "fresh") == reference
    summary = _run(kit, tmp_path / "out", second, resume=True)
    assert summary.resumed == 2 and summary.files == []  # type: ignore[attr-defined]
    assert outputs(tmp_path / "out") == reference


def test_the_cli_options_that_change_no_byte_do_not_stop_a_resume(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from warcdeboil.cli import app

    out = tmp_path / "out"
    command = ["clean", str(CRAWL), "-o", str(out), "-f", "jsonl", "-j", "1", "-q"]
    assert CliRunner().invoke(app, command).exit_code == 0
    before = outputs(out)
    result = CliRunner().invoke(app, [
        *command, "--resume", "-j", "2", "--json", "--report", str(tmp_path / "report"),
        "--run-size", "1", "--on-error", "fail", "--work-dir", str(tmp_path / "work")])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["resumed"] == 2
    assert outputs(out) == before


@pytest.mark.parametrize(("first", "second"), [
    pytest.param({}, {"format": "jsonl"}, id="format"),
    pytest.param({}, {"compress": "none"}, id="compress"),
])
def test_another_format_or_compression_writes_outputs_of_its_own(
    tmp_path: Path, first: dict, second: dict
) -> None:
    """Format and compression name the output (a.jsonl.gz, a.warc): resuming with another one
    never meets an output made with the first, and writes every output of its own."""
    from warcdeboil.output.formats import OutputFormat
    from warcdeboil.warc.compression import Codec

    def options(case: dict) -> Options:
        made = {"format": OutputFormat(case["format"])} if "format" in case else {}
        if "compress" in case:
            made["compress"] = Codec(case["compress"])
        return Options(workers=1, **made)

    clean([CRAWL], tmp_path / "out", options(first))
    kept = outputs(tmp_path / "out")
    summary = clean([CRAWL], tmp_path / "out", options(second), resume=True)
    assert summary.resumed == 0 and len(summary.files) == 2
    clean([CRAWL], tmp_path / "reference", options(second))
    assert outputs(tmp_path / "out") == {**kept, **outputs(tmp_path / "reference")}


def test_an_output_without_a_record_is_refused_with_how_to_go_on(tmp_path: Path) -> None:
    """An output written before outputs had a record of their options (or moved without it) is
    not taken as complete: the run is refused, and deleting the output, as the line says, lets
    --resume write it again."""
    from warcdeboil.errors import PlanError

    out = tmp_path / "out"
    clean([CRAWL], out, Options(workers=1))
    reference = outputs(out)
    (out / ".crawl-00001.warc.gz.options.json").unlink()  # what today's outputs lack
    with pytest.raises(PlanError) as refused:
        clean([CRAWL], out, Options(workers=1), resume=True)
    assert str(refused.value) == (
        f"--resume: {out}/crawl-00001.warc.gz has no record of the options it was made with "
        "(no .crawl-00001.warc.gz.options.json beside it: written before outputs had one, or "
        "moved without it). Run without --resume to write every output anew, or delete the "
        "outputs to be written again")
    (out / "crawl-00001.warc.gz").unlink()
    summary = clean([CRAWL], out, Options(workers=1), resume=True)
    assert summary.resumed == 1 and [Path(t.path).name for t in summary.files] == [
        "crawl-00001.warc.gz"]
    assert outputs(out) == reference


def test_an_unreadable_record_is_no_record(tmp_path: Path) -> None:
    from warcdeboil.errors import PlanError

    out = tmp_path / "out"
    clean([CRAWL], out, Options(workers=1))
    (out / ".crawl-00000.warc.gz.options.json").write_text("{half a rec", encoding="utf-8")
    with pytest.raises(PlanError, match="crawl-00000.warc.gz has no record of the options"):
        clean([CRAWL], out, Options(workers=1), resume=True)


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


@pytest.mark.spark
def test_spark_resumes_and_refuses_as_the_local_engine(spark, tmp_path: Path) -> None:
    """The Spark engine writes the same records beside its outputs, keeps the local engine's
    outputs made with the same options, and refuses others in the same line."""
    from warcdeboil.errors import PlanError
    from warcdeboil.output.formats import OutputFormat
    from warcdeboil.site.clean import Mode
    from warcdeboil.spark import run_spark

    template = Options(workers=1, format=OutputFormat.JSONL, mode=Mode.TEMPLATE)
    content = Options(workers=1, format=OutputFormat.JSONL)
    local, distributed = tmp_path / "local", tmp_path / "spark"
    clean([CRAWL], local, template)
    run_spark([str(CRAWL)], str(distributed), template, session=spark)
    assert outputs(distributed) == outputs(local)  # outputs and the records beside them
    with pytest.raises(PlanError) as spark_refused:
        run_spark([str(CRAWL)], str(local), content, session=spark, resume=True)
    with pytest.raises(PlanError) as local_refused:
        clean([CRAWL], local, content, resume=True)
    assert str(spark_refused.value) == str(local_refused.value)
    assert "--mode template (this run: content)" in str(spark_refused.value)
    again = run_spark([str(CRAWL)], str(local), template, session=spark, resume=True)
    assert (again.resumed, again.files) == (2, [])
    (local / ".crawl-00000.jsonl.gz.options.json").unlink()
    with pytest.raises(PlanError, match="has no record of the options"):
        run_spark([str(CRAWL)], str(local), template, session=spark, resume=True)


def test_the_refusal_is_one_line_whatever_the_output_is_named(tmp_path: Path) -> None:
    from warcdeboil.errors import PlanError
    from warcdeboil.output.formats import OutputFormat
    from warcdeboil.site.clean import Mode

    src = tmp_path / "in"
    src.mkdir()
    (src / "a\nb.warc.gz").write_bytes((CRAWL / "crawl-00000.warc.gz").read_bytes())
    clean([src], tmp_path / "out", Options(workers=1, format=OutputFormat.JSONL))
    with pytest.raises(PlanError) as refused:
        clean([src], tmp_path / "out",
              Options(workers=1, format=OutputFormat.JSONL, mode=Mode.TEMPLATE), resume=True)
    assert "\n" not in str(refused.value)
    assert f"--resume: {tmp_path}/out/a%0Ab.jsonl.gz was made with other options" in str(
        refused.value)
