"""The simulated GPU: student code written for CUDA runs unchanged on a CPU, against a device model.

Public API (the grader's child process codes against it):
    install()            put dispatchers over time.*, timeit.default_timer, torch.cuda.*,
                         torch.accelerator.* and torch.Event; idempotent; call it before student
                         modules are imported. Outside ``active()`` everything behaves as before.
    config(profile, seed=None, sync_launches=False, first_use=True, **overrides) -> dict
                         a plain JSON-able device config (fields documented in profile.py).
    active(cfg)          context manager: 'cuda' tensors live on a simulated device held in this
                         process for the block (python -m shared.simgpu, tests).
    attach(info, link)   context manager: the same, for a device held elsewhere (the grader's
                         process): ``info`` is its public description (profile.public), ``link``
                         carries the requests (frontend.PipeLink). The profile, seed, clocks and
                         trace stay with the device (device.py).
    trace() -> dict      what the current or last active period did (documented in trace.py);
                         {} inside ``attach``, where the trace is the device holder's.
    conceal()            take the simulator's modules out of sys.modules, as the grader's child
                         does before student code runs: a program on a GPU finds no module of a
                         simulator, so neither does one here (they live on in ``state``).

The model: launches are asynchronous (the host pays a few µs, the device the op's roofline time
max(bytes / bandwidth, FLOPs / peak)); a working set resident in L2 runs at L2 speed; the first
op of each kind pays a one-time cost; synchronize, events and host reads wait for the device;
buffers are meta tensors (no memory used), with OutOfMemoryError past the device's capacity.
Deterministic: the same config and the same code give the same numbers, bit for bit.
"""
from __future__ import annotations

import contextlib
import pkgutil
import sys

from shared.simgpu import state
from shared.simgpu import trace as _trace_module  # noqa: F401 (bound before def trace below)
from shared.simgpu.profile import config, gpu_keys, validate

#: Names that need torch, imported on first use: the grader imports shared.simgpu.judging (pure
#: arithmetic) without paying torch's import, which its sandboxed children pay once instead.
#: What torch.version.cuda reads while a device is active (PyTorch's current CUDA 12 wheels).
CUDA_VERSION = "12.8"
_LAZY = {"install": "patches", "installed": "patches", "uninstall": "patches",
         "SimDevice": "device", "SimMode": "mode", "PipeLink": "frontend", "cpu_time": "hostclock"}


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(state.part(_LAZY[name]), name)
    raise AttributeError(f"module 'shared.simgpu' has no attribute {name!r}")

__all__ = ["install", "installed", "uninstall", "config", "active", "attach", "trace", "gpu_keys",
           "validate", "conceal"]


@contextlib.contextmanager
def active(cfg: dict):
    """Activate a simulated device described by ``cfg`` (from ``config()``) for the block.

    Yields the SimDevice. Clocks, memory, L2 and first-use state start fresh on every entry.
    Raises ValueError naming the field when ``cfg`` is not a valid config.
    """
    cfg = validate(cfg)
    device = state.part("device").SimDevice(cfg)
    try:
        with attach(state.part("profile").public(cfg), state.part("frontend").LocalLink(device)):
            yield device
    finally:
        state.set_last_trace(device.trace())


@contextlib.contextmanager
def attach(info: dict, link):
    """'cuda' tensors live on a device reached through ``link`` for the block; yields the Frontend.

    ``info``: the device's public description (profile.public); ValueError names a bad field.
    """
    import torch

    frontend = state.part("frontend").Frontend(state.part("profile").validate_public(info), link)
    state.part("patches").install()
    previous, version = state.current(), torch.version.cuda
    state.part("driver").start()
    frontend.hold()
    state.set_current(frontend)
    torch.version.cuda = CUDA_VERSION          # a CUDA build, as on the GPU of the profile
    try:
        with state.part("mode").SimMode(), state.part("dispatch").SimDispatch():
            yield frontend
    finally:
        frontend.close()
        state.set_current(previous)
        torch.version.cuda = version


def trace() -> dict:
    """What the current active period did so far, or the last one once it ended (plain data).

    Keys: profile, seed, l2_bytes, memory_bytes, sync_launches, first_use; ops (kernels
    launched), host_s and device_s (virtual clocks, seconds), busy_s (device seconds spent in
    kernels), bytes_moved (read + written), flops, syncs, host_reads, clock_reads,
    events_recorded, first_use_kinds; allocations, largest_alloc_bytes, peak_allocated_bytes,
    allocated_bytes; largest_copy_bytes (bytes written by the largest copy) and
    largest_copy_working_set_bytes (source + destination); op_groups: one dict per kind of
    kernel seen {kind, read_bytes, write_bytes, working_set_bytes, l2, flops, seconds_each, count}
    (at most 200; groups_dropped counts kernels of further kinds); timed: what ran between the
    first and the last clock reading of the period (shared.simgpu.window.Timeline.summary).
    """
    frontend = state.current()
    if frontend is None:
        return state.last_trace()
    device = getattr(frontend.link, "device", None)
    return device.trace() if device is not None else {}


def conceal() -> None:
    """Take ``shared.simgpu`` and its modules out of sys.modules (and off the ``shared``
    package), every module imported first and kept for the simulator's own use (``state.part``).

    For a process that runs student code on the device (the grader's child), after ``install``:
    a program on a GPU finds no module of a simulator by name, so neither does one here. A
    student's own ``import shared.simgpu`` then loads a copy of its own, with no device in it.
    """
    for info in pkgutil.iter_modules(__path__):
        if info.name != "__main__":
            state.keep(info.name, state.part(info.name))
    me = sys.modules.get(__name__)
    for name in [m for m in sys.modules if m == __name__ or m.startswith(__name__ + ".")]:
        del sys.modules[name]
    parent = sys.modules.get(__name__.rpartition(".")[0])
    if parent is not None and me is not None and getattr(parent, "simgpu", None) is me:
        delattr(parent, "simgpu")
