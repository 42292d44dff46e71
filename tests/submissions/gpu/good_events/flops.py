"""Matmul TFLOP/s timed with CUDA events."""
import torch


def matmul_tflops(n: int, iters: int = 20, dtype=torch.bfloat16, device=None) -> float:
    dev = device if device is not None else "cuda"
    a = torch.randn(n, n, dtype=dtype, device=dev)
    b = torch.randn(n, n, dtype=dtype, device=dev)
    for _ in range(3):
        a @ b
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        a @ b
    end.record()
    torch.cuda.synchronize()
    return 2 * n**3 * iters / (start.elapsed_time(end) / 1e3) / 1e12


def measured_peak_tflops(device=None) -> float:
    return matmul_tflops(8192, device=device)
