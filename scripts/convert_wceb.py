"""Convert the Web Content Extraction Benchmark (WCXB) into an evaluation archive and gold file.

    git clone https://github.com/Murrough-Foley/web-content-extraction-benchmark wcxb
    python scripts/convert_wceb.py wcxb --out eval-extra

Source: 1,000 pages of 821 sites collected in 2025-2026 (articles, forums, product, service,
documentation, collection and listing pages), each with its main text, by Murrough Foley,
Apache License 2.0 (``release/LICENSE`` of the repository). The gold was written by a language
model and checked by a person (the repository's README says so); it is not a human annotation
from scratch as the five sets of ``../shared/eval`` are. Read: ``release/html/NNNN.html.gz``
(the page, UTF-8) and ``benchmark/ground-truth/NNNN.json`` (``url``,
``ground_truth.main_content``, ``_internal.page_type.primary``).

Writes, in the layout of ``../shared/eval`` (see its README): ``OUT/wceb.warc.gz``, a warcinfo
record then one ``response`` per page (``text/html; charset=utf-8``), and
``OUT/wceb.gold.jsonl.gz``, one object per page: ``url``, ``site`` (the host), ``dataset``,
``id``, ``gold`` (``main_content``) and ``page_type``. 38 pages share their URL with an earlier
page (the same address fetched twice, with different gold): each later one gets the fragment
``#wceb-ID``, so that every page has a URL of its own and the gold stays keyed by URL.

Nothing is downloaded and nothing of the data is committed: the user names the checkout and the
output directory. Deterministic: pages in file-id order, fixed record ids and dates.
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


def read_pages(source: Path) -> list[dict[str, str]]:
    """The benchmark's pages in file-id order: ``id``, ``url`` (unique), ``site``, ``gold``,
    ``page_type`` and ``html``."""
    gold_dir, html_dir = source / "benchmark" / "ground-truth", source / "release" / "html"
    if not gold_dir.is_dir() or not html_dir.is_dir():
        raise SystemExit(f"{source}: no benchmark/ground-truth or release/html (a WCXB checkout?)")
    pages = []
    seen: set[str] = set()
    for path in sorted(gold_dir.glob("*.json")):
        truth = json.loads(path.read_text(encoding="utf-8"))
        page_id = str(truth["file_id"])
        html_path = html_dir / f"{page_id}.html.gz"
        if not html_path.is_file():
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
            "html": html,
        })
    return pages


def write(pages: list[dict[str, str]], out: Path) -> tuple[Path, Path]:
    """Writes the archive and the gold file; returns their paths."""
    out.mkdir(parents=True, exist_ok=True)
    warc_path, gold_path = out / f"{DATASET}.warc.gz", out / f"{DATASET}.gold.jsonl.gz"
    with open(warc_path, "wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        info = writer.create_warcinfo_record(f"{DATASET}.warc.gz", {
            "software": "warcdeboil scripts/convert_wceb.py",
            "description": "Web Content Extraction Benchmark (Murrough Foley, Apache-2.0)",
        })
        info.rec_headers.replace_header(
            "WARC-Record-ID", f"<urn:uuid:{uuid.uuid5(_NAMESPACE, 'warcinfo')}>")
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
        line = {key: page[key] for key in ("url", "site", "id", "gold", "page_type")}
        line["dataset"] = DATASET
        lines.append(json.dumps(line, ensure_ascii=False) + "\n")
    with open(gold_path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as gold:
        gold.write("".join(lines).encode("utf-8"))
    return warc_path, gold_path


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("source", type=Path, help="a checkout of the benchmark's repository")
    parser.add_argument("--out", type=Path, required=True, help="directory to write into")
    args = parser.parse_args(argv)
    pages = read_pages(args.source)
    warc_path, gold_path = write(pages, args.out)
    print(f"{warc_path}: {len(pages)} pages; {gold_path}")


if __name__ == "__main__":
    main()
