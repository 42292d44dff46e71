"""Memory bandwidth measured in the same run as the decode, in GB/s (1e9 bytes/s).

Two kernels, each warmed up, timed between device synchronizations, best of several repeats (load
on the machine can only slow a repeat down, so the best is the closest to what the memory can do):

- read: a sum over a float32 buffer, counting the bytes read once. Decode is a read-mostly
  workload, so this is the bandwidth its ceiling is computed from.
- copy: ``dst.copy_(src)``, counting what crosses the bus, read + write. On a CPU a copy also
  reads the destination before writing it, so its figure comes out below the read figure.

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
#: Bytes each timed repeat moves at least (several kernels per repeat on a fast device).
BYTES_PER_REPEAT = 1e9


@dataclass(frozen=True)
class Bandwidth:
    """Measured bandwidths in GB/s and the buffer they were measured on, in bytes."""

    read_gbs: float
    copy_gbs: float
    buffer_bytes: int

    @property
    def best_gbs(self) -> float:
        """The higher of the two: the fastest the memory was seen to deliver bytes."""
        return max(self.read_gbs, self.copy_gbs)


def buffer_bytes(device: torch.device, working_set: float) -> int:
    """Bytes of the buffer to measure ``working_set`` bytes of decode traffic against."""
    main_memory = max(4 * devices.last_level_cache_bytes(device), MIN_MAIN_MEMORY_BUFFER)
    return int(min(working_set, main_memory)) // 4 * 4


def _best_gbs(fn, device, bytes_per_call: float, repeats: int) -> float:
    calls = max(1, round(BYTES_PER_REPEAT / bytes_per_call))
    for _ in range(2):
        fn()
    best = 0.0
    for _ in range(repeats):
        devices.synchronize(device)
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        devices.synchronize(device)
        best = max(best, calls * bytes_per_call / (time.perf_counter() - start) / 1e9)
    return best


def measure(device: torch.device, n_bytes: int, repeats: int = 5) -> Bandwidth:
    """Read and copy bandwidth on ``device`` over an ``n_bytes`` buffer (a float32 tensor)."""
    n = max(1, n_bytes // 4)
    src = torch.ones(n, dtype=torch.float32, device=device)
    read = _best_gbs(src.sum, device, 4 * n, repeats)
    dst = torch.empty_like(src)
    copy = _best_gbs(lambda: dst.copy_(src), device, 2 * 4 * n, repeats)
    del src, dst
    return Bandwidth(read_gbs=read, copy_gbs=copy, buffer_bytes=4 * n)
