"""What the CUDA runtime leaves in a process once it uses a GPU: the driver's library mapped
(libcuda.so.1, where this machine has one: the grading jail presents one for the simulated card,
autograder/sandbox/driverlibs.py) with the device's primary context current on each thread that
uses the device, and the runtime's event-handler thread (``cuda-EvtHandlr``, waiting). A program
that lists its own memory map or threads after timing sees them as on a GPU machine. Once per
process; a forked child, as CUDA's, starts with neither thread nor device.

The thread is a native one (``_thread``), not a ``threading.Thread``: the CUDA runtime's threads
are not Python's, so ``threading.enumerate()`` does not list it; it waits on a lock that is
never released, off the CPU.
"""
from __future__ import annotations

import _thread
import ctypes
import os

#: The name the CUDA runtime gives its event-handler thread (at most 15 bytes, as the kernel keeps).
THREAD_NAME = b"cuda-EvtHandlr"
#: prctl's option that names the calling thread.
PR_SET_NAME = 15

_started = False
_kept: list = []
#: The driver's library where loaded, and the primary context it gave (as the CUDA runtime
#: retains it on first use and makes it current on each thread that uses the device).
_driver: list = []
_context = ctypes.c_void_p()


def make_current() -> None:
    """Make the primary context current on the calling thread, as the CUDA runtime does on a
    thread's first use of the device (shared/simgpu/dispatch.py calls it then): a thread that
    never used the device has none."""
    if _driver and _context.value:
        _driver[0].cuCtxSetCurrent(_context)


def start() -> None:
    """Map the driver's library (where found) and start the event-handler thread, once."""
    global _started
    if _started:
        return
    _started = True
    try:
        _driver.append(ctypes.CDLL("libcuda.so.1"))
    except OSError:
        pass                    # no driver library on this machine: none is mapped, as before
    else:
        _driver[0].cuInit(0)
        _driver[0].cuDevicePrimaryCtxRetain(ctypes.byref(_context), 0)
    make_current()
    never = _thread.allocate_lock()
    never.acquire()
    _kept.append(never)
    try:
        _thread.start_new_thread(_handler, (never,))
    except RuntimeError:
        pass                    # no thread left under the process's limits: the device runs without it


def _handler(never) -> None:
    try:
        ctypes.CDLL(None).prctl(PR_SET_NAME, ctypes.c_char_p(THREAD_NAME), 0, 0, 0)
    except (OSError, AttributeError):
        pass
    never.acquire()


def _after_fork_in_child() -> None:
    global _started
    _started = False
    _driver.clear()             # a forked child has no context, as CUDA's; it maps the library anew
    _context.value = None


os.register_at_fork(after_in_child=_after_fork_in_child)
