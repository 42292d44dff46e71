"""Copy bandwidth with the device chosen once, when the module is imported."""
import time

import torch

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def _sync():
    if DEVICE.type == "cuda":
        torch.cuda.synchronize()


def copy_bandwidth(n_bytes, iters=50, device=None):
    dev = DEVICE if device is None else torch.device(device)
    src = torch.empty(n_bytes, dtype=torch.uint8, device=dev)
    dst = torch.empty_like(src)
    for _ in range(3):
        dst.copy_(src)
    _sync()
    start = time.perf_counter()
    for _ in range(iters):
        dst.copy_(src)
    _sync()
    return 2 * n_bytes * iters / (time.perf_counter() - start) / 1e9


def bandwidth_sweep(sizes_mb=(8, 32, 128, 512, 2048, 8192), iters=50, device=None):
    return {mb: copy_bandwidth(mb * 2**20, iters, device) for mb in sizes_mb}


def measured_bandwidth(device=None):
    l2 = torch.cuda.get_device_properties(0).L2_cache_size if DEVICE.type == "cuda" else 64 * 2**20
    return copy_bandwidth(4 * l2, 20, device)
