"""The index: binary entries and an external sort equal to an in-memory sort."""

from __future__ import annotations

import random
from array import array
from pathlib import Path

import pytest

from warcdeboil.page.dom import PageSignature
from warcdeboil.site.index import (
    IndexEntry,
    RunWriter,
    decode_entry,
    encode_entry,
    iter_partition,
    partition_of,
)


def entry(site: str, url: str, file_id: int = 0, offset: int = 0) -> IndexEntry:
    rng = random.Random(f"{site}{url}{offset}".encode("utf-8", "surrogateescape"))
    sig = PageSignature(
        array("Q", sorted(rng.getrandbits(64) for _ in range(rng.randint(0, 30)))),
        array("Q", [rng.getrandbits(64) for _ in range(3)]),
        array("I", [40, 50, 60]),
        rng.randint(0, 10_000),
        array("Q", sorted(rng.getrandbits(64) for _ in range(rng.randint(0, 40)))),
        array("Q", sorted(rng.getrandbits(64) for _ in range(rng.randint(0, 5)))),
    )
    return IndexEntry(site, url, file_id, offset, rng.randint(1, 1 << 20), f"http://{url}", sig)


def test_entry_round_trip() -> None:
    original = entry("exämple.com", "exämple.com/ü?x=\udcff", 3, 1 << 40)
    assert decode_entry(encode_entry(original)) == original


def make_entries(n: int) -> list[IndexEntry]:
    rng = random.Random(7)
    sites = [f"site{i}.example" for i in range(13)]
    return [
        entry(site := rng.choice(sites), f"{site}/page/{rng.randint(0, 50)}", rng.randint(0, 3),
              rng.randint(0, 1 << 30))
        for _ in range(n)
    ]


def sort_with(tmp: Path, entries: list[IndexEntry], run_bytes: int, partitions: int) -> list:
    by_file: dict[int, RunWriter] = {}
    for e in entries:
        writer = by_file.setdefault(e.file_id, RunWriter(tmp, e.file_id, partitions, run_bytes))
        writer.add(e)
    for writer in by_file.values():
        writer.flush()
    return [e for p in range(partitions) for e in iter_partition(tmp, p)]


@pytest.mark.parametrize("partitions", [1, 5])
def test_tiny_runs_sort_like_one_run(tmp_path: Path, partitions: int) -> None:
    entries = make_entries(500)
    one_run = sort_with(tmp_path / "big", entries, 1 << 30, partitions)
    tiny = sort_with(tmp_path / "tiny", entries, 1, partitions)
    assert len(list((tmp_path / "tiny").rglob("*.run"))) > 100
    assert tiny == one_run
    assert len(tiny) == len(entries)


def test_merging_in_levels_when_runs_outnumber_the_fan_in(tmp_path: Path) -> None:
    entries = make_entries(400)
    sort_with(tmp_path, entries, 1, 1)
    runs = sorted((tmp_path / "p0000").glob("*.run"))
    assert len(runs) > 4 * 4  # two levels of intermediate merges at a fan-in of 4
    merged = list(iter_partition(tmp_path, 0, fan_in=4))
    assert merged == list(iter_partition(tmp_path, 0))
    assert sorted((tmp_path / "p0000").iterdir()) == runs  # intermediate runs removed


def test_sorted_by_site_then_url(tmp_path: Path) -> None:
    entries = make_entries(300)
    result = sort_with(tmp_path, entries, 4096, 1)
    keys = [(e.site, e.url_key, e.file_id, e.offset) for e in result]
    assert keys == sorted(keys)


def test_each_site_lives_in_one_partition(tmp_path: Path) -> None:
    entries = make_entries(300)
    sort_with(tmp_path, entries, 4096, 4)
    for p in range(4):
        assert all(partition_of(e.site, 4) == p for e in iter_partition(tmp_path, p))
