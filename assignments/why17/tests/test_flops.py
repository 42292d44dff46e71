"""Public tests of task 2 (flops.py): the matmul benchmark returns TFLOP/s, honours its arguments,
and refuses bad ones.

CUDA when available, else the CPU, with small matrices. Whether the number is right (2 n**3 FLOPs
per matmul, synchronize, warm-up) is checked by the grader on a simulated GPU; try it with
``python -m shared.simgpu --device h100 assignments/why17/flops.py``.
Run only these:
``pytest assignments/why17/tests/test_flops.py``; every test of task2: ``pytest assignments/why17 -m task2``.
"""
import math

import flops
import pytest
import torch

pytestmark = pytest.mark.task2
#: The lesson section a failed comparison here points to (conftest.py, shared/diagnose.py);
#: a test marked ``@pytest.mark.lesson(...)`` names its own.
LESSON = 'Build It: matmul_tflops'

#: Beyond any chip in the hardware tables (an H100 is about 1,000 TFLOP/s dense BF16); a value in
#: FLOP/s or GFLOP/s would land here.
IMPLAUSIBLY_FAST_TFLOPS = 100_000.0


def _is_tflops(value) -> bool:
    return isinstance(value, float) and math.isfinite(value) and 0 < value < IMPLAUSIBLY_FAST_TFLOPS


def test_matmul_tflops_returns_tflop_per_s():
    got = flops.matmul_tflops(128, iters=2)
    assert _is_tflops(got), f"expected a float in TFLOP/s (1e12 FLOP/s), got {got!r}"


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["float32", "bfloat16"])
def test_matmul_tflops_honours_dtype_and_device(dtype):
    got = flops.matmul_tflops(64, iters=2, dtype=dtype, device="cpu")
    assert _is_tflops(got), f"expected a float in TFLOP/s for {dtype} on the CPU, got {got!r}"


@pytest.mark.parametrize("n, iters", [(0, 2), (-64, 2), (64, 0), (64.5, 2)])
def test_matmul_tflops_rejects_bad_arguments(n, iters):
    with pytest.raises(ValueError):
        flops.matmul_tflops(n, iters=iters)


def test_measured_peak_tflops_returns_tflop_per_s():
    got = flops.measured_peak_tflops()
    assert _is_tflops(got), f"expected a float in TFLOP/s (1e12 FLOP/s), got {got!r}"
