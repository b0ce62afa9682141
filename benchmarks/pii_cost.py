"""What ``--redact-pii`` costs: the CPU of a content-mode JSONL run (one worker) of each
evaluation archive with and without it, and the redaction's own CPU on the same page texts (the
part a shared machine's load moves least).

    python benchmarks/pii_cost.py ../shared/eval/*.warc.gz [--repeat 3] [--json out.json]

Each run is a subprocess (``warcdeboil clean ARCHIVE -f jsonl -j 1 -q``), its CPU the user and
system time of its process tree, bytecode compiled first (``speed.bytecode_env``); runs with and
without the option alternate, and the least of ``--repeat`` is kept. The redaction's own CPU:
:class:`warcdeboil.page.pii.Redactor` over every page's ``text`` of the run without the option,
in this process (the least of three). Counts are the run's ``pii_redacted``.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import least_cpu, output_pages  # noqa: E402  (this folder's)
from speed import bytecode_env  # noqa: E402


def run_cpu(archive: Path, out: Path, redact: bool, env: dict[str, str]) -> tuple[float, dict]:
    """The CPU seconds of one run, and its summary."""
    args = [sys.executable, "-m", "warcdeboil", "clean", str(archive), "-o", str(out), "-f",
            "jsonl", "-j", "1", "--json"] + (["--redact-pii"] if redact else [])
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(args, check=True, capture_output=True, text=True, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, json.loads(done.stdout)


def redaction_cpu(texts: list[str]) -> float:
    from warcdeboil.page.pii import Redactor

    redactor = Redactor()

    def redact_all() -> None:
        for text in texts:
            redactor.redact(text)

    return least_cpu(redact_all)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("archives", type=Path, nargs="+")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    env = bytecode_env()
    rows = []
    print("| dataset | pages | chars | run CPU s | with --redact-pii | + % | redaction CPU s | "
          "% of run | e-mail | IPv4 | IPv6 |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for archive in args.archives:
        plain, redacted = float("inf"), float("inf")
        counts: dict = {}
        with tempfile.TemporaryDirectory(prefix="warcdeboil-pii-") as tmp:
            for i in range(args.repeat):
                cpu, _ = run_cpu(archive, Path(tmp) / f"plain{i}", False, env)
                plain = min(plain, cpu)
                cpu, summary = run_cpu(archive, Path(tmp) / f"pii{i}", True, env)
                redacted = min(redacted, cpu)
                counts = summary["pii_redacted"]
                pages = summary["pages"]
            texts = [page["text"] for page in output_pages(Path(tmp) / "plain0")]
        own = redaction_cpu(texts)
        name = archive.name.split(".")[0]
        row = {"dataset": name, "pages": pages, "chars": sum(map(len, texts)),
               "run_cpu": round(plain, 2), "run_cpu_redact": round(redacted, 2),
               "added_percent": round(100 * (redacted - plain) / plain, 1),
               "redaction_cpu": round(own, 3), "redaction_percent": round(100 * own / plain, 2),
               **counts}
        rows.append(row)
        print(f"| {name} | {pages:,} | {row['chars']:,} | {plain:.2f} | {redacted:.2f} | "
              f"{row['added_percent']:+.1f} | {own:.3f} | {row['redaction_percent']:.2f} | "
              f"{counts['email']:,} | {counts['ipv4']:,} | {counts['ipv6']:,} |", flush=True)
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
