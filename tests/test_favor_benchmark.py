"""benchmarks/favor.py: the grid it measures and the rule that picks --favor's points from it
(results: benchmarks/results/favor-2026-11-29.md)."""

from __future__ import annotations

import sys
from dataclasses import replace

import pytest
from conftest import ROOT, load_script

from warcdeboil.page.content import OPERATING_POINTS
from warcdeboil.page.favor import Favor


@pytest.fixture(scope="module")
def favor():
    sys.path.insert(0, str(ROOT / "benchmarks"))  # it imports peers.py from its folder
    try:
        yield load_script("favor_benchmark", ROOT / "benchmarks" / "favor.py")
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))


def test_the_grid_holds_balanced_first_and_the_shipped_points(favor) -> None:
    points = favor.grid()
    assert points[0] == OPERATING_POINTS[Favor.BALANCED]
    assert len(points) == len(set(points))
    assert OPERATING_POINTS[Favor.PRECISION] in points
    assert OPERATING_POINTS[Favor.RECALL] in points


def test_the_rule_bounds_every_sets_f1_loss(favor) -> None:
    balanced = favor.BALANCED
    sharp = replace(balanced, threshold=0.6)  # more precise, but loses F1 on one set
    mild = replace(balanced, edge_chars=25)  # a little more precise, F1 within the bound
    wide = replace(balanced, threshold=0.4)  # keeps more, F1 within the bound
    figures = {  # (precision, recall, F1) per point, on two sets
        "a": {balanced: (0.90, 0.95, 0.92), sharp: (0.97, 0.90, 0.93), mild: (0.92, 0.94, 0.92),
              wide: (0.88, 0.97, 0.915)},
        "b": {balanced: (0.90, 0.95, 0.92), sharp: (0.95, 0.85, 0.89), mild: (0.91, 0.94, 0.918),
              wide: (0.89, 0.96, 0.918)},
    }
    assert favor.choose(figures, 0.008) == {"precision": mild, "recall": wide}
    # With a looser bound the sharper point is allowed, and wins on precision.
    assert favor.choose(figures, 0.05)["precision"] == sharp
