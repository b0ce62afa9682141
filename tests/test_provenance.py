"""Provenance of the outputs: new ids for cleaned records, each output's own warcinfo, and
revisits that a replay tool resolves to a record of the output."""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

import pytest
from conftest import (
    http_response,
    outputs_of,
    shared_file,
    site_pages,
    warc_record,
    warcio_check,
)
from warcio.archiveiterator import ArchiveIterator
from warcio.indexer import Indexer

from warcdeboil import __version__
from warcdeboil.output import relink as relink_module
from warcdeboil.output.formats import OutputFormat
from warcdeboil.output.provenance import SOURCE_FIELD, Revisits
from warcdeboil.run import local as pipeline
from warcdeboil.run.local import apply_profiles, clean, discover_inputs
from warcdeboil.run.options import Options
from warcdeboil.site.fit import FitParams
from warcdeboil.warc.compression import Codec
from warcdeboil.warc.names import escape_name
from warcdeboil.warc.reader import WarcRecord, iter_records, read_record_at
from warcdeboil.warc.writer import sha1_digest

IDENTICAL = "http://netpreserve.org/warc/1.0/revisit/identical-payload-digest"
NOT_MODIFIED = "http://netpreserve.org/warc/1.0/revisit/server-not-modified"
Record = tuple[list[tuple[str, str]], bytes]
INDEX_FIELDS = ("warc-type,warc-target-uri,warc-payload-digest,warc-record-id,warc-refers-to,"
                "warc-refers-to-target-uri,warc-profile,offset,length")


def _fields(record: WarcRecord) -> dict[str, str]:
    lines = record.block.decode("utf-8").split("\r\n")
    return dict(line.split(": ", 1) for line in lines if line)


def _payload_digest(headers: list[tuple[str, str]]) -> str:
    return next(v for k, v in headers if k == "WARC-Payload-Digest")


def _revisit(original: Record, url: str | None = None, *, refers: bool = True,
             profile: str = IDENTICAL, date: str = "2024-06-01T00:00:00Z") -> Record:
    """A revisit of ``original`` as Heritrix writes one (the HTTP head only), with or without
    WARC-Refers-To."""
    headers, block = original
    fields = dict(headers)
    head = block[: block.index(b"\r\n\r\n") + 4]
    extra = [("WARC-Profile", profile),
             ("WARC-Refers-To-Target-URI", fields["WARC-Target-URI"]),
             ("WARC-Refers-To-Date", fields["WARC-Date"])]
    if refers:
        extra.insert(0, ("WARC-Refers-To", fields["WARC-Record-ID"]))
    rev_headers, rev_block = warc_record("revisit", url or fields["WARC-Target-URI"], head,
                                         content_type="application/http; msgtype=response",
                                         extra=extra)
    rev_headers = [(k, date if k == "WARC-Date" else v) for k, v in rev_headers]
    # The payload a revisit stands for is its original's: the digest is the original's.
    return [*rev_headers, ("WARC-Payload-Digest", fields["WARC-Payload-Digest"])], rev_block


def _responses(host: str, count: int) -> list[Record]:
    return [warc_record("response", url, http_response(html.encode()))
            for url, html in site_pages(host, count)]


def _warcio_index(path: Path) -> list[dict[str, str]]:
    """warcio's own index of an archive (``warcio index``): one dict of fields per record."""
    out = io.StringIO()
    with open(path, "rb") as fh:
        Indexer(INDEX_FIELDS, [str(path)], "-").process_one(fh, out, str(path))
    return [json.loads(line) for line in out.getvalue().splitlines()]


def _replay_index(path: Path) -> dict[tuple[str, str], dict[str, str]]:
    """What a replay tool (pywb) looks revisits up in: URL + payload digest -> response."""
    return {(r["warc-target-uri"], r.get("warc-payload-digest", "")): r
            for r in _warcio_index(path) if r["warc-type"] == "response"}


def _assert_revisits_resolve(path: Path) -> int:
    """Every identical-payload-digest revisit of ``path`` names a response of ``path`` by URL
    and payload digest (and by id when it names one), as warcio indexes them; the number of
    revisits."""
    index = _replay_index(path)
    revisits = [r for r in _warcio_index(path) if r["warc-type"] == "revisit"
                and r.get("warc-profile", "").endswith("identical-payload-digest")]
    for revisit in revisits:
        uri = revisit.get("warc-refers-to-target-uri") or revisit["warc-target-uri"]
        original = index[(uri, revisit.get("warc-payload-digest", ""))]
        assert revisit.get("warc-refers-to") in (None, original["warc-record-id"])
        # The response is where the index says.
        record = read_record_at(path, int(original["offset"]), int(original["length"]))
        assert record.record_id == original["warc-record-id"]
    return len(revisits)


def _warcio_reads_every_record(path: Path) -> list[str]:
    with open(path, "rb") as fh:
        theirs = [r.rec_headers.get_header("WARC-Record-ID") for r in ArchiveIterator(fh)]
    assert theirs == [r.record_id for r in iter_records(path)]
    return theirs


@pytest.fixture
def revisited(tmp_path: Path, write_archive) -> Path:
    """Two sites cleaned, each page revisited later in the file (with and without
    WARC-Refers-To, once from another URL), a PNG revisited, and a revisit before its original."""
    news, blog = _responses("news.example", 4), _responses("blog.example", 3)
    png = warc_record("response", "http://news.example/logo.png", http_response(
        b"\x89PNG\r\n\x1a\n" + bytes(range(64)), [("Content-Type", "image/png")]))
    early = _revisit(blog[2], date="2024-04-01T00:00:00Z")
    records = [warc_record("warcinfo", "", b"software: tests\r\n",
                           content_type="application/warc-fields"), early,
               *news, png, *blog,
               _revisit(news[0]), _revisit(news[1], refers=False),
               _revisit(blog[0], "http://mirror.example/copy", refers=False),
               _revisit(png)]
    return write_archive(tmp_path / "revisits.warc.gz", records, Codec.GZIP)


def test_cleaned_records_get_new_ids_naming_their_source(revisited: Path,
                                                         tmp_path: Path) -> None:
    clean([revisited], tmp_path / "out", Options(workers=1))
    output = tmp_path / "out" / revisited.name
    source = {r.record_id: r for r in iter_records(revisited)}
    info, *records = iter_records(output)
    cleaned = [r for r in records if r.get(SOURCE_FIELD)]
    assert len(cleaned) == 7
    for record in cleaned:
        original = source[record.get(SOURCE_FIELD)]
        assert record.record_id not in source
        assert record.block != original.block
        assert record.get("WARC-Warcinfo-ID") == info.record_id
        assert record.get("WARC-Refers-To") is None  # WARC: not on a response record
        assert (record.target_uri, record.get("WARC-Date")) == (
            original.target_uri, original.get("WARC-Date"))
    ids = _warcio_reads_every_record(output)
    assert len(set(ids)) == len(ids) == len(source) + 1
    assert warcio_check(output) == (0, "")


def test_revisits_point_at_the_cleaned_record_and_digest(revisited: Path,
                                                         tmp_path: Path) -> None:
    before = list(iter_records(revisited))
    # In the input the revisits resolve to the originals; cleaning changed those digests.
    assert _assert_revisits_resolve(revisited) == 5
    clean([revisited], tmp_path / "out", Options(workers=1))
    output = tmp_path / "out" / revisited.name
    after = list(iter_records(output))[1:]
    changed = [(old, new) for old, new in zip(before, after, strict=True)
               if old.rec_type == "revisit" and old.to_bytes() != new.to_bytes()]
    assert len(changed) == 4  # not the PNG's; the one before its original too
    for old, new in changed:
        assert new.record_id == old.record_id and new.block == old.block
        assert new.get("WARC-Payload-Digest") != old.get("WARC-Payload-Digest")
    early = after[1]  # before its original: pointed at it once the file was written
    assert early.rec_type == "revisit" and early.to_bytes() != before[1].to_bytes()
    assert early.get("WARC-Refers-To") == after[9].record_id  # blog[2], cleaned
    assert _assert_revisits_resolve(output) == 5
    assert warcio_check(output) == (0, "")


def _two_inputs(tmp_path: Path, write_archive, codec: Codec) -> tuple[Path, list[Record]]:
    """``a``: pages of a site, one of them revisited later in the same file; ``b``: revisits of
    ``a``'s pages (by id, by URL and digest, from another URL) and pages of its own site."""
    news, blog = _responses("news.example", 4), _responses("blog.example", 3)
    ext = {Codec.GZIP: ".warc.gz", Codec.NONE: ".warc", Codec.ZSTD: ".warc.zst"}[codec]
    inputs = tmp_path / "in"
    inputs.mkdir()
    write_archive(inputs / f"a{ext}", [*news, _revisit(news[3])], codec)
    write_archive(inputs / f"b{ext}", [
        _revisit(news[0]), *blog, _revisit(news[1], refers=False),
        _revisit(news[2], "http://mirror.example/copy", refers=False), _revisit(blog[0]),
    ], codec)
    return inputs, news


def _run_replay_index(outputs: list[Path]) -> dict[tuple[str, str], tuple[Path, dict[str, str]]]:
    """URL + payload digest -> (output, warcio's index line) of every response of all outputs."""
    return {(r["warc-target-uri"], r.get("warc-payload-digest", "")): (path, r)
            for path in outputs for r in _warcio_index(path) if r["warc-type"] == "response"}


def _assert_run_revisits_resolve(outputs: list[Path], *, by_id: bool = True) -> int:
    """Every identical-payload-digest revisit of every output names a response of some output,
    by URL and payload digest and (``by_id``) by id, as warcio indexes them; read back at its
    offset. The number of revisits."""
    index = _run_replay_index(outputs)
    count = 0
    for path in outputs:
        for revisit in _warcio_index(path):
            if revisit["warc-type"] != "revisit":
                continue
            uri = revisit.get("warc-refers-to-target-uri") or revisit["warc-target-uri"]
            where, original = index[(uri, revisit["warc-payload-digest"])]
            named = revisit.get("warc-refers-to")
            assert named == original["warc-record-id"] or (not by_id and named is None)
            record = read_record_at(where, int(original["offset"]), int(original["length"]))
            assert record.record_id == original["warc-record-id"]
            assert record.get("WARC-Payload-Digest") == revisit["warc-payload-digest"]
            count += 1
    return count


@pytest.mark.parametrize("workers", [1, 2])
def test_revisits_follow_pages_cleaned_in_another_input(tmp_path: Path, write_archive,
                                                        workers: int) -> None:
    inputs, news = _two_inputs(tmp_path, write_archive, Codec.GZIP)
    # Before: b's revisits of a's pages resolve in the inputs, by warcio's index.
    assert _assert_run_revisits_resolve(sorted(inputs.iterdir()), by_id=False) == 5
    clean([inputs], tmp_path / "out", Options(workers=workers))
    outputs = outputs_of(tmp_path / "out")
    assert [p.name for p in outputs] == ["a.warc.gz", "b.warc.gz"]
    assert _assert_run_revisits_resolve(outputs) == 5
    for path in outputs:
        assert warcio_check(path) == (0, "")
    # Only b's revisits changed in b; its other records are copied byte for byte.
    source = list(iter_records(inputs / "b.warc.gz"))
    written = list(iter_records(outputs[1]))[1:]
    for old, new in zip(source, written, strict=True):
        if old.rec_type == "revisit" and old.target_uri.startswith("http://blog"):
            assert new.to_bytes() != old.to_bytes()  # its original (in b) was cleaned
        elif old.rec_type == "revisit":
            assert new.record_id == old.record_id and new.block == old.block
            assert new.get("WARC-Refers-To") != old.get("WARC-Refers-To")
        else:
            assert new.get(SOURCE_FIELD) == old.record_id


@pytest.mark.parametrize("codec", [Codec.NONE, Codec.ZSTD])
def test_relinked_outputs_are_the_same_for_any_workers(tmp_path: Path, write_archive,
                                                       codec: Codec) -> None:
    inputs, _ = _two_inputs(tmp_path, write_archive, codec)
    options = {"zstd_dictionary": True} if codec is Codec.ZSTD else {}
    runs = []
    for workers in (1, 2):
        out = tmp_path / f"out{workers}"
        clean([inputs], out, Options(workers=workers, **options))
        runs.append({p.name: p.read_bytes() for p in out.iterdir()})
        records = [r for p in outputs_of(out) for r in iter_records(p)]
        cleaned = {r.record_id: r.get("WARC-Payload-Digest") for r in records
                   if r.get(SOURCE_FIELD)}
        revisits = [r for r in records if r.rec_type == "revisit"]
        assert len(revisits) == 5
        for revisit in revisits:
            assert cleaned[revisit.get("WARC-Refers-To")] == revisit.get("WARC-Payload-Digest")
    assert runs[0] == runs[1]


def _interrupted_run(tmp_path: Path, write_archive, monkeypatch: pytest.MonkeyPatch,
                     module: object, name: str) -> tuple[Path, Path, Path, dict[str, bytes]]:
    """A run of two inputs interrupted (KeyboardInterrupt) where ``module.name`` is called:
    its inputs, output and work directories, and the outputs of the same run uninterrupted."""
    inputs, _ = _two_inputs(tmp_path, write_archive, Codec.GZIP)
    clean([inputs], tmp_path / "full", Options(workers=1))
    expected = {p.name: p.read_bytes() for p in (tmp_path / "full").iterdir()}

    def interrupted(*_: object) -> None:
        raise KeyboardInterrupt

    out, work = tmp_path / "out", tmp_path / "work"
    with monkeypatch.context() as patch:
        patch.setattr(module, name, interrupted)
        with pytest.raises(KeyboardInterrupt):
            clean([inputs], out, Options(workers=1), work_dir=work)
    return inputs, out, work, expected


def test_resume_relinks_outputs_written_before(tmp_path: Path, write_archive,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A run ended after writing its outputs, before pointing revisits across them: --resume
    writes the missing output and relinks the one it skips too."""
    inputs, out, work, expected = _interrupted_run(tmp_path, write_archive, monkeypatch,
                                                   pipeline, "relink")
    assert (out / "b.warc.gz").read_bytes() != expected["b.warc.gz"]  # not yet relinked
    (out / "a.warc.gz").unlink()
    summary = clean([inputs], out, Options(workers=1), work_dir=work, resume=True)
    assert summary.resumed == 1
    assert {p.name: p.read_bytes() for p in out.iterdir()} == expected
    # Once more: nothing is left to do, and nothing changes.
    clean([inputs], out, Options(workers=1), work_dir=work, resume=True)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == expected


def test_resume_relinks_when_every_output_was_written(tmp_path: Path, write_archive,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A run ended after writing every output, before pointing revisits across them: there is
    nothing left to write, but --resume still relinks (the outputs then match a whole run's)."""
    inputs, out, work, expected = _interrupted_run(tmp_path, write_archive, monkeypatch,
                                                   pipeline, "relink")
    assert (out / "b.warc.gz").read_bytes() != expected["b.warc.gz"]  # not yet relinked
    summary = clean([inputs], out, Options(workers=1), work_dir=work, resume=True)
    assert summary.resumed == 2
    assert {p.name: p.read_bytes() for p in out.iterdir()} == expected


def test_resume_after_a_kill_between_an_output_and_its_links_file(
        tmp_path: Path, write_archive, monkeypatch: pytest.MonkeyPatch) -> None:
    """Killed after an output was relinked, before its links file said where its records moved:
    the next relink finds its revisits by id and leaves the output as it is."""
    inputs, out, work, expected = _interrupted_run(tmp_path, write_archive, monkeypatch,
                                                   relink_module, "_rewrite")
    assert (out / "b.warc.gz").read_bytes() == expected["b.warc.gz"]  # relinked, links stale
    (out / "a.warc.gz").unlink()
    clean([inputs], out, Options(workers=1), work_dir=work, resume=True)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == expected


def _write_as_is(path: Path, records: list) -> Path:
    """Records written gzip per record with their header fields exactly as given (the writer
    would make their URIs valid)."""
    with open(path, "wb") as fh:
        for headers, block in records:
            head = "\r\n".join(["WARC/1.0", *(f"{k}: {v}" for k, v in headers)]) + "\r\n\r\n"
            fh.write(gzip.compress(head.encode("utf-8", "surrogateescape") + block
                                   + b"\r\n\r\n", mtime=0))
    return path


def test_a_uri_that_is_not_utf8_is_relinked(tmp_path: Path, write_archive) -> None:
    """A URI holding a byte that is not UTF-8 (kept as read) finds its original all the same."""
    news = _responses("news.example", 3)
    odd = "http://news.example/caf\udce9"  # the byte 0xE9 alone, as the reader keeps it
    headers, block = news[2]
    news[2] = [(k, odd if k == "WARC-Target-URI" else v) for k, v in headers], block
    inputs = tmp_path / "in"
    inputs.mkdir()
    # Found by WARC-Refers-To-Target-URI (the odd one) and the digest.
    _write_as_is(inputs / "a.warc.gz", [_revisit(news[2], "http://mirror.example/copy",
                                                 refers=False)])
    _write_as_is(inputs / "b.warc.gz", news)
    clean([inputs], tmp_path / "out", Options(workers=1))
    revisit = list(iter_records(tmp_path / "out" / "a.warc.gz"))[1]
    page = next(r for r in iter_records(tmp_path / "out" / "b.warc.gz")
                if r.get("WARC-Source-Target-URI") == odd)
    assert page.target_uri == "http://news.example/caf%E9"  # the byte, percent-encoded
    assert page.get(SOURCE_FIELD) == dict(news[2][0])["WARC-Record-ID"]
    assert revisit.get("WARC-Refers-To") == page.record_id
    assert revisit.get("WARC-Payload-Digest") == page.get("WARC-Payload-Digest")


def test_apply_alone_relinks_across_its_inputs(tmp_path: Path, write_archive) -> None:
    inputs, _ = _two_inputs(tmp_path, write_archive, Codec.GZIP)
    clean([inputs], tmp_path / "full", Options(workers=1), work_dir=tmp_path / "work")
    found = discover_inputs([inputs])
    apply_profiles(found, tmp_path / "out", tmp_path / "work" / "profiles", Options(workers=2))
    outputs = outputs_of(tmp_path / "out")
    assert _assert_run_revisits_resolve(outputs) == 5
    assert [p.read_bytes() for p in outputs] == [
        p.read_bytes() for p in outputs_of(tmp_path / "full")]


def test_each_output_opens_with_its_own_warcinfo(revisited: Path, tmp_path: Path) -> None:
    fit = FitParams(max_iou=0.9, min_occurrence=2)
    clean([revisited], tmp_path / "out", Options(workers=1, fit=fit))
    output = tmp_path / "out" / revisited.name
    info, source_info, *_ = iter_records(output)
    first = next(iter_records(revisited))
    assert info.rec_type == "warcinfo" and info.version == first.version
    assert info.get("WARC-Filename") == output.name
    assert info.get("WARC-Date") == first.get("WARC-Date")  # not the clock: reproducible
    assert source_info.to_bytes() == first.to_bytes()  # the source's own, kept
    fields = _fields(info)
    assert fields["software"] == f"warcdeboil/{__version__}"
    assert fields["source"] == revisited.name
    assert (fields["output-format"], fields["mode"], fields["site-key"]) == (
        "warc", "template", "host")
    assert (fields["min-occurrence"], fields["max-iou"]) == ("2", "0.9")
    assert info.get("WARC-Block-Digest") == sha1_digest(info.block)


def test_text_output_warcinfo_says_the_same(revisited: Path, tmp_path: Path) -> None:
    clean([revisited], tmp_path / "out", Options(workers=1, format=OutputFormat.TEXT))
    (output,) = outputs_of(tmp_path / "out")
    info, *conversions = iter_records(output)
    fields = _fields(info)
    assert info.get("WARC-Filename") == output.name == "revisits.warc.wet.gz"
    assert (fields["source"], fields["output-format"], fields["mode"]) == (
        revisited.name, "text", "content")
    assert fields["software"] == f"warcdeboil/{__version__}"
    assert len(conversions) == 7 and {r.rec_type for r in conversions} == {"conversion"}
    # Dated by its first page (the only source records a WET file holds).
    assert info.get("WARC-Date") == conversions[0].get("WARC-Date")
    assert warcio_check(output) == (0, "")


def test_a_source_name_that_is_not_utf8_is_escaped(tmp_path: Path, write_archive) -> None:
    name = "caf\udce9\n.warc"  # a byte that is not UTF-8 and a newline, as os.listdir gives them
    src = tmp_path / "in"
    src.mkdir()
    write_archive(src / name, _responses("a.example", 3), Codec.NONE)
    clean([src], tmp_path / "out", Options(workers=1))
    (output,) = outputs_of(tmp_path / "out")
    info = next(iter_records(output))
    assert _fields(info)["source"] == escape_name(name) == "caf%E9%0A.warc"
    assert info.get("WARC-Filename") == "caf%E9%0A.warc"
    info.header_bytes().decode("utf-8")  # valid UTF-8 throughout
    assert warcio_check(output) == (0, "")


def test_an_empty_output_still_has_its_warcinfo(tmp_path: Path, write_archive) -> None:
    png = warc_record("response", "http://a.example/x.png",
                      http_response(b"\x89PNG", [("Content-Type", "image/png")]))
    src = write_archive(tmp_path / "img.warc", [png], Codec.NONE)
    clean([src], tmp_path / "text", Options(workers=1, format=OutputFormat.TEXT))
    (output,) = outputs_of(tmp_path / "text")
    (info,) = iter_records(output)
    assert info.rec_type == "warcinfo" and info.get("WARC-Date") == "1970-01-01T00:00:00Z"


def test_server_not_modified_revisit_follows_its_original_by_id(tmp_path: Path,
                                                                write_archive) -> None:
    pages = _responses("s.example", 3)
    revisit = _revisit(pages[0], profile=NOT_MODIFIED)
    src = write_archive(tmp_path / "nm.warc", [*pages, revisit], Codec.NONE)
    clean([src], tmp_path / "out", Options(workers=1))
    records = list(iter_records(tmp_path / "out" / src.name))
    cleaned, after = records[1], records[-1]
    assert after.get("WARC-Refers-To") == cleaned.record_id
    assert after.get("WARC-Payload-Digest") == cleaned.get("WARC-Payload-Digest")


@pytest.mark.parametrize("name", [
    "iipc__warc-specifications__20130729-heritrix-revisit-with-http-headers.warc.gz",
    "iipc__warc-specifications__20141124-heritrix-server-not-modified.warc.gz",
])
def test_heritrix_revisits_whose_original_is_elsewhere_stay_as_they_are(
    tmp_path: Path, name: str
) -> None:
    source = shared_file("warcs", name)
    clean([source], tmp_path / "out", Options(workers=1))
    info, revisit = iter_records(tmp_path / "out" / name)
    (original,) = iter_records(source)
    assert info.rec_type == "warcinfo" and revisit.to_bytes() == original.to_bytes()


def test_heritrix_revisit_after_its_cleaned_original_resolves(tmp_path: Path,
                                                              write_archive) -> None:
    # The BL home page (2013) revisited by Heritrix: a generated original at the same URL with
    # the digest the revisit names, then the real revisit record, as one crawl would hold them.
    real = shared_file(
        "warcs", "iipc__warc-specifications__20130729-heritrix-revisit-with-http-headers.warc.gz")
    (revisit,) = iter_records(real)
    digest = revisit.get("WARC-Payload-Digest")
    pages = [(url.replace("http://www.bl.uk/story/", "http://www.bl.uk/"), html)
             for url, html in site_pages("www.bl.uk", 4)]
    pages[0] = ("http://www.bl.uk/", pages[0][1])
    records = []
    for url, html in pages:
        headers, block = warc_record("response", url, http_response(html.encode()))
        if url == "http://www.bl.uk/":
            headers = [(k, digest if k == "WARC-Payload-Digest" else v) for k, v in headers]
        records.append((headers, block))
    src = write_archive(tmp_path / "bl.warc.gz", records, Codec.GZIP)
    with open(src, "ab") as fh:
        fh.write(real.read_bytes())
    assert _assert_revisits_resolve(src) == 1  # as it was crawled
    clean([src], tmp_path / "out", Options(workers=1))
    output = tmp_path / "out" / src.name
    *_, after = iter_records(output)
    found = _replay_index(output)[("http://www.bl.uk/", after.get("WARC-Payload-Digest"))]
    cleaned = read_record_at(output, int(found["offset"]), int(found["length"]))
    assert cleaned.get(SOURCE_FIELD) == records[0][0][1][1]
    assert after.get("WARC-Refers-To") == cleaned.record_id
    assert after.block == revisit.block and after.record_id == revisit.record_id
    assert _assert_revisits_resolve(output) == 1
    _warcio_reads_every_record(output)
    assert warcio_check(output) == (0, "")


def test_revisits_map_is_by_id_then_uri_and_digest() -> None:
    source = [("WARC-Record-ID", "<urn:a>"), ("WARC-Target-URI", "<http://x/>"),
              ("WARC-Payload-Digest", "sha1:ABC")]
    cleaned = [("WARC-Record-ID", "<urn:b>"), ("WARC-Payload-Digest", "sha1:NEW")]
    revisits = Revisits()
    assert revisits.resolve([("WARC-Refers-To", "<urn:a>")]) is None
    revisits.add(source, cleaned)
    assert revisits.resolve([("WARC-Record-ID", "<urn:r>"), ("WARC-Refers-To", "<urn:a>"),
                             ("WARC-Payload-Digest", "sha1:abc")]) == [
        ("WARC-Record-ID", "<urn:r>"), ("WARC-Refers-To", "<urn:b>"),
        ("WARC-Payload-Digest", "sha1:NEW")]
    assert revisits.resolve([("WARC-Target-URI", "http://x/"),
                             ("WARC-Payload-Digest", "sha1:abc")]) == [
        ("WARC-Target-URI", "http://x/"), ("WARC-Payload-Digest", "sha1:NEW"),
        ("WARC-Refers-To", "<urn:b>")]
    assert revisits.resolve([("WARC-Target-URI", "http://y/"),
                             ("WARC-Payload-Digest", "sha1:ABC")]) is None


def test_outputs_are_reproducible_between_runs(revisited: Path, tmp_path: Path) -> None:
    clean([revisited], tmp_path / "a", Options(workers=1))
    clean([revisited], tmp_path / "b", Options(workers=2))
    assert (tmp_path / "a" / revisited.name).read_bytes() == (
        tmp_path / "b" / revisited.name).read_bytes()


@pytest.mark.spark
@pytest.mark.parametrize("fmt", [OutputFormat.WARC, OutputFormat.TEXT], ids=lambda f: f.value)
def test_spark_writes_the_same_provenance(spark, revisited: Path, tmp_path: Path,
                                          fmt: OutputFormat) -> None:
    from warcdeboil.spark import run_spark

    clean([revisited], tmp_path / "local", Options(workers=1, format=fmt))
    run_spark([str(revisited)], str(tmp_path / "spark"), Options(format=fmt), session=spark)
    local = {p.name: p.read_bytes() for p in (tmp_path / "local").iterdir()}
    assert local and {p.name: p.read_bytes() for p in (tmp_path / "spark").iterdir()} == local


@pytest.mark.spark
def test_spark_relinks_revisits_across_inputs_as_locally(spark, tmp_path: Path,
                                                        write_archive) -> None:
    from warcdeboil.spark import run_spark

    inputs, _ = _two_inputs(tmp_path, write_archive, Codec.GZIP)
    clean([inputs], tmp_path / "local", Options(workers=2))
    # Through fsspec (local://), as to s3://: the output relinked is downloaded and put back.
    run_spark([str(inputs)], f"local://{tmp_path / 'spark'}", Options(), session=spark)
    local = {p.name: p.read_bytes() for p in (tmp_path / "local").iterdir()}
    assert {p.name: p.read_bytes() for p in (tmp_path / "spark").iterdir()} == local
    assert _assert_run_revisits_resolve(outputs_of(tmp_path / "spark")) == 5


def test_jsonl_is_unchanged_by_provenance(revisited: Path, tmp_path: Path) -> None:
    # JSONL keeps naming the source record: that is the record a reader can find by offset.
    clean([revisited], tmp_path / "out", Options(workers=1, format=OutputFormat.JSONL))
    (output,) = outputs_of(tmp_path / "out")
    with gzip.open(output, "rt", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    source = {r.record_id: r for r in iter_records(revisited)}
    assert len(rows) == 7
    for row in rows:
        assert source[row["record_id"]].offset == row["offset"]


def test_uris_a_record_is_written_with_are_valid(tmp_path: Path, write_archive) -> None:
    """Records warcdeboil writes (cleaned pages, WET records, ARC records made WARC) carry a
    percent-encoded WARC-Target-URI, the original beside it in WARC-Source-Target-URI;
    warcio check does not have to repair them; records copied unchanged keep their bytes."""
    spaced = "http://news.example/a page?q=caf\u00e9 & more"
    encoded = "http://news.example/a%20page?q=caf%C3%A9%20&%20more"
    news = _responses("news.example", 3)
    headers, block = news[1]
    news[1] = [(k, spaced if k == "WARC-Target-URI" else v) for k, v in headers], block
    image = warc_record("resource", "http://news.example/a picture.png", b"\x89PNG",
                        content_type="image/png")
    inputs = tmp_path / "in"
    inputs.mkdir()
    source = _write_as_is(inputs / "a.warc.gz", [*news, image])
    for fmt in (OutputFormat.WARC, OutputFormat.TEXT):
        out = tmp_path / fmt.value
        clean([inputs], out, Options(workers=1, format=fmt))
        (written,) = outputs_of(out)
        records = [r for r in iter_records(written) if r.get(SOURCE_FIELD) == dict(
            news[1][0])["WARC-Record-ID"] or r.get("WARC-Refers-To") == dict(
            news[1][0])["WARC-Record-ID"]]
        assert [(r.get("WARC-Target-URI"), r.get("WARC-Source-Target-URI"))
                for r in records] == [(encoded, spaced)]
        status, said = warcio_check(written)
        assert status == 0 and "Replacing" not in said
    # The image is carried as it was, space and all (the compressed bytes copied).
    raw = [r for r in iter_records(source) if r.rec_type == "resource"][0]
    copied = [r for r in iter_records(tmp_path / "warc" / "a.warc.gz")
              if r.rec_type == "resource"][0]
    assert copied.header_bytes() == raw.header_bytes()
