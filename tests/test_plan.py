"""The plan made before the first record is read: nothing the user gave is overwritten, read
twice, or lost to another input's output, and odd names come out as valid UTF-8."""

from __future__ import annotations

import contextlib
import gzip
import itertools
import json
import os
from pathlib import Path

import pytest
from conftest import outputs_of, synthetic_crawl, warcio_check
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from warcdeboil.cli import app
from warcdeboil.errors import ConfigError, PlanError
from warcdeboil.output.formats import OutputFormat
from warcdeboil.run.local import clean, discover_inputs
from warcdeboil.run.options import Options
from warcdeboil.run.plan import (
    FORMAT_SUFFIXES,
    has_archive_suffix,
    output_codec,
    output_name,
    plan_outputs,
)
from warcdeboil.warc.compression import Codec, detect_codec
from warcdeboil.warc.names import escape_name
from warcdeboil.warc.remote import ARCHIVE_SUFFIXES

runner = CliRunner()
CODEC_OF_SUFFIX = {".warc": Codec.NONE, ".warc.gz": Codec.GZIP, ".warc.zst": Codec.ZSTD,
                   ".arc": Codec.NONE, ".arc.gz": Codec.GZIP}


def _clean(*args: str) -> object:
    return runner.invoke(app, ["clean", *args, "-j", "1", "-q"])


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def crawl(tmp_path: Path, write_archive) -> Path:
    src = tmp_path / "in"
    src.mkdir()
    write_archive(src / "a.warc.gz", synthetic_crawl(), Codec.GZIP)
    write_archive(src / "b.warc.gz", synthetic_crawl()[:9], Codec.GZIP)
    return src


# -- outputs that would overwrite inputs -------------------------------------------------------


def test_output_directory_equal_to_the_input_is_refused(crawl: Path) -> None:
    before = _tree(crawl)
    result = _clean(str(crawl), "-o", str(crawl))
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1
    assert f"{crawl}: the output directory is or holds the input {crawl};" in result.stderr
    assert _tree(crawl) == before  # nothing overwritten, nothing added


def test_output_directory_holding_a_named_input_is_refused(crawl: Path) -> None:
    result = _clean(str(crawl / "a.warc.gz"), "-o", str(crawl.parent))
    assert result.exit_code == 2
    assert "holds the input" in result.stderr and str(crawl / "a.warc.gz") in result.stderr


def test_output_inside_the_input_is_never_read_back(crawl: Path) -> None:
    out = crawl / "out"
    first = _clean(str(crawl), "-o", str(out), "--json")
    assert first.exit_code == 0, first.output
    outputs = _tree(out)
    assert sorted(outputs) == [".a.warc.gz.options.json", ".b.warc.gz.options.json",
                               "a.warc.gz", "b.warc.gz"]  # each with the record of its options
    second = _clean(str(crawl), "-o", str(out), "--json")
    assert second.exit_code == 0, second.output
    assert json.loads(second.stdout)["inputs"] == 2
    assert _tree(out) == outputs  # same files, same bytes, no out/out/


def test_a_symlinked_output_directory_is_seen_through(crawl: Path, tmp_path: Path) -> None:
    (tmp_path / "alias").symlink_to(crawl)
    result = _clean(str(crawl), "-o", str(tmp_path / "alias"))
    assert result.exit_code == 2 and "holds the input" in result.stderr


# -- inputs that would share an output ---------------------------------------------------------


@pytest.mark.parametrize("pair", [(".warc.gz", ".arc.gz"), (".warc", ".warc.gz"),
                                  (".warc", ".arc")], ids="+".join)
@pytest.mark.parametrize("extra", [["-j", "1"], ["-j", "2"], ["--compress", "gzip"],
                                   ["-f", "text", "--compress", "none"]], ids=" ".join)
def test_same_stem_different_suffix_get_outputs_of_their_own(
    tmp_path: Path, write_archive, pair: tuple[str, str], extra: list[str]
) -> None:
    src = tmp_path / "in"
    src.mkdir()
    for suffix in pair:
        write_archive(src / f"x{suffix}", synthetic_crawl(), CODEC_OF_SUFFIX[suffix])
    result = runner.invoke(app, ["clean", str(src), "-o", str(tmp_path / "out"), "-j", "2",
                                 "--json", "-q", *extra])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["inputs"] == 2 and len(summary["outputs"]) == 2
    assert summary["pages"] == 2 * 11
    names = [p.name for p in outputs_of(tmp_path / "out")]
    assert len(names) == 2
    for name in names:
        assert warcio_check(tmp_path / "out" / name)[0] == 0


def test_two_files_of_one_name_in_two_directories_are_refused_by_name(
    tmp_path: Path, write_archive
) -> None:
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        write_archive(tmp_path / folder / "x.warc.gz", synthetic_crawl(), Codec.GZIP)
    result = _clean(str(tmp_path / "a" / "x.warc.gz"), str(tmp_path / "b" / "x.warc.gz"),
                    "-o", str(tmp_path / "out"))
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1
    assert (f"{tmp_path}/a/x.warc.gz and {tmp_path}/b/x.warc.gz would both be written to "
            f"{tmp_path}/out/x.warc.gz") in result.stderr
    assert not (tmp_path / "out").exists()


def test_the_same_file_reached_twice_is_read_once(crawl: Path, tmp_path: Path) -> None:
    (crawl / "0.warc.gz").symlink_to(crawl / "a.warc.gz")  # met first; the real name is kept
    os.link(crawl / "b.warc.gz", crawl / "d.warc.gz")
    found = discover_inputs([crawl, crawl / "a.warc.gz"])
    assert [rel.as_posix() for _, rel in found] == ["a.warc.gz", "b.warc.gz"]
    summary = clean([crawl, crawl / "a.warc.gz"], tmp_path / "out", Options(workers=1))
    assert summary.inputs == 2
    assert summary.to_dict()["pages"] == 11 + 4
    assert [p.name for p in outputs_of(tmp_path / "out")] == ["a.warc.gz", "b.warc.gz"]


# -- where outputs can go ----------------------------------------------------------------------


def test_a_url_output_is_refused_by_the_local_engine(crawl: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = _clean(str(crawl), "-o", "s3://bucket/x")
    assert result.exit_code == 2
    assert "s3://bucket/x" in result.output and "--engine spark" in result.output
    assert not (tmp_path / "s3:").exists()
    with pytest.raises(ConfigError, match="writes to local paths"):
        clean([crawl], "s3://bucket/x")
    assert not (tmp_path / "s3:").exists()


def test_a_file_url_output_is_the_local_path(crawl: Path, tmp_path: Path) -> None:
    result = _clean(f"file://{crawl}", "-o", f"file://{tmp_path}/out")
    assert result.exit_code == 0, result.output
    assert [p.name for p in outputs_of(tmp_path / "out")] == ["a.warc.gz", "b.warc.gz"]


def test_an_output_that_cannot_be_written_stops_before_the_scan(
    crawl: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "file").write_text("not a directory")
    scanned = []
    monkeypatch.setattr("warcdeboil.run.local.build_index", lambda *a, **k: scanned.append(1))
    result = _clean(str(crawl), "-o", str(tmp_path / "file" / "out"))
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1
    assert f"{tmp_path}/file/out: cannot write the outputs here" in result.stderr
    assert not scanned


def test_content_mode_with_warc_output_is_a_usage_error(crawl: Path, tmp_path: Path) -> None:
    for command in (["clean", str(crawl)], ["apply", str(crawl), "--profiles", str(tmp_path)]):
        result = runner.invoke(app, [*command, "-o", str(tmp_path / "out"), "--mode", "content"])
        assert result.exit_code == 2
        assert "--mode content writes text" in result.output
    assert not (tmp_path / "out").exists()


# -- empty inputs ------------------------------------------------------------------------------


NO_RECORD = "no WARC or ARC record in the input"


@pytest.mark.parametrize(("content", "reason", "stretches"), [
    (b"", NO_RECORD, 0),
    (b"\0" * (10 << 20), "no record header", 1),  # a stretch of NUL bytes, skipped and told
    (b"\r\n  \r\n", NO_RECORD, 0),
], ids=["zero bytes", "10 MB of NUL", "blank lines"])
def test_an_input_without_records_is_a_problem_and_the_run_goes_on(
    crawl: Path, tmp_path: Path, content: bytes, reason: str, stretches: int
) -> None:
    (crawl / "empty.warc").write_bytes(content)
    result = _clean(str(crawl), "-o", str(tmp_path / "out"), "--json")
    assert result.exit_code == 3, result.output
    summary = json.loads(result.stdout)
    assert summary["problems"] == {reason: 1}
    assert summary["pages"] == 11 + 4
    for file in summary["files"]:
        assert file["records"] == file["cleaned"] + file["carried"] + file["skipped"]
    (empty,) = [f for f in summary["files"] if f["path"].endswith("empty.warc")]
    assert (empty["records"], empty["skipped"]) == (stretches, stretches)
    assert empty["problems"] == {reason: 1}


@pytest.mark.parametrize("fmt", ["warc", "jsonl"])
def test_apply_alone_counts_an_input_without_records(
    crawl: Path, tmp_path: Path, fmt: str
) -> None:
    assert runner.invoke(app, ["index", str(crawl), "--work-dir", str(tmp_path / "w"),
                               "-j", "1", "-q"]).exit_code == 0
    assert runner.invoke(app, ["fit", "--work-dir", str(tmp_path / "w"), "--profiles",
                               str(tmp_path / "p"), "-j", "1", "-q"]).exit_code == 0
    (tmp_path / "new").mkdir()
    (tmp_path / "new" / "empty.warc.gz").write_bytes(b"")
    result = runner.invoke(app, ["apply", str(tmp_path / "new"), "-o", str(tmp_path / "out"),
                                 "--profiles", str(tmp_path / "p"), "-f", fmt, "-j", "1"])
    assert result.exit_code == 3
    assert NO_RECORD in result.stderr


# -- names: distinct by construction, honest, valid UTF-8 --------------------------------------


def test_names_say_what_the_content_is(tmp_path: Path, write_archive) -> None:
    src = tmp_path / "in"
    src.mkdir()
    write_archive(src / "plain.warc.gz", synthetic_crawl(), Codec.NONE)  # a name that lies
    write_archive(src / "p.warc", synthetic_crawl(), Codec.NONE)
    clean([src], tmp_path / "warc", Options(workers=1))
    assert [p.name for p in outputs_of(tmp_path / "warc")] == ["p.warc",
                                                                      "plain.warc.gz.warc"]
    for path in outputs_of(tmp_path / "warc"):
        assert detect_codec(path.read_bytes()[:8]) is Codec.NONE
    clean([src], tmp_path / "jsonl", Options(workers=1, format=OutputFormat.JSONL))
    names = [p.name for p in outputs_of(tmp_path / "jsonl")]
    assert names == ["p.warc.jsonl.gz", "plain.jsonl.gz"]  # gzip for every input of a run
    for name in names:
        with gzip.open(tmp_path / "jsonl" / name) as fh:
            assert json.loads(fh.readline())["url"].startswith("http")


def test_an_odd_name_is_kept_on_disk_and_escaped_in_text(tmp_path: Path, write_archive) -> None:
    src = tmp_path / "in"
    src.mkdir()
    raw = b"caf\xe9 %41\n.warc.gz"  # latin-1 é (not UTF-8), a %XX look-alike, a newline
    write_archive(Path(os.fsdecode(os.path.join(os.fsencode(src), raw))), synthetic_crawl(),
                  Codec.GZIP)
    result = _clean(str(src), "-o", str(tmp_path / "out"), "-f", "jsonl", "--json")
    assert result.exit_code == 0, result.output
    result.stdout_bytes.decode("utf-8")  # the summary is valid UTF-8
    side, name = sorted(os.listdir(os.fsencode(tmp_path / "out")))
    assert name == b"caf\xe9 %41\n.jsonl.gz"  # byte-exact on disk, and the record beside it
    assert side == b".caf\xe9 %41\n.jsonl.gz.options.json"
    data = gzip.decompress((tmp_path / "out" / os.fsdecode(name)).read_bytes())
    rows = [json.loads(line) for line in data.decode("utf-8").splitlines()]  # strict UTF-8
    assert len(rows) == 11
    assert {row["warc_file"] for row in rows} == {"caf%E9 %2541%0A.warc.gz"}
    summary = json.loads(result.stdout)
    assert summary["outputs"] == [f"{tmp_path}/out/caf%E9 %2541%0A.jsonl.gz"]


def _unescape(text: str) -> bytes:
    out, i = bytearray(), 0
    while i < len(text):
        if text[i] == "%" and len(text) >= i + 3 and all(
                c in "0123456789ABCDEFabcdef" for c in text[i + 1:i + 3]):
            out.append(int(text[i + 1:i + 3], 16))
            i += 3
        else:
            out += text[i].encode("utf-8")
            i += 1
    return bytes(out)


@given(st.binary(max_size=40))
def test_escaping_round_trips_any_name(raw: bytes) -> None:
    name = os.fsdecode(raw)
    escaped = escape_name(name)
    escaped.encode("utf-8")  # never a surrogate
    assert not any(ord(c) < 0x20 or ord(c) == 0x7F for c in escaped)
    assert _unescape(escaped) == raw
    if b"%" not in raw and all(b >= 0x20 and b != 0x7F for b in raw):
        with contextlib.suppress(UnicodeDecodeError):  # printable UTF-8 stays as it is
            assert escaped == raw.decode("utf-8")


SUFFIXES = [*ARCHIVE_SUFFIXES, *(s.upper() for s in ARCHIVE_SUFFIXES)]
stems = st.text(st.sampled_from("ab.-_%é"), max_size=8).flatmap(
    lambda stem: st.sampled_from(["", *ARCHIVE_SUFFIXES]).map(lambda s: stem + s))
codecs = st.sampled_from(list(Codec))
compress = st.sampled_from([None, *Codec])


@given(st.lists(st.tuples(stems, st.sampled_from(SUFFIXES), codecs), min_size=2, max_size=6,
                unique_by=lambda t: t[0] + t[1]),
       st.sampled_from(list(OutputFormat)), compress)
def test_no_two_input_names_share_an_output_name(inputs, fmt, chosen) -> None:
    """Any names (stems that end like archives too), whatever each input's actual codec."""
    outputs = {}
    for stem, suffix, actual in inputs:
        name = stem + suffix
        codec = output_codec(fmt, chosen, lambda a=actual: a)
        output = output_name(f"dir/{name}", fmt, codec)
        assert output.startswith("dir/") and output.endswith(FORMAT_SUFFIXES[fmt] + codec.suffix)
        assert output not in outputs, (name, outputs.get(output))
        outputs[output] = name
    assert len(outputs) == len(inputs)


@pytest.mark.parametrize("fmt", list(OutputFormat), ids=lambda f: f.value)
@pytest.mark.parametrize("chosen", [None, *Codec], ids=lambda c: c.value if c else "auto")
def test_every_pair_of_suffixes_plans_distinct_outputs(tmp_path: Path, fmt, chosen) -> None:
    """Every pair of suffixes, on real files (each of its named codec, and one that lies), with
    the output directory beside the inputs and inside them: no output is an input, none shared."""
    src = tmp_path / "in"
    pairs = itertools.combinations_with_replacement(ARCHIVE_SUFFIXES, 2)
    for i, pair in enumerate(pairs):
        folder = src / str(i)
        folder.mkdir(parents=True)
        for name in {"x" + pair[0], "x" + pair[1], "x.warc.warc" + pair[0]}:
            record = b"WARC/1.0\r\n\r\n"
            gzipped = name.endswith(".gz")
            (folder / name).write_bytes(gzip.compress(record) if gzipped else record)
    for out in (tmp_path / "out", src / "out"):
        found = discover_inputs([src], exclude=out)
        assert len(found) == 5 * 2 + 10 * 3
        planned = plan_outputs(found, out, fmt, chosen)
        outputs = [p.output for p in planned]
        assert len(set(outputs)) == len(outputs) == len(found)
        assert not {os.path.realpath(p) for p in outputs} & {
            os.path.realpath(p) for p, _ in found}
        for plan in planned:
            assert plan.output.name.endswith(FORMAT_SUFFIXES[fmt] + plan.codec.suffix)


def test_plan_refuses_a_name_without_an_archive_suffix_when_it_meets_another(
    tmp_path: Path
) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x").write_bytes(b"WARC/1.0")  # named by hand, no archive suffix
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "x.warc").write_bytes(b"WARC/1.0")
    assert not has_archive_suffix("x")
    found = discover_inputs([tmp_path / "a" / "x", tmp_path / "b" / "x.warc"])
    with pytest.raises(PlanError, match="would both be written to"):
        plan_outputs(found, tmp_path / "out", OutputFormat.WARC, None)
