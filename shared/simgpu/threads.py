"""Every thread of the process sees the one simulated device, as every thread sees a GPU.

torch's function and dispatch modes are per thread; a thread started while a device is active
enters them for its life (``install`` wraps ``threading.Thread``'s start-up), so timed work on a
worker thread or a thread pool's worker runs on the device and reads its clock. The modes look
the device up on each call (state.current()), so a thread that outlives a device runs as it would
without one.
"""
from __future__ import annotations

import threading

from shared.simgpu import state

_ORIGINAL = threading.Thread._bootstrap_inner


def _bootstrap_inner(self):
    if state.current() is None:
        return _ORIGINAL(self)
    state.join()
    try:
        with state.part("mode").SimMode(), state.part("dispatch").SimDispatch():
            return _ORIGINAL(self)
    finally:
        state.leave()


def install() -> None:
    """Threads started from now on enter the device's modes while one is active (idempotent)."""
    threading.Thread._bootstrap_inner = _bootstrap_inner


def uninstall() -> None:
    threading.Thread._bootstrap_inner = _ORIGINAL
