"""copy_bandwidth's missing cache cliff names its cause from the small copies' own trace: a buffer
other than asked, launches that hide the cliff (the small copies' rate without their launch time
would show it), or copies that did not run from the cache."""
from __future__ import annotations

import pytest

from shared.lessons.why17.gpu import checks, rubric
from shared.simgpu.judging import Session

L2 = 50 * 2**20
SMALL, LARGE, _N = rubric.asked({"ideal": {"l2_bytes": L2}})
#: The reference's GB/s on the seeded device: the small copy (inside the L2) 3x the large one.
REFERENCE = {SMALL: 9000.0, LARGE: 3000.0}


class _Session:
    """copy_bandwidth read ``small_gbs`` at the small size, the reference's rate at the large one,
    its small copies' launch latency ``share`` of their time."""

    cfgs = {"ideal": {"l2_bytes": L2}}
    vid = "buffer_exceeds_cache.copy_bandwidth"

    def __init__(self, small_gbs: float, share: float, buffer: int = SMALL):
        self.small_gbs, self.share, self.buffer = small_gbs, share, buffer

    def measure(self, function, setting, variant=None):
        if variant == SMALL:
            trace = {"largest_alloc_bytes": self.buffer, "timed": {"latency_share": self.share}}
            return self.small_gbs, self.small_gbs, trace
        return REFERENCE[LARGE], REFERENCE[LARGE], {}

    number = Session.number

    def reference(self, function, setting, size, iters):
        return REFERENCE[size]


@pytest.mark.parametrize("share", [0.47, 0.3])
def test_launches_that_hide_the_cliff_are_named_though_under_half_the_time(share):
    # the cliff is 0.7x the reference's; without the launch time 0.7 / (1 - share): 1.0x or 1.3x
    verdict = checks._cache_cliff(_Session(9000.0 * 0.7, share))
    assert not verdict.passed
    assert "fixed cost of a launch" in verdict.message and "did not run from the cache" not in verdict.message


def test_copies_that_miss_the_cache_are_named_so_when_launches_explain_little():
    verdict = checks._cache_cliff(_Session(3100.0, 0.1))
    assert not verdict.passed and "did not run from the cache" in verdict.message


def test_a_buffer_other_than_asked_is_named_first():
    verdict = checks._cache_cliff(_Session(3100.0, 0.47, buffer=4 * SMALL))
    assert not verdict.passed and "ignores n_bytes" in verdict.message
