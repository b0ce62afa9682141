"""CPU of each per-page step of a ``--mode content`` JSONL run, one step at a time, in one process.

    python benchmarks/content_steps.py ../shared/eval/dragnet.warc.gz [--repeat 3] [--markdown]

Where `speed.py` times the whole command line and callgrind counts its instructions, this says
which step of the run the CPU goes to, in the terms of the code: every page of the archive goes
through one step, then every page through the next, each step timed with
``time.process_time`` (the best of ``--repeat`` rounds). A run of the command line makes the work
directory first (index, site profiles, page store, the duplicate stage's template cuts), which
the later steps read as pass 2 does.

- pass 1: reading the records, ``html_page``, ``analyse``, the payload's digest, the page-store
  entry (encoded and compressed), ``page_signature`` (the fit's input);
- the duplicate stage: the template cuts (many pages at once, as the stage finds them), the
  signature text, shingles, MinHash;
- pass 2: reading the page store, template removal and decoding, ``split_blocks``,
  ``feature_columns``, the first stage's scores, ``context_columns``, the second stage's scores,
  ``judge`` as a whole (the two stages and the page's rules), ``block_verdicts`` as a whole
  (``judge``, repeated and copied blocks), the JSONL line (``page_fields`` and ``json.dumps``).

Steps overlap (``judge`` holds the feature and score steps): the table says so. Not counted:
start-up and imports, the fit, the stage's grouping, writing the index runs, deflating the output.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import zstandard

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import least_cpu  # noqa: E402  (this folder's)

from warcdeboil.dedup.doomed import iter_doomed
from warcdeboil.dedup.minhash import MinHasher
from warcdeboil.dedup.shingles import shingle_hashes_batch
from warcdeboil.dedup.stage import SIGN_BATCH, doomed_of
from warcdeboil.dedup.text import signature_text
from warcdeboil.errors import RecordError
from warcdeboil.output.formats import OutputFormat
from warcdeboil.output.jsonl import page_fields
from warcdeboil.page import content
from warcdeboil.page.dom import CleanText, analyse, page_signature, remove_template
from warcdeboil.page.html import HtmlPage, PageLimits, html_page, payload_digest
from warcdeboil.run.options import Options
from warcdeboil.site.pagestore import PageEntry, _encode, iter_page_store
from warcdeboil.site.profiles import ProfileReader
from warcdeboil.site.sitekey import SiteKeyer, SiteKeyMode
from warcdeboil.warc.reader import WarcRecord, iter_selected

_NONE: frozenset[int] = frozenset()


def _each(func: Callable[..., object], items: Iterable[Any]) -> Callable[[], None]:
    """A step: ``func(*item)`` for each item (argument tuples, made before any is timed)."""
    made = list(items)

    def run() -> None:
        for item in made:
            func(*item)
    return run


def _page(record: WarcRecord) -> HtmlPage | None:
    try:
        return html_page(record, PageLimits())
    except RecordError:  # counted by a run, not a page
        return None


def measure(archive: Path, repeat: int) -> dict[str, float]:
    times: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="warcdeboil-steps-") as tmp:
        work = Path(tmp) / "work"
        subprocess.run([sys.executable, "-m", "warcdeboil", "clean", str(archive), "-o",
                        str(Path(tmp) / "out"), "--format", "jsonl", "--mode", "content",
                        "--workers", "1", "--quiet", "--work-dir", str(work), "--keep-work-dir"],
                       check=True)
        records: list[WarcRecord] = []

        def read() -> None:
            records[:] = [r for r in iter_selected(str(archive), None) if r.error is None]
        times["pass 1: read the records"] = least_cpu(read, repeat)
        pages = [page for page in map(_page, records) if page is not None]
        times["pass 1: html_page"] = least_cpu(_each(_page, ((r,) for r in records)), repeat)
        texts = [analyse(page.markup, structure=True) for page in pages]
        times["pass 1: analyse"] = least_cpu(
            _each(lambda p: analyse(p.markup, structure=True), ((p,) for p in pages)), repeat)
        kind = Options(format=OutputFormat.JSONL).payload_digest  # what a content run takes
        times[f"pass 1: payload digest ({kind})"] = least_cpu(
            _each(payload_digest, ((p, kind) for p in pages)), repeat)
        compressor = zstandard.ZstdCompressor(level=-1)
        entries = [PageEntry(i, 0, 0, page.url, "", "", page.charset, len(page.body), text)
                   for i, (page, text) in enumerate(zip(pages, texts, strict=True))]
        times["pass 1: page-store entry"] = least_cpu(
            _each(_encode, ((entry, compressor) for entry in entries)), repeat)
        times["pass 1: page_signature"] = least_cpu(
            _each(page_signature, ((t,) for t in texts)), repeat)

        stored = list(iter_page_store(work / "pages" / "f000000.pages"))
        if len(stored) != len(pages):  # the steps would not time the pages the run cleans
            raise SystemExit(f"the run stored {len(stored)} pages, the steps read {len(pages)}")
        keyer = SiteKeyer(SiteKeyMode.HOST)
        fitted = json.loads((work / "profiles" / "profiles.json").read_text())
        reader = ProfileReader(work / "profiles", int(fitted["partitions"]))
        batch = [(entry, keyer(entry.url), reader.get(keyer(entry.url))) for entry in stored]
        reader.close()
        chunks = [batch[i:i + SIGN_BATCH] for i in range(0, len(batch), SIGN_BATCH)]
        doomed = [found for chunk in chunks for found in doomed_of(chunk)]
        times["stage: template cuts"] = least_cpu(_each(doomed_of, ((c,) for c in chunks)), repeat)
        signed = [signature_text(e.page, p, d) for (e, _, p), d in zip(batch, doomed, strict=True)]
        times["stage: signature text"] = least_cpu(_each(signature_text, (
            (e.page, p, d) for (e, _, p), d in zip(batch, doomed, strict=True))), repeat)
        text_chunks = [signed[i:i + SIGN_BATCH] for i in range(0, len(signed), SIGN_BATCH)]
        shingles = [s for chunk in text_chunks for s in shingle_hashes_batch(chunk)]
        times["stage: shingles"] = least_cpu(
            _each(shingle_hashes_batch, ((c,) for c in text_chunks)), repeat)
        times["stage: MinHash"] = least_cpu(
            _each(MinHasher().signature, ((s,) for s in shingles)), repeat)

        times["pass 2: read the page store"] = least_cpu(
            lambda: list(iter_page_store(work / "pages" / "f000000.pages")), repeat)
        known = dict(iter_doomed(work / "dedup" / "f000000.doomed"))
        removals = [remove_template(e.page, p.template if p else _NONE,
                                    p.template_slots if p else _NONE, known.get(e.ordinal))
                    for e, _, p in batch]

        def removed() -> None:
            for (entry, _, profile), _ in zip(batch, removals, strict=True):
                remove_template(entry.page, profile.template if profile else _NONE,
                                profile.template_slots if profile else _NONE,
                                known.get(entry.ordinal)).marked.decode("utf-8", "surrogatepass")
        times["pass 2: template removal, decoded"] = least_cpu(removed, repeat)
        marked = [r.marked.decode("utf-8", "surrogatepass") for r in removals]
        times["pass 2: split_blocks"] = least_cpu(
            _each(content.split_blocks, ((m,) for m in marked)), repeat)
        blocks = [content.split_blocks(m) for m in marked]
        judged = [b for b in blocks if b]
        model = content.load_model()
        columns = [content.feature_columns(b) for b in judged]
        times["pass 2: feature_columns"] = least_cpu(
            _each(content.feature_columns, ((b,) for b in judged)), repeat)
        firsts = [model.first_scores(c) for c in columns]
        times["pass 2: first-stage scores"] = least_cpu(
            _each(model.first_scores, ((c,) for c in columns)), repeat)
        times["pass 2: context_columns"] = least_cpu(_each(content.context_columns, zip(
            judged, firsts, strict=True)), repeat)
        both = [c + content.context_columns(b, f)
                for b, c, f in zip(judged, columns, firsts, strict=True)]
        times["pass 2: second-stage scores"] = least_cpu(_each(
            lambda c: content._weighted_sum(c, model.context_weights, model.context_bias),
            ((c,) for c in both)), repeat)
        times["pass 2: judge (both stages and the page rules)"] = least_cpu(
            _each(content.judge, ((b,) for b in judged)), repeat)
        repeated = [p.repeated if p else frozenset() for _, _, p in batch]

        def verdicts() -> None:
            for b, r in zip(blocks, repeated, strict=True):
                content.block_verdicts(b, repeated=r)
        times["pass 2: block_verdicts (judge, repeated and copied blocks)"] = least_cpu(
            verdicts, repeat)
        extractions = [content.extract_blocks(b, repeated=r)
                       for b, r in zip(blocks, repeated, strict=True)]

        def lines() -> None:
            for (entry, _, _), removal, extraction in zip(batch, removals, extractions,
                                                          strict=True):
                cleaned = CleanText(extraction.text, removal.subtrees, removal.slots)
                json.dumps(page_fields(entry.page, cleaned, extraction, False),
                           ensure_ascii=False)
        times["pass 2: JSONL fields and line"] = least_cpu(lines, repeat)
        times["pages"] = len(pages)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("archive", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = parser.parse_args()
    times = measure(args.archive, args.repeat)
    pages = times.pop("pages")
    if not args.markdown:
        print(json.dumps({"pages": pages, "cpu_seconds": times}, indent=1))
        return
    print(f"| step ({int(pages)} pages, best of {args.repeat}) | CPU-s | ms a page |")
    print("|---|---|---|")
    for step, seconds in times.items():
        print(f"| {step} | {seconds:.3f} | {1000 * seconds / pages:.3f} |")


if __name__ == "__main__":
    main()
