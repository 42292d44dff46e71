"""Matmul TFLOP/s with perf_counter_ns and a preallocated output."""
import time

import torch


def matmul_tflops(n: int, iters: int = 20, dtype=torch.bfloat16, device=None) -> float:
    a = torch.rand(n, n, dtype=dtype, device="cuda")
    b = torch.rand(n, n, dtype=dtype, device="cuda")
    c = torch.empty(n, n, dtype=dtype, device="cuda")
    for _ in range(2):
        torch.matmul(a, b, out=c)
    torch.cuda.synchronize()
    t0 = time.perf_counter_ns()
    for _ in range(iters):
        torch.matmul(a, b, out=c)
    torch.cuda.synchronize()
    ns = time.perf_counter_ns() - t0
    return 2.0 * n * n * n * iters / (ns / 1e9) / 1e12


def measured_peak_tflops(device=None) -> float:
    return matmul_tflops(8192)
