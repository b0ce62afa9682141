"""Shared test helpers: paths to ../shared, a builder for small synthetic archives, a loader
for the project's scripts and benchmarks, and a reader of JSONL outputs."""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
import json
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from warcdeboil.run.madewith import SIDE_SUFFIX
from warcdeboil.warc.compression import Codec
from warcdeboil.warc.writer import WarcWriter, rebuild_record

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
FIXTURES = ROOT / "fixtures"


def load_script(name: str, path: Path) -> ModuleType:
    """A script or benchmark of the project (not a package) imported as module ``name``."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def outputs_of(directory: Path, pattern: str = "*") -> list[Path]:
    """The outputs of a run in ``directory`` whose names match ``pattern`` (``**/*``: also in
    subdirectories), in name order: its files but the records of their options beside them
    (``.NAME.options.json``, :mod:`warcdeboil.run.madewith`)."""
    return sorted(p for p in directory.glob(pattern)
                  if p.is_file() and not p.name.endswith(SIDE_SUFFIX))


def jsonl_pages(directory: Path) -> list[dict]:
    """Every line of the ``*.jsonl.gz`` outputs of a directory, files in name order."""
    lines = []
    for path in sorted(directory.glob("*.jsonl.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            lines += [json.loads(line) for line in fh]
    return lines


def calibrated_model(path: Path) -> Path:
    """A language model with its noise calibration (``LanguageModel.calibrated``), of made-up
    English sentences (no ../shared needed), saved to ``path``."""
    import random

    from warcdeboil.lm import LanguageModel

    rng = random.Random(5)
    words = ["the", "a", "cat", "dog", "bird", "sat", "ran", "slept", "on", "under", "near", "mat",
             "house", "garden", "of", "and", "to", "it", "was", "is", "big", "small", "red"]
    texts = [" ".join(rng.choice(words) for _ in range(rng.randint(4, 12))) + "."
             for _ in range(7000)]
    model = LanguageModel.train(texts)
    assert model.calibrated
    model.save(path)
    return path


def shared_file(*parts: str) -> Path:
    """A file under ../shared, or a skip when this checkout has none beside it."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"../shared is not beside this checkout ({path})")
    return path


def http_response(body: bytes, headers: list[tuple[str, str]] | None = None,
                  status: str = "200 OK") -> bytes:
    head = [f"HTTP/1.1 {status}"]
    head += [f"{k}: {v}" for k, v in (headers or [("Content-Type", "text/html; charset=utf-8")])]
    return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body


def warc_record(rec_type: str, url: str, block: bytes, *, content_type: str | None = None,
                payload_offset: int | None = None, extra: list[tuple[str, str]] | None = None,
                ) -> tuple[list[tuple[str, str]], bytes]:
    if content_type is None:
        content_type = {
            "response": "application/http; msgtype=response",
            "request": "application/http; msgtype=request",
        }.get(rec_type, "application/octet-stream")
    digest = hashlib.sha1(block).hexdigest()
    record_id = uuid.uuid5(uuid.NAMESPACE_URL, f"{rec_type}:{url}:{digest}")
    headers = [
        ("WARC-Type", rec_type),
        ("WARC-Record-ID", f"<urn:uuid:{record_id}>"),
        ("WARC-Date", "2024-05-01T12:00:00Z"),
        ("WARC-Target-URI", url),
        ("Content-Type", content_type),
        *(extra or []),
    ]
    if payload_offset is None and rec_type == "response":
        end = block.find(b"\r\n\r\n")
        payload_offset = end + 4 if end >= 0 else None
    return rebuild_record(headers, block, payload_offset), block


ArchiveBuilder = Callable[[Path, list[tuple[list[tuple[str, str]], bytes]], Codec], Path]


@pytest.fixture
def write_archive() -> ArchiveBuilder:
    """Write records (headers, block) to ``path`` with a codec."""

    def build(path: Path, records: list[tuple[list[tuple[str, str]], bytes]],
              codec: Codec) -> Path:
        with open(path, "wb") as fh:
            writer = WarcWriter(fh, codec)
            for headers, block in records:
                writer.write("WARC/1.0", headers, block)
        return path

    return build


def site_pages(host: str, count: int, *, article_words: int = 60) -> list[tuple[str, str]]:
    """Pages of one site sharing a header, nav and footer, each with its own article."""
    pages = []
    for i in range(count):
        words = " ".join(f"word{i}x{j}" for j in range(article_words))
        html = (
            f"<!DOCTYPE html><html><head><title>Page {i}</title></head><body>"
            f"<header><div class='logo'>{host} daily</div>"
            "<nav><ul><li><a href='/'>Home</a></li><li><a href='/news'>News</a></li></ul></nav>"
            "</header>"
            f"<article><h1>Headline number {i}</h1><p>{words}</p>"
            f"<p>Second paragraph of story {i} keeps going for a while.</p></article>"
            f"<footer><p>Copyright {host}. All rights reserved. Contact us.</p></footer>"
            "</body></html>"
        )
        pages.append((f"http://{host}/story/{i:03d}", html))
    return pages


def incomplete_archives(directory: Path) -> dict[str, str]:
    """Three archives of one site's three pages, written to ``directory``, whose last page's
    record is incomplete: a plain .warc whose last record declares 100 bytes more than the file
    holds (its HTML whole), a .warc.gz whose last gzip member loses its last 200 bytes, and a
    whole record the crawler marked ``WARC-Truncated: length``. File name -> that page's URL."""
    import zlib

    from warcdeboil.warc.writer import serialise

    directory.mkdir(parents=True, exist_ok=True)
    pages = site_pages("cut.example", 3)
    url = pages[-1][0]

    def record(page: tuple[str, str], extra: list[tuple[str, str]] | None = None) -> bytes:
        return serialise("WARC/1.0", *warc_record(
            "response", page[0], http_response(page[1].encode()), extra=extra))

    whole = [record(page) for page in pages]
    head, _, rest = whole[-1].partition(b"\r\n\r\n")
    block = rest[: -len(b"\r\n\r\n")]
    head = head.replace(f"Content-Length: {len(block)}".encode(),
                        f"Content-Length: {len(block) + 100}".encode())
    (directory / "overshoot.warc").write_bytes(b"".join(whole[:-1]) + head + b"\r\n\r\n"
                                               + block)
    members = []
    for raw in whole:
        deflater = zlib.compressobj(6, zlib.DEFLATED, 31)
        members.append(deflater.compress(raw) + deflater.flush())
    (directory / "clipped.warc.gz").write_bytes(b"".join(members)[:-200])
    marked = [*whole[:-1], record(pages[-1], [("WARC-Truncated", "length")])]
    (directory / "marked.warc").write_bytes(b"".join(marked))
    return {"overshoot.warc": url, "clipped.warc.gz": url, "marked.warc": url}


class _WarcioBrotli:
    """warcio (1.8) sets an attribute on brotli's Decompressor, which brotli 1.2 forbids: give
    the second reader of the tests a decompressor it can use."""

    def __init__(self) -> None:
        import brotli

        self._inflater = brotli.Decompressor()
        self.unused_data = None

    def decompress(self, data: bytes) -> bytes:
        return bytes(self._inflater.process(data))


def _use_compatible_brotli() -> None:
    from warcio.bufferedreaders import BufferedReader

    BufferedReader.DECOMPRESSORS["br"] = _WarcioBrotli


_use_compatible_brotli()


def warcio_check(path: Path) -> tuple[int, str]:
    """Run ``warcio check`` (digests, lengths) on an archive; zstd is decoded to plain first."""
    import contextlib
    import io
    import tempfile
    from types import SimpleNamespace

    from warcio.checker import Checker

    from warcdeboil.warc.reader import iter_records

    with tempfile.TemporaryDirectory() as tmp:
        if path.name.endswith(".zst"):
            plain = Path(tmp) / (path.name + ".warc")
            with open(plain, "wb") as fh:
                for record in iter_records(path):
                    fh.write(record.to_bytes())
            path = plain
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            status = Checker(SimpleNamespace(inputs=[str(path)], verbose=False)).process_all()
    return status, out.getvalue()


def synthetic_crawl() -> list[tuple[list[tuple[str, str]], bytes]]:
    """Two sites with a template, a one-page site, and records that are not pages."""
    records = [warc_record("warcinfo", "", b"software: tests\r\n",
                           content_type="application/warc-fields")]
    pages = site_pages("news.example", 6) + site_pages("www.blog.example", 4)
    pages += site_pages("single.example", 1)
    pages.sort(key=lambda page: page[1][-40:])  # interleave the sites
    for i, (url, html) in enumerate(pages):
        request = f"GET / HTTP/1.1\r\nHost: x{i}\r\n\r\n".encode()
        records.append(warc_record("request", url, request))
        records.append(warc_record("response", url, http_response(html.encode())))
        if i == 3:
            png = b"\x89PNG\r\n\x1a\n" + bytes(range(200))
            records.append(warc_record(
                "response", "http://news.example/logo.png",
                http_response(png, [("Content-Type", "image/png")])))
            records.append(warc_record("metadata", url, b"via: test\r\n",
                                       content_type="application/warc-fields"))
    return records


# -- archives with faults of the real web, made here ----------------------------------------

# How records are packed into a file: plain, one gzip member or zstd frame each, or one gzip
# member for them all (a whole-file gzip stream); and the file name's suffix for each.
PACKINGS = {"plain": ".warc", "gzip": ".warc.gz", "zstd": ".warc.zst", "one-member": ".warc.gz"}


def pack(records: list[bytes], packing: str) -> bytes:
    """Serialised records (or ARC records) packed as :data:`PACKINGS` says."""
    import zlib

    import zstandard

    def member(data: bytes) -> bytes:
        deflater = zlib.compressobj(6, zlib.DEFLATED, 31)
        return deflater.compress(data) + deflater.flush()

    if packing == "plain":
        return b"".join(records)
    if packing == "one-member":
        return member(b"".join(records))
    if packing == "gzip":
        return b"".join(member(r) for r in records)
    assert packing == "zstd"
    compressor = zstandard.ZstdCompressor(write_checksum=True)
    return b"".join(compressor.compress(r) for r in records)


def declare_length(record: bytes, length: int | str) -> bytes:
    """A serialised WARC record whose Content-Length says ``length`` (its block unchanged)."""
    head, _, rest = record.partition(b"Content-Length: ")
    _, _, tail = rest.partition(b"\r\n")
    return head + b"Content-Length: " + str(length).encode() + b"\r\n" + tail


def pages_crawl(count: int = 5) -> list[tuple[list[tuple[str, str]], bytes]]:
    """A warcinfo record, then ``count`` HTML pages of one site."""
    records = [warc_record("warcinfo", "", b"software: tests\r\n",
                           content_type="application/warc-fields")]
    for url, html in site_pages("pages.example", count):
        records.append(warc_record("response", url, http_response(html.encode())))
    return records


def request_response_crawl(pages: list[tuple[str, str]]) -> list[bytes]:
    """A warcinfo record, then a request and a response record for each (url, html) page."""
    records = [warc_record("warcinfo", "", b"software: tests\r\n",
                           content_type="application/warc-fields")]
    for url, html in pages:
        records.append(warc_record("request", url, f"GET {url} HTTP/1.1\r\n\r\n".encode()))
        records.append(warc_record("response", url, http_response(html.encode())))
    return records


def fitted_profiles(crawl: Path, tmp_path: Path) -> Path:
    """The site profiles of ``crawl``, made by the ``index`` and ``fit`` commands (for tests of
    ``apply``): ``tmp_path/work`` and ``tmp_path/profiles``."""
    from typer.testing import CliRunner

    from warcdeboil.cli import app

    runner = CliRunner()
    work, profiles = tmp_path / "work", tmp_path / "profiles"
    done = runner.invoke(app, ["index", str(crawl), "--work-dir", str(work), "-q"])
    assert done.exit_code == 0, done.output
    done = runner.invoke(app, ["fit", "--work-dir", str(work), "--profiles", str(profiles),
                               "-q"])
    assert done.exit_code == 0, done.output
    return profiles


def lines_kept(pages: list[dict], scores: str, limit: float) -> tuple[dict[str, str], int]:
    """What a line filter at ``limit`` leaves of JSONL ``pages``, worked out from their
    unfiltered text and each line's score in the field ``scores`` (a line without a score is
    kept): the text by URL, and how many lines go."""
    kept_text, dropped = {}, 0
    for page in pages:
        kept = [line for line, score in zip(page["text"].split("\n"), page[scores], strict=True)
                if score is None or score <= limit]
        dropped += len(page[scores]) - len(kept)
        kept_text[page["url"]] = "\n".join(kept)
    return kept_text, dropped


def count_char_lookups(model: Any, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The rows of each lookup the language model's character model makes from now on (the
    list fills as it is used)."""
    seen: list[int] = []
    lookups = model.chars._log10_probs

    def counted(rows: Any) -> Any:
        seen.append(len(rows))
        return lookups(rows)

    monkeypatch.setattr(model.chars, "_log10_probs", counted)
    return seen


def pywb_bad_arc() -> bytes:
    """An ARC file like pywb's ``bad.arc``: its file header and two records declare a length of
    ``-1`` or ``abc``, and the records a date of 18 digits."""
    return (
        b"filedesc://bad.arc.gz 127.0.0.1 20140301000000 text/plain -1\n"
        b"1 0 Bad Capture\nURL IP-address Archive-date Content-type Archive-length\n\n"
        b"http://example.com/ 93.184.216.119 201404010000000000 text/html -1\n\n"
        b"http://example.com/ 93.184.216.119 201404010000000000 text/html abc\n"
    )


def arc_record(url: str, block: bytes, length: int | str | None = None,
               date: str = "20140216050221") -> bytes:
    """One ARC (v1) record: its header line (declaring ``length``, the block's by default),
    its block and the newline after it."""
    declared = len(block) if length is None else length
    return f"{url} 93.184.216.119 {date} text/html {declared}\n".encode() + block + b"\n"


@pytest.fixture(scope="session")
def dragnet_work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A work directory of dragnet indexed for JSONL (structure marks: either mode) and fitted,
    shared by the report's tests."""
    from warcdeboil.output.formats import OutputFormat
    from warcdeboil.run.local import build_index, fit_profiles
    from warcdeboil.run.options import Options

    archive = shared_file("eval", "dragnet.warc.gz")
    options = Options(workers=2, format=OutputFormat.JSONL)
    work = tmp_path_factory.mktemp("dragnet") / "work"
    build_index([archive], work, options)
    fit_profiles(work, work / "profiles", options)
    return work


@pytest.fixture(scope="session")
def spark():
    """One SparkSession on a local[2] master for the whole test session."""
    pytest.importorskip("pyspark", reason="the Spark engine's tests need pip install '.[spark]'")
    from warcdeboil.spark.session import build_session

    session = build_session("local[2]", {
        "spark.ui.enabled": "false",
        "spark.sql.shuffle.partitions": "4",
        "spark.default.parallelism": "4",
        "spark.driver.memory": "2g",
    })
    yield session
    session.stop()


@pytest.fixture
def crawl(tmp_path: Path, write_archive: ArchiveBuilder) -> Path:
    """A directory holding one archive, ``a.warc.gz``, of :func:`synthetic_crawl` (modules that
    need other inputs define their own ``crawl``)."""
    src = tmp_path / "crawl"
    src.mkdir()
    write_archive(src / "a.warc.gz", synthetic_crawl(), Codec.GZIP)
    return src
