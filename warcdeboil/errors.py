"""Exceptions raised by warcdeboil.

Every error the library raises on purpose derives from one root::

    WarcDeboilError
    ├── ConfigError           bad option, unusable path, missing optional dependency
    │   └── PlanError          inputs and outputs that cannot go together, or --resume over
    │                          outputs made with other options (a usage error)
    ├── InputError            an input file cannot be used at all (not an archive, unreadable)
    │   └── RandomAccessError  records cannot be read by offset (e.g. one gzip stream for the file)
    ├── RecordError           one record is malformed; the run goes on with the next one
    │   └── PayloadError      the HTTP payload cannot be decoded (chunking, gzip, brotli, limits)
    ├── WorkDirError          the work directory holds an index or profiles we cannot use
    └── JobError              a job failed: a worker's unexpected error (a full disk, a bug) or a
                              Spark job; the message names the stage, the file and the cause

Messages are one line, say which file and offset, and where possible what to do.
"""

from __future__ import annotations

__all__ = [
    "ConfigError",
    "InputError",
    "JobError",
    "PayloadError",
    "PlanError",
    "RandomAccessError",
    "RecordError",
    "WarcDeboilError",
    "WorkDirError",
]


class WarcDeboilError(Exception):
    """Root of every error warcdeboil raises on purpose."""


class ConfigError(WarcDeboilError):
    """An option or path given by the user cannot be used."""


class PlanError(ConfigError):
    """The inputs and the output directory given cannot go together: an output would overwrite
    an input or another output, or the output directory holds an input; or ``--resume`` would
    keep an output made with other options, or with no record of them."""


class InputError(WarcDeboilError):
    """An input file cannot be read as an archive."""


class RandomAccessError(InputError):
    """Records of this file cannot be addressed by offset."""


class RecordError(WarcDeboilError):
    """One record is malformed; reading can go on with the next one."""

    def __init__(self, message: str, *, path: str = "", offset: int | None = None) -> None:
        self.path = path
        self.offset = offset
        where = f"{path}" if path else ""
        if offset is not None:
            where = f"{where}@{offset}" if where else f"offset {offset}"
        super().__init__(f"{where}: {message}" if where else message)
        self.reason = message


class PayloadError(RecordError):
    """The HTTP payload of a record cannot be decoded."""


class WorkDirError(WarcDeboilError):
    """The work directory holds data we cannot use."""


class JobError(WarcDeboilError):
    """A job failed: a worker process met an error it did not expect (the disk is full, a
    path cannot be written, a bug), or a Spark task kept failing, or the cluster went away."""
