"""The virtual clocks: the host's (what time.perf_counter reads) and the device's.

Both are seconds since the simulation started. Launches are asynchronous: the host pays the
launch overhead and moves on; the device starts a kernel when it is free and the launch has
arrived, and runs it for its roofline time. Waiting (synchronize, a host read) moves the host
clock up to the device's.
"""
from __future__ import annotations


class Clock:
    """Host and device time in seconds; ``read_cost_s`` is added on every clock read."""

    def __init__(self, read_cost_s: float):
        self.host = 0.0
        self.device = 0.0
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

    def enqueue(self, duration_s: float) -> tuple[float, float]:
        """Queue ``duration_s`` of device work launched now; return its (start, end) in seconds."""
        start = max(self.device, self.host)
        end = start + duration_s
        self.device = end
        return start, end

    def wait(self, until_s: float, overhead_s: float = 0.0) -> None:
        """The host blocks until device time ``until_s``, then pays ``overhead_s``."""
        self.host = max(self.host, until_s) + overhead_s

    def idle(self) -> bool:
        """Whether the device has finished everything queued, as seen from the host now."""
        return self.device <= self.host
