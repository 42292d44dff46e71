"""The sweep's caption and labels come from its own numbers: a cliff-shaped sweep is called a cliff,
a rising or flat one never is, and where there is no cliff the caption says why from the data
(last-level cache, prefetchers, threads, a fixed cost per copy). Sweeps are drawn by hypothesis."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared import spread, sweep_reading

LAWS = settings(derandomize=True, deadline=None, database=None, max_examples=120)
MIB = 2**20
SIZES = st.lists(st.sampled_from([1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192]),
                 min_size=3, max_size=8, unique=True).map(sorted)


@st.composite
def cliff_sweeps(draw):
    """(sweep, llc_bytes): sizes that fit twice in the cache copy at ``drop`` x the memory rate."""
    sizes = draw(SIZES)
    # a cache that holds both buffers of at least the smallest size, and not of the largest
    llc_mib = draw(st.sampled_from([2 * s for s in sizes[:-1]]))
    memory = draw(st.floats(0.5, 5000))
    drop = draw(st.floats(2.0, 20))      # at least STEP (1.5) beyond the 10% noise
    noise = st.floats(0.9, 1.1)
    sweep = {s: memory * (drop if 2 * s <= llc_mib else 1) * draw(noise) for s in sizes}
    return sweep, llc_mib * MIB


@st.composite
def rising_sweeps(draw):
    """Sweeps whose GB/s only grows with size, the largest at least twice the smallest."""
    sizes = draw(SIZES)
    start = draw(st.floats(0.05, 50))
    steps = draw(st.lists(st.floats(1.0, 3.0), min_size=len(sizes) - 1, max_size=len(sizes) - 1))
    values = [start]
    for step in steps:
        values.append(values[-1] * step)
    if values[-1] < 2 * values[0]:
        values[-1] = 2 * values[0]
    return dict(zip(sizes, values))


@LAWS
@given(cliff_sweeps(), st.sampled_from(["cpu", "cuda"]), st.sampled_from([None, 1, 2, 16]))
def test_a_cliff_shaped_sweep_is_called_a_cliff_with_its_numbers(case, device_type, threads):
    sweep, llc = case
    reading = sweep_reading.read(sweep, llc_bytes=llc, device_type=device_type, threads=threads)
    assert reading.shape == "cliff"
    assert reading.caption.startswith("Your sweep shows the cache cliff")
    assert f"{llc / MIB:g} MiB last-level cache" in reading.caption
    for size, label in reading.labels.items():
        assert (label == "fits in the cache") == (2 * size * MIB <= llc)
        assert "no faster" not in label


@LAWS
@given(rising_sweeps(), st.sampled_from([None, 32 * MIB, 260 * MIB]), st.sampled_from([None, 1, 2, 8]))
def test_a_rising_sweep_is_never_called_a_cliff_and_says_why(sweep, llc, threads):
    reading = sweep_reading.read(sweep, llc_bytes=llc, device_type="cpu", threads=threads)
    assert reading.shape == "rising"
    assert "rises instead of falling" in reading.caption and "inverse of the cache cliff" in reading.caption
    assert "Below the cliff" not in reading.caption and "shows the cache cliff" not in reading.caption
    assert "prefetchers" in reading.caption
    assert (f"{threads} core" in reading.caption) == bool(threads)
    if llc:
        assert f"{llc / MIB:g} MiB last-level cache" in reading.caption
    assert all(label in ("", "fits in the cache, no faster here", "past the cache", "main memory")
               for label in reading.labels.values())
    assert "fits in the cache" not in reading.labels.values()


@LAWS
@given(SIZES, st.floats(0.5, 5000), st.lists(st.floats(0.85, 1.15), min_size=8, max_size=8))
def test_a_flat_sweep_says_no_cliff(sizes, level, noise):
    sweep = {s: level * n for s, n in zip(sizes, noise)}
    reading = sweep_reading.read(sweep, llc_bytes=32 * MIB, device_type="cpu", threads=4)
    assert reading.shape == "flat"
    assert reading.caption.startswith("Your sweep shows no cache cliff")


def test_the_issue_s_large_cache_cpu_sweep_names_every_reason_from_its_numbers():
    sweep = {1: 0.2, 4: 0.5, 16: 1.7, 64: 2.9, 256: 3.8, 1024: 10.5}
    caption = sweep_reading.read(sweep, llc_bytes=260 * MIB, device_type="cpu", threads=2).caption
    assert "0.2 GB/s at 1 MiB up to 10.5 GB/s at 1024 MiB" in caption
    assert "a 1 MiB copy took 10,486 us and a 4 MiB one 16,777 us" in caption      # 2 MiB / 0.2 GB/s
    assert "fixed cost per copy" in caption and "torch.set_num_threads(1)" in caption
    assert "4 of your 6 sizes fit in the 260 MiB last-level cache" in caption
    assert "only 3.9x the cache" in caption
    labels = sweep_reading.read(sweep, llc_bytes=260 * MIB).labels
    assert labels[256] == labels[1024] == "past the cache"        # under 4x the cache: not yet main memory
    assert sweep_reading.read(sweep, llc_bytes=32 * MIB).labels[256] == "main memory"


def test_medians_a_step_apart_but_runs_that_overlap_are_not_a_cliff():
    sweep = {4: 9.0, 1024: 5.0}
    overlapping = {4: [3.0, 9.0, 12.0], 1024: [4.0, 5.0, 10.0]}
    apart = {4: [8.0, 9.0, 10.0], 1024: [4.5, 5.0, 5.5]}
    assert sweep_reading.read(sweep, llc_bytes=32 * MIB, runs=apart).shape == "cliff"
    reading = sweep_reading.read(sweep, llc_bytes=32 * MIB, runs=overlapping)
    assert reading.shape == "flat" and "inside their run-to-run range (3-12 and 4-10 GB/s)" in reading.caption


def test_unknown_cache_and_one_size_still_read():
    reading = sweep_reading.read({"1": 4.0, "1024": 4.1}, device_type="cpu")
    assert reading.shape == "flat" and "cache size is not known" in reading.caption
    assert set(reading.labels.values()) == {""}
    assert sweep_reading.read({"8": 100.0}).shape == "one size"
    assert sweep_reading.read({"8": float("nan"), "x": 3.0, "16": 2.0}).shape == "one size"


def test_a_cliff_whose_smallest_copy_is_slow_names_the_fixed_cost_too():
    caption = sweep_reading.read({1: 0.3, 4: 14.7, 16: 2.6, 256: 4.6}, llc_bytes=32 * MIB,
                                 threads=2).caption
    assert caption.startswith("Your sweep shows the cache cliff: 14.7 GB/s at 4 MiB")
    assert "smallest copies are slow for another reason" in caption and "waking torch's 2 threads" in caption


# --- one figure with its spread ------------------------------------------------------------------

def test_a_spread_is_quoted_as_median_and_range():
    runs = spread.of([18.3, 4.7, 6.0])
    assert runs.median == 6.0 and (runs.low, runs.high) == (4.7, 18.3)
    assert runs.text(1, "tok/s") == "6.0 tok/s (4.7-18.3, 3 runs)"
    assert spread.of([2.5]).text(2) == "2.50 (1 run)"
    with pytest.raises(ValueError):
        spread.of([])


@pytest.mark.parametrize("predicted, short, long, words", [
    (0.72, [10.0, 10.2, 10.1], [7.0, 7.2, 7.1], "slower, as predicted"),
    (0.9, [10.0, 12.0, 8.0], [11.0, 9.0, 13.0], "inside the run-to-run spread (8-12 tokens/s short, 9-13 long)"),
    (0.9, [10.0, 10.2, 10.1], [12.5, 12.7, 12.6], "measured faster, the inverse"),
    # a simulated cache-heavy run: 0.46x measured against 0.78x predicted is not "as predicted"
    (0.78, [10.0, 10.2, 10.1], [4.6, 4.7, 4.65], "slower, and by more than predicted: the medians"),
    (0.5, [10.0, 10.2, 10.1], [8.0, 8.1, 8.05], "slower, but by less than predicted"),
    # a busy CPU: 0.88x against 0.74x, which the runs (0.73x to 0.92x) cannot tell apart
    (0.74, [4.19, 4.15, 4.91], [3.7, 3.6, 3.8], "which the runs' spread allows (their ratios run 0.73x to 0.92x)"),
])
def test_the_long_context_caption_follows_the_measured_runs(predicted, short, long, words):
    caption = spread.slowdown_caption(predicted, spread.of(short), spread.of(long), context=16384,
                                      kv_bytes=128 * MIB, weight_bytes=500e6, llc_bytes=260 * MIB)
    assert words in caption and f"the prediction {predicted:.2f}x" in caption
    assert ("as predicted" in caption) == ("as predicted" in words)
    if "slower" not in caption:
        assert "fits in the 260 MiB last-level cache" in caption


@pytest.mark.parametrize("llc", [None, 2 * MIB, 32 * MIB])
def test_a_fall_at_a_size_the_cache_report_misses_is_never_called_flat(llc):
    # A CPU run: 71.7 GB/s at 4 MiB against 6.4 GB/s at 256 MiB, a slow 1 MiB copy, the cache
    # unknown or reported smaller than the 4 MiB copy's 8 MiB.
    reading = sweep_reading.read({1: 5.0, 4: 71.7, 16: 8.0, 64: 6.5, 256: 6.4}, llc_bytes=llc, threads=2)
    assert reading.shape == "cliff" and "no cache cliff" not in reading.caption
    assert reading.caption.startswith("Your sweep shows the cache cliff: 71.7 GB/s at 4 MiB")
    assert ("fit in the 32 MiB last-level cache" in reading.caption) == (llc == 32 * MIB)


def test_a_size_whose_runs_straddle_the_cliff_is_named_not_hidden():
    # A 2-core CPU's sweep: 4 MiB copies ran at 0.185 and at 128-140 GB/s, 1024 MiB at 4.2.
    sweep = {1: 0.054, 4: 127.7, 16: 0.75, 64: 2.39, 256: 3.92, 1024: 4.23}
    runs = {1: [0.051, 0.054, 0.092], 4: [0.185, 127.7, 139.6], 16: [0.79, 0.70, 0.75], 64: [2.39, 2.05, 2.86],
            256: [3.92, 4.38, 2.89], 1024: [4.59, 4.23, 4.11]}
    reading = sweep_reading.read(sweep, llc_bytes=32 * MIB, threads=2, runs=runs)
    assert reading.shape != "cliff"
    assert "Your runs at 4 MiB: 0.185-140 GB/s spread too widely to read" in reading.caption
    steady = sweep_reading.read({1: 4.0, 4: 4.2, 1024: 4.1}, llc_bytes=32 * MIB, runs={1: [4.0], 4: [4.2], 1024: [4.1]})
    assert "spread too widely" not in steady.caption


@pytest.mark.parametrize("unsynced, runs, inside", [
    (19.1, [9.5, 9.8, 20.1], True),          # a busy CPU: one run fast, the copy unsynced inside the spread
    (19.1, [9.5, 9.8, 10.2], False),         # the notebook's CPU run: 1.9x apart, outside the sweep's runs
    (9.7, [9.5, 9.8, 10.2], True),
])
def test_on_a_cpu_the_unsynchronized_copy_is_the_same_work_and_a_gap_is_noise(unsynced, runs, inside):
    """A CPU copy is done when copy_ returns: the two numbers of the synchronize experiment time the same
    work, so a gap between them is the machine's noise, never the mistake, and the caption says which."""
    caption = spread.unsynced_cpu_caption(unsynced, spread.of(runs))
    assert "nothing to wait for" in caption and "the same work" in caption
    assert f"{unsynced / spread.of(runs).median:.2f}x" in caption
    assert ("inside the spread" in caption) is inside
    assert ("not the mistake" in caption) is not inside
    assert "\n" not in caption
