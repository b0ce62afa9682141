"""Perplexity of cleaned pages under a given language model, and the filters it drives.

``LmSettings`` says what a run asks (picklable: it travels in ``ApplyJob`` to local workers and
Spark executors); ``PageScorer`` holds the model, loaded once per input file, and scores a page's
text a line at a time. Lines are scored independently (a line's context never reaches into the
line before), so the lines kept after ``max_line`` keep their scores and the page's perplexity
is made from them without scoring again.
"""

from __future__ import annotations

import gzip
import json
import os
import tempfile
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .content import Extraction
from .dom import CleanText
from .errors import InputError

if TYPE_CHECKING:
    import numpy as np

    from .lm import LanguageModel

__all__ = ["LINE_REASON", "LmSettings", "PageScore", "PageScorer", "check_model", "load_model"]

LINE_REASON = "perplexity_lines"  # the key of lines dropped in a page's ``removed``


@dataclass(frozen=True, slots=True)
class LmSettings:
    """A run's language model (a path, or an fsspec URL read through ``remote``) and filters."""

    model: str
    line_scores: bool = False  # --line-perplexity: each line's score in JSONL
    max_line: float | None = None  # --max-line-perplexity: lines above it are dropped
    max_page: float | None = None  # --max-page-perplexity: pages above it are dropped

    @property
    def filters(self) -> bool:
        return self.max_line is not None or self.max_page is not None

    def warcinfo_fields(self) -> tuple[tuple[str, str], ...]:
        """What a text output's warcinfo says of the model and filters (the model's file name:
        its directory differs from one machine to the next)."""
        fields = [("language-model", os.path.basename(self.model.rstrip("/")))]
        if self.max_line is not None:
            fields.append(("max-line-perplexity", repr(self.max_line)))
        if self.max_page is not None:
            fields.append(("max-page-perplexity", repr(self.max_page)))
        return tuple(fields)


@dataclass(frozen=True, slots=True)
class PageScore:
    """A page's text after the line filter, its scores, and what the filters dropped."""

    cleaned: CleanText
    content: Extraction | None
    perplexity: float | None  # None: no unit of text to score
    lines: list[float | None] | None  # per line of the text (None for an empty line), if asked
    lines_dropped: int
    page_dropped: bool


def load_model(location: str) -> LanguageModel:
    """The model at a path or, through ``remote``, an fsspec URL (copied to a temporary file)."""
    from .lm import LanguageModel
    from .remote import is_remote, local_path

    if not is_remote(location):
        try:
            return LanguageModel.load(local_path(location))
        except OSError as exc:
            raise InputError(f"{location}: cannot read the language model "
                             f"({exc.strerror or exc})") from exc
    from .remote import open_remote

    with tempfile.TemporaryDirectory(prefix="warcdeboil-lm-") as tmp:
        local = os.path.join(tmp, os.path.basename(location.rstrip("/")) or "model")
        try:
            with open_remote(location) as src, open(local, "wb") as dst:
                while chunk := src.read(1 << 20):
                    dst.write(chunk)
        except OSError as exc:
            raise InputError(f"{location}: cannot read the language model ({exc})") from exc
        return LanguageModel.load(local)


def check_model(location: str) -> None:
    """Fail (``InputError``, one line) unless ``location`` holds what looks like a model: a
    model file whose header and table names read, or an ARPA file. Cheaper than loading it (the
    workers load it again), so a run checks its model before it reads any record."""
    import numpy as np

    from .lm.model import FORMAT
    from .remote import is_remote, local_path

    if is_remote(location):
        load_model(location)  # a copy is made anyway: read it whole
        return
    path = local_path(location)
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
            if head[:2] == b"PK":
                fh.seek(0)
                with np.load(fh, allow_pickle=False) as data:
                    meta = json.loads(bytes(data["meta"]).decode())
                    if meta.get("format") != FORMAT or "ids" not in data.files:
                        raise InputError(f"{location}: not a warcdeboil language model")
                return
    except (OSError, KeyError, ValueError, zipfile.BadZipFile) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise InputError(f"{location}: not a readable language model ({reason})") from exc
    if path.endswith(".gz"):
        with gzip.open(path, "rb") as fh:
            try:
                head = fh.read(4096)
            except (OSError, EOFError) as exc:
                raise InputError(f"{location}: not a readable language model ({exc})") from exc
    if b"\\data\\" not in head:
        raise InputError(f"{location}: neither a warcdeboil language model nor ARPA")


class PageScorer:
    """Scores and filters pages with one model (made once per input file, not per page)."""

    def __init__(self, settings: LmSettings, model: LanguageModel | None = None) -> None:
        self.settings = settings
        self.model = model if model is not None else load_model(settings.model)

    def score(self, cleaned: CleanText, content: Extraction | None) -> PageScore:
        """Score the page's text; drop its lines above ``max_line`` (blocks, when the page has
        them: a block is one line of the text) and judge the page by ``max_page``."""
        return self.score_many([(cleaned, content)])[0]

    def score_many(self, pages: Sequence[tuple[CleanText, Extraction | None]]) -> list[PageScore]:
        """``score`` of each page, their lines scored together: one numpy pass for them all
        costs two thirds of a pass a page (dragnet's pages, measured)."""
        import numpy as np

        texts = [cleaned.text for cleaned, _ in pages]
        sums, counts = self.model.line_log10_probs("\n".join(texts))
        ends = np.cumsum([text.count("\n") + 1 for text in texts]).tolist()
        starts = [0, *ends[:-1]]
        return [self._judge(cleaned, content, sums[a:b], counts[a:b])
                for (cleaned, content), a, b in zip(pages, starts, ends, strict=True)]

    def _judge(self, cleaned: CleanText, content: Extraction | None, sums: np.ndarray,
               counts: np.ndarray) -> PageScore:
        """One page's scores from its lines' (sum of log10 p, units predicted)."""
        import numpy as np

        settings = self.settings
        text = cleaned.text
        spoken = counts > 1  # a line with a unit: an empty line is </s> alone
        scores = np.power(10.0, -sums / counts)
        dropped = 0
        if settings.max_line is not None:
            drop = spoken & (scores > settings.max_line)
            dropped = int(drop.sum())
            if dropped:
                keep = ~drop
                sums, counts, spoken, scores = sums[keep], counts[keep], spoken[keep], scores[keep]
                if content is not None and len(content.blocks) == len(keep):
                    kept = [b for b, k in zip(content.blocks, keep.tolist(), strict=True) if k]
                    removed = dict(content.removed)
                    removed[LINE_REASON] = dropped
                    content = Extraction(kept, removed)
                    text = content.text
                else:
                    text = "\n".join(line for line, k in zip(text.split("\n"), keep.tolist(),
                                                             strict=True) if k)
                cleaned = CleanText(text, cleaned.removed, cleaned.slots)
        units = int(counts[spoken].sum())
        perplexity = float(10.0 ** (-sums[spoken].sum() / units)) if units else None
        lines = None
        if settings.line_scores:
            lines = [float(s) if k else None for s, k in zip(scores.tolist(), spoken.tolist(),
                                                            strict=True)]
            if not lines:
                lines = [None]  # every line dropped: the empty text, one empty line
        page_dropped = (settings.max_page is not None and perplexity is not None
                        and perplexity > settings.max_page)
        return PageScore(cleaned, content, perplexity, lines, dropped, page_dropped)
