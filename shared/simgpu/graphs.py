"""CUDA graphs on the simulated device: capture records the kernels, replay runs them.

While a graph captures (``torch.cuda.graph(g)``, ``g.capture_begin()``), kernels launched on the
device are recorded into it, not run, as CUDA does; ``g.replay()`` queues the recorded kernels on
the current stream, where they cost what they cost when launched one by one. On a build without
CUDA, torch.cuda.CUDAGraph's base is a placeholder: ``install`` gives it this behaviour, so the
graph is of torch's own class and torch's own methods run above it.
"""
from __future__ import annotations

import torch

from shared.simgpu import state

BASE = torch.cuda.CUDAGraph.__bases__[0]


def _device(cls):
    device = state.current()
    if device is None:
        raise RuntimeError(f"Tried to instantiate dummy base class {cls.__name__}")
    return device


def _new(cls, keep_graph=False, *_args, **_kwargs):
    _device(cls)
    obj = object.__new__(cls)
    obj._kernels = []
    return obj


def _capture_begin(self, pool=None, capture_error_mode="global", **_kwargs):
    device = _device(type(self))
    self._kernels = []
    device.capture = self._kernels


def _capture_end(self):
    _device(type(self)).capture = None


def _replay(self):
    device = _device(type(self))
    for message in self._kernels:
        device.post(dict(message, stream=device.stream))


METHODS = {
    "__new__": staticmethod(_new), "__init__": lambda self, *a, **k: None,
    "capture_begin": _capture_begin, "capture_end": _capture_end, "replay": _replay,
    "instantiate": lambda self: None, "reset": lambda self: setattr(self, "_kernels", []),
    "pool": lambda self: (0, 0), "enable_debug_mode": lambda self: None,
    "debug_dump": lambda self, path: None,
}


def capturing(device, *_args, **_kwargs) -> bool:
    """torch.cuda.is_current_stream_capturing on the simulated device."""
    return device.capture is not None


def install() -> bool:
    """Give torch.cuda.CUDAGraph's placeholder base the simulated behaviour; False where CUDA is built."""
    if BASE.__module__ != "torch._utils":
        return False
    for name, method in METHODS.items():
        setattr(BASE, name, method)
    return True
