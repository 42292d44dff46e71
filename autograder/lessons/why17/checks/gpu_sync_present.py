"""GPU sanity check sync_present: copy_bandwidth waits for the device before reading the clock.

Runs on the simulated GPU whatever the grading device; the logic is shared.simgpu.verdicts.sync_present.
"""
from __future__ import annotations

from autograder.core.registry import check
from autograder.lessons.why17.checks.gpu_common import judge


@check("sync_present", task="task1", name="copy_bandwidth waits for the device before reading the clock", files=("bw",))
def sync_present(ctx) -> str:
    return judge(ctx, "sync_present")
