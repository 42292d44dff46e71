# A CORRECT bw.py in another style: float32 buffers, slice assignment, perf_counter_ns imported
# at module level, its own checks. It must keep full marks.
from time import perf_counter_ns

import torch


def _count(name, value):
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive int, got {value!r}")


def _device(device):
    if device is None:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


def _wait(dev):
    if dev.type == "cuda":
        torch.cuda.synchronize()


def copy_bandwidth(n_bytes: int, iters: int = 50, device=None) -> float:
    _count("n_bytes", n_bytes)
    _count("iters", iters)
    dev = _device(device)
    n = max(n_bytes // 4, 1)
    a = torch.ones(n, dtype=torch.float32, device=dev)
    b = torch.zeros(n, dtype=torch.float32, device=dev)
    for _ in range(2):
        b[:] = a
    _wait(dev)
    t0 = perf_counter_ns()
    for _ in range(iters):
        b[:] = a
    _wait(dev)
    elapsed_s = (perf_counter_ns() - t0) / 1e9
    moved = 2 * a.element_size() * a.numel() * iters
    return moved / elapsed_s / 1e9


def bandwidth_sweep(sizes_mb=(8, 32, 128, 512, 2048, 8192), iters: int = 50, device=None) -> dict:
    _count("iters", iters)
    sizes = list(sizes_mb)
    for s in sizes:
        _count("size", s)
    dev = _device(device)
    out = {}
    for s in sizes:
        try:
            out[s] = copy_bandwidth(s * 2**20, iters, dev)
        except (torch.OutOfMemoryError, RuntimeError):
            pass
    return out


def measured_bandwidth(device=None) -> float:
    dev = _device(device)
    if dev.type == "cuda":
        l2 = torch.cuda.get_device_properties(dev).L2_cache_size
    else:
        l2 = 64 * 2**20
    return copy_bandwidth(max(4 * l2, 256 * 2**20), 10, dev)
