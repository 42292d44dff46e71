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
    raise NotImplementedError('task2.1: matmul_tflops')


def measured_peak_tflops(device=None) -> float:
    """The machine's matmul peak in TFLOP/s (1e12 FLOP/s), with n large enough to be compute-bound.

    Args:
        device: a torch device or its name; None means CUDA when available, else the CPU.

    Returns:
        matmul_tflops at a size whose intensity (about 2n/3 FLOPs per element moved) is far
        past the ridge point: bf16 n=8192 on a GPU, float32 n=1024 on a CPU.
    """
    raise NotImplementedError('task2.2: measured_peak_tflops')

