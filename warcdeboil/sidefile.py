"""The work directory's binary side files: written whole or not at all, read in step with
their input, their damage one line naming the file."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Generic, TypeVar

from .errors import WorkDirError

__all__ = ["InStep", "SideFileWriter", "reading"]

W = TypeVar("W", bound="SideFileWriter")
T = TypeVar("T")


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


@contextmanager
def reading(path: Path, what: str) -> Iterator[BinaryIO]:
    """A side file opened to read (``what`` it holds names it in errors): a file that cannot be
    opened, or whose records do not unpack (``struct.error``, ``ValueError``), is one
    :class:`WorkDirError` line naming it."""
    try:
        fh = open(path, "rb", buffering=1 << 16)  # noqa: SIM115 - closed below
    except OSError as exc:
        raise WorkDirError(f"{path}: cannot read the {what} ({exc.strerror})") from exc
    with fh:
        try:
            yield fh
        except (struct.error, ValueError) as exc:
            raise WorkDirError(
                f"{path}: damaged {what} ({exc}): delete the work directory"
            ) from exc


class InStep(Generic[T]):
    """A side file's records read in step with its input: ``records`` are ``(ordinal, item)``
    in rising order, and :meth:`get` asks for ordinals in rising order."""

    def __init__(self, records: Iterator[tuple[int, T]]) -> None:
        self._records = records
        self._pending = next(records, None)

    def get(self, ordinal: int) -> T | None:
        """The item of the page at ``ordinal``, or None (the file does not list it)."""
        while self._pending is not None and self._pending[0] < ordinal:
            self._pending = next(self._records, None)
        if self._pending is not None and self._pending[0] == ordinal:
            return self._pending[1]
        return None
