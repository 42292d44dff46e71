"""The virtual clocks: the host's (what time.perf_counter reads) and the device's, per stream.

All are seconds since the simulation started. Launches are asynchronous: the host pays the
launch overhead and moves on; the device starts a kernel when its stream has finished the work
queued before it, the launch has arrived, and the device is free (kernels share the memory
bus, so they run one after another), and runs it for its roofline time. Streams are ordered as
CUDA orders them: each is a queue of its own, a marker (an event) on a stream completes when
that stream's earlier work has, and a stream waits for another only when told to. Waiting
(synchronize, a host read) moves the host clock up to the device's.
"""
from __future__ import annotations

#: The default stream's id.
DEFAULT_STREAM = 0


class Clock:
    """Host time, per-stream tails and the device's end, in seconds; ``read_cost_s`` per clock read."""

    def __init__(self, read_cost_s: float):
        self.host = 0.0
        self.device = 0.0                 # when everything queued on any stream ends
        self.tails: dict[int, float] = {DEFAULT_STREAM: 0.0}
        self.read_cost_s = read_cost_s
        self.reads = 0

    def read(self) -> float:
        """The host time in seconds, advanced a little so that back-to-back reads differ."""
        self.host += self.read_cost_s
        self.reads += 1
        return self.host

    def spend(self, seconds: float) -> None:
        """The host is busy for ``seconds`` (launch overhead, one-time costs)."""
        self.host += seconds

    def tail(self, stream: int = DEFAULT_STREAM) -> float:
        """When the work queued on ``stream`` so far ends."""
        return self.tails.get(stream, 0.0)

    def enqueue(self, duration_s: float, stream: int = DEFAULT_STREAM) -> tuple[float, float]:
        """Queue ``duration_s`` of device work on ``stream`` launched now; its (start, end)."""
        start = max(self.tail(stream), self.host, self.device if duration_s > 0 else 0.0)
        end = start + duration_s
        self.tails[stream] = end
        self.device = max(self.device, end)
        return start, end

    def mark(self, stream: int = DEFAULT_STREAM) -> float:
        """Queue a zero-length marker on ``stream``; when the stream reaches it, in seconds."""
        at = max(self.tail(stream), self.host)
        self.tails[stream] = at
        return at

    def stream_waits(self, stream: int, until_s: float) -> None:
        """Later work on ``stream`` starts no earlier than ``until_s`` (wait_event, wait_stream)."""
        self.tails[stream] = max(self.tail(stream), until_s)

    def wait(self, until_s: float, overhead_s: float = 0.0) -> None:
        """The host blocks until device time ``until_s``, then pays ``overhead_s``."""
        self.host = max(self.host, until_s) + overhead_s

    def idle(self, stream: int | None = None) -> bool:
        """Whether the device (or one stream) has finished everything queued, seen from the host now."""
        return (self.device if stream is None else self.tail(stream)) <= self.host
