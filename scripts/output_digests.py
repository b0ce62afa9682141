"""Digest every output of a matrix of ``warcdeboil clean`` runs: a change that must leave the
outputs byte-identical (a refactoring, a compiled path beside the Python one) is checked by
comparing two of these files.

    python scripts/output_digests.py --out digests-before.json [ARCHIVE_OR_DIR ...]
    git switch my-change && pip install -e .
    python scripts/output_digests.py --out digests-after.json [ARCHIVE_OR_DIR ...]
    python scripts/output_digests.py --compare digests-before.json digests-after.json

With no inputs it reads ``fixtures/``, and ``../shared/eval`` and ``../shared/warcs`` where they
exist. Every input is cleaned once per configuration (formats, modes, duplicates, URL rules, the
run's own language model, zstd with a dictionary); the digests are SHA-256 of each output file, the
report's files included, and the exit status of each run. Runs use one worker, as outputs do not
depend on the number of workers (tests/test_pipeline.py checks that).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# name -> extra arguments to `warcdeboil clean`
CONFIGS: dict[str, list[str]] = {
    "warc": ["--format", "warc"],
    "warc-revisit": ["--format", "warc", "--dedup", "revisit", "--compress", "zstd",
                     "--zstd-dict"],
    "warc-none": ["--format", "warc", "--compress", "none"],
    "text": ["--format", "text", "--dedup", "drop"],
    "jsonl": ["--format", "jsonl"],
    "jsonl-template": ["--format", "jsonl", "--mode", "template", "--dedup", "off"],
    "jsonl-lm": ["--format", "jsonl", "--lm", "auto", "--perplexity-buckets",
                 "--line-perplexity", "--url-rules", "{tmp}/rules.json"],
    "markdown": ["--format", "markdown", "--report", "{tmp}/report"],
}


def default_inputs() -> list[Path]:
    found = [ROOT / "fixtures" / "crawl", ROOT / "fixtures" / "codecs"]
    shared = ROOT.parent / "shared"
    found += sorted((shared / "eval").glob("*.warc.gz"))
    if (shared / "warcs").is_dir():
        found.append(shared / "warcs")
    return [p for p in found if p.exists()]


def digest_tree(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*")) if p.is_file()
    }


def run_matrix(inputs: list[Path], configs: dict[str, list[str]]) -> dict[str, object]:
    results: dict[str, object] = {}
    for source in inputs:
        for name, extra in configs.items():
            with tempfile.TemporaryDirectory(prefix="digests-") as tmp:
                out = Path(tmp) / "out"
                args = [a.replace("{tmp}", tmp) for a in extra]
                cmd = [sys.executable, "-m", "warcdeboil", "clean", str(source.resolve()),
                       "-o", str(out), "-j", "1", "-q", *args]
                # run from the temporary directory: `-m` must import the installed package, not a
                # checkout that happens to be the current directory
                done = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp)
                key = f"{source.name} {name}"
                files = digest_tree(out) if out.exists() else {}
                for extra_dir in ("report",):
                    if (Path(tmp) / extra_dir).exists():
                        files.update({f"{extra_dir}/{k}": v for k, v in
                                      digest_tree(Path(tmp) / extra_dir).items()})
                if (Path(tmp) / "rules.json").exists():
                    files["rules.json"] = hashlib.sha256(
                        (Path(tmp) / "rules.json").read_bytes()).hexdigest()
                results[key] = {"status": done.returncode, "files": files,
                                "stderr": done.stderr.strip().splitlines()[-1:]}
                print(f"{key}: exit {done.returncode}, {len(files)} files", file=sys.stderr)
    return results


def compare(before: Path, after: Path) -> int:
    old = json.loads(before.read_text())
    new = json.loads(after.read_text())
    differ = 0
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        if a is None or b is None:
            print(f"{key}: only in {'after' if a is None else 'before'}")
            differ += 1
            continue
        if a["status"] != b["status"]:
            print(f"{key}: exit {a['status']} -> {b['status']}")
            differ += 1
        for name in sorted(set(a["files"]) | set(b["files"])):
            if a["files"].get(name) != b["files"].get(name):
                print(f"{key}: {name} differs")
                differ += 1
    files = sum(len(v["files"]) for v in old.values())
    print(f"{len(old)} runs, {files} files: {differ} differences")
    return 1 if differ else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("inputs", nargs="*", type=Path)
    parser.add_argument("--out", type=Path, help="write the digests here (JSON)")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    parser.add_argument("--configs", help="comma-separated subset of: " + ",".join(CONFIGS))
    args = parser.parse_args()
    if args.compare:
        return compare(*args.compare)
    configs = CONFIGS
    if args.configs:
        configs = {k: CONFIGS[k] for k in args.configs.split(",")}
    results = run_matrix(args.inputs or default_inputs(), configs)
    text = json.dumps(results, indent=1, sort_keys=True)
    if args.out:
        args.out.write_text(text + "\n")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
