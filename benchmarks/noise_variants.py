"""Variants of the noise score rescored on the cells of benchmarks/perplexity.py: each cell's
model is trained once, the signals of its held-out calibration lines and of its real and noise
lines are kept, and each variant refits the calibration from them (no retraining).

    python benchmarks/noise_variants.py --out variants.json

Cells: the dev and test splits of the first check, and each dataset left out with noise seeds 25
(lists "other") and 2611 (lists "fresh"). The variants (``VARIANTS``) change the second test's
unseen words, the floor of the context signal's spread, and where the lack of common words is read
and what makes a unit common; "version 5" is the score of the variants table of
benchmarks/results/perplexity-2026-11-25.md (and -25d.md in git at 6b5f730), "version 6" of -25e.md
(in git at 784335a), "version 7" the package's. Printed: a row a variant (cells of 12 x 7 behind the
pyplexity-style bigram at full precision with the real class of benchmarks/perplexity.py, the gold's
own mojibake lines set apart, ``perplexity.real_class``, and as the gold has them; cells below 0.97;
the worst margins; the lowest AUC), then the cells behind. The JSON holds every cell's AUCs.

    python benchmarks/noise_variants.py --cache DIR   # models and lines kept for the next run
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import perplexity as bench  # noqa: E402

from warcdeboil.lm import (
    LanguageModel,  # noqa: E402
    noise,  # noqa: E402
)
from warcdeboil.lm import model as lm_model  # noqa: E402

# Columns added to noise.SIGNALS: the context signal with other floors of its spread, unseen
# words counted among words without the character gate, or with another gate, and no common
# words with the commonest units making other shares of the text, or counted among words (the
# units that are not marks) alone.
FLOORS = (0.2, 0.4, 0.5)
MASSES = (0.3, 0.4, 0.6, 0.7)
EXTRA = (*(f"context, spread at least {floor}" for floor in FLOORS),
         "rare and unseen words among words, no gate",
         "rare and odd unseen words, gate 1.2 to 2.2",
         *(f"no common words, {mass} of the text" for mass in MASSES),
         "no common words among words")
SIGNALS = noise.SIGNALS + EXTRA
OLD, RARE, CHARS = "context, versions 3 to 5", "rare words", "characters"
ODD = ("worst characters", "rarest character", "mojibake")


NONE = "no common words"


def _layout(context: str, unseen: str, third: tuple[str, ...] = (RARE,)
            ) -> tuple[tuple[str, ...], ...]:
    return ((context, "order"), (context, unseen, CHARS), third, ODD)


def _third(common: str) -> tuple[tuple[str, ...], ...]:
    """Version 7's tests with another reading of no common words in the third."""
    return _layout("context", "rare and odd unseen words", (RARE, common))


# Each variant's tests (of ``SIGNALS``); "version 5" is the score of 2026-11-25d, "version 6"
# of 2026-11-25e, "version 7" the one kept (2026-11-25f).
VARIANTS = {
    "version 5": noise.VERSION_5[1],
    "version 6: odd unseen words, spread 0.3": noise.VERSION_6[1],
    "version 6 with spread 0.4": _layout(EXTRA[1], "rare and odd unseen words"),
    "version 6 with spread 0.5": _layout(EXTRA[2], "rare and odd unseen words"),
    "version 7: rare words and no common words (half of the text)": noise.TESTS,
    **{f"version 7, common units {mass} of the text": _third(f"no common words, {mass} of the "
                                                             "text") for mass in MASSES},
    "version 7, common words among words (marks apart)": _third(EXTRA[-1]),
    "no common words a fifth test, alone": (*noise.VERSION_6[1], (NONE,)),
    "no common words and order, a fifth test": (*noise.VERSION_6[1], (NONE, "order")),
    "no common words in the first test (context, order)": (
        ("context", "order", NONE), noise.TESTS[1], (RARE,), ODD),
    "rare words, no common words and order, third test": _third(NONE)[:2] + (
        (RARE, NONE, "order"), ODD),
}


def _common(model: LanguageModel, mass: float) -> np.ndarray:
    """Whether each unigram row is among the commonest units that make ``mass`` of the
    training text (``LanguageModel.common_rows`` for a share other than half)."""
    shares = np.power(10.0, model.frequencies.astype(np.float64))
    ranked = np.argsort(-shares, kind="stable")
    found = np.zeros(len(shares), bool)
    found[ranked[:int(np.searchsorted(np.cumsum(shares[ranked]), mass)) + 1]] = True
    return found


def extra_columns(model: LanguageModel, lines: list[str], signals: np.ndarray) -> np.ndarray:
    """The ``EXTRA`` columns of each line (``signals``: its ``noise.SIGNALS``)."""
    rows = model.unit_rows("\n".join(lines), keep_empty=True)
    logp = model._log10_probs(rows)
    line, count = noise._per_line(rows)
    units = np.bincount(line, minlength=count)
    gain = np.clip(logp - model.frequencies[rows[1:]], *noise._CLIP)
    mean = np.bincount(line, weights=gain, minlength=count) / units
    square = np.bincount(line, weights=gain * gain, minlength=count) / units
    contexts = [-mean / np.sqrt(np.maximum(square - mean * mean, floor ** 2)) * np.sqrt(units)
                for floor in FLOORS]
    unseen = np.bincount(line, weights=rows[1:] == model._unk_row, minlength=count)
    words = np.bincount(line, weights=~model.mark_rows[rows[1:]], minlength=count) - 1
    past = np.maximum(2.0 * unseen / np.maximum(words, 1) - 1.0, 0.0)
    rare, chars = (signals[:, noise.SIGNALS.index(name)] for name in (RARE, CHARS))
    predicted, end = rows[1:], rows[0]
    nones = []
    for common in [_common(model, mass) for mass in MASSES]:
        usual = np.bincount(line, weights=common[predicted], minlength=count) - common[end]
        nones.append((units - 1 - usual) / np.maximum(units - 1, 1))
    common = model.common_rows & ~model.mark_rows
    usual = np.bincount(line, weights=common[predicted], minlength=count) - common[end]
    nones.append((words - usual) / np.maximum(words, 1))
    return np.column_stack([*contexts, rare + past,
                            rare + past * np.clip(chars - 1.2, 0.0, 1.0), *nones])


def _trained(lines: list[str]) -> tuple[LanguageModel, list[str]]:
    """A model trained as the benchmark trains it, and the lines it held out to calibrate."""
    held: list[str] = []
    signals = lm_model.line_signals

    def keep(model: LanguageModel, text: str) -> Any:
        held.extend(text.split("\n"))
        return signals(model, text)

    lm_model.line_signals = keep  # type: ignore[assignment]
    try:
        return LanguageModel.train(lines), held
    finally:
        lm_model.line_signals = signals  # type: ignore[assignment]


def raw_cells(cache: Path | None = None) -> dict[str, dict]:
    """Each cell's model, the lines it held out to calibrate, its real and noise lines and
    their bigram perplexities, made as benchmarks/perplexity.py makes them. With ``cache``
    (a directory), the models and lines are written there and read back on the next run (the
    models as their files: a loaded model scores as the trained one)."""
    index = cache / "cells.json" if cache else None
    if index is not None and index.exists():
        out = json.loads(index.read_text())
        models = {path: LanguageModel.load(cache / path)  # type: ignore[operator]
                  for path in {found["model"] for found in out.values()}}
        for found in out.values():
            found["model"] = models[found["model"]]
        return out
    out = {}
    paths: dict[int, str] = {}

    def cell(model: LanguageModel, held: list[str], bigram: bench.PyplexityBigram,
             found: dict[str, list[str]], name: str) -> dict:
        paths.setdefault(id(model), name.split(",")[0])
        return {"model": model, "held": held, "lines": found,
                "bigram": {kind: bigram.perplexities(lines) for kind, lines in found.items()}}

    rng = random.Random(19)
    train, held_out = bench.split_sentences(rng)
    vocabulary, weights = zip(*Counter(w for s in train for w in s.split()).items(), strict=True)
    splits = {split: {"real": real, **{kind: bench.make_noise(kind, rng, real, list(vocabulary),
                                                             list(weights), 500)
                                       for kind in bench.KINDS}}
              for split, real in held_out.items()}
    model, held = _trained(train)
    bigram = bench.PyplexityBigram(train)
    for split, found in splits.items():
        out[split] = cell(model, held, bigram, found, "splits")
    trained: dict[str, tuple[LanguageModel, list[str], bench.PyplexityBigram]] = {}
    for seed, lists in ((25, "other"), (2611, "fresh")):
        for left_out in bench.DATASETS:
            rng = random.Random(seed)
            train, _ = bench.split_sentences(rng, tuple(d for d in bench.DATASETS
                                                        if d != left_out))
            texts = [s for _, text in bench.gold_pages((left_out,))
                     if bench.detect(text) == "en" for s in bench.sentences(text)]
            real = [s for s in texts if 6 <= len(s.split()) <= 60]
            real = rng.sample(real, min(1500, len(real)))
            vocabulary, weights = zip(*Counter(w for s in texts for w in s.split()).items(),
                                      strict=True)
            found = {"real": real, **{kind: bench.make_noise(kind, rng, real, list(vocabulary),
                                                            list(weights), 500, lists=lists)
                                      for kind in bench.KINDS}}
            if left_out not in trained:
                trained[left_out] = (*_trained(train), bench.PyplexityBigram(train))
            model, held, bigram = trained[left_out]
            out[f"{left_out}, seed {seed}"] = cell(model, held, bigram, found, left_out)
            print(left_out, seed, file=sys.stderr)
    if index is not None and cache is not None:
        cache.mkdir(parents=True, exist_ok=True)
        stored = {}
        for name, found in out.items():
            path = paths[id(found["model"])] + ".lm"
            if not (cache / path).exists():
                found["model"].save(cache / path)
            stored[name] = {**found, "model": path}
        index.write_text(json.dumps(stored))
    return out


def cells(cache: Path | None = None) -> dict[str, dict]:
    """Each cell's held-out lines and its real and noise lines, with their signals (``SIGNALS``
    and units) and bigram perplexities (``raw_cells``)."""
    out = {}
    for name, found in raw_cells(cache).items():
        model = found["model"]

        def signals(lines: list[str], model: LanguageModel = model) -> tuple[np.ndarray,
                                                                              np.ndarray]:
            values, units = noise.line_signals(model, "\n".join(lines))
            return np.hstack([values, extra_columns(model, lines, values)]), units
        out[name] = {"held": signals(found["held"]), "real": found["lines"]["real"],
                     "lines": found["lines"],
                     "signals": {kind: signals(lines) for kind, lines in found["lines"].items()},
                     "bigram": found["bigram"]}
    return out


def scores(found: dict, tests: tuple[tuple[str, ...], ...]) -> dict[str, np.ndarray]:
    """Each kind's noise scores under a calibration with these ``tests`` of ``SIGNALS``."""
    values, units = found["held"]
    names = tuple(dict.fromkeys(name for test in tests for name in test))
    chosen = [SIGNALS.index(name) for name in names]
    groups = noise._fit_groups(values[:, chosen], units)
    sums = noise._test_sums(noise._surprises(groups, values[:, chosen], units), names, tests)
    tails = noise._fit_groups(sums, units)
    out = {}
    for kind, (line, length) in found["signals"].items():
        surprise = noise._surprises(tails, noise._test_sums(
            noise._surprises(groups, line[:, chosen], length), names, tests), length).max(axis=1)
        limit = np.log10(max(group.shape[1] for group in groups) + 1.0)
        past = np.maximum(surprise - limit, 0.0)
        out[kind] = 1.0 - np.power(10.0, -np.minimum(surprise, limit)) / (
            1.0 + np.log(10.0) * past)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, help="the per-cell AUCs, as JSON")
    parser.add_argument("--cache", type=Path, help="a directory: keep the cells' models and "
                        "lines there, and read them back from it on the next run")
    args = parser.parse_args()
    result: dict = {}
    for name, found in cells(args.cache).items():
        # The real class of benchmarks/perplexity.py leaves the gold's own mojibake out.
        damaged = np.array([bench.gold_mojibake(line) for line in found["real"]], bool)
        bigram = {kind: np.array(value) for kind, value in found["bigram"].items()}
        for label, tests in VARIANTS.items():
            ours = scores(found, tests)
            result.setdefault(label, {})[name] = {kind: {
                "ours": bench.auc(ours["real"][~damaged].tolist(), ours[kind].tolist()),
                "bigram": bench.auc(bigram["real"][~damaged].tolist(), bigram[kind].tolist()),
                "ours, as the gold has them": bench.auc(ours["real"].tolist(),
                                                        ours[kind].tolist()),
                "bigram, as the gold has them": bench.auc(bigram["real"].tolist(),
                                                          bigram[kind].tolist())}
                for kind in bench.KINDS}
    print("| variant | behind the bigram | behind, as the gold has them | below 0.97 | worst "
          "margin, random characters | worst margin, menus | worst margin, other kinds | "
          "lowest navigation and sharing | lowest AUC |")
    print("|---|---|---|---|---|---|---|---|---|")
    behind_cells = {}
    for label, by_cell in result.items():
        pairs = [(name, kind, v) for name, kinds in by_cell.items() for kind, v in kinds.items()]
        behind = [f"{name}: {kind}" for name, kind, v in pairs if v["ours"] < v["bigram"]]
        as_is = [v for _, _, v in pairs
                 if v["ours, as the gold has them"] < v["bigram, as the gold has them"]]
        low = [v for _, _, v in pairs if v["ours"] < 0.97]

        def margin(chosen: set[str], pairs: list = pairs) -> float:
            return min(v["ours"] - v["bigram"] for _, kind, v in pairs if kind in chosen)
        others = set(bench.KINDS) - {"random characters", "menu items concatenated"}
        lowest = min(pairs, key=lambda pair: pair[2]["ours"])
        navigation = min(v["ours"] for _, kind, v in pairs if kind == "navigation and sharing")
        print(f"| {label} | {len(behind)} | {len(as_is)} | {len(low)} | "
              f"{margin({'random characters'}):+.5f} | "
              f"{margin({'menu items concatenated'}):+.5f} | {margin(others):+.4f} | "
              f"{navigation:.5f} | {lowest[2]['ours']:.5f} ({lowest[0]}, {lowest[1]}) |")
        behind_cells[label] = behind
    for label, behind in behind_cells.items():
        print(f"- {label}: {'; '.join(behind) or 'none'}")
    if args.out:
        args.out.write_text(json.dumps({"noise_variants": result}, indent=2))


if __name__ == "__main__":
    main()
