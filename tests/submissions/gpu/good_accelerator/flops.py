"""Matmul TFLOP/s with torch.mm and torch.accelerator.synchronize."""
from time import perf_counter

import torch


def matmul_tflops(n, iters=20, dtype=torch.bfloat16, device=None):
    device = device or torch.accelerator.current_accelerator()
    a = torch.randn(n, n, device=device).to(dtype)
    b = torch.randn(n, n, device=device).to(dtype)
    torch.mm(a, b)
    torch.accelerator.synchronize()
    t0 = perf_counter()
    for _ in range(iters):
        torch.mm(a, b)
    torch.accelerator.synchronize()
    return 2 * n ** 3 * iters / (perf_counter() - t0) / 1e12


def measured_peak_tflops(device=None):
    return matmul_tflops(8192, 10, device=device)
