"""GPU sanity check within_peak: measured_peak_tflops is compute-bound and never above the device's peak.

One registered check per timing function it judges (shared.lessons.why17.gpu's table); runs on the
simulated GPU whatever the grading device; the logic is shared.lessons.why17.gpu.checks.within_peak.
"""
from __future__ import annotations

from autograder.lessons.why17.checks.gpu_common import register

register("within_peak")
