"""Time and peak memory of one page against its size, end to end, in content mode.

    python benchmarks/page_size.py [--shapes prose,short,list,table] [--sizes 1,2,4,8,14,16]
                                   [--markdown]

Each run is ``warcdeboil clean PAGE.warc.gz --mode content --format jsonl -j 1`` over an archive
of one generated page, with ``--max-page-mb`` and ``--max-page-tags`` raised so the page is
cleaned, not passed through. Pages are made here, the same every time (a seeded generator of
made-up words, so that no run of eight words comes twice and nothing looks copied): HTML of
SIZE MiB in one of four shapes,

- ``prose``: paragraphs of 1,000-6,000 characters under headings (an article, a long report);
- ``short``: paragraphs of 100-300 characters (a log, a transcript);
- ``list``: one list of items of 100-200 characters (a long index);
- ``table``: one table of rows of five cells of 10-70 characters (a data dump).

Printed per shape and size: CPU-seconds (user + system of the run and its workers) and peak
resident memory (its largest process); per shape the slope of each on log-log axes, fitted over
all sizes (1: linear in the page's size; 2: quadratic), and of CPU-seconds between the largest
size and the largest at most half of it (8 and 16 MiB). Both include Python's start-up and the
run's fixed costs (about 0.5 CPU-s and 60-110 MiB), which flatten the slopes over the smallest
pages.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

from warcdeboil.warc.compression import Codec
from warcdeboil.warc.writer import WarcWriter, rebuild_record

MIB = 1 << 20
SHAPES = ("prose", "short", "list", "table")
SIZES = (1, 2, 4, 8, 14, 16)
SEED = 38
URL = "https://big.example/report"


def _words(rng: random.Random) -> list[str]:
    """A vocabulary of 5,000 made-up words of 2-4 syllables."""
    syllables = [c + v for c in "bcdfghklmnprstvz" for v in ("a", "e", "i", "o", "u", "ai", "ou")]
    return [("".join(rng.choices(syllables, k=rng.randint(2, 4)))) for _ in range(5000)]


def _sentence_text(rng: random.Random, words: list[str], chars: int) -> str:
    """About ``chars`` characters of sentences of made-up words."""
    out: list[str] = []
    length = 0
    while length < chars:
        sentence = rng.choices(words, k=rng.randint(6, 18))
        text = " ".join(sentence).capitalize() + rng.choice(".....?!")
        out.append(text)
        length += len(text) + 1
    return " ".join(out)


def _elements(shape: str, rng: random.Random, words: list[str]) -> Iterator[str]:
    """The body's elements of one shape, without end."""
    if shape == "prose":
        for n in count_from(1):
            yield f"<h2>{_sentence_text(rng, words, 30)}</h2>"
            for _ in range(rng.randint(3, 8)):
                yield f"<p>{_sentence_text(rng, words, rng.randint(1000, 6000))}</p>"
            if n % 5 == 0:
                yield f"<p><a href='/notes/{n}'>{_sentence_text(rng, words, 40)}</a></p>"
    elif shape == "short":
        while True:
            yield f"<p>{_sentence_text(rng, words, rng.randint(100, 300))}</p>"
    elif shape == "list":
        while True:
            yield f"<li>{_sentence_text(rng, words, rng.randint(100, 200))}</li>"
    elif shape == "table":
        while True:
            cells = "".join(f"<td>{_sentence_text(rng, words, rng.randint(10, 70))}</td>"
                            for _ in range(5))
            yield f"<tr>{cells}</tr>"
    else:
        raise ValueError(f"unknown shape {shape!r}")


def count_from(start: int) -> Iterator[int]:
    while True:
        yield start
        start += 1


def make_page(shape: str, size: int, seed: int = SEED) -> bytes:
    """HTML of about ``size`` bytes (a little less) in one of :data:`SHAPES`."""
    rng = random.Random(f"{seed}:{shape}")
    words = _words(rng)
    wrap = {"list": ("<ul>", "</ul>"), "table": ("<table>", "</table>")}.get(shape, ("", ""))
    head = (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{shape} page</title>"
            "</head><body><nav><a href='/'>Home</a> <a href='/about'>About</a></nav><main>"
            f"<h1>A very long {shape} page</h1>{wrap[0]}")
    tail = f"{wrap[1]}</main><footer>Big Example Ltd</footer></body></html>"
    parts = [head]
    length = len(head) + len(tail)
    for element in _elements(shape, rng, words):
        if length + len(element) > size:
            break
        parts.append(element)
        length += len(element)
    parts.append(tail)
    return "".join(parts).encode()


def write_archive(path: Path, html: bytes) -> None:
    """A .warc.gz of one response record holding ``html``."""
    http = (f"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"
            f"Content-Length: {len(html)}\r\n\r\n").encode() + html
    headers = [
        ("WARC-Type", "response"),
        ("WARC-Record-ID", f"<urn:uuid:{uuid.uuid5(uuid.NAMESPACE_URL, URL)}>"),
        ("WARC-Date", "2026-11-28T12:00:00Z"),
        ("WARC-Target-URI", URL),
        ("Content-Type", "application/http; msgtype=response"),
    ]
    with open(path, "wb") as fh:
        WarcWriter(fh, Codec.GZIP).write("WARC/1.1", rebuild_record(headers, http, len(http)
                                                                    - len(html)), http)


def run(archive: Path, size_mb: int, out: Path) -> tuple[float, float]:
    """CPU-seconds and peak RSS (MiB) of one ``warcdeboil clean`` run in a child process
    (``os.wait4``: its own usage and its reaped workers', not earlier runs')."""
    cmd = [sys.executable, "-m", "warcdeboil", "clean", str(archive), "-o", str(out),
           "--mode", "content", "--format", "jsonl", "-j", "1", "-q",
           "--max-page-mb", str(2 * size_mb + 1), "--max-page-tags", "100000000"]
    child = subprocess.Popen(cmd)
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: exit {child.returncode}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def slope(xs: list[float], ys: list[float]) -> float:
    """The least-squares slope of log(y) on log(x)."""
    lx, ly = list(map(math.log, xs)), list(map(math.log, ys))
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    return (sum((a - mx) * (b - my) for a, b in zip(lx, ly, strict=True))
            / sum((a - mx) ** 2 for a in lx))


def top_slope(sizes: list[int], ys: list[float]) -> float:
    """The slope between the largest size and the largest at most half of it (8 and 16 MiB):
    there the fixed costs count least, and the sizes are far enough apart for the timer."""
    top = max(sizes)
    low = max((s for s in sizes if 2 * s <= top), default=min(sizes))
    pick = [sizes.index(low), sizes.index(top)]
    return slope([sizes[i] for i in pick], [ys[i] for i in pick])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="MiB of HTML")
    parser.add_argument("--markdown", action="store_true", help="a Markdown table")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.markdown:
        print("| shape | MiB | CPU-s | peak RSS MiB |\n|---|---:|---:|---:|")
    slopes: list[tuple[str, float, float, float]] = []
    for shape in args.shapes.split(","):
        cpu: list[float] = []
        rss: list[float] = []
        for size in sizes:
            with tempfile.TemporaryDirectory(prefix="page-size-") as tmp:
                archive = Path(tmp) / f"{shape}-{size}.warc.gz"
                write_archive(archive, make_page(shape, size * MIB))
                seconds, peak = run(archive, size, Path(tmp) / "out")
            cpu.append(seconds)
            rss.append(peak)
            print(f"| {shape} | {size} | {seconds:.1f} | {peak:.0f} |" if args.markdown
                  else f"{shape:6} {size:3} MiB  {seconds:7.1f} CPU-s  {peak:6.0f} MiB", flush=True)
        if len(sizes) > 1:
            slopes.append((shape, slope(sizes, cpu), top_slope(sizes, cpu), slope(sizes, rss)))
    if slopes:
        print("\n| shape | slope of CPU-s | of CPU-s, largest sizes | of peak RSS |\n"
              "|---|---:|---:|---:|" if args.markdown else "")
        for shape, of_cpu, of_top, of_rss in slopes:
            print(f"| {shape} | {of_cpu:.2f} | {of_top:.2f} | {of_rss:.2f} |" if args.markdown
                  else f"{shape}: slope of CPU-s {of_cpu:.2f} (largest sizes {of_top:.2f}), "
                  f"of peak RSS {of_rss:.2f}")


if __name__ == "__main__":
    main()
