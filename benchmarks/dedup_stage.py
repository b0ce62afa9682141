"""The duplicate stage's cost in a real run: its share of the CPU, and peak memory as pages grow.

    python benchmarks/dedup_stage.py share ../shared/eval/dragnet.warc.gz [--repeat 3]
    python benchmarks/dedup_stage.py memory ../shared/eval/dragnet.warc.gz [--copies 8]
    python benchmarks/dedup_stage.py pipeline dup-crawl     # scripts/make_dup_crawl.py's output
    python benchmarks/dedup_stage.py alone WORK [--repeat 0] # a run's work directory

``alone``: the stage's two steps (``sign_file`` for each input, then ``decide``) in this process
on a copy of a ``--dedup mark`` run's work directory, ``--repeat`` times (0: the imports alone),
with their CPU seconds; under ``valgrind --tool=callgrind`` its instruction count, less that of
``--repeat 0``, is the stage's.

``share``: ``warcdeboil clean --format jsonl --workers 1`` with ``--dedup mark`` (JSONL's
default) and ``--dedup off``, alternating (a loaded machine drifts), CPU of the child processes
(user + system); then, on the work directory of a ``mark`` run, the stage alone
(``pipeline.find_duplicates`` after its verdicts are removed) in a child process: its CPU over
the whole run's is the stage's share.

``memory``: the archive, then the archive ``--copies`` times over (each copy's records under
their own host, ``cN.`` before the original's, and their own record ids: distinct URLs, same
pages), each through ``clean --format jsonl --workers 1``; the peak resident memory of the
largest process (``ru_maxrss`` of the children).

``pipeline``: the generated crawl of known groups (``scripts/make_dup_crawl.py``) through
``clean --format jsonl`` (the stage as a run does it: signatures from the page stores and the
fitted profiles), its groups read back with :func:`warcdeboil.dedup.iter_url_groups`, scored by
pairs as ``benchmarks/dedup.py`` scores the library (precision, recall, recall by kind).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from speed import bytecode_env  # noqa: E402

_STAGE = """
import sys, shutil
from pathlib import Path
from warcdeboil.output.formats import OutputFormat
from warcdeboil.run.local import Options, find_duplicates
work = Path(sys.argv[1])
shutil.rmtree(work / "dedup")
find_duplicates(work, work / "profiles", 1, Options(workers=1, format=OutputFormat.JSONL))
"""


def _child_cpu(command: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """(CPU seconds, peak RSS in MB, stdout) of a child process and its own children."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, check=True, capture_output=True, text=True, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, after.ru_maxrss / 1024, done.stdout


def _clean(archive: Path, out: Path, env: dict[str, str], *extra: str) -> tuple[float, float, dict]:
    cpu, rss, stdout = _child_cpu(
        [sys.executable, "-m", "warcdeboil", "clean", str(archive), "-o", str(out),
         "--format", "jsonl", "--workers", "1", "--json", "--quiet", *extra], env)
    return cpu, rss, json.loads(stdout)


def share(archive: Path, repeat: int) -> None:
    env = bytecode_env()
    runs: dict[str, list[float]] = {"mark": [], "off": []}
    stage = []
    for i in range(repeat):
        for mode in ("mark", "off"):
            with tempfile.TemporaryDirectory(prefix="warcdeboil-bench-") as tmp:
                work = Path(tmp) / "work"
                cpu, _, summary = _clean(archive, Path(tmp) / "out", env, "--dedup", mode,
                                         "--work-dir", str(work))
                runs[mode].append(cpu)
                print(f"run {i + 1} --dedup {mode}: {cpu:.2f} CPU-s, {summary['pages']} pages"
                      + (f", duplicates {summary['duplicates']}" if mode == "mark" else ""))
                if mode == "mark":
                    alone, _, _ = _child_cpu([sys.executable, "-c", _STAGE, str(work)], env)
                    # The child's own start-up (Python, imports): a child that does nothing.
                    idle, _, _ = _child_cpu([sys.executable, "-c", _STAGE.split("work =")[0]],
                                            env)
                    stage.append(alone - idle)
                    print(f"  the stage alone: {alone - idle:.2f} CPU-s "
                          f"({alone:.2f} less {idle:.2f} of start-up and imports)")
    mark, off = min(runs["mark"]), min(runs["off"])
    best_stage = min(stage)
    print(f"best of {repeat}: mark {mark:.2f} CPU-s, off {off:.2f} CPU-s: difference "
          f"{mark - off:.2f} CPU-s ({(mark - off) / mark:.1%} of the mark run)")
    print(f"the stage alone, best of {repeat}: {best_stage:.2f} CPU-s = "
          f"{best_stage / mark:.1%} of the mark run")


def copies(archive: Path, count: int, target: Path) -> Path:
    """``archive`` ``count`` times over, each copy's records under host ``cN.<host>``."""
    from warcdeboil.warc.compression import Codec
    from warcdeboil.warc.reader import iter_records
    from warcdeboil.warc.writer import WarcWriter

    with open(target, "wb") as fh:
        writer = WarcWriter(fh, Codec.GZIP)
        for n in range(count):
            for record in iter_records(archive):
                headers = []
                for key, value in record.headers:
                    lower = key.lower()
                    if lower == "warc-target-uri" and "://" in value:
                        scheme, rest = value.split("://", 1)
                        value = f"{scheme}://c{n}.{rest}" if n else value
                    elif lower in ("warc-record-id", "warc-concurrent-to", "warc-refers-to"):
                        value = f"<urn:uuid:{uuid.uuid5(uuid.NAMESPACE_URL, f'{n}{value}')}>"
                    headers.append((key, value))
                writer.write(record.version, headers, record.block)
    return target


def memory(archive: Path, count: int, extra: tuple[str, ...]) -> None:
    env = bytecode_env()
    with tempfile.TemporaryDirectory(prefix="warcdeboil-bench-") as tmp:
        big = copies(archive, count, Path(tmp) / f"x{count}.warc.gz")
        for name, path in (("1x", archive), (f"{count}x", big)):
            for mode in ("mark", "off"):
                work = Path(tmp) / f"work-{name}-{mode}"
                # A fresh parent per run: ru_maxrss of children is the largest child so far.
                code = ("import json, sys; sys.path.insert(0, sys.argv[1]); "
                        "from dedup_stage import _clean; from pathlib import Path; "
                        "cpu, rss, s = _clean(Path(sys.argv[2]), Path(sys.argv[3]), None, "
                        "'--dedup', sys.argv[4], '--work-dir', sys.argv[5], *sys.argv[6:]); "
                        "print(json.dumps([cpu, rss, s['pages'], s['duplicates']]))")
                done = subprocess.run(
                    [sys.executable, "-c", code, str(Path(__file__).parent), str(path),
                     str(Path(tmp) / f"out-{name}-{mode}"), mode, str(work), *extra],
                    check=True, capture_output=True, text=True, env=env)
                cpu, rss, pages, duplicates = json.loads(done.stdout)
                print(f"{name} --dedup {mode}: {pages} pages, {cpu:.1f} CPU-s, peak RSS "
                      f"{rss:.1f} MB" + (f", {duplicates}" if duplicates else ""), flush=True)
                if mode == "mark":  # the stage again, alone, in a fresh process tree
                    code = ("import sys, resource, subprocess; "
                            "subprocess.run([sys.executable, '-c', sys.argv[1], sys.argv[2]], "
                            "check=True); "
                            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
                    done = subprocess.run([sys.executable, "-c", code, _STAGE, str(work)],
                                          check=True, capture_output=True, text=True, env=env)
                    print(f"  the stage alone: peak RSS {int(done.stdout) / 1024:.1f} MB",
                          flush=True)


def pipeline(crawl_dir: Path) -> None:
    from itertools import combinations

    import dedup as bench  # benchmarks/dedup.py: the crawl, its truth and the scoring
    import numpy as np

    from warcdeboil.dedup import PageSignatures, iter_url_groups
    from warcdeboil.dedup.stage import ROOTS, signatures_dir
    from warcdeboil.output.formats import OutputFormat
    from warcdeboil.run.local import clean
    from warcdeboil.run.options import Options

    pages = bench.read_crawl(crawl_dir / "dup-crawl.warc.gz")
    truth, kinds = bench.truth_pairs(crawl_dir / "truth.json", pages)
    number = {page.record_id: i for i, page in enumerate(pages)}
    with tempfile.TemporaryDirectory(prefix="warcdeboil-bench-") as tmp:
        work = Path(tmp) / "w"
        summary = clean([crawl_dir / "dup-crawl.warc.gz"], Path(tmp) / "out",
                        Options(workers=1, format=OutputFormat.JSONL), work_dir=work)
        # The crawl holds some URLs twice (an updated article): pages are told apart by their
        # record ids, which the stage's files keep beside each page's group.
        signatures = PageSignatures(signatures_dir(work / "dedup"), 1)
        roots = np.load(signatures_dir(work / "dedup") / ROOTS)
        groups: dict[int, list[int]] = {}
        for page in range(signatures.size):
            groups.setdefault(int(roots[page]), []).append(
                number[signatures.strings(page).record_id])
        signatures.close()
        assert len(list(iter_url_groups(work))) == len(pages)
    predicted = {pair for members in groups.values()
                 for pair in combinations(sorted(members), 2)}
    print(json.dumps({"stage": summary.dedup, **bench.score(predicted, truth, kinds)}, indent=2))
    for a, b in sorted(truth - predicted)[:10]:
        print(f"  missed {kinds[a, b]}: {pages[a].url} {pages[b].url}")
    for a, b in sorted(predicted - truth)[:10]:
        print(f"  wrong: {pages[a].url} {pages[b].url}")


def alone(work: Path, repeat: int) -> None:
    import shutil
    import time

    from warcdeboil.dedup.stage import decide, sign_file
    from warcdeboil.dedup.verdicts import SignJob, signatures_dir
    from warcdeboil.site.pagestore import page_store_path
    from warcdeboil.site.sitekey import SiteKeyMode

    meta = json.loads((work / "profiles" / "profiles.json").read_text(encoding="utf-8"))
    inputs = len(list((work / "pages").glob("*.pages")))
    with tempfile.TemporaryDirectory(prefix="warcdeboil-bench-") as tmp:
        dedup = Path(tmp) / "dedup"
        for _ in range(repeat):
            shutil.rmtree(dedup, ignore_errors=True)
            start = time.process_time()
            for i in range(inputs):
                sign_file(SignJob(str(page_store_path(work / "pages", i)),
                                  str(signatures_dir(dedup)), i, str(work / "profiles"),
                                  int(meta["partitions"]), SiteKeyMode(meta["site_key"])))
            signed = time.process_time()
            counts = decide(dedup, inputs)
            print(f"sign {signed - start:.3f} CPU-s, decide {time.process_time() - signed:.3f}"
                  f" CPU-s: {counts.to_dict()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["share", "memory", "pipeline", "alone"])
    parser.add_argument("archive", type=Path, help="an archive (pipeline: a generated crawl's "
                        "directory)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--copies", type=int, default=8)
    parser.add_argument("--run-size", help="memory: pass --run-size MiB to clean (the index's "
                        "sorted runs: 64 MiB by default, which 8x dragnet's entries outgrow)")
    args = parser.parse_args()
    if args.what == "share":
        share(args.archive, args.repeat)
    elif args.what == "pipeline":
        pipeline(args.archive)
    elif args.what == "alone":
        alone(args.archive, args.repeat)
    else:
        memory(args.archive, args.copies,
               ("--run-size", args.run_size) if args.run_size else ())


if __name__ == "__main__":
    main()
