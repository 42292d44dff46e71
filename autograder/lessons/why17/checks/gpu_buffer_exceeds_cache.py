"""GPU sanity check buffer_exceeds_cache: measured_bandwidth measures main memory (a buffer >= 4x
L2, a rate memory can give); copy_bandwidth shows the cache cliff.

One registered check per timing function it judges (shared.lessons.why17.gpu's table); runs on the
simulated GPU whatever the grading device; the logic is shared.lessons.why17.gpu.checks.buffer_exceeds_cache.
"""
from __future__ import annotations

from autograder.lessons.why17.checks.gpu_common import register

register("buffer_exceeds_cache")
