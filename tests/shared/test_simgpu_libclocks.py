"""The C library's clocks read through ctypes follow the simulated device (shared/simgpu/libclocks.py).

forged/env_sync_wall_wait_libc_clock and forged/xq_libc_monotonic_agrees_sync told the simulated
device by reading clock_gettime through ctypes across a synchronize: the real clock moved
microseconds where Python's moved by the kernels' time. Each function is shown here to move by
the device's time across a kernel, however the library was loaded and declared, and to read the
real clock outside a simulation.
"""
from __future__ import annotations

import _ctypes
import ctypes
import ctypes.util
import inspect
import os
import time

import pytest
import torch

from shared import simgpu
from shared.simgpu import libclocks
from tests.helpers.simclock import H100, across_a_kernel


class Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


class Timeval(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_usec", ctypes.c_long)]


def _global():
    return ctypes.CDLL(None)


def _by_name():
    """libc by its file name, errno kept and the argument types declared, as a careful program does."""
    lib = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    lib.clock_gettime.argtypes = [ctypes.c_int, ctypes.POINTER(Timespec)]
    lib.clock_gettime.restype = ctypes.c_int
    return lib


def _gettime(lib, clock_id):
    ts = Timespec()
    assert lib.clock_gettime(clock_id, ctypes.byref(ts)) == 0
    return ts.tv_sec + ts.tv_nsec / 1e9


def _timeofday(lib):
    tv = Timeval()
    assert lib.gettimeofday(ctypes.byref(tv), None) == 0
    return tv.tv_sec + tv.tv_usec / 1e6


def _dlsym_gettime(clock_id):
    """clock_gettime at the address _ctypes.dlsym resolves in a handle of the program's own, not
    through a CDLL lookup (forged/t14_f_dlsym_libc_clock_tell)."""
    handle = _ctypes.dlopen(ctypes.util.find_library("c") or "libc.so.6")
    function = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.POINTER(Timespec))(
        _ctypes.dlsym(handle, "clock_gettime"))
    ts = Timespec()
    assert function(clock_id, ctypes.byref(ts)) == 0
    return ts.tv_sec + ts.tv_nsec / 1e9


#: Each reading in seconds, and how finely it resolves the device's time (seconds).
READINGS = {
    "clock_gettime(CLOCK_MONOTONIC), CDLL(None)": (lambda: _gettime(_global(), time.CLOCK_MONOTONIC), 1e-9),
    "clock_gettime(CLOCK_MONOTONIC), libc.so.6 declared": (lambda: _gettime(_by_name(), time.CLOCK_MONOTONIC), 1e-9),
    "clock_gettime(CLOCK_MONOTONIC), _ctypes.dlsym": (lambda: _dlsym_gettime(time.CLOCK_MONOTONIC), 1e-9),
    "clock_gettime(CLOCK_REALTIME)": (lambda: _gettime(_global(), time.CLOCK_REALTIME), 1e-9),
    "clock_gettime(CLOCK_PROCESS_CPUTIME_ID)": (lambda: _gettime(_global(), time.CLOCK_PROCESS_CPUTIME_ID), 1e-9),
    "gettimeofday": (lambda: _timeofday(_global()), 1e-6),
    "clock": (lambda: _global().clock() / libclocks.CLOCKS_PER_SEC, 1e-6),
}


def test_every_function_answered_is_read_here():
    assert {key.split("(")[0].split(",")[0] for key in READINGS} | {"time"} == set(libclocks.FUNCTIONS)


@pytest.mark.parametrize("name", READINGS)
def test_each_libc_clock_moves_by_the_devices_time_across_a_kernel(name):
    read, resolution = READINGS[name]
    moved, kernel = across_a_kernel(read)
    assert moved == pytest.approx(kernel, rel=1e-3, abs=2 * resolution)


def test_libc_and_python_read_one_clock_on_the_device():
    """A program comparing the two across a synchronize sees them agree, as on a GPU machine."""
    simgpu.install()
    with simgpu.active(H100):
        a = torch.empty(2**30, dtype=torch.uint8, device="cuda")
        b = torch.empty_like(a)
        torch.cuda.synchronize()
        python_ns, libc_s = time.monotonic_ns(), _gettime(_by_name(), time.CLOCK_MONOTONIC)
        for _ in range(20):
            b.copy_(a)
        torch.cuda.synchronize()
        python_took = (time.monotonic_ns() - python_ns) / 1e9
        libc_took = _gettime(_by_name(), time.CLOCK_MONOTONIC) - libc_s
        whole, python_wall = _global().time(None), time.time()
    assert whole <= python_wall < whole + 1 + 1e-6       # the same wall clock, in whole seconds
    assert python_took > 1e-3
    assert libc_took == pytest.approx(python_took, rel=1e-3)


def test_outside_a_simulation_they_read_the_real_clocks():
    simgpu.install()
    before = time.clock_gettime.__wrapped__(time.CLOCK_MONOTONIC)
    reading = _gettime(_by_name(), time.CLOCK_MONOTONIC)
    after = time.clock_gettime.__wrapped__(time.CLOCK_MONOTONIC)
    assert before <= reading <= after
    real_now = time.time.__wrapped__()
    assert abs(_global().time(None) - real_now) <= 1 and abs(_timeofday(_global()) - real_now) < 1


def test_an_unknown_clock_id_fails_as_the_real_one_does():
    simgpu.install()
    with simgpu.active(H100):
        assert _global().clock_gettime(123456, ctypes.byref(Timespec())) == -1


def test_other_functions_of_the_library_are_its_own():
    simgpu.install()
    with simgpu.active(H100):
        assert _global().getpid() == os.getpid()
        assert ctypes.cast(_global().getpid, ctypes.c_void_p).value == \
            ctypes.cast(libclocks.ORIGINAL_LOOKUP(_global(), "getpid"), ctypes.c_void_p).value


def test_the_lookup_wears_ctypes_own_name_and_file():
    simgpu.install()
    lookup = ctypes.CDLL.__getitem__
    assert lookup is not libclocks.ORIGINAL_LOOKUP
    assert lookup.__qualname__ == "CDLL.__getitem__"
    assert inspect.getsourcefile(lookup) == inspect.getsourcefile(ctypes.CDLL)
    # _ctypes.dlsym is a built-in: its name is kept; that it became a Python function cannot be
    # hidden (docs/simulated-gpu.md), and a program gains nothing by it
    assert _ctypes.dlsym is not libclocks.ORIGINAL_DLSYM
    assert (_ctypes.dlsym.__name__, _ctypes.dlsym.__qualname__) == ("dlsym", "dlsym")
