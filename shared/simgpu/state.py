"""Which simulated device is active now, and the trace of the last active period."""
from __future__ import annotations

_current = None
_last_trace: dict = {}


def current():
    """The active SimDevice, or None when no simulation is active."""
    return _current


def set_current(device) -> None:
    global _current
    _current = device


def set_last_trace(trace: dict) -> None:
    global _last_trace
    _last_trace = trace


def last_trace() -> dict:
    return dict(_last_trace)
