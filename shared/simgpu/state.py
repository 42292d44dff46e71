"""Which simulated device is active now, and the trace of the last active period.

One device per process, as a GPU is: every thread sees it. torch's modes are per thread, so a
thread started while a device is active (``threading.Thread``, a thread pool's workers) enters
the device's modes when it starts (``threads.py``).
"""
from __future__ import annotations

_current = None
_last_trace: dict = {}


def current():
    """The active device of this process (a Frontend), or None when no simulation is active."""
    return _current


def set_current(device) -> None:
    global _current
    _current = device


def set_last_trace(trace: dict) -> None:
    global _last_trace
    _last_trace = trace


def last_trace() -> dict:
    return dict(_last_trace)
