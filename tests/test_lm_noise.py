"""The noise score of a line (``warcdeboil.lm.noise``): its calibration on held-out training
lines, and what it ranks above real sentences under a model trained on other pages."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import numpy as np
import pytest
from conftest import shared_file

from warcdeboil import LanguageModel
from warcdeboil.lm.noise import (
    CALIBRATION_LINES,
    HOLD_OUT_EVERY,
    SHORT_UNITS,
    SIGNALS,
    Calibration,
    line_signals,
)
from warcdeboil.lm.units import units


@pytest.fixture(scope="module")
def gold() -> tuple[LanguageModel, list[str]]:
    """A model trained on dragnet's gold texts but the last 60 pages, and the lines
    (10 to 60 words, no control characters: one page is UTF-16 read as UTF-8) of those 60,
    which it never saw."""
    with gzip.open(shared_file("eval", "dragnet.gold.jsonl.gz"), "rt", encoding="utf-8") as fh:
        pages = [json.loads(line)["gold"] for line in fh]
    model = LanguageModel.train(pages[:-60])
    unseen = [line.strip() for page in pages[-60:] for line in page.split("\n")
              if 10 <= len(line.split()) <= 60 and line.isprintable()]
    return model, unseen


def _share_above(model: LanguageModel, noise: list[str], real: list[str]) -> float:
    """The share of pairs (noise line, the real line it was made from) where noise scores
    higher."""
    pairs = zip(model.line_noise_scores(noise), model.line_noise_scores(real), strict=True)
    return float(np.mean([mine > theirs for mine, theirs in pairs]))


def test_salad_and_shuffles_of_unseen_gold_text_score_above_it(
        gold: tuple[LanguageModel, list[str]]) -> None:
    model, real = gold
    assert model.calibration is not None and len(real) > 200
    rng = random.Random(5)
    vocabulary = [word for line in real for word in line.split()]
    salad = [" ".join(rng.choices(vocabulary, k=len(line.split()))) for line in real]
    shuffled = []
    for line in real:
        words = line.split()
        rng.shuffle(words)
        shuffled.append(" ".join(words))
    assert _share_above(model, salad, real) > 0.95
    assert _share_above(model, shuffled, real) > 0.9
    # The context signal alone does it: the same words, in their order or not.
    context = SIGNALS.index("context")
    mine = line_signals(model, "\n".join(shuffled))[0][:, context]
    theirs = line_signals(model, "\n".join(real))[0][:, context]
    assert np.mean(mine > theirs) > 0.9


def test_mojibake_of_unseen_gold_text_scores_above_it(
        gold: tuple[LanguageModel, list[str]]) -> None:
    model, real = gold
    accented = [line for line in real if any(ord(c) > 127 for c in line)]
    damaged = [line.encode().decode("cp1252", "replace") for line in accented]
    assert len(accented) > 20
    assert _share_above(model, damaged, accented) > 0.95


def test_real_unseen_sentences_score_low(gold: tuple[LanguageModel, list[str]]) -> None:
    # Calibrated on held-out training lines: unseen lines of the same kind of text score like
    # them (a line scores 0.9 when a tenth of the held-out lines are as extreme on its most
    # extreme signal, and the most extreme of five signals is seldom below that).
    model, real = gold
    scores = np.array(model.line_noise_scores(real))
    assert np.median(scores) < 0.93
    assert np.mean(scores > 0.999) < 0.05


def test_calibration_shares_follow_the_held_out_values() -> None:
    values = np.tile(np.arange(1.0, 101.0), (len(SIGNALS), 1))
    calibration = Calibration.fit(values.T, np.full(100, SHORT_UNITS))
    lines = np.array([[50.5] * 5, [100.0] * 5, [120.0] * 5, [0.0] * 5])
    surprise = calibration.surprises(lines, np.full(4, SHORT_UNITS))
    # 50 of 100 held-out values are at least 50.5: a share of 51/101 with the line itself.
    assert surprise[0] == pytest.approx([-np.log10(51 / 101)] * 5)
    # Past the 95th value, an exponential tail: the top five values' mean excess is 2, so
    # the share at 120 is 6/101 * exp(-(120 - 96) / 2); at the largest value, the tail's.
    assert surprise[2] == pytest.approx([-np.log10(6 / 101 * np.exp(-12))] * 5)
    assert surprise[1] == pytest.approx([-np.log10(min(1 / 101, 6 / 101 * np.exp(-2)))] * 5)
    assert surprise[3] == pytest.approx([-np.log10(1.0)] * 5)
    scores = calibration.scores(lines, np.full(4, SHORT_UNITS))
    assert list(np.argsort(scores)) == [3, 0, 1, 2]


def test_short_lines_are_compared_with_short_lines() -> None:
    short = np.zeros((50, len(SIGNALS)))   # short held-out lines: every signal 0
    long = np.ones((50, len(SIGNALS)))     # long ones: 1
    signals = np.vstack([short, long])
    lengths = np.array([1] * 50 + [SHORT_UNITS] * 50)
    calibration = Calibration.fit(signals, lengths)
    line = np.full((2, len(SIGNALS)), 0.5)
    surprise = calibration.surprises(line, np.array([1, SHORT_UNITS]))
    assert surprise[0].min() > 1.5  # above every short line
    assert surprise[1].max() == 0.0  # below every long line


def _sentences(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    words = ["the", "a", "cat", "dog", "sat", "on", "mat", "rug", "and", "it", "was", "warm",
             "red", "by", "door"]
    return [" ".join(rng.choices(words, k=rng.randint(3, 12))).capitalize() + "."
            for _ in range(count)]


def test_held_out_texts_are_not_counted_and_calibrate() -> None:
    texts = _sentences(HOLD_OUT_EVERY * 300, 1)
    model = LanguageModel.train(texts)
    held = texts[HOLD_OUT_EVERY - 1::HOLD_OUT_EVERY]
    counted = [t for n, t in enumerate(texts) if n % HOLD_OUT_EVERY != HOLD_OUT_EVERY - 1]
    assert model.info["units"] == sum(len(units(t)) + 1 for t in counted)
    assert model.info["calibration_lines"] == len(held) == 300
    assert model.calibration is not None
    assert sum(group.shape[1] for group in model.calibration.groups) == 300


def test_too_few_held_out_lines_are_counted_and_the_logistic_is_kept() -> None:
    texts = _sentences(HOLD_OUT_EVERY * 20, 2)
    model = LanguageModel.train(texts)
    assert model.calibration is None
    assert model.info["units"] == LanguageModel.train(texts, chars=False).info["units"]


def test_a_long_text_is_held_out_a_line_at_a_time() -> None:
    block = "\n".join(_sentences(20000, 3))  # one block of a plain text file
    model = LanguageModel.train([block])
    assert model.calibration is not None
    assert model.info["calibration_lines"] == min(20000 // HOLD_OUT_EVERY, CALIBRATION_LINES)


def test_frequencies_are_shares_of_the_training_units() -> None:
    model = LanguageModel.train(["a b a", "a c"], chars=False)
    shares = dict(zip(model.vocabulary, np.power(10.0, model.frequencies), strict=True))
    # 7 units counted: a a a b c and two line ends; <unk> as if seen half a time.
    assert shares["a"] == pytest.approx(3 / 7) and shares["</s>"] == pytest.approx(2 / 7)
    assert shares["<unk>"] == pytest.approx(0.5 / 7)


def test_calibration_and_frequencies_survive_the_model_file(tmp_path: Path) -> None:
    model = LanguageModel.train(_sentences(HOLD_OUT_EVERY * 300, 4) + ["Home | News | Sport"])
    model.save(tmp_path / "m.lm")
    again = LanguageModel.load(tmp_path / "m.lm")
    assert again.calibration is not None and model.calibration is not None
    for mine, theirs in zip(model.calibration.groups, again.calibration.groups, strict=True):
        assert np.array_equal(mine, theirs)
    assert np.array_equal(model.frequencies, again.frequencies)
    assert again.chars is not None and model.chars is not None
    assert np.array_equal(model.chars.frequencies, again.chars.frequencies)
    lines = ["The cat sat on the mat.", "Home | News | Sport", "mat cat the on sat"]
    assert again.line_noise_scores(lines) == model.line_noise_scores(lines)
