"""``--excluded FILE``: the pages ``--drop-flagged`` left out of a run's outputs, one JSON line
each (:func:`warcdeboil.output.quality.excluded_line`), in the order of the inputs and of their
records, whichever engine ran and however many workers: each input's job lists its own, and
the driver puts them together."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path

from warcdeboil.errors import ConfigError

__all__ = ["check_excluded", "excluded_parts", "gather_excluded", "remove_excluded_parts"]


def check_excluded(target: str) -> None:
    """Before any record is read: the excluded file's directory must exist (a usage error)."""
    parent = Path(target).parent
    if not parent.is_dir():
        raise ConfigError(f"--excluded {target}: no directory {parent}")
    if Path(target).is_dir():
        raise ConfigError(f"--excluded {target}: is a directory")


def excluded_parts(count: int) -> tuple[Path, list[str]]:
    """A temporary directory and the file each of ``count`` jobs lists its pages in."""
    where = Path(tempfile.mkdtemp(prefix="warcdeboil-excluded-"))
    return where, [str(where / f"{i:06d}.jsonl") for i in range(count)]


def gather_excluded(target: str, parts: Iterable[bytes | str]) -> int:
    """Write ``target`` atomically from the jobs' lists (their bytes, or files a job may not
    have written), in order; the number of pages listed."""
    tmp = f"{target}.part-{os.getpid()}"
    pages = 0
    try:
        with open(tmp, "wb") as out:
            for part in parts:
                if isinstance(part, bytes):
                    out.write(part)
                    pages += part.count(b"\n")
                elif os.path.exists(part):
                    with open(part, "rb") as fh:
                        data = fh.read()
                    out.write(data)
                    pages += data.count(b"\n")
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return pages


def remove_excluded_parts(where: Path) -> None:
    shutil.rmtree(where, ignore_errors=True)
