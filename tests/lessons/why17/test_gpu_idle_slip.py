"""Seconds the host slept or waited inside the timed region after the device ran out of work
(window.py's ``idle_s``) are one mistake, charged on sync_present alone: a number that is the
rate of the work and that idle. A number of the work alone (the idle taken off) shows no slip."""
from __future__ import annotations

import pytest

from shared.lessons.why17.gpu import RUBRIC, rubric, slips
from shared.simgpu.judging import Session

#: The seeded device's L2 and the large copy the checks ask for (bytes); seconds of the copies timed.
L2 = 50 * 2**20
LARGE = rubric.sizes({"l2_bytes": L2})[1]
WORK_S, IDLE_S = 4e-3, 2e-3


class _Session:
    """copy_bandwidth on the seeded device: four copies of LARGE bytes in WORK_S, then IDLE_S of
    host idle before the last clock reading; it returns ``rate(work seconds, window seconds)``."""

    rubric = RUBRIC
    cfgs = {"ideal": {"l2_bytes": L2}}
    x, window = Session.x, Session.window

    def __init__(self, rate):
        self.rate = rate

    def measure(self, function, setting, variant=None):
        window = {"copies": 4, "copy_bytes": 4 * LARGE, "copy_extent_bytes": LARGE, "duration_s": WORK_S + IDLE_S,
                  "idle_s": IDLE_S, "latency_share": 0.0}
        x = 2 * 4 * LARGE / self.rate(WORK_S, WORK_S + IDLE_S) / 1e9
        return x, x, {"timed": window}

    def diagnosis(self, function):
        return slips.diagnose(self, function)


def test_a_number_read_over_the_work_and_the_hosts_idle_is_charged_once_on_sync_present():
    found = slips.diagnose(_Session(lambda work, window: window), "copy_bandwidth")
    assert (found.kind, found.owner, found.moves) == ("host_idle", "sync_present", True)
    assert "2 ms (33% of it)" in found.message and "synchronize" in found.message
    assert slips.agrees(_Session(lambda work, window: window), "copy_bandwidth", found)


@pytest.mark.parametrize("rate", [lambda work, window: work, lambda work, window: window * 0.37])
def test_a_number_with_the_idle_taken_off_or_of_no_window_shows_no_idle(rate):
    found = slips.diagnose(_Session(rate), "copy_bandwidth")
    assert found is None or found.kind != "host_idle"


class _Paced(_Session):
    """copy_bandwidth timing ``iters`` copies of WORK_S / 4 each and a fixed idle that makes its
    number (0.85x the copies' own rate, a correction factor) the window's rate at iters=10 only."""

    def measure(self, function, setting, variant=None):
        iters = RUBRIC.call(self, function, variant)[1]["iters"]
        work_s, idle_s = iters * WORK_S / 4, 10 * WORK_S / 4 * (1 / 0.85 - 1)
        window = {"copies": iters, "copy_bytes": iters * LARGE, "copy_extent_bytes": LARGE,
                  "duration_s": work_s + idle_s, "idle_s": idle_s, "latency_share": 0.0}
        x = 0.85 * 2 * iters * LARGE / work_s / 1e9
        return x, x, {"timed": window}


def test_idle_that_matches_a_correction_factor_at_one_iters_only_is_no_measurement():
    """Every call counts the same: at the second iters asked the same idle is another share of
    the window, so the number is no longer the window's rate there."""
    assert RUBRIC.call(_Paced(None), "copy_bandwidth", None)[1]["iters"] == 10
    found = slips.diagnose(_Paced(None), "copy_bandwidth")
    assert found is not None and found.kind == "not_measured"
