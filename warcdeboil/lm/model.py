"""``LanguageModel``: an n-gram model in backoff form, trained here or read from an ARPA file,
that scores text by perplexity, a line at a time.

Every table is a sorted numpy array of 64-bit n-gram keys (``units.extend_keys``), so scoring a
batch of lines is a few binary searches an order, with no Python loop over words.
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import repeat
from pathlib import Path
from typing import Any

import numpy as np

from warcdeboil.errors import ConfigError, InputError

from .chars import (
    DEFAULT_CHAR_CAPACITY,
    DEFAULT_CHAR_MIN_COUNTS,
    DEFAULT_CHAR_ORDER,
    DEFAULT_CHAR_SAMPLE,
    char_text,
)
from .counts import DEFAULT_CAPACITY, DEFAULT_VOCABULARY, NgramCounts
from .dense import DenseLevels
from .kneserney import Level, estimate
from .noise import (
    CALIBRATION_LINES,
    HOLD_OUT_EVERY,
    MIN_CALIBRATION_LINES,
    Calibration,
    Scan,
    filter_scores,
    line_signals,
)
from .points import CharUnits, Found, WordUnits, code_points
from .units import BOUNDARY, LINE, UNK, distinct_ids, extend_keys, folded_numbers, marks

__all__ = ["DEFAULT_MIN_COUNTS", "DEFAULT_ORDER", "LanguageModel"]

FORMAT = "warcdeboil-lm"
# 7: the noise calibration reads no common words too (``noise.CALIBRATED``, ``noise.TESTS``);
# 6: context with a spread of at least 0.3 and rare and odd unseen words; 5: eight signals
# (rare and unseen words); 4: seven signals and four tests; 3: unigram frequencies and the noise
# score's calibration (``noise``, five signals) may follow; 2: a character component may follow
# the word model. 1 to 6 are read too (a version 3 to 6 calibration scores as it did:
# ``noise.LEGACY``, ``noise.VERSION_4`` to ``noise.VERSION_6``).
VERSION = 7
DEFAULT_ORDER = 3
# Adjusted counts below which n-grams of order 1, 2, 3… are pruned: singletons above unigrams
# go (benchmarks/perplexity.py: the same AUC on every noise kind, a third of the size).
DEFAULT_MIN_COUNTS = (1, 2, 2)
# The noise score of a model without a calibration (``noise``: ARPA files, models of version 2 or
# trained on too little text): a logistic of what the models say of it, fitted on the dev split of
# benchmarks/perplexity.py (its real sentences against seven kinds of noise, each kind weighing
# as much as the real lines; the test split never seen). Features: the word model's log10
# perplexity, the share of its units below 1e-3, and with a character component its log10
# perplexity and the surprise (-log10 p) of its least likely character.
NOISE_WEIGHTS = (1.284, 5.413, 2.878, 0.855)
NOISE_BIAS = -11.375
# The same fitted on the word features alone: for models without characters (ARPA files).
WORD_NOISE_WEIGHTS = (2.086, 2.906)
WORD_NOISE_BIAS = -7.745


class LanguageModel:
    """An n-gram language model: ``train`` it on text, ``load`` it (its own file or ARPA),
    ``perplexity`` of a text, ``line_perplexities`` of each of its lines.

    >>> model = LanguageModel.train(["the cat sat on the mat"] * 3 + ["the dog sat"])
    >>> model.perplexity("the cat sat") < model.perplexity("mat the on sat")
    True
    """

    def __init__(self, levels: list[Level], vocabulary: Sequence[str] | None = None,
                 info: dict[str, Any] | None = None, chars: LanguageModel | None = None,
                 frequencies: np.ndarray | None = None,
                 calibration: Calibration | None = None) -> None:
        self.levels = levels
        self.chars = chars  # the character component (``chars.char_text`` units), if any
        # log10 of each unigram's share of the training units (by row), when known.
        self._frequencies = frequencies
        self.calibration = calibration  # held-out lines' noise signals (``noise``), if any
        self._vocabulary = vocabulary
        self.info = dict(info or {})
        at, found = levels[0].rows(np.array([UNK], np.uint64))
        if not found[0]:
            raise InputError("language model without an <unk> unigram")
        self._unk_row = int(at[0])
        self._index: dict[str, int] | None = None  # unit -> unigram row, made on first use
        self._marks: np.ndarray | None = None  # see ``mark_rows``
        self._common: np.ndarray | None = None  # see ``common_rows``
        # Made on first use (False: not yet; None: not used): the units found on code points
        # (``points``; as a character component, ``char_rows``'s), and the tables of lookups
        # by rows (``dense``; None: too large, by keys).
        self._words: WordUnits | None | bool = False
        self._chars: CharUnits | None | bool = False
        self._dense: DenseLevels | None | bool = False
        self._language: str | None = None  # see ``language``

    @property
    def order(self) -> int:
        return len(self.levels)

    @property
    def vocabulary(self) -> Sequence[str]:
        """The units, by unigram row ("</s>" for the line boundary)."""
        if self._vocabulary is None:
            raise InputError("this model holds no vocabulary")
        return self._vocabulary

    @property
    def frequencies(self) -> np.ndarray:
        """log10 of each unit's share of the training text, by unigram row; a model read from
        ARPA has none, and its unigram probabilities stand in."""
        if self._frequencies is None:
            return self.levels[0].logp
        return self._frequencies

    @property
    def mark_rows(self) -> np.ndarray:
        """Whether each unigram row's unit is a punctuation mark or symbol (``units.marks``),
        made on first use: the marks' ids looked up, a couple of thousand of them, not the
        vocabulary read."""
        if self._marks is None:
            first = self.levels[0]
            rows, found = first.rows(np.fromiter(distinct_ids(marks()).values(), np.uint64))
            self._marks = np.zeros(len(first), bool)
            self._marks[rows[found]] = True
        return self._marks

    @property
    def common_rows(self) -> np.ndarray:
        """Whether each unigram row's unit is among the language's commonest: the units that,
        most frequent first, together make half of the training text (``frequencies``; "the",
        "of", ",", "." and some 55 more in English), made on first use. Only the most frequent
        few thousand are sorted: they make more than half of any language's text, and
        otherwise the whole vocabulary is."""
        if self._common is None:
            shares = np.power(10.0, self.frequencies.astype(np.float64))
            first = np.arange(len(shares))
            if len(shares) > 4096:
                first = np.argpartition(-shares, 4095)[:4096]
                if shares[first].sum() < 0.5:
                    first = np.arange(len(shares))
            ranked = first[np.argsort(-shares[first], kind="stable")]
            within = int(np.searchsorted(np.cumsum(shares[ranked]), 0.5)) + 1
            self._common = np.zeros(len(shares), bool)
            self._common[ranked[:within]] = True
        return self._common

    def __len__(self) -> int:
        return sum(len(level) for level in self.levels)

    # Training -----------------------------------------------------------------------------

    @classmethod
    def train(cls, texts: Iterable[str], *, order: int = DEFAULT_ORDER,
              capacity: int = DEFAULT_CAPACITY, vocabulary: int = DEFAULT_VOCABULARY,
              min_counts: Sequence[int] | None = None, chars: bool = True,
              char_order: int = DEFAULT_CHAR_ORDER,
              char_sample: int = DEFAULT_CHAR_SAMPLE,
              keep: Callable[[list[str], np.ndarray], None] | None = None) -> LanguageModel:
        """Train on texts (each line a sentence), counts bounded to ``capacity`` n-grams an
        order and ``vocabulary`` units; ``min_counts`` as in ``kneserney.estimate`` (default
        ``DEFAULT_MIN_COUNTS``). With ``chars``, a character model of order ``char_order`` is
        trained beside it on one text in ``char_sample`` (the first one included; its tables
        hold at most ``chars.DEFAULT_CHAR_CAPACITY`` entries), and one
        text in ``noise.HOLD_OUT_EVERY`` is held out of both to calibrate the noise score.
        ``keep``: given the units of each chunk of text as counted (``NgramCounts``).

        ``texts`` is an iterable of texts (a list of strings, a file's lines): one ``str``
        would be read a character at a time, so it is refused.
        """
        if isinstance(texts, str | bytes):
            raise ConfigError(
                f"train takes an iterable of texts, not one {type(texts).__name__}: pass a "
                "list of strings (e.g. [text], or text.splitlines() for one sentence a line)")
        counts = NgramCounts(order, capacity, vocabulary, keep)
        char_capacity = min(capacity, DEFAULT_CHAR_CAPACITY)
        char_counts = NgramCounts(char_order, char_capacity, vocabulary) if chars else None
        held: list[str] | None = [] if chars else None
        counts.add_texts(_feeding(texts, char_counts, max(1, char_sample), held))
        lines = [line for text in held or () for line in text.split("\n") if line.strip()]
        if held and len(lines) < MIN_CALIBRATION_LINES:
            counts.add_texts(held)  # too few to calibrate on: training text after all
            lines = []
        if counts.units_seen == 0:
            raise InputError("no text to train a language model on")
        model = cls._estimate(counts, order, capacity, vocabulary, min_counts)
        if char_counts is not None and char_counts.units_seen:
            model.chars = cls._estimate(char_counts, char_order, char_capacity, vocabulary,
                                        DEFAULT_CHAR_MIN_COUNTS)
            model.info["chars"] = {**model.chars.info, "sample": char_sample}
            if lines:
                signals, units = line_signals(model, "\n".join(lines[:CALIBRATION_LINES]))
                model.calibration = Calibration.fit(signals, units)
                model.info["calibration_lines"] = len(units)
        return model

    @classmethod
    def _estimate(cls, counts: NgramCounts, order: int, capacity: int, vocabulary: int,
                  min_counts: Sequence[int] | None) -> LanguageModel:
        floors = tuple(min_counts) if min_counts is not None else DEFAULT_MIN_COUNTS
        floors = (floors + (floors[-1],) * order)[:order]
        thresholds = [table.threshold for table in counts.tables]
        levels, units, discounts = estimate(counts.tables, floors, counts.snapshot)
        info = {"order": order, "units": counts.units_seen, "capacity": capacity,
                "vocabulary": vocabulary, "min_counts": list(floors),
                "pruned_below": thresholds, "discounts": [list(d) for d in discounts]}
        return cls(levels, units, info, frequencies=_frequencies(counts, levels[0]))

    # Scoring ------------------------------------------------------------------------------

    def log10_probs(self, ids: np.ndarray) -> np.ndarray:
        """log10 p of each unit of an id sequence (``units.token_ids``) given the units before
        it on its line, for positions 1.. (position 0 is the first ``<s>``)."""
        rows, found = self.levels[0].rows(ids)
        return self._log10_probs(np.where(found, rows, self._unk_row))

    def unit_rows(self, text: str, *, keep_empty: bool = False) -> np.ndarray:
        """Unigram rows of the units of ``text``, as ``units.token_ids`` gives their ids: found
        on its code points (``points``: no string a unit), else split into strings, each
        looked up in a dictionary of the vocabulary."""
        found = self.found_units(code_points(text))
        rows = found.rows if found is not None else self._string_rows(text)
        if keep_empty:
            return rows
        boundary = rows == rows[0]
        repeated = np.zeros(len(rows), bool)
        repeated[1:] = boundary[1:] & boundary[:-1]
        kept = rows[~repeated]
        return kept if len(kept) > 1 else rows[:2]  # an empty text is still <s> </s>

    def found_units(self, points: np.ndarray) -> Found | None:
        """The units of the text of ``points`` (``points.WordUnits.find``), or None where they
        must be split as strings."""
        if self._words is False:
            vocabulary = self.vocabulary
            joined = (vocabulary.joined() if isinstance(vocabulary, _LazyVocabulary)
                      else "\n".join(vocabulary))
            self._words = WordUnits(joined, self._unk_row, self._boundary_row())
        return self._words.find(points) if isinstance(self._words, WordUnits) else None

    def found_chars(self, points: np.ndarray) -> np.ndarray | None:
        """``char_rows`` found on the code points, or None where the strings' way is taken."""
        if self._chars is False:
            self._chars = CharUnits(self.vocabulary, self._unk_row, self._boundary_row())
        return self._chars.find(points) if isinstance(self._chars, CharUnits) else None

    def char_rows(self, text: str, points: np.ndarray | None = None) -> np.ndarray:
        """``unit_rows(chars.char_text(text), keep_empty=True)`` of a character component,
        found on the code points (``points``: those of ``text``, when known already)."""
        rows = self.found_chars(code_points(text) if points is None else points)
        return rows if rows is not None else self._string_rows(char_text(text))

    def _string_rows(self, text: str) -> np.ndarray:
        """``unit_rows(keep_empty=True)`` by splitting the text into unit strings, each
        distinct one folded and looked up once (9 % less time than every unit, measured)."""
        distinct, numbers = folded_numbers(text)
        rows = np.empty(len(numbers) + 2, np.int64)
        np.take(self.rows_of_units(distinct), numbers, out=rows[1:-1])
        rows[0] = rows[-1] = self._unit_index()[LINE]
        return rows

    def rows_of_units(self, found: Sequence[str]) -> np.ndarray:
        """The unigram row of each unit of ``found`` (``units.split_units``'): ``LINE`` the
        boundary's, a unit the model does not know ``<unk>``'s."""
        return np.fromiter(map(self._unit_index().get, found, repeat(self._unk_row)), np.int64,
                           count=len(found))

    def _boundary_row(self) -> int:
        """The unigram row of the line boundary (``</s>``)."""
        return int(self.levels[0].rows(np.array([BOUNDARY], np.uint64))[0][0])

    def _unit_index(self) -> dict[str, int]:
        """Unit -> unigram row, made on first use."""
        index = self._index
        if index is None:
            index = self._index = dict(zip(self.vocabulary, range(len(self.vocabulary)),
                                           strict=True))
            boundary = self.levels[0].rows(np.array([BOUNDARY], np.uint64))[0][0]
            index[LINE] = int(boundary)
            index.pop("</s>", None)
            index.pop("<unk>", None)
        return index

    def _log10_probs(self, rows: np.ndarray) -> np.ndarray:
        dense = self._dense
        if dense is False:
            usable = DenseLevels.usable(self.levels)
            dense = self._dense = DenseLevels(usable, self.frequencies) if usable else None
        if isinstance(dense, DenseLevels):
            return dense.log10_probs(rows)
        # Rows are in range by construction: gathers with np.take in "clip" mode, twice as
        # fast as checked indexing.
        first = self.levels[0]
        ids = np.take(first.keys, rows, mode="clip")
        result = np.take(first.logp, rows[1:], mode="clip").astype(np.float64)
        if self.order == 1:
            return result
        positions = np.arange(len(ids))
        last_boundary = np.maximum.accumulate(np.where(ids == BOUNDARY, positions, 0))
        since = positions[1:] - last_boundary[:-1]  # units since the boundary before each one
        keys, below, below_rows, below_found = ids, first, rows, np.ones(len(ids), bool)
        for k in range(2, self.order + 1):
            level = self.levels[k - 1]
            if not len(level):
                break  # nothing kept of this order (nor of the longer ones)
            longer = np.zeros(len(ids), np.uint64)
            longer[1:] = extend_keys(keys[:-1], ids[1:])
            at, hit = level.rows(longer)
            valid = since >= k - 1
            hit[1:] &= valid
            hit[0] = False
            # Not found: back off through the context's weight (0 when it is no context).
            context_bow = np.where(below_found[:-1],
                                   np.take(below.bow, below_rows[:-1], mode="clip"), 0.0)
            result = np.where(hit[1:], np.take(level.logp, at[1:], mode="clip"),
                              np.where(valid, result + context_bow, result))
            keys, below, below_rows, below_found = longer, level, at, hit
        return result

    def line_log10_probs(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """Per line of ``text`` (split at ``\\n``, empty lines included): the sum of log10 p
        and the number of units predicted (its units and ``</s>``)."""
        return self.rows_log10_probs(self.unit_rows(text, keep_empty=True))

    def rows_log10_probs(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``line_log10_probs`` of a text given as its unigram rows (``unit_rows`` with
        ``keep_empty``: a boundary's row first, last and for each line break)."""
        logp = self._log10_probs(rows)
        line = np.cumsum(rows[:-1] == rows[0]) - 1  # the line of each predicted unit
        lines = int(line[-1]) + 1 if len(line) else 0
        return (np.bincount(line, weights=logp, minlength=lines),
                np.bincount(line, minlength=lines))

    def line_perplexities(self, lines: str | Iterable[str]) -> list[float | None]:
        """The perplexity of each line (``10 ** -(sum of log10 p / units)``, ``</s>`` counted,
        as KenLM and pyplexity report it); None for a line with nothing to score (no unit:
        empty or blank), as JSONL's ``line_perplexities`` gives null."""
        text = lines if isinstance(lines, str) else "\n".join(lines)
        sums, counts = self.line_log10_probs(text)
        scores = np.power(10.0, -sums / counts).tolist()
        return [score if spoken else None
                for score, spoken in zip(scores, (counts > 1).tolist(), strict=True)]

    def perplexity(self, text: str) -> float | None:
        """The perplexity of a whole text, its lines taken as sentences (its empty lines count
        as nothing); None for a text with nothing to score (no unit), as JSONL's ``perplexity``
        gives null for a page without one."""
        return self.perplexities([text])[0]

    def perplexities(self, texts: Sequence[str]) -> list[float | None]:
        """``perplexity`` of each text, scored together: one pass of numpy over them all, which
        costs less per word than a pass a text (``benchmarks/perplexity.py``)."""
        if isinstance(texts, str):
            raise ConfigError("perplexities takes a sequence of texts, not one str: use "
                              "perplexity(text) for one text")
        if not texts:
            return []
        sums, counts = self.line_log10_probs("\n".join(texts))
        lines = np.array([text.count("\n") + 1 for text in texts])
        text_of_line = np.repeat(np.arange(len(texts)), lines)
        spoken = counts > 1  # an empty line is </s> alone: it counts as nothing
        total = np.bincount(text_of_line, weights=np.where(spoken, sums, 0.0),
                            minlength=len(texts))
        units = np.bincount(text_of_line, weights=np.where(spoken, counts, 0),
                            minlength=len(texts))
        silent = units == 0  # nothing to score
        scores = np.power(10.0, -total / np.where(silent, 1, units)).tolist()
        return [None if none else score
                for score, none in zip(scores, silent.tolist(), strict=True)]

    def line_features(self, text: str) -> np.ndarray:
        """Per line of ``text``: its log10 perplexity, the share of its predicted units (``</s>``
        included) with p below 1e-3, and the surprise (-log10 p) of its least likely unit."""
        rows = self.unit_rows(text, keep_empty=True)
        logp = self._log10_probs(rows)
        line = np.cumsum(rows[:-1] == rows[0]) - 1
        lines = int(line[-1]) + 1 if len(line) else 0
        units = np.bincount(line, minlength=lines)
        worst = np.zeros(lines)
        np.minimum.at(worst, line, logp)  # every line predicts its </s> at least
        return np.column_stack([-np.bincount(line, weights=logp, minlength=lines) / units,
                                np.bincount(line, weights=logp < -3.0, minlength=lines) / units,
                                -worst])

    @property
    def language(self) -> str:
        """The language of the model's text, as ``page.language.identify`` reads its
        commonest words (the 200 most frequent units that are not marks nor digits); ``""``
        when unsure. Found on first use."""
        if self._language is None:
            from warcdeboil.page.language import identify

            shares = np.where(self.mark_rows, -np.inf, self.frequencies)
            top = np.argpartition(-shares, min(999, len(shares) - 1))[:1000]
            ranked = top[np.argsort(-shares[top], kind="stable")].tolist()
            vocabulary = self.vocabulary
            found = (vocabulary.pick(ranked) if isinstance(vocabulary, _LazyVocabulary)
                     else [vocabulary[row] for row in ranked])
            words = [unit for unit, row in zip(found, ranked, strict=True)
                     if not self.mark_rows[row] and unit not in ("</s>", "<unk>")
                     and not unit.isdigit()][:200]
            self._language = identify(" ".join(words)).language
        return self._language

    @property
    def calibrated(self) -> bool:
        """Whether the noise score measures lines against held-out lines of the model's own
        training text (``line_noise_scores``), rather than by the fixed logistic."""
        return self.calibration is not None and self.chars is not None

    def line_noise_scores(self, lines: str | Iterable[str]) -> list[float]:
        """How likely each line is crawl noise rather than a sentence, from 0 to 1. A model
        trained here measures it against lines held out of its own training text: one minus
        the share of them at least as extreme on the line's most telling test, each a sum of
        signals' surprises (``noise``; a version 3 file: its most telling of five signals).
        A model without that calibration (ARPA, older files, tiny corpora) uses a logistic of
        the word model's features and, when it has one, the character model's
        (``NOISE_WEIGHTS``)."""
        text = lines if isinstance(lines, str) else "\n".join(lines)
        return self.noise_of(self.scan(text)).tolist()

    def scan(self, text: str) -> Scan:
        """The units of ``text`` and their log10 p (``log10_probs``' of ``unit_rows`` with
        empty lines kept): what ``line_log10_probs`` and ``line_noise_scores`` read."""
        points = code_points(text)
        found = self.found_units(points)
        rows = found.rows if found is not None else self._string_rows(text)
        return Scan(text, points, found, rows, self._log10_probs(rows))

    def line_scores(self, text: str, limit: float | None = None,
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``line_log10_probs`` and ``line_noise_scores`` of ``text`` together, its units
        found and scored once (pass 2 with the noise filter). ``limit``: only whether each
        line scores above it is needed (a calibrated model then scores in full only the
        lines that may be near it: ``noise.filter_scores``)."""
        scan = self.scan(text)
        line = np.cumsum(scan.rows[:-1] == scan.rows[0]) - 1
        lines = int(line[-1]) + 1 if len(line) else 0
        noise = (filter_scores(self, scan, limit) if limit is not None and self.calibrated
                 else self.noise_of(scan))
        return (np.bincount(line, weights=scan.logp, minlength=lines),
                np.bincount(line, minlength=lines), noise)

    def noise_of(self, scan: Scan) -> np.ndarray:
        """``line_noise_scores`` of the text of ``scan``."""
        text = scan.text
        if self.calibrated:
            assert self.calibration is not None
            signals, units = line_signals(self, text, scan)
            return self.calibration.scores(signals, units)
        words = self.line_features(text)[:, :2]
        if self.chars is None:
            logit = words @ np.array(WORD_NOISE_WEIGHTS) + WORD_NOISE_BIAS
        else:
            chars = self.chars.line_features(char_text(text))[:, [0, 2]]
            logit = np.hstack([words, chars]) @ np.array(NOISE_WEIGHTS) + NOISE_BIAS
        return 1.0 / (1.0 + np.exp(-logit))

    # Files --------------------------------------------------------------------------------

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the model: an uncompressed numpy archive (fast to load); the character
        component's arrays follow the word model's, their names prefixed with "chars."."""
        meta = {"format": FORMAT, "version": VERSION, "order": self.order, "info": self.info}
        if self.chars is not None:
            meta["chars_order"] = self.chars.order
        arrays = {"meta": np.frombuffer(json.dumps(meta).encode(), np.uint8),
                  **self._arrays("")}
        if self.chars is not None:
            arrays.update(self.chars._arrays("chars."))
        if self.calibration is not None:
            arrays.update(self.calibration.arrays("noise."))
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)  # type: ignore[arg-type]
        tmp = Path(f"{os.fspath(path)}.tmp")
        tmp.write_bytes(buffer.getvalue())
        tmp.replace(path)

    def _arrays(self, prefix: str) -> dict[str, np.ndarray]:
        arrays = {"vocabulary": np.frombuffer("\n".join(self.vocabulary).encode(
            "utf-8", "surrogatepass"), np.uint8), "ids": self.levels[0].keys}
        for k, level in enumerate(self.levels, 1):
            arrays[f"logp{k}"], arrays[f"bow{k}"] = level.logp, level.bow
            if k > 1:
                arrays[f"contexts{k}"], arrays[f"words{k}"] = level.contexts, level.words
        if self._frequencies is not None:
            arrays["frequencies"] = self._frequencies
        return {prefix + name: array for name, array in arrays.items()}

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> LanguageModel:
        """Read a model written by ``save``, or an ARPA file (plain or .gz: KenLM, SRILM)."""
        with open(path, "rb") as fh:
            head = fh.read(4)
        if head[:2] != b"PK":
            from .arpa import read_arpa

            return cls(*read_arpa(path))
        try:
            with open(path, "rb") as fh, np.load(fh, allow_pickle=False) as data:
                meta = json.loads(bytes(data["meta"]).decode())
                if meta.get("format") != FORMAT or meta.get("version") not in range(1, VERSION + 1):
                    raise InputError(f"{os.fspath(path)}: not a warcdeboil language model")
                model = cls._read(path, data, "", meta["order"], meta.get("info"))
                if meta.get("chars_order"):
                    model.chars = cls._read(path, data, "chars.", meta["chars_order"],
                                            (meta.get("info") or {}).get("chars"))
                if "noise.long" in data.files:
                    model.calibration = Calibration.read(data, "noise.", meta["version"])
        except (OSError, KeyError, ValueError, zipfile.BadZipFile) as exc:
            raise InputError(f"{os.fspath(path)}: not a readable language model ({exc})") from exc
        return model

    @classmethod
    def _read(cls, path: str | os.PathLike[str], data: Any, prefix: str, order: int,
              info: dict[str, Any] | None) -> LanguageModel:
        ids = data[f"{prefix}ids"]
        levels = [Level(ids, data[f"{prefix}logp1"], data[f"{prefix}bow1"],
                        np.full(len(ids), -1, np.int32), np.arange(len(ids)))]
        for k in range(2, order + 1):
            contexts, words = data[f"{prefix}contexts{k}"], data[f"{prefix}words{k}"]
            keys = extend_keys(levels[-1].keys[contexts], ids[words])
            levels.append(Level(keys, data[f"{prefix}logp{k}"], data[f"{prefix}bow{k}"],
                                contexts, words))
        for k, level in enumerate(levels, 1):
            if len(level.keys) > 1 and not bool(np.all(level.keys[1:] > level.keys[:-1])):
                raise InputError(f"{os.fspath(path)}: damaged language model "
                                 f"({prefix or 'words.'}order {k})")
        frequencies = None
        if f"{prefix}frequencies" in data.files:
            frequencies = data[f"{prefix}frequencies"]
            if len(frequencies) != len(ids):
                raise InputError(f"{os.fspath(path)}: damaged language model "
                                 f"({prefix or 'words.'}frequencies)")
        return cls(levels, _LazyVocabulary(bytes(data[f"{prefix}vocabulary"])), info,
                   frequencies=frequencies)


def _frequencies(counts: NgramCounts, unigrams: Level) -> np.ndarray:
    """log10 of each unigram's share of the counted units, by row; ``<unk>`` (and any unit
    the bounded vocabulary dropped) as if seen half a time."""
    table = counts.tables[0]
    total = max(float(table.counts.sum()), 1.0)
    found = np.full(len(unigrams), np.log10(0.5 / total), np.float32)
    rows, hit = unigrams.rows(table.keys)
    found[rows[hit]] = np.log10(table.counts[hit] / total)
    return found


LONG_TEXT = 100_000  # characters: longer texts are held out a line at a time (see _feeding)


def _feeding(texts: Iterable[str], char_counts: NgramCounts | None, sample: int,
             held: list[str] | None = None) -> Iterator[str]:
    """The texts, passed on; one in ``sample`` is also counted by ``char_counts`` as
    characters, gathered into chunks of about 4 M characters (numpy works a chunk at a time).
    With ``held``, one text in ``noise.HOLD_OUT_EVERY`` goes there instead, until it holds
    ``noise.CALIBRATION_LINES`` lines. A text longer than ``LONG_TEXT`` (a block of a plain
    text file, whose lines are its documents) is sampled a line at a time for both."""
    batch: list[str] = []
    size = 0
    held_lines = 0
    for number, text in enumerate(texts):
        lines = text.split("\n") if char_counts is not None and len(text) > LONG_TEXT else None
        if held is not None and held_lines < CALIBRATION_LINES:
            if lines is not None:
                held.append("\n".join(lines[HOLD_OUT_EVERY - 1::HOLD_OUT_EVERY]))
                held_lines += len(lines) // HOLD_OUT_EVERY
                del lines[HOLD_OUT_EVERY - 1::HOLD_OUT_EVERY]
                text = "\n".join(lines)
            elif number % HOLD_OUT_EVERY == HOLD_OUT_EVERY - 1:
                held.append(text)
                held_lines += text.count("\n") + 1
                continue
        if char_counts is not None and (lines is not None or number % sample == 0):
            batch.append(char_text(text if lines is None else "\n".join(lines[::sample])))
            size += len(batch[-1])
            if size >= 4 << 20:
                char_counts.add_texts(batch)
                batch, size = [], 0
        yield text
    if char_counts is not None and batch:
        char_counts.add_texts(batch)


class _LazyVocabulary(Sequence[str]):
    """The vocabulary, decoded on first use (scoring never needs it)."""

    def __init__(self, blob: bytes) -> None:
        self._blob = blob
        self._units: list[str] | None = None

    def joined(self) -> str:
        """The units, a line each (as the file holds them)."""
        return self._blob.decode("utf-8", "surrogatepass")

    def pick(self, rows: Sequence[int]) -> list[str]:
        """The units of ``rows``, decoded alone (not the whole vocabulary)."""
        if self._units is not None:
            return [self._units[row] for row in rows]
        breaks = np.flatnonzero(np.frombuffer(self._blob, np.uint8) == ord("\n"))
        ends = np.append(breaks, len(self._blob))
        starts = np.insert(breaks + 1, 0, 0)
        wanted = np.asarray(rows, np.intp)
        # Only the rows asked for come to Python (a model's language reads 1,000 of ~100,000).
        return [self._blob[start:end].decode("utf-8", "surrogatepass") for start, end
                in zip(starts[wanted].tolist(), ends[wanted].tolist(), strict=True)]

    def _list(self) -> list[str]:
        if self._units is None:
            self._units = self._blob.decode("utf-8", "surrogatepass").split("\n")
        return self._units

    def __len__(self) -> int:
        return len(self._list())

    def __getitem__(self, index: Any) -> Any:
        return self._list()[index]

    def __iter__(self) -> Iterator[str]:
        # The list's own iterator: Sequence's calls __getitem__ a unit at a time (a model's
        # index of its units, made before its first score, took three times as long).
        return iter(self._list())
