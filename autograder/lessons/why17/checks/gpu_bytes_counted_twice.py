"""GPU sanity check bytes_counted_twice: a copy counts as read + write (2·n_bytes).

One registered check per timing function it judges (shared.lessons.why17.gpu's table); runs on the
simulated GPU whatever the grading device; the logic is shared.lessons.why17.gpu.checks.bytes_counted_twice.
"""
from __future__ import annotations

from autograder.lessons.why17.checks.gpu_common import register

register("bytes_counted_twice")
