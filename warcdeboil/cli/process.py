"""How the command-line process sets itself up before a run: the allocator, the garbage
collector, BLAS threads. Library users keep their own process's settings."""

from __future__ import annotations

import gc
import os
import sys


def _tune_allocator() -> None:
    """Keep freed heap memory instead of returning it to the OS at once.

    lexbor allocates and frees a few hundred kilobytes per page; glibc's default trims the heap
    after each, and the pages fault back in for the next one. Measured on the dragnet eval
    archive: system time 0.34 s → 0.20 s, peak memory +3 MB. glibc only; a no-op elsewhere.
    """
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    if not name or not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(name)
        m_trim_threshold, m_top_pad, m_mmap_threshold = -1, -2, -3  # from <malloc.h>
        libc.mallopt(m_trim_threshold, 256 << 20)
        libc.mallopt(m_top_pad, 64 << 20)
        libc.mallopt(m_mmap_threshold, 32 << 20)
    except (OSError, AttributeError):
        return


def _tune_threads() -> None:
    """One BLAS thread (unless the user chose otherwise), set before numpy is first imported.

    numpy's OpenBLAS starts a thread per core, which spin while they wait; no run makes a BLAS
    call (a run's parallelism is its worker processes), but the spinning counted: on dragnet
    (content mode, JSONL, one worker) 0.65 % of the CPU samples of a run without a language
    model and 1.35 % of one with a given model were OpenBLAS's ``blas_thread_server``, and
    the run with the model took 6.93, 6.78 and 6.89 CPU-s with one thread against 7.82, 7.20
    and 7.03 without (alternated).
    """
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


# Container allocations (net of frees) between two collections of the youngest generation; the
# default is 700. A page makes tens of thousands of lists, tuples and blocks that die with it
# (freed by their reference counts, no cycles), and each collection walked the young ones again.
# 300 dragnet pages, JSONL (callgrind): 12.42 G instructions; frozen start-up objects 12.36 G,
# and this threshold 12.30 G (50,000: 12.29 G); peak memory unchanged (60 MB on dragnet).
GC_YOUNG_THRESHOLD = 10_000


def _tune_collector() -> None:
    """Collect cyclic garbage less often, and never walk what start-up made (the modules, the
    model): ``gc.freeze`` keeps it out of every later collection, in workers forked from this
    process too."""
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(GC_YOUNG_THRESHOLD, middle, old)


def tune_process() -> None:
    """All of the above, before the command runs."""
    _tune_allocator()
    _tune_collector()
    _tune_threads()
