"""The output formats, and what each needs of a page."""

from __future__ import annotations

import enum

from warcdeboil.site.clean import Mode


class OutputFormat(str, enum.Enum):
    """What pass 2 writes."""

    WARC = "warc"
    TEXT = "text"
    JSONL = "jsonl"
    MARKDOWN = "markdown"  # JSONL records with a ``markdown`` field
    PARQUET = "parquet"  # the JSONL fields as typed columns (warcdeboil.output.parquet)


# The formats that write each page's JSONL fields (schema.FIELDS): one line, or one row.
FIELD_FORMATS = frozenset({OutputFormat.JSONL, OutputFormat.MARKDOWN, OutputFormat.PARQUET})


def default_mode(fmt: OutputFormat) -> Mode:
    """WARC output keeps HTML, so it keeps everything but the template; text outputs are for
    corpora, which want the main content."""
    return Mode.TEMPLATE if fmt is OutputFormat.WARC else Mode.CONTENT


def needs_structure(fmt: OutputFormat, mode: Mode) -> bool:
    """Whether pages must be analysed with structure marks (see
    :func:`warcdeboil.page.dom.analyse`)."""
    return mode is Mode.CONTENT or fmt in FIELD_FORMATS
