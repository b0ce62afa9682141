"""Training text from what the user has: archives (their pages' main content, cleaned by a
function the caller gives: the command line runs the pipeline), JSONL (a ``text`` field, as
``warcdeboil clean --format jsonl`` writes) or plain text.
"""

from __future__ import annotations

import gzip
import io
import json
import logging
import os
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import zstandard

from warcdeboil.errors import ConfigError, InputError
from warcdeboil.warc.remote import ARCHIVE_SUFFIXES

__all__ = ["TextSources", "input_kind"]

log = logging.getLogger(__name__)

_JSONL_SUFFIXES = (".jsonl", ".jsonl.gz", ".jsonl.zst", ".json.gz", ".ndjson")
BLOCK_CHARS = 1 << 20  # plain text is handed on in blocks of about this many characters


def input_kind(path: str) -> str:
    """``archive``, ``jsonl``, or ``text`` (anything else, ``-`` for standard input)."""
    name = path.lower()
    if os.path.isdir(path) or name.endswith(ARCHIVE_SUFFIXES):
        return "archive"
    if name.endswith(_JSONL_SUFFIXES):
        return "jsonl"
    return "text"


def _open_text(path: str) -> IO[str]:
    if path == "-":
        return io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")
    # Each opener's file is closed with the text wrapper the caller closes.
    raw: IO[bytes]
    if path.endswith(".gz"):
        raw = gzip.open(path, "rb")  # type: ignore[assignment]  # noqa: SIM115
    elif path.endswith(".zst"):
        raw = zstandard.open(path, "rb")  # type: ignore[assignment]  # noqa: SIM115
    else:
        raw = open(path, "rb")  # noqa: SIM115
    return io.TextIOWrapper(raw, encoding="utf-8", errors="replace")  # type: ignore[arg-type]


@dataclass
class TextSources:
    """The texts of inputs of any kind, in order; ``skipped`` counts JSONL lines that were no
    JSON object (each logged once, with file and line), ``problems`` the archives' bad records
    and inputs (logged by the pipeline, counted by reason in its summary).

    ``clean_archives(paths, out_dir)`` cleans archives into JSONL files under ``out_dir`` (main
    content, uncompressed) and returns how many problems it counted; archives are refused
    without it."""

    paths: Sequence[str]
    clean_archives: Callable[[Sequence[str], str], int] | None = None
    skipped: int = 0
    pages: int = 0
    kinds: dict[str, int] = field(default_factory=dict)
    problems: int = 0

    def __iter__(self) -> Iterator[str]:
        archives = [p for p in self.paths if input_kind(p) == "archive"]
        for path in self.paths:
            kind = input_kind(path)
            self.kinds[kind] = self.kinds.get(kind, 0) + 1
            if kind == "jsonl":
                yield from self._jsonl(path)
            elif kind == "text":
                yield from self._text(path)
        if archives:
            yield from self._archives(archives)

    def _text(self, path: str) -> Iterator[str]:
        try:
            with _open_text(path) as fh:
                while True:
                    block = fh.read(BLOCK_CHARS)
                    if not block:
                        return
                    yield block + fh.readline()  # end at a line's end
        except OSError as exc:
            raise InputError(f"{path}: cannot read ({exc})") from exc

    def _jsonl(self, path: str) -> Iterator[str]:
        try:
            with _open_text(path) as fh:
                for number, line in enumerate(fh, 1):
                    if not line.strip():
                        continue
                    try:
                        obj = json.loads(line)
                        text = obj.get("text")
                    except (json.JSONDecodeError, AttributeError):
                        self.skipped += 1
                        log.warning("%s:%d: not a JSON object, skipped", path, number)
                        continue
                    if isinstance(text, str) and text:
                        self.pages += 1
                        yield text
        except (OSError, EOFError, zstandard.ZstdError) as exc:
            raise InputError(f"{path}: cannot read ({exc})") from exc

    def _archives(self, paths: list[str]) -> Iterator[str]:
        """Clean the archives to JSONL, then read its text."""
        if self.clean_archives is None:
            raise ConfigError(f"{paths[0]}: an archive, and no way to clean archives was given")
        with tempfile.TemporaryDirectory(prefix="warcdeboil-lm-") as out:
            self.problems += self.clean_archives(paths, out)
            for output in sorted(Path(out).rglob("*.jsonl")):
                yield from self._jsonl(str(output))
