"""Perplexity of cleaned pages under a given language model, and the filters it drives.

``LmSettings`` says what a run asks (picklable: it travels in ``ApplyJob`` to local workers and
Spark executors); ``PageScorer`` holds the model, loaded once per input file, and scores a page's
text a line at a time. With models trained by the run (``--lm auto``, see :mod:`.stage`), it
holds one a language and half of the pages, loaded when first needed, and scores each page with
the model of its language that did not see it; with buckets, it places each page's perplexity
among its language's percentiles, worked out before pass 2. Lines are scored independently (a
line's context never reaches into the line before), so the lines kept after ``max_line`` keep
their scores and the page's perplexity is made from them without scoring again.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import tempfile
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from warcdeboil.errors import InputError
from warcdeboil.page.content import Extraction
from warcdeboil.page.dom import CleanText

if TYPE_CHECKING:
    import numpy as np

    from warcdeboil.page.language import Guess

    from . import LanguageModel

__all__ = ["AUTO", "BUCKETS", "DEFAULT_MAX_NOISE", "LINE_REASON", "NOISE_REASON",
           "NO_CALIBRATION", "LmSettings", "PageScore", "PageScorer", "bucket_of", "check_model",
           "load_model", "page_perplexity", "url_half"]

LINE_REASON = "perplexity_lines"  # the key of lines dropped in a page's ``removed``
NOISE_REASON = "noise_lines"  # the key of lines the noise filter dropped
AUTO = "auto"  # --lm auto: the run trains its own models, one a language (see lm.stage)
BUCKETS = ("head", "middle", "tail")  # perplexity_bucket, lowest perplexity first
# The line filter of a run with a model that carries its noise calibration, when no line filter
# is named: lines scoring above it are dropped. A real line scores above it only past every
# held-out line of the model's text, by a margin. With models of the other four sets' gold text,
# it moves F1 by at most 0.0011 either way on every set of ../shared/eval in both modes, where
# 0.999 costs up to 0.018 in content mode (benchmarks/results/lm-filter-noise-2026-11-28.md).
DEFAULT_MAX_NOISE = 0.9999
NO_CALIBRATION = ("holds no noise calibration (ARPA files, models of format version 2 and "
                  "models trained on too little text have none): train one with `warcdeboil "
                  "lm train`, or filter lines by perplexity (--max-line-perplexity)")


@dataclass(frozen=True, slots=True)
class LmSettings:
    """A run's language model (a path, or an fsspec URL read through ``remote``) and filters."""

    model: str  # AUTO: the run's own models (``trained``, filled in by lm.stage before pass 2)
    line_scores: bool = False  # --line-perplexity: each line's score in JSONL
    max_line: float | None = None  # --max-line-perplexity: lines above it are dropped
    max_page: float | None = None  # --max-page-perplexity: pages above it are dropped
    buckets: bool = False  # --perplexity-buckets: perplexity_bucket in JSONL
    keep_buckets: tuple[str, ...] | None = None  # --keep-buckets: pages of other buckets go
    # Filled in by the stage before pass 2 (lm.stage): the models the run trained, as
    # (language, half of the pages it was trained on, path), and each language's percentiles
    # (language, head's upper limit, middle's upper limit).
    trained: tuple[tuple[str, int, str], ...] = ()
    limits: tuple[tuple[str, float, float], ...] | None = None
    language_model: str = ""  # the identification model that routes pages (--language-model)
    # The noise score (a model with its calibration: ``LanguageModel.calibrated``).
    line_noise: bool = False  # --line-noise: each line's noise score in JSONL
    max_noise: float | None = None  # --max-line-noise: lines above it are dropped

    @property
    def auto(self) -> bool:
        return self.model == AUTO

    @property
    def bucketed(self) -> bool:
        """Whether pages get a bucket (so the run scores them before pass 2)."""
        return self.buckets or self.keep_buckets is not None

    @property
    def noise(self) -> bool:
        """Whether lines get a noise score: for JSONL, or for a filter that can drop some (no
        score is above 1)."""
        return self.line_noise or (self.max_noise is not None and self.max_noise < 1.0)

    @property
    def needs_lines(self) -> bool:
        """Whether pass 2 needs each line's score (else a page's perplexity is enough)."""
        return self.line_scores or self.max_line is not None or self.noise

    @property
    def filters(self) -> bool:
        return (self.max_line is not None or self.max_page is not None
                or self.keep_buckets is not None or self.noise)

    def warcinfo_fields(self) -> tuple[tuple[str, str], ...]:
        """What a text output's warcinfo says of the model and filters (the model's file name:
        its directory differs from one machine to the next)."""
        fields = [("language-model", os.path.basename(self.model.rstrip("/")))]
        if self.max_line is not None:
            fields.append(("max-line-perplexity", repr(self.max_line)))
        if self.max_noise is not None:
            fields.append(("max-line-noise", repr(self.max_noise)))
        if self.max_page is not None:
            fields.append(("max-page-perplexity", repr(self.max_page)))
        if self.keep_buckets is not None:
            fields.append(("keep-buckets", ",".join(self.keep_buckets)))
        return tuple(fields)


def url_half(url: str) -> int:
    """Which half of the pages a URL's page is in (0 or 1), by a hash of the URL: the same on
    every machine and in every run. ``--lm auto`` trains a model on each half and scores each
    page with the model of the other half.

    >>> url_half("https://example.com/a"), url_half("https://example.com/c")
    (0, 1)
    """
    digest = hashlib.blake2b(url.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return digest[0] & 1


def page_perplexity(sums: np.ndarray, counts: np.ndarray, max_line: float | None = None,
                    ) -> float | None:
    """The ``perplexity`` ``PageScorer`` gives a page whose lines have these sums of log10 p
    and numbers of units predicted (``LanguageModel.line_log10_probs``), its lines above
    ``max_line`` dropped; None for a page without a unit."""
    import numpy as np

    spoken = counts > 1  # a line with a unit: an empty line is </s> alone
    if max_line is not None:
        spoken &= ~(np.power(10.0, -sums / counts) > max_line)
    return _perplexity(sums, counts, spoken)


def _perplexity(sums: np.ndarray, counts: np.ndarray, spoken: np.ndarray) -> float | None:
    """10 ** -(mean log10 p) over the units of the ``spoken`` lines (the same sums in the same
    order wherever a page is scored: its perplexity is the same to the last bit)."""
    units = int(counts[spoken].sum())
    return float(10.0 ** (-sums[spoken].sum() / units)) if units else None


def _by_line(values: np.ndarray, spoken: np.ndarray) -> list[float | None]:
    """Each line's value, None for a line without a unit; ``[None]`` when no line is left
    (every line dropped: the empty text, one empty line)."""
    found = [float(v) if k else None for v, k in zip(values.tolist(), spoken.tolist(),
                                                       strict=True)]
    return found or [None]


def bucket_of(perplexity: float | None, head: float, middle: float) -> str | None:
    """``head`` at or below ``head``'s limit, ``middle`` at or below ``middle``'s, else
    ``tail``; None for a page without a score."""
    if perplexity is None:
        return None
    if perplexity <= head:
        return BUCKETS[0]
    return BUCKETS[1] if perplexity <= middle else BUCKETS[2]


@dataclass(frozen=True, slots=True)
class PageScore:
    """A page's text after the line filter, its scores, and what the filters dropped."""

    cleaned: CleanText
    content: Extraction | None
    perplexity: float | None  # None: no unit of text to score
    lines: list[float | None] | None  # per line of the text (None for an empty line), if asked
    lines_dropped: int
    page_dropped: bool  # by --max-page-perplexity
    bucket: str | None = None  # perplexity_bucket, when the run computes buckets
    bucket_dropped: bool = False  # by --keep-buckets (a page dropped by both: page_dropped)
    bucketed: bool = False  # the run computes buckets: JSONL has perplexity_bucket
    language: str = ""  # the language that chose the model and the percentiles (when routed)
    noise: list[float | None] | None = None  # per line, as ``lines``, if asked (--line-noise)
    noise_dropped: int = 0  # lines dropped by --max-line-noise (not by --max-line-perplexity)
    guess: Guess | None = None  # ``identify`` of the text before the filters, if made here


def load_model(location: str) -> LanguageModel:
    """The model at a path or, through ``remote``, an fsspec URL (copied to a temporary file)."""
    from warcdeboil.warc.remote import is_remote, local_path

    from . import LanguageModel

    if not is_remote(location):
        try:
            return LanguageModel.load(local_path(location))
        except OSError as exc:
            raise InputError(f"{location}: cannot read the language model "
                             f"({exc.strerror or exc})") from exc
    from warcdeboil.warc.remote import open_remote

    with tempfile.TemporaryDirectory(prefix="warcdeboil-lm-") as tmp:
        local = os.path.join(tmp, os.path.basename(location.rstrip("/")) or "model")
        try:
            with open_remote(location) as src, open(local, "wb") as dst:
                while chunk := src.read(1 << 20):
                    dst.write(chunk)
        except OSError as exc:
            raise InputError(f"{location}: cannot read the language model ({exc})") from exc
        return LanguageModel.load(local)


def check_model(location: str) -> bool:
    """Fail (``InputError``, one line) unless ``location`` holds what looks like a model: a
    model file whose header and table names read, or an ARPA file. Cheaper than loading it (the
    workers load it again), so a run checks its model before it reads any record. Whether it
    carries the noise score's calibration (``LanguageModel.calibrated``)."""
    import numpy as np

    from warcdeboil.warc.remote import is_remote, local_path

    from .model import FORMAT

    if is_remote(location):
        return load_model(location).calibrated  # a copy is made anyway: read it whole
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
                    return bool(meta.get("chars_order")) and "noise.long" in data.files
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
    return False


class PageScorer:
    """Scores and filters pages with one model (made once per input file, not per page), or
    with the run's own models (``--lm auto``: loaded when a page first needs one)."""

    def __init__(self, settings: LmSettings, model: LanguageModel | None = None, *,
                 load: bool = True) -> None:
        """``load`` False: a given model is read only when a page needs it (pass 2 with the
        stage's scores may need none)."""
        self.settings = settings
        self.model = model
        if model is None and not settings.auto and load:
            self.model = load_model(settings.model)
        self._trained = {(language, half): path for language, half, path in settings.trained}
        self._loaded: dict[tuple[str, int], LanguageModel] = {}
        self._limits = ({language: (head, middle) for language, head, middle in settings.limits}
                        if settings.limits is not None else None)

    def route(self, text: str, url: str, language: str | None = None,
              ) -> tuple[str, LanguageModel | None]:
        """A page's language (the cleaned text's, before the line filter; ``""`` when unsure)
        and the model that scores it: the given one, or the run's model of that language
        trained on the other half of the pages (None: no such model, the page is not scored)."""
        from warcdeboil.page.language import identify

        if language is None:
            language = identify(text, self.settings.language_model).language
        if not self.settings.auto:
            return language, self._given()
        return language, self._model((language, 1 - url_half(url)))

    def score(self, cleaned: CleanText, content: Extraction | None, url: str = "") -> PageScore:
        """Score the page's text; drop its lines above ``max_line`` (blocks, when the page has
        them: a block is one line of the text) and judge the page by ``max_page``."""
        return self.score_many([(cleaned, content)], [url])[0]

    def score_many(self, pages: Sequence[tuple[CleanText, Extraction | None]],
                   urls: Sequence[str] | None = None,
                   languages: Sequence[str | None] | None = None) -> list[PageScore]:
        """``score`` of each page (``urls``: theirs, which choose the half with ``--lm auto``;
        ``languages``: their texts' languages, when known already), the lines of the pages of
        one model scored together: one numpy pass for them all costs two thirds of a pass a
        page (dragnet's pages, measured)."""
        routed = self.settings.auto or self._limits is not None
        if not routed:
            return self._score_with(self._given(), pages, [""] * len(pages), languages)
        urls = urls if urls is not None else [""] * len(pages)
        groups: dict[int, tuple[LanguageModel, list[int], list[str]]] = {}
        results: list[PageScore | None] = [None] * len(pages)
        known: Sequence[str | None] = languages if languages is not None else [None] * len(pages)
        for i, ((cleaned, content), url, given) in enumerate(zip(pages, urls, known,
                                                                  strict=True)):
            language, model = self.route(cleaned.text, url, given)
            if model is None:
                unscored: list[float | None] = [None] * (cleaned.text.count("\n") + 1)
                results[i] = PageScore(
                    cleaned, content, None, unscored if self.settings.line_scores else None, 0,
                    False, bucketed=self._limits is not None, language=language,
                    noise=list(unscored) if self.settings.line_noise else None)
                continue
            group = groups.setdefault(id(model), (model, [], []))
            group[1].append(i)
            group[2].append(language)
        for model, members, found in groups.values():
            scores = self._score_with(model, [pages[i] for i in members], found, found)
            for i, score in zip(members, scores, strict=True):
                results[i] = score
        return [score for score in results if score is not None]

    def perplexities(self, language: str, half: int, texts: Sequence[str]) -> list[float | None]:
        """The ``perplexity`` that ``score_many`` gives pages of these cleaned texts, of this
        language and half of the pages (what the stage before pass 2 needs for percentiles)."""
        if not self.settings.auto:
            model: LanguageModel | None = self._given()
        else:
            model = self._model((language, 1 - half))
        if model is None or not texts:
            return [None] * len(texts)
        pages = [(CleanText(text, 0), None) for text in texts]
        return [score.perplexity for score in self._score_with(model, pages, [language] * len(
            texts))]

    def _given(self) -> LanguageModel:
        """The model the run was given (read now if it was not yet)."""
        if self.model is None:
            self.model = load_model(self.settings.model)
        return self.model

    def _model(self, key: tuple[str, int]) -> LanguageModel | None:
        model = self._loaded.get(key)
        if model is None and key in self._trained:
            model = self._loaded[key] = load_model(self._trained[key])
        return model

    def _score_with(self, model: LanguageModel,
                    pages: Sequence[tuple[CleanText, Extraction | None]],
                    languages: Sequence[str],
                    known: Sequence[str | None] | None = None) -> list[PageScore]:
        """The pages' scores under ``model``; ``languages``: what their ``PageScore`` says
        (the routed language, else ""); ``known``: their texts' languages, when known."""
        import numpy as np

        texts = [cleaned.text for cleaned, _ in pages]
        noise = None
        if self.settings.noise:
            if not model.calibrated:
                raise InputError(f"{self.settings.model}: {NO_CALIBRATION}")
            # Without --line-noise only the filter's verdicts are needed.
            limit = None if self.settings.line_noise else self.settings.max_noise
            sums, counts, noise = model.line_scores("\n".join(texts), limit)
        else:
            sums, counts = model.line_log10_probs("\n".join(texts))
        ends = np.cumsum([text.count("\n") + 1 for text in texts]).tolist()
        starts = [0, *ends[:-1]]
        found = (self._foreign(model, texts, known) if noise is not None
                 else [(None, False)] * len(texts))
        return [self._judge(cleaned, content, sums[a:b], counts[a:b], language,
                            noise[a:b] if noise is not None else None, not foreign, guess)
                for (cleaned, content), a, b, language, (guess, foreign)
                in zip(pages, starts, ends, languages, found, strict=True)]

    def _foreign(self, model: LanguageModel, texts: Sequence[str],
                 known: Sequence[str | None] | None) -> list[tuple[Guess | None, bool]]:
        """For each text: its language as identified here (None when ``known`` gave it, or
        when no page needs it), and whether it is of another language than the model's: the
        noise score measures lines against the model's own language, in which any other
        language's sentences are noise, so the noise filter leaves such pages alone."""
        from warcdeboil.page.language import identify

        own = model.language if self.settings.max_noise is not None else ""
        found: list[tuple[Guess | None, bool]] = []
        for i, text in enumerate(texts):
            if not own:
                found.append((None, False))
                continue
            given = known[i] if known is not None else None
            guess = identify(text) if given is None else None
            language = guess.language if guess is not None else given
            found.append((guess, bool(language) and language != own))
        return found

    def _judge(self, cleaned: CleanText, content: Extraction | None, sums: np.ndarray,
               counts: np.ndarray, language: str = "", noise: np.ndarray | None = None,
               filter_noise: bool = True, guess: Guess | None = None) -> PageScore:
        """One page's scores from its lines' (sum of log10 p, units predicted) and noise
        scores (when the run computes them; ``filter_noise`` False: none dropped by them);
        ``guess``: the language of its text, if identified here."""
        import numpy as np

        settings = self.settings
        text = cleaned.text
        spoken = counts > 1  # a line with a unit: an empty line is </s> alone
        scores = np.power(10.0, -sums / counts)
        drop = np.zeros(len(spoken), bool)
        if settings.max_line is not None:
            drop = spoken & (scores > settings.max_line)
        dropped = int(drop.sum())
        noisy = np.zeros(len(spoken), bool)
        if noise is not None and settings.max_noise is not None and filter_noise:
            # A line above both limits is the perplexity filter's.
            noisy = spoken & (noise > settings.max_noise) & ~drop
        noise_dropped = int(noisy.sum())
        if dropped or noise_dropped:
            keep = ~(drop | noisy)
            sums, counts, spoken, scores = sums[keep], counts[keep], spoken[keep], scores[keep]
            if noise is not None:
                noise = noise[keep]
            if content is not None and len(content.blocks) == len(keep):
                kept = [b for b, k in zip(content.blocks, keep.tolist(), strict=True) if k]
                removed = dict(content.removed)
                for reason, count in ((LINE_REASON, dropped), (NOISE_REASON, noise_dropped)):
                    if count:
                        removed[reason] = count
                content = Extraction(kept, removed)
                text = content.text
            else:
                text = "\n".join(line for line, k in zip(text.split("\n"), keep.tolist(),
                                                         strict=True) if k)
            cleaned = CleanText(text, cleaned.removed, cleaned.slots)
        perplexity = _perplexity(sums, counts, spoken)
        lines = _by_line(scores, spoken) if settings.line_scores else None
        page = self._page(cleaned, content, perplexity, lines, dropped, language)
        if noise is None:
            return page
        return replace(page, noise=_by_line(noise, spoken) if settings.line_noise else None,
                       noise_dropped=noise_dropped, guess=guess)

    @property
    def needs_lines(self) -> bool:
        """Whether pass 2 needs each line's score (else a page's perplexity is enough)."""
        return self.settings.needs_lines

    def scored(self, cleaned: CleanText, content: Extraction | None, perplexity: float | None,
               language: str) -> PageScore:
        """The page's ``PageScore`` from its perplexity and language as the stage before pass
        2 found them, when no line score is needed (``needs_lines`` False)."""
        assert not self.needs_lines
        return self._page(cleaned, content, perplexity, None, 0, language)

    def _page(self, cleaned: CleanText, content: Extraction | None, perplexity: float | None,
              lines: list[float | None] | None, dropped: int, language: str) -> PageScore:
        """The filters' verdict on a page of this perplexity."""
        settings = self.settings
        page_dropped = (settings.max_page is not None and perplexity is not None
                        and perplexity > settings.max_page)
        bucket = None
        if self._limits is not None and language in self._limits:
            bucket = bucket_of(perplexity, *self._limits[language])
        bucket_dropped = (not page_dropped and settings.keep_buckets is not None
                          and bucket is not None and bucket not in settings.keep_buckets)
        return PageScore(cleaned, content, perplexity, lines, dropped, page_dropped, bucket,
                         bucket_dropped, self._limits is not None, language)
