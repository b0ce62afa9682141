"""Each tool's speed beside the floor: inflating the archive and parsing its pages with lexbor.

    python benchmarks/floor.py ../shared/eval/*.warc.gz [--repeat 1] [--markdown]
        [--only floor,floor-2pass,warcdeboil-warc,deboiler,floor-2pass-text,warcdeboil-jsonl,
        trafilatura,resiliparse]
        [--json out.json]

Two comparisons, each on every archive and on its *heavy pages* (the pages whose HTML is longer
than the archive's median, written to an archive of their own with their request records and
the warcinfo record, so every tool reads the same pages):

- WARC output: ``warcdeboil clean --format warc --workers 1`` (the command line, end to end)
  beside the original deboiler (site-level, as ``peers.py`` runs it);
- main content: ``warcdeboil clean --format jsonl --mode content --workers 1`` beside trafilatura
  and resiliparse (per page, as ``peers.py`` runs them).

The floor is what any tool reading these archives must do at least: inflate every gzip member
(ISA-L, as warcdeboil's reader does) and parse each HTML page once with lexbor (selectolax),
timed in a child process from the raw file bytes on. The *two-pass floor* is the least a tool
that learns in one pass and writes its output in a second must do: both passes inflate and
parse, and the second serialises each page, digests its new block and deflates it for WARC
output (``floor-2pass``), or reads the text of its body for text output (``floor-2pass-text``;
:func:`measure_two_pass_floor`). The command line's own start-up (a run on an
archive with no page) is printed below the tables: on a small archive it alone can be several
times the floor. Every figure is pages per CPU-second of one process (user + system for the
command line; ``time.process_time`` of the extraction for the per-page peers, whose pages are read
and decoded before the clock starts, as in ``peers.py``), and the tool's CPU time a page as a
multiple of the floor's (``×floor``: 2.0 is twice the floor's time) and of the two-pass floor's
(``×two-pass``). Tools run round-robin within a round; an archive view of fewer than ``--small``
pages runs ``--small-repeat`` rounds (the median is reported), others ``--repeat``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shlex
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from peers import (  # this folder's peers.py
    PEERS,
    dataset_name,
    in_child,
    installed,
    measure_command,
    measure_peer,
    recorded_command,
    render,
    version,
)
from speed import bytecode_env  # this folder's speed.py

from warcdeboil.errors import PayloadError
from warcdeboil.page.html import html_page
from warcdeboil.warc.reader import iter_records

# key → (title, what it is compared with in its table)
TOOLS = {
    "floor": "floor (inflate + parse)",
    "floor-2pass": "two-pass floor",
    "floor-2pass-text": "two-pass floor",
    "warcdeboil-warc": "warcdeboil --format warc",
    "deboiler": "deboiler",
    "warcdeboil-jsonl": "warcdeboil --format jsonl --mode content",
    "trafilatura": "trafilatura",
    "resiliparse": "resiliparse",
}
COMMANDS = {
    "warcdeboil-warc": ("--format", "warc"),
    "warcdeboil-jsonl": ("--format", "jsonl", "--mode", "content"),
}
TABLES = {
    "WARC output": ("warcdeboil-warc", ("deboiler",)),
    "Main content (JSONL)": ("warcdeboil-jsonl", ("trafilatura", "resiliparse")),
}


# --- the archives ------------------------------------------------------------------------------


def write_heavy(archive: Path, out: Path) -> tuple[int, int, int]:
    """Write to ``out`` the warcinfo record and the records of ``archive``'s pages whose HTML is
    longer than the median (their members copied byte for byte). Returns (pages, heavy pages,
    median HTML bytes)."""
    sizes: dict[str, int] = {}
    for record in iter_records(archive):
        try:
            page = html_page(record)
        except PayloadError:
            continue
        if page is not None:
            sizes[page.url] = len(page.markup)
    median = int(statistics.median(sizes.values()))
    heavy = {url for url, size in sizes.items() if size > median}
    with archive.open("rb") as src, out.open("wb") as dst:
        for record in iter_records(archive):
            url = record.get("WARC-Target-URI") if record.headers else None
            if record.get("WARC-Type") == "warcinfo" or url in heavy:
                src.seek(record.offset)
                dst.write(src.read(record.length))
    return len(sizes), len(heavy), median


def member_spans(archive: Path) -> list[tuple[int, int, bool]]:
    """(offset, length) in the file of every record's gzip member, and whether it holds an HTML
    page."""
    spans = []
    for record in iter_records(archive):
        try:
            page = html_page(record)
        except PayloadError:
            page = None
        spans.append((record.offset, record.length, page is not None))
    return spans


# --- measuring ---------------------------------------------------------------------------------


def measure_floor(archive: str) -> dict[str, Any]:
    """In a child: inflate every gzip member of the file, and parse each HTML page's body once
    (the members' places are found before the clock starts; none is copied)."""
    import resource

    from isal import isal_zlib
    from selectolax.lexbor import LexborHTMLParser

    path = Path(archive)
    spans = member_spans(path)
    data = memoryview(path.read_bytes())
    started = time.process_time()
    parsed = 0
    for offset, length, is_page in spans:
        record = isal_zlib.decompress(data[offset:offset + length], wbits=31)
        if is_page:  # body: after the WARC header block and the HTTP header block
            http = record.index(b"\r\n\r\n") + 4
            body = record.index(b"\r\n\r\n", http) + 4
            LexborHTMLParser(record[body:])
            parsed += 1
    cpu = time.process_time() - started
    return {"pages": parsed, "cpu_seconds": cpu,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def measure_two_pass_floor(archive: str, text: bool = False) -> dict[str, Any]:
    """In a child: the least that any tool writing a cleaned WARC in two passes must do. Pass 1
    inflates every member and parses each page; pass 2 does both again, then serialises each
    page's tree, digests the new block (SHA-1, for WARC-Block-Digest) and deflates it into a
    member of its own (ISA-L at warcdeboil's level); other records are copied as they are.
    With ``text``, pass 2 reads the text of each page's body instead (lexbor's, one call), as
    a tool writing text in two passes must at least."""
    import hashlib
    import resource

    from isal import isal_zlib
    from selectolax.lexbor import LexborHTMLParser

    from warcdeboil.warc.writer import GZIP_LEVEL

    path = Path(archive)
    spans = member_spans(path)
    data = memoryview(path.read_bytes())
    started = time.process_time()
    parsed = 0
    for second in (False, True):
        for offset, length, is_page in spans:
            record = isal_zlib.decompress(data[offset:offset + length], wbits=31)
            if not is_page:
                continue
            http = record.index(b"\r\n\r\n") + 4
            body = record.index(b"\r\n\r\n", http) + 4
            tree = LexborHTMLParser(record[body:])
            if second and text:
                page = tree.body
                if page is not None:
                    page.text(separator=" ", strip=True)
                parsed += 1
            elif second:
                block = record[:body] + (tree.html or "").encode("utf-8", "surrogatepass")
                hashlib.sha1(block).digest()
                deflater = isal_zlib.compressobj(GZIP_LEVEL, isal_zlib.DEFLATED, 31)
                deflater.compress(block)
                deflater.flush()
                parsed += 1
    cpu = time.process_time() - started
    return {"pages": parsed, "cpu_seconds": cpu,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def measure_tool(key: str, archive: Path, env: dict[str, str]) -> dict[str, Any]:
    """One timed run of a tool on an archive: pages, CPU seconds, peak RSS."""
    if key == "floor":
        return in_child(measure_floor, str(archive))
    if key in ("floor-2pass", "floor-2pass-text"):
        return in_child(measure_two_pass_floor, str(archive), key == "floor-2pass-text")
    if key in COMMANDS:
        with tempfile.TemporaryDirectory(prefix="warcdeboil-floor-") as out:
            argv = [sys.executable, "-m", "warcdeboil", "clean", str(archive), "-o", out,
                    "--workers", "1", "--json", "--quiet", *COMMANDS[key]]
            run = in_child(measure_command, argv, env)
        if run["status"] not in (0, 3):
            raise RuntimeError(f"{shlex.join(argv)} exited with status {run['status']}")
        pages = json.loads(run["stdout"])["pages"]
        return {"pages": pages, "cpu_seconds": run["cpu_seconds"],
                "peak_rss_mb": run["peak_rss_mb"]}
    raw = in_child(measure_peer, key, str(archive), None)
    return {"pages": raw["pages"], "cpu_seconds": raw["cpu_seconds"],
            "peak_rss_mb": raw["peak_rss_mb"]}


def measure_start_up(env: dict[str, str], rounds: int = 3) -> float:
    """Median CPU seconds of ``clean --format warc`` on an archive of one warcinfo record."""
    import gzip

    record = (b"WARC/1.0\r\nWARC-Type: warcinfo\r\n"
              b"WARC-Record-ID: <urn:uuid:00000000-0000-4000-8000-000000000000>\r\n"
              b"WARC-Date: 2026-01-01T00:00:00Z\r\nContent-Length: 0\r\n\r\n\r\n\r\n")
    seconds = []
    with tempfile.TemporaryDirectory(prefix="warcdeboil-start-") as tmp:
        archive = Path(tmp) / "empty.warc.gz"
        archive.write_bytes(gzip.compress(record, mtime=0))
        for _ in range(rounds):
            out = Path(tmp) / f"out{len(seconds)}"
            argv = [sys.executable, "-m", "warcdeboil", "clean", str(archive), "-o", str(out),
                    "--workers", "1", "--quiet", *COMMANDS["warcdeboil-warc"]]
            seconds.append(in_child(measure_command, argv, env)["cpu_seconds"])
    return statistics.median(seconds)


def median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    speeds = [r["pages"] / r["cpu_seconds"] for r in runs]
    return {"pages": runs[0]["pages"], "runs": len(runs),
            "pages_per_cpu_second": statistics.median(speeds),
            "range": [min(speeds), max(speeds)],
            "peak_rss_mb": max(r["peak_rss_mb"] for r in runs)}


# --- tables ------------------------------------------------------------------------------------


def _cell(figures: dict[str, Any] | None, *bounds: dict[str, Any] | None) -> str:
    """Pages per CPU-second, and the CPU time a page as a multiple of each bound's (the floor,
    then the two-pass floor where one was measured)."""
    if figures is None:
        return "—"
    speed = figures["pages_per_cpu_second"]
    ratios = [f"{bound['pages_per_cpu_second'] / speed:.1f}×" for bound in bounds if bound]
    return f"{speed:.0f} ({' / '.join(ratios)})" if ratios else f"{speed:.0f}"


def table(views: dict[str, dict[str, Any]], ours: str, peers: Sequence[str], keys: Sequence[str],
          markdown: bool) -> str:
    bounds = ("floor", "floor-2pass" if ours == "warcdeboil-warc" else "floor-2pass-text")
    columns = [k for k in (*bounds, ours, *peers) if k in keys]
    # Every tool's figure as a multiple of the floor and of the two-pass floor (the bound of
    # a tool that learns in one pass and writes in a second).
    two_pass = bounds[1] in keys
    headers = ["archive (pages)", *(
        TOOLS[k] + ("" if k == "floor" else " (×floor)" if k in bounds or not two_pass
                    else " (×floor / ×two-pass)")
        for k in columns)]
    headers += [f"warcdeboil ÷ {TOOLS[p]}" for p in peers if p in keys and ours in keys]
    rows = []
    for view, figures in views.items():
        floor, floor_2pass = figures.get("floor"), figures.get(bounds[1])
        cells = [_cell(figures.get(k)) if k == "floor"
                 else _cell(figures.get(k), floor) if k in bounds
                 else _cell(figures.get(k), floor, floor_2pass) for k in columns]
        for peer in peers:
            if peer in keys and ours in keys:
                a, b = figures.get(ours), figures.get(peer)
                cells.append(f"{a['pages_per_cpu_second'] / b['pages_per_cpu_second']:.1f}×"
                             if a and b else "—")
        pages = next((f["pages"] for f in figures.values() if f), 0)
        rows.append([f"{view} ({pages})", *cells])
    return render(headers, rows, markdown)


# --- command line ------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("archives", type=Path, nargs="+")
    parser.add_argument("--only", help=f"comma-separated, of: {','.join(TOOLS)}")
    parser.add_argument("--repeat", type=int, default=1, help="rounds for a view")
    parser.add_argument("--small", type=int, default=400,
                        help="a view of fewer pages runs --small-repeat rounds")
    parser.add_argument("--small-repeat", type=int, default=3)
    parser.add_argument("--no-heavy", action="store_true", help="whole archives only")
    parser.add_argument("--json", type=Path, help="write every figure here")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args(argv)
    keys = list(TOOLS) if not args.only else [k.strip() for k in args.only.split(",")]
    unknown = [k for k in keys if k not in TOOLS]
    if unknown:
        parser.error(f"unknown tool {', '.join(unknown)}; choose from {', '.join(TOOLS)}")
    keys = [k for k in keys if k.startswith("floor") or k in COMMANDS or installed(PEERS[k])]
    env = bytecode_env()

    started = time.monotonic()
    views: dict[str, dict[str, Any]] = {}
    medians: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="warcdeboil-heavy-") as tmp:
        for archive in args.archives:
            name = dataset_name(archive)
            todo = [(name, archive)]
            if not args.no_heavy:
                heavy = Path(tmp) / f"{name}-heavy.warc.gz"
                _, count, medians[name] = write_heavy(archive, heavy)
                todo.append((f"{name}, heavy", heavy))
            for view, path in todo:
                count = sum(is_page for _, _, is_page in member_spans(path))
                rounds = max(args.repeat, args.small_repeat if count < args.small else 1)
                runs: dict[str, list[dict[str, Any]]] = {k: [] for k in keys}
                for _ in range(rounds):
                    for key in keys:  # round-robin: the machine's drift reaches every tool
                        runs[key].append(measure_tool(key, path, env))
                views[view] = {k: median_run(r) for k, r in runs.items()}
                line = ", ".join(f"{k} {f['pages_per_cpu_second']:.0f}"
                                 for k, f in views[view].items())
                print(f"{view}: {count} pages, {rounds} round(s): {line} pages/CPU-s",
                      file=sys.stderr, flush=True)
    start_up = measure_start_up(env) if any(k in COMMANDS for k in keys) else None
    wall = time.monotonic() - started

    for title, (ours, peers) in TABLES.items():
        if ours not in keys and not any(p in keys for p in peers):
            continue
        print(f"{title}: pages per CPU-second (CPU time a page ÷ the floor's)\n")
        print(table(views, ours, peers, keys, args.markdown))
        print()
    peaks = ", ".join(f"{k} {max(v[k]['peak_rss_mb'] for v in views.values()):.0f}"
                      for k in keys)
    print(f"peak RSS, MB (largest view): {peaks}")
    print(f"median HTML bytes: {', '.join(f'{n} {m}' for n, m in medians.items())}")
    if start_up is not None:
        print(f"warcdeboil start-up (an archive with no page): {start_up:.3f} CPU-s")
    versions = sorted({f"{d} {version(d)}" for k in keys if k in PEERS for d in PEERS[k].dists}
                      | {f"selectolax {version('selectolax')}", f"isal {version('isal')}"})
    print(f"{wall:.0f} s wall; {os.cpu_count()} CPUs; Python {platform.python_version()}; "
          f"{', '.join(versions)}")
    if args.json:
        data = {"command": recorded_command("benchmarks/floor.py", argv or sys.argv[1:]),
                "wall_seconds": round(wall, 1), "versions": versions, "median_html": medians,
                "start_up_cpu_seconds": start_up,
                "views": views}
        args.json.write_text(json.dumps(data, indent=2) + "\n")
    if any(math.isnan(f["pages_per_cpu_second"]) for v in views.values() for f in v.values()):
        sys.exit(1)


if __name__ == "__main__":
    main()
