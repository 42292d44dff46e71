"""Every clock a Python program can read shows the simulated device's time while it is active.

A timing function may read the time in any way the standard library offers: ``time`` (every
function and clock id, with their ``_ns`` variants, CPU-time clocks included), ``datetime``
(``now``, ``utcnow``, ``today``), ``timeit`` (its default timer, which ``Timer``, ``timeit`` and
``repeat`` bind as a default argument when timeit is imported) and what is built on those
(``torch.utils.benchmark``, which reads ``timeit.default_timer`` at each call). Each answers from
the virtual clock while a simulation is active, from the process's CPU time during a real-CPU
call (hostclock.py), and as before otherwise. ``os.times`` and ``resource.getrusage`` answer
the same way. ``time.sleep`` passes virtual time instead of real time (on the CPU clock it
sleeps, and counts as at least its length). ``CLOCKS`` names every function replaced;
tests/shared/test_simgpu_clocks.py enumerates the standard library's clock functions (and its
types of readings with a time in them) so that one added by a later Python cannot slip through.

Each clock starts at the real clock's reading when the source's clocks are first read and moves
with the source's time (clockbase.py): time clocks (perf_counter, monotonic, time.time, every
clock id, datetime, os.times().elapsed) by its host seconds, CPU-time clocks (process_time,
thread_time, their clock ids, os.times' and getrusage's user time) by its host seconds outside
sleeps: waiting on the device spends CPU time, as a CUDA synchronize spin-waits; sleeping does not.
"""
from __future__ import annotations

import datetime
import math
import os
import signal
import threading
import time
import timeit

from shared.simgpu import clockbase, hostclock, state
from shared.simgpu.device import MAX_SLEEP_S

resource = clockbase.resource

#: time's functions that read a clock, and what each reads: a clock kind of clockbase.py ('mono',
#: 'wall', 'process', 'thread') in seconds, the same with '_ns' in nanoseconds, 'id' / 'id_ns'
#: (clock_gettime(clock id)), 'struct' (localtime / gmtime / ctime / strftime of now when no time
#: is given).
TIME_CLOCKS = {
    "perf_counter": "mono", "perf_counter_ns": "mono_ns", "monotonic": "mono",
    "monotonic_ns": "mono_ns", "process_time": "process", "process_time_ns": "process_ns",
    "thread_time": "thread", "thread_time_ns": "thread_ns", "time": "wall", "time_ns": "wall_ns",
    "clock_gettime": "id", "clock_gettime_ns": "id_ns",
    "localtime": "struct", "gmtime": "struct", "ctime": "struct", "asctime": "struct",
    "strftime": "struct",
}
#: datetime's class methods that read the clock.
DATETIME_CLOCKS = ("now", "utcnow", "today")


def source():
    """What the clocks answer from now: the active simulated device (for the threads that run on
    it: state.current_here), else the CPU clock of a real-CPU call (hostclock.cpu_time), else None
    (the real clocks)."""
    device = state.current_here()
    return hostclock.current() if device is None else device


def _now(dev, cpu: bool = False):
    """One reading of ``dev``'s clock (advancing it a little): its bases (clockbase.py), host
    seconds and CPU seconds (host seconds less the sleeps) since it started; ``cpu``: the reading
    is of a CPU-time clock (the device then keeps the window in CPU seconds too)."""
    host_s = dev.now(cpu)
    cpu_s = host_s - getattr(dev, "slept_s", 0.0)
    return clockbase.of(dev, host_s, cpu_s), host_s, cpu_s


def read(dev, kind, ns: bool = False):
    """Clock ``kind`` of ``dev`` (a clockbase kind, or ('id', clock id)): its real reading when
    the device's clocks were first read plus the device's time since, in float seconds or an int
    of nanoseconds (``ns``)."""
    kind_read = clockbase.ID_KIND.get(kind[1], kind) if isinstance(kind, tuple) else kind
    bases, host_s, cpu_s = _now(dev, kind_read in clockbase.CPU_KINDS)
    return bases.value(kind, host_s, cpu_s, ns)


def wall(dev) -> float:
    """Virtual Unix time in seconds, never the same value twice (a Unix time near 1.7e9 s
    resolves only ~0.24 µs as a float)."""
    value = read(dev, "wall")
    last = getattr(dev, "_last_wall", -math.inf)
    value = value if value > last else math.nextafter(last, math.inf)
    dev._last_wall = value
    return value


ANSWERS = {
    "wall": lambda dev, *_a, **_k: wall(dev),
    "id": lambda dev, clock_id, *_a: read(dev, ("id", clock_id)),
    "id_ns": lambda dev, clock_id, *_a: read(dev, ("id", clock_id), ns=True),
}
for _kind in ("mono", "process", "thread", "wall"):
    ANSWERS[f"{_kind}_ns"] = lambda dev, *_a, _kind=_kind, **_k: read(dev, _kind, ns=True)
    ANSWERS.setdefault(_kind, lambda dev, *_a, _kind=_kind, **_k: read(dev, _kind))

#: Clock ticks per second of os.times() (its values are whole ticks).
TICKS_PER_S = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _ticks(seconds: float) -> float:
    return math.floor(seconds * TICKS_PER_S + 1e-6) / TICKS_PER_S


def _os_times(dev, *_args, **_kwargs):
    """os.times(): elapsed follows the host's virtual seconds, user the CPU seconds (system stays),
    in whole clock ticks as the real one reports them; the children's times are the real ones."""
    bases, host_s, cpu_s = _now(dev)
    user, system, elapsed = (bases.value(k, host_s, cpu_s) for k in ("user", "system", "elapsed"))
    real = clockbase.real_times()
    return os.times_result((_ticks(user), _ticks(system), real.children_user,
                            real.children_system, _ticks(elapsed)))


def _getrusage(dev, who, *args, **kwargs):
    """resource.getrusage(who): ru_utime follows the CPU seconds of the process (RUSAGE_SELF) or
    of the calling thread (RUSAGE_THREAD), ru_stime stays; the rest (and RUSAGE_CHILDREN) real."""
    real = clockbase.real_rusage(who, *args, **kwargs)
    thread = getattr(resource, "RUSAGE_THREAD", None)
    if who not in (resource.RUSAGE_SELF, thread):
        return real
    bases, host_s, cpu_s = _now(dev, cpu=True)
    fields = list(real)
    fields[0] = round(bases.value("thread_user" if who == thread else "user", host_s, cpu_s), 6)
    if who != thread:
        fields[1] = round(bases.value("system", host_s, cpu_s), 6)
    return resource.struct_rusage(fields)


#: Clock functions outside time, timeit and datetime that this module answers (``install``).
OTHER_CLOCKS = {"os.times": _os_times, **({"resource.getrusage": _getrusage} if resource else {})}


def _struct(name: str, original):
    """localtime(), gmtime(), ctime(), asctime() and strftime(fmt) of the virtual now."""
    def sim(dev, *args, **kwargs):
        if name == "strftime":
            if len(args) >= 2 or "t" in kwargs:
                return original(*args, **kwargs)
            return original(args[0] if args else kwargs["format"], time.localtime(wall(dev)))
        if name == "asctime":
            return original(*args) if args else original(time.localtime(wall(dev)))
        secs = args[0] if args else kwargs.get("secs")
        return original(wall(dev) if secs is None else secs)
    return sim


def _sleep(dev, seconds, *_args, **_kwargs):
    """time.sleep on the simulated machine: the host's virtual clock moves ``seconds``. Real time
    passes too whenever something outside the sleeping thread runs that the program may be
    waiting for (``world_moves``): a loop that sleeps until a subprocess ends, a worker thread
    finishes or a timer signal arrives then sees the world move as far as its clock, as on a GPU
    machine, instead of its clock racing ahead of a world that stands still (a subprocess's
    timeout would expire at once, by as much as the machine's load slows the subprocess). A
    thread that runs no device work then moves no virtual clock: its sleep overlaps the device
    threads' work, as it does on a GPU machine, instead of adding to it. A program alone in its
    process sleeps no real time: its readings are the same either way."""
    seconds = float(seconds)
    if seconds < 0 or math.isnan(seconds):
        raise ValueError("sleep length must be non-negative")
    seconds = min(seconds, MAX_SLEEP_S)
    if isinstance(dev, hostclock.CpuClock):
        dev.sleep(seconds)
        return
    moves = world_moves()
    if moves:
        hostclock.real_sleep(seconds)
    waited(dev, seconds, moves)


def waited(dev, seconds: float, moves: bool) -> None:
    """The host waited ``seconds`` (a sleep, or a wait that timed out: waits.py); ``moves``: the
    world moved meanwhile (``world_moves``, asked as the wait began). The virtual clock moves by
    them, but while the world moves for a thread other than the one that last gave the device
    work (a reporter, a watchdog, a caller polling a queue while its worker times): that thread
    goes on meanwhile, so the wait passes in real time only, beside its work, not added to it.
    A thread alone in its process has nothing beside it to wait for but child processes and
    timer signals, which have clocks of their own: its wait moves the clock (a loop that sleeps
    until a time it read would otherwise pass only its CPU time, and last hundreds of times as
    long in real time)."""
    if not moves or threading.active_count() == 1 or dev.drives_here():
        dev.sleep(seconds)


def world_moves() -> bool:
    """Whether the process has a child process (running or ended, not yet waited for), a Python
    thread besides the calling one or a real-time timer signal pending (``signal.alarm``,
    ``setitimer``): something that can change while a thread sleeps."""
    if threading.active_count() > 1 or signal.getitimer(signal.ITIMER_REAL)[0] > 0:
        return True
    try:
        os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return False
    return True


class _SameAs(type):
    """Metaclass of the datetime stand-ins: isinstance and issubclass answer as for the original
    class, so objects made before the patch (or by libraries) still count as dates."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, cls._original)

    def __subclasscheck__(cls, sub):
        return issubclass(sub, cls._original)


def _datetime_class(original):
    """A subclass of datetime.datetime (or date) whose now/utcnow/today read the virtual clock."""
    def now(cls, tz=None):
        dev = source()
        if dev is None:
            return original.now(tz)
        return original.fromtimestamp(wall(dev), tz)

    def utcnow(cls):
        dev = source()
        if dev is None:
            return original.utcnow()
        return original.fromtimestamp(wall(dev), datetime.timezone.utc).replace(tzinfo=None)

    def today(cls):
        dev = source()
        if dev is None:
            return original.today()
        return original.fromtimestamp(wall(dev))

    body = {"_original": original, "_simgpu": True, "__module__": "datetime",
            "__doc__": original.__doc__, "today": classmethod(today)}
    if hasattr(original, "now"):
        body.update(now=classmethod(now), utcnow=classmethod(utcnow))
    return _SameAs(original.__name__, (original,), body)


#: Every function this module replaces, as "module.name" (tests check each answers virtually).
CLOCKS = tuple([f"time.{n}" for n in TIME_CLOCKS] + ["time.sleep", "timeit.default_timer"]
               + [f"datetime.datetime.{n}" for n in DATETIME_CLOCKS] + ["datetime.date.today"]
               + list(OTHER_CLOCKS))


def install(patch) -> None:
    """Replace every clock with a dispatcher; ``patch(owner, attr, sim)`` is patches._patch."""
    for name, kind in TIME_CLOCKS.items():
        if not hasattr(time, name):
            continue
        sim = _struct(name, getattr(time, name)) if kind == "struct" else ANSWERS[kind]
        patch(time, name, sim, current=source)
    patch(time, "sleep", _sleep, current=source)
    for name, sim in OTHER_CLOCKS.items():
        module, _, attr = name.partition(".")
        patch(os if module == "os" else resource, attr, sim, current=source)
    timeit.default_timer = time.perf_counter
    _rebind_defaults(timeit)
    for name in ("date", "datetime"):
        original = getattr(datetime, name)
        if not getattr(original, "_simgpu", False):
            setattr(datetime, name, _datetime_class(original))


def _rebind_defaults(module) -> None:
    """Default arguments bound to an original clock (timeit.Timer(timer=default_timer), timeit.
    timeit, timeit.repeat) now name its dispatcher."""
    swaps = [(fn.__wrapped__, fn) for fn in (time.perf_counter, time.monotonic)
             if hasattr(fn, "__wrapped__")]
    _swap_defaults(module, swaps)


def _swap_defaults(module, swaps) -> None:
    """In ``module``'s functions and its classes' __init__, default arguments that are the first
    of a pair in ``swaps`` (by identity) become the second."""
    def swap(value):
        return next((new for old, new in swaps if value is old), value)

    functions = [getattr(module, n) for n in dir(module)]
    functions += [vars(c).get("__init__") for c in functions if isinstance(c, type)]
    for fn in functions:
        defaults = getattr(fn, "__defaults__", None)
        if defaults:
            fn.__defaults__ = tuple(swap(d) for d in defaults)
        kwdefaults = getattr(fn, "__kwdefaults__", None)
        if kwdefaults:
            fn.__kwdefaults__ = {k: swap(v) for k, v in kwdefaults.items()}


def uninstall() -> None:
    """Put datetime's classes and timeit's defaults back (patches.uninstall does time's)."""
    for name in ("date", "datetime"):
        patched = getattr(datetime, name)
        if getattr(patched, "_simgpu", False):
            setattr(datetime, name, patched._original)
    swaps = [(fn, fn.__wrapped__) for fn in (time.perf_counter, time.monotonic)
             if hasattr(fn, "__wrapped__")]
    _swap_defaults(timeit, swaps)
