"""SIGTERM and SIGINT stop a real run within seconds: workers end, partial outputs and the
temporary work directory go, one line says what was finished, and --resume finishes the job."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import http_response, outputs_of, site_pages, warc_record

from warcdeboil.run.signals import Interrupted, held, stop_on_signals
from warcdeboil.warc.compression import Codec
from warcdeboil.warc.reader import iter_records
from warcdeboil.warc.writer import WarcWriter

pytestmark = pytest.mark.slow

INPUTS = 4
PAGES = 300  # a site's pages: what the scan parses
BLOBS = 40  # 1 MiB records the write stage compresses (--compress gzip): seconds per input
STOPPED_WITHIN = 5.0  # seconds from the signal to the exit


@pytest.fixture(scope="module")
def big_crawl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Inputs that take seconds in the scan and in the write, with two workers."""
    src = tmp_path_factory.mktemp("big") / "in"
    src.mkdir()
    blob = random.Random(22).randbytes(1 << 20)
    for n in range(INPUTS):
        with open(src / f"big-{n}.warc", "wb") as fh:
            writer = WarcWriter(fh, Codec.NONE)
            for url, html in site_pages(f"site{n}.example", PAGES):
                page = http_response(html.encode())
                writer.write("WARC/1.0", *warc_record("response", url, page))
            for i in range(BLOBS):
                body = http_response(blob[i:] + blob[:i],
                                     [("Content-Type", "application/octet-stream")])
                writer.write("WARC/1.0", *warc_record(
                    "response", f"http://site{n}.example/blob/{i}", body))
    return src


def start(args: list[str], tmp: Path) -> subprocess.Popen[str]:
    """``warcdeboil clean`` as a real process in a session of its own (its own process group),
    its temporary files under ``tmp``."""
    tmp.mkdir(exist_ok=True)
    env = {**os.environ, "TMPDIR": str(tmp)}
    return subprocess.Popen(
        [sys.executable, "-m", "warcdeboil", "clean", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        start_new_session=True,
    )


def wait_for(condition: Callable[[], bool], process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 180
    while not condition():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the run never reached the stage"
        time.sleep(0.02)


def group_members(pgid: int) -> list[int]:
    """Live processes (zombies aside) of a process group, from /proc."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # state, ppid, pgrp, ...
        if int(fields[2]) == pgid and fields[0] != "Z":
            members.append(int(entry.name))
    return members


def children(pid: int) -> list[int]:
    """The running process's children, from /proc (workers and the queue's manager)."""
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return found


def stop(process: subprocess.Popen[str], sig: signal.Signals, *, group: bool = False
         ) -> tuple[int, str, float]:
    """Send ``sig`` (to the process, or to its group as a terminal does with Ctrl-C); exit
    status, stderr and seconds until it exited. No process of its group may outlive it."""
    workers = children(process.pid)
    sent = time.monotonic()
    if group:
        os.killpg(process.pid, sig)
    else:
        process.send_signal(sig)
    _, stderr = process.communicate(timeout=60)
    took = time.monotonic() - sent
    time.sleep(0.2)  # ended children are reaped by now
    left = group_members(process.pid)
    if left:
        os.killpg(process.pid, signal.SIGKILL)
    assert left == [], f"processes left behind: {left} (workers were {workers})"
    return process.returncode, stderr, took


def finished(out: Path) -> list[str]:
    return [p.name for p in outputs_of(out)] if out.exists() else []


def stopped_during_the_write(run: subprocess.Popen[str], sig: signal.Signals, status: int,
                             out: Path, tmp: Path, *, group: bool = False) -> list[str]:
    """Stops ``run`` with ``sig`` and checks it exited at once with ``status``, said how many
    outputs it finished and left neither partial outputs nor a work directory: the finished."""
    code, stderr, took = stop(run, sig, group=group)
    done = finished(out)
    assert code == status
    assert stderr.splitlines() == [
        f"warcdeboil: interrupted ({sig.name}) during write: {len(done)} of {INPUTS} outputs "
        "finished, no partial ones left; work directory removed"
    ]
    assert took < STOPPED_WITHIN
    assert all(not name.endswith(".part") for name in done)
    assert list(tmp.iterdir()) == []
    return done


def test_sigterm_during_the_scan(big_crawl: Path, tmp_path: Path) -> None:
    out, tmp = tmp_path / "out", tmp_path / "tmp"
    run = start([str(big_crawl), "-o", str(out), "-j", "2"], tmp)
    wait_for(lambda: any(tmp.glob("warcdeboil-*/pages/*")), run)
    assert len(children(run.pid)) == 3
    status, stderr, took = stop(run, signal.SIGTERM)
    assert status == 143
    assert stderr.splitlines() == [
        "warcdeboil: interrupted (SIGTERM) during scan: no output written; "
        "work directory removed"
    ]
    assert took < STOPPED_WITHIN
    assert finished(out) == []
    assert list(tmp.iterdir()) == []  # the work directory, and multiprocessing's files


@pytest.mark.parametrize("workers", ["1", "2"])  # in this process, and in worker processes
def test_sigterm_during_the_write(big_crawl: Path, tmp_path: Path, workers: str) -> None:
    out, tmp = tmp_path / "out", tmp_path / "tmp"
    run = start([str(big_crawl), "-o", str(out), "-j", workers, "--compress", "gzip"], tmp)
    wait_for(lambda: any(p.suffix == ".gz" for p in out.glob("*")), run)
    assert len(children(run.pid)) == (0 if workers == "1" else 3)  # 2 workers, 1 queue manager
    done = stopped_during_the_write(run, signal.SIGTERM, 143, out, tmp)
    assert 1 <= len(done) < INPUTS
    for name in done:  # a finished output is whole: every record reads back
        assert sum(1 for _ in iter_records(out / name)) == 1 + PAGES + BLOBS  # warcinfo


def test_ctrl_c_in_a_terminal_during_the_write(big_crawl: Path, tmp_path: Path) -> None:
    """A terminal sends SIGINT to every process of the group, workers included."""
    out, tmp = tmp_path / "out", tmp_path / "tmp"
    run = start([str(big_crawl), "-o", str(out), "-j", "2", "--compress", "gzip"], tmp)
    wait_for(lambda: any(p.name.endswith(".part") for p in out.glob(".*")), run)
    stopped_during_the_write(run, signal.SIGINT, 130, out, tmp, group=True)


def test_resume_after_sigterm_writes_what_an_uninterrupted_run_writes(
    big_crawl: Path, tmp_path: Path
) -> None:
    args = [str(big_crawl), "-j", "2", "--compress", "gzip", "-q"]
    reference = tmp_path / "reference"
    whole = subprocess.run([sys.executable, "-m", "warcdeboil", "clean", *args,
                            "-o", str(reference)], capture_output=True, text=True, timeout=600)
    assert whole.returncode == 0, whole.stderr

    out, work, tmp = tmp_path / "out", tmp_path / "work", tmp_path / "tmp"
    run = start([*args, "-o", str(out), "--work-dir", str(work)], tmp)
    wait_for(lambda: any(p.suffix == ".gz" for p in out.glob("*")), run)
    status, stderr, _ = stop(run, signal.SIGTERM)
    done = finished(out)
    assert status == 143
    assert stderr.splitlines() == [
        f"warcdeboil: interrupted (SIGTERM) during write: {len(done)} of {INPUTS} outputs "
        f"finished, no partial ones left; work directory kept: {work} (run again with --resume)"
    ]
    assert (work / "index.json").exists()

    resumed = subprocess.run(
        [sys.executable, "-m", "warcdeboil", "clean", *args, "-o", str(out), "--work-dir",
         str(work), "--resume", "--json"], capture_output=True, text=True, timeout=600,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert f'"resumed": {len(done)}' in resumed.stdout
    assert finished(out) == finished(reference)
    for name in finished(reference):
        assert (out / name).read_bytes() == (reference / name).read_bytes(), name


def test_a_signal_while_held_waits_and_a_second_one_is_ignored() -> None:
    reached = False
    with stop_on_signals():
        with pytest.raises(Interrupted) as stopped, held():
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.05)  # the handler has run by now, and raised nothing yet
            reached = True
        assert reached
        assert stopped.value.exit_status == 143
        os.kill(os.getpid(), signal.SIGINT)  # while cleaning up after the first: no second
        time.sleep(0.05)
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # the handlers are put back
