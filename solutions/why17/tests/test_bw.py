"""Public tests of task 1 (bw.py): the copy benchmark returns GB/s, honours its arguments, and
refuses bad ones.

They run on whatever you have: CUDA when available, else the CPU, with small buffers so they
finish in seconds. Whether your number is *right* (synchronize, warm-up, bytes counted twice,
buffer larger than the cache) is checked by the grader on a simulated GPU; try it yourself with
``python -m shared.simgpu --device h100 assignments/why17/bw.py``.
Run only these:
``pytest assignments/why17/tests/test_bw.py``; every test of task1: ``pytest assignments/why17 -m task1``.
"""
import math

import bw
import pytest

pytestmark = pytest.mark.task1
#: The lesson section a failed comparison here points to (conftest.py, shared/diagnose.py);
#: a test marked ``@pytest.mark.lesson(...)`` names its own.
LESSON = 'Build It: bw.py; Break It'

#: Small buffer for quick checks, in bytes (8 MiB, the smallest size of the lesson's sweep).
SMALL_BYTES = 8 * 2**20
#: No memory system in the hardware tables comes near this, in GB/s; a value in bytes/s or MB/s would.
IMPLAUSIBLY_FAST_GBS = 100_000.0


def _is_gb_per_s(value) -> bool:
    return isinstance(value, float) and math.isfinite(value) and 0 < value < IMPLAUSIBLY_FAST_GBS


def test_copy_bandwidth_returns_gb_per_s():
    got = bw.copy_bandwidth(SMALL_BYTES, iters=3)
    assert _is_gb_per_s(got), f"expected a float in GB/s (1e9 bytes/s), got {got!r}"


def test_copy_bandwidth_accepts_a_device():
    got = bw.copy_bandwidth(SMALL_BYTES, iters=2, device="cpu")
    assert _is_gb_per_s(got), f"expected a float in GB/s on the CPU, got {got!r}"


@pytest.mark.parametrize("n_bytes", [0, -SMALL_BYTES, 1.5])
def test_copy_bandwidth_rejects_bad_sizes(n_bytes):
    with pytest.raises(ValueError):
        bw.copy_bandwidth(n_bytes, iters=2)


@pytest.mark.parametrize("iters", [0, -3])
def test_copy_bandwidth_rejects_bad_iters(iters):
    with pytest.raises(ValueError):
        bw.copy_bandwidth(SMALL_BYTES, iters=iters)


def test_sweep_maps_each_size_in_mib_to_gb_per_s():
    got = bw.bandwidth_sweep(sizes_mb=(1, 4), iters=2)
    assert isinstance(got, dict)
    assert sorted(got) == [1, 4], "the sweep's keys are the sizes you were given, in MiB"
    assert all(_is_gb_per_s(v) for v in got.values()), f"expected GB/s values, got {got!r}"


def test_sweep_leaves_out_a_size_that_does_not_fit():
    # 2**30 MiB is 1 PiB: no device has room for it, so it is left out (and nothing crashes).
    got = bw.bandwidth_sweep(sizes_mb=(1, 2**30), iters=2)
    assert sorted(got) == [1]


def test_sweep_rejects_a_bad_size():
    with pytest.raises(ValueError):
        bw.bandwidth_sweep(sizes_mb=(1, 0), iters=2)


def test_measured_bandwidth_returns_gb_per_s():
    got = bw.measured_bandwidth()
    assert _is_gb_per_s(got), f"expected a float in GB/s (1e9 bytes/s), got {got!r}"
