"""CUDA events and streams on the simulated device.

``record`` queues a marker; its timestamp is the device time when the queue reaches it. An
event is complete once the host clock has passed that time (the device runs while the host
works). ``elapsed_time`` of an incomplete event raises, as PyTorch does on a real GPU.
"""
from __future__ import annotations

#: PyTorch's message (aten/src/ATen/cuda/CUDAEvent.h) when elapsed_time comes too early.
NOT_COMPLETED = "Both events must be completed before calculating elapsed time."
NOT_RECORDED = "Both events must be recorded before calculating elapsed time."
NO_TIMING = "Both events must be created with argument 'enable_timing=True'."


class SimEvent:
    """torch.cuda.Event / torch.Event on the simulated device. Times in milliseconds."""

    def __init__(self, device, enable_timing: bool = False, blocking: bool = False,
                 interprocess: bool = False, **_ignored):
        self._device = device
        self.enable_timing = bool(enable_timing)
        self.timestamp_s: float | None = None

    def record(self, stream=None) -> None:
        """Queue the event on the (only) stream."""
        self.timestamp_s = self._device.marker()

    def query(self) -> bool:
        """Whether the device has passed this event (True if never recorded, like CUDA)."""
        return self.timestamp_s is None or self.timestamp_s <= self._device.clock.host

    def synchronize(self) -> None:
        """The host waits until the device reaches this event."""
        self._device.record.syncs += 1
        if self.timestamp_s is not None:
            self._device.clock.wait(self.timestamp_s, self._device.cfg["sync_overhead_s"])

    def wait(self, stream=None) -> None:
        """Make a stream wait for this event: one stream, so nothing to do."""

    def elapsed_time(self, end_event: "SimEvent") -> float:
        """Milliseconds between this event and ``end_event``; RuntimeError unless both completed."""
        if not (self.enable_timing and getattr(end_event, "enable_timing", False)):
            raise RuntimeError(NO_TIMING)
        if self.timestamp_s is None or end_event.timestamp_s is None:
            raise RuntimeError(NOT_RECORDED)
        if not (self.query() and end_event.query()):
            raise RuntimeError(NOT_COMPLETED)
        return (end_event.timestamp_s - self.timestamp_s) * 1e3

    def __repr__(self) -> str:
        return f"<simulated torch.cuda.Event recorded={self.timestamp_s is not None}>"


class SimStream:
    """The simulated device's single stream (torch.cuda.current_stream() and friends)."""

    def __init__(self, device):
        self._device = device
        self.device = "cuda:0"

    def synchronize(self) -> None:
        self._device.synchronize()

    def query(self) -> bool:
        return self._device.clock.idle()

    def wait_event(self, event) -> None:
        """One stream: work is already ordered."""

    def wait_stream(self, stream) -> None:
        """One stream: work is already ordered."""

    def record_event(self, event=None):
        event = event if event is not None else SimEvent(self._device)
        event.record(self)
        return event

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        return None

    def __repr__(self) -> str:
        return "<simulated torch.cuda.Stream device=cuda:0>"
