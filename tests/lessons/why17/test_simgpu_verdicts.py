"""The verdicts' arithmetic: ratios explained by byte/FLOP counts and units, without ambiguity,
and the analytic model the student command compares with matches the reference's measurement."""
from __future__ import annotations

import importlib.util
import itertools
import math
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autograder.lessons.why17.checks.gpu import VERDICTS
from autograder.lessons.why17.fixtures import build
from shared import simgpu
from shared.lessons.why17.gpu import RUBRIC, factors, model_reference, rubric
from shared.simgpu import expected, ratios
from shared.simgpu import settings as simsettings
from tests.helpers import reference

simgpu.install()


bw = reference.load("bw")
flops = reference.load("flops")


@pytest.mark.parametrize("counts,units", [(factors.BYTE_FACTORS, factors.GBS_UNITS),
                                          (factors.FLOP_FACTORS, factors.TFLOPS_UNITS)])
def test_no_two_explanations_are_within_twice_the_tolerance(counts, units):
    products = sorted(c * u for c, u in itertools.product(counts, units))
    gaps = [math.log(b / a) for a, b in zip(products, products[1:], strict=False)]
    assert min(gaps) > 2 * math.log(ratios.RATIO_TOLERANCE)


@pytest.mark.parametrize("ratio,explained", [
    (0.5, (0.5, 1.0)), (1.0, (1.0, 1.0)), (1.01, (1.0, 1.0)), (1e9, (1.0, 1e9)),
    (0.5e3, (0.5, 1e3)), (1e9 / 2**30, (1.0, 1e9 / 2**30)), (0.7, None), (1.05, None)])
def test_ratios_are_explained_or_not(ratio, explained):
    assert ratios.explain(ratio, factors.BYTE_FACTORS, factors.GBS_UNITS) == explained


def test_numbers_the_checks_accept():
    import numpy as np
    import torch

    from autograder.runtime.runner import Array
    ok = [2.5, 3, np.float32(2.5), torch.tensor(2.5), Array("torch.Tensor", "float32", [2.5])]
    assert all(ratios.number(v) == pytest.approx(2.5) or v == 3 for v in ok)
    bad = [None, True, "2.5", float("nan"), -1.0, 0.0, float("inf"), [2.5], Array("numpy", "f8", [1.0, 2.0])]
    assert [ratios.number(v) for v in bad] == [None] * len(bad)


def test_ratio_formatting():
    assert [ratios.fmt_ratio(r) for r in (0.5, 1.004, 232.4, 1e9, 0.001)] == \
        ["0.50x", "1.00x", "232x", "1e+09x", "0.001x"]


def test_check_sizes_bracket_the_cache():
    for seed in range(10):
        cfg = simsettings.ideal("h100", seed)
        small, large = rubric.sizes(cfg)
        assert 2 * small <= cfg["l2_bytes"] / 2 and large >= 8 * cfg["l2_bytes"]
        assert small % 2**20 == 0 and large % 2**20 == 0


@settings(max_examples=25, deadline=None, derandomize=True)
@given(profile=st.sampled_from(simgpu.gpu_keys()), seed=st.integers(0, 2**31),
       mib=st.integers(8, 2048))        # the checks copy at least L2/8; clock reads cost 1 ns
def test_reference_copy_on_the_ideal_device_reads_what_the_model_says(profile, seed, mib):
    cfg = simsettings.ideal(profile, seed)
    with simgpu.active(cfg):
        measured = bw.copy_bandwidth(mib * 2**20, iters=5)
    # each kernel's time jitters within 1 +/- kernel_jitter, so their mean does too
    assert measured == pytest.approx(expected.copy_gbs(cfg, mib * 2**20), rel=cfg["kernel_jitter"] + 1e-3)


@settings(max_examples=10, deadline=None, derandomize=True)
@given(profile=st.sampled_from([k for k in simgpu.gpu_keys() if k != "t4"]),
       n=st.sampled_from([256, 1024, 4096, 8192]))
def test_reference_matmul_on_the_ideal_device_reads_what_the_model_says(profile, n):
    cfg = simsettings.ideal(profile, None)
    with simgpu.active(cfg):
        measured = flops.matmul_tflops(n, iters=3)
    tolerance = cfg["kernel_jitter"] + 1e-3     # each kernel's time jitters within 1 +/- kernel_jitter
    assert measured == pytest.approx(expected.matmul_tflops(cfg, n), rel=tolerance)
    if n == 8192:                            # compute-bound: the matmul efficiency of the peak
        assert measured == pytest.approx(cfg["peak_tflops"] * cfg["matmul_efficiency"], rel=tolerance)


@settings(max_examples=10, deadline=None, derandomize=True)
@given(seed=st.integers(0, 1000), mib=st.sampled_from([512, 2048]))
def test_doubling_the_bandwidth_doubles_the_measured_copy(seed, mib):
    cfg = simgpu.config("h200", seed, sync_launches=True, launch_overhead_s=0.0, alloc_s=0.0,
                        sync_overhead_s=0.0, first_use=False)
    fast = dict(cfg, bw_gbs=2 * cfg["bw_gbs"])
    values = []
    for c in (cfg, fast):
        with simgpu.active(c):
            values.append(bw.copy_bandwidth(mib * 2**20, iters=3))
    assert values[1] / values[0] == pytest.approx(2.0, rel=1e-3)


class _HardCoded:
    """A bw.py whose copy_bandwidth returns a fixed number and never touches the device."""

    @staticmethod
    def copy_bandwidth(n_bytes, iters=50, device=None):
        return 2500.0


def _fixture(folder: str, name: str):
    """A gpu/ fixture module, built (a mistake.yml applied to its base) and imported on the
    simulated device, as the grader's child does."""
    with tempfile.TemporaryDirectory(prefix="verdicts-fixture-") as tmp:
        path = build.gpu_submission(folder, Path(tmp)) / f"{name}.py"
        spec = importlib.util.spec_from_file_location(f"verdicts_{folder}_{name}", path)
        module = importlib.util.module_from_spec(spec)
        with simgpu.active(simgpu.config()):
            spec.loader.exec_module(module)
    return module


def _l2():
    import torch
    return torch.cuda.get_device_properties(0).L2_cache_size


#: A check judged on a function that calls another, and a module whose function makes the
#: mistake on its own (the other function right): the check fails, and no other one.
ON_THEIR_OWN = {
    "sync_present.measured_bandwidth": ("bw", "measured_bandwidth",
                                        lambda: _fixture("wrong_no_sync", "bw").copy_bandwidth, "copy"),
    "warmup_present.measured_bandwidth": ("bw", "measured_bandwidth",
                                          lambda: _fixture("wrong_no_warmup", "bw").copy_bandwidth, "copy"),
    "warmup_present.bandwidth_sweep": ("bw", "bandwidth_sweep",
                                       lambda: _fixture("wrong_no_warmup", "bw").copy_bandwidth, "sweep"),
    "bytes_counted_twice.bandwidth_sweep": ("bw", "bandwidth_sweep",
                                            lambda: _fixture("wrong_bytes_once", "bw").copy_bandwidth, "sweep"),
    "units_gb_per_s.bandwidth_sweep": ("bw", "bandwidth_sweep",
                                       lambda: _fixture("wrong_units_mb", "bw").copy_bandwidth, "sweep"),
    "sync_present.measured_peak_tflops": ("flops", "measured_peak_tflops",
                                          lambda: _fixture("wrong_flops_no_sync", "flops").matmul_tflops, "peak"),
    "warmup_present.measured_peak_tflops": ("flops", "measured_peak_tflops",
                                            lambda: _fixture("wrong_flops_no_warmup", "flops").matmul_tflops, "peak"),
}


@pytest.mark.parametrize("vid", sorted(ON_THEIR_OWN))
def test_a_mistake_in_a_calling_function_alone_fails_its_own_check(vid):
    import types

    from shared.simgpu.local import LocalRunner
    module, function, broken, shape = ON_THEIR_OWN[vid]
    good = _fixture("good_events", module)
    fake = types.SimpleNamespace(**{k: getattr(good, k) for k in dir(good) if not k.startswith("_")})
    wrong = broken()
    setattr(fake, function, {
        "copy": lambda device=None: wrong(4 * _l2(), 20),
        "sweep": lambda sizes_mb=(8,), iters=50, device=None: {mb: wrong(mb * 2**20, iters) for mb in sizes_mb},
        "peak": lambda device=None: wrong(8192, iters=20),
    }[shape])
    modules = {"bw": _fixture("good_events", "bw"), "flops": _fixture("good_events", "flops"), module: fake}
    run = LocalRunner(modules, model_reference)
    failed = {v for v, judge in VERDICTS.items() if not judge(run, "h100-sxm", 7).passed}
    assert failed == {vid}


@pytest.mark.parametrize("check", [vid for vid, (_c, f) in RUBRIC.ids().items() if f == "copy_bandwidth"])
def test_a_number_that_does_not_follow_the_device_fails_every_check(check):
    from shared.simgpu.local import LocalRunner
    hard = VERDICTS[check](LocalRunner({"bw": _HardCoded}, model_reference), "h100-sxm", 7)
    assert not hard.passed and ("does not follow the device" in hard.message       # the probe's gate
                                or "not a measurement of the work it timed" in hard.message)
    honest = VERDICTS[check](LocalRunner({"bw": bw}, model_reference), "h100-sxm", 7)
    assert honest.passed, honest.message
