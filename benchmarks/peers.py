"""Side by side: token F1, speed and peak memory of the per-page peers and of warcdeboil.

    python benchmarks/peers.py ../shared/eval/dragnet.warc.gz [more archives] [--markdown]
        [--only trafilatura,readability,...] [--limit N] [--json out.json]
        [--warcdeboil-args "--mode content"]

Every extractor runs in a child process of its own (forked by multiprocessing's small fork
server, so that its ru_maxrss is its own), once per archive. The child reads the archive's HTML
pages into memory (``warcdeboil.page.html``: transfer and content codings undone, charset decoded),
imports the extractor, then extracts every page.
Speed is pages per CPU-second of the extraction alone (``time.process_time``); peak memory is the
child's ``ru_maxrss``, which includes the decoded pages it holds (shown apart, in brackets).
warcdeboil itself runs as its command line (``warcdeboil clean ARCHIVE -o TMP --format jsonl
--workers 1``): its speed and memory are end to end, reading the WARC included.

The score is ``warcdeboil.evaluate``'s token precision/recall/F1 (../shared/eval/README.md): for
all pages, for pages of sites with >= 5 pages in the gold, and for the rest. An exception on a page
scores that page as empty output and is counted under "errors". An extractor that is not installed
is reported as such and skipped (``pip install -e '.[bench]'`` installs them all).
"""

from __future__ import annotations

import argparse
import functools
import importlib.metadata
import importlib.util
import json
import logging
import math
import os
import platform
import re
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from itertools import islice
from multiprocessing import get_context
from pathlib import Path
from typing import Any, NamedTuple

from speed import bytecode_env  # this folder's speed.py

from warcdeboil.errors import PayloadError
from warcdeboil.evaluate import GoldPage, Report, Summary, evaluate, load_gold, load_predictions
from warcdeboil.page.html import html_page
from warcdeboil.warc.reader import iter_records


class Page(NamedTuple):
    url: str
    html: str


@dataclass
class Extraction:
    """What an extractor made of an archive's pages: text by URL, and the pages it failed on."""

    texts: dict[str, str] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)  # "URL: ExceptionType: message"


Runner = Callable[[Sequence[Page]], Extraction]


# --- reading ---------------------------------------------------------------------------------


def iter_pages(archive: Path) -> Iterator[tuple[Page, int]]:
    """Each HTML page of ``archive`` as text, with the offset where its record ends."""
    for record in iter_records(archive):
        try:
            page = html_page(record)
        except PayloadError:
            continue  # the eval archives have none; such a page scores as missing
        if page is None:
            continue
        markup = page.markup
        # html_page hands valid UTF-8 over as bytes (lexbor reads them as they are).
        html = markup if isinstance(markup, str) else markup.decode("utf-8")
        yield Page(page.url, html), record.offset + record.length


def gold_path(archive: Path) -> Path:
    """``NAME.warc.gz`` → ``NAME.gold.jsonl.gz`` beside it.

    >>> gold_path(Path("eval/dragnet.warc.gz")).as_posix()
    'eval/dragnet.gold.jsonl.gz'
    """
    name = re.sub(r"\.warc(\.gz|\.zst)?$", "", archive.name)
    return archive.with_name(f"{name}.gold.jsonl.gz")


def dataset_name(archive: Path) -> str:
    return gold_path(archive).name.removesuffix(".gold.jsonl.gz")


# --- the peers ---------------------------------------------------------------------------------


def _per_page(extract: Callable[[str], str]) -> Runner:
    """A runner that calls ``extract`` on each page; an exception leaves that page empty."""

    def run(pages: Sequence[Page]) -> Extraction:
        result = Extraction()
        for page in pages:
            try:
                result.texts[page.url] = extract(page.html)
            except Exception as exc:  # any failure is one counted page
                result.texts[page.url] = ""
                result.errors.append(f"{page.url}: {type(exc).__name__}: {exc}"[:300])
        return result

    return run


def _load_all_text() -> Runner:
    from selectolax.lexbor import LexborHTMLParser

    def extract(html: str) -> str:
        tree = LexborHTMLParser(html)
        tree.strip_tags(["script", "style", "noscript", "template"])
        node = tree.body or tree.root
        return node.text(separator="\n") if node is not None else ""

    return _per_page(extract)


def _load_trafilatura(*, favor_precision: bool = False, favor_recall: bool = False) -> Runner:
    import trafilatura

    def extract(html: str) -> str:
        return trafilatura.extract(html, favor_precision=favor_precision,
                                   favor_recall=favor_recall) or ""

    return _per_page(extract)


# Elements after (and before) which readability's HTML gets a line break when turned into text,
# so that "</li><li>" does not glue two words into one token.
_BLOCK_TAGS = ("p", "div", "br", "li", "dd", "dt", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "td",
               "th", "table", "blockquote", "pre", "section", "article", "figcaption", "ul", "ol")


def _load_readability() -> Runner:
    import lxml.html
    from readability import Document

    def extract(html: str) -> str:
        root = lxml.html.fromstring(Document(html).summary())
        for element in root.iter(*_BLOCK_TAGS):
            element.text = "\n" + (element.text or "")
            element.tail = "\n" + (element.tail or "")
        return str(root.text_content())

    return _per_page(extract)


def _load_resiliparse() -> Runner:
    from resiliparse.extract.html2text import extract_plain_text

    def extract(html: str) -> str:
        return str(extract_plain_text(html, main_content=True))

    return _per_page(extract)


_HTML_LANG = re.compile(r"<html\b[^>]*?\blang\s*=\s*[\"']?([a-zA-Z]{2,3})", re.IGNORECASE)
# ISO 639-1 code of <html lang> → jusText stoplist. A page without one, or in a language jusText
# has no stoplist for (Chinese, Japanese...), gets "English": all eval sets are mostly English.
_JUSTEXT_STOPLISTS = {
    "en": "English", "de": "German", "fr": "French", "es": "Spanish", "it": "Italian",
    "pt": "Portuguese", "nl": "Dutch", "sv": "Swedish", "da": "Danish", "no": "Norwegian_Bokmal",
    "nb": "Norwegian_Bokmal", "nn": "Norwegian_Nynorsk", "fi": "Finnish", "pl": "Polish",
    "cs": "Czech", "sk": "Slovak", "sl": "Slovenian", "hr": "Croatian", "sr": "Serbian",
    "bs": "Bosnian", "tr": "Turkish", "id": "Indonesian", "ms": "Malay", "ro": "Romanian",
    "hu": "Hungarian", "ru": "Russian", "uk": "Ukrainian", "bg": "Bulgarian", "el": "Greek",
    "he": "Hebrew", "ar": "Arabic", "fa": "Persian", "hi": "Hindi", "ko": "Korean",
    "vi": "Vietnamese", "ca": "Catalan", "et": "Estonian", "lv": "Latvian", "lt": "Lithuanian",
}


def justext_stoplist_name(html: str) -> str:
    """The jusText stoplist for a page, guessed from ``<html lang>``; English when unknown.

    >>> justext_stoplist_name('<!doctype html><html class="x" lang="de-AT">')
    'German'
    >>> justext_stoplist_name('<html lang="zh-CN">'), justext_stoplist_name('<html>')
    ('English', 'English')
    """
    match = _HTML_LANG.search(html, 0, 8192)
    return _JUSTEXT_STOPLISTS.get(match.group(1).lower(), "English") if match else "English"


def _load_justext() -> Runner:
    import justext

    stoplist = functools.lru_cache(maxsize=None)(justext.get_stoplist)

    def extract(html: str) -> str:
        paragraphs = justext.justext(html, stoplist(justext_stoplist_name(html)))
        return "\n".join(p.text for p in paragraphs if not p.is_boilerplate)

    return _per_page(extract)


def _load_boilerpy3() -> Runner:
    from boilerpy3 import extractors

    # Its SAX parser gives up on some real pages (63 of dragnet's); its own recovery mode keeps
    # what it had parsed instead of raising, as a crawl would be run.
    extractor = extractors.ArticleExtractor(raise_on_failure=False)
    return _per_page(extractor.get_content)


def _load_deboiler() -> Runner:
    """The original deboiler: fit on each site's pages, then clean them.

    In its "performance" mode, which keeps a site's parsed pages from fit to transform: the
    "memory" default parses every page twice (measured: 26-33 against 43-46 pages per CPU-second,
    same output). One site's pages at a time are held, so memory stays bounded here.
    """
    from deboiler import Deboiler
    from deboiler.dataset import ListDataset

    from warcdeboil.site.sitekey import SiteKeyer, SiteKeyMode

    site_of = SiteKeyer(SiteKeyMode.DOMAIN)

    def run(pages: Sequence[Page]) -> Extraction:
        result = Extraction()
        sites: dict[str, list[Page]] = defaultdict(list)
        for page in pages:
            sites[site_of(page.url)].append(page)
        for site, members in sites.items():
            dataset = ListDataset([{"url": p.url, "content": p.html} for p in members],
                                  status_key=None, content_type_key=None, verbose=False)
            model = Deboiler(operation_mode="performance", domain=site, verbose=False)
            try:
                model.fit(dataset)
            except Exception as exc:  # one bad page fails its site
                result.texts.update((p.url, "") for p in members)
                result.errors.extend(f"{p.url}: fit of {site} failed: {type(exc).__name__}"
                                     for p in members)
                continue
            for page in members:
                try:
                    result.texts[page.url] = model.transform_page(page.url, dataset).cleaned_text
                except Exception as exc:
                    result.texts[page.url] = ""
                    result.errors.append(f"{page.url}: {type(exc).__name__}: {exc}"[:300])
        return result

    return run


@dataclass(frozen=True)
class Peer:
    key: str  # its name for --only
    title: str  # its column
    modules: tuple[str, ...]  # installed when all of these can be imported
    dists: tuple[str, ...]  # distributions whose versions are reported
    load: Callable[[], Runner]  # imports the library (in the child) and returns the runner


PEERS: dict[str, Peer] = {peer.key: peer for peer in (
    Peer("all-text", "all text", ("selectolax",), ("selectolax",), _load_all_text),
    Peer("deboiler", "deboiler (site-level)", ("deboiler",), ("deboiler",), _load_deboiler),
    Peer("trafilatura", "trafilatura", ("trafilatura",), ("trafilatura",), _load_trafilatura),
    Peer("trafilatura-precision", "trafilatura (favor_precision)", ("trafilatura",),
         ("trafilatura",), functools.partial(_load_trafilatura, favor_precision=True)),
    Peer("trafilatura-recall", "trafilatura (favor_recall)", ("trafilatura",),
         ("trafilatura",), functools.partial(_load_trafilatura, favor_recall=True)),
    Peer("readability", "readability", ("readability", "lxml"), ("readability-lxml", "lxml"),
         _load_readability),
    Peer("resiliparse", "resiliparse", ("resiliparse",), ("resiliparse",), _load_resiliparse),
    Peer("justext", "jusText", ("justext",), ("justext",), _load_justext),
    Peer("boilerpy3", "boilerpy3", ("boilerpy3",), ("boilerpy3",), _load_boilerpy3),
)}
WARCDEBOIL = "warcdeboil"
WARCDEBOIL_TITLE = "warcdeboil (CLI, end to end)"


def recorded_command(script: str, argv: Sequence[str]) -> str:
    """The command line as a results file records it, naming no path of this machine: an
    argument in ``../shared`` (beside the project), given absolute or relative to the working
    directory, is written relative to the project; any other absolute path by its name alone
    (``--json=/data/x.json`` too), and any other relative one as given."""
    shared = Path(__file__).resolve().parents[1].parent / "shared"
    bases = {shared, shared.resolve()}

    def portable(arg: str) -> str:
        option, equals, value = arg.partition("=") if arg.startswith("--") else ("", "", arg)
        if not value:
            return arg
        path = Path(os.path.abspath(value))  # lexically: a link named shared stays itself
        for base in bases:
            if path.is_relative_to(base):
                return f"{option}{equals}{Path('..', 'shared', path.relative_to(base))}"
        return f"{option}{equals}{path.name}" if os.path.isabs(value) else arg

    return shlex.join(["python", script, *map(portable, argv)])


def installed(peer: Peer) -> bool:
    return all(importlib.util.find_spec(module) is not None for module in peer.modules)


def version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "?"


# --- measuring -------------------------------------------------------------------------------


def _maxrss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def in_child(task: Callable[..., dict[str, Any]], *args: Any) -> dict[str, Any]:
    """Run ``task(*args)`` in a new process forked from multiprocessing's small fork server.

    Not "spawn": Linux carries the high-water mark of the image a process exec's from over to
    its ru_maxrss, so a spawned child would start at this process's peak (measured: a child of
    a 300 MB parent reports 314 MB, one forked by the fork server 13 MB).
    """
    with ProcessPoolExecutor(1, mp_context=get_context("forkserver")) as pool:
        return pool.submit(task, *args).result()


def measure_peer(key: str, archive: str, limit: int | None) -> dict[str, Any]:
    """In a fresh child: read the pages, load the peer, extract and time every page."""
    logging.disable(logging.CRITICAL)  # the libraries log every odd page; the counts say enough
    pages = [page for page, _ in islice(iter_pages(Path(archive)), limit)]
    runner = PEERS[key].load()
    loaded_mb = round(_maxrss_mb(), 1)
    started = time.process_time()
    extraction = runner(pages)
    cpu = time.process_time() - started
    return {"texts": extraction.texts, "errors": extraction.errors, "pages": len(pages),
            "cpu_seconds": cpu, "peak_rss_mb": _maxrss_mb(), "loaded_rss_mb": loaded_mb}


def measure_command(argv: list[str], env: dict[str, str] | None = None) -> dict[str, Any]:
    """In a fresh child: run ``argv``; its stdout, exit status, CPU time and peak RSS."""
    done = subprocess.run(argv, stdout=subprocess.PIPE, text=True, check=False, env=env)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)  # this child's only child: argv
    return {"stdout": done.stdout, "status": done.returncode,
            "cpu_seconds": usage.ru_utime + usage.ru_stime, "peak_rss_mb": usage.ru_maxrss / 1024}


def run_warcdeboil(archive: Path, end: int | None, extra_args: Sequence[str]) -> dict[str, Any]:
    """``warcdeboil clean`` on the archive (or its first ``end`` bytes), timed as a process."""
    with tempfile.TemporaryDirectory(prefix="warcdeboil-peers-") as tmp:
        work = Path(tmp)
        source = archive
        if end is not None:  # --limit: the same pages as the peers, a prefix of whole records
            source = work / archive.name
            with archive.open("rb") as src, source.open("wb") as dst:
                dst.write(src.read(end))
        out = work / "out"
        argv = [sys.executable, "-m", "warcdeboil", "clean", str(source), "-o", str(out),
                "--format", "jsonl", "--workers", "1", "--json", "--quiet", *extra_args]
        shown = shlex.join(["warcdeboil", "clean", "ARCHIVE", "-o", "OUT", *argv[7:]])
        run = in_child(measure_command, argv, bytecode_env())
        if run["status"] not in (0, 3):  # 3: finished, some records had problems (counted)
            raise RuntimeError(f"`{shown}` exited with status {run['status']} (its message above)")
        summary = json.loads(run["stdout"])
        texts = load_predictions(sorted(  # not the records of options beside the outputs
            p for p in out.rglob("*.jsonl*") if p.name.endswith((".jsonl", ".jsonl.gz"))))
    return {"texts": texts, "errors": [], "pages": summary["pages"],
            "cpu_seconds": run["cpu_seconds"], "peak_rss_mb": run["peak_rss_mb"],
            "loaded_rss_mb": None, "command": shown}


@dataclass
class Result:
    """One extractor on one archive: its report, or why there is none."""

    status: str = "ok"  # ok, not installed, failed: ...
    report: Report | None = None
    pages: int = 0
    errors: list[str] = field(default_factory=list)
    cpu_seconds: float = math.nan
    peak_rss_mb: float = math.nan
    loaded_rss_mb: float | None = None
    command: str | None = None

    @property
    def pages_per_cpu_second(self) -> float:
        return self.pages / self.cpu_seconds if self.cpu_seconds > 0 else math.nan

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"status": self.status}
        if self.report is not None:
            report = self.report.to_dict()
            del report["per_site"]
            out.update(report)
            out.update(pages_read=self.pages, errors=len(self.errors),
                       error_samples=self.errors[:5], cpu_seconds=round(self.cpu_seconds, 3),
                       pages_per_cpu_second=round(self.pages_per_cpu_second, 1),
                       peak_rss_mb=round(self.peak_rss_mb, 1), loaded_rss_mb=self.loaded_rss_mb,
                       command=self.command)
        return {k: v for k, v in out.items() if v is not None}


def measure(key: str, archive: Path, gold: dict[str, GoldPage], limit: int | None, end: int | None,
            warcdeboil_args: Sequence[str]) -> Result:
    if key != WARCDEBOIL and not installed(PEERS[key]):
        return Result("not installed")
    try:
        raw = (run_warcdeboil(archive, end, warcdeboil_args) if key == WARCDEBOIL
               else in_child(measure_peer, key, str(archive), limit))
    except Exception as exc:  # raised in the child, the child died, or the command failed
        return Result(f"failed: {type(exc).__name__}: {exc}")
    return Result(report=evaluate(raw["texts"], gold), pages=raw["pages"], errors=raw["errors"],
                  cpu_seconds=raw["cpu_seconds"], peak_rss_mb=raw["peak_rss_mb"],
                  loaded_rss_mb=raw["loaded_rss_mb"], command=raw.get("command"))


# --- tables ----------------------------------------------------------------------------------


def render(headers: Sequence[str], rows: Sequence[Sequence[str]], markdown: bool) -> str:
    if markdown:
        lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        return "\n".join(lines)
    widths = [max(len(cells[i]) for cells in (headers, *rows)) for i in range(len(headers))]
    fmt = "  ".join(f"{{:{'<' if i == 0 else '>'}{w}}}" for i, w in enumerate(widths))
    return "\n".join(fmt.format(*cells) for cells in (headers, *rows))


def _f(value: float) -> str:
    return "—" if math.isnan(value) else f"{value:.3f}"


GROUPS: dict[str, Callable[[Report], Summary]] = {
    "sites ≥5": lambda r: r.large_sites,
    "other": lambda r: r.small_sites,
    "all": lambda r: r.overall,
}


def row_groups(shape: Report) -> list[str]:
    """The page groups worth a row: "all" alone when one of the two others is empty."""
    if 0 in (shape.large_sites.pages, shape.small_sites.pages):
        return ["all"]
    return list(GROUPS)


def _speed_range(results: list[Result]) -> str:
    speeds = sorted(r.pages_per_cpu_second for r in results if r.report is not None)
    if not speeds:
        return "—"
    low, high = speeds[0], speeds[-1]
    return f"{low:.0f}" if round(low) == round(high) else f"{low:.0f}–{high:.0f}"


def _memory(results: list[Result]) -> str:
    done = [r for r in results if r.report is not None]
    if not done:
        return "—"
    peak = max(done, key=lambda r: r.peak_rss_mb)
    loaded = f" ({peak.loaded_rss_mb:.0f})" if peak.loaded_rss_mb is not None else ""
    return f"{peak.peak_rss_mb:.0f}{loaded}"


def summary_table(results: dict[str, dict[str, Result]], shapes: dict[str, Report],
                  keys: Sequence[str], markdown: bool) -> str:
    """F1 per dataset and page group (columns: extractors), then speed and memory rows."""
    headers = ["pages", *(column_title(k) for k in keys)]
    rows: list[list[str]] = []
    for dataset, by_key in results.items():
        for label in row_groups(shapes[dataset]):
            group = GROUPS[label]
            cells = [_f(group(r.report).f1) if r.report is not None else r.status.split(":")[0]
                     for r in (by_key[k] for k in keys)]
            if markdown:
                cells = _bold_best(cells)
            rows.append([f"{dataset}, {label} ({group(shapes[dataset]).pages})", *cells])
    rows.append(["speed, pages/CPU-s", *(_speed_range([by[k] for by in results.values()])
                                         for k in keys)])
    rows.append(["peak memory, MB (pages loaded)",
                 *(_memory([by[k] for by in results.values()]) for k in keys)])
    return render(headers, rows, markdown)


def _bold_best(cells: list[str]) -> list[str]:
    scores = [float(c) if re.fullmatch(r"\d\.\d+", c) else -1.0 for c in cells]
    best = max(scores, default=-1.0)
    return [f"**{c}**" if s == best and s >= 0 else c for c, s in zip(cells, scores, strict=True)]


def column_title(key: str) -> str:
    return WARCDEBOIL_TITLE if key == WARCDEBOIL else PEERS[key].title


def detail_table(results: dict[str, dict[str, Result]], keys: Sequence[str],
                 markdown: bool) -> str:
    """One row per dataset and extractor: F1 (P/R) per group, errors, speed, memory."""
    headers = ["dataset", "extractor", "pages", "errors", "all: F1 (P/R)", "sites ≥5: F1 (P/R)",
               "other: F1 (P/R)", "pages/CPU-s", "CPU-s", "peak MB (pages loaded)"]
    rows = []
    for dataset, by_key in results.items():
        for key in keys:
            result = by_key[key]
            if result.report is None:  # the reason in full is in the progress lines and JSON
                rows.append([dataset, column_title(key), result.status.split(":")[0], *[""] * 7])
                continue
            cells = [f"{_f(s.f1)} ({_f(s.precision)}/{_f(s.recall)})" if s.pages else "—"
                     for s in (GROUPS[g](result.report) for g in ("all", "sites ≥5", "other"))]
            loaded = f" ({result.loaded_rss_mb:.0f})" if result.loaded_rss_mb is not None else ""
            rows.append([dataset, column_title(key), str(result.report.overall.pages),
                         str(len(result.errors)), *cells, f"{result.pages_per_cpu_second:.0f}",
                         f"{result.cpu_seconds:.1f}", f"{result.peak_rss_mb:.0f}{loaded}"])
    return render(headers, rows, markdown)


# --- command line ----------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> None:
    all_keys = [*PEERS, WARCDEBOIL]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("archives", type=Path, nargs="+", help="NAME.warc.gz evaluation archives")
    parser.add_argument("--gold", type=Path, action="append",
                        help="gold JSONL per archive, in order (default: NAME.gold.jsonl.gz)")
    parser.add_argument("--only", help=f"comma-separated, of: {','.join(all_keys)}")
    parser.add_argument("--limit", type=int, help="the first N pages of each archive only")
    parser.add_argument("--warcdeboil-args", default="",
                        help='appended to the warcdeboil command line, e.g. "--mode content" '
                        "(one option alone: --warcdeboil-args=--option)")
    parser.add_argument("--json", type=Path, help="write every figure here")
    parser.add_argument("--markdown", action="store_true", help="tables in Markdown")
    args = parser.parse_args(argv)

    keys = all_keys if not args.only else [k.strip() for k in args.only.split(",") if k.strip()]
    unknown = [k for k in keys if k not in all_keys]
    if unknown:
        parser.error(f"unknown extractor {', '.join(unknown)}; choose from {', '.join(all_keys)}")
    golds = args.gold or [gold_path(a) for a in args.archives]
    if len(golds) != len(args.archives):
        parser.error("give one --gold per archive, or none")
    extra = shlex.split(args.warcdeboil_args)

    started = time.monotonic()
    results: dict[str, dict[str, Result]] = {}
    shapes: dict[str, Report] = {}  # the page groups of each dataset (no output scored)
    for archive, gold_file in zip(args.archives, golds, strict=True):
        name = dataset_name(archive)
        gold = load_gold(gold_file)
        end = None
        if args.limit is not None:  # score the pages that were read, and only those
            read = [(page.url, stop) for page, stop in islice(iter_pages(archive), args.limit)]
            gold = {url: gold[url] for url, _ in read if url in gold}
            end = read[-1][1] if read else 0
        shapes[name] = evaluate({}, gold)
        results[name] = {}
        for key in keys:
            result = measure(key, archive, gold, args.limit, end, extra)
            results[name][key] = result
            progress = (f"F1 {result.report.overall.f1:.3f}, {len(result.errors)} errors, "
                        f"{result.pages_per_cpu_second:.0f} pages/CPU-s, "
                        f"peak {result.peak_rss_mb:.0f} MB" if result.report else result.status)
            print(f"{name}: {column_title(key)}: {progress}", file=sys.stderr, flush=True)
    wall = time.monotonic() - started

    versions = sorted({f"{d} {version(d)}" for k in keys if k != WARCDEBOIL
                       for d in PEERS[k].dists if installed(PEERS[k])} | {
                      f"warcdeboil {version('warcdeboil')}"})
    print(summary_table(results, shapes, keys, args.markdown))
    print()
    print(detail_table(results, keys, args.markdown))
    print()
    print(f"{wall:.0f} s wall; {os.cpu_count()} CPUs; Python {platform.python_version()}; "
          f"{', '.join(versions)}")
    if args.json:
        data = {
            "command": recorded_command("benchmarks/peers.py", argv or sys.argv[1:]),
            "wall_seconds": round(wall, 1), "cpus": os.cpu_count(),
            "python": platform.python_version(), "platform": platform.platform(),
            "versions": versions, "warcdeboil_args": extra,
            "results": {name: {column_title(k): r.to_dict() for k, r in by_key.items()}
                        for name, by_key in results.items()},
        }
        args.json.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
