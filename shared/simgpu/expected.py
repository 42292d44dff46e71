"""What a correct measurement reads on a simulated device, computed from the model itself.

The student command (``python -m shared.simgpu``) has no reference solution to run, so it
compares the student's numbers with these. They equal what the reference solution measures on
the same config when launches block and cost nothing (the checks' "ideal" mode), to a few parts
per million (the clock reads).
"""
from __future__ import annotations

from shared.simgpu.device import dtype_name
from shared.simgpu.roofline import kernel_seconds

#: Bytes per element of the dtypes a matmul is likely to use.
ELEMENT_BYTES = {"bfloat16": 2, "float16": 2, "float32": 4, "float64": 8}


def copy_gbs(cfg: dict, n_bytes: int) -> float:
    """GB/s (1e9 bytes/s) of a warmed-up copy of ``n_bytes``, counting read + write."""
    moved = 2 * n_bytes
    l2 = moved <= cfg["l2_bytes"]
    return moved / kernel_seconds(cfg, "copy", moved, 0.0, "uint8", l2) / 1e9


def matmul_tflops(cfg: dict, n: int, dtype="bfloat16") -> float:
    """TFLOP/s (1e12 FLOP/s) of a warmed-up n x n by n x n matmul, 2 * n**3 FLOPs."""
    name = dtype_name(dtype)
    moved = 3 * n * n * ELEMENT_BYTES.get(name, 4)
    flops = 2.0 * n**3
    l2 = moved <= cfg["l2_bytes"]
    return flops / kernel_seconds(cfg, "matmul", moved, flops, name, l2) / 1e12
