"""The bandwidth measured beside the decode."""
import math

import pytest
import torch

from shared import devices
from shared.decode import bandwidth

CPU = torch.device("cpu")


@pytest.mark.slow
def test_measures_positive_finite_read_and_copy_figures():
    bw = bandwidth.measure(CPU, 8 * 2**20, repeats=2)
    assert bw.buffer_bytes == 8 * 2**20
    for gbs in (bw.read_gbs, bw.copy_gbs):
        assert math.isfinite(gbs) and gbs > 0
    assert bw.best_gbs == max(bw.read_gbs, bw.copy_gbs)


def test_buffer_is_the_working_set_when_it_fits_in_cache_else_main_memory_sized():
    llc = devices.last_level_cache_bytes(CPU)
    main = max(4 * llc, bandwidth.MIN_MAIN_MEMORY_BUFFER)
    assert bandwidth.buffer_bytes(CPU, 1000) == 1000
    assert bandwidth.buffer_bytes(CPU, 1001) == 1000  # whole float32 values
    assert bandwidth.buffer_bytes(CPU, 50 * main) == main
    assert main >= 4 * llc
