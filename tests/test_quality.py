"""Quality gates on ../shared/eval: what the pipeline issue promises, measured on every run."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import shared_file

from warcdeboil.apply import OutputFormat
from warcdeboil.evaluate import evaluate, load_gold, load_predictions
from warcdeboil.pipeline import Options, clean


def run(name: str, tmp_path: Path):
    archive = shared_file("eval", f"{name}.warc.gz")
    clean([archive], tmp_path, Options(format=OutputFormat.JSONL, workers=2))
    return evaluate(load_predictions(tmp_path.glob("*.jsonl.gz")),
                    load_gold(shared_file("eval", f"{name}.gold.jsonl.gz")))


@pytest.mark.slow
def test_dragnet_template_removal_keeps_recall_and_beats_deboiler_precision(
    tmp_path: Path,
) -> None:
    report = run("dragnet", tmp_path)
    assert report.missing == 0
    assert report.overall.recall >= 0.95
    # The original deboiler: precision 0.686 on pages of sites with >= 5 pages (shared/eval).
    assert report.large_sites.precision > 0.69
    assert report.large_sites.recall >= 0.95


@pytest.mark.parametrize(("name", "precision"), [("cleanportaleval", 0.74), ("l3s-gn1", 0.729)])
def test_smaller_sets_beat_deboiler_precision(tmp_path: Path, name: str, precision: float) -> None:
    report = run(name, tmp_path)
    assert report.large_sites.recall >= 0.95
    assert report.large_sites.precision > precision
