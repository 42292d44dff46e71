"""GPU sanity check units_gb_per_s: copy_bandwidth reports GB/s (1e9 bytes/s).

Runs on the simulated GPU whatever the grading device; the logic is shared.simgpu.verdicts.units_gb_per_s.
"""
from __future__ import annotations

from autograder.core.registry import check
from autograder.lessons.why17.checks.gpu_common import judge


@check("units_gb_per_s", task="task1", name="copy_bandwidth reports GB/s (1e9 bytes/s)", files=("bw",))
def units_gb_per_s(ctx) -> str:
    return judge(ctx, "units_gb_per_s")
