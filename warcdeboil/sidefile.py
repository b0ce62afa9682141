"""The work directory's binary side files, written whole or not at all."""

from __future__ import annotations

from pathlib import Path
from typing import BinaryIO, TypeVar

__all__ = ["SideFileWriter"]

W = TypeVar("W", bound="SideFileWriter")


class SideFileWriter:
    """Base of the writers of one side file (a page store, a cleaned store, duplicate verdicts):
    written under ``NAME.tmp``, the file appears under its own name only when the writer, a
    context manager, is left without an error; else the partial file is removed."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._path = path
        self._tmp = path.with_name(path.name + ".tmp")
        self._fh: BinaryIO = open(self._tmp, "wb")  # noqa: SIM115 - closed in __exit__

    def __enter__(self: W) -> W:
        return self

    def __exit__(self, exc_type: object, *_: object) -> None:
        self._fh.close()
        if exc_type is None:
            self._tmp.replace(self._path)
        else:
            self._tmp.unlink(missing_ok=True)
