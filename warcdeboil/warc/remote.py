"""Where archives live: local paths, ``file://`` URLs, and any filesystem fsspec knows.

A *location* is a string: a local path, a ``file://`` URL (read as the local path it names), or a
URL such as ``s3://bucket/crawl/a.warc.gz`` or ``gs://…``, opened through fsspec when it is
installed (``s3a://`` and ``s3n://``, Hadoop's names, are read as ``s3://``). Credentials are the
filesystem's business: fsspec's backends read the usual environment and configuration files.

Remote files are read in one of two ways: streamed (a scan, or a rewrite of the whole file) with
large read-ahead blocks, or by range (records chosen from an index): each record is then one
ranged request for exactly its bytes, so reading a few records of a large file fetches those
records, not the file. Outputs go up in one piece under a temporary name
and are then moved to their final name (atomic where the filesystem renames atomically; on object
stores a copy, so a final name still only ever holds a complete file).

>>> is_remote("s3a://bucket/crawl/"), is_remote("file:///data/a.warc"), is_remote("crawl/a.warc")
(True, False, False)
>>> local_path("file:///data/a%20b.warc")
'/data/a b.warc'
>>> join("s3://bucket/out/", "sub/a.warc.gz")
's3://bucket/out/sub/a.warc.gz'
"""

from __future__ import annotations

import logging
import os
import re
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import unquote, urlsplit

from warcdeboil.errors import ConfigError, InputError, PlanError

__all__ = [
    "ARCHIVE_SUFFIXES",
    "discover",
    "exists",
    "filesystem",
    "has_archive_suffix",
    "is_remote",
    "join",
    "local_path",
    "open_remote",
    "remove",
    "under",
    "upload",
]

ARCHIVE_SUFFIXES = (".warc", ".warc.gz", ".warc.zst", ".arc", ".arc.gz")
NO_ARCHIVES = "no WARC or ARC files (.warc, .warc.gz, .warc.zst, .arc, .arc.gz) found"


def no_archives(where: Iterable[str | os.PathLike[str]]) -> ConfigError:
    """The error of a run given no archive: it names where it looked.

    >>> str(no_archives(["crawl/", "notes.txt"]))
    'no WARC or ARC files (.warc, .warc.gz, .warc.zst, .arc, .arc.gz) found in crawl/, notes.txt'
    """
    return ConfigError(f"{NO_ARCHIVES} in {', '.join(os.fspath(w) for w in where)}")
# Hadoop's names for S3, read by fsspec's s3fs as plain s3://.
SCHEME_ALIASES = {"s3a": "s3", "s3n": "s3"}
# Bytes fetched per request when streaming a remote file: large enough that request latency
# does not dominate (object stores answer in tens of milliseconds), small against a 1 GB WARC.
STREAM_BLOCK_BYTES = 8 << 20
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+)://")
log = logging.getLogger(__name__)
FSSPEC_HINT = (
    "pip install 'warcdeboil[spark]' (fsspec) and the filesystem's own package "
    "(s3fs for s3://, gcsfs for gs://)"
)


def scheme(location: str) -> str:
    """The URL scheme of a location, lower-cased ('' for a plain path)."""
    match = _SCHEME.match(location)
    return match.group(1).lower() if match else ""


def is_remote(location: str) -> bool:
    """True when the location must be opened through fsspec (a URL other than ``file://``)."""
    return scheme(location) not in ("", "file")


def local_path(location: str) -> str:
    """The local path a plain path or ``file://`` URL names."""
    if scheme(location) == "file":
        return unquote(urlsplit(location).path)
    return location


def join(location: str, relative: str) -> str:
    """``relative`` (a POSIX path) under the directory ``location``."""
    if is_remote(location):
        return location.rstrip("/") + "/" + relative
    return str(Path(local_path(location)) / relative)


def _fsspec_url(location: str) -> str:
    name = scheme(location)
    if name in SCHEME_ALIASES:
        return SCHEME_ALIASES[name] + location[len(name):]
    return location


def filesystem(location: str) -> tuple[Any, str]:
    """The fsspec filesystem of a URL and the path inside it."""
    try:
        import fsspec
    except ImportError:
        raise ConfigError(f"{location}: reading URLs needs fsspec: {FSSPEC_HINT}") from None
    try:
        return fsspec.core.url_to_fs(_fsspec_url(location))
    except (ImportError, ValueError) as exc:
        raise ConfigError(f"{location}: no filesystem for this URL ({exc}): {FSSPEC_HINT}") from exc


def open_remote(location: str, *, random_access: bool = False) -> BinaryIO:
    """Open a URL for reading: streaming with read-ahead, or (``random_access``) with every
    ``read`` one ranged request for exactly the bytes asked for."""
    fs, path = filesystem(location)
    cache = {"cache_type": "none"} if random_access else {
        "cache_type": "readahead", "block_size": STREAM_BLOCK_BYTES,
    }
    try:
        handle: BinaryIO = fs.open(path, "rb", **cache)
    except OSError as exc:
        raise InputError(f"{location}: cannot open ({exc.strerror or exc})") from exc
    return handle


def exists(location: str) -> bool:
    """Whether a file is at ``location``."""
    if not is_remote(location):
        return os.path.exists(local_path(location))
    fs, path = filesystem(location)
    return bool(fs.exists(path))


def remove(location: str) -> None:
    """Remove the file at ``location`` (a path or a URL), when there is one."""
    if not is_remote(location):
        Path(local_path(location)).unlink(missing_ok=True)
        return
    fs, path = filesystem(location)
    try:
        if fs.exists(path):
            fs.rm_file(path)
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise InputError(f"{location}: cannot remove ({exc.strerror or exc})") from exc


def upload(local: Path, location: str) -> None:
    """Put a finished local file at ``location``: first under a temporary name, then moved, so
    that the final name never holds part of a file."""
    fs, path = filesystem(location)
    parent, _, name = path.rpartition("/")
    temporary = f"{parent}/.{name}.{uuid.uuid4().hex}.part" if parent else f".{name}.part"
    try:
        if parent:
            fs.makedirs(parent, exist_ok=True)
        fs.put_file(str(local), temporary)
        fs.mv(temporary, path)
    except OSError as exc:
        raise InputError(f"{location}: cannot write ({exc.strerror or exc})") from exc


def _remote_archives(location: str) -> list[tuple[str, str]]:
    fs, path = filesystem(location)
    prefix = scheme(location) + "://"
    try:
        if fs.isdir(path):
            root = path.rstrip("/")
            found = []
            for child in sorted(fs.find(root)):
                if has_archive_suffix(child):
                    found.append((prefix + child, child[len(root):].lstrip("/")))
            return found
        if fs.isfile(path):
            return [(location, path.rstrip("/").rpartition("/")[2])]
    except OSError as exc:
        raise ConfigError(f"{location}: cannot list ({exc.strerror or exc})") from exc
    raise ConfigError(f"{location}: no such file or directory")


def _local_archives(location: str, skip: str | None) -> list[tuple[str, str]]:
    path = Path(local_path(location))
    if path.is_dir():
        return [
            (str(child), child.relative_to(path).as_posix())
            for child in sorted(path.rglob("*"))
            if child.is_file() and has_archive_suffix(child.name)
            and not (skip and under(os.path.realpath(child), skip))
        ]
    if path.is_file():
        return [(str(path), path.name)]
    raise ConfigError(f"{location}: no such file or directory")


def has_archive_suffix(name: str) -> bool:
    """Whether a file name ends like an archive (case-insensitively), as the search wants."""
    return name.lower().endswith(ARCHIVE_SUFFIXES)


def under(path: str, directory: str) -> bool:
    """Whether the real path ``path`` is ``directory`` or lies under it (both real paths)."""
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


def _identity(location: str) -> object:
    """What makes two locations one file: device and inode for a local file, else the URL."""
    if is_remote(location):
        return _fsspec_url(location)
    try:
        stat = os.stat(local_path(location))
    except OSError:
        return location
    return stat.st_dev, stat.st_ino


def _is_link(location: str) -> bool:
    return not is_remote(location) and os.path.islink(local_path(location))


def discover(locations: Iterable[str], exclude: str | None = None) -> list[tuple[str, str]]:
    """Archive files named or found (recursively) under the given locations, as (location,
    name relative to the output directory) pairs in a stable order.

    A file reached twice (named twice, or through a link) is listed once; nothing under the
    local directory ``exclude`` (the output directory) is taken from a directory's search; two
    files of the same relative name (they would share an output) are refused, both named.
    """
    skip = None
    if exclude is not None and not is_remote(exclude):
        skip = os.path.realpath(local_path(exclude))
    found: list[tuple[str, str]] = []
    locations = list(locations)
    for location in locations:
        if is_remote(location):
            found += _remote_archives(location)
        elif (skip and exclude and os.path.exists(local_path(location))
              and under(os.path.realpath(local_path(location)), skip)):
            raise PlanError(f"{exclude}: the output directory is or holds the input {location}; "
                            "choose an output directory outside the inputs")
        else:
            found += _local_archives(location, skip)
    if not found:
        raise no_archives(locations)
    kept: list[tuple[str, str]] = []
    identities = [_identity(location) for location, _ in found]
    chosen: dict[object, int] = {}  # a file reached twice: a name that is not a symlink wins
    for i, identity in enumerate(identities):
        if identity not in chosen or (
                _is_link(found[chosen[identity]][0]) and not _is_link(found[i][0])):
            chosen[identity] = i
    names: dict[str, str] = {}
    for i, (identity, (location, rel)) in enumerate(zip(identities, found, strict=True)):
        if chosen[identity] != i:
            log.warning("%s: the same file as %s, read once", location,
                        found[chosen[identity]][0])
            continue
        if rel in names:
            raise PlanError(f"{names[rel]} and {location} would both be written to the same "
                            "output; clean them in two runs, or to two output directories")
        names[rel] = location
        kept.append((location, rel))
    return kept
