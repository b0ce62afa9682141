"""The command line, through typer's runner and once as a real process."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES, outputs_of, synthetic_crawl, warcio_check
from typer.testing import CliRunner

from warcdeboil.cli import app
from warcdeboil.warc.compression import Codec

runner = CliRunner()


def test_clean_writes_one_output_per_input_and_a_summary(crawl: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, ["clean", str(crawl), "-o", str(tmp_path / "out"), "-j", "1",
                                 "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["pages"] == 11
    assert summary["sites_fitted"] == 2
    assert summary["problems"] == {}
    assert summary["records"] == summary["pages"] + summary["carried"] + summary["skipped"]
    assert warcio_check(tmp_path / "out" / "a.warc.gz")[0] == 0


def test_stages_one_by_one(crawl: Path, tmp_path: Path) -> None:
    work, profiles, out = tmp_path / "work", tmp_path / "profiles", tmp_path / "out"
    assert runner.invoke(app, ["index", str(crawl), "--work-dir", str(work), "-q"]).exit_code == 0
    assert runner.invoke(app, ["fit", "--work-dir", str(work), "--profiles", str(profiles),
                               "-q"]).exit_code == 0
    result = runner.invoke(app, ["apply", str(crawl), "-o", str(out), "--profiles", str(profiles),
                                 "--format", "jsonl", "-q"])
    assert result.exit_code == 0, result.output
    assert (out / "a.jsonl.gz").exists()


@pytest.mark.parametrize(("fmt", "dedup"), [
    ("jsonl", None), ("jsonl", "mark"), ("jsonl", "drop"), ("jsonl", "off"),
    ("markdown", None), ("text", "drop"), ("warc", "revisit"),
])
def test_apply_writes_what_clean_writes_with_the_same_profiles(
    tmp_path: Path, fmt: str, dedup: str | None,
) -> None:
    """``apply`` takes --dedup as ``clean`` does (running the duplicate stage over its own
    inputs): with the profiles of a clean run, the same options give the same outputs, byte
    for byte, so JSONL lines have the same fields (the duplicate_* ones by default)."""
    crawl = FIXTURES / "crawl"
    options = ["-f", fmt, "-j", "1", "-q", *(["--dedup", dedup] if dedup else [])]
    done = runner.invoke(app, ["clean", str(crawl), "-o", str(tmp_path / "clean"),
                               "--work-dir", str(tmp_path / "work"), *options])
    assert done.exit_code == 0, done.output
    done = runner.invoke(app, ["apply", str(crawl), "-o", str(tmp_path / "apply"), "--profiles",
                               str(tmp_path / "work" / "profiles"), *options, "--json"])
    assert done.exit_code == 0, done.output
    cleaned = {p.name: p.read_bytes() for p in outputs_of(tmp_path / "clean")}
    assert {p.name: p.read_bytes() for p in outputs_of(tmp_path / "apply")} == cleaned
    summary = json.loads(done.stdout)
    if fmt in ("jsonl", "markdown"):
        lines = [json.loads(line) for data in cleaned.values()
                 for line in gzip.decompress(data).splitlines()]
        marked = dedup != "off"
        assert all(("duplicate_group_size" in line) is marked for line in lines)
        assert any(line.get("duplicate_group_size", 1) > 1 for line in lines) is marked
    if dedup != "off":  # the stage ran, and the summary says what it found, as clean's does
        assert summary["duplicates"]["groups"] >= 1
        assert summary["records"] == summary["pages"] + summary["carried"] + summary["skipped"]


def test_apply_refuses_a_dedup_mode_its_format_has_no_use_for(tmp_path: Path) -> None:
    result = runner.invoke(app, ["apply", str(FIXTURES / "crawl"), "-o", str(tmp_path / "o"),
                                 "--profiles", str(tmp_path / "p"), "-f", "warc", "--dedup",
                                 "mark"])
    assert result.exit_code == 2
    said = " ".join(result.output.replace("│", " ").split())  # as rich wrapped it in its box
    assert "--dedup" in said and "mark does not apply to --format warc" in said


def test_missing_input_is_one_line_on_stderr(tmp_path: Path) -> None:
    result = runner.invoke(app, ["clean", str(tmp_path / "nope.warc.gz"), "-o", str(tmp_path)])
    assert result.exit_code == 1
    assert result.stderr.strip().count("\n") == 0
    assert "nope.warc.gz: no such file or directory" in result.stderr
    assert "Traceback" not in result.output


def test_fit_without_index_says_what_to_do(tmp_path: Path) -> None:
    result = runner.invoke(app, ["fit", "--work-dir", str(tmp_path), "--profiles",
                                 str(tmp_path / "p")])
    assert result.exit_code == 1
    assert "run `warcdeboil index` first" in result.stderr


def test_bad_option_is_a_usage_error(crawl: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, ["clean", str(crawl), "-o", str(tmp_path), "--format", "pdf"])
    assert result.exit_code == 2


def test_real_process(crawl: Path, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "warcdeboil", "clean", str(crawl), "-o", str(tmp_path / "out"),
         "--format", "text", "-j", "2", "-q"],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert warcio_check(tmp_path / "out" / "a.warc.wet.gz")[0] == 0


def test_recompress_makes_a_whole_file_gzip_addressable(tmp_path: Path, write_archive) -> None:
    import gzip

    from warcdeboil.warc.reader import iter_records

    plain = write_archive(tmp_path / "p.warc", synthetic_crawl(), Codec.NONE)
    src = tmp_path / "in" / "stream.warc.gz"
    src.parent.mkdir()
    src.write_bytes(gzip.compress(plain.read_bytes(), mtime=0))
    result = runner.invoke(app, ["recompress", str(src), "-o", str(tmp_path / "out"), "-q"])
    assert result.exit_code == 0, result.output
    out = tmp_path / "out" / "stream.warc.gz"
    assert [r.to_bytes() for r in iter_records(out)] == [r.to_bytes() for r in iter_records(plain)]
    assert all(r.addressable for r in iter_records(out))
    assert warcio_check(out)[0] == 0


def test_bad_records_are_logged_once_each(tmp_path: Path, write_archive) -> None:
    records = synthetic_crawl()
    src = write_archive(tmp_path / "a.warc.gz", records, Codec.GZIP)
    src.write_bytes(src.read_bytes()[:-30])  # cut the last record short
    done = subprocess.run(
        [sys.executable, "-m", "warcdeboil", "clean", str(src), "-o", str(tmp_path / "out"),
         "-j", "1"], capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 3
    lines = [line for line in done.stderr.splitlines() if "truncated" in line]
    assert len(lines) == 2  # the one warning, and the reason in the summary
    assert f"{src}@" in lines[0] and "Traceback" not in done.stderr


def test_eval_scores_the_fixture_crawl_against_its_content(tmp_path: Path) -> None:
    from conftest import FIXTURES

    expected = json.loads((FIXTURES / "expected.json").read_text(encoding="utf-8"))
    gold = tmp_path / "gold.jsonl"
    gold.write_text("".join(
        json.dumps({"url": url, "site": page["site"], "gold": "\n".join(page["content"])}) + "\n"
        for url, page in expected["pages"].items()
    ), encoding="utf-8")
    result = runner.invoke(app, ["eval", str(FIXTURES / "crawl"), "--gold", str(gold), "--json",
                                 "-j", "1", "--mode", "template"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["overall"]["pages"] == len(expected["pages"])
    assert report["missing"] == 0
    assert report["overall"]["recall"] == 1.0
    # Per-page "Related" lists share no subtree, but they sit in the same slot on every page
    # (<div class='related'>): a template slot, removed too.
    assert report["overall"]["precision"] == 1.0


def test_engine_spark_without_spark_is_one_line_with_the_install_hint(
    crawl: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "pyspark", None)  # what `import pyspark` sees when absent
    result = runner.invoke(app, ["clean", str(crawl), "-o", str(tmp_path / "out"),
                                 "--engine", "spark"])
    assert result.exit_code == 2
    assert result.stderr.strip().count("\n") == 0
    assert "pip install 'warcdeboil[spark]'" in result.stderr
    assert "Traceback" not in result.output
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("args", [
    ["--sites", "sites.txt"],  # sites choose from an index
    ["--spark-master", "local[2]"],  # a Spark option on the local engine
    ["--engine", "spark", "--work-dir", "work"],  # a Spark run keeps no work directory
])
def test_engine_options_that_do_not_fit_are_usage_errors(crawl: Path, tmp_path: Path,
                                                         args: list[str]) -> None:
    result = runner.invoke(app, ["clean", str(crawl), "-o", str(tmp_path / "out"), *args])
    assert result.exit_code == 2, result.output
    assert not (tmp_path / "out").exists()


def test_urls_need_the_spark_engine(tmp_path: Path) -> None:
    result = runner.invoke(app, ["clean", "s3a://bucket/crawl/", "-o", str(tmp_path / "out")])
    assert result.exit_code == 1
    assert "URLs are read by --engine spark" in result.stderr


def test_file_urls_are_local_paths(crawl: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, ["clean", f"file://{crawl}", "-o", str(tmp_path / "out"),
                                 "-j", "1", "-q"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out" / "a.warc.gz").exists()


def test_entry_point_collects_young_objects_less_often() -> None:
    # The script's entry point (not the library) tunes the collector: start-up objects frozen,
    # the youngest generation collected every GC_YOUNG_THRESHOLD allocations. Run in a child:
    # the settings are per process.
    code = (
        "import gc, warcdeboil.cli.process as cli\n"
        "before = gc.get_freeze_count()\n"
        "cli._tune_collector()\n"
        "print(before, gc.get_freeze_count() > before, gc.get_threshold()[0],"
        " cli.GC_YOUNG_THRESHOLD)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    before, frozen, young, wanted = done.stdout.split()
    assert before == "0" and frozen == "True"
    assert int(young) == int(wanted) > 700


# -- summaries that match the outputs ------------------------------------------------------


def _warc_records(path: Path) -> int:
    """Records in a WARC, counted by warcio (not by warcdeboil's own reader)."""
    from warcio.archiveiterator import ArchiveIterator

    with open(path, "rb") as fh:
        return sum(1 for _ in ArchiveIterator(fh))


def _jsonl_lines(path: Path) -> int:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as fh:
        return sum(1 for line in fh if line.strip())


def _html_responses(path: Path) -> int:
    """2xx HTML responses of an input, counted by warcio: the pages a run cleans."""
    from warcio.archiveiterator import ArchiveIterator

    count = 0
    with open(path, "rb") as fh:
        for record in ArchiveIterator(fh):
            if record.rec_type == "resource":
                kind = record.rec_headers.get_header("Content-Type") or ""
            elif record.rec_type == "response" and record.http_headers is not None and \
                    record.http_headers.get_statuscode().startswith("2"):
                kind = record.http_headers.get_header("Content-Type") or ""
            else:
                continue
            head = record.content_stream().read(64).lstrip().lower()
            if "html" in kind or (not kind and head.startswith((b"<!doctype html", b"<html"))):
                count += 1
    return count


def test_every_stage_summary_matches_its_outputs(tmp_path: Path) -> None:
    crawl = FIXTURES / "crawl"
    inputs = sorted(crawl.iterdir())
    records = sum(_warc_records(p) for p in inputs)
    pages = sum(_html_responses(p) for p in inputs)
    work, profiles = tmp_path / "work", tmp_path / "profiles"

    done = runner.invoke(app, ["index", str(crawl), "--work-dir", str(work), "-j", "1", "--json"])
    assert done.exit_code == 0, done.output
    indexed = json.loads(done.stdout)
    assert (indexed["inputs"], indexed["records"], indexed["pages"]) == (2, records, pages)
    assert [f["records"] for f in indexed["files"]] == [_warc_records(p) for p in inputs]

    done = runner.invoke(app, ["fit", "--work-dir", str(work), "--profiles", str(profiles),
                               "--json"])
    assert done.exit_code == 0, done.output
    fitted = json.loads(done.stdout)
    assert "records" not in fitted and "inputs" not in fitted  # fit reads no archive
    assert fitted["pages_indexed"] == pages and fitted["sites"] == 5

    for fmt in ("jsonl", "warc"):
        out = tmp_path / f"applied-{fmt}"
        done = runner.invoke(app, ["apply", str(crawl), "-o", str(out), "--profiles",
                                   str(profiles), "-f", fmt, "-j", "1", "--json"])
        assert done.exit_code == 0, done.output
        applied = json.loads(done.stdout)
        assert (applied["records"], applied["pages"]) == (records, pages)
        written = outputs_of(out)
        assert [f["output"] for f in applied["files"]] == [str(p) for p in written]
        if fmt == "jsonl":
            assert sum(_jsonl_lines(p) for p in written) == pages
            lines = [json.loads(line) for p in written
                     for line in gzip.decompress(p.read_bytes()).splitlines()]
            assert applied["text_chars"] == sum(len(line["text"]) for line in lines)
            assert applied["html_bytes_before"] == sum(line["html_bytes_before"] for line in lines)
        else:
            # every record, and each output's own warcinfo first (see Provenance)
            assert sum(_warc_records(p) for p in written) == records + len(written)


def test_text_summaries_show_only_what_was_counted(tmp_path: Path) -> None:
    crawl = FIXTURES / "crawl"
    work, profiles = tmp_path / "work", tmp_path / "profiles"
    assert runner.invoke(app, ["index", str(crawl), "--work-dir", str(work), "-q"]).exit_code == 0
    done = runner.invoke(app, ["fit", "--work-dir", str(work), "--profiles", str(profiles)])
    assert done.exit_code == 0, done.output
    lines = done.stderr.splitlines()
    assert [line.split()[0] for line in lines] == ["sites", "pages"]
    assert lines[1].split() == ["pages", "indexed", str(_html_pages(crawl))]


def _html_pages(crawl: Path) -> int:
    return sum(_html_responses(p) for p in sorted(crawl.iterdir()))


@pytest.mark.parametrize("fmt", ["jsonl", "warc"])
def test_a_resumed_run_reports_the_outputs_it_wrote(tmp_path: Path, fmt: str) -> None:
    crawl = FIXTURES / "crawl"
    out, work = tmp_path / "out", tmp_path / "work"
    command = ["clean", str(crawl), "-o", str(out), "--work-dir", str(work), "-f", fmt,
               "-j", "1", "--json"]
    first = json.loads(runner.invoke(app, command).stdout)
    assert [f["output"] for f in first["files"]] == [str(p) for p in outputs_of(out)]
    gone = outputs_of(out)[1]
    gone.unlink()
    done = runner.invoke(app, [*command, "--resume"])
    assert done.exit_code == 0, done.output
    again = json.loads(done.stdout)
    assert (again["inputs"], again["resumed"]) == (2, 1)
    assert again["outputs"] == [str(gone)]
    source = crawl / "crawl-00001.warc.gz"
    assert [f["path"] for f in again["files"]] == [str(source)]
    assert again["records"] == _warc_records(source)
    assert again["pages"] == _html_responses(source)
    if fmt == "jsonl":
        assert _jsonl_lines(gone) == again["pages"]
    else:
        assert _warc_records(gone) == again["records"] + 1  # and its own warcinfo first
    # The fit was reused: its figures are those of the first run, not zeros.
    assert (again["sites"], again["sites_fitted"], again["pages_indexed"]) == (
        first["sites"], first["sites_fitted"], first["pages_indexed"])


def test_problems_are_counted_alike_whatever_the_format(tmp_path: Path) -> None:
    """Pass 2 reads WARC inputs again; text outputs report pass 1's reading: same problems.
    The one difference is what each output holds: a page whose record was cut short is a
    cleaned page of JSONL (marked truncated), and a record WARC output carries as it survives."""
    from conftest import shared_file

    warcs = shared_file("warcs")
    summaries = {}
    for fmt in ("warc", "jsonl"):
        done = runner.invoke(app, ["clean", str(warcs), "-o", str(tmp_path / fmt), "-f", fmt,
                                   "--json", "-q"])
        assert done.exit_code == 3, done.output
        summaries[fmt] = json.loads(done.stdout)
    for key in ("records", "skipped", "problems"):
        assert summaries["warc"][key] == summaries["jsonl"][key], key
    assert summaries["warc"]["problems"] == {
        "ARC header with an invalid date": 1,  # aut's badexample.arc.gz: "null"
        "ARC length runs past the end of the record": 2,  # badexample's lengths that lie
        "ARC record is truncated": 2,  # badexample's last, warcio's example-space-in-url.arc
        "HTTP response with a malformed status line": 1,  # pywb's example-extra.warc
        "gzip member is truncated: record is truncated": 1,  # chatnoir's clipped.warc.gz
        "records share gzip members or zstd frames, so random access is impossible: "
        "`warcdeboil recompress` rewrites the file one member per record": 1,  # badexample
    }
    cut = [line for path in outputs_of(tmp_path / "jsonl")
           for line in map(json.loads, gzip.decompress(path.read_bytes()).splitlines())
           if line["truncated"]]
    assert len(cut) == 2  # chatnoir's clipped.warc.gz and warcio's example-space-in-url.arc
    assert summaries["jsonl"]["pages"] == summaries["warc"]["pages"] + len(cut)
    assert summaries["jsonl"]["carried"] == summaries["warc"]["carried"] - len(cut)


def test_version() -> None:
    from warcdeboil import __version__

    done = runner.invoke(app, ["--version"])
    assert done.exit_code == 0
    assert done.stdout.strip() == f"warcdeboil {__version__}"


def test_help_says_which_engine_an_option_needs() -> None:
    import re

    result = runner.invoke(app, ["clean", "--help"], env={"COLUMNS": "300"})
    assert result.exit_code == 0
    help_of = {}
    for line in result.stdout.splitlines():
        found = re.match(r"\W*(--[\w-]+)\s.*?\s{2,}(\S.*?)\W*$", line)
        if found:
            help_of[found.group(1)] = found.group(2)
    assert "pip install 'warcdeboil[spark]'" in help_of["--engine"]
    for option in ("--spark-master", "--spark-conf"):
        assert "--engine spark" in help_of[option], option
    for option in ("--work-dir", "--keep-work-dir"):
        assert "--engine local" in help_of[option], option
    assert "both engines" in help_of["--resume"].lower()
    assert "both engines" in help_of["--select-index"].lower()


def test_progress_bars_show_bytes_and_time_left(tmp_path: Path) -> None:
    import io

    from rich.console import Console

    from warcdeboil.cli.console import ProgressBars, _human
    from warcdeboil.run.local import clean
    from warcdeboil.run.options import Options

    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=200, color_system=None)
    crawl = FIXTURES / "crawl"
    with ProgressBars(True, console) as bars:
        clean([crawl], tmp_path / "out", Options(workers=1), progress=bars)
    last = {}
    import re

    shown = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", screen.getvalue())  # cursor movements
    for line in shown.replace("\r", "\n").splitlines():
        words = line.split()
        if words and words[0] in ("scan", "fit", "write"):
            last[words[0]] = line
    size = sum(p.stat().st_size for p in crawl.iterdir())
    for stage in ("scan", "write"):
        assert f"{_human(size)}/{_human(size)}, 2/2 files, 56 records" in last[stage], last
        assert "100%" in last[stage] and "0:00:00" in last[stage]  # time left
    assert "partitions, 5 sites" in last["fit"]


def test_warc_output_renames_http_headers_that_no_longer_hold(tmp_path: Path) -> None:
    """A cleaned body is stored plain: Content-Encoding, Transfer-Encoding and the old
    Content-Length are kept under Common Crawl's X-Crawler- names, Content-Length is the new
    body's, and the charset is UTF-8."""
    from warcio.archiveiterator import ArchiveIterator

    done = runner.invoke(app, ["clean", str(FIXTURES / "crawl"), "-o", str(tmp_path), "-j", "1",
                               "-q"])
    assert done.exit_code == 0, done.output
    renamed: set[str] = set()
    for path in sorted(tmp_path.glob("*.warc.gz")):
        with open(path, "rb") as fh:
            for record in ArchiveIterator(fh):
                if record.rec_type != "response" or not record.rec_headers.get_header(
                        "WARC-Source-Record-ID"):
                    continue
                http = record.http_headers
                names = {name.lower() for name, _ in http.headers}
                assert not names & {"content-encoding", "transfer-encoding"}
                assert int(http.get_header("Content-Length")) == len(
                    record.content_stream().read())
                renamed |= {n for n in names if n.startswith("x-crawler-")}
                kind = http.get_header("Content-Type")
                assert kind is None or kind.endswith("; charset=utf-8")
    assert renamed == {"x-crawler-content-encoding", "x-crawler-transfer-encoding",
                       "x-crawler-content-length"}
