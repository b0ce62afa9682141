"""Running a stage's jobs: in this process, or in a pool of worker processes that a signal or
an error ends at once; results in job order, progress from the workers."""

from __future__ import annotations

import multiprocessing
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from functools import partial
from typing import Any, TypeVar

from warcdeboil.errors import JobError, WarcDeboilError

from .signals import Interrupted, held, ignore_signals_in_worker

T = TypeVar("T")
J = TypeVar("J")


def run_jobs(
    func: Callable[..., T],
    jobs: Sequence[J],
    workers: int,
    on_done: Callable[[T], None],
    on_records: Callable[[int, int], None] | None = None,
    *,
    stage: str,
    name: Callable[[J], str],
    elsewhere: bool = False,
) -> list[T]:
    """Run ``func(job, report)`` over ``jobs``; results in job order, whatever the completion
    order. ``report(records, nbytes)`` calls from the workers reach ``on_records`` in this process.
    One worker, or one job, runs in this process, unless ``elsewhere`` (then in a worker
    process: what it imports and leaves behind does not stay here).

    An unexpected error of a job (a full disk, a bug) comes back as one :class:`JobError` line
    naming the stage and ``name(job)``. On any error or :class:`Interrupted`, the jobs not yet
    started are dropped and the running workers are ended before it goes up.
    """
    try:
        if (workers <= 1 or len(jobs) <= 1) and not (elsewhere and jobs):
            return _run_here(func, jobs, on_done, on_records, stage, name)
        return _run_pool(func, jobs, max(1, min(workers, len(jobs))), on_done, on_records, stage,
                         name)
    except Interrupted as exc:
        if exc.stage is None:
            exc.stage = stage
        raise


def _run_here(
    func: Callable[..., T], jobs: Sequence[J], on_done: Callable[[T], None],
    on_records: Callable[[int, int], None] | None, stage: str, name: Callable[[J], str],
) -> list[T]:
    results = []
    for job in jobs:
        result = _checked(partial(func, job, on_records), stage, partial(name, job))
        results.append(result)
        on_done(result)
    return results


def _run_pool(
    func: Callable[..., T], jobs: Sequence[J], workers: int, on_done: Callable[[T], None],
    on_records: Callable[[int, int], None] | None, stage: str, name: Callable[[J], str],
) -> list[T]:
    results: list[T | None] = [None] * len(jobs)
    manager = queue = drain = pool = None
    before: set[int | None] = set()
    try:
        with held():  # every process this starts is known before a signal can unwind it
            if on_records is not None:
                manager = multiprocessing.Manager()
                queue = manager.Queue()
                drain = threading.Thread(target=_drain, args=(queue, on_records), daemon=True)
                drain.start()
            # Children started before the pool (the manager) are not the pool's to end.
            before = {child.pid for child in multiprocessing.active_children()}
            pool = ProcessPoolExecutor(max_workers=workers, initializer=ignore_signals_in_worker)
            futures = {pool.submit(_call, func, job, queue): i for i, job in enumerate(jobs)}
        for future in as_completed(futures):
            i = futures[future]
            result = _checked(future.result, stage, partial(name, jobs[i]))
            results[i] = result
            on_done(result)
    except BaseException:
        if pool is not None:
            _stop_pool(pool, before)
        raise
    else:
        pool.shutdown(wait=True)
    finally:
        _stop_drain(queue, drain, manager)
    return results  # type: ignore[return-value]


# How long a worker ended with SIGTERM may take to go before it gets SIGKILL.
STOP_GRACE_SECONDS = 2.0


def _stop_pool(pool: ProcessPoolExecutor, before: set[int | None]) -> None:
    """Drop the jobs not started and end the workers now, not when their jobs are done (which
    is what leaving the ``with`` of an executor would wait for)."""
    pool.shutdown(wait=False, cancel_futures=True)
    workers = [c for c in multiprocessing.active_children() if c.pid not in before]
    for worker in workers:
        worker.terminate()
    for worker in workers:
        worker.join(STOP_GRACE_SECONDS)
        if worker.is_alive():
            worker.kill()
            worker.join()
    pool.shutdown(wait=True)


def _stop_drain(queue: Any, drain: threading.Thread | None, manager: Any) -> None:
    try:
        if queue is not None and drain is not None:
            queue.put(None)
            drain.join()
    except (OSError, EOFError):
        pass  # the manager is gone already (a signal to the whole process group)
    finally:
        if manager is not None:
            manager.shutdown()


def _checked(get: Callable[[], T], stage: str, what: Callable[[], str]) -> T:
    """``get()``, a job's result; an error it did not expect goes up as :func:`_job_error`'s
    line naming ``stage`` and ``what()`` (the errors raised on purpose go up as they are)."""
    try:
        return get()
    except WarcDeboilError:
        raise
    except Exception as exc:
        raise _job_error(stage, what(), exc) from exc


def _job_error(stage: str, what: str, exc: Exception) -> JobError:
    """One line for an error a job did not expect: what it was doing, to which file, and why."""
    if isinstance(exc, OSError) and exc.strerror:
        cause = f"{exc.filename}: {exc.strerror}" if exc.filename else exc.strerror
    else:
        lines = str(exc).strip().splitlines()
        cause = f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__
    return JobError(f"{stage} {what}: {cause}")


def _call(func: Callable[..., T], job: Any, queue: Any) -> T:
    def report(records: int, nbytes: int) -> None:
        queue.put((records, nbytes))

    return func(job, report if queue is not None else None)


def _drain(queue: Any, on_records: Callable[[int, int], None]) -> None:
    try:
        while (counts := queue.get()) is not None:
            on_records(*counts)
    except (OSError, EOFError):
        return  # the manager went away: the run is stopping
