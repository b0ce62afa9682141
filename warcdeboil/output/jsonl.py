"""JSONL output: one JSON object per page (and Markdown output: the same with a ``markdown``
field), gzip-compressed unless asked not to be."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, BinaryIO

from isal import igzip

from warcdeboil.dedup.verdicts import duplicate_fields
from warcdeboil.page.dom import CleanText, PageText
from warcdeboil.page.html import HtmlPage
from warcdeboil.warc.compression import Codec
from warcdeboil.warc.names import escape_name
from warcdeboil.warc.reader import WarcRecord

from .sink import PageResult, Sink

if TYPE_CHECKING:
    # Imported where used: a template-mode run (WARC output, no --lm, no URL rules) needs none.
    from warcdeboil.lm.scoring import PageScore
    from warcdeboil.page.content import Block, Extraction
    from warcdeboil.page.language import Guess
    from warcdeboil.urlrules import UrlRules


# JSONL is one gzip stream of text, deflated by ISA-L (isal, already a dependency for inflating)
# at its default level: on the dragnet eval output (6.3 MB of JSON) 0.016 CPU-s and 2.43 MB,
# where zlib's level 1 took 0.054 CPU-s for 2.54 MB (and its level 6 four times as long again).
JSONL_GZIP_LEVEL = 2


class JsonlSink(Sink):
    """One JSON object per page: identity, page attributes, text (and Markdown when asked)."""

    def __init__(self, out: BinaryIO, codec: Codec, source_path: str, *, markdown: bool,
                 duplicates: bool = False, rules: UrlRules | None = None,
                 language_model: str = "") -> None:
        self._gzip = igzip.IGzipFile(
            filename="", mode="wb", fileobj=out, mtime=0, compresslevel=JSONL_GZIP_LEVEL
        ) if codec is not Codec.NONE else None
        self._out: BinaryIO = self._gzip if self._gzip is not None else out  # type: ignore[assignment]
        # The name as valid UTF-8: bytes that are not UTF-8 percent-encoded (names.escape_name).
        self._warc_file = escape_name(os.path.basename(source_path))
        self._markdown = markdown
        self._language_model = language_model  # --language-model; "": lid.176's small one
        self._duplicates = duplicates  # --dedup: each page says its duplicate group
        self._rules = rules  # --url-rules: each page says its URL's canonical form

    def page(
        self, result: PageResult, record: WarcRecord | None, page: HtmlPage | None,
        html: bytes | None,
    ) -> None:
        entry = result.entry
        obj: dict[str, object] = {
            "url": entry.url,
            "site": result.site,
            "record_id": entry.record_id,
            "warc_file": self._warc_file,
            "offset": entry.offset,
            "length": entry.length,
            "date": entry.date,
            "charset": entry.charset,
            "truncated": bool(entry.truncated),
        }
        obj.update(page_fields(entry.page, result.cleaned, result.content, self._markdown,
                               result.score, result.language, self._language_model))
        obj["html_bytes_before"] = entry.html_bytes_before
        if self._duplicates:
            obj.update(duplicate_fields(result.duplicate))
        if self._rules is not None:
            obj["url_canonical"] = self._rules.canonical(entry.url)
        if result.pii is not None:  # --redact-pii
            obj["pii_redacted"] = result.pii
        obj["charset_source"] = entry.charset_source
        if result.score is not None and result.score.noise is not None:
            obj["line_noise"] = result.score.noise  # --line-noise: beside line_perplexities
        if result.quality_flags is not None:  # --quality-filters
            obj["quality_flags"] = result.quality_flags
        self._write(obj)

    def _write(self, obj: dict[str, object]) -> None:
        """One page's object, as a line (Parquet output writes it as a row)."""
        line = json.dumps(obj, ensure_ascii=False) + "\n"
        self._out.write(line.encode("utf-8", "surrogatepass"))  # one write: one deflate call

    def close(self) -> None:
        if self._gzip is not None:
            self._gzip.close()


def page_fields(
    page: PageText, cleaned: CleanText, content: Extraction | None, markdown: bool,
    score: PageScore | None = None, guess: Guess | None = None, language_model: str = "",
) -> dict[str, object]:
    """What JSONL output says of a cleaned page beyond its record (title to removed, in the
    JSONL's order); the in-memory API's pages carry the same. ``score``: its perplexity (--lm),
    and each line's when they were asked for; ``guess``: ``identify`` of its text, when known
    (else identified with ``language_model``, ``""`` the default)."""
    from warcdeboil.page.language import identify, primary_subtag  # JSONL output and the API only
    from warcdeboil.page.markdown import render

    meta = page.meta
    if guess is None:
        guess = identify(cleaned.text, language_model)
    fields: dict[str, object] = {
        "title": page.title,
        "description": meta.description,
        "canonical_url": meta.canonical_url,
        "language": guess.language or None,
        "language_confidence": guess.confidence,
        "html_lang": primary_subtag(meta.lang),
        "breadcrumbs": list(meta.breadcrumbs),
    }
    blocks = content.blocks if content is not None else []
    fields["headings"] = [
        {"level": block.kind, "text": block.text} for block in blocks if 1 <= block.kind <= 6
    ]
    fields["lists"] = _lists(blocks)
    fields["text"] = cleaned.text
    if markdown:
        fields["markdown"] = render(blocks)
    fields["perplexity"] = score.perplexity if score is not None else None
    if score is not None and score.bucketed:
        fields["perplexity_bucket"] = score.bucket
    if score is not None and score.lines is not None:
        fields["line_perplexities"] = score.lines
    removed = {"template_subtrees": cleaned.removed, "template_slots": cleaned.slots}
    if content is not None:
        removed.update(sorted(content.removed.items()))
    fields["removed"] = removed
    return fields


def _lists(blocks: list[Block]) -> list[list[str]]:
    """Runs of consecutive list items, each run one list."""
    from warcdeboil.page.content import KIND_ITEM  # JSONL output only

    lists: list[list[str]] = []
    previous = False
    for block in blocks:
        item = block.kind == KIND_ITEM
        if item:
            if not previous:
                lists.append([])
            lists[-1].append(block.text)
        previous = item
    return lists
