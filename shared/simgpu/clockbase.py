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

import functools
import math
import os
import random
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
#: Every base is a whole number of steps of 1/STEPS_PER_S seconds (a quarter second, a whole
#: number of microseconds, nanoseconds and 10 ms ticks), plus the clock's own fraction of a step
#: (``fraction``), both exact as a float. A reading is then the base plus the time since, rounded
#: as the float's magnitude and the clock's resolution round it, so a duration (the difference of
#: two readings) is the same whatever the base, as long as the readings are of the same magnitude
#: (power of two): runs are repeatable bit for bit, no number depends on when the process
#: started, and a coarse clock's ticks (datetime's microseconds, os.times' 10 ms) fall alike on
#: the same work in every run of one seed.
STEPS_PER_S = 4
#: A clock's own fraction of a step is a whole number of these seconds (2**-21 s, about 0.48 us):
#: exact beside a Unix time of up to 2**32 s in a float's 53 bits.
FRACTION_S = 2.0**-21

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


#: Clocks that count one thing share a fraction (the time since boot, the date, the process's CPU
#: time, a thread's); clock ids without a kind of their own count the date (REALTIME, TAI) or the
#: time since boot (BOOTTIME, MONOTONIC_RAW, the COARSE ones).
GROUP = {"mono": "boot", "elapsed": "boot", "wall": "date", "process": "cpu", "user": "cpu", "system": "cpu",
         "thread": "thread", "thread_user": "thread",
         **{getattr(time, n): "date" if "REALTIME" in n or "TAI" in n else "boot"
            for n in dir(time) if n.startswith("CLOCK_") and getattr(time, n) in OTHER_IDS}}


@functools.lru_cache(maxsize=64)
def fraction(group: str, clock_seed: int | None) -> float:
    """The fraction of a step, in seconds, that clock ``group`` (a GROUP value) starts on: a whole
    number of FRACTION_S drawn from ``clock_seed`` (the device's, drawn from its seed), 0 without
    one. A real machine's date, time since boot and CPU times read unrelated fractions of a
    second; so does each group of virtual clocks."""
    if clock_seed is None:
        return 0.0
    return random.Random(f"{clock_seed}\0{group}").randrange(int(1 / STEPS_PER_S / FRACTION_S)) * FRACTION_S


def _id(kind):
    """A clockbase kind, or the clock id of an ('id', clock id) kind: GROUP's key."""
    return kind[1] if isinstance(kind, tuple) else kind


class Bases:
    """Each virtual clock's value when its source's time was zero: the real clock's reading then,
    rounded up to a step of 1/STEPS_PER_S seconds, plus the clock's own ``fraction`` of a step."""

    def __init__(self, host_s: float, cpu_s: float, clock_seed: int | None = None):
        self._steps: dict = {}
        self._own = {kind: fraction(group, clock_seed) for kind, group in GROUP.items()}
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
        steps = self._steps[key] = math.ceil((real - elapsed - self._own.get(_id(kind), 0.0)) * STEPS_PER_S)
        return steps

    def value(self, kind, host_s: float, cpu_s: float, ns: bool = False):
        """Clock ``kind``'s virtual reading: float seconds, or an int of nanoseconds (``ns``)."""
        kind = ID_KIND.get(kind[1], kind) if isinstance(kind, tuple) else kind
        key = (kind, threading.get_ident()) if kind in THREAD_KINDS else kind
        steps = self._steps.get(key)
        if steps is None:
            steps = self._set(key, host_s, cpu_s)      # a new thread, or an id that raises
        elapsed, own = cpu_s if kind in CPU_KINDS else host_s, self._own.get(_id(kind), 0.0)
        value = (steps / STEPS_PER_S + own) + elapsed
        if kind not in THREAD_KINDS:
            _last[key] = value
        if ns:
            return steps * 10**9 // STEPS_PER_S + round(own * 1e9) + round(elapsed * 1e9)
        return value


def of(source, host_s: float, cpu_s: float) -> Bases:
    """The bases of ``source`` (a Frontend or a CpuClock), taken now if its clocks were never read;
    ``host_s`` and ``cpu_s`` are its host and CPU seconds now."""
    bases = vars(source).get("_clock_bases")
    if bases is None:
        seed = getattr(source, "clock_seed", None)
        bases = source._clock_bases = Bases(host_s, cpu_s, seed() if seed is not None else None)
    return bases


def real_times():
    """The real os.times()."""
    return _times()


def real_rusage(*args, **kwargs):
    """The real resource.getrusage(who)."""
    return _rusage(*args, **kwargs)
