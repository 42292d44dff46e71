"""MISTAKE: no synchronize before starting the clock: queued warm-up work is timed."""
from time import perf_counter

import torch

WARMUP = 2


def copy_bandwidth(n_bytes, iters=50, device=None):
    device = device or torch.accelerator.current_accelerator()
    src = torch.zeros(n_bytes, dtype=torch.uint8, device=device)
    dst = torch.zeros(n_bytes, dtype=torch.uint8, device=device)
    for _ in range(WARMUP):
        dst.copy_(src)
    t0 = perf_counter()                        # the warm-up copies are still queued
    for _ in range(iters):
        dst.copy_(src)
    torch.accelerator.synchronize()
    elapsed = perf_counter() - t0
    bytes_moved = 2 * n_bytes * iters          # read + write
    return bytes_moved / elapsed / 1e9


def bandwidth_sweep(sizes_mb=(8, 32, 128, 512, 2048, 8192), iters=50, device=None):
    out = {}
    for size in sizes_mb:
        try:
            out[size] = copy_bandwidth(size * 2**20, iters, device)
        except torch.OutOfMemoryError:
            pass
    return out


def measured_bandwidth(device=None):
    cache = torch.cuda.get_device_properties(torch.cuda.current_device()).L2_cache_size
    return copy_bandwidth(8 * cache, 10, device)
