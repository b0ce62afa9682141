"""The report's pages: static HTML and one stylesheet, read from ``file://`` with no server.

The index is a list of *sections*, each a function from the report's data to a fragment of HTML
(:data:`INDEX_SECTIONS`): a new figure of the run (duplicates, perplexity) is one more function
in that tuple. Site pages and sample pages are written one at a time, as they are made.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from html import escape
from pathlib import Path

from xxhash import xxh3_64_intdigest

from .annotate import REASONS, SLOT, SUBTREE, AnnotatedPage
from .charts import bar_chart, share_bar
from .collect import MAX_ITEMS, ReportData, SiteFigures, reason_order

__all__ = ["INDEX_SECTIONS", "page_file", "site_file", "write_index", "write_sample",
           "write_site", "write_stylesheet"]

# Rows of the index's table of sites (the largest sites; the rest are summed in one row).
MAX_INDEX_SITES = 1000
# Lines of a sample page shown (a page of 50,000 list items stays a page that opens at once).
MAX_SAMPLE_LINES = 4000

COLOURS = {
    SUBTREE: "#d62728", SLOT: "#ff7f0e", "repeated_block": "#9467bd",
    "link_dense_block": "#1f77b4", "short_block": "#8c564b", "low_content_block": "#7f7f7f",
    "comment_block": "#17becf", "copied_block": "#bcbd22", "markup_block": "#e377c2",
}
KEPT_COLOUR = "#2ca02c"
LABELS = {
    SUBTREE: "template subtree", SLOT: "template slot", "repeated_block": "repeated block",
    "link_dense_block": "link-dense block", "short_block": "short block",
    "low_content_block": "low-content block", "comment_block": "readers' comment",
    "copied_block": "copy of kept text", "markup_block": "HTML source as text",
}
STYLESHEET = "report.css"
_CSS = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 1200px;
       padding: 0 1.5em 3em; color: #222; }
h1 { font-size: 1.6em; margin: 1em 0 .2em; } h2 { font-size: 1.2em; margin-top: 1.8em; }
nav.crumbs { margin-top: 1em; font-size: .9em; }
table { border-collapse: collapse; margin: .5em 0; }
th, td { padding: .25em .7em; border-bottom: 1px solid #ddd; text-align: left;
         vertical-align: top; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
svg.chart text { font: 13px system-ui, sans-serif; fill: #222; }
.muted { color: #777; } .url { word-break: break-all; }
.legend span { display: inline-block; margin-right: 1em; }
.legend i { display: inline-block; width: .9em; height: .9em; margin-right: .3em;
            vertical-align: -.1em; }
.item { white-space: pre-wrap; max-width: 62em; }
.columns { display: flex; gap: 2em; align-items: flex-start; }
.columns > section { flex: 1 1 0; min-width: 0; }
.columns p { margin: .2em 0; }
p.gone { border-left: 4px solid; padding-left: .4em; }
p.gone del { text-decoration-thickness: 1px; }
""" + "".join(
    f"p.r-{reason} {{ border-color: {colour}; color: {colour}; }}\n"
    for reason, colour in COLOURS.items()
)


def write_stylesheet(out: Path) -> None:
    (out / STYLESHEET).write_text(_CSS, encoding="utf-8")


def _slug(site: str) -> str:
    """A file name for a site: its safe characters and a hash (site keys come from archives,
    so they never name a file as they are)."""
    safe = re.sub(r"[^a-z0-9.-]+", "-", site.lower()).strip(".-")[:60] or "site"
    return f"{safe}-{xxh3_64_intdigest(site.encode('utf-8', 'surrogatepass')) & 0xFFFFFFFF:08x}"


def site_file(site: str) -> str:
    return f"sites/{_slug(site)}.html"


def page_file(site: str, k: int) -> str:
    return f"pages/{_slug(site)}-{k + 1}.html"


def _document(title: str, body: str, depth: int) -> str:
    up = "../" * depth
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{escape(title)}</title>"
            f'<link rel="stylesheet" href="{up}{STYLESHEET}"></head>\n<body>\n{body}\n'
            "</body></html>\n")


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8", errors="replace")  # lone surrogates as '?'


def _share(part: int, whole: int) -> str:
    return f"{part / whole:.0%}" if whole else "–"


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def _table(head: Iterable[tuple[str, bool]], rows: Iterable[Iterable[str]]) -> str:
    """A table; ``head`` is (name, numeric) per column; cells are HTML already."""
    columns = list(head)
    out = ["<table><thead><tr>"]
    out += [f'<th{" class=n" if numeric else ""}>{escape(name)}</th>' for name, numeric in columns]
    out.append("</tr></thead><tbody>")
    for row in rows:
        out.append("<tr>" + "".join(
            f'<td{" class=n" if numeric else ""}>{cell}</td>'
            for (_, numeric), cell in zip(columns, row, strict=True)) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _legend(reasons: Iterable[str], counts: Counter[str | None] | None = None) -> str:
    """The colours of the reasons (and of kept text), with a count of blocks each when given."""

    def entry(reason: str | None, colour: str, label: str) -> str:
        count = f" ({counts[reason]:,})" if counts is not None else ""
        return f'<span><i style="background:{colour}"></i>{escape(label)}{count}</span>'

    spans = [entry(None, KEPT_COLOUR, "kept")]
    spans += [entry(r, COLOURS.get(r, "#999"), LABELS.get(r, r)) for r in reasons]
    return f'<p class="legend">{"".join(spans)}</p>'


def _reasons_chart(removed_chars: Counter[str], removed_blocks: Counter[str], chars: int,
                   title: str) -> str:
    order = reason_order(removed_chars + removed_blocks)
    if not order:
        return '<p class="muted">Nothing was removed.</p>'
    rows = [(LABELS.get(r, r), removed_chars[r], COLOURS.get(r, "#999"),
             f"{removed_chars[r]:,} chars ({_share(removed_chars[r], chars)}), "
             + _count(removed_blocks[r], "block")) for r in order]
    return bar_chart(rows, title)


# -- the index ---------------------------------------------------------------------------------


def _glance(data: ReportData) -> str:
    summary = data.summary or {}
    problems = summary.get("problems") or {}
    rows = [("inputs", len(data.inputs))]
    if "records" in summary:
        rows += [("records", summary["records"]), ("pages cleaned", summary.get("pages", 0)),
                 ("records carried through", summary.get("carried", 0)),
                 ("stretches skipped", summary.get("skipped", 0))]
    duplicates = summary.get("duplicates")
    if duplicates:  # --dedup: what the duplicate stage found, and what the outputs did
        rows += [("exact duplicates", duplicates["exact"]),
                 ("near duplicates", duplicates["near"]),
                 ("duplicates dropped (exact)", duplicates["dropped"]["exact"]),
                 ("duplicates dropped (near)", duplicates["dropped"]["near"]),
                 ("duplicates written as revisits", duplicates["revisits"])]
    rows += [("pages in this report", data.pages), ("sites", len(data.sites)),
             ("sites with a profile", sum(1 for s in data.sites if s.learned)),
             ("problems", sum(problems.values()))]
    table = _table([("", False), ("", True)], ([escape(k), f"{v:,}"] for k, v in rows))
    return f"<h2>The run at a glance</h2>{table}"


def _inputs(data: ReportData) -> str:
    files = (data.summary or {}).get("files")
    if files:
        rows = ([f'<span class="url">{escape(str(f.get("path", "")))}</span>',
                 f'{f.get("records", 0):,}', f'{f.get("cleaned", 0):,}',
                 f'{f.get("carried", 0):,}', f'{f.get("skipped", 0):,}',
                 f'{sum((f.get("problems") or {}).values()):,}'] for f in files)
        return "<h2>Inputs</h2>" + _table(
            [("file", False), ("records", True), ("pages", True), ("carried", True),
             ("skipped", True), ("problems", True)], rows)
    items = "".join(f'<li class="url">{escape(name)}</li>' for name in data.inputs)
    return f"<h2>Inputs</h2><ul>{items}</ul>"


def _problems(data: ReportData) -> str:
    if data.summary is None:
        return ('<h2>Problems by reason</h2><p class="muted">Not known: this work directory '
                "holds no summary of its run.</p>")
    problems = data.summary.get("problems") or {}
    if not problems:
        return "<h2>Problems by reason</h2><p>None: every record was read.</p>"
    rows = ([escape(reason), f"{count:,}"] for reason, count in
            sorted(problems.items(), key=lambda kv: (-kv[1], kv[0])))
    return "<h2>Problems by reason</h2>" + _table([("reason", False), ("records", True)], rows)


def _kept(data: ReportData) -> str:
    html = data.total("html_bytes")
    chars = data.total("chars")
    kept = data.total("kept_chars")
    rows = [("HTML in", html, "#4c72b0", f"{html:,} bytes"),
            ("text of the pages", chars, "#999999", f"{chars:,} chars ({_share(chars, html)})"),
            ("text kept", kept, KEPT_COLOUR, f"{kept:,} chars ({_share(kept, html)} of HTML, "
             f"{_share(kept, chars)} of text)")]
    return ("<h2>Text kept against HTML in</h2>"
            + bar_chart(rows, "Text kept against HTML in"))


def _reasons(data: ReportData) -> str:
    return ("<h2>Why text was removed</h2>"
            + _reasons_chart(data.removed(), data.removed("removed_blocks"),
                             data.total("chars"), "Characters removed by reason"))


def _site_link(site: SiteFigures, linked: bool) -> str:
    name = escape(site.site or "(no site)")
    return f'<a href="{site_file(site.site)}">{name}</a>' if linked else name


def _share_parts(site: SiteFigures) -> list[tuple[str, int, str]]:
    parts = [("kept", site.kept_chars, KEPT_COLOUR)]
    parts += [(LABELS.get(r, r), site.removed_chars[r], COLOURS.get(r, "#999"))
              for r in reason_order(site.removed_chars)]
    return parts


def _sites(data: ReportData) -> str:
    shown = data.sites[:MAX_INDEX_SITES]
    rows = []
    for site in shown:
        top = site.removed_chars.most_common(1)
        rows.append([
            _site_link(site, site.has_page),
            f"{site.pages:,}", f"{site.html_bytes:,}", f"{site.chars:,}",
            _share(site.kept_chars, site.chars), share_bar(_share_parts(site)),
            escape(LABELS.get(top[0][0], top[0][0])) if top else "–",
        ])
    rest = data.sites[MAX_INDEX_SITES:]
    if rest:
        pages = sum(s.pages for s in rest)
        rows.append([f"<em>{len(rest):,} more sites</em>", f"{pages:,}", "", "", "", "", ""])
    reasons = reason_order(data.removed())
    return ("<h2>Sites, by pages</h2>" + _legend(reasons)
            + _table([("site", False), ("pages", True), ("HTML bytes", True), ("text chars", True),
                      ("kept", True), ("what the text became", False), ("lost most to", False)],
                     rows))


INDEX_SECTIONS: tuple[Callable[[ReportData], str], ...] = (
    _glance, _inputs, _problems, _kept, _reasons, _sites,
)
"""The sections of the index, in order: each makes its HTML from the report's data."""


def write_index(data: ReportData, out: Path) -> Path:
    head = (f"<h1>warcdeboil report</h1><p class=muted>{data.mode.value} mode: "
            f"{data.pages:,} pages of {len(data.sites):,} sites.</p>")
    body = head + "\n".join(section(data) for section in INDEX_SECTIONS)
    path = out / "index.html"
    _write(path, _document("warcdeboil report", body, 0))
    return path


# -- site pages --------------------------------------------------------------------------------

_ITEM_KINDS = (
    (SUBTREE, "Template subtrees",
     "Subtrees the site's pages share, taken out whole; each with its text where it first went."),
    (SLOT, "Template slots",
     "Places every page has (navigation, sidebars, comments), whatever they hold: the text is "
     "what the slot held on the first page it went from."),
    ("repeated_block", "Repeated blocks",
     "Text blocks on many of the site's pages, removed wherever they are."),
)


def write_site(site: SiteFigures, samples: list[str], out: Path) -> None:
    """One site's page: what it lost, why, and the parts of its template with their text."""
    parts = [f'<nav class="crumbs"><a href="../index.html">report</a> › site</nav>'
             f"<h1>{escape(site.site or '(no site)')}</h1>"]
    figures = [("pages", site.pages), ("HTML bytes", site.html_bytes),
               ("text characters", site.chars), ("text kept", site.kept_chars)]
    if site.learned is not None:
        figures += [("template subtrees learned", site.learned[0]),
                    ("template slots learned", site.learned[1]),
                    ("repeated blocks learned", site.learned[2])]
    parts.append(_table([("", False), ("", True)],
                        ([escape(k), f"{v:,}"] for k, v in figures)))
    if site.learned is None:
        parts.append('<p class="muted">No profile: the site was too small to learn a template '
                     "from (or nothing its pages share was found).</p>")
    parts.append("<h2>What its text became</h2>" + _legend(reason_order(site.removed_chars))
                 + share_bar(_share_parts(site), 600))
    parts.append(_reasons_chart(site.removed_chars, site.removed_blocks, site.chars,
                                f"{site.site}: characters removed by reason"))
    if samples:
        links = "".join(f'<li><a href="../{page_file(site.site, k)}">{escape(url)}</a></li>'
                        for k, url in enumerate(samples))
        parts.append(f"<h2>Sample pages</h2><ul class=url>{links}</ul>")
    items = site.items or {}
    for reason, title, note in _ITEM_KINDS:
        found = sorted(items.get(reason, {}).values(), key=lambda i: (-i.pages, i.text))
        parts.append(f"<h2>{title} <span class=muted>({len(found):,})</span></h2>"
                     f"<p class=muted>{escape(note)}</p>")
        if found:
            rows = ([f"{item.pages:,}", _share(item.pages, site.pages),
                     f'<div class="item">{escape(item.text)}</div>']
                    for item in found[:MAX_ITEMS])
            parts.append(_table([("pages", True), ("share", True), ("text", False)], rows))
            if len(found) > MAX_ITEMS:
                parts.append(f"<p class=muted>… and {len(found) - MAX_ITEMS:,} more.</p>")
    _write(out / site_file(site.site), _document(f"{site.site} — warcdeboil report",
                                                 "\n".join(parts), 1))


# -- sample pages ------------------------------------------------------------------------------


def write_sample(site: str, k: int, url: str, title: str, annotated: AnnotatedPage,
                 out: Path) -> None:
    """One page as read, each removed block struck in place and coloured by reason, beside the
    text that was kept."""
    lines = annotated.lines[:MAX_SAMPLE_LINES]
    read = []
    for line in lines:
        text = escape(line.text)
        if line.reason is None:
            read.append(f"<p>{text}</p>")
        else:
            label = escape(LABELS.get(line.reason, line.reason))
            read.append(f'<p class="gone r-{line.reason}" title="{label}"><del>{text}</del></p>')
    kept = [f"<p>{escape(line.text)}</p>" for line in lines if line.reason is None]
    more = len(annotated.lines) - len(lines)
    cut = f"<p class=muted>… {more:,} more blocks not shown.</p>" if more > 0 else ""
    counts: Counter[str | None] = Counter(line.reason for line in annotated.lines)
    body = (f'<nav class="crumbs"><a href="../index.html">report</a> › '
            f'<a href="../{site_file(site)}">{escape(site or "(no site)")}</a> › page</nav>'
            f"<h1>{escape(title or '(no title)')}</h1><p class=url>{escape(url)}</p>"
            + _legend([r for r in REASONS if counts[r]]
                      + sorted(r for r in counts if r is not None and r not in REASONS), counts)
            + '<div class="columns"><section><h2>As read: removed blocks struck</h2>'
            + "\n".join(read) + cut + "</section><section><h2>Kept</h2>"
            + ("\n".join(kept) or '<p class="muted">Nothing.</p>') + cut
            + "</section></div>")
    _write(out / page_file(site, k), _document(f"{title or url} — warcdeboil report", body, 1))
