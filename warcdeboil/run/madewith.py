"""What each output was made with: the options that shape its bytes, recorded beside it, and the
check ``--resume`` makes of them before it keeps an output.

An output depends on more than its input: the format, mode and compression, the site key, the
fit's parameters, the page limits, the duplicate stage and URL rules, the language model and its
filters, and the records an index selects. Each output ``NAME`` is written with a small JSON file
beside it, ``.NAME.options.json``, that lists them (:func:`side_path`): the output and that file
are replaced together (:class:`warcdeboil.warc.writer.AtomicFile`), so a side file never speaks of
another output than the one beside it. The output's own bytes do not change. One file per
output, not one manifest per directory: outputs are written at once by many worker processes (or
Spark executors, on object stores that cannot append), and each renames its own.

Only what can change a byte is recorded, each as the run uses it: the compression the output was
written with (``--compress auto`` and ``gzip`` give the same gzip output), a zstd dictionary only
where one is trained, URL rules only where JSONL writes ``url_canonical``, a language model by its
file name and the SHA-1 of its bytes. The workers, the size of the index's sorted runs and its
partitions, ``--on-error``, the engine, the work directory, the report, ``-q``, ``--json`` and the
path of the URL rules file change no byte (the tests check each) and are not recorded.

``--resume`` keeps an output only when what is recorded beside it is what this run would write
(:func:`check_resumable`); otherwise it refuses the run before the first record is read, in one
line naming each option that differs (exit status 2). An output with no record (written before
outputs had one, or moved without it) is refused too: nothing is kept on trust.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from warcdeboil._version import __version__
from warcdeboil.dedup.verdicts import DedupMode
from warcdeboil.errors import InputError, PlanError
from warcdeboil.output.formats import FIELD_FORMATS, OutputFormat
from warcdeboil.page.favor import Favor
from warcdeboil.page.html import PageLimits
from warcdeboil.site.clean import Mode
from warcdeboil.site.fit import FitParams
from warcdeboil.site.sitekey import SiteKeyMode
from warcdeboil.warc.compression import Codec
from warcdeboil.warc.names import escape_name
from warcdeboil.warc.reader import Span
from warcdeboil.warc.remote import is_remote, local_path, open_remote

from .options import Options

if TYPE_CHECKING:
    from pathlib import Path

    from warcdeboil.corpus.settings import QualitySettings
    from warcdeboil.lm.scoring import LmSettings

__all__ = [
    "NO_SELECTION",
    "SIDE_SUFFIX",
    "RunRecord",
    "check_resumable",
    "made_with",
    "model_identity",
    "read_record",
    "selection_key",
    "side_location",
    "side_path",
    "wanted",
]

SIDE_SUFFIX = ".options.json"
RECORD_FORMAT = 1  # the side file's layout; one of another layout is no record
NO_SELECTION = "none"
# How a recorded value is set, where that is not ``--`` + its name.
_SET_BY = {
    "max-page-bytes": "--max-page-mb (in bytes)",
    "near-duplicate": "the fit's near_duplicate",
    "repeated-share": "the fit's repeated_share",
    "repeated-min-pages": "the fit's repeated_min_pages",
    "select-index": "--select-index/--sites (the records chosen)",
}


def side_path(output: Path) -> Path:
    """The record beside a local output: ``.NAME.options.json`` in its directory."""
    return output.with_name(f".{output.name}{SIDE_SUFFIX}")


def side_location(location: str) -> str:
    """The record beside an output given as a local path or a URL.

    >>> side_location("s3://b/out/a.jsonl.gz")
    's3://b/out/.a.jsonl.gz.options.json'
    """
    parent, slash, name = location.rpartition("/")
    return f"{parent}{slash}.{name}{SIDE_SUFFIX}"


@dataclass(frozen=True)
class RunRecord:
    """What a run makes its outputs with, but each output's compression (:meth:`output`)."""

    options: tuple[tuple[str, str], ...]
    format: OutputFormat
    zstd_dictionary: bool

    def output(self, codec: Codec) -> dict[str, str]:
        """The record of one output written with ``codec``."""
        trained = (self.zstd_dictionary and codec is Codec.ZSTD
                   and self.format in (OutputFormat.WARC, OutputFormat.TEXT))
        first, rest = self.options[:1], self.options[1:]
        return dict([*first, ("compress", codec.value),
                     ("zstd-dict", "yes" if trained else "no"), *rest])

    def side_bytes(self, codec: Codec) -> bytes:
        """The side file of one output written with ``codec``."""
        data = {"record": RECORD_FORMAT, "software": f"warcdeboil/{__version__}",
                "options": self.output(codec)}
        return (json.dumps(data, indent=1) + "\n").encode("utf-8")


def made_with(
    fmt: OutputFormat, mode: Mode, site_key: SiteKeyMode, fit: FitParams | None,
    limits: PageLimits, dedup: DedupMode, url_rules: bool, lm: LmSettings | None,
    zstd_dictionary: bool, selection: str, redact_pii: bool = False,
    language_model: str = "", quality: QualitySettings | None = None,
    drop_headline: bool = False, favor: Favor = Favor.BALANCED,
) -> RunRecord:
    """The record of what a run's outputs are made with, from the values pass 2 uses: ``fit``
    None when pages are cleaned without profiles, ``dedup`` what is done with the duplicate
    stage's verdicts (off without them), ``url_rules`` whether rules were learned for JSONL,
    ``selection`` :func:`selection_key` of the records read; ``redact_pii`` recorded only when
    on, so that the records of runs without it are those written before it existed;
    ``language_model`` the identification model given (named only when given, and for outputs
    that give languages); ``drop_headline`` recorded only when on, as ``redact_pii``, and
    ``favor`` only when not balanced."""
    names = ("max-iou", "min-occurrence", "near-duplicate", "repeated-share",
             "repeated-min-pages")
    fitted = [(name, "none") for name in names] if fit is None else list(zip(names, map(repr, (
        fit.max_iou, fit.min_occurrence, fit.near_duplicate, fit.repeated_share,
        fit.repeated_min_pages)), strict=True))
    canonical = url_rules and fmt in FIELD_FORMATS
    values = [
        ("format", fmt.value), ("mode", Mode(mode).value), ("site-key", site_key.value),
        *fitted,
        ("max-page-bytes", str(limits.max_bytes)), ("max-page-tags", str(limits.max_tags)),
        ("max-page-depth", str(limits.max_depth)),
        ("dedup", dedup.value), ("url-rules", "yes" if canonical else "no"),
        *_lm_values(lm),
        ("select-index", selection),
        # Only with --quality-filters: the records of other runs stay as they were.
        *(quality.record_values() if quality is not None else ()),
    ]
    if redact_pii:
        values.append(("redact-pii", "yes"))
    if drop_headline:
        values.append(("drop-headline", "yes"))
    if favor is not Favor.BALANCED:
        values.append(("favor", favor.value))
    if language_model and fmt is not OutputFormat.WARC:
        values.append(("language-model", model_identity(language_model)))
    return RunRecord(tuple(values), fmt, zstd_dictionary)


def wanted(options: Options, selection: str = NO_SELECTION) -> RunRecord:
    """The record a run with ``options`` gives its outputs (what ``clean`` writes them with)."""
    dedup = options.effective_dedup
    return made_with(options.format, options.effective_mode, options.site_key, options.fit,
                     options.limits, dedup,
                     options.url_rules is not None and dedup is not DedupMode.OFF,
                     options.lm, options.zstd_dictionary, selection, options.redact_pii,
                     options.language_model, options.quality, options.drop_headline,
                     options.favor)


def _lm_values(lm: LmSettings | None) -> list[tuple[str, str]]:
    if lm is None:
        return [("lm", "none")]

    def given(value: float | None) -> str:
        return "none" if value is None else repr(value)

    return [
        ("lm", "auto" if lm.auto else model_identity(lm.model)),
        ("line-perplexity", "yes" if lm.line_scores else "no"),
        ("max-line-perplexity", given(lm.max_line)),
        ("max-page-perplexity", given(lm.max_page)),
        ("perplexity-buckets", "yes" if lm.buckets else "no"),
        ("keep-buckets", ",".join(lm.keep_buckets) if lm.keep_buckets is not None else "none"),
    ]


def model_identity(location: str) -> str:
    """A language model as a record names it: its file name (its directory differs from one
    machine to the next) and the SHA-1 of its bytes (a model trained again under the same
    name is another model)."""
    digest = hashlib.sha1()
    try:
        with (open_remote(location) if is_remote(location)
              else open(local_path(location), "rb")) as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
    except OSError as exc:
        raise InputError(f"{location}: cannot read the language model "
                         f"({exc.strerror or exc})") from exc
    return f"{os.path.basename(location.rstrip('/'))} sha1:{digest.hexdigest()}"


def selection_key(chosen: Iterable[tuple[str, Sequence[Span]]] | None) -> str:
    """The records an index chose of each input (relative name, (offset, length) spans), as one
    digest; :data:`NO_SELECTION` when every record of every input is read. The whole selection,
    not one input's: the fit and the duplicate stage see every input's pages."""
    if chosen is None:
        return NO_SELECTION
    listed = sorted([rel, [[int(offset), int(length)] for offset, length in spans]]
                    for rel, spans in chosen)
    text = json.dumps(listed, separators=(",", ":"))
    return "sha1:" + hashlib.sha1(text.encode("utf-8")).hexdigest()


def read_record(location: str) -> dict[str, str] | None:
    """The options recorded beside the output at ``location`` (a path or a URL); None when it
    has no record, or one that cannot be read."""
    side = side_location(location)
    try:
        if is_remote(side):
            with open_remote(side) as fh:
                data: Any = json.loads(fh.read())
        else:
            with open(local_path(side), "rb") as fh:
                data = json.loads(fh.read())
    except (OSError, InputError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("record") != RECORD_FORMAT:
        return None
    options = data.get("options")
    if not isinstance(options, dict):
        return None
    return {str(key): str(value) for key, value in options.items()}


def check_resumable(existing: Iterable[tuple[str, dict[str, str]]]) -> None:
    """Refuse ``--resume`` (:class:`PlanError`, one line) when an output that exists (location,
    the record this run would give it) was made with other options, or has no record of them.

    Why a refusal rather than writing such outputs again: ``--resume`` says "finish the run
    that was stopped", so a changed option is most likely a slip in retyping the command, and
    writing again would throw away finished outputs (hours of a large run) on a typo. The run
    that was meant is one command away: the earlier options with ``--resume``, or the new ones
    without it (every output written anew)."""
    differ: list[tuple[str, list[str]]] = []
    unknown: list[str] = []
    for location, record in existing:
        recorded = read_record(location)
        if recorded is None:
            unknown.append(location)
        elif recorded != record:
            differ.append((location, _differences(recorded, record)))
    if differ:
        location, said = differ[0]
        raise PlanError(  # a name holding a newline is escaped: the message stays one line
            f"--resume: {escape_name(location)}{_others(len(differ))} was made with other "
            "options: "
            f"{'; '.join(said)}. Resume with the options it was made with, or run without "
            "--resume to write every output anew")
    if unknown:
        raise PlanError(
            f"--resume: {escape_name(unknown[0])}{_others(len(unknown))} has no record of the "
            "options it was made with (no "
            f"{escape_name(side_location(os.path.basename(unknown[0])))} beside it: written "
            "before outputs had one, or moved without it). Run without --resume to write every "
            "output anew, or delete the outputs to be written again")


def _differences(recorded: dict[str, str], record: dict[str, str]) -> list[str]:
    said = []
    for key in [*record, *(k for k in recorded if k not in record)]:
        before, now = recorded.get(key, "not recorded"), record.get(key, "not recorded")
        if before != now:
            said.append(f"{_SET_BY.get(key, '--' + key)} {escape_name(before)} "
                        f"(this run: {escape_name(now)})")
    return said


def _others(count: int) -> str:
    if count < 2:
        return ""
    return f" (and {count - 1} other output{'s' if count > 2 else ''})"
