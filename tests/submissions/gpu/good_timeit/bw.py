"""Copy bandwidth with timeit.default_timer, float16 buffers moved with .to(device)."""
import timeit

import torch

DEVICE = torch.device("cuda")


def copy_bandwidth(n_bytes, iters=50, device=None):
    device = torch.device(device) if device is not None else DEVICE
    src = torch.zeros(n_bytes // 2, dtype=torch.float16).to(device)
    dst = torch.empty(n_bytes // 2, dtype=torch.float16, device=device)
    dst[:] = src
    dst[:] = src
    torch.cuda.synchronize(device)
    start = timeit.default_timer()
    for _ in range(iters):
        dst[:] = src
    torch.cuda.synchronize(device)
    stop = timeit.default_timer()
    return (2 * n_bytes * iters) / (stop - start) / 1e9


def bandwidth_sweep(sizes_mb=(8, 32, 128, 512, 2048, 8192), iters=50, device=None):
    result = {}
    for mb in sizes_mb:
        free, _ = torch.cuda.mem_get_info()
        if 2 * mb * 2**20 <= free:
            result[mb] = copy_bandwidth(mb * 2**20, iters, device)
    return result


def measured_bandwidth(device=None):
    props = torch.cuda.get_device_properties(0)
    n = 4 * props.L2_cache_size
    n = max(n, 512 * 2**20)
    return copy_bandwidth(n, 20, device)
