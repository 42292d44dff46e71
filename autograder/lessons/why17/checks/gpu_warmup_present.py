"""GPU sanity check warmup_present: the timing function warms up before the clock starts.

One registered check per timing function it judges (shared.simgpu.verdicts.JUDGES); runs on the
simulated GPU whatever the grading device; the logic is shared.simgpu.verdicts.warmup_present.
"""
from __future__ import annotations

from autograder.lessons.why17.checks.gpu_common import register

register("warmup_present")
