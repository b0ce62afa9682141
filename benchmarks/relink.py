"""What pointing revisits across outputs costs: a run with and without the relink step.

    python benchmarks/relink.py [--pages 3000] [--workers 1]

Writes two gzip WARCs: ``a`` holds ``--pages`` pages of one site, ``b`` a revisit of each of
them (by URL and payload digest) between pages of its own. Cleans both to WARC, times the whole
run and the relink step alone, and reports the links files' size and the peak memory of this
process (the relink runs in it).
"""

from __future__ import annotations

import argparse
import hashlib
import resource
import tempfile
import time
from pathlib import Path

from warcdeboil.run import local as pipeline
from warcdeboil.run.local import clean
from warcdeboil.run.options import Options
from warcdeboil.warc.compression import Codec
from warcdeboil.warc.writer import WarcWriter, sha1_digest


def _page(host: str, i: int) -> bytes:
    words = " ".join(f"w{i}x{j}" for j in range(80))
    html = (f"<html><head><title>{i}</title></head><body><header><nav><a href='/'>Home</a>"
            f"<a href='/about'>About</a></nav></header><article><h1>Page {i}</h1><p>{words}</p>"
            "</article><footer>Copyright example, all rights reserved</footer></body></html>")
    return html.encode()


def _response(url: str, body: bytes, n: int) -> tuple[list[tuple[str, str]], bytes]:
    http = (b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
    rid = f"<urn:uuid:{hashlib.md5(url.encode() + bytes([n])).hexdigest()}>"
    return [("WARC-Type", "response"), ("WARC-Target-URI", url),
            ("WARC-Date", "2024-01-01T00:00:00Z"), ("WARC-Record-ID", rid),
            ("Content-Type", "application/http; msgtype=response"),
            ("Content-Length", str(len(http))), ("WARC-Payload-Digest", sha1_digest(body)),
            ("WARC-Block-Digest", sha1_digest(http))], http


def _revisit(url: str, body: bytes, n: int) -> tuple[list[tuple[str, str]], bytes]:
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n"
    rid = f"<urn:uuid:{hashlib.md5(url.encode() + b'r' + bytes([n])).hexdigest()}>"
    return [("WARC-Type", "revisit"), ("WARC-Target-URI", url),
            ("WARC-Date", "2024-06-01T00:00:00Z"), ("WARC-Record-ID", rid),
            ("WARC-Profile",
             "http://netpreserve.org/warc/1.0/revisit/identical-payload-digest"),
            ("Content-Type", "application/http; msgtype=response"),
            ("Content-Length", str(len(head))), ("WARC-Payload-Digest", sha1_digest(body)),
            ("WARC-Block-Digest", sha1_digest(head))], head


def _write(path: Path, records: list[tuple[list[tuple[str, str]], bytes]]) -> None:
    with open(path, "wb") as fh:
        writer = WarcWriter(fh, Codec.GZIP)
        for headers, block in records:
            writer.write("WARC/1.0", headers, block)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=3000)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "in").mkdir()
        pages = [(f"http://news.example/{i}", _page("news", i)) for i in range(args.pages)]
        _write(root / "in" / "a.warc.gz", [_response(u, b, 0) for u, b in pages])
        blog = [(f"http://blog.example/{i}", _page("blog", i)) for i in range(args.pages)]
        b_records = []
        for (url, body), (burl, bbody) in zip(pages, blog, strict=True):
            b_records += [_response(burl, bbody, 1), _revisit(url, body, 1)]
        _write(root / "in" / "b.warc.gz", b_records)
        spent = []
        relink = pipeline.relink

        def timed(*a: object, **k: object) -> object:
            started = time.perf_counter()
            result = relink(*a, **k)  # type: ignore[arg-type]
            spent.append(time.perf_counter() - started)
            return result

        pipeline.relink = timed  # type: ignore[assignment]
        started = time.perf_counter()
        clean([root / "in"], root / "out", Options(workers=args.workers),
              work_dir=root / "work")
        total = time.perf_counter() - started
        links = sum(p.stat().st_size for p in (root / "work" / "links").iterdir())
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"pages {2 * args.pages}, revisits {args.pages} (all in the other file)")
        print(f"run {total:.2f} s, relink {spent[0]:.2f} s ({100 * spent[0] / total:.1f} %)")
        print(f"links files {links / 1e6:.2f} MB ({links / (3 * args.pages):.0f} B a line)")
        print(f"peak RSS of this process {peak:.0f} MiB")


if __name__ == "__main__":
    main()
