"""Parquet output: JSONL's objects as the rows of one Parquet file per input, with typed columns
derived from ``output/schema.py``, in bounded row groups."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES, http_response, jsonl_pages, outputs_of, shared_file

from warcdeboil._version import __version__
from warcdeboil.dedup.verdicts import DedupMode
from warcdeboil.errors import ConfigError
from warcdeboil.output import parquet
from warcdeboil.output.formats import OutputFormat
from warcdeboil.output.schema import FIELDS, SCHEMA_VERSION, Type, conforms
from warcdeboil.run.local import clean
from warcdeboil.run.madewith import side_path
from warcdeboil.run.options import Options
from warcdeboil.warc.compression import Codec

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

TYPES = {f.name: f.type for f in FIELDS}


def _json_value(value: object, of: Type) -> object:
    """A Parquet value as JSONL writes it: a map's key/value entries as an object."""
    if value is None:
        return None
    if of.kind == "map":
        assert of.item is not None and isinstance(value, list)
        return {e["key"]: _json_value(e["value"], of.item) for e in value}
    if of.kind == "list":
        assert of.item is not None and isinstance(value, list)
        return [_json_value(v, of.item) for v in value]
    if of.kind == "record":
        assert isinstance(value, dict)
        return {name: _json_value(value[name], t) for name, t in of.fields}
    return value


def _rows(directory: Path) -> list[dict]:
    """Every row of the Parquet outputs of a directory, files in name order."""
    rows = []
    for path in outputs_of(directory, "*.parquet"):
        rows += pq.read_table(path).to_pylist()
    return rows


def _as_jsonl(row: dict) -> dict:
    """A row as a JSONL line would hold it: its fields that are not null, as JSON values."""
    return {name: _json_value(value, TYPES[name]) for name, value in row.items()
            if value is not None}


def _same_rows(jsonl: list[dict], rows: list[dict]) -> None:
    assert len(rows) == len(jsonl) > 0
    for line, row in zip(jsonl, rows, strict=True):
        assert list(row) == [f.name for f in FIELDS]  # every column, in the schema's order
        absent = [name for name in row if name not in line]
        assert all(row[name] is None for name in absent), line["url"]
        # A JSONL null and an absent field are both a null column value.
        assert _as_jsonl(row) == {k: v for k, v in line.items() if v is not None}, line["url"]
        assert all(conforms(_json_value(row[k], TYPES[k]), TYPES[k]) for k in line), line["url"]
        # A map's entries in the object's order.
        assert [e["key"] for e in row["removed"]] == list(line["removed"]), line["url"]


def _both(src: Path, tmp_path: Path, **args: object) -> tuple[list[dict], list[dict]]:
    """The same run written as JSONL and as Parquet: its lines and its rows."""
    jsonl, rows = tmp_path / "jsonl", tmp_path / "parquet"
    clean([src], jsonl, Options(workers=1, format=OutputFormat.JSONL, **args))  # type: ignore[arg-type]
    clean([src], rows, Options(workers=1, format=OutputFormat.PARQUET, **args))  # type: ignore[arg-type]
    return jsonl_pages(jsonl), _rows(rows)


def test_every_field_of_every_jsonl_line_is_in_its_row(tmp_path: Path) -> None:
    """Every option that adds a field (but markdown, --format markdown's): the fixture crawl's
    lines and rows, page by page."""
    from conftest import calibrated_model

    from warcdeboil.corpus import FILTERS
    from warcdeboil.corpus.settings import QualitySettings
    from warcdeboil.lm.scoring import LmSettings

    model = str(calibrated_model(tmp_path / "made-up.lm"))  # line_noise needs its calibration
    lines, rows = _both(FIXTURES / "crawl", tmp_path, url_rules=str(tmp_path / "rules.json"),
                        lm=LmSettings(model, True, None, None, True, line_noise=True),
                        redact_pii=True, quality=QualitySettings(tuple(FILTERS)))
    assert {name for line in lines for name in line} == {f.name for f in FIELDS} - {"markdown"}
    _same_rows(lines, rows)
    # Runs with other options have the same schema: their files read as one table.
    clean([FIXTURES / "crawl"], tmp_path / "plain",
          Options(workers=1, format=OutputFormat.PARQUET, dedup=DedupMode.OFF))
    schemas = [pq.read_schema(p).remove_metadata()
               for d in ("parquet", "plain") for p in outputs_of(tmp_path / d, "*.parquet")]
    assert all(schema == parquet.arrow_schema(FIELDS) for schema in schemas)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["cleanportaleval", "dragnet"])
def test_an_eval_set_gives_the_same_rows_as_jsonl(tmp_path: Path, name: str) -> None:
    """Real pages (every record of the set): headings, lists, breadcrumbs, non-ASCII text."""
    src = tmp_path / "in"
    src.mkdir()
    (src / f"{name}.warc.gz").symlink_to(shared_file("eval", f"{name}.warc.gz"))
    lines, rows = _both(src, tmp_path)
    _same_rows(lines, rows)
    assert any(line["headings"] for line in lines) and any(line["lists"] for line in lines)


def test_columns_have_the_schemas_types(tmp_path: Path) -> None:
    clean([FIXTURES / "crawl"], tmp_path, Options(workers=1, format=OutputFormat.PARQUET))
    schema = pq.read_schema(outputs_of(tmp_path, "*.parquet")[0])
    assert schema.names == [f.name for f in FIELDS]
    assert schema.remove_metadata() == parquet.arrow_schema(FIELDS)
    types = {name: schema.field(name).type for name in schema.names}
    assert types["url"] == pa.string() and types["offset"] == pa.int64()
    assert types["language_confidence"] == pa.float64() and types["truncated"] == pa.bool_()
    assert types["headings"] == pa.list_(pa.struct([("level", pa.int64()),
                                                    ("text", pa.string())]))
    assert types["lists"] == pa.list_(pa.list_(pa.string()))
    assert types["removed"] == pa.list_(pa.struct([("key", pa.string()),
                                                   ("value", pa.int64())]))
    assert all(schema.field(name).nullable for name in schema.names)
    # The documentation's names of the types are the types.
    for field in FIELDS:
        # A list's item is named "element" in the file, "item" in Arrow: a name, not a type.
        written = re.sub(r"(item|element): ", "", str(types[field.name]))
        assert written == parquet.arrow_name(field.type), field.name


def test_a_field_added_to_the_schema_is_a_column() -> None:
    from warcdeboil.output.schema import Field, list_of, map_of, nullable, string

    added = (*FIELDS, Field("quality_flags", list_of(string), "always", "[]", ""),
             Field("pii", nullable(map_of(list_of(string))), "always", "{}", ""))
    schema = parquet.arrow_schema(added)
    assert schema.names[-2:] == ["quality_flags", "pii"]
    assert schema.field("pii").type == pa.list_(pa.struct(
        [("key", pa.string()), ("value", pa.list_(pa.string()))]))


def test_the_file_says_its_schema_version_software_and_settings(tmp_path: Path) -> None:
    clean([FIXTURES / "crawl"], tmp_path, Options(workers=1, format=OutputFormat.PARQUET))
    path = outputs_of(tmp_path, "*.parquet")[0]
    said = json.loads(pq.read_schema(path).metadata[b"warcdeboil"])
    assert said["schema_version"] == SCHEMA_VERSION and said["version"] == __version__
    assert said["source"] == "crawl-00000.warc.gz"
    settings = said["settings"]
    assert settings["output-format"] == "parquet" and settings["mode"] == "content"
    assert settings["max-iou"] == "0.95"  # the fit's parameters, as the warcinfo says them
    assert pq.ParquetFile(path).metadata.row_group(0).column(0).compression == "ZSTD"


def test_outputs_are_named_as_jsonl_and_none_is_overwritten(tmp_path: Path) -> None:
    """sample.warc, .warc.gz and .warc.zst side by side: an output each, with its input's
    pages; the record of the options beside each."""
    src = tmp_path / "codecs"
    shutil.copytree(FIXTURES / "codecs", src)
    clean([src], tmp_path / "out", Options(workers=1, format=OutputFormat.PARQUET))
    names = [p.name for p in outputs_of(tmp_path / "out")]
    assert names == ["sample-dict.warc.zst.parquet", "sample.parquet", "sample.warc.parquet",
                     "sample.warc.zst.parquet"]
    for name in names:
        assert pq.read_table(tmp_path / "out" / name).num_rows > 0
        recorded = json.loads(side_path(tmp_path / "out" / name).read_text())["options"]
        assert recorded["format"] == "parquet" and recorded["compress"] == "none"


def test_compress_does_not_change_the_file(tmp_path: Path) -> None:
    """Parquet is compressed inside (zstd): --compress changes neither its name nor bytes."""
    for codec in (None, Codec.GZIP, Codec.NONE):
        clean([FIXTURES / "crawl"], tmp_path / str(codec),
              Options(workers=1, format=OutputFormat.PARQUET, compress=codec))
    first, *others = ({p.name: p.read_bytes() for p in outputs_of(tmp_path / str(codec))}
                      for codec in (None, Codec.GZIP, Codec.NONE))
    assert list(first) == ["crawl-00000.parquet", "crawl-00001.parquet"]
    assert all(other == first for other in others)


def test_row_groups_are_bounded_by_rows(tmp_path: Path, monkeypatch) -> None:
    assert (parquet.ROW_GROUP_ROWS, parquet.ROW_GROUP_BYTES) == (1_000, 2 << 20)  # the docs'
    monkeypatch.setattr(parquet, "ROW_GROUP_ROWS", 5)
    clean([FIXTURES / "crawl"], tmp_path / "small", Options(workers=1, format=OutputFormat.PARQUET))
    clean([FIXTURES / "crawl"], tmp_path / "jsonl", Options(workers=1, format=OutputFormat.JSONL))
    path = outputs_of(tmp_path / "small", "*.parquet")[0]
    meta = pq.ParquetFile(path).metadata
    sizes = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
    assert sizes == [5, 5, 2]
    _same_rows(jsonl_pages(tmp_path / "jsonl"), _rows(tmp_path / "small"))


def test_row_groups_are_bounded_by_bytes() -> None:
    """Rows of 1,000 characters of text, 4,000 bytes a group: four rows a group (each row
    reckoned at its strings and _ROW_OVERHEAD)."""
    out = io.BytesIO()
    sink = parquet.ParquetSink(out, Codec.NONE, "a.warc.gz", markdown=False,
                               row_group_bytes=4000)
    row = {"url": "u", "text": "x" * 1000, "removed": {"short_block": 2}}
    for _ in range(10):
        sink._write(dict(row))
    sink.close()
    meta = pq.ParquetFile(io.BytesIO(out.getvalue())).metadata
    assert [meta.row_group(i).num_rows for i in range(meta.num_row_groups)] == [4, 4, 2]
    table = pq.read_table(io.BytesIO(out.getvalue()))
    assert table.column("removed").to_pylist()[0] == [{"key": "short_block", "value": 2}]
    assert table.column("title").null_count == 10


def test_an_input_without_pages_is_a_file_with_the_schema_and_no_row(
    tmp_path: Path, write_archive
) -> None:
    src = tmp_path / "in"
    src.mkdir()
    write_archive(src / "empty.warc.gz", [
        ([("WARC-Type", "response"), ("WARC-Target-URI", "http://example.com/a.png"),
          ("Content-Type", "application/http; msgtype=response")],
         http_response(b"\x89PNG", [("Content-Type", "image/png")])),
    ], Codec.GZIP)
    clean([src], tmp_path / "out", Options(workers=1, format=OutputFormat.PARQUET))
    path = tmp_path / "out" / "empty.parquet"
    table = pq.read_table(path)
    assert table.num_rows == 0
    assert table.schema.remove_metadata() == parquet.arrow_schema(FIELDS)
    assert json.loads(table.schema.metadata[b"warcdeboil"])["schema_version"] == SCHEMA_VERSION


def test_a_lone_surrogate_is_written_as_the_replacement_character() -> None:
    """Header bytes that are not UTF-8 are held as surrogates: JSONL writes them as they are,
    Parquet (whose strings are UTF-8) as U+FFFD; the other values of the column are kept."""
    out = io.BytesIO()
    sink = parquet.ParquetSink(out, Codec.NONE, "a.warc.gz", markdown=False)
    sink._write({"url": "http://example.com/caf\udce9", "breadcrumbs": ["a\udce9"],
                 "removed": {"r\udce9": 1}})
    sink._write({"url": "http://example.com/b", "breadcrumbs": ["b"], "removed": {"r": 2}})
    sink.close()
    table = pq.read_table(io.BytesIO(out.getvalue()))
    assert table.column("url").to_pylist() == ["http://example.com/caf\ufffd",
                                               "http://example.com/b"]
    assert table.column("breadcrumbs").to_pylist() == [["a\ufffd"], ["b"]]
    assert table.column("removed").to_pylist() == [[{"key": "r\ufffd", "value": 1}],
                                                   [{"key": "r", "value": 2}]]


def test_a_run_stopped_while_writing_leaves_no_file(tmp_path: Path, monkeypatch) -> None:
    """The writer is closed with the output's temporary file, not later by the garbage
    collector on a closed file (which pytest, warnings as errors, would report)."""
    import gc

    from warcdeboil.errors import JobError

    def broken(self, obj):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(parquet.ParquetSink, "_write", broken)
    with pytest.raises((OSError, JobError)):
        clean([FIXTURES / "crawl"], tmp_path / "out",
              Options(workers=1, format=OutputFormat.PARQUET))
    gc.collect()
    assert outputs_of(tmp_path / "out", "**/*") == []


def test_a_field_not_in_the_schema_is_an_error_not_a_lost_value() -> None:
    sink = parquet.ParquetSink(io.BytesIO(), Codec.NONE, "a.warc.gz", markdown=False)
    with pytest.raises(ValueError, match="not_a_field"):
        sink._write({"url": "u", "not_a_field": 1})


def test_without_pyarrow_the_run_is_refused_in_one_line(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(ConfigError) as refused:
        Options(format=OutputFormat.PARQUET)
    assert str(refused.value) == ("--format parquet needs pyarrow: "
                                  "pip install 'warcdeboil[parquet]'")
    Options(format=OutputFormat.JSONL)  # the other formats do not need it


def test_a_pyarrow_without_parquet_is_refused_by_the_sink(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(ConfigError, match=r"pip install 'warcdeboil\[parquet\]'"):
        parquet.ParquetSink(io.BytesIO(), Codec.NONE, "a.warc.gz", markdown=False)


def test_the_command_line_writes_parquet(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from warcdeboil.cli import app

    result = CliRunner().invoke(app, ["clean", str(FIXTURES / "crawl"), "-o",
                                      str(tmp_path / "out"), "--format", "parquet", "-q", "-j",
                                      "1"])
    assert result.exit_code == 0, result.output
    assert [p.name for p in outputs_of(tmp_path / "out")] == [
        "crawl-00000.parquet", "crawl-00001.parquet"]
    assert sum(pq.read_metadata(p).num_rows for p in outputs_of(tmp_path / "out")) == 25


def test_resume_keeps_a_parquet_output_made_with_the_same_options(tmp_path: Path) -> None:
    options = Options(workers=1, format=OutputFormat.PARQUET)
    clean([FIXTURES / "crawl"], tmp_path / "out", options)
    kept = tmp_path / "out" / "crawl-00000.parquet"
    before = kept.stat().st_mtime_ns
    (tmp_path / "out" / "crawl-00001.parquet").unlink()
    clean([FIXTURES / "crawl"], tmp_path / "out", options, resume=True)
    assert kept.stat().st_mtime_ns == before
    assert pq.read_metadata(tmp_path / "out" / "crawl-00001.parquet").num_rows == 13


@pytest.mark.parametrize("reader", ["pandas", "duckdb", "datasets"])
def test_other_readers_read_the_rows(tmp_path: Path, reader: str, monkeypatch) -> None:
    """pandas, DuckDB and Hugging Face datasets, when installed (none is a dependency), as the
    documentation reads a run's outputs."""
    module = pytest.importorskip(reader)
    clean([FIXTURES / "crawl"], tmp_path / "out", Options(workers=1, format=OutputFormat.PARQUET))
    expected = _rows(tmp_path / "out")
    assert len(expected) == 25
    monkeypatch.chdir(tmp_path)
    if reader == "pandas":
        frame = module.read_parquet("out/")  # the options records beside them are not read
        assert list(frame.columns) == [f.name for f in FIELDS]
        assert frame["url"].tolist() == [row["url"] for row in expected]
        assert frame["offset"].tolist() == [row["offset"] for row in expected]
    elif reader == "duckdb":
        got = module.sql("SELECT url, text, removed, map_from_entries(removed) FROM "
                         "read_parquet('out/*.parquet', filename=true) ORDER BY filename, "
                         "\"offset\"").fetchall()
        assert [g[:3] for g in got] == [(r["url"], r["text"], r["removed"]) for r in expected]
        assert all(g[3] == {e["key"]: e["value"] for e in g[2]} for g in got)
    else:
        data = module.load_dataset("parquet", data_files="out/*.parquet", split="train",
                                   cache_dir=str(tmp_path / "cache"))
        assert data.column_names == [f.name for f in FIELDS]
        assert data.to_list() == expected


def test_writing_parquet_does_not_import_pandas_but_pandas_still_works(tmp_path: Path) -> None:
    # pyarrow imports pandas, where installed, at its first conversion of Python values; the
    # sink makes that conversion with pandas hidden. A stand-in pandas on the path records
    # whether it was imported: not by the run, and still importable afterwards.
    fake = tmp_path / "lib" / "pandas"
    fake.mkdir(parents=True)
    marker = tmp_path / "imported"
    fake.joinpath("__init__.py").write_text(
        f"open({str(marker)!r}, 'w').close()\n__version__ = '0.0.1'\n", encoding="utf-8")
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from warcdeboil.output.formats import OutputFormat\n"
        "from warcdeboil.run.local import clean\n"
        "from warcdeboil.run.options import Options\n"
        f"clean([Path({str(FIXTURES / 'crawl')!r})], Path({str(tmp_path / 'out')!r}),\n"
        "      Options(workers=1, format=OutputFormat.PARQUET))\n"
        "print('pandas' in sys.modules)\n"
        f"assert not Path({str(marker)!r}).exists()\n"
        "import pandas\n"
        f"assert Path({str(marker)!r}).exists()\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(tmp_path / "lib"), *filter(None, [os.environ.get("PYTHONPATH")])])}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["False"]
    assert list((tmp_path / "out").rglob("*.parquet"))
