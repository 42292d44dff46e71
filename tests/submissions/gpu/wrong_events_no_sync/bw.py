"""MISTAKE: CUDA events read without synchronizing (PyTorch raises 'Both events must be completed')."""
import torch


def _device(device):
    return torch.device(device if device is not None else ("cuda" if torch.cuda.is_available() else "cpu"))


def copy_bandwidth(n_bytes: int, iters: int = 50, device=None) -> float:
    dev = _device(device)
    src = torch.empty(n_bytes // 4, dtype=torch.float32, device=dev)
    dst = torch.empty_like(src)
    for _ in range(3):
        dst[:] = src
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        dst[:] = src
    end.record()
    seconds = start.elapsed_time(end) / 1e3
    return 2 * n_bytes * iters / seconds / 1e9


def bandwidth_sweep(sizes_mb=(8, 32, 128, 512, 2048, 8192), iters: int = 50, device=None) -> dict:
    dev = _device(device)
    free, _total = torch.cuda.mem_get_info()
    return {mb: copy_bandwidth(mb * 2**20, iters, dev) for mb in sizes_mb if 2 * mb * 2**20 < free}


def measured_bandwidth(device=None) -> float:
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    return copy_bandwidth(max(4 * l2, 2**30), iters=20, device=device)
