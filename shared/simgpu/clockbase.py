"""Where the virtual clocks start: at the real clocks' readings when a source's clocks are first read.

A real machine's clocks read the date (time.time, CLOCK_REALTIME), the time since boot
(perf_counter, monotonic, CLOCK_BOOTTIME, os.times().elapsed) and the CPU time the process and
each thread have used so far (process_time, thread_time, os.times, resource.getrusage). So do the
virtual ones: the first time a source's clocks are read (a simulated device's, or the CPU clock of
a real-CPU call), every real clock is read once, and from then on each virtual clock reads its
real value then plus the source's time since. Time clocks follow the source's host seconds; CPU
clocks follow its CPU seconds (host seconds outside ``time.sleep``: the host spends CPU time
while it waits on the device, as a CUDA synchronize spin-waits, but none while it sleeps). A
thread's CPU clock starts at the thread's real CPU time at its first reading there.

Nothing judged depends on the bases (the grader's record and its verdicts use durations), and no
reading goes back across the active periods of one process.
"""
from __future__ import annotations

import math
import os
import threading
import time

try:
    import resource
except ImportError:                    # not on every platform
    resource = None


def _real(fn):
    """The original of a function the simulator may have patched since."""
    return getattr(fn, "__wrapped__", fn)


_time_ns = {"mono": _real(time.perf_counter_ns), "wall": _real(time.time_ns),
            "process": _real(time.process_time_ns)}
_thread_ns = _real(time.thread_time_ns)
_gettime_ns = _real(time.clock_gettime_ns)
_times = _real(os.times)
_rusage = _real(resource.getrusage) if resource is not None else None

#: What clock_gettime(id) reads, for the ids that are clocks named above; every other id has a
#: base of its own (CLOCK_BOOTTIME, CLOCK_TAI, CLOCK_MONOTONIC_RAW, ...).
ID_KIND = {getattr(time, name): kind for name, kind in (
    ("CLOCK_REALTIME", "wall"), ("CLOCK_MONOTONIC", "mono"),
    ("CLOCK_PROCESS_CPUTIME_ID", "process"), ("CLOCK_THREAD_CPUTIME_ID", "thread"))
    if hasattr(time, name)}
OTHER_IDS = sorted({getattr(time, n) for n in dir(time) if n.startswith("CLOCK_")
                    and isinstance(getattr(time, n), int)} - set(ID_KIND))
#: Kinds that follow CPU seconds (the others follow host seconds). 'user' is the process's user
#: CPU time (os.times().user, getrusage's ru_utime), which takes all the CPU time spent while
#: the device runs; 'system' stays where it was.
CPU_KINDS = {"process", "thread", "user", "thread_user"}
#: Per thread: the thread's own CPU clocks, based at its first reading.
THREAD_KINDS = {"thread", "thread_user"}
#: Every base is a whole number of steps of 1/STEPS_PER_S seconds: a quarter second, a whole
#: number of microseconds (datetime's resolution), nanoseconds and 10 ms ticks (os.times) and
#: exact as a float. A reading is then the base plus the time since, rounded as the float's
#: magnitude and the clock's resolution round it, so a duration (the difference of two readings)
#: is the same whatever the base, as long as the readings are of the same magnitude (power of
#: two): runs are repeatable bit for bit, and no number depends on when the process started.
STEPS_PER_S = 4

#: The last value each kind handed out in this process, so that a later period never reads lower.
_last: dict = {}


def _read_real(kind) -> float:
    """The real clock ``kind``'s reading now, in seconds."""
    if kind in _time_ns:
        return _time_ns[kind]() / 1e9
    if kind == "thread":
        return _thread_ns() / 1e9
    if isinstance(kind, tuple):
        return _gettime_ns(kind[1]) / 1e9
    if kind == "elapsed":
        return _times().elapsed
    if _rusage is None:
        times = _times()
        return times.user if kind in ("user", "thread_user") else times.system
    who = resource.RUSAGE_THREAD if kind == "thread_user" and hasattr(resource, "RUSAGE_THREAD") \
        else resource.RUSAGE_SELF
    usage = _rusage(who)
    return usage.ru_stime if kind == "system" else usage.ru_utime


class Bases:
    """Each virtual clock's value when its source's time was zero, in steps of 1/STEPS_PER_S
    seconds (the real clock's reading then, rounded up to a step)."""

    def __init__(self, host_s: float, cpu_s: float):
        self._steps: dict = {}
        for kind in ("mono", "wall", "process", "elapsed", "user", "system"):
            self._set(kind, host_s, cpu_s)
        for clock_id in OTHER_IDS:
            try:
                self._set(("id", clock_id), host_s, cpu_s)
            except OSError:                  # an id this kernel does not have: reading it raises
                pass

    def _set(self, key, host_s: float, cpu_s: float) -> float:
        kind = key[0] if isinstance(key, tuple) and key[0] in THREAD_KINDS else key
        real = max(_read_real(kind), _last.get(key, -math.inf))
        elapsed = cpu_s if kind in CPU_KINDS else host_s
        steps = self._steps[key] = math.ceil((real - elapsed) * STEPS_PER_S)
        return steps

    def value(self, kind, host_s: float, cpu_s: float, ns: bool = False):
        """Clock ``kind``'s virtual reading: float seconds, or an int of nanoseconds (``ns``)."""
        kind = ID_KIND.get(kind[1], kind) if isinstance(kind, tuple) else kind
        key = (kind, threading.get_ident()) if kind in THREAD_KINDS else kind
        steps = self._steps.get(key)
        if steps is None:
            steps = self._set(key, host_s, cpu_s)      # a new thread, or an id that raises
        elapsed = cpu_s if kind in CPU_KINDS else host_s
        value = steps / STEPS_PER_S + elapsed
        if kind not in THREAD_KINDS:
            _last[key] = value
        if ns:
            return steps * 10**9 // STEPS_PER_S + round(elapsed * 1e9)
        return value


def of(source, host_s: float, cpu_s: float) -> Bases:
    """The bases of ``source`` (a Frontend or a CpuClock), taken now if its clocks were never read;
    ``host_s`` and ``cpu_s`` are its host and CPU seconds now."""
    bases = vars(source).get("_clock_bases")
    if bases is None:
        bases = source._clock_bases = Bases(host_s, cpu_s)
    return bases


def real_times():
    """The real os.times()."""
    return _times()


def real_rusage(*args, **kwargs):
    """The real resource.getrusage(who)."""
    return _rusage(*args, **kwargs)
