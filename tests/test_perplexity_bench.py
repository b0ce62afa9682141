"""The rule of benchmarks/perplexity.py's real class: gold lines that are themselves mojibake
(UTF-8 read as cp1252, the noise kind "mojibake" by the issue's own definition) are set apart,
counted and listed, and the figures with them in the real class are kept beside."""

from __future__ import annotations

import random
from types import ModuleType

import pytest
from conftest import ROOT, load_script


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_script("perplexity_benchmark", ROOT / "benchmarks" / "perplexity.py")


# Lines of the gold texts of ../shared/eval that are mojibake (benchmarks/results/
# perplexity-2026-11-25.md), and one of each way a byte is read.
GOLD_MOJIBAKE = [
    "VioxxÂ® may result in warfarin sensitivity.",
    "I don't think I could take two of you.'Â¤\"",
    "She naÃ¯vely asks what the key opens, and receives only harsh, mocking laughter.",
    "McKaylaÂ Maroney is an amazing gymnast and one of the worldâ€™s best vaulters.",
    "turnover rise to Â£245million,",
    "angle22.62^Â°; the other factor",
    "Ã\x9d read as Latin-1: a byte cp1252 leaves undefined",
]
# Lines with characters that UTF-8 read as cp1252 does not make: accents, quotes, symbols,
# other scripts, and a lead byte's character followed by ASCII or by a letter.
CLEAN = [
    "Le café coûte 3,50 € — « très » naïve façade, tête-À-tête.",
    "“Quoted” and ‘single’ quotes, © 2019, 45°, ½ cup, £3, ¥20, § 4 ¶ 2.",
    "Grüße aus Köln, Øresund, Ærø, Ñandú, Ça va.",
    "北京欢迎你 and Москва and Ελλάδα and 😀.",
    "Plain ASCII: Home | News | Sport.",
    "ÂÃÄ ÉÈ stand alone, Ãx and Â.",
]


@pytest.mark.parametrize("line", GOLD_MOJIBAKE)
def test_gold_mojibake_found(bench: ModuleType, line: str) -> None:
    assert bench.gold_mojibake(line)


@pytest.mark.parametrize("line", CLEAN)
def test_clean_lines_are_not_mojibake(bench: ModuleType, line: str) -> None:
    assert not bench.gold_mojibake(line)


def test_the_noise_kinds_mojibake_is_found(bench: ModuleType) -> None:
    """What the benchmark's mojibake maker makes of a line with any character of two, three or
    four bytes is found, and the line it came from is not (the detector is the maker's
    inverse); a byte cp1252 leaves undefined is replaced, so a line whose only such character
    reads as one is lost to both, and that is the only miss."""
    lines = [line for line in CLEAN if any(ord(c) > 127 for c in line)]
    damaged = bench.make_noise("mojibake", random.Random(1), lines, ["x"], [1], 10)
    assert len(damaged) == len(lines)
    assert all(bench.gold_mojibake(line) for line in damaged)
    assert not bench.gold_mojibake("Ý")
    assert bench.make_noise("mojibake", random.Random(1), ["Ý"], ["x"], [1], 1) == ["Ã\ufffd"]
    assert not bench.gold_mojibake("Ã\ufffd")


def test_real_class_sets_the_gold_mojibake_apart(bench: ModuleType) -> None:
    lines = [CLEAN[0], GOLD_MOJIBAKE[0], CLEAN[1], GOLD_MOJIBAKE[1]]
    assert bench.real_class(lines) == ([CLEAN[0], CLEAN[1]],
                                       [GOLD_MOJIBAKE[0], GOLD_MOJIBAKE[1]])


def test_compare_reports_both_real_classes(bench: ModuleType) -> None:
    """A score that ranks every noise line above the real class, and the gold's mojibake above
    the noise, against one that puts that mojibake between the real class and the noise: level
    with the real class as the rule makes it; with the mojibake among the real lines, behind on
    every kind, the mojibake line listed as the real line above the most noise lines."""
    real = ["a real line", "another real line here"]
    apart = ["VioxxÂ® mojibake line of the gold"]
    noise = {"random characters": ["zz1 q#", "x9 w_k7 p"],
             "menu items concatenated": ["Home News", "Sport Travel"]}

    def ours(lines: list[str]) -> list[float]:
        return [0.0 if line in real else 2.0 if line in apart else 1.0 for line in lines]

    def bigram(lines: list[str]) -> list[float]:
        return [0.0 if line in real else 0.5 if line in apart else 1.0 for line in lines]

    entry = bench.compare(real, apart, noise, {"ours": ours, "bigram": bigram})
    assert entry["real"] == 2
    assert entry["gold_mojibake"] == {"lines": 1, "all": apart, "ours": 1.0, "bigram": 1.0}
    assert entry["ours"] == entry["bigram"] == {"random characters": 1.0,
                                                "menu items concatenated": 1.0}
    assert entry["behind"] == {} and entry["outranking"] == {}
    with_them = entry["with_gold_mojibake"]
    assert with_them["real"] == 3
    # The mojibake line is above both noise lines of each kind under ours: 4 pairs of 6.
    assert with_them["ours"] == {"random characters": 0.6667, "menu items concatenated": 0.6667}
    assert with_them["bigram"] == {"random characters": 1.0, "menu items concatenated": 1.0}
    assert with_them["behind"] == {kind: [4 / 6, 1.0] for kind in noise}
    assert with_them["outranking"]["random characters"] == [
        {"line": apart[0], "ours": 2.0, "bigram": 0.0}]
    table = "\n".join(bench._cell_tables([("cell", entry)], "| cell | "))
    assert f"- cell: `{apart[0]}`" in table
    assert "| cell | 2 | 1: 1.0000 / 1.0000 | " in table
    assert "| cell | 3 | – | – | – | 0.6667 / 1.0000* |" in table


def test_compare_without_gold_mojibake_keeps_one_set_of_figures(bench: ModuleType) -> None:
    entry = bench.compare(["a b c", "d e f"], [], {"word salad": ["c a b"]},
                          {"ours": lambda lines: [len(x) for x in lines],
                           "bigram": lambda lines: [-len(x) for x in lines]})
    assert entry["gold_mojibake"] == {"lines": 0, "all": [], "ours": None, "bigram": None}
    assert entry["with_gold_mojibake"]["ours"] == entry["ours"] == {"word salad": 0.5}
    assert "none in these cells" in "\n".join(bench._cell_tables([("c", entry)], "| c | "))
