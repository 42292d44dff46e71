"""GPU sanity check units_gb_per_s: bandwidth in GB/s (1e9 bytes/s).

One registered check per timing function it judges (shared.lessons.why17.gpu's table); runs on the
simulated GPU whatever the grading device; the logic is shared.lessons.why17.gpu.checks.units_gb_per_s.
"""
from __future__ import annotations

from autograder.lessons.why17.checks.gpu_common import register

register("units_gb_per_s")
