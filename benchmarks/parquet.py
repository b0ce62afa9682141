"""Parquet output against JSONL: CPU of whole runs, the writers alone, and peak memory as the
input grows.

    python benchmarks/parquet.py cpu ../shared/eval/*.warc.gz [--repeat 3]
    python benchmarks/parquet.py writers ../shared/eval/dragnet.warc.gz [--repeat 5]
    python benchmarks/parquet.py memory ../shared/eval/dragnet.warc.gz [--copies 10]

``cpu``: ``warcdeboil clean ARCHIVE --format jsonl`` and ``--format parquet`` (content mode, the
default of both; one worker; the same options otherwise), alternating (a loaded machine
drifts), the CPU seconds (user + system) of each run's whole process tree
(``speed.run_once``); the best of ``--repeat`` of each, and Parquet's over JSONL's.

``writers``: the page objects of one JSONL run, written again in this process by the JSONL sink
and by the Parquet sink (``_write`` for each page, then ``close``), best of ``--repeat``: what
the two formats' writing costs without the rest of a run, whose noise is larger than the
difference. pyarrow's import is timed apart, in a fresh process after numpy's (a run pays it
once; a ``--dedup mark`` run, the default, imports numpy anyway).

``memory``: the archive, then the archive ``--copies`` times over (``dedup_stage.copies``:
each copy under its own hosts and record ids), each through ``clean --workers 1`` in JSONL and
in Parquet, each run in a fresh parent: the peak resident memory of the largest process
(``ru_maxrss`` of the children). Parquet holds one row group's values at most
(``warcdeboil.output.parquet.ROW_GROUP_ROWS``/``ROW_GROUP_BYTES``): its excess over JSONL
should not grow with the input.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from dedup_stage import copies  # noqa: E402
from speed import bytecode_env, run_once  # noqa: E402

FORMATS = ("jsonl", "parquet")


def cpu(archives: list[Path], repeat: int) -> None:
    env = bytecode_env()
    print(f"| set | pages | jsonl, best of {repeat} | parquet, best of {repeat} | "
          "parquet / jsonl |")
    print("|---|---|---|---|---|")
    for archive in archives:
        runs: dict[str, list[float]] = {fmt: [] for fmt in FORMATS}
        pages = 0
        for i in range(repeat):
            for fmt in FORMATS if i % 2 == 0 else reversed(FORMATS):
                result = run_once(archive, fmt, env)
                runs[fmt].append(result["cpu_seconds"])
                pages = int(result["pages"])
                print(f"  {archive.name} {fmt} run {i + 1}: {result['cpu_seconds']:.2f} CPU-s",
                      file=sys.stderr, flush=True)
        best = {fmt: min(times) for fmt, times in runs.items()}
        print(f"| {archive.name} | {pages} | {best['jsonl']:.2f} CPU-s | {best['parquet']:.2f} "
              f"CPU-s | {best['parquet'] / best['jsonl'] - 1:+.1%} |", flush=True)


def writers(archive: Path, repeat: int) -> None:
    # pyarrow's import in a fresh process, after numpy's (which a --dedup mark run imports).
    timed = ("import time, numpy; t = time.process_time(); import pyarrow.parquet; "
             "print(time.process_time() - t)")
    imported = min(float(subprocess.run([sys.executable, "-c", timed], check=True,
                                        capture_output=True, text=True).stdout)
                   for _ in range(repeat))
    from warcdeboil.output.jsonl import JsonlSink
    from warcdeboil.output.parquet import ParquetSink
    from warcdeboil.warc.compression import Codec

    with tempfile.TemporaryDirectory(prefix="warcdeboil-bench-") as tmp:
        subprocess.run([sys.executable, "-m", "warcdeboil", "clean", str(archive), "-o", tmp,
                        "--format", "jsonl", "--workers", "1", "--quiet"], check=True)
        (output,) = Path(tmp).glob("*.jsonl.gz")
        with gzip.open(output, "rt", encoding="utf-8") as fh:
            pages = [json.loads(line) for line in fh]

    def write(fmt: str) -> tuple[float, int]:
        out = io.BytesIO()
        sink = (JsonlSink(out, Codec.GZIP, archive.name, markdown=False) if fmt == "jsonl"
                else ParquetSink(out, Codec.NONE, archive.name, markdown=False))
        started = time.process_time()
        for page in pages:
            sink._write(dict(page))
        sink.close()
        return time.process_time() - started, len(out.getvalue())

    write("parquet")  # pyarrow's first use (its memory pool, zstd) out of the timings
    best = {}
    for fmt in FORMATS:
        times, size = zip(*(write(fmt) for _ in range(repeat)), strict=True)
        best[fmt] = min(times)
        print(f"{archive.name}, {len(pages)} pages, {fmt}: {best[fmt]:.3f} CPU-s best of "
              f"{repeat}, {size[0]:,} bytes")
    print(f"parquet - jsonl: {best['parquet'] - best['jsonl']:+.3f} CPU-s; importing "
          f"pyarrow.parquet after numpy: {imported:.3f} CPU-s, best of {repeat}")


def memory(archive: Path, count: int) -> None:
    env = bytecode_env()
    # A fresh parent per run: ru_maxrss of children is the largest child so far.
    code = ("import json, sys; sys.path.insert(0, sys.argv[1]); from speed import run_once; "
            "from pathlib import Path; "
            "print(json.dumps(run_once(Path(sys.argv[2]), sys.argv[3], None)))")
    with tempfile.TemporaryDirectory(prefix="warcdeboil-bench-") as tmp:
        big = copies(archive, count, Path(tmp) / f"x{count}.warc.gz")
        print(f"| input | pages | {' | '.join(f'{f} peak RSS' for f in FORMATS)} | parquet "
              "- jsonl |")
        print("|---|---|---|---|---|")
        for name, path in (("1x", archive), (f"{count}x", big)):
            peaks = {}
            pages = 0
            for fmt in FORMATS:
                done = subprocess.run(
                    [sys.executable, "-c", code, str(Path(__file__).parent), str(path), fmt],
                    check=True, capture_output=True, text=True, env=env)
                result = json.loads(done.stdout)
                peaks[fmt], pages = result["peak_rss_mb"], int(result["pages"])
            print(f"| {archive.name} {name} | {pages} | "
                  + " | ".join(f"{peaks[f]:.1f} MB" for f in FORMATS)
                  + f" | {peaks['parquet'] - peaks['jsonl']:+.1f} MB |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["cpu", "writers", "memory"])
    parser.add_argument("archives", type=Path, nargs="+")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--copies", type=int, default=10)
    args = parser.parse_args()
    if args.what == "cpu":
        cpu(args.archives, args.repeat)
    elif args.what == "writers":
        for archive in args.archives:
            writers(archive, args.repeat)
    else:
        for archive in args.archives:
            memory(archive, args.copies)


if __name__ == "__main__":
    main()
