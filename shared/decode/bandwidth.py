"""Memory bandwidth measured in the same run as the decode, in GB/s (1e9 bytes/s).

Two kernels, each warmed up, timed between device synchronizations, best of several repeats (load
on the machine can only slow a repeat down, so the best is the closest to what the memory can do):

- read: the better of a sum over a float32 buffer and a matrix-vector product with the buffer
  as the matrix (the kernel decode spends its time in), counting the bytes read once. Decode is a
  read-mostly workload; the report shows the ceiling this figure gives beside the other.
- copy: ``dst.copy_(src)``, counting what crosses the bus, read + write. This is the ceiling's
  bandwidth (``Bandwidth.ceiling_gbs``): the lab's ``measured_bandwidth`` is a copy, so the
  benchmark and the Measure table divide by the same kind of figure. On a CPU a copy also reads
  the destination before writing it, so its figure comes out below the read figure.

During a benchmark the same buffer is also read once between decode steps (see ``Meter``).

The buffer is the step's working set when that is smaller than 4x the last-level cache, so a
decode that fits in cache is compared with cache bandwidth; otherwise 4x the cache (at least
1 GiB), which measures main memory.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import torch

from shared import devices

#: Smallest buffer used for a working set larger than 4x the last-level cache, in bytes.
MIN_MAIN_MEMORY_BUFFER = 2**30
#: Values per row when the buffer is read as a matrix by a matrix-vector product.
ROW_VALUES = 4096
#: Bytes each timed repeat moves at least (several kernels per repeat on a fast device).
BYTES_PER_REPEAT = 1e9


@dataclass(frozen=True)
class Bandwidth:
    """Measured bandwidths in GB/s and the buffer they were measured on, in bytes."""

    read_gbs: float
    copy_gbs: float
    buffer_bytes: int

    @property
    def ceiling_gbs(self) -> float:
        """The figure a ceiling is computed from: the copy's, counting read + write, the bandwidth the
        lab's ``measured_bandwidth`` reports, so the benchmark's % of ceiling is the Measure table's."""
        return self.copy_gbs

    @property
    def best_gbs(self) -> float:
        """The higher of the two: the fastest the memory was seen to deliver bytes."""
        return max(self.read_gbs, self.copy_gbs)


def buffer_bytes(device: torch.device, working_set: float) -> int:
    """Bytes of the buffer to measure ``working_set`` bytes of decode traffic against."""
    main_memory = max(4 * devices.last_level_cache_bytes(device), MIN_MAIN_MEMORY_BUFFER)
    return int(min(working_set, main_memory)) // 4 * 4


#: Untimed warm-up calls of each kernel before its timed repeats.
WARMUP_CALLS = 2
#: Kernels ``Meter.full`` times: two reads and a copy.
KERNELS = 3


def _best_gbs(fn, device, bytes_per_call: float, repeats: int, tick) -> float:
    calls = max(1, round(BYTES_PER_REPEAT / bytes_per_call))
    for _ in range(WARMUP_CALLS):
        fn()
        tick()
    best = 0.0
    for _ in range(repeats):
        best = max(best, _timed_gbs(fn, device, bytes_per_call, calls))
        tick()
    return best


def _timed_gbs(fn, device, bytes_per_call: float, calls: int = 1) -> float:
    devices.synchronize(device)
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    devices.synchronize(device)
    return calls * bytes_per_call / (time.perf_counter() - start) / 1e9


class Meter:
    """Buffers kept for a whole benchmark run, so the bandwidth can be sampled between decode steps.

    ``full()`` measures read and copy (best of repeats); ``sample()`` times one read between two
    decode steps, under whatever load the decode itself sees, so a quiet moment that speeds the
    decode up also shows in the bandwidth. ``result()`` is the best of everything measured.
    """

    def __init__(self, device: torch.device, n_bytes: int):
        cols = ROW_VALUES if n_bytes >= 4 * ROW_VALUES else 1
        n = max(1, n_bytes // (4 * cols)) * cols
        self.device, self.n_bytes = device, 4 * n
        self._src = torch.ones(n, dtype=torch.float32, device=device)
        self._dst = torch.empty_like(self._src)
        self._matrix = self._src.view(-1, cols)
        self._vector = torch.ones(cols, dtype=torch.float32, device=device)
        self.read_gbs = self.copy_gbs = 0.0

    def _reads(self):
        return (self._src.sum, lambda: torch.mv(self._matrix, self._vector))

    @staticmethod
    def full_units(repeats: int = 5) -> int:
        """How many times ``full`` calls its ``tick``: each kernel's warm-up calls and repeats."""
        return KERNELS * (WARMUP_CALLS + repeats)

    def full(self, repeats: int = 5, tick=None) -> None:
        """Best-of-``repeats`` read and copy bandwidth, folded into the running best. ``tick``
        (optional) is called after each warm-up call and each repeat (see ``full_units``)."""
        tick = tick or (lambda: None)
        for read in self._reads():
            self.read_gbs = max(self.read_gbs, _best_gbs(read, self.device, self.n_bytes, repeats, tick))
        self.copy_gbs = max(self.copy_gbs, _best_gbs(lambda: self._dst.copy_(self._src), self.device,
                                                     2 * self.n_bytes, repeats, tick))

    def sample(self) -> None:
        """One timed pass of each read kernel over the buffer, folded into the running best."""
        for read in self._reads():
            self.read_gbs = max(self.read_gbs, _timed_gbs(read, self.device, self.n_bytes))

    def result(self) -> Bandwidth:
        return Bandwidth(read_gbs=self.read_gbs, copy_gbs=self.copy_gbs, buffer_bytes=self.n_bytes)

    def close(self) -> None:
        """Free the buffers."""
        del self._src, self._dst


def measure(device: torch.device, n_bytes: int, repeats: int = 5) -> Bandwidth:
    """Read and copy bandwidth on ``device`` over an ``n_bytes`` buffer (a float32 tensor)."""
    meter = Meter(device, n_bytes)
    meter.full(repeats)
    meter.close()
    return meter.result()
