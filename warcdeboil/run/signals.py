"""Stopping a run on SIGTERM or SIGINT: the exception that unwinds it, and the handlers.

``timeout``, SLURM and Kubernetes stop a job with SIGTERM; a terminal sends SIGINT. Within
:func:`stop_on_signals` both raise :class:`Interrupted` in the main thread; the local engine lets it
unwind, ending its worker processes and removing what they had half written on the way, and notes
what was finished so that the command line can say it in one line.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

__all__ = ["Interrupted", "held", "ignore_signals_in_worker", "stop_on_signals"]

_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class Interrupted(BaseException):
    """The run was stopped by a signal.

    Not an :class:`Exception`, so no ``except Exception`` on the way up swallows it. The stage
    that was running, and how many outputs were finished, are filled in as it unwinds.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.stage: str | None = None
        self.finished: int | None = None  # outputs under their final names when it stopped
        self.outputs: int | None = None  # outputs the stage was writing, finished or not
        self.work_dir: str | None = None  # a work directory left in place for --resume
        self.work_dir_removed = False

    @property
    def exit_status(self) -> int:
        """128 + the signal number, as a shell reports a process killed by it (143, 130)."""
        return 128 + self.signum

    def describe(self) -> str:
        """One line: which signal, in which stage, what is finished, where the work is."""
        text = f"interrupted ({signal.Signals(self.signum).name})"
        if self.stage is not None:
            text += f" during {self.stage}"
        if self.finished is not None and self.outputs is not None:
            text += f": {self.finished} of {self.outputs} outputs finished, no partial ones left"
        elif self.stage is not None:
            text += ": no output written"
        if self.work_dir is not None:
            text += f"; work directory kept: {self.work_dir} (run again with --resume)"
        elif self.work_dir_removed:
            text += "; work directory removed"
        return text


class _Raiser:
    """The handler: raises :class:`Interrupted` for the first signal only, as a second one (a
    second Ctrl-C, a scheduler repeating SIGTERM) must not break the cleanup the first began.

    While :func:`held`, a signal is noted and raised when the hold ends. In a process forked
    from the one that installed it (a worker before its initializer ran, the queue's manager)
    it does what a worker does: SIGTERM ends the process, SIGINT is ignored.
    """

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.raised = False
        self.holds = 0
        self.pending: int | None = None

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        if os.getpid() != self.pid:
            if signum == signal.SIGTERM:
                os._exit(128 + signum)
            return
        if self.holds:
            self.pending = signum
        elif not self.raised:
            self.raised = True
            raise Interrupted(signum)

    def release(self) -> None:
        self.holds -= 1
        if not self.holds and self.pending is not None and not self.raised:
            self.raised = True
            raise Interrupted(self.pending)


@contextmanager
def stop_on_signals() -> Iterator[None]:
    """Within: SIGTERM and SIGINT raise :class:`Interrupted` in the main thread.

    Outside the main thread (where Python cannot install handlers) this does nothing. The
    previous handlers come back on the way out.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    raiser = _Raiser()
    previous = {sig: signal.signal(sig, raiser) for sig in _SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@contextmanager
def held() -> Iterator[None]:
    """Within: a signal of :func:`stop_on_signals` waits, and is raised on the way out.

    For starting processes: a signal unwinding the parent between the fork and the bookkeeping
    of the child would leave a worker that no one knows of, and so no one ends.
    """
    raiser = signal.getsignal(signal.SIGTERM)
    if not isinstance(raiser, _Raiser) or threading.current_thread() is not threading.main_thread():
        yield
        return
    raiser.holds += 1
    try:
        yield
    finally:
        raiser.release()


def ignore_signals_in_worker() -> None:
    """Initializer of worker processes: the parent decides when they stop.

    SIGINT from a terminal reaches the whole process group; workers ignore it and the parent,
    which also got it, ends them. SIGTERM gets its default action back (a forked worker inherits
    the parent's Python handler), so that the parent's ``terminate()`` ends a worker at once,
    even in the middle of a long record.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
