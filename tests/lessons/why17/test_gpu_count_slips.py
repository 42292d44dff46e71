"""A count of copies or matmuls taken from the arguments, not from the work timed, is one mistake
owned by the CPU argument check: the iters asked where another count ran (a loop off by one), or
the iters asked and a fixed number more (warm-ups counted in), which shows as the same number at
the second iters the checks ask; a correction factor, which moves with iters, stays no measurement."""
from __future__ import annotations

import pytest

from shared.lessons.why17.gpu import RUBRIC, counts, rubric
from shared.simgpu.judging import Session

#: Seconds and bytes of one timed copy on the seeded device.
COPY_S, COPY_BYTES = 1e-3, 2**30


class _Session:
    """copy_bandwidth on the seeded device, timing ``timed(iters)`` copies and reporting
    ``counted(iters)`` of them over their time."""

    rubric = RUBRIC
    cfgs = {"ideal": {"l2_bytes": 50 * 2**20}}
    x, window = Session.x, Session.window

    def __init__(self, timed, counted):
        self.timed, self.counted = timed, counted

    def measure(self, function, setting, variant=None):
        iters = RUBRIC.call(self, function, variant)[1]["iters"]
        items = self.timed(iters)
        window = {"copies": items, "copy_bytes": items * COPY_BYTES, "duration_s": items * COPY_S}
        x = 2 * self.counted(iters) * COPY_BYTES / window["duration_s"] / 1e9
        return x, x, {"timed": window}


def _owner(timed, counted):
    found = counts.count(_Session(timed, counted), "copy_bandwidth")
    return None if found is None else found.owner


def test_warm_ups_counted_in_are_the_argument_checks_to_charge_once():
    assert rubric.second_iters(_Session.cfgs) != rubric.LIMITS.iters
    assert _owner(lambda iters: iters, lambda iters: iters + 3) == "bw_honours_args"


def test_a_loop_off_by_one_stays_the_argument_checks():
    assert _owner(lambda iters: iters - 1, lambda iters: iters) == "bw_honours_args"


@pytest.mark.parametrize("factor", [1.3, 1.2, 1.5, 0.8, 1.1, 1 / 0.92, 1 / 0.9])   # 1 / 0.92: a clock scaled by 0.92
def test_a_correction_factor_that_reads_as_extra_copies_at_one_iters_is_no_count(factor):
    assert _owner(lambda iters: iters, lambda iters: factor * iters) is None


def test_an_honest_count_is_no_slip():
    assert _owner(lambda iters: iters, lambda iters: iters) is None


def test_the_rate_of_the_spans_holding_the_work_is_read_only_when_they_hold_all_of_it():
    """A window stretched by another clock's reading (0.5 s after the last copy) is read over the
    spans that hold its copies, in bytes per second and in GB/s; spans that hold only half of
    them (a copy beside a fill) leave the whole window's rate."""
    window = {"copies": 4, "copy_bytes": 4 * COPY_BYTES, "duration_s": 4 * COPY_S + 0.5,
              "clean_copy_bytes": 4 * COPY_BYTES, "clean_s": 4 * COPY_S}
    assert RUBRIC.clean("copy_bandwidth", window) == pytest.approx(COPY_BYTES / COPY_S)
    assert counts.clean_rate("copy_bandwidth", window) == pytest.approx(2 * COPY_BYTES / COPY_S / 1e9)
    half = dict(window, clean_copy_bytes=2 * COPY_BYTES, clean_s=2 * COPY_S)
    assert RUBRIC.clean("copy_bandwidth", half) == 0.0
    assert counts.clean_rate("copy_bandwidth", half) == pytest.approx(counts.timed_rate("copy_bandwidth", window))
    flops = {"matmuls": 2, "matmul_flops": 2e12, "duration_s": 2.5, "clean_matmul_flops": 2e12, "clean_matmul_s": 2.0}
    assert RUBRIC.clean("matmul_tflops", flops) == pytest.approx(1e12)
