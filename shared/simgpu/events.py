"""CUDA events and streams on the simulated device (the student's side; the device keeps time).

``record`` queues a marker on a stream (the current one by default); the device timestamps it
when that stream reaches it, so an event measures only its own stream's work (work on another
stream counts only once the streams wait on each other). An event is complete once the host
clock has passed that time (the device runs while the host works). ``elapsed_time`` of an
incomplete event raises, as PyTorch does on a real GPU.
"""
from __future__ import annotations

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
        self.event_id: int | None = None

    def record(self, stream=None) -> None:
        """Queue the event on ``stream`` (default: the current stream)."""
        self.event_id = self._device.record(_id(stream))

    def query(self) -> bool:
        """Whether the device has passed this event (True if never recorded, like CUDA)."""
        return self.event_id is None or self._device.event_query(self.event_id)

    def synchronize(self) -> None:
        """The host waits until the device reaches this event."""
        if self.event_id is not None:
            self._device.event_synchronize(self.event_id)

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
        return f"<simulated torch.cuda.Event recorded={self.event_id is not None}>"


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
        return f"<simulated torch.cuda.Stream device=cuda:0 id={self.stream_id}>"
