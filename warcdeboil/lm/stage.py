"""The language-model stage of a run, between the fit and pass 2 (local engine).

It reads what pass 1 kept of every page (the page stores: no HTML is parsed again), cleans each
page with its site's profile as pass 2 will, and sorts the text by language (the cleaned text's,
as JSONL's ``language``) and by half of the pages (a hash of the URL, :func:`.scoring.url_half`)
into spill files (length-prefixed UTF-8), one per input, language and half. Then:

* ``--lm auto``: one model is trained per language and half, a job each (the trainer's counts are
  bounded: :mod:`.counts`), from the spills of every input in their order, so the model is
  the same for any number of workers. A page is scored by the model of its language trained on
  the *other* half: a model scores the text it was trained on far lower than text it never saw
  (``benchmarks/lm_filter.py`` measures by how much), which would put every page in the head.
* buckets (``--perplexity-buckets``, ``--keep-buckets``): every page is scored as pass 2 would
  score it, and each language's pages are split at the 30th and 60th percentiles of their
  perplexity, as CCNet does: ``head`` the lowest 30 %, ``middle`` the next 30 %, ``tail`` the
  rest.

The pages cleaned here are kept (:mod:`.cleaned`) with their language, and so are their
perplexities: pass 2 writes them from there without cleaning them again, identifying their
language again, nor scoring them again unless it needs each line's score
(``--line-perplexity``, ``--max-line-perplexity``). With a given model the pages are scored as
they are cleaned (for buckets). With ``--lm auto`` (unless pass 2 needs each line's score and no
bucket is asked for), each model's training keeps the units it split its texts into
(:mod:`.unitstore`), and once both halves' models are trained each half's pages are scored from
those units with the other half's model (:func:`_cross_score`): no text is split into units a
second time.

One walk of the page stores serves the duplicate stage too (``prepare_lm(sign=)``, when both run):
what each page's template removes is found once, for a batch of pages
(:func:`warcdeboil.dedup.stage.doomed_of`), for the cleaning and for the duplicate signature
(:func:`warcdeboil.dedup.stage.sign_batch`), which would otherwise read every page store again and
find the same cuts (on dragnet, 0.44 CPU-s of the two stages' 4.0).

Pages whose language is unsure (``language`` null) are neither trained on nor bucketed.
"""

from __future__ import annotations

import logging
import math
import shutil
import struct
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from warcdeboil.dedup.detect import SignatureWriter
from warcdeboil.dedup.stage import SIGN_BATCH, doomed_of, sign_batch
from warcdeboil.dedup.verdicts import SignJob
from warcdeboil.errors import WorkDirError
from warcdeboil.page.dom import without_structure
from warcdeboil.page.favor import Favor
from warcdeboil.page.language import identify
from warcdeboil.site.clean import Mode, clean_page
from warcdeboil.site.fit import SiteProfile
from warcdeboil.site.pagestore import PageEntry, iter_page_store
from warcdeboil.site.profiles import ProfileReader
from warcdeboil.site.sitekey import SiteKeyer, SiteKeyMode

from .cleaned import Cleaned, CleanedStoreWriter
from .scoring import LmSettings, PageScorer, load_model, page_perplexity, url_half
from .unitstore import UnitStoreWriter, iter_unit_chunks, text_lines

if TYPE_CHECKING:
    import numpy as np

    from . import LanguageModel

__all__ = ["HEAD_PERCENTILE", "MIDDLE_PERCENTILE", "MIN_TRAINING_CHARS", "LmStats",
           "cleaned_store_path", "percentile_limits", "percentile_ranks", "prepare_lm",
           "read_scores", "scores_path", "train_run_model"]

log = logging.getLogger(__name__)

# CCNet's split of each language: head below the 30th percentile of perplexity, middle to the
# 60th, tail above.
HEAD_PERCENTILE = 30
MIDDLE_PERCENTILE = 60
# A language gets models of its own only with this many characters of cleaned text in each
# half of its pages (about 300 English words): less makes a model that knows too few words to
# score anything but its own text. A floor, not a measured optimum.
MIN_TRAINING_CHARS = 2000
_FRAME = struct.Struct("<I")
_BATCH_PAGES = 256  # pages scored together (as pass 2's scoring sink does)


@dataclass
class LmStats:
    """What the stage did: pages and characters by language, and the models it trained."""

    pages: dict[str, int]
    chars: dict[str, int]
    trained: list[str]  # languages with a model per half (--lm auto)


@dataclass(frozen=True)
class _TextJob:
    store: str
    cleaned: str  # where the pages go as cleaned (pass 2 writes them from there)
    spill: bool  # whether texts go to the spill files (for training: --lm auto)
    spill_dir: str
    file_id: int
    profiles_dir: str | None
    partitions: int
    site_key: SiteKeyMode
    mode: Mode
    # A given model's settings when the pages are scored as they are cleaned (buckets without
    # --lm auto), and where their perplexities go; None: scored later, by _ScoreJob.
    score: LmSettings | None = None
    scores: str = ""
    # The duplicate stage's signing of this input, done in the same walk of the page store
    # (the pages' template cuts found once for both); None: the duplicate stage signs it.
    sign: SignJob | None = None
    # --lm auto, scored before pass 2: each page's ordinal, language and half go to ``scores``
    # (perplexities to come from the training units, :func:`_cross_score`).
    pages: bool = False
    lean: bool = False  # the cleaned store keeps each block's text and kind only
    # Whether the output reads its pages with structure marks: a page stored with them for the
    # duplicate stage alone is cleaned without them, as pass 2 would (template-mode text).
    structure: bool = True
    language_model: str = ""  # --language-model: the identifier of the pages' languages
    drop_headline: bool = False  # --drop-headline: pass 2 writes the text without it
    favor: Favor = Favor.BALANCED  # --favor: the operating point pass 2 cleans with


@dataclass
class _Walked:
    """What one input's walk found."""

    counts: dict[tuple[str, int], tuple[int, int]]  # (pages, characters) by (language, half)
    scores: dict[str, list[float]] | None  # perplexities by language, when scored in the walk


@dataclass(frozen=True)
class _TrainJob:
    spill_dir: str
    language: str
    half: int
    model: str
    units: str = ""  # where the training text's units go to be scored (""; not kept)


@dataclass(frozen=True)
class _CrossScoreJob:
    units: str  # the units of one language and half's texts (:mod:`.unitstore`)
    model: str  # the model of the language trained on the other half
    max_line: float | None  # --max-line-perplexity: lines above it do not count


def cleaned_store_path(work_dir: Path, file_id: int) -> Path:
    """Where the stage keeps an input's cleaned pages (see :mod:`.cleaned`)."""
    return work_dir / "lm" / "cleaned" / f"f{file_id:06d}.cleaned"


def _spill_file(spill_dir: str, language: str, half: int, file_id: int) -> Path:
    return Path(spill_dir) / f"{language}.{half}" / f"f{file_id:06d}.texts"


def _spill_texts(job: _TextJob, report: Callable[[int, int], None] | None = None) -> _Walked:
    """One input's pages cleaned into its store of cleaned pages and, when its language is
    known, each text into the spill file of its language and half; scored and signed for the
    duplicate stage too when ``job`` says so."""
    keyer = SiteKeyer(job.site_key)
    profiles = (ProfileReader(Path(job.profiles_dir), job.partitions)
                if job.profiles_dir else None)
    walk = _Walk(job)
    batch: list[tuple[PageEntry, str, SiteProfile | None]] = []
    try:
        with CleanedStoreWriter(Path(job.cleaned), job.lean) as kept, walk:
            for entry in iter_page_store(Path(job.store)):
                site = keyer(entry.url)
                batch.append((entry, site, profiles.get(site) if profiles is not None and site
                              else None))
                if len(batch) == SIGN_BATCH:
                    walk.add(batch, kept)
                    batch.clear()
            walk.add(batch, kept)
    finally:
        if profiles is not None:
            profiles.close()
    if walk.scores is not None:
        walk.scores.write(Path(job.scores))
    if job.pages:  # no perplexity yet: the training units' scores fill them in (prepare_lm)
        write_scores(Path(job.scores), walk.ordinals, [None] * len(walk.ordinals),
                     walk.languages, walk.halves)
    return _Walked(walk.counts, walk.scores.found if walk.scores is not None else None)


class _Walk:
    """The pages of one input a batch at a time (:data:`SIGN_BATCH`, the duplicate stage's):
    what their templates remove is found for the batch at once
    (:func:`~warcdeboil.dedup.stage.doomed_of`, the same as
    :func:`~warcdeboil.page.dom.find_doomed` a page at a time) and serves both the cleaning
    and, when asked, the duplicate stage's signatures. A context manager: its exit closes the spill
    files and the signatures."""

    def __init__(self, job: _TextJob) -> None:
        self.job = job
        self.counts: dict[tuple[str, int], tuple[int, int]] = {}
        self.writers: dict[tuple[str, int], Any] = {}
        self.scores = _Scores(job.score) if job.score is not None else None
        self.signer = (SignatureWriter(Path(job.sign.directory), job.sign.part)
                       if job.sign is not None else None)
        # Each page's ordinal, language and half (-1: no language), with job.pages.
        self.ordinals: list[int] = []
        self.languages: list[str] = []
        self.halves: list[int] = []

    def __enter__(self) -> _Walk:
        return self

    def __exit__(self, exc_type: object, *_: object) -> None:
        """Close the spill files, and the signatures (under their final names only on
        success)."""
        for writer in self.writers.values():
            writer.close()
        self.writers.clear()
        if self.signer is not None:
            self.signer.__exit__(exc_type)
            self.signer = None

    def add(self, batch: list[tuple[PageEntry, str, SiteProfile | None]],
            kept: CleanedStoreWriter) -> None:
        if not batch:
            return
        doomed = doomed_of(batch)
        if self.signer is not None:
            sign_batch(batch, self.signer, doomed)
        for (entry, _, profile), known in zip(batch, doomed, strict=True):
            analysed = entry.page
            if analysed.structured and not self.job.structure:
                analysed = without_structure(analysed)  # its template's cuts are found again
            cleaning = clean_page(analysed, profile, self.job.mode,
                                  known if analysed is entry.page else None, entry.url,
                                  drop_headline=self.job.drop_headline, favor=self.job.favor)
            language, confidence = identify(cleaning.cleaned.text, self.job.language_model)
            page: Cleaned = (entry.ordinal, entry.url, *cleaning, language, confidence)
            kept.add(page)
            if self.scores is not None:
                self.scores.add(page)
            half = self._spill(entry.url, cleaning.cleaned.text, language) if language else -1
            if self.job.pages:
                self.ordinals.append(entry.ordinal)
                self.languages.append(language)
                self.halves.append(half)

    def _spill(self, url: str, text: str, language: str) -> int:
        """Count the text and, for training (--lm auto), write it to its spill file; its half
        of the pages."""
        key = (language, url_half(url))
        pages, chars = self.counts.get(key, (0, 0))
        self.counts[key] = (pages + 1, chars + len(text))
        if not self.job.spill:
            return key[1]
        writer = self.writers.get(key)
        if writer is None:
            path = _spill_file(self.job.spill_dir, *key, self.job.file_id)
            path.parent.mkdir(parents=True, exist_ok=True)
            # Not compressed: the file is read once, at once, and deleted (zstd's level 1 cost
            # 0.3 % of a dragnet run to write and read back, for half the disk).
            writer = self.writers[key] = open(path, "wb", buffering=1 << 16)  # noqa: SIM115
        blob = text.encode("utf-8", "surrogatepass")
        writer.write(_FRAME.pack(len(blob)))
        writer.write(blob)
        return key[1]


def _read_spill(path: Path) -> Iterator[str]:
    """The texts of one spill file, in the order they were written."""
    try:
        with open(path, "rb", buffering=1 << 16) as fh:
            while head := fh.read(_FRAME.size):
                (size,) = _FRAME.unpack(head)
                blob = fh.read(size)
                if len(blob) < size:
                    raise WorkDirError(f"{path}: truncated text spill")
                yield blob.decode("utf-8", "surrogatepass")
    except (OSError, struct.error, UnicodeDecodeError) as exc:
        raise WorkDirError(f"{path}: unreadable text spill ({exc})") from exc


def _texts_of(spill_dir: str, language: str, half: int) -> Iterator[str]:
    """Every input's texts of one language and half, inputs in their order."""
    for path in sorted((Path(spill_dir) / f"{language}.{half}").glob("f*.texts")):
        yield from _read_spill(path)


def train_run_model(texts: Iterable[str],
                    keep: Callable[[list[str], np.ndarray], None] | None = None,
                    ) -> LanguageModel:
    """A model of the run's own text (``--lm auto``, both engines): the word model alone. A run
    scores pages and lines with the word model only; the character model and the noise
    calibration serve ``line_noise_scores``, which no run calls, and cost a third of a model's
    training (and one text in ``noise.HOLD_OUT_EVERY`` held out of the word counts).
    ``keep``: given each chunk's units as counted (``NgramCounts``)."""
    from . import LanguageModel

    return LanguageModel.train(texts, chars=False, keep=keep)


def _train(job: _TrainJob, report: Callable[[int, int], None] | None = None) -> str:
    texts = _texts_of(job.spill_dir, job.language, job.half)
    if not job.units:
        train_run_model(texts).save(job.model)
        return job.model
    with UnitStoreWriter(Path(job.units)) as kept:
        model = train_run_model(kept.texts(texts), kept.add)
    model.save(job.model)
    return job.model


def _cross_score(job: _CrossScoreJob, report: Callable[[int, int], None] | None = None,
                 ) -> np.ndarray:
    """The perplexity (NaN: none) of each text of one language and half, in their order, under
    the model of the other half: what pass 2's ``PageScorer`` gives its page, bit for bit (the
    same rows, log10 p, sums by line and ``page_perplexity``), from the units its training kept
    (:mod:`.unitstore`), a chunk at a time."""
    import numpy as np

    model = load_model(job.model)
    lines = text_lines(Path(job.units))
    ends = np.cumsum(lines).tolist()
    values = np.full(len(lines), np.nan)
    sums = np.empty(0)
    counts = np.empty(0, np.int64)
    done = 0  # lines before those in sums and counts
    text = 0
    for names, numbers in iter_unit_chunks(Path(job.units)):
        chunk_sums, chunk_counts = model.rows_log10_probs(model.rows_of_units(names)[numbers])
        sums = np.concatenate([sums, chunk_sums]) if len(sums) else chunk_sums
        counts = np.concatenate([counts, chunk_counts]) if len(counts) else chunk_counts
        start = 0
        while text < len(ends) and ends[text] - done <= len(sums):
            end = ends[text] - done
            value = page_perplexity(sums[start:end], counts[start:end], job.max_line)
            if value is not None:
                values[text] = value
            start = end
            text += 1
        sums, counts, done = sums[start:], counts[start:], done + start
    if text < len(ends) or len(sums):
        raise WorkDirError(f"{job.units}: its units do not match its texts' lines")
    return values


class _Scores:
    """Pages scored a batch at a time as pass 2 would (``PageScorer.score_many``, the line
    filter included): each page's perplexity and language in order, for :func:`write_scores`,
    and the perplexities by language (``found``: pages with both)."""

    def __init__(self, settings: LmSettings) -> None:
        # No percentiles yet (limits empty, not None): pages are still routed by language.
        self.scorer = PageScorer(replace(settings, limits=()))
        self.pending: list[Cleaned] = []
        self.ordinals: list[int] = []
        self.values: list[float | None] = []
        self.languages: list[str] = []
        self.found: dict[str, list[float]] = {}

    def add(self, page: Cleaned) -> None:
        self.pending.append(page)
        if len(self.pending) >= _BATCH_PAGES:
            self.flush()

    def flush(self) -> None:
        batch = self.pending
        if not batch:
            return
        scores = self.scorer.score_many([(page[2], page[3]) for page in batch],
                                        [page[1] for page in batch], [page[5] for page in batch])
        for page, score in zip(batch, scores, strict=True):
            self.ordinals.append(page[0])
            self.values.append(score.perplexity)
            self.languages.append(page[5])
            if score.perplexity is not None and page[5]:
                self.found.setdefault(page[5], []).append(score.perplexity)
        batch.clear()

    def write(self, path: Path) -> None:
        """The pages scored, every batch flushed, into ``path`` (:func:`write_scores`)."""
        self.flush()
        write_scores(path, self.ordinals, self.values, self.languages)


def scores_path(work_dir: Path, file_id: int) -> Path:
    """Where the stage keeps the perplexity of each page of an input, for pass 2."""
    return work_dir / "lm" / "scores" / f"f{file_id:06d}.npz"


def write_scores(path: Path, ordinals: list[int], values: list[float | None] | np.ndarray,
                 languages: list[str] | np.ndarray, halves: list[int] | None = None) -> None:
    """Each page's ordinal, perplexity (NaN: no score) and language, as numpy arrays; with
    ``halves``, its half of the pages too (-1: no language), for :func:`_fill_scores`."""
    import numpy as np

    path.parent.mkdir(parents=True, exist_ok=True)
    perplexities = (values if isinstance(values, np.ndarray)
                    else np.array([np.nan if v is None else v for v in values], np.float64))
    arrays = {"ordinals": np.array(ordinals, np.int64), "perplexities": perplexities,
              "languages": np.array(languages, dtype=str)}
    if halves is not None:
        arrays["halves"] = np.array(halves, np.int8)
    with open(path, "wb") as fh:
        np.savez(fh, **arrays)  # type: ignore[arg-type]


def _fill_scores(path: Path, scored: dict[tuple[str, int], Iterator[float]],
                 found: dict[str, list[float]]) -> None:
    """An input's page scores (:func:`write_scores` with halves and no perplexity yet) filled
    in from each language and half's scores in page order (``scored``: every input's, in
    input order, consumed as far as this one's pages go); the scores added to ``found`` by
    language."""
    import numpy as np

    try:
        with open(path, "rb") as fh, np.load(fh, allow_pickle=False) as data:
            ordinals, languages = data["ordinals"], data["languages"]
            halves = data["halves"]
    except (OSError, KeyError, ValueError) as exc:
        raise WorkDirError(f"{path}: unreadable page scores ({exc})") from exc
    values = np.full(len(ordinals), np.nan)
    for (language, half), source in scored.items():
        mine = np.flatnonzero((languages == language) & (halves == half))
        taken = np.fromiter(source, np.float64, count=len(mine))
        values[mine] = taken
        known = taken[~np.isnan(taken)]
        if len(known):
            found.setdefault(language, []).extend(known.tolist())
    write_scores(path, ordinals.tolist(), values, languages)


def read_scores(path: Path) -> Iterator[tuple[int, float | None, str]]:
    """What :func:`write_scores` wrote, a page at a time."""
    import numpy as np

    try:
        with open(path, "rb") as fh, np.load(fh, allow_pickle=False) as data:
            ordinals = data["ordinals"].tolist()
            values = data["perplexities"].tolist()
            languages = data["languages"].tolist()
    except (OSError, KeyError, ValueError) as exc:
        raise WorkDirError(f"{path}: unreadable page scores ({exc})") from exc
    for ordinal, value, language in zip(ordinals, values, languages, strict=True):
        yield int(ordinal), None if math.isnan(value) else value, str(language)


def percentile_limits(scores: Sequence[float]) -> tuple[float, float]:
    """The upper limits of head and middle: the scores at the 30th and 60th percentiles, each
    the smallest score at or below which at least that share of the scores lie (numpy's
    ``inverted_cdf``): of n pages, the ceil(0.3 n) lowest are head (more only on ties).

    >>> percentile_limits([5.0, 1.0, 4.0, 2.0, 3.0, 6.0, 7.0, 8.0, 9.0, 10.0])
    (3.0, 6.0)
    """
    ordered = sorted(scores)
    head, middle = percentile_ranks(len(ordered))
    return ordered[head], ordered[middle]


def percentile_ranks(n: int) -> tuple[int, int]:
    """Where, among ``n`` scores in ascending order, :func:`percentile_limits` finds its two
    limits (0-based): what the Spark engine fetches, so that no score per page is collected.

    >>> percentile_ranks(10), percentile_ranks(1)
    ((2, 5), (0, 0))
    """
    return (max(0, (HEAD_PERCENTILE * n + 99) // 100 - 1),
            max(0, (MIDDLE_PERCENTILE * n + 99) // 100 - 1))


def prepare_lm(
    settings: LmSettings,
    stores: Sequence[Path],
    work_dir: Path,
    profiles_dir: Path | None,
    partitions: int,
    site_key: SiteKeyMode,
    mode: Mode,
    workers: int,
    run_jobs: Callable[..., list[Any]],
    sign: Sequence[SignJob] | None = None,
    blocks: bool = True,
    structure: bool = True,
    drop_headline: bool = False,
    favor: Favor = Favor.BALANCED,
) -> tuple[LmSettings, LmStats]:
    """The run's models (``--lm auto``) and each language's percentiles (buckets), from the
    page stores of pass 1; the settings pass 2 is to use. ``run_jobs(func, jobs, workers,
    on_done, stage=, name=)`` runs jobs as the pipeline does (a pool of processes).

    ``sign`` (one per store, for the same profiles, partitions and site key): the duplicate
    stage's signing, done by the same walk of each page store; the stage then only decides.
    ``blocks`` False: pass 2 reads only the text and kind of the pages' blocks (not Markdown
    output), which is then all their store keeps. ``structure`` False: the output reads its
    pages without structure marks (template-mode text), and so does their cleaning here.
    ``drop_headline``, ``favor``: the pages are cleaned without their headline, at the operating
    point, as pass 2 writes them."""
    lm_dir = work_dir / "lm"
    shutil.rmtree(lm_dir, ignore_errors=True)
    spill_dir = lm_dir / "texts"
    models_dir = lm_dir / "models"
    models_dir.mkdir(parents=True)
    # With a given model, pages are scored as they are cleaned (not read back to be scored).
    score_now = settings.bucketed and not settings.auto
    # With --lm auto, from the units the training split them into: for buckets, and for pass 2
    # unless it needs each line's score (it then scores the pages itself).
    cross = settings.auto and (settings.bucketed or not settings.needs_lines)
    jobs = [_TextJob(str(store), str(cleaned_store_path(work_dir, i)), settings.auto,
                     str(spill_dir), i,
                     str(profiles_dir) if profiles_dir else None, partitions, site_key, mode,
                     settings if score_now else None, str(scores_path(work_dir, i)),
                     sign[i] if sign is not None else None, cross, not blocks, structure,
                     settings.language_model, drop_headline, favor)
            for i, store in enumerate(stores)]
    walked = run_jobs(_spill_texts, jobs, workers, lambda _: None, stage="lm texts",
                      name=lambda job: job.store)
    totals: dict[tuple[str, int], tuple[int, int]] = {}
    for done in walked:
        for key, (pages, chars) in done.counts.items():
            before = totals.get(key, (0, 0))
            totals[key] = (before[0] + pages, before[1] + chars)
    languages = sorted({language for language, _ in totals})
    stats = LmStats({lang: sum(totals.get((lang, h), (0, 0))[0] for h in (0, 1))
                     for lang in languages},
                    {lang: sum(totals.get((lang, h), (0, 0))[1] for h in (0, 1))
                     for lang in languages}, [])
    if settings.auto:
        stats.trained = [lang for lang in languages if all(
            totals.get((lang, h), (0, 0))[1] >= MIN_TRAINING_CHARS for h in (0, 1))]
        units_dir = lm_dir / "units"
        train = [_TrainJob(str(spill_dir), lang, h, str(models_dir / f"{lang}.{h}.lm"),
                           str(units_dir / f"{lang}.{h}.units") if cross else "")
                 for lang in stats.trained for h in (0, 1)]
        run_jobs(_train, train, workers, lambda _: None, stage="lm train",
                 name=lambda job: f"{job.language} (half {job.half})")
        settings = replace(settings, trained=tuple(
            (job.language, job.half, job.model) for job in train))
        log.info("language models trained: %s", ", ".join(stats.trained) or "none")
    by_language: dict[str, list[float]] = {}
    if cross:
        # Each half's texts scored by the other half's model, from the units its training kept.
        score_jobs = [_CrossScoreJob(job.units, str(models_dir / f"{job.language}.{1 - job.half}"
                                                    ".lm"), settings.max_line) for job in train]
        done = run_jobs(_cross_score, score_jobs, workers, lambda _: None, stage="lm score",
                        name=lambda job: job.units)
        scored = {(job.language, job.half): iter(values.tolist())
                  for job, values in zip(train, done, strict=True)}
        for i in range(len(stores)):
            _fill_scores(scores_path(work_dir, i), scored, by_language)
        if any(next(values, None) is not None for values in scored.values()):
            raise WorkDirError(f"{lm_dir}: more page scores than pages: delete the work "
                               "directory")
        shutil.rmtree(units_dir, ignore_errors=True)
    elif score_now:
        for done_walk in walked:
            for language, values in (done_walk.scores or {}).items():
                by_language.setdefault(language, []).extend(values)
    if settings.bucketed:
        settings = replace(settings, limits=tuple(
            (language, *percentile_limits(values))
            for language, values in sorted(by_language.items()) if values))
    shutil.rmtree(spill_dir, ignore_errors=True)
    if not settings.auto:
        shutil.rmtree(models_dir, ignore_errors=True)
    return settings, stats
