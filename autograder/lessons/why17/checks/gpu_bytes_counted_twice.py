"""GPU sanity check bytes_counted_twice: copy_bandwidth counts a copy as read + write (2·n_bytes).

Runs on the simulated GPU whatever the grading device; the logic is shared.simgpu.verdicts.bytes_counted_twice.
"""
from __future__ import annotations

from autograder.core.registry import check
from autograder.lessons.why17.checks.gpu_common import judge


@check("bytes_counted_twice", task="task1", name="copy_bandwidth counts a copy as read + write (2·n_bytes)", files=("bw",))
def bytes_counted_twice(ctx) -> str:
    return judge(ctx, "bytes_counted_twice")
