"""Which simulated device is active now, and the trace of the last active period.

A simulation belongs to the thread that activated it (torch's function modes are per thread
too): other threads keep the real clocks and the real torch.cuda.
"""
from __future__ import annotations

import threading

_current = None
_owner: int | None = None
_last_trace: dict = {}


def current():
    """The active SimDevice of this thread, or None when no simulation is active here."""
    if _current is None or threading.get_ident() != _owner:
        return None
    return _current


def set_current(device) -> None:
    global _current, _owner
    _current = device
    _owner = threading.get_ident() if device is not None else None


def set_last_trace(trace: dict) -> None:
    global _last_trace
    _last_trace = trace


def last_trace() -> dict:
    return dict(_last_trace)
