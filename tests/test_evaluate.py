"""The token measure of ../shared/eval/README.md."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import pytest
from conftest import shared_file

from warcdeboil.errors import InputError
from warcdeboil.evaluate import GoldPage, evaluate, load_gold, load_predictions, score_text


@pytest.mark.parametrize(
    ("predicted", "gold", "expected"),
    [
        ("the the cat", "the cat sat", (2 / 3, 2 / 3)),      # multiplicity counts
        ("THE Cat", "the cat", (1.0, 1.0)),                  # case folded
        ("北京 欢迎你", "北京", (0.5, 1.0)),                    # Unicode \w tokens
        ("Привет, мир!", "привет мир", (1.0, 1.0)),
        ("", "some gold", (0.0, 0.0)),                       # empty output scores 0
        ("noise", "", (0.0, 1.0)),
    ],
)
def test_score_text(predicted: str, gold: str, expected: tuple[float, float]) -> None:
    score = score_text(predicted, gold)
    assert (score.precision, score.recall) == pytest.approx(expected)


def gold_page(url: str, site: str, text: str) -> GoldPage:
    return GoldPage(url, site, "test", url, text)


def test_groups_by_site_size_and_counts_missing() -> None:
    gold = {f"u{i}": gold_page(f"u{i}", "big" if i < 5 else "small", "a b") for i in range(6)}
    predictions = {f"u{i}": "a b" for i in range(4)}  # u4 (big) and u5 (small) are missing
    report = evaluate(predictions, gold)
    assert report.missing == 2
    assert report.large_sites.pages == 5
    assert report.large_sites.f1 == pytest.approx(0.8)
    assert report.small_sites.f1 == 0.0
    assert report.per_site["big"].pages == 5
    assert "sites >= 5 pages" in report.format_table()
    assert report.to_dict()["other_pages"]["f1"] == 0.0


def test_empty_group_prints_a_dash() -> None:
    report = evaluate({}, {"u": gold_page("u", "s", "a")})
    assert math.isnan(report.large_sites.f1)
    assert "—" in report.format_table()
    assert report.to_dict()["sites_with_5_or_more_pages"]["f1"] is None


def test_loading_plain_and_gzip(tmp_path: Path) -> None:
    lines = [json.dumps({"url": "http://a/1", "site": "a", "gold": "x y", "id": 1})]
    (tmp_path / "g.jsonl").write_text("\n".join(lines) + "\n")
    with gzip.open(tmp_path / "p.jsonl.gz", "wt") as fh:
        fh.write(json.dumps({"url": "http://a/1", "text": "x"}) + "\n")
    assert load_gold(tmp_path / "g.jsonl")["http://a/1"].gold == "x y"
    assert load_predictions([tmp_path / "p.jsonl.gz"]) == {"http://a/1": "x"}


def test_bad_line_names_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "g.jsonl").write_text('{"url": "a", "gold": "x"}\n{oops\n')
    with pytest.raises(InputError, match=r"g\.jsonl:2: not JSON"):
        load_gold(tmp_path / "g.jsonl")


def test_real_gold_scores_itself_perfectly() -> None:
    gold = load_gold(shared_file("eval", "cleanportaleval.gold.jsonl.gz"))
    assert len(gold) == 71
    report = evaluate({url: page.gold for url, page in gold.items()}, gold)
    assert report.overall.f1 == 1.0
