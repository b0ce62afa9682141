"""Site profiles on disk: written by the fit, read back one site at a time by the apply.

Profiles live in SQLite files, one per index partition (so fit workers never write the same file),
keyed by site. Site keys come from archive content, so they are only ever *values* in a table,
never parts of a file name. Only a small LRU of profiles is held in memory while applying.
"""

from __future__ import annotations

import sqlite3
from array import array
from collections import OrderedDict
from pathlib import Path

from warcdeboil.errors import WorkDirError

from .fit import SiteProfile
from .index import INDEX_FORMAT, partition_of

__all__ = [
    "PROFILE_FORMAT",
    "ProfileReader",
    "ProfileRow",
    "ProfileWriter",
    "decode_hashes",
    "encode_hashes",
    "profile_from_row",
    "profile_path",
    "profile_row",
]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS profiles (
    site TEXT PRIMARY KEY,
    pages INTEGER NOT NULL,
    pairs INTEGER NOT NULL,
    hashes BLOB NOT NULL,
    repeated BLOB NOT NULL,
    slots BLOB NOT NULL
)
"""


# What a profile's digests are of follows the index's (they are digests the index holds): a store
# keeps the format it was fitted under, and one fitted under another is refused, not read as if
# it matched nothing.
PROFILE_FORMAT = INDEX_FORMAT


def encode_hashes(hashes: frozenset[int]) -> bytes:
    """A profile's hashes as stored: sorted 64-bit little-endian integers."""
    return array("Q", sorted(hashes)).tobytes()


def decode_hashes(blob: bytes) -> frozenset[int]:
    return frozenset(array("Q", blob))


ProfileRow = tuple[str, int, int, bytes, bytes, bytes]
"""``(site, pages, pairs, template, repeated, slots)``: one site's profile as stored, digests
encoded (a row of the profiles table, and of the Spark engine's profiles)."""


def profile_row(profile: SiteProfile) -> ProfileRow:
    return (profile.site, profile.pages, profile.pairs, encode_hashes(profile.template),
            encode_hashes(profile.repeated), encode_hashes(profile.template_slots))


def profile_from_row(row: ProfileRow) -> SiteProfile:
    site, pages, pairs, hashes, repeated, slots = row
    return SiteProfile(site, pages, pairs, decode_hashes(hashes), decode_hashes(repeated),
                       decode_hashes(slots))


def profile_path(directory: Path, partition: int) -> Path:
    return directory / f"p{partition:04d}.sqlite"


class ProfileWriter:
    """Writes the profiles of one partition (a context manager; commits on a clean exit).

    The database is made at the first profile: a partition without one gets no file (readers
    take a missing partition for one without profiles), and a file an earlier fit left at its
    path goes. Most of the 64 partitions of a small run hold no site: making, filling and
    committing an empty database for each was about a tenth of a 71-page WARC run's CPU.
    """

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._tmp = path.with_name(path.name + ".tmp")
        self._path = path
        self._tmp.unlink(missing_ok=True)
        self._db: sqlite3.Connection | None = None

    def _opened(self) -> sqlite3.Connection:
        if self._db is None:
            self._db = sqlite3.connect(self._tmp)
            self._db.execute("PRAGMA journal_mode=OFF")
            self._db.execute("PRAGMA synchronous=OFF")
            self._db.execute(_SCHEMA)
            self._db.execute(f"PRAGMA user_version={PROFILE_FORMAT:d}")
        return self._db

    def add(self, profile: SiteProfile) -> None:
        self._opened().execute("INSERT OR REPLACE INTO profiles VALUES (?, ?, ?, ?, ?, ?)",
                               profile_row(profile))

    def __enter__(self) -> ProfileWriter:
        return self

    def __exit__(self, exc_type: object, *_: object) -> None:
        if self._db is None:
            if exc_type is None:
                self._path.unlink(missing_ok=True)  # no profile: none of an earlier fit stays
            return
        if exc_type is None:
            self._db.commit()
            self._db.close()
            self._tmp.replace(self._path)  # appears under its final name only when complete
        else:
            self._db.close()
            self._tmp.unlink(missing_ok=True)


class ProfileReader:
    """Looks up site profiles by site key, caching the most recently used ones."""

    def __init__(self, directory: Path, partitions: int, cache_size: int = 256) -> None:
        self._directory = directory
        self._partitions = partitions
        self._cache: OrderedDict[str, SiteProfile | None] = OrderedDict()
        self._cache_size = cache_size
        self._dbs: dict[int, sqlite3.Connection | None] = {}

    def _db(self, partition: int) -> sqlite3.Connection | None:
        if partition not in self._dbs:
            path = profile_path(self._directory, partition)
            if path.exists():
                try:
                    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
                    found = db.execute("PRAGMA user_version").fetchone()[0]
                except sqlite3.Error as exc:
                    raise WorkDirError(f"{path}: cannot open profiles ({exc})") from exc
                if found != PROFILE_FORMAT:
                    db.close()
                    raise WorkDirError(
                        f"{path}: profiles fitted by another version of warcdeboil (format "
                        f"{found}, this version's is {PROFILE_FORMAT}): fit them again"
                    )
                self._dbs[partition] = db
            else:
                self._dbs[partition] = None
        return self._dbs[partition]

    def get(self, site: str) -> SiteProfile | None:
        """The profile of ``site``, or None when nothing was learned for it."""
        if site in self._cache:
            self._cache.move_to_end(site)
            return self._cache[site]
        profile = self._load(site)
        self._cache[site] = profile
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return profile

    def _load(self, site: str) -> SiteProfile | None:
        db = self._db(partition_of(site, self._partitions))
        if db is None:
            return None
        try:
            row = db.execute(
                "SELECT site, pages, pairs, hashes, repeated, slots FROM profiles WHERE site = ?",
                (site,),
            ).fetchone()
        except sqlite3.Error as exc:
            raise WorkDirError(f"cannot read the profile of {site!r} ({exc})") from exc
        return None if row is None else profile_from_row(row)

    def close(self) -> None:
        for db in self._dbs.values():
            if db is not None:
                db.close()
        self._dbs.clear()

    def __enter__(self) -> ProfileReader:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
