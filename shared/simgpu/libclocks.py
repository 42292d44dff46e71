"""The C library's clocks, read with ctypes, show the simulated device's time as Python's do.

A program can read the time below Python: ``ctypes.CDLL(None).clock_gettime(CLOCK_MONOTONIC,
byref(ts))``, or the same through ``CDLL("libc.so.6")``, ``gettimeofday``, ``time`` and
``clock``. On a GPU machine those readings agree with ``time.monotonic()`` across a synchronize;
answered by the real clock they would move microseconds while the simulated kernels took
milliseconds, so a program could tell the simulated device by them. While a device is active (or
a real-CPU call runs: clocks.py's ``source``), each answers from the same virtual clock as
Python's clock of that kind, in the C library's own layout (timespec: seconds and nanoseconds;
timeval: seconds and microseconds; time_t seconds; clock() in CLOCKS_PER_SEC, a million per
second on POSIX); otherwise it calls the real function.

How: ``install`` wraps ``ctypes.CDLL.__getitem__`` (``__getattr__`` and every loader go
through it), and a function looked up in any library that resolves to the C library's own
clock function comes back as a ctypes function at a callback of the same C signature, made with
the library's calling convention, so ``argtypes`` and ``restype`` set by the program still apply.
``_ctypes.dlsym``, which a program may call with a handle of its own, gives the callback's address
for those functions too. ``FUNCTIONS`` names every function answered (tests check each one). Not
answered: the C library's own callers (the interpreter's timed waits and the sandbox's deadlines
keep the real clock, so nothing is preloaded into the process), an address a program reads out of
the library's file itself, and the time read in another process (``date``).
"""
from __future__ import annotations

import _ctypes
import ctypes

from shared.simgpu import clocks

#: CLOCKS_PER_SEC of POSIX's clock(): its readings are process CPU microseconds.
CLOCKS_PER_SEC = 1_000_000
_long_p = ctypes.POINTER(ctypes.c_long)


def _real(name: str):
    """The C library's own ``name`` (an int-returning ctypes function), looked up unpatched."""
    return ORIGINAL_LOOKUP(ctypes.CDLL(None), name)


def _clock_gettime(clock_id: int, out: int) -> int:
    dev = clocks.source()
    if dev is None or not out:
        return _REAL["clock_gettime"](clock_id, ctypes.c_void_p(out))
    try:
        ns = clocks.read(dev, ("id", clock_id), ns=True)
    except (OSError, ValueError, OverflowError):       # an id this kernel does not have: its own error
        return _REAL["clock_gettime"](clock_id, ctypes.c_void_p(out))
    fields = ctypes.cast(out, _long_p)
    fields[0], fields[1] = divmod(ns, 10**9)
    return 0


def _gettimeofday(out: int, zone: int) -> int:
    dev = clocks.source()
    if dev is None or not out:
        return _REAL["gettimeofday"](ctypes.c_void_p(out), ctypes.c_void_p(zone))
    fields = ctypes.cast(out, _long_p)
    fields[0], fields[1] = divmod(clocks.read(dev, "wall", ns=True) // 1000, 10**6)
    return 0


def _time(out: int) -> int:
    dev = clocks.source()
    if dev is None:
        return _REAL["time"](ctypes.c_void_p(out))
    seconds = clocks.read(dev, "wall", ns=True) // 10**9
    if out:
        ctypes.cast(out, _long_p)[0] = seconds
    return seconds


def _clock() -> int:
    dev = clocks.source()
    if dev is None:
        return _REAL["clock"]()
    return clocks.read(dev, "process", ns=True) * CLOCKS_PER_SEC // 10**9


#: Each function answered: its C signature (result, arguments) and its answer.
FUNCTIONS = {
    "clock_gettime": ((ctypes.c_int, ctypes.c_int, ctypes.c_void_p), _clock_gettime),
    "gettimeofday": ((ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p), _gettimeofday),
    "time": ((ctypes.c_long, ctypes.c_void_p), _time),
    "clock": ((ctypes.c_long,), _clock),
}
#: ctypes' own lookup of a library's function by name or ordinal, and the C library's dlsym.
ORIGINAL_LOOKUP, ORIGINAL_DLSYM = ctypes.CDLL.__getitem__, _ctypes.dlsym
_REAL: dict = {}
_CALLBACKS: dict = {}          # name -> the ctypes callback (kept alive) at whose address it is answered
_ADDRESSES: dict = {}          # the C library's own address of each function -> its name


def _address(function) -> int:
    return ctypes.cast(function, ctypes.c_void_p).value or 0


def lookup(self, name_or_ordinal):
    """CDLL's lookup; the C library's clock functions come back answered by the virtual clock.
    It wears the original's name and code location (patches.py's ``_disguise``), as every
    function the simulator replaces does."""
    function = ORIGINAL_LOOKUP(self, name_or_ordinal)
    name = _ADDRESSES.get(_address(function))
    if name is None:
        return function
    answered = self._FuncPtr(_address(_CALLBACKS[name]))
    answered.__name__ = function.__name__
    return answered


def dlsym(handle, name):
    """_ctypes.dlsym: the address of ``name`` in the library ``handle``; of the callback that answers
    it from the virtual clock for the C library's clock functions."""
    address = ORIGINAL_DLSYM(handle, name)
    answered = _ADDRESSES.get(address)
    return address if answered is None else _address(_CALLBACKS[answered])


def install() -> None:
    """Answer the C library's clocks from the virtual clock while a device is active (idempotent)."""
    if ctypes.CDLL.__getitem__ is lookup:
        return
    for name, (signature, answer) in FUNCTIONS.items():
        real = _real(name)
        real.restype, real.argtypes = signature[0], list(signature[1:])
        _REAL[name] = real
        _CALLBACKS[name] = ctypes.CFUNCTYPE(*signature)(answer)
        _ADDRESSES[_address(real)] = name
    for mine, original in ((lookup, ORIGINAL_LOOKUP), (dlsym, ORIGINAL_DLSYM)):
        mine.__name__, mine.__qualname__, mine.__doc__ = original.__name__, original.__qualname__, original.__doc__
    ctypes.CDLL.__getitem__, _ctypes.dlsym = lookup, dlsym


def uninstall() -> None:
    """Look functions up as before."""
    ctypes.CDLL.__getitem__, _ctypes.dlsym = ORIGINAL_LOOKUP, ORIGINAL_DLSYM
