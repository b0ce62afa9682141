"""A run's plan, made before the first record is read: every input and every output, checked.

Nothing the user gave may be overwritten or silently lost, so a run starts only when:

* every input is a distinct file (one reached twice — named twice, or through a symlink or a
  hard link — is read once);
* the output directory is not an input and holds none (one *inside* an input directory is left
  out of that directory's search, so earlier outputs are never taken for inputs);
* no output is an input, and no two inputs share an output;
* the output directory can be written (checked before the scan, not after it).

Output names (:func:`output_name`) are distinct by construction. An input named ``STEM`` +
``.warc`` + the output's compression suffix (``a.warc.gz`` written as gzip) drops that suffix;
every other input keeps its whole name; the format's suffix and the compression suffix follow::

    a.warc.gz (gzip out)  -> a.warc.gz, a.warc.wet.gz, a.jsonl.gz, a.md.jsonl.gz
    a.arc.gz  (gzip out)  -> a.arc.gz.warc.gz, a.arc.gz.jsonl.gz
    a.warc    (gzip out)  -> a.warc.warc.gz, a.warc.jsonl.gz

Why no two inputs of a directory can meet: the compression suffix and the format's suffix are
read back from the end of an output name, which leaves either a stem without an archive suffix
(only a dropped ``.warc`` + compression makes one, so the input is that stem plus it) or a
whole input name (which ends in an archive suffix): each output name has one input.
"""

from __future__ import annotations

import logging
import os
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from warcdeboil.errors import ConfigError, PlanError
from warcdeboil.output.formats import OutputFormat
from warcdeboil.warc.compression import Codec
from warcdeboil.warc.remote import has_archive_suffix, is_remote, local_path, no_archives, under

__all__ = [
    "FORMAT_SUFFIXES",
    "PlannedOutput",
    "check_writable",
    "discover_local",
    "holds_input",
    "local_output_dir",
    "output_codec",
    "output_name",
    "plan_outputs",
]

log = logging.getLogger(__name__)

FORMAT_SUFFIXES = {
    OutputFormat.WARC: ".warc",
    OutputFormat.TEXT: ".warc.wet",
    OutputFormat.JSONL: ".jsonl",
    OutputFormat.MARKDOWN: ".md.jsonl",
}


def output_codec(fmt: OutputFormat, compress: Codec | None, actual: Callable[[], Codec]) -> Codec:
    """The compression of one output: the one asked for, else (``compress`` None: auto) WARC and
    WET follow what the input *is* compressed with (``actual()``, from its first bytes, whatever
    its name says) and JSONL is gzip. JSONL is one gzip stream: zstd is for WARC records."""
    if fmt in (OutputFormat.JSONL, OutputFormat.MARKDOWN):
        return Codec.NONE if compress is Codec.NONE else Codec.GZIP
    return compress if compress is not None else actual()


def output_name(rel: str, fmt: OutputFormat, codec: Codec) -> str:
    """The output's name relative to the output directory (POSIX), for an input whose name
    relative to its input directory is ``rel`` (see the module's docstring for the rule).

    >>> output_name("2024/a.warc.gz", OutputFormat.TEXT, Codec.GZIP)
    '2024/a.warc.wet.gz'
    >>> output_name("a.arc.gz", OutputFormat.WARC, Codec.GZIP)
    'a.arc.gz.warc.gz'
    >>> output_name("a.warc.gz", OutputFormat.WARC, Codec.NONE)
    'a.warc.gz.warc'
    """
    parent, _, name = rel.rpartition("/")
    stem = name
    dropped = ".warc" + codec.suffix
    if name.endswith(dropped) and not has_archive_suffix(name[: -len(dropped)]):
        stem = name[: -len(dropped)]
    output = f"{stem}{FORMAT_SUFFIXES[fmt]}{codec.suffix}"
    return f"{parent}/{output}" if parent else output


def local_output_dir(location: str | os.PathLike[str]) -> Path:
    """The output directory of a local run: a path, or the path a ``file://`` URL names. Other
    URLs are refused: only the Spark engine writes through fsspec."""
    text = os.fspath(location)
    if is_remote(text):
        raise ConfigError(f"{text}: the local engine writes to local paths; URLs are written "
                          "by --engine spark")
    return Path(local_path(text))


def _file_key(path: Path) -> tuple[int, int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_dev, stat.st_ino


def discover_local(
    paths: Iterable[str | os.PathLike[str]], exclude: Path | None = None
) -> list[tuple[Path, Path]]:
    """Archive files named or found (recursively) under the given paths, as (file, name relative
    to the output directory) pairs in a stable order. Nothing under ``exclude`` (the output
    directory) is taken from a directory's search; a file reached twice is listed once."""
    skip = os.path.realpath(exclude) if exclude is not None else None
    found: list[tuple[Path, Path]] = []
    paths = list(paths)
    for raw in paths:
        path = Path(local_path(os.fspath(raw)))
        if not path.exists():
            raise ConfigError(f"{path}: no such file or directory")
        if skip is not None and exclude is not None and under(os.path.realpath(path), skip):
            raise holds_input(exclude, path)
        if path.is_dir():
            for child in sorted(path.rglob("*")):
                if not (child.is_file() and has_archive_suffix(child.name)):
                    continue
                if skip is not None and under(os.path.realpath(child), skip):
                    continue
                found.append((child, child.relative_to(path)))
        elif path.is_file():
            found.append((path, Path(path.name)))
        else:
            raise ConfigError(f"{path}: no such file or directory")
    if not found:
        raise no_archives(paths)
    return _once_each(found)


def holds_input(out_dir: str | os.PathLike[str], path: str | os.PathLike[str]) -> PlanError:
    return PlanError(f"{os.fspath(out_dir)}: the output directory is or holds the input "
                     f"{os.fspath(path)}; choose an output directory outside the inputs")


def _once_each(found: list[tuple[Path, Path]]) -> list[tuple[Path, Path]]:
    """The inputs without a file met again (same device and inode: a path given twice, a
    symlink, a hard link): a name that is not a symlink wins, else the first name met."""
    keys = [_file_key(path) for path, _ in found]
    chosen: dict[tuple[int, int], int] = {}  # file -> the index of the name kept
    for i, key in enumerate(keys):
        if key is not None and (key not in chosen or (
                found[chosen[key]][0].is_symlink() and not found[i][0].is_symlink())):
            chosen[key] = i
    kept = []
    for i, (key, (path, rel)) in enumerate(zip(keys, found, strict=True)):
        if key is not None and chosen[key] != i:
            log.warning("%s: the same file as %s, read once", path, found[chosen[key]][0])
            continue
        kept.append((path, rel))
    return kept


@dataclass(frozen=True, slots=True)
class PlannedOutput:
    """One input and where its output goes."""

    path: Path
    rel: Path
    output: Path
    codec: Codec


def input_codec(path: Path) -> Codec:
    """The codec of an input from its first bytes (plain when it cannot be opened: reading it
    will say why)."""
    from warcdeboil.warc.compression import detect_codec

    try:
        with open(path, "rb") as fh:
            return detect_codec(fh.read(8))
    except OSError:
        return Codec.NONE


def plan_outputs(
    found: Sequence[tuple[Path, Path]], out_dir: Path, fmt: OutputFormat, compress: Codec | None
) -> list[PlannedOutput]:
    """Every input's output, checked: the output directory neither is nor holds an input, no
    output is an input, no two inputs share an output. A refusal is one line naming the two
    paths."""
    out_real = os.path.realpath(out_dir)
    inputs: dict[str, Path] = {}
    for path, _ in found:
        real = os.path.realpath(path)
        if under(real, out_real):
            raise holds_input(out_dir, path)
        inputs[real] = path
    planned: list[PlannedOutput] = []
    taken: dict[str, Path] = {}
    for path, rel in found:
        codec = output_codec(fmt, compress, partial(input_codec, path))
        output = out_dir / output_name(rel.as_posix(), fmt, codec)
        real = os.path.realpath(output)
        if real in inputs:
            raise PlanError(f"{output}: the output of {path} would overwrite the input "
                              f"{inputs[real]}")
        if real in taken:
            raise PlanError(f"{taken[real]} and {path} would both be written to {output}; "
                              "clean them in two runs, or to two output directories")
        taken[real] = path
        planned.append(PlannedOutput(path, rel, output, codec))
    return planned


def check_writable(out_dir: Path) -> None:
    """Make the output directory and write a file in it, now rather than after the scan."""
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=out_dir, prefix=".warcdeboil-", suffix=".check"):
            pass
    except OSError as exc:
        raise ConfigError(f"{out_dir}: cannot write the outputs here "
                          f"({exc.strerror or exc})") from None
