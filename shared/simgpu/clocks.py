"""Every clock a Python program can read shows the simulated device's time while it is active.

A timing function may read the time in any way the standard library offers: ``time`` (every
function and clock id, with their ``_ns`` variants, CPU-time clocks included), ``datetime``
(``now``, ``utcnow``, ``today``), ``timeit`` (its default timer, which ``Timer``, ``timeit`` and
``repeat`` bind as a default argument when timeit is imported) and what is built on those
(``torch.utils.benchmark``, which reads ``timeit.default_timer`` at each call). Each answers from
the virtual clock while a simulation is active, from the process's CPU time during a real-CPU
call (hostclock.py), and as before otherwise. ``time.sleep`` passes virtual time instead of real
time (on the CPU clock it sleeps, and counts as at least its length). ``CLOCKS`` names every
function replaced; tests/shared/test_simgpu_clocks.py enumerates the standard library's clock
functions so that one added by a later Python cannot slip through.

Two clocks: the host's monotonic time (``PERF_BASE_S`` plus seconds since the simulation started)
for perf_counter, monotonic, process and thread time and every non-realtime clock id; Unix time
(the config's ``epoch_s`` plus the same seconds) for time.time, CLOCK_REALTIME and datetime.
"""
from __future__ import annotations

import datetime
import math
import time
import timeit

from shared.simgpu import hostclock, state
from shared.simgpu.device import MAX_SLEEP_S

#: perf_counter() and monotonic() of the virtual clock when a simulation starts, in seconds.
PERF_BASE_S = 1000.0

#: time's functions that read a clock, and what each reads: 'mono' (seconds), 'mono_ns'
#: (nanoseconds), 'wall', 'wall_ns', 'id' / 'id_ns' (clock_gettime(clock id)), 'struct'
#: (localtime / gmtime / ctime / strftime of now when no time is given).
TIME_CLOCKS = {
    "perf_counter": "mono", "perf_counter_ns": "mono_ns", "monotonic": "mono",
    "monotonic_ns": "mono_ns", "process_time": "mono", "process_time_ns": "mono_ns",
    "thread_time": "mono", "thread_time_ns": "mono_ns", "time": "wall", "time_ns": "wall_ns",
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


def mono(dev) -> float:
    """Virtual monotonic seconds (what perf_counter reads), advancing the clock a little."""
    return PERF_BASE_S + dev.now()


def wall(dev) -> float:
    """Virtual Unix time in seconds, never the same value twice (a Unix time near 1.7e9 s
    resolves only ~0.24 µs as a float)."""
    value = dev.cfg["epoch_s"] + dev.now()
    last = getattr(dev, "_last_wall", -math.inf)
    value = value if value > last else math.nextafter(last, math.inf)
    dev._last_wall = value
    return value


def _ns(seconds: float) -> int:
    return int(round(seconds * 1e9))


def _by_id(dev, clock_id) -> float:
    return wall(dev) if clock_id == getattr(time, "CLOCK_REALTIME", 0) else mono(dev)


ANSWERS = {
    "mono": lambda dev, *_a, **_k: mono(dev),
    "mono_ns": lambda dev, *_a, **_k: _ns(mono(dev)),
    "wall": lambda dev, *_a, **_k: wall(dev),
    "wall_ns": lambda dev, *_a, **_k: _ns(dev.cfg["epoch_s"] + dev.now()),
    "id": lambda dev, clock_id, *_a: _by_id(dev, clock_id),
    "id_ns": lambda dev, clock_id, *_a: _ns(_by_id(dev, clock_id)),
}


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
    """time.sleep on the simulated machine: the host's virtual clock moves, no real time passes."""
    seconds = float(seconds)
    if seconds < 0 or math.isnan(seconds):
        raise ValueError("sleep length must be non-negative")
    dev.sleep(min(seconds, MAX_SLEEP_S))


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
               + [f"datetime.datetime.{n}" for n in DATETIME_CLOCKS] + ["datetime.date.today"])


def install(patch) -> None:
    """Replace every clock with a dispatcher; ``patch(owner, attr, sim)`` is patches._patch."""
    for name, kind in TIME_CLOCKS.items():
        if not hasattr(time, name):
            continue
        sim = _struct(name, getattr(time, name)) if kind == "struct" else ANSWERS[kind]
        patch(time, name, sim, current=source)
    patch(time, "sleep", _sleep, current=source)
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
