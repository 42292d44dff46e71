# WRONG ON PURPOSE (bw_returns_tensor): copy_bandwidth returns a 0-dim tensor instead of a float
"""Task 1: memory bandwidth. How wide is the pipe between memory and the chip?

Units: GB/s = 1e9 bytes/s; sweep sizes in MiB (``size_mb * 2**20`` bytes), as in the lesson.
Lesson: Build It (bw.py) and Break It (tiny buffers, forget to synchronize, count bytes once).
"""
import time

import torch

from shared import devices, validate

#: Untimed copies before the clock starts: the first call pays one-time costs.
WARMUP_ITERS = 3
#: measured_bandwidth uses a buffer at least this many times the last-level cache (STREAM's rule).
CACHE_MULTIPLE = 4
#: Smallest buffer measured_bandwidth uses, in bytes.
MIN_MEASURE_BYTES = 256 * 2**20


def copy_bandwidth(n_bytes: int, iters: int = 50, device=None) -> float:
    """Achieved bandwidth of a device-to-device copy, in GB/s (1e9 bytes/s).

    Args:
        n_bytes: size of the buffer copied, in bytes (a positive integer).
        iters: number of timed copies (a positive integer).
        device: a torch device or its name; None means CUDA when available, else the CPU.

    Returns:
        GB/s counting what crosses the memory bus: each copy reads n_bytes and writes n_bytes.
        Warms up first and waits for the device before reading the clock.

    Raises:
        ValueError: n_bytes or iters is not a positive integer.
    """
    ### BEGIN SOLUTION
    validate.positive_int("n_bytes", n_bytes, "bytes")
    validate.positive_int("iters", iters)
    dev = devices.resolve(device)
    src = torch.empty(n_bytes, dtype=torch.uint8, device=dev)
    dst = torch.empty_like(src)
    for _ in range(WARMUP_ITERS):
        dst.copy_(src)
    devices.synchronize(dev)
    start = time.perf_counter()
    for _ in range(iters):
        dst.copy_(src)
    devices.synchronize(dev)
    seconds = time.perf_counter() - start
    return torch.tensor(2 * n_bytes * iters / seconds / 1e9)
    ### END SOLUTION


def bandwidth_sweep(sizes_mb=(8, 32, 128, 512, 2048, 8192), iters: int = 50, device=None) -> dict:
    """Copy bandwidth at each buffer size: MiB -> GB/s (1e9 bytes/s).

    Args:
        sizes_mb: buffer sizes in MiB (``size_mb * 2**20`` bytes), each a positive integer.
        iters: number of timed copies per size (a positive integer).
        device: a torch device or its name; None means CUDA when available, else the CPU.

    Returns:
        A dict from size in MiB to GB/s; sizes whose two buffers do not fit in the device's
        memory are left out.

    Raises:
        ValueError: a size or iters is not a positive integer.
    """
    ### BEGIN SOLUTION
    validate.positive_int("iters", iters)
    for size_mb in sizes_mb:
        validate.positive_int("sizes_mb entry", size_mb, "MiB")
    dev = devices.resolve(device)
    results = {}
    for size_mb in sizes_mb:
        n_bytes = size_mb * 2**20
        if 2 * n_bytes > devices.free_bytes(dev):
            continue
        try:
            results[size_mb] = copy_bandwidth(n_bytes, iters=iters, device=dev)
        except torch.OutOfMemoryError:
            continue
    return results
    ### END SOLUTION


def measured_bandwidth(device=None) -> float:
    """The machine's main-memory bandwidth in GB/s (1e9 bytes/s): the number ceilings use.

    Args:
        device: a torch device or its name; None means CUDA when available, else the CPU.

    Returns:
        Copy bandwidth of a buffer at least 4x the last-level cache (the L2 on a GPU), so the
        copy streams from main memory rather than from the cache.
    """
    ### BEGIN SOLUTION
    dev = devices.resolve(device)
    n_bytes = max(CACHE_MULTIPLE * devices.last_level_cache_bytes(dev), MIN_MEASURE_BYTES)
    return copy_bandwidth(n_bytes, iters=20, device=dev)
    ### END SOLUTION

