"""Every JSONL line a run writes has the fields of ``output/schema.py``, in its order, of its
types: the table the documentation's field reference is generated from."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from conftest import FIXTURES, SHARED, calibrated_model, outputs_of

from warcdeboil.output.formats import OutputFormat
from warcdeboil.output.schema import FIELDS, conforms, describe, integer, list_of, nullable
from warcdeboil.run.local import clean
from warcdeboil.run.options import Options

DEDUP = ["duplicate_of", "duplicate_group_size", "duplicate_similarity", "duplicate_kind"]
ALWAYS = [f.name for f in FIELDS if f.when == "always"]


def _lines(out: Path) -> list[dict[str, object]]:
    return [json.loads(line) for path in outputs_of(out, "**/*.jsonl*")
            for line in gzip.decompress(path.read_bytes()).splitlines()]


def _in_order(names: list[str]) -> list[str]:
    """``names`` in the schema's order."""
    order = [f.name for f in FIELDS]
    return sorted(names, key=order.index)


def _check(lines: list[dict[str, object]], names: list[str]) -> None:
    types = {f.name: f.type for f in FIELDS}
    assert lines
    for line in lines:
        assert list(line) == names
        wrong = {k: v for k, v in line.items() if not conforms(v, types[k])}
        assert wrong == {}, line["url"]


@pytest.mark.parametrize(("args", "extra"), [
    ({"format": OutputFormat.JSONL}, DEDUP),
    ({"format": OutputFormat.JSONL, "dedup": None, "url_rules": "rules.json"},
     [*DEDUP, "url_canonical"]),
], ids=["jsonl", "url-rules"])
def test_jsonl_lines_follow_the_schema(tmp_path: Path, args: dict, extra: list[str]) -> None:
    if "url_rules" in args:
        args = {**args, "url_rules": str(tmp_path / args["url_rules"])}
    clean([FIXTURES / "crawl"], tmp_path / "out", Options(workers=1, **args))
    _check(_lines(tmp_path / "out"), _in_order(ALWAYS + extra))


@pytest.mark.parametrize("noise", [False, True], ids=["auto", "given-model"])
def test_every_optional_field_follows_the_schema(tmp_path: Path, noise: bool) -> None:
    """Every field, with the run's own models or (for ``line_noise``) a model with its noise
    calibration."""
    from warcdeboil.corpus import FILTERS
    from warcdeboil.corpus.settings import QualitySettings
    from warcdeboil.lm.scoring import LmSettings

    model = str(calibrated_model(tmp_path / "made-up.lm")) if noise else "auto"
    options = Options(workers=1, format=OutputFormat.MARKDOWN, url_rules=str(tmp_path / "r.json"),
                      lm=LmSettings(model, True, None, None, True, line_noise=noise),
                      redact_pii=True, quality=QualitySettings(tuple(FILTERS)))
    clean([FIXTURES / "crawl"], tmp_path / "out", options)
    names = [f.name for f in FIELDS]
    _check(_lines(tmp_path / "out"), names if noise else [n for n in names if n != "line_noise"])


@pytest.mark.slow
@pytest.mark.skipif(not (SHARED / "warcs").is_dir(), reason="needs ../shared/warcs")
def test_real_archives_follow_the_schema(tmp_path: Path) -> None:
    from warcdeboil.dedup.verdicts import DedupMode

    clean([SHARED / "warcs"], tmp_path / "out",
          Options(workers=1, format=OutputFormat.JSONL, dedup=DedupMode.OFF))
    _check(_lines(tmp_path / "out"), ALWAYS)


def test_the_documented_examples_have_their_types() -> None:
    wrong = [f.name for f in FIELDS if not conforms(json.loads(f.example), f.type)]
    assert wrong == []


def test_names_are_unique_and_described() -> None:
    names = [f.name for f in FIELDS]
    assert len(names) == len(set(names))
    assert all(f.description.endswith(".") and f.when for f in FIELDS)


def test_the_type_check_can_fail() -> None:
    assert not conforms(True, integer)
    assert not conforms([1, "a"], list_of(integer))
    assert conforms([1, None], list_of(nullable(integer)))
    assert describe(list_of(nullable(integer))) == "list of integer, or null"
