"""Copy bandwidth with time.perf_counter_ns, torch.cuda.synchronize and a fresh clone per copy."""
import time

import torch


def copy_bandwidth(n_bytes: int, iters: int = 50, device=None) -> float:
    src = torch.ones(n_bytes // 2, dtype=torch.int16, device="cuda:0")
    for _ in range(5):
        out = src.clone()
    torch.cuda.synchronize()
    t0 = time.perf_counter_ns()
    for _ in range(iters):
        out = src.clone()
    torch.cuda.synchronize()
    t1 = time.perf_counter_ns()
    del out
    return 2 * n_bytes * iters / ((t1 - t0) * 1e-9) / 1e9


def bandwidth_sweep(sizes_mb=(8, 32, 128, 512, 2048, 8192), iters: int = 50, device=None) -> dict:
    total = torch.cuda.get_device_properties(0).total_memory
    return {s: copy_bandwidth(s << 20, iters) for s in sizes_mb if 3 * (s << 20) <= total}


def measured_bandwidth(device=None) -> float:
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    return copy_bandwidth(16 * l2)
