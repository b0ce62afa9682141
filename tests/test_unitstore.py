"""The units a run model's training keeps (unitstore) and the scores made from them
(lm.stage._cross_score): the very perplexities pass 2's PageScorer gives the same pages."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from warcdeboil.errors import WorkDirError
from warcdeboil.lm import LanguageModel
from warcdeboil.lm.counts import NgramCounts
from warcdeboil.lm.scoring import LmSettings, PageScorer
from warcdeboil.lm.stage import _cross_score, _CrossScoreJob
from warcdeboil.lm.units import LINE
from warcdeboil.lm.unitstore import UnitStoreWriter, iter_unit_chunks, text_lines

_WORDS = ["the", "river", "ran", "past", "12", "gardens,", "and", "a", "doctor", "wrote",
          "letters", ":", "every", "morning", "the", "village", "market", "opened", "—", "北京",
          "欢迎", "ok", "Ünïcode", "ΟΔΟΣ", "naïve"]


def _texts(rng: random.Random, count: int) -> list[str]:
    """Pages as a run has them: lines of words, empty lines, blank ones, an empty page."""
    texts = []
    for _ in range(count):
        lines = []
        for _ in range(rng.randint(1, 12)):
            kind = rng.random()
            if kind < 0.15:
                lines.append("")
            elif kind < 0.2:
                lines.append("   ")
            else:
                lines.append(" ".join(rng.choices(_WORDS, k=rng.randint(1, 15))))
        texts.append("\n".join(lines))
    texts[3] = ""
    texts[5] = "\n\n"
    return texts


def _store(path: Path, texts: list[str], chunk_chars: int) -> None:
    """What a run model's training keeps, its chunks ``chunk_chars`` long."""
    with UnitStoreWriter(path) as kept:
        NgramCounts(keep=kept.add).add_texts(kept.texts(texts), chunk_chars=chunk_chars)


@pytest.mark.parametrize("chunk_chars", [50, 700, 1 << 22])
@pytest.mark.parametrize("max_line", [None, 20.0])
def test_scores_from_the_kept_units_are_pass_2s(tmp_path: Path, chunk_chars: int,
                                                max_line: float | None) -> None:
    """Chunks cut through pages (and a page longer than a chunk cut into pieces) or holding
    them all: each page's perplexity is PageScorer's to the last bit, lines above
    --max-line-perplexity left out as pass 2 leaves them, None for a page without a unit."""
    rng = random.Random(chunk_chars)
    texts = _texts(rng, 60)
    texts[10] = "\n".join(" ".join(rng.choices(_WORDS, k=12)) for _ in range(30))  # > 50 chars
    other = LanguageModel.train(_texts(random.Random(99), 80), chars=False)
    model = tmp_path / "other.lm"
    other.save(model)
    units = tmp_path / "en.0.units"
    _store(units, texts, chunk_chars)
    assert len(list(iter_unit_chunks(units))) > (3 if chunk_chars < 1000 else 0)
    found = _cross_score(_CrossScoreJob(str(units), str(model), max_line))
    scorer = PageScorer(LmSettings(str(model), max_line=max_line))
    from warcdeboil.page.dom import CleanText

    expected = [score.perplexity for score in scorer.score_many(
        [(CleanText(text, 0), None) for text in texts])]
    assert [None if np.isnan(v) else v for v in found.tolist()] == expected
    assert expected[3] is None and expected[5] is None
    assert sum(v is not None for v in expected) > 50
    if max_line is not None:  # the filter moved some pages' perplexity
        plain = _cross_score(_CrossScoreJob(str(units), str(model), None))
        assert not np.array_equal(plain, found, equal_nan=True)


def test_a_unit_store_keeps_each_chunk_and_each_texts_lines(tmp_path: Path) -> None:
    texts = ["Alpha beta.\n\nGamma 42", "", "delta"]
    path = tmp_path / "x.units"
    _store(path, texts, 1 << 20)
    assert text_lines(path).tolist() == [3, 1, 1]
    [(names, numbers)] = list(iter_unit_chunks(path))
    line = names.index(LINE)
    assert [names[n] if n != line else "|" for n in numbers.tolist()] == [
        "|", "alpha", "beta", ".", "|", "|", "gamma", "00", "|", "|", "delta", "|"]


def test_damaged_unit_stores_are_one_line_errors(tmp_path: Path) -> None:
    path = tmp_path / "x.units"
    _store(path, ["one two three", "four"], 1 << 20)
    whole = path.read_bytes()
    far = (1 << 40).to_bytes(8, "little")
    for damaged in (whole[:5], whole[:40] + whole[-8:], whole[:-8] + far):
        path.write_bytes(damaged)
        with pytest.raises(WorkDirError, match="store of training units"):
            list(iter_unit_chunks(path))
            text_lines(path)
    # The lines of the texts and the units disagree: the scores are refused, not misplaced.
    with UnitStoreWriter(tmp_path / "short.units") as kept:
        NgramCounts(keep=kept.add).add_texts(kept.texts(["one two\nthree", "four"]))
    LanguageModel.train(["one two three four"] * 3, chars=False).save(tmp_path / "m.lm")
    mixed = tmp_path / "mixed.units"
    short = (tmp_path / "short.units").read_bytes()
    # The first store's chunks with the second's lines (one line more).
    start = int.from_bytes(whole[-8:], "little")
    start2 = int.from_bytes(short[-8:], "little")
    mixed.write_bytes(whole[:start] + short[start2:-8] + start.to_bytes(8, "little"))
    with pytest.raises(WorkDirError, match="do not match"):
        _cross_score(_CrossScoreJob(str(mixed), str(tmp_path / "m.lm"), None))
