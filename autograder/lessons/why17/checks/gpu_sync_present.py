"""GPU sanity check sync_present: the timing function waits for the device before reading the clock.

One registered check per timing function it judges (shared.simgpu.verdicts.JUDGES); runs on the
simulated GPU whatever the grading device; the logic is shared.simgpu.verdicts.sync_present.
"""
from __future__ import annotations

from autograder.lessons.why17.checks.gpu_common import register

register("sync_present")
