"""GPU sanity check sync_present: the timing function waits for the device before reading the clock.

One registered check per timing function it judges (shared.lessons.why17.gpu's table); runs on the
simulated GPU whatever the grading device; the logic is shared.lessons.why17.gpu.checks.sync_present.
"""
from __future__ import annotations

from autograder.lessons.why17.checks.gpu_common import register

register("sync_present")
