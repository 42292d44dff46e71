"""GPU sanity check flops_counted_2n3: matmul_tflops counts 2·n³ FLOPs and reports TFLOP/s.

One registered check per timing function it judges (shared.lessons.why17.gpu's table); runs on the
simulated GPU whatever the grading device; the logic is shared.lessons.why17.gpu.checks.flops_counted_2n3.
"""
from __future__ import annotations

from autograder.lessons.why17.checks.gpu_common import register

register("flops_counted_2n3")
