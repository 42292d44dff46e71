"""Every clock a Python program can read shows the process's CPU time during a real-CPU call.

On a busy machine a process waits for a core: a preemption inside a timed loop of a millisecond
makes a wall-clock reading a hundred times too long, and whether it happens depends on the load.
CPU time moves only while the process runs, so a CPU-bound function timed by it reads the same
on a quiet machine and a loaded one. ``cpu_time()`` makes every clock clocks.py patches (time's
functions and clock ids, timeit's default timer, datetime's now, and what reads them, such as
torch.utils.benchmark) answer from ``CpuClock`` for the block, for the code being graded and the
reference alike; the simulated GPU's clock, when one is active, takes precedence.

The clock reads the CPU time of the whole process (every thread), in seconds: a function that
does its work on a worker thread while the calling thread waits is timed as on a quiet machine,
and the grading child runs torch with one compute thread (OMP_NUM_THREADS=1), so no parallel
work counts twice. ``time.sleep`` sleeps, and the clock counts a sleep as lasting at least its
length (an idle wait is off the CPU but is time the program asked to spend).
"""
from __future__ import annotations

import contextlib
import threading
import time

#: The clock the dispatchers answer from, or None when the real clocks answer.
_current = None
#: The original functions, whatever is patched later (clocks.py imports this module before it
#: patches time's functions; ``__wrapped__`` covers an import after that).
_clock_ns = getattr(time.clock_gettime_ns, "__wrapped__", time.clock_gettime_ns)
real_sleep = getattr(time.sleep, "__wrapped__", time.sleep)


class CpuClock:
    """Seconds of the process's CPU time since the clock started, plus the idle part of sleeps.

    Has what clocks.py's answers read from a device: ``now()``, ``sleep(seconds)`` and
    ``slept_s`` (the idle seconds of its sleeps, which the CPU-time clocks leave out); the clocks
    start at the real clocks' readings (clockbase.py), so time.time() reads the real date.

    The reading thread's CPU clock has nanosecond resolution; the process's does not while a CPU
    limit (RLIMIT_CPU) is set, as in the grading child: there it moves at the scheduler's ticks,
    which would make a sub-millisecond loop read zero seconds. So a reading is the thread's CPU
    time plus the most CPU time the process's clock has shown the other threads to have used
    (exact once they wait or have ended, within a tick while they run); with one thread it is the
    thread's CPU time alone. Readings never repeat or go back.

    ``readers`` are told every reading the code being graded makes (its seconds, as ``now()``
    returns it), in the thread that makes it: the grader's record of a call
    (autograder/runtime/torchwatch.py) places them among the torch work, so that it can tell the
    work inside a timed region from the work around it. The clock's own readings (in ``sleep``)
    are not the program's and are not told.
    """

    def __init__(self):
        self.readers: list = []
        self._others_ns: dict[int, int] = {}
        self._last_ns = -1
        self.slept_s = 0.0
        self._start_ns = self._read_ns()

    def _read_ns(self) -> int:
        thread = _clock_ns(time.CLOCK_THREAD_CPUTIME_ID)
        process = _clock_ns(time.CLOCK_PROCESS_CPUTIME_ID)
        key = threading.get_ident()
        others = self._others_ns[key] = max(self._others_ns.get(key, 0), process - thread)
        self._last_ns = max(thread + others, self._last_ns + 1)
        return self._last_ns

    def now(self, cpu: bool = False) -> float:
        """CPU seconds of the process since the clock started, plus the idle part of its sleeps:
        a reading by the program, told to every reader (``cpu``, which kind of clock it read,
        changes nothing here)."""
        seconds = self._seconds()
        for reader in tuple(self.readers):
            reader(seconds)
        return seconds

    def _seconds(self) -> float:
        return (self._read_ns() - self._start_ns) / 1e9 + self.slept_s

    def sleep(self, seconds: float) -> None:
        """Sleep for real; the clock moves by at least ``seconds`` (CPU time other threads spent
        meanwhile counts once, not twice)."""
        before = self.reading()
        real_sleep(seconds)
        self.waited(seconds, before)

    def reading(self) -> float:
        """Seconds now, not told to the readers (the clock's own reading, not the program's)."""
        return self._seconds()

    def waited(self, seconds: float, before: float) -> None:
        """The process waited ``seconds`` since the clock read ``before``: it has moved at least that."""
        self.slept_s += max(0.0, seconds - (self._seconds() - before))


def current() -> CpuClock | None:
    """The CPU clock the dispatchers answer from now, or None."""
    return _current


@contextlib.contextmanager
def cpu_time():
    """Every patched clock reads a fresh CpuClock for the block (yielded); nested blocks share the
    outer one. Without clocks.install() (no simulated GPU in this process) nothing changes."""
    global _current
    if _current is not None:
        yield _current
        return
    _current = CpuClock()
    try:
        yield _current
    finally:
        _current = None

