"""The fields of a JSONL line, in the order they are written: name, type, when the field is
there, an example, and what it holds.

This table is the reference: the documentation's field reference is generated from it, and the
tests check every line the runs write against it (names, order, types). A field added to the
output is added here, or the tests fail.

>>> [field.name for field in FIELDS][:3]
['url', 'site', 'record_id']
>>> conforms(3, integer) and not conforms(None, integer) and conforms(None, nullable(number))
True
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["FIELDS", "SCHEMA_VERSION", "Field", "Type", "conforms", "describe"]

# Raised when a field is added, removed, renamed or changes type (2: truncated; 3: pii_redacted,
# charset_source, line_noise, quality_flags, charset as its WHATWG name, and language may be an
# ISO 639-3 code, for languages without an ISO 639-1 one).
SCHEMA_VERSION = 3


@dataclass(frozen=True, slots=True)
class Type:
    """A JSON type: ``kind`` is string, integer, number, boolean, list, map (string keys) or
    record (the named ``fields``); ``item`` is what a list or map holds."""

    kind: str
    item: Type | None = None
    fields: tuple[tuple[str, Type], ...] = ()
    null: bool = False


string, integer, number = Type("string"), Type("integer"), Type("number")
boolean = Type("boolean")


def nullable(of: Type) -> Type:
    return Type(of.kind, of.item, of.fields, null=True)


def list_of(item: Type) -> Type:
    return Type("list", item)


def map_of(item: Type) -> Type:
    return Type("map", item)


def record(**fields: Type) -> Type:
    return Type("record", fields=tuple(fields.items()))


def conforms(value: object, of: Type) -> bool:
    """Whether a value read back from JSON has the type ``of``."""
    if value is None:
        return of.null
    if of.kind == "string":
        return isinstance(value, str)
    if of.kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if of.kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if of.kind == "boolean":
        return isinstance(value, bool)
    if of.kind == "list":
        assert of.item is not None
        return isinstance(value, list) and all(conforms(v, of.item) for v in value)
    if of.kind == "map":
        assert of.item is not None
        return isinstance(value, Mapping) and all(
            isinstance(k, str) and conforms(v, of.item) for k, v in value.items())
    if of.kind == "record":
        return isinstance(value, Mapping) and list(value) == [n for n, _ in of.fields] and all(
            conforms(value[name], t) for name, t in of.fields)
    raise ValueError(f"unknown type {of.kind}")


def describe(of: Type) -> str:
    """The type as the documentation writes it.

    >>> describe(nullable(list_of(record(level=integer, text=string))))
    'list of {level: integer, text: string}, or null'
    """
    if of.kind == "list":
        assert of.item is not None
        text = f"list of {describe(of.item)}"
    elif of.kind == "map":
        assert of.item is not None
        text = f"object of {describe(of.item)}"
    elif of.kind == "record":
        text = "{" + ", ".join(f"{name}: {describe(t)}" for name, t in of.fields) + "}"
    else:
        text = of.kind
    return f"{text}, or null" if of.null else text


@dataclass(frozen=True, slots=True)
class Field:
    name: str
    type: Type
    when: str  # "always", or the options that add the field
    example: str  # a value, as JSON
    description: str


_DEDUP = "`--dedup mark` or `drop` (`mark` is the default for jsonl and markdown)"

FIELDS: tuple[Field, ...] = (
    Field("url", string, "always", '"https://example.com/news/1"',
          "The page's URL, as its record's `WARC-Target-URI` gives it."),
    Field("site", string, "always", '"example.com"',
          "The site the page was fitted with (`--site-key`: host without `www.`, or "
          "registered domain)."),
    Field("record_id", string, "always", '"<urn:uuid:a151b885-ea3a-5dc4-8525-ecdbf700517d>"',
          "The source record's `WARC-Record-ID`."),
    Field("warc_file", string, "always", '"crawl-00000.warc.gz"',
          "The input file's name; bytes that are not UTF-8 are written `%XX`."),
    Field("offset", integer, "always", "559",
          "Where the source record starts in the input file (its compressed offset)."),
    Field("length", integer, "always", "923",
          "The source record's length in the input file (compressed)."),
    Field("date", string, "always", '"2024-05-01T10:01:00Z"',
          "The record's `WARC-Date` (empty when it has none)."),
    Field("charset", string, "always", '"utf-8"',
          "The charset the page was decoded with, by its WHATWG Encoding Standard name in lower "
          "case (`utf-8`, `windows-1251`, `shift_jis`, `gb18030`…); `charset_source` says what "
          "decided it."),
    Field("truncated", boolean, "always", "false",
          "Whether the source record's block is incomplete: the crawler marked it "
          "`WARC-Truncated`, or the input ends (or is damaged) inside it, which the run also "
          "counts as a problem. The text is what the bytes there are hold."),
    Field("title", string, "always", '"Volunteers clear two tonnes of litter"',
          "The page's `<title>` (empty when it has none)."),
    Field("description", string, "always", '"A morning on the river bank."',
          "`<meta name=description>`, else `og:description` (empty when neither)."),
    Field("canonical_url", string, "always", '"https://example.com/news/1"',
          "`<link rel=canonical>`, else `og:url` (empty when neither)."),
    Field("language", nullable(string), "always", '"en"',
          "The text's language, identified offline (lid.176, CLD2, or `--language-model`): "
          "ISO 639-1 where the language has such a code, else ISO 639-3; null when unsure."),
    Field("language_confidence", number, "always", "0.975",
          "How sure that identification is, 0 to 1: the model's probability, or the share of "
          "the letters in a script one language writes."),
    Field("html_lang", string, "always", '"en"',
          "The primary subtag of `<html lang>`, as the page declares it (empty when absent)."),
    Field("breadcrumbs", list_of(string), "always", '["Home", "News"]',
          "The labels of the page's first breadcrumb trail."),
    Field("headings", list_of(record(level=integer, text=string)), "always",
          '[{"level": 1, "text": "Volunteers clear two tonnes of litter"}]',
          "The headings of the kept text, with their level (1 to 6)."),
    Field("lists", list_of(list_of(string)), "always", '[["Gloves", "Bags"]]',
          "Runs of consecutive list items of the kept text, each run one list."),
    Field("text", string, "always", '"Volunteers clear two tonnes of litter\\nMore than..."',
          "The cleaned text: one block a line."),
    Field("markdown", string, "`--format markdown`", '"# Volunteers clear two tonnes..."',
          "The kept blocks as Markdown (CommonMark); link targets are not kept."),
    Field("perplexity", nullable(number), "always", "212.5",
          "The page's perplexity under the language model (`--lm`); null without `--lm` or "
          "without a word to score."),
    Field("perplexity_bucket", nullable(string), "`--perplexity-buckets` or `--keep-buckets`",
          '"head"',
          "`head`, `middle` or `tail`: the page's perplexity against the 30th and 60th "
          "percentiles of its language's pages; null for a page without a score."),
    Field("line_perplexities", list_of(nullable(number)), "`--line-perplexity`",
          "[150.2, null, 310.7]",
          "The perplexity of each line of `text` (null for a line without a word)."),
    Field("removed", map_of(integer), "always",
          '{"template_subtrees": 8, "template_slots": 5, "short_block": 2}',
          "What was removed, counted by reason: `template_subtrees`, `template_slots`, "
          "`repeated_block`, and in content mode the blocks judged not content "
          "(`link_dense_block`, `short_block`, `low_content_block`, `comment_block`, "
          "`copied_block`, `markup_block`; `headline` with `--drop-headline`)."),
    Field("html_bytes_before", integer, "always", "1218",
          "The size of the decoded HTML payload, in bytes."),
    Field("duplicate_of", nullable(string), _DEDUP, '"https://example.com/news/1"',
          "The URL of the page its duplicate group keeps; null for that page and for pages "
          "without duplicates."),
    Field("duplicate_group_size", integer, _DEDUP, "2",
          "How many pages the page's duplicate group holds (1: none but itself)."),
    Field("duplicate_similarity", nullable(number), _DEDUP, "0.93",
          "The estimated similarity to the kept page (1 for an exact copy); null for a page "
          "that is not a duplicate."),
    Field("duplicate_kind", nullable(string), _DEDUP, '"near"',
          "`exact` (the same payload) or `near`; null for a page that is not a duplicate."),
    Field("url_canonical", string, "`--url-rules`", '"https://example.com/news/1"',
          "The page's URL as the URL rules learned in the run write it."),
    Field("pii_redacted", record(email=integer, ipv4=integer, ipv6=integer), "`--redact-pii`",
          '{"email": 1, "ipv4": 0, "ipv6": 0}',
          "How many e-mail, IPv4 and IPv6 addresses were replaced in `text` by `[EMAIL]`, "
          "`[IPV4]` and `[IPV6]` (headings, lists and `markdown` are redacted alike; see "
          "[PII redaction](pii.md))."),
    Field("charset_source", string, "always", '"http"',
          "What decided `charset`: `bom` (a byte-order mark), `http` (the HTTP `Content-Type` "
          "label) or `meta` (the page's `<meta>` label), each used only when it fits the bytes; "
          "`detected` (no label fitted: valid UTF-8, or the detector); `default` (nothing "
          "declared, and the bytes are ASCII or valid UTF-8: read as UTF-8); `fallback` "
          "(nothing fitted: decoded with replacement characters, and WARC output keeps the "
          "record's own bytes)."),
    Field("line_noise", list_of(nullable(number)), "`--line-noise`", "[0.12, null, 0.9993]",
          "The noise score of each line of `text`, 0 to 1: how far the line lies outside what "
          "the language model's held-out lines of real text look like (null for a line "
          "without a word)."),
    Field("quality_flags", list_of(string), "`--quality-filters`",
          '["gopher_repetition:top_3_gram", "c4_quality:few_sentences"]',
          "`FILTER:REASON` for every reason each filter chosen would drop the page, in the "
          "order of the filters and their rules; empty when they all keep it (see "
          "[quality filters](quality.md))."),
)
