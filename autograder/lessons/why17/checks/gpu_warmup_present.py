"""GPU sanity check warmup_present: copy_bandwidth warms up before timing.

Runs on the simulated GPU whatever the grading device; the logic is shared.simgpu.verdicts.warmup_present.
"""
from __future__ import annotations

from autograder.core.registry import check
from autograder.lessons.why17.checks.gpu_common import judge


@check("warmup_present", task="task1", name="copy_bandwidth warms up before timing", files=("bw",))
def warmup_present(ctx) -> str:
    return judge(ctx, "warmup_present")
