"""Correct matmul benchmark in another style: torch.mm and timeit's clock."""
import timeit

import torch


def matmul_tflops(n, iters=20, dtype=torch.bfloat16, device=None):
    if isinstance(n, bool) or not isinstance(n, int) or n <= 0 or not isinstance(iters, int) or iters <= 0:
        raise ValueError("n and iters must be positive ints")
    dev = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
    a, b = (torch.rand(n, n, device=dev).to(dtype) for _ in range(2))
    torch.mm(a, b)
    if dev.type == "cuda":
        torch.cuda.synchronize()
    t0 = timeit.default_timer()
    for _ in range(iters):
        torch.mm(a, b)
    if dev.type == "cuda":
        torch.cuda.synchronize()
    return 2 * n**3 * iters / (timeit.default_timer() - t0) / 1e12


def measured_peak_tflops(device=None):
    on_gpu = torch.cuda.is_available() if device is None else torch.device(device).type == "cuda"
    return matmul_tflops(8192 if on_gpu else 512, 10 if on_gpu else 3,
                         torch.bfloat16 if on_gpu else torch.float32, device)
