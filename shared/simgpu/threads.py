"""Every thread of the process sees the one simulated device, as every thread sees a GPU.

torch's function and dispatch modes are per thread; a thread started while a device is active
enters them for its life (``install`` registers ``_on_device`` with shared/thread_start.py, the
one hook on thread start-up), so timed work on a worker thread or a thread pool's worker runs on
the device and reads its clock. The modes look the device up on each call (state.current()), so
a thread that outlives a device runs as it would without one.
"""
from __future__ import annotations

import contextlib

from shared import thread_start
from shared.simgpu import state


def _on_device():
    """The device's modes for a thread starting now, or None when no device is active."""
    return None if state.current() is None else _device_modes()


@contextlib.contextmanager
def _device_modes():
    state.join()
    try:
        with state.part("mode").SimMode(), state.part("dispatch").SimDispatch():
            yield
    finally:
        state.leave()


def install() -> None:
    """Threads started from now on enter the device's modes while one is active (idempotent)."""
    thread_start.add(_on_device)


def uninstall() -> None:
    thread_start.discard(_on_device)
