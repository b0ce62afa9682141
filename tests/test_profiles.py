"""Profiles on disk: written per partition, read back by site."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from warcdeboil.errors import WorkDirError
from warcdeboil.site.fit import SiteProfile
from warcdeboil.site.index import partition_of
from warcdeboil.site.profiles import PROFILE_FORMAT, ProfileReader, ProfileWriter, profile_path


def test_profiles_round_trip(tmp_path: Path) -> None:
    profiles = [SiteProfile(f"s{i}.example", 10 + i, 9 + i, frozenset({i, 2**64 - 1 - i}))
                for i in range(20)]
    for part in range(4):
        with ProfileWriter(profile_path(tmp_path, part)) as writer:
            for profile in profiles:
                if partition_of(profile.site, 4) == part:
                    writer.add(profile)
    with ProfileReader(tmp_path, 4, cache_size=3) as reader:
        assert [reader.get(p.site) for p in profiles] == profiles
        assert reader.get("unknown.example") is None


def test_failed_write_leaves_no_file(tmp_path: Path) -> None:
    path = profile_path(tmp_path, 0)
    try:
        with ProfileWriter(path) as writer:
            writer.add(SiteProfile("a", 1, 1, frozenset({1})))
            raise RuntimeError("interrupted")
    except RuntimeError:
        pass
    assert list(tmp_path.iterdir()) == []


def test_profiles_of_another_format_are_refused(tmp_path: Path) -> None:
    # A store fitted before the digests changed meaning would match nothing: the apply says so.
    path = profile_path(tmp_path, 0)
    with ProfileWriter(path) as writer:
        writer.add(SiteProfile("a.example", 5, 4, frozenset({1})))
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version={PROFILE_FORMAT - 1:d}")
    db.commit()
    db.close()
    with ProfileReader(tmp_path, 1) as reader, pytest.raises(WorkDirError) as caught:
        reader.get("a.example")
    message = str(caught.value)
    assert str(path) in message and "fit them again" in message and "\n" not in message


def test_partition_without_profiles_has_no_file(tmp_path: Path) -> None:
    # An earlier fit left a profile of a.example in partition 0; this fit finds none there.
    path = profile_path(tmp_path, 0)
    with ProfileWriter(path) as writer:
        writer.add(SiteProfile("a.example", 5, 4, frozenset({1})))
    assert path.exists()
    with ProfileWriter(path):
        pass
    assert list(tmp_path.iterdir()) == []
    with ProfileReader(tmp_path, 1) as reader:
        assert reader.get("a.example") is None
