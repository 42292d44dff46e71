# A CORRECT flops.py in another style: torch.mm, timeit.default_timer, a long warm-up, its own
# checks. It must keep full marks.
import timeit

import torch


def _count(name, value):
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive int, got {value!r}")


def matmul_tflops(n: int, iters: int = 20, dtype=torch.bfloat16, device=None) -> float:
    _count("n", n)
    _count("iters", iters)
    dev = torch.device(device) if device is not None else torch.device("cuda" if torch.cuda.is_available() else "cpu")
    x = torch.rand((n, n), dtype=dtype, device=dev)
    y = torch.rand((n, n), dtype=dtype, device=dev)
    for _ in range(30):  # a long warm-up: the grader must not count it against iters
        torch.mm(x, y)
    if dev.type == "cuda":
        torch.cuda.synchronize()
    start = timeit.default_timer()
    for _ in range(iters):
        torch.mm(x, y)
    if dev.type == "cuda":
        torch.cuda.synchronize()
    flop = 2.0 * n * n * n * iters
    return flop / (timeit.default_timer() - start) * 1e-12


def measured_peak_tflops(device=None) -> float:
    dev = torch.device(device) if device is not None else torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if dev.type == "cuda":
        return matmul_tflops(8192, 10, torch.bfloat16, dev)
    return matmul_tflops(512, 5, torch.float32, dev)
