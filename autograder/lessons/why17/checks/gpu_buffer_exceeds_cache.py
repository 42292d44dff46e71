"""GPU sanity check buffer_exceeds_cache: measured_bandwidth's buffer exceeds the cache; copy_bandwidth shows the cache cliff.

Runs on the simulated GPU whatever the grading device; the logic is shared.simgpu.verdicts.buffer_exceeds_cache.
"""
from __future__ import annotations

from autograder.core.registry import check
from autograder.lessons.why17.checks.gpu_common import judge


@check("buffer_exceeds_cache", task="task1", name="measured_bandwidth's buffer exceeds the cache; copy_bandwidth shows the cache cliff", files=("bw",))
def buffer_exceeds_cache(ctx) -> str:
    return judge(ctx, "buffer_exceeds_cache")
