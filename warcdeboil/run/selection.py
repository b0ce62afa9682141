"""Choosing records from an existing index instead of scanning whole archives.

An index names each record by (WARC file, offset, length): exactly what a range read needs. Three
kinds are read:

* CDXJ (pywb, Common Crawl's ``cdx-*.gz``): ``SURT TIMESTAMP {json}`` with ``url``,
  ``filename``, ``offset`` and ``length`` in the JSON;
* CDX: space-separated fields named by a `` CDX …`` legend line (default: the 11-field
  ``N b a m s k r M S V g``, where ``a`` is the URL, ``S`` the length, ``V`` the offset and ``g``
  the file);
* Common Crawl's columnar index (Parquet, columns ``url_host_name``,
  ``url_host_registered_domain``, ``warc_filename``, ``warc_record_offset``,
  ``warc_record_length``). The local engine reads it with pyarrow; the Spark engine with Spark.

A :class:`SiteFilter` keeps the records of some sites only (host without ``www.``, or registered
domain). The result, a :data:`Selection`, maps each WARC file (as the index names it) to the
spans of its chosen records in file order.

>>> sorted(SiteFilter.parse(["# news", "www.Example.com", "bbc.co.uk"]).sites)
['bbc.co.uk', 'example.com']
>>> line = 'com,example)/a 20240101000000 {"url": "https://example.com/a", "filename": "a.warc.gz", "offset": "10", "length": "5"}'
>>> parse_cdxj(line)
SelectedRecord(filename='a.warc.gz', offset=10, length=5, url='https://example.com/a')
"""  # noqa: E501

from __future__ import annotations

import gzip
import json
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from warcdeboil.errors import ConfigError, InputError
from warcdeboil.site.sitekey import SiteKeyer, SiteKeyMode
from warcdeboil.warc.reader import Span
from warcdeboil.warc.remote import is_remote, local_path, open_remote

__all__ = [
    "CC_INDEX_COLUMNS",
    "Selection",
    "SelectedRecord",
    "SiteFilter",
    "group_spans",
    "index_kind",
    "parse_cdx",
    "parse_cdxj",
    "read_cdx",
    "read_parquet",
    "read_selection",
    "selected_files",
]

Selection = dict[str, list[Span]]
"""WARC file (as the index names it) → spans of its chosen records, by offset."""

CC_INDEX_COLUMNS = (
    "url_host_name", "url_host_registered_domain", "warc_filename", "warc_record_offset",
    "warc_record_length",
)
DEFAULT_CDX_LEGEND = "N b a m s k r M S V g"
PARQUET_SUFFIXES = (".parquet", ".parq")


@dataclass(frozen=True, slots=True)
class SelectedRecord:
    """One record named by an index."""

    filename: str
    offset: int
    length: int
    url: str = ""


class SiteFilter:
    """Sites to keep: a record is kept when its host (without ``www.``) or its registered
    domain is one of them. An empty filter keeps everything."""

    def __init__(self, sites: Iterable[str] = ()) -> None:
        self.sites = frozenset(sites)
        self._keyers: tuple[SiteKeyer, ...] | None = None

    @classmethod
    def parse(cls, lines: Iterable[str]) -> SiteFilter:
        """Sites from lines of text: one host or domain per line, ``#`` starts a comment."""
        sites = set()
        for line in lines:
            name = line.split("#", 1)[0].strip().lower().rstrip(".")
            if "://" in name:
                name = SiteKeyer()(name)
            if name.startswith("www."):
                name = name[4:]
            if name:
                sites.add(name)
        return cls(frozenset(sites))

    @classmethod
    def load(cls, location: str) -> SiteFilter:
        """Sites from a file (see :meth:`parse`)."""
        with _open_index(location) as fh:
            return cls.parse(fh.read().decode("utf-8", "replace").splitlines())

    def keeps_url(self, url: str) -> bool:
        if not self.sites:
            return True
        if self._keyers is None:  # the Public Suffix List is loaded once, when first needed
            self._keyers = (SiteKeyer(SiteKeyMode.HOST), SiteKeyer(SiteKeyMode.DOMAIN))
        return any(keyer(url) in self.sites for keyer in self._keyers)

    def keeps_host(self, host: str | None, domain: str | None) -> bool:
        if not self.sites:
            return True
        host = (host or "").lower().rstrip(".")
        if host.startswith("www."):
            host = host[4:]
        return host in self.sites or (domain or "").lower() in self.sites


def index_kind(location: str) -> str:
    """'parquet', 'cdxj' or 'cdx', from the name (Parquet) or the first line."""
    if location.rstrip("/").lower().endswith(PARQUET_SUFFIXES) or (
        not is_remote(location) and Path(local_path(location)).is_dir()
    ):
        return "parquet"
    with _open_index(location) as fh:
        first = next(_text_lines(fh))
    fields = first.split(" ", 2)
    if len(fields) == 3 and fields[2].lstrip().startswith("{"):
        return "cdxj"
    return "cdx"


def _open_index(location: str) -> BinaryIO:
    if is_remote(location):
        return open_remote(location)
    try:
        return open(local_path(location), "rb")  # noqa: SIM115 - the caller closes it
    except OSError as exc:
        raise ConfigError(f"{location}: cannot open the index ({exc.strerror})") from exc


def _text_lines(fh: BinaryIO) -> Iterator[str]:
    """The lines of a text file, gzip-compressed or not."""
    head = fh.read(2)
    fh.seek(0)
    if head == b"\x1f\x8b":
        with gzip.GzipFile(fileobj=fh) as unpacked:
            yield from _lines_of(unpacked)
    else:
        yield from _lines_of(fh)
    yield ""


def _lines_of(stream: Iterable[bytes]) -> Iterator[str]:
    try:
        for raw in stream:
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            if line.strip():
                yield line
    except (OSError, EOFError) as exc:
        raise ConfigError(f"the index is damaged ({exc})") from exc


def parse_cdxj(line: str) -> SelectedRecord | None:
    """The record a CDXJ line names (None for a line that names no record)."""
    parts = line.split(" ", 2)
    if len(parts) < 3 or line.startswith("!"):
        return None
    try:
        data = json.loads(parts[2])
        return SelectedRecord(
            str(data["filename"]), int(data["offset"]), int(data["length"]),
            str(data.get("url", "")),
        )
    except (ValueError, KeyError, TypeError):
        return None


def parse_cdx(line: str, legend: str = DEFAULT_CDX_LEGEND) -> SelectedRecord | None:
    """The record a CDX line names, its fields named by ``legend`` (None when it names none).

    >>> parse_cdx("com,example)/ 20240101 http://example.com/ text/html 200 X - - 512 0 a.warc.gz")
    SelectedRecord(filename='a.warc.gz', offset=0, length=512, url='http://example.com/')
    """
    names = legend.split()
    values = line.split(" ")
    if len(values) != len(names):
        return None
    row = dict(zip(names, values, strict=True))
    try:
        return SelectedRecord(row["g"], int(row["V"]), int(row["S"]), row.get("a", ""))
    except (KeyError, ValueError):
        return None


def read_cdx(location: str, sites: SiteFilter) -> Iterator[SelectedRecord]:
    """The records a CDX or CDXJ index names, of the kept sites."""
    with _open_index(location) as fh:
        lines = _text_lines(fh)
        legend = DEFAULT_CDX_LEGEND
        cdxj: bool | None = None
        for line in lines:
            if not line:
                continue
            if line.lstrip().startswith("CDX "):
                legend = line.lstrip()[4:]
                if not {"g", "V", "S"} <= set(legend.split()):
                    raise ConfigError(
                        f"{location}: this CDX has no file, offset or length field (g, V, S)"
                    )
                cdxj = False
                continue
            if cdxj is None:
                fields = line.split(" ", 2)
                cdxj = len(fields) == 3 and fields[2].lstrip().startswith("{")
            record = parse_cdxj(line) if cdxj else parse_cdx(line, legend)
            if record is not None and sites.keeps_url(record.url):
                yield record


def read_parquet(location: str, sites: SiteFilter) -> Iterator[SelectedRecord]:
    """The records Common Crawl's columnar index names, of the kept sites (needs pyarrow).

    ``location`` is one Parquet file or a directory of them (a crawl's ``subset=warc/``). The
    index is read in batches of rows, never whole; the site filter goes down to the reader as a
    filter on the host and registered-domain columns, so row groups whose statistics rule them out
    are skipped, and the exact test (``www.`` and case) is applied to the rows that come back.
    """
    try:
        import pyarrow.dataset as ds
    except ImportError:
        raise ConfigError(
            f"{location}: reading a Parquet index needs pyarrow (pip install 'warcdeboil[spark]' "
            "or pip install pyarrow), or use --engine spark"
        ) from None
    import pyarrow as pa

    try:
        dataset = ds.dataset(location if is_remote(location) else local_path(location),
                             format="parquet", partitioning="hive")
        batches = dataset.to_batches(columns=list(CC_INDEX_COLUMNS),
                                     filter=_parquet_filter(ds, sites),
                                     batch_size=PARQUET_BATCH_ROWS)
        for batch in batches:
            columns = [batch.column(name).to_pylist() for name in CC_INDEX_COLUMNS]
            for host, domain, filename, offset, length in zip(*columns, strict=True):
                if filename is not None and offset is not None and length is not None and \
                        sites.keeps_host(host, domain):
                    yield SelectedRecord(filename, int(offset), int(length))
    except (OSError, ValueError, KeyError, pa.ArrowException) as exc:
        raise ConfigError(f"{location}: not a Common Crawl columnar index ({exc})") from exc


# Rows of the columnar index converted to Python at a time: ~5 columns of short strings and
# integers, a few MB per batch (pyarrow's own default is 131,072 rows).
PARQUET_BATCH_ROWS = 65_536


def _parquet_filter(ds: Any, sites: SiteFilter) -> Any:
    """A pyarrow filter that keeps at least the rows :meth:`SiteFilter.keeps_host` keeps (None:
    all rows). Common Crawl writes hosts and domains in lower case, as the filter holds them."""
    if not sites.sites:
        return None
    names = sorted(sites.sites)
    hosts = names + [f"www.{name}" for name in names]
    return ds.field("url_host_name").isin(hosts) | ds.field("url_host_registered_domain").isin(
        names
    )


def group_spans(records: Iterable[SelectedRecord]) -> Selection:
    """Spans per file, each file's in offset order, duplicates dropped."""
    spans: defaultdict[str, set[Span]] = defaultdict(set)
    for record in records:
        if record.length > 0 and record.offset >= 0:
            spans[record.filename].add((record.offset, record.length))
    return {name: sorted(found) for name, found in sorted(spans.items())}


def selected_files(base: str, selection: Selection) -> list[tuple[str, str, list[Span]]]:
    """The files a selection names, as (location, name relative to the output directory, spans):
    a name the index gives as a URL or an absolute path is taken as it is, else relative to
    ``base``; the output keeps the name's own directories."""
    from warcdeboil.warc.remote import join

    files = []
    for name, spans in sorted(selection.items()):
        location = name if is_remote(name) or name.startswith("/") else join(base, name)
        files.append((location, name.split("://", 1)[-1].lstrip("/"), spans))
    return files


def read_selection(location: str, sites: SiteFilter) -> Selection:
    """The records an index file names, of the kept sites, grouped by WARC file."""
    kind = index_kind(location)
    records = read_parquet(location, sites) if kind == "parquet" else read_cdx(location, sites)
    try:
        selection = group_spans(records)
    except InputError as exc:
        raise ConfigError(f"cannot read the index: {exc}") from exc
    if not selection:
        raise ConfigError(f"{location}: the index names no record of the chosen sites")
    return selection
