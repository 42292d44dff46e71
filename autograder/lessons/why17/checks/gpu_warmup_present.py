"""GPU sanity check warmup_present: the timing function warms up before the clock starts.

One registered check per timing function it judges (shared.lessons.why17.gpu's table); runs on the
simulated GPU whatever the grading device; the logic is shared.lessons.why17.gpu.checks.warmup_present.
"""
from __future__ import annotations

from autograder.lessons.why17.checks.gpu_common import register

register("warmup_present")
