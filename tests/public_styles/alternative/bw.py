"""Correct bandwidth benchmark in another style: perf_counter_ns, CUDA events on a GPU, zeros."""
import time

import torch


def _device(device):
    return torch.device(device) if device is not None else torch.device("cuda" if torch.cuda.is_available() else "cpu")


def copy_bandwidth(n_bytes, iters=50, device=None):
    for name, value in (("n_bytes", n_bytes), ("iters", iters)):
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError(f"{name} must be a positive int")
    dev = _device(device)
    a = torch.zeros(n_bytes, dtype=torch.uint8, device=dev)
    b = torch.zeros(n_bytes, dtype=torch.uint8, device=dev)
    b.copy_(a)
    b.copy_(a)
    if dev.type == "cuda":
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize(dev)
        start.record()
        for _ in range(iters):
            b.copy_(a)
        stop.record()
        stop.synchronize()
        seconds = start.elapsed_time(stop) / 1e3
    else:
        t0 = time.perf_counter_ns()
        for _ in range(iters):
            b.copy_(a)
        seconds = (time.perf_counter_ns() - t0) / 1e9
    return float(2 * n_bytes * iters / seconds / 1e9)


def bandwidth_sweep(sizes_mb=(8, 32, 128, 512, 2048, 8192), iters=50, device=None):
    sizes = list(sizes_mb)
    if any(isinstance(s, bool) or not isinstance(s, int) or s <= 0 for s in sizes):
        raise ValueError("sizes_mb must hold positive ints (MiB)")
    out = {}
    for s in sizes:
        try:
            out[s] = copy_bandwidth(s * 2**20, iters, device)
        except (RuntimeError, MemoryError):   # torch.OutOfMemoryError is a RuntimeError
            pass
    return out


def measured_bandwidth(device=None):
    return copy_bandwidth(512 * 2**20, 10, device)
