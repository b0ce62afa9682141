"""How fast the report opens in headless Chromium, from ``file://``.

    python benchmarks/report_open.py REPORT_DIR [--repeat 5]
    python benchmarks/report_open.py --build ../shared/eval/dragnet.warc.gz [--format jsonl]

Opens the index, the largest site page and the largest sample page ``--repeat`` times each in
one browser (the distribution's ``chromium``, driven over its DevTools pipe as the tests drive
it) and prints, per page, its size and the median time from navigation to the end of its load
event as the browser measured it (``performance`` navigation timing), and as seen from here.
With ``--build``, first runs ``warcdeboil clean ARCHIVE --report`` into a temporary directory,
and prints the CPU time that took.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from chromium_pipe import Chromium, chromium_binary  # noqa: E402

_TIMING = ("(() => { const n = performance.getEntriesByType('navigation')[0]; "
           "return n.loadEventEnd; })()")


def measure(report: Path, repeat: int) -> None:
    binary = chromium_binary()
    if binary is None:
        sys.exit("chromium is not installed")
    pages = [report / "index.html"]
    for sub in ("sites", "pages"):
        found = list((report / sub).glob("*.html"))
        if found:
            pages.append(max(found, key=lambda p: p.stat().st_size))
    with Chromium(binary) as browser:
        for page in pages:
            inside, outside = [], []
            for _ in range(repeat):
                start = time.monotonic()
                browser.open(page)
                outside.append(1000 * (time.monotonic() - start))
                inside.append(float(browser.evaluate(_TIMING)))
                if browser.errors():
                    print(f"{page}: console errors: {browser.errors()}")
            print(f"{page.relative_to(report)}: {page.stat().st_size / 1024:,.0f} KiB, "
                  f"load event {statistics.median(inside):,.0f} ms "
                  f"(seen from here {statistics.median(outside):,.0f} ms), median of {repeat}")


def build(archive: str, fmt: str, into: Path) -> Path:
    report = into / "report"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-m", "warcdeboil", "clean", archive, "-o",
                    str(into / "out"), "--format", fmt, "-j", "1", "-q", "--report",
                    str(report)], check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print(f"clean --report: {cpu:.1f} CPU-s, {sum(1 for _ in report.rglob('*.html')):,} pages "
          f"of report, {sum(p.stat().st_size for p in report.rglob('*')) / 2**20:.1f} MiB")
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("report", nargs="?", type=Path, help="a report directory")
    parser.add_argument("--build", metavar="ARCHIVE", help="make the report of ARCHIVE first")
    parser.add_argument("--format", default="jsonl", help="with --build: the output format")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    if args.build:
        with tempfile.TemporaryDirectory(prefix="warcdeboil-report-") as tmp:
            measure(build(args.build, args.format, Path(tmp)), args.repeat)
    elif args.report:
        measure(args.report, args.repeat)
    else:
        parser.error("give a report directory or --build ARCHIVE")


if __name__ == "__main__":
    main()
