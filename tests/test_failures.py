"""Errors a user can act on: a full disk, a path that cannot be written, an error inside a
worker process are one line on stderr and exit status 1; the traceback only with -v."""

from __future__ import annotations

import os
import random
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import http_response, synthetic_crawl, warc_record
from typer.testing import CliRunner

from warcdeboil.cli import app
from warcdeboil.errors import JobError
from warcdeboil.run import local as pipeline
from warcdeboil.warc.compression import Codec

runner = CliRunner()

# Bytes a file may grow to: more than any file of the work directory, less than an output.
FILE_LIMIT = 100_000


@pytest.fixture
def crawl(tmp_path: Path, write_archive) -> Path:
    """Two inputs whose outputs each hold a 300 kB record that does not compress."""
    src = tmp_path / "in"
    src.mkdir()
    blob = random.Random(1).randbytes(300_000)
    for name in ("a", "b"):
        records = synthetic_crawl() + [warc_record(
            "response", f"http://{name}.example/blob",
            http_response(blob, [("Content-Type", "application/octet-stream")]))]
        write_archive(src / f"{name}.warc.gz", records, Codec.GZIP)
    return src


def _files_up_to(limit: int) -> Callable[[], None]:
    # Python ignores SIGXFSZ, so a write past the limit fails with EFBIG, as one past the end of
    # a full disk fails with ENOSPC: the same OSError from the same write.
    return lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


@pytest.mark.parametrize("workers", ["1", "2"])  # in this process, and in worker processes
def test_a_full_disk_while_writing_is_one_line_naming_the_output(
    crawl: Path, tmp_path: Path, workers: str
) -> None:
    out, tmp = tmp_path / "out", tmp_path / "tmp"
    tmp.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "warcdeboil", "clean", str(crawl), "-o", str(out), "-j", workers],
        capture_output=True, text=True, timeout=120, preexec_fn=_files_up_to(FILE_LIMIT),
        env={**os.environ, "TMPDIR": str(tmp)},
    )
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0] in (f"warcdeboil: error: write {out / name}.warc.gz: File too large"
                        for name in ("a", "b"))
    assert list(out.iterdir()) == []  # no partial output, under any name
    assert list(tmp.iterdir()) == []  # the temporary work directory went too


def test_a_full_disk_in_the_scan_names_the_input_and_the_work_directory(
    crawl: Path, tmp_path: Path
) -> None:
    out, work = tmp_path / "out", tmp_path / "work"
    done = subprocess.run(
        [sys.executable, "-m", "warcdeboil", "clean", str(crawl), "-o", str(out), "-j", "2",
         "--work-dir", str(work)],
        capture_output=True, text=True, timeout=120, preexec_fn=_files_up_to(1000),
    )
    assert done.returncode == 1
    assert done.stderr in (
        f"warcdeboil: error: scan {crawl / name}.warc.gz (work directory {work}): "
        "File too large\n" for name in ("a", "b")
    )
    assert list(out.iterdir()) == []  # made and tried before the scan: empty
    assert not (work / "index.json").exists()  # no index that --resume would take as finished


def test_a_work_directory_that_cannot_be_made_is_one_line(crawl: Path, tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    result = runner.invoke(app, ["clean", str(crawl), "-o", str(tmp_path / "out"),
                                 "--work-dir", str(blocked / "work")])
    assert result.exit_code == 1
    assert result.output == f"warcdeboil: error: {blocked / 'work'}: Not a directory\n"


def broken_apply(job: object, report: object) -> object:
    raise ValueError("a bug\nits second line")


def test_an_unexpected_error_in_a_worker_is_one_line_naming_the_file(
    crawl: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pipeline, "apply_file", broken_apply)
    out = tmp_path / "out"
    result = runner.invoke(app, ["clean", str(crawl), "-o", str(out), "-j", "2"])
    assert result.exit_code == 1
    assert result.output in (
        f"warcdeboil: error: write {out / name}.warc.gz: ValueError: a bug\n" for name in "ab"
    )

    result = runner.invoke(app, ["clean", str(crawl), "-o", str(out), "-j", "2", "-v"])
    assert isinstance(result.exception, JobError)  # -v: the traceback, down to the worker's
    assert isinstance(result.exception.__cause__, ValueError)


@pytest.mark.spark
@pytest.mark.parametrize(("master", "reason"), [
    ("bogus-master", "Spark did not start: Master must either be yarn or start with spark, "
                     "k8s, or local"),  # refused by spark-submit in the JVM
    ("spark://127.0.0.1:1", "cannot reach the master (127.0.0.1:1: Connection refused)"),
])
def test_a_spark_master_that_cannot_be_used_is_one_line(
    crawl: Path, tmp_path: Path, master: str, reason: str
) -> None:
    pytest.importorskip("pyspark", reason="the Spark engine's tests need pip install '.[spark]'")
    done = subprocess.run(
        [sys.executable, "-m", "warcdeboil", "clean", str(crawl), "-o", str(tmp_path / "out"),
         "--engine", "spark", "--spark-master", master],
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 1
    assert done.stderr == f"warcdeboil: error: --spark-master {master}: {reason}\n"
