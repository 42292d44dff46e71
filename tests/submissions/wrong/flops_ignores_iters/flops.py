# WRONG ON PURPOSE (flops_ignores_iters): matmul_tflops always times 20 matmuls
"""Task 2: matmul throughput. How fast can the chip do math?

Units: TFLOP/s = 1e12 FLOP/s; an n x n by n x n matmul does 2 * n**3 FLOPs (a multiply-add is 2).
Lesson: Build It (matmul_tflops) and The roofline (the compute roof and the ridge point).
"""
import time

import torch

from shared import devices, validate

#: Untimed matmuls before the clock starts: the first call pays library start-up.
WARMUP_ITERS = 3


def matmul_tflops(n: int, iters: int = 20, dtype=torch.bfloat16, device=None) -> float:
    """Achieved TFLOP/s (1e12 FLOP/s) of an n x n by n x n matmul, 2 * n**3 FLOPs each.

    Args:
        n: matrix side, in elements (a positive integer).
        iters: number of timed matmuls (a positive integer).
        dtype: torch dtype of both matrices.
        device: a torch device or its name; None means CUDA when available, else the CPU.

    Returns:
        TFLOP/s over the timed matmuls, after a warm-up, waiting for the device before reading
        the clock.

    Raises:
        ValueError: n or iters is not a positive integer.
    """
    ### BEGIN SOLUTION
    validate.positive_int("n", n, "elements")
    validate.positive_int("iters", iters)
    dev = devices.resolve(device)
    a = torch.randn(n, n, dtype=dtype, device=dev)
    b = torch.randn(n, n, dtype=dtype, device=dev)
    for _ in range(WARMUP_ITERS):
        a @ b
    devices.synchronize(dev)
    start = time.perf_counter()
    for _ in range(20):
        a @ b
    devices.synchronize(dev)
    seconds = time.perf_counter() - start
    return 2 * n**3 * iters / seconds / 1e12
    ### END SOLUTION


def measured_peak_tflops(device=None) -> float:
    """The machine's matmul peak in TFLOP/s (1e12 FLOP/s), with n large enough to be compute-bound.

    Args:
        device: a torch device or its name; None means CUDA when available, else the CPU.

    Returns:
        matmul_tflops at a size whose intensity (about 2n/3 FLOPs per element moved) is far
        past the ridge point: bf16 n=8192 on a GPU, float32 n=1024 on a CPU.
    """
    ### BEGIN SOLUTION
    dev = devices.resolve(device)
    if dev.type == "cuda":
        return matmul_tflops(8192, iters=20, dtype=torch.bfloat16, device=dev)
    return matmul_tflops(1024, iters=5, dtype=torch.float32, device=dev)
    ### END SOLUTION

