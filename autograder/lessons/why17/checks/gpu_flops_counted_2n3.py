"""GPU sanity check flops_counted_2n3: matmul_tflops counts 2·n³ FLOPs per matmul.

Runs on the simulated GPU whatever the grading device; the logic is shared.simgpu.verdicts.flops_counted_2n3.
"""
from __future__ import annotations

from autograder.core.registry import check
from autograder.lessons.why17.checks.gpu_common import judge


@check("flops_counted_2n3", task="task2", name="matmul_tflops counts 2·n³ FLOPs per matmul", files=("flops",))
def flops_counted_2n3(ctx) -> str:
    return judge(ctx, "flops_counted_2n3")
