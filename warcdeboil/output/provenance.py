"""Provenance of the records warcdeboil writes: their ids, the output's warcinfo, and revisits.

* A cleaned record gets a new ``WARC-Record-ID``, derived from its source record's id and its new
  block (the same input and profile give the same id on any engine and for any number of workers),
  and names its source in :data:`SOURCE_FIELD`. WARC 1.0 and 1.1 say ``WARC-Refers-To`` "shall not
  be used" on ``response`` and ``resource`` records, so the source is named in an extension field.
* Each output file opens with its own ``warcinfo`` record (:func:`warcinfo_record`): software,
  version, the options that decide what is removed, the source file's name and the output's.
* :class:`Revisits` remembers, for one file, which records were cleaned, so that a later
  ``revisit`` of one of them names the cleaned record and its new payload digest; the revisits
  it cannot resolve are left to :mod:`.relink`, which looks them up across all outputs.
"""

from __future__ import annotations

import base64
import enum
import re
import uuid
from collections.abc import Sequence

from warcdeboil._version import __version__
from warcdeboil.page.html import PageLimits
from warcdeboil.site.fit import FitParams
from warcdeboil.warc.names import escape_name
from warcdeboil.warc.writer import sha1_digest, valid_uri

__all__ = [
    "SOURCE_FIELD",
    "Revisits",
    "cleaned_keys",
    "derived_id",
    "pointed_at",
    "revisit_keys",
    "revisit_of_copy",
    "run_settings",
    "warcinfo_record",
]

# Where a cleaned record names the record it was made from (an extension field: see above).
SOURCE_FIELD = "WARC-Source-Record-ID"
# When the source gives no usable date, the warcinfo says the epoch rather than the wall clock:
# outputs stay byte-identical from run to run and between engines.
NO_DATE = "1970-01-01T00:00:00Z"
_ID_NAMESPACE = uuid.UUID("6b1f5c9e-3d7a-4f0e-9a51-2c8e7d4b0a13")
_WARC_DATE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z\Z")
Fields = list[tuple[str, str]]


def derived_id(kind: str, source: str) -> str:
    """A record id derived from what a record is made of: the same input gives the same id.

    >>> derived_id("conversion", "<urn:uuid:1>") == derived_id("conversion", "<urn:uuid:1>")
    True
    """
    return f"<urn:uuid:{uuid.uuid5(_ID_NAMESPACE, kind + source)}>"


def run_settings(
    fmt: object, mode: object, site_key: object, fit: FitParams | None, limits: PageLimits
) -> tuple[tuple[str, str], ...]:
    """The options that decide what an output holds, as warcinfo fields (``fit``: the parameters
    the profiles were fitted with; None when pages were cleaned without profiles). The format,
    mode and site key are enum members or their values."""
    settings = [("output-format", _value(fmt)), ("mode", _value(mode)),
                ("site-key", _value(site_key))]
    if fit is not None:
        settings += [
            ("max-iou", repr(fit.max_iou)),
            ("min-occurrence", str(fit.min_occurrence)),
            ("near-duplicate", repr(fit.near_duplicate)),
            ("repeated-share", repr(fit.repeated_share)),
            ("repeated-min-pages", str(fit.repeated_min_pages)),
        ]
    else:
        settings.append(("profiles", "none"))
    settings += [
        ("max-page-bytes", str(limits.max_bytes)),
        ("max-page-tags", str(limits.max_tags)),
        ("max-page-depth", str(limits.max_depth)),
    ]
    return tuple(settings)


def _value(option: object) -> str:
    return str(option.value if isinstance(option, enum.Enum) else option)


def warc_date(value: str | None) -> str:
    """``value`` when it is a WARC date, else :data:`NO_DATE`."""
    value = (value or "").strip()
    return value if _WARC_DATE.match(value) else NO_DATE


def warcinfo_record(
    *,
    source: str,
    output: str,
    description: str,
    settings: Sequence[tuple[str, str]],
    date: str | None,
    first_id: str,
    version: str = "WARC/1.0",
) -> tuple[str, Fields, bytes]:
    """The version line, header fields and block of an output's own ``warcinfo`` record.

    ``source`` and ``output`` are file names (no directories); ``settings`` the options that
    decide what is removed; ``date``, ``first_id`` and ``version`` those of the first source
    record the output holds (the version: WARC/1.1 when that record's is, else WARC/1.0). The id
    is derived from them and from the block, so two runs with other options (or another version)
    never give two different records the same id.
    """

    version = "WARC/1.1" if version.strip() == "WARC/1.1" else "WARC/1.0"
    lines = [
        ("software", f"warcdeboil/{__version__}"),
        ("format", f"WARC File Format {version[5:]}"),
        ("description", description),
        ("source", escape_name(source)),
        *settings,
    ]
    block = "".join(f"{k}: {v}\r\n" for k, v in lines).encode("utf-8")
    name = escape_name(output)
    headers = [
        ("WARC-Type", "warcinfo"),
        ("WARC-Date", warc_date(date)),
        ("WARC-Record-ID", derived_id("warcinfo", first_id + name + block.decode("utf-8"))),
        ("WARC-Filename", name),
        ("Content-Type", "application/warc-fields"),
        ("Content-Length", str(len(block))),
        ("WARC-Block-Digest", sha1_digest(block)),
    ]
    return version, headers, block


def cleaned_headers(
    headers: Fields, source_id: str, block_digest: str, warcinfo_id: str | None
) -> Fields:
    """The header fields of a cleaned record (already made consistent with its new block): a new
    id derived from the source's id and the new block, the source named in :data:`SOURCE_FIELD`,
    and ``WARC-Warcinfo-ID`` the output's own warcinfo (which says what made the record)."""
    new_id = derived_id("cleaned", source_id + block_digest)
    out: Fields = []
    for key, value in headers:
        lower = key.lower()
        if lower == "warc-record-id":
            out.append((key, new_id))
            if source_id:
                out.append((SOURCE_FIELD, source_id))
        elif lower == SOURCE_FIELD.lower() or (lower == "warc-warcinfo-id" and warcinfo_id):
            continue  # what the source said of its own origin or context no longer applies
        else:
            out.append((key, value))
    if not source_id:
        out.append(("WARC-Record-ID", new_id))
    if warcinfo_id:
        out.append(("WARC-Warcinfo-ID", warcinfo_id))
    return out


# WARC 1.1's revisit profile for a capture whose payload equals an earlier one's.
IDENTICAL_PAYLOAD = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
# Fields of the copy that a revisit record does not keep: its type, id, lengths and digests
# change; the payload is gone (Truncated, Identified-Payload-Type described it).
_NOT_IN_REVISIT = {
    "warc-type", "warc-record-id", "content-length", "warc-block-digest",
    "warc-payload-digest", "warc-truncated", "warc-identified-payload-type", "warc-refers-to",
    "warc-refers-to-target-uri", "warc-refers-to-date", "warc-profile",
    SOURCE_FIELD.lower(),
}


def revisit_of_copy(
    headers: Fields, http_head: bytes, payload_digest: bytes, original_uri: str,
    original_date: str, original_id: str, warcinfo_id: str | None,
) -> Fields:
    """The header fields of a ``revisit`` record that replaces an exact copy (``--dedup
    revisit``): the copy's own fields (URI, date, IP address, Content-Type…), a new id naming
    the copy in :data:`SOURCE_FIELD`, the profile ``identical-payload-digest``, the original's
    URI, date and (when known) id, the shared payload's SHA-1, and a block of the copy's HTTP
    headers only (``http_head``).

    >>> fields = revisit_of_copy([("WARC-Type", "response"), ("WARC-Record-ID", "<urn:x:2>"),
    ...     ("WARC-Target-URI", "http://a.com/x?utm_source=feed")], b"HTTP/1.1 200 OK" + bytes(4),
    ...     bytes(20), "http://a.com/x", "2024-01-01T00:00:00Z", "<urn:x:1>", None)
    >>> dict(fields)["WARC-Type"], dict(fields)["WARC-Refers-To"], dict(fields)["Content-Length"]
    ('revisit', '<urn:x:1>', '19')
    """
    source_id = field(headers, "WARC-Record-ID") or ""
    digest = "sha1:" + base64.b32encode(payload_digest).decode("ascii")
    out: Fields = [("WARC-Type", "revisit")]
    for key, value in headers:
        lower = key.lower()
        if lower in _NOT_IN_REVISIT or (lower == "warc-warcinfo-id" and warcinfo_id):
            continue
        out.append((key, value))
    out.append(("WARC-Record-ID", derived_id("revisit", source_id + digest)))
    if source_id:
        out.append((SOURCE_FIELD, source_id))
    out.append(("WARC-Profile", IDENTICAL_PAYLOAD))
    if original_id:
        out.append(("WARC-Refers-To", original_id))
    out.append(("WARC-Refers-To-Target-URI", original_uri))
    if original_date:
        out.append(("WARC-Refers-To-Date", original_date))
    out.append(("WARC-Payload-Digest", digest))
    out.append(("WARC-Block-Digest", sha1_digest(http_head)))
    if warcinfo_id:
        out.append(("WARC-Warcinfo-ID", warcinfo_id))
    out.append(("Content-Length", str(len(http_head))))
    return out


def field(headers: Fields, name: str) -> str | None:
    """The first value of a header field (case-insensitive), or None."""
    lower = name.lower()
    return next((v for k, v in headers if k.lower() == lower), None)


def _digest_key(digest: str) -> str:
    # Base32 and hex digests are case-insensitive; the label too.
    return digest.strip().lower()


def _uri(value: str) -> str:
    """A URI as a key: without the WARC 1.0 angle brackets, percent-encoded as records are
    written (:func:`~warcdeboil.warc.writer.valid_uri`), so that a raw and a written URI match."""
    value = value.strip()
    return valid_uri(value[1:-1] if value.startswith("<") and value.endswith(">") else value)


def cleaned_keys(source: Fields, cleaned: Fields) -> tuple[list[str], tuple[str, str]]:
    """The keys a revisit may find a cleaned record by (its source's id, and its source's URI
    and payload digest), and what it then points at: the cleaned record's id and payload digest."""
    new_id = field(cleaned, "WARC-Record-ID") or ""
    new_digest = field(cleaned, "WARC-Payload-Digest") or field(cleaned, "WARC-Block-Digest")
    keys = []
    source_id = field(source, "WARC-Record-ID")
    if source_id:
        keys.append(_id_key(source_id))
    digest = field(source, "WARC-Payload-Digest")
    uri = field(source, "WARC-Target-URI")
    if digest and uri is not None:
        keys.append(_capture_key(uri, digest))
    return keys, (new_id, new_digest or "")


def revisit_keys(headers: Fields) -> list[str]:
    """The keys a revisit looks its original up by, first to last: ``WARC-Refers-To``, then
    ``WARC-Refers-To-Target-URI`` (or its own URI) with ``WARC-Payload-Digest`` — what a replay
    tool looks up."""
    keys = []
    refers = field(headers, "WARC-Refers-To")
    if refers:
        keys.append(_id_key(refers))
    digest = field(headers, "WARC-Payload-Digest")
    uri = field(headers, "WARC-Refers-To-Target-URI") or field(headers, "WARC-Target-URI")
    if digest and uri is not None:
        keys.append(_capture_key(uri, digest))
    return keys


def _id_key(record_id: str) -> str:
    return "id " + record_id.strip()


def _capture_key(uri: str, digest: str) -> str:
    return f"uri {_digest_key(digest)} {_uri(uri)}"


def pointed_at(headers: Fields, new_id: str, new_digest: str) -> Fields:
    """A revisit's header fields pointed at a cleaned record: ``WARC-Refers-To`` its id (right
    after the revisit's own id), ``WARC-Payload-Digest`` its payload digest. The revisit keeps
    its own id: its block is unchanged, and the request and metadata records of its capture name
    it."""
    out: Fields = []
    placed = False
    for key, value in headers:
        lower = key.lower()
        if lower == "warc-refers-to":
            continue
        if lower == "warc-payload-digest" and new_digest:
            value = new_digest
        out.append((key, value))
        if lower == "warc-record-id" and not placed:
            out.append(("WARC-Refers-To", new_id))
            placed = True
    if not placed:
        out.append(("WARC-Refers-To", new_id))
    return out


class Revisits:
    """The records of one file that were cleaned, by source id and by (URI, payload digest): how
    a later ``revisit`` of one of them is pointed at the cleaned record while the file is written.

    Memory: two small entries per cleaned page of the file, dropped when the file is done. A
    revisit this does not resolve (its original comes later, or is in another input) is left to
    :mod:`.relink`, once every output is written (see docs/outputs.md, "Provenance").
    """

    def __init__(self) -> None:
        self._cleaned: dict[str, tuple[str, str]] = {}

    def add(self, source: Fields, cleaned: Fields) -> None:
        """Remember a cleaned record, given its source's header fields and its own."""
        keys, target = cleaned_keys(source, cleaned)
        for key in keys:
            self._cleaned[key] = target

    def resolve(self, headers: Fields) -> Fields | None:
        """The header fields of a revisit pointed at the cleaned record it revisits, or None when
        it revisits no record cleaned so far (see :func:`revisit_keys`, :func:`pointed_at`)."""
        if not self._cleaned:
            return None
        for key in revisit_keys(headers):
            target = self._cleaned.get(key)
            if target is not None:
                return pointed_at(headers, *target)
        return None
