"""Progress of a Spark run, reported to the same callback as the local engine's.

Each stage's action runs in a Spark job group named after the stage; while it runs, a thread polls
Spark's status tracker for the tasks finished in the job's last stage (one task per input for scan
and write, one per shuffle partition for the fit) and accumulators for the records and bytes read
(sent by each task when it ends).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from warcdeboil.run.options import Progress

__all__ = ["Counts", "StageMonitor"]

POLL_SECONDS = 0.5


class Counts:
    """Records and input bytes read by a stage's tasks: two Spark accumulators."""

    def __init__(self, context: Any) -> None:
        self.records = context.accumulator(0)
        self.bytes = context.accumulator(0)

    def add(self, records: int, nbytes: int) -> None:
        """Called in a task (the accumulators travel with the function)."""
        self.records.add(records)
        self.bytes.add(nbytes)


class StageMonitor:
    """Reports ``progress(stage, done, items, total)`` while a stage's Spark action runs."""

    def __init__(self, context: Any, progress: Progress | None) -> None:
        self._context = context
        self._progress = progress

    @contextmanager
    def stage(
        self, name: str, total: int, counts: Counts | None = None, size: int = 0
    ) -> Iterator[None]:
        """Run the body (one Spark action) as stage ``name`` of ``total`` tasks; ``counts`` are
        the records and bytes its tasks read (of ``size`` bytes), or None."""
        self._context.setJobGroup(f"warcdeboil-{name}", f"warcdeboil: {name}")
        if self._progress is None:
            yield
            return
        reported = [0, 0, 0]
        stop = threading.Event()

        def poll() -> None:
            while not stop.wait(POLL_SECONDS):
                self._report(name, total, counts, size, reported, finished=False)

        thread = threading.Thread(target=poll, name=f"warcdeboil-{name}-progress", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()
        self._report(name, total, counts, size, reported, finished=True)

    def _report(
        self, name: str, total: int, counts: Counts | None, size: int, reported: list[int], *,
        finished: bool,
    ) -> None:
        assert self._progress is not None
        done = total if finished else min(total, self._tasks_done(name))
        items = int(counts.records.value) if counts is not None else 0
        nbytes = int(counts.bytes.value) if counts is not None else 0
        if done > reported[0] or items > reported[1] or nbytes > reported[2] or finished:
            self._progress(name, done - reported[0], items - reported[1], total,
                           nbytes - reported[2], size)
            reported[:] = [done, items, nbytes]

    def _tasks_done(self, name: str) -> int:
        tracker = self._context.statusTracker()
        done = 0
        for job_id in tracker.getJobIdsForGroup(f"warcdeboil-{name}"):
            job = tracker.getJobInfo(job_id)
            if job is None or not job.stageIds:
                continue
            stage = tracker.getStageInfo(max(job.stageIds))
            if stage is not None:
                done += stage.numCompletedTasks
        return done
