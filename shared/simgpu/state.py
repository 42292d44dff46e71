"""Which simulated device is active now, and the trace of the last active period.

One device per process, as a GPU is: every thread sees it. torch's modes are per thread, so a
thread started while a device is active (``threading.Thread``, a thread pool's workers) enters
the device's modes when it starts (``threads.py``).

The device's virtual clock is read only by the threads that run on it: the ones that activated
a device of this process and those started while one was active (until they end). Threads that
were running before (a notebook kernel's heartbeat and message threads, a server's event loop)
keep the real clocks: their polling and sleeping must neither move the device's clock nor read it.

A process forked while a device is active holds no device, as CUDA gives a forked child none:
its first use of the device raises torch's own error for that case (``Forked``), and its clocks
are the real ones.
"""
from __future__ import annotations

import importlib
import os
import threading

_current = None
#: The simulator's modules by short name, once ``shared.simgpu.conceal`` took them out of
#: sys.modules: its own code finds them here, a student's program finds none.
_parts: dict = {}
_threads: set[int] = set()
_last_trace: dict = {}


#: torch's message when a process forked after CUDA was initialized uses the device.
FORKED_MESSAGE = ("Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, "
                  "you must use the 'spawn' start method")


class Forked:
    """The device as a forked child sees it: any use raises torch's RuntimeError for a fork
    after CUDA was initialized (the grader's harness has initialized it before a call)."""

    def __getattr__(self, name):
        raise RuntimeError(FORKED_MESSAGE)


def _after_fork_in_child() -> None:
    global _current
    if _current is not None:
        _current = Forked()
    _threads.clear()


os.register_at_fork(after_in_child=_after_fork_in_child)


def current():
    """The active device of this process (a Frontend), or None when no simulation is active."""
    return _current


def current_here():
    """The active device when this thread runs on it (``join``), else None: what its clocks read."""
    return _current if threading.get_ident() in _threads else None


def set_current(device) -> None:
    """Make ``device`` the process's device (None: none), run by the calling thread. Threads
    that ran on an earlier device of this process run on this one too, as every thread reads
    one GPU's clock: a pool's worker outlives the call (and the device) it started on."""
    global _current
    if device is not None:
        _threads.add(threading.get_ident())
    _current = device


def join() -> None:
    """The calling thread runs on the active device (a thread started while it is active)."""
    _threads.add(threading.get_ident())


def leave() -> None:
    _threads.discard(threading.get_ident())


def set_last_trace(trace: dict) -> None:
    global _last_trace
    _last_trace = trace


def last_trace() -> dict:
    return dict(_last_trace)


def part(name: str):
    """The simulator's module ``shared.simgpu.<name>``, whether or not sys.modules lists it."""
    module = _parts.get(name)
    return module if module is not None else importlib.import_module(f"shared.simgpu.{name}")


def keep(name: str, module) -> None:
    """Remember ``module`` as the simulator's ``name`` for ``part``."""
    _parts[name] = module
