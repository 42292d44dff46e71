"""CUDA events and streams on the simulated device (the student's side; the device keeps time).

``record`` queues a marker on a stream (the current one by default); the device timestamps it
when that stream reaches it, so an event measures only its own stream's work (work on another
stream counts only once the streams wait on each other). An event is complete once the host
clock has passed that time (the device runs while the host works). ``elapsed_time`` of an
incomplete event raises, as PyTorch does on a real GPU.
"""
from __future__ import annotations

import itertools

import torch

from shared.simgpu import state
from shared.simgpu.device import NOT_COMPLETED, NOT_RECORDED  # noqa: F401 (PyTorch's words, re-exported)

NO_TIMING = "Both events must be created with argument 'enable_timing=True'."


def _id(stream) -> int | None:
    """The stream id of a SimStream (None: the current stream)."""
    return getattr(stream, "stream_id", None)


class SimEvent:
    """torch.cuda.Event / torch.Event on the simulated device. Times in milliseconds."""

    def __init__(self, device, enable_timing: bool = False, blocking: bool = False,
                 interprocess: bool = False, **_ignored):
        self._device = device
        self.enable_timing = bool(enable_timing)
        self.blocking = bool(blocking)       # cudaEventBlockingSync: a wait sleeps, spending no CPU time
        self.event_id: int | None = None

    def record(self, stream=None) -> None:
        """Queue the event on ``stream`` (default: the current stream)."""
        self.event_id = self._device.record(_id(stream))

    def query(self) -> bool:
        """Whether the device has passed this event (True if never recorded, like CUDA)."""
        return self.event_id is None or self._device.event_query(self.event_id)

    def synchronize(self) -> None:
        """The host waits until the device reaches this event: spinning (CPU-time clocks move), or
        asleep for a ``blocking`` event (they stand still), as the CUDA runtime waits."""
        if self.event_id is not None:
            self._device.event_synchronize(self.event_id, idle=self.blocking)

    def wait(self, stream=None) -> None:
        """Later work on ``stream`` (default: the current one) waits for this event."""
        if self.event_id is not None:
            self._device.wait_event(_id(stream), self.event_id)

    def elapsed_time(self, end_event: "SimEvent") -> float:
        """Milliseconds between this event and ``end_event``; RuntimeError unless both completed."""
        if not (self.enable_timing and getattr(end_event, "enable_timing", False)):
            raise RuntimeError(NO_TIMING)
        if self.event_id is None or getattr(end_event, "event_id", None) is None:
            raise RuntimeError(NOT_RECORDED)
        return self._device.elapsed_ms(self.event_id, end_event.event_id)

    def __repr__(self) -> str:
        return "<torch.cuda.Event uninitialized>" if self.event_id is None else "<torch.cuda.Event>"


class SimStream:
    """A stream of the simulated device: torch.cuda.Stream(), current_stream(), default_stream().

    Each is a queue of its own (PyTorch's pooled streams are created non-blocking: they do not
    wait for the default stream); ``wait_stream`` and ``wait_event`` order them.
    """

    def __init__(self, device, stream_id: int | None = None, **_ignored):
        self._device = device
        self.stream_id = device.new_stream() if stream_id is None else stream_id
        self.device = "cuda:0"
        self._previous: list[int] = []

    def synchronize(self) -> None:
        """The host waits for the work queued on this stream."""
        self._device.synchronize(self.stream_id)

    def query(self) -> bool:
        return self._device.stream_query(self.stream_id)

    def wait_event(self, event) -> None:
        """Later work on this stream waits for ``event``."""
        if getattr(event, "event_id", None) is not None:
            self._device.wait_event(self.stream_id, event.event_id)

    def wait_stream(self, stream) -> None:
        """Later work on this stream waits for the work queued on ``stream`` so far."""
        self._device.wait_stream(self.stream_id, _id(stream))

    def record_event(self, event=None):
        event = event if event is not None else SimEvent(self._device)
        event.record(self)
        return event

    def __enter__(self):
        """``with torch.cuda.stream(s)``: ``s`` is the current stream for the block."""
        self._previous.append(self._device.stream)
        self._device.stream = self.stream_id
        return self

    def __exit__(self, *exc) -> None:
        self._device.stream = self._previous.pop() if self._previous else 0
        return None

    def __eq__(self, other) -> bool:
        return isinstance(other, SimStream) and other.stream_id == self.stream_id

    def __hash__(self) -> int:
        return hash(("SimStream", self.stream_id))

    def __repr__(self) -> str:
        return f"<torch.cuda.Stream device=cuda:0 cuda_stream={self.stream_id:#x}>"


# ------------------------------------------------ torch's own classes, where CUDA is not built
#: torch.cuda.Event and torch.cuda.Stream derive from these; on a build without CUDA they are
#: placeholders (torch._utils._dummy_type) that refuse to be made. ``install_bases`` gives them the
#: simulated device's behaviour, so events and streams are of torch's own classes (isinstance,
#: type names, repr) and torch's own methods run above them: a patch a program makes to
#: ``torch.cuda.Event.elapsed_time`` runs as it would on a GPU.
EVENT_BASE, STREAM_BASE = torch.cuda.Event.__bases__[0], torch.cuda.Stream.__bases__[0]
_HANDLES = itertools.count(1)


def placeholders() -> bool:
    """Whether torch.cuda's event and stream bases are placeholders (a build without CUDA)."""
    return EVENT_BASE.__module__ == "torch._utils" and STREAM_BASE.__module__ == "torch._utils"


def _refuse(cls):
    raise RuntimeError(f"Tried to instantiate dummy base class {cls.__name__}")


def _event_new(cls, enable_timing=False, blocking=False, interprocess=False, external=False, **_kw):
    device = state.current()
    if device is None:
        _refuse(cls)
    obj = object.__new__(cls)
    obj._sim = SimEvent(device, enable_timing=enable_timing, blocking=blocking)
    obj.cuda_event = 0x5A1C_0000_0000 + 0x40 * next(_HANDLES)
    obj.device = torch.device("cuda", 0)
    return obj


def make_stream(device, stream_id: int | None = None, cls=None):
    """A torch.cuda.Stream on the simulated device (a new stream when ``stream_id`` is None)."""
    obj = object.__new__(cls or torch.cuda.Stream)
    obj._sim = SimStream(device, stream_id)
    obj.stream_id = obj._sim.stream_id
    obj.device_index, obj.device_type, obj.priority = 0, 1, 0
    obj.device = torch.device("cuda", 0)
    obj.cuda_stream = 0 if obj.stream_id == 0 else 0x5A1D_0000_0000 + 0x40 * obj.stream_id
    return obj


def _stream_new(cls, priority=0, **_kw):
    device = state.current()
    if device is None:
        _refuse(cls)
    return make_stream(device, cls=cls)


def _sim_of(x):
    return getattr(x, "_sim", x)


EVENT_METHODS = {
    "__new__": _event_new, "__init__": lambda self, *a, **k: None,
    "record": lambda self, stream=None: self._sim.record(stream),
    "wait": lambda self, stream=None: self._sim.wait(stream),
    "query": lambda self: self._sim.query(),
    "synchronize": lambda self: self._sim.synchronize(),
    "elapsed_time": lambda self, end_event: self._sim.elapsed_time(_sim_of(end_event)),
}
STREAM_METHODS = {
    "__new__": _stream_new, "__init__": lambda self, *a, **k: None,
    "query": lambda self: self._sim.query(),
    "synchronize": lambda self: self._sim.synchronize(),
    "__eq__": lambda self, o: getattr(o, "stream_id", None) == self.stream_id,
    "__enter__": lambda self: (self._sim.__enter__(), self)[1],
    "__exit__": lambda self, *exc: self._sim.__exit__(*exc),
}


def install_bases() -> bool:
    """Give torch.cuda's placeholder bases the simulated behaviour; False where CUDA is built."""
    if not placeholders():
        return False
    for base, methods in ((EVENT_BASE, EVENT_METHODS), (STREAM_BASE, STREAM_METHODS)):
        for name, method in methods.items():
            setattr(base, name, staticmethod(method) if name == "__new__" else method)
    return True
