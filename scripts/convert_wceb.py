"""Convert the Web Content Extraction Benchmark (WCXB) into evaluation archives and gold files.

    git clone https://github.com/Murrough-Foley/web-content-extraction-benchmark wcxb
    python scripts/convert_wceb.py wcxb --out eval-extra

Source: WCXB by Murrough Foley. Release 1.0 (2026-04) has 2,008 pages of 1,613 sites
(articles, forums, product, service, documentation, collection and listing pages), each with
its main text, in two splits: ``dev`` (1,497 pages) and a held-out ``test`` split (511 pages,
file ids from 4011: pages added after the pre-release of 1,000 pages that earlier versions of
this script read). Licence: CC-BY-4.0 (``metadata.json`` and ``README.md`` of the repository).
The gold was drafted by a language model and reviewed by people (the repository's README says
so); it is not a human annotation from scratch as the five sets of ``../shared/eval`` are.

Read, for each split: ``SPLIT/html/NNNN.html.gz`` (the page, UTF-8) and
``SPLIT/ground-truth/NNNN.json`` (``url``, ``ground_truth.main_content``,
``_internal.page_type.primary``). A checkout of the pre-release (``release/html`` and
``benchmark/ground-truth``, one set, Apache-2.0) is read as one set too.

Writes, in the layout of ``../shared/eval`` (see its README), one archive and gold per split:
``OUT/wceb.warc.gz`` and ``OUT/wceb.gold.jsonl.gz`` for ``dev`` (or the pre-release's one set),
``OUT/wceb-test.warc.gz`` and ``OUT/wceb-test.gold.jsonl.gz`` for ``test``. An archive is a
warcinfo record then one ``response`` per page (``text/html; charset=utf-8``); a gold line is
one object per page: ``url``, ``site`` (the host), ``dataset``, ``id``, ``gold``
(``main_content``), ``page_type`` and ``split``. A page that shares its URL with an earlier page
of its split (the same address fetched twice, with different gold) gets the fragment
``#wceb-ID``, so that every page has a URL of its own and the gold stays keyed by URL.

No fitting step reads a ``-test`` set (``scripts/train_content.py``): it is the held-out split of
pages nobody here has seen. Nothing is downloaded and nothing of the data is committed: the user
names the checkout and the output directory. Deterministic: pages in file-id order, fixed record
ids and dates.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import uuid
from pathlib import Path
from urllib.parse import urlsplit

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

DATASET = "wceb"
# The record ids are UUIDs derived from this and the page's file id: the same archive each run.
_NAMESPACE = uuid.UUID("6c1d3f0e-6a55-4d2b-9d55-0c7e1f2a9b11")
_DATE = "2026-01-01T00:00:00Z"


# (split, its gold directory, its HTML directory, the dataset written) of each layout
_RELEASE_SPLITS = (("dev", "dev/ground-truth", "dev/html", DATASET),
                   ("test", "test/ground-truth", "test/html", f"{DATASET}-test"))
_PRERELEASE = (("", "benchmark/ground-truth", "release/html", DATASET),)


def splits(source: Path) -> tuple[tuple[str, Path, Path, str], ...]:
    """The splits a checkout holds: (split, gold directory, HTML directory, dataset name)."""
    for layout in (_RELEASE_SPLITS, _PRERELEASE):
        found = tuple((split, source / gold, source / html, name)
                      for split, gold, html, name in layout
                      if (source / gold).is_dir() and (source / html).is_dir())
        if found:
            return found
    raise SystemExit(f"{source}: no dev/ and test/ (WCXB 1.0) nor benchmark/ground-truth and "
                     "release/html (the pre-release): a WCXB checkout?")


def read_pages(gold_dir: Path, html_dir: Path, split: str) -> list[dict[str, str]]:
    """One split's pages in file-id order: ``id``, ``url`` (unique in the split), ``site``,
    ``gold``, ``page_type``, ``split`` and ``html``. A page without its HTML, a URL (the gold
    is keyed by URL) or a main text is left out: seven of release 1.0's dev pages (five
    without a URL, two without a text) and one of its test pages (no URL)."""
    pages = []
    seen: set[str] = set()
    for path in sorted(gold_dir.glob("*.json")):
        truth = json.loads(path.read_text(encoding="utf-8"))
        page_id = str(truth.get("file_id") or path.stem)
        html_path = html_dir / f"{page_id}.html.gz"
        if (not html_path.is_file() or not truth.get("url")
                or "main_content" not in truth["ground_truth"]):
            continue
        url = str(truth["url"])
        if url in seen:
            url = f"{url.split('#')[0]}#wceb-{page_id}"
        seen.add(url)
        with gzip.open(html_path, "rt", encoding="utf-8", errors="replace") as fh:
            html = fh.read()
        pages.append({
            "id": page_id,
            "url": url,
            "site": (urlsplit(url).hostname or "").removeprefix("www."),
            "gold": str(truth["ground_truth"]["main_content"]),
            "page_type": str(truth["_internal"]["page_type"]["primary"]),
            "split": split,
            "html": html,
        })
    return pages


def write(pages: list[dict[str, str]], out: Path, name: str = DATASET) -> tuple[Path, Path]:
    """Writes one dataset's archive and gold file; returns their paths."""
    out.mkdir(parents=True, exist_ok=True)
    warc_path, gold_path = out / f"{name}.warc.gz", out / f"{name}.gold.jsonl.gz"
    with open(warc_path, "wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        split = pages[0]["split"] if pages else ""
        info = writer.create_warcinfo_record(f"{name}.warc.gz", {
            "software": "warcdeboil scripts/convert_wceb.py",
            "description": "Web Content Extraction Benchmark (Murrough Foley)"
                           + (f", {split} split" if split else ""),
        })
        # The pre-release's set keeps its record ids; a split's are its own.
        info_key = "warcinfo" if name == DATASET else f"warcinfo {name}"
        info.rec_headers.replace_header(
            "WARC-Record-ID", f"<urn:uuid:{uuid.uuid5(_NAMESPACE, info_key)}>")
        info.rec_headers.replace_header("WARC-Date", _DATE)
        writer.write_record(info)
        for page in pages:
            body = page["html"].encode("utf-8", "surrogatepass")
            http = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8"),
                                               ("Content-Length", str(len(body)))],
                                    protocol="HTTP/1.1")
            record_id = uuid.uuid5(_NAMESPACE, page["id"])
            record = writer.create_warc_record(
                page["url"], "response", payload=io.BytesIO(body), http_headers=http,
                warc_headers_dict={"WARC-Record-ID": f"<urn:uuid:{record_id}>",
                                   "WARC-Date": _DATE})
            writer.write_record(record)
            record.raw_stream.close()  # warcio spools the payload to a temporary file
    lines = []
    for page in pages:
        line = {key: page[key] for key in ("url", "site", "id", "gold", "page_type", "split")}
        line["dataset"] = name
        lines.append(json.dumps(line, ensure_ascii=False) + "\n")
    with open(gold_path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as gold:
        gold.write("".join(lines).encode("utf-8"))
    return warc_path, gold_path


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("source", type=Path, help="a checkout of the benchmark's repository")
    parser.add_argument("--out", type=Path, required=True, help="directory to write into")
    args = parser.parse_args(argv)
    for split, gold_dir, html_dir, name in splits(args.source):
        pages = read_pages(gold_dir, html_dir, split)
        warc_path, gold_path = write(pages, args.out, name)
        left_out = sum(1 for _ in gold_dir.glob("*.json")) - len(pages)
        print(f"{warc_path}: {len(pages)} pages ({left_out} left out: no HTML, URL or text); "
              f"{gold_path}")


if __name__ == "__main__":
    main()
