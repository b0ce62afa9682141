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

import pytest

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
