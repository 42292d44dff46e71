"""Matmul TFLOP/s with timeit.default_timer and the @ operator."""
import timeit

import torch


def matmul_tflops(n, iters=20, dtype=torch.bfloat16, device=None):
    dev = torch.device(device or "cuda")
    x = torch.randn(n, n, dtype=dtype, device=dev)
    y = torch.randn(n, n, dtype=dtype, device=dev)
    for _ in range(3):
        z = x @ y
    torch.cuda.synchronize()
    start = timeit.default_timer()
    for _ in range(iters):
        z = x @ y
    torch.cuda.synchronize()
    seconds = timeit.default_timer() - start
    flops = 2 * n**3 * iters
    return flops / seconds / 1e12


def measured_peak_tflops(device=None):
    return matmul_tflops(8192, 10, torch.bfloat16, device)
