"""The timed region's spans (shared/simgpu/window.py): the spans between consecutive clock readings
that timed work, each with its rate, so that a number made of them (a total, a mean, a best) is
held between the slowest (or median) and the fastest, a reading taken later to stretch the window
adds none, and a span that ran in the cache says nothing of main memory's rate."""
from __future__ import annotations

from shared.simgpu.window import Timeline

GIB = 2**30


def _copy(timeline: Timeline, start: float, seconds: float, alloc: int = 1) -> None:
    timeline.kernel("copy", start, start + seconds, [(alloc, 0, GIB)], 0.0, 0.0)


def test_each_span_that_timed_copies_has_its_rate_and_idle_spans_have_none():
    t = Timeline()
    for at in (0.0, 1.0, 3.0, 10.0):          # a 1 s copy, a 2 s copy, then 7 s of nothing
        t.mark(at)
    _copy(t, 0.0, 1.0)
    _copy(t, 1.0, 2.0)
    summary = t.summary()
    assert summary["copy_span_rates"] == [GIB / 2.0, 0.75 * GIB, GIB / 1.0]     # slowest, median, fastest
    assert (summary["clean_copy_bytes"], summary["clean_s"]) == (2 * GIB, 3.0)
    assert summary["duration_s"] == 10.0 and summary["matmul_span_rates"] is None


def test_a_span_with_a_fill_is_no_clean_span():
    t = Timeline()
    for at in (0.0, 1.0, 2.0):
        t.mark(at)
    _copy(t, 0.0, 1.0)
    t.kernel("fill", 1.0, 1.5, [(2, 0, GIB)], 0.0, 0.0)
    _copy(t, 1.5, 0.5)
    assert t.summary()["copy_span_rates"] == [GIB / 1.0, GIB / 1.0, GIB / 1.0]


def test_copies_that_fit_in_the_l2_do_not_widen_the_spans_of_copies_from_memory():
    """A decoy span of in-cache copies (t10_f_l2_decoy_span_inflates) runs several times faster than
    main memory: with spans from memory beside it, it is left out of their rates."""
    t = Timeline(l2_bytes=GIB // 2)
    for at in (0.0, 1.0, 2.0, 2.25):
        t.mark(at)
    _copy(t, 0.0, 1.0)
    _copy(t, 1.0, 1.0)
    t.kernel("copy", 2.0, 2.25, [(1, 0, GIB // 4)], 0.0, 0.0)   # a quarter of the buffer, in the cache
    assert t.summary()["copy_span_rates"] == [GIB / 1.0, GIB / 1.0, GIB / 1.0]
    alone = Timeline(l2_bytes=GIB // 2)
    for at in (0.0, 0.25):
        alone.mark(at)
    alone.kernel("copy", 0.0, 0.25, [(1, 0, GIB // 4)], 0.0, 0.0)
    assert alone.summary()["copy_span_rates"] == [GIB, GIB, GIB]    # only cache spans: their own rates


def test_work_launched_in_the_region_is_counted_finished_or_not_and_running_at_its_end_is_said():
    """Copies launched between the readings count as launched work even when they run past the
    last one (a clock stopped before the device finished: t12_f_async_calibrated_floor); one
    launched after the last reading, or running before the first, is no part of the region."""
    t = Timeline()
    t.kernel("copy", -1.0, 0.5, [(1, 0, GIB)], 0.0, 0.0, -1.0)     # queued before the first reading
    t.mark(0.0)
    t.kernel("copy", 0.5, 1.5, [(1, 0, GIB)], 0.0, 0.0, 0.1)       # launched inside, still running at 1.0
    t.kernel("copy", 1.5, 2.5, [(1, 0, GIB)], 0.0, 0.0, 0.2)       # launched inside, queued behind it
    t.mark(1.0)
    t.kernel("copy", 2.5, 3.5, [(1, 0, GIB)], 0.0, 0.0, 1.2)       # launched after the last reading
    summary = t.summary()
    assert summary["launched"] == {"copy_bytes": 2 * GIB, "matmul_flops": 0, "running": 1}
    assert summary["copies"] == 0


def test_a_region_whose_copies_finished_inside_it_launched_just_those_and_none_still_runs():
    t = Timeline()
    t.mark(0.0)
    _copy(t, 0.1, 0.5)
    t.mark(1.0)
    assert t.summary()["launched"] == {"copy_bytes": GIB, "matmul_flops": 0, "running": 0}


def test_a_reading_taken_while_the_work_runs_splits_it_between_two_spans_instead_of_dropping_it():
    """good/t17_g_asyncio_to_thread_sync: an event loop reads its clock while the copies still run
    (launches ran ahead). Counting only the copies that fit inside a span, neither span held the
    copy each reading fell in, so the fastest span ran at 0.67x the device's rate and a number that
    was its window's rate read as a correction. Each copy now counts in each span by its share."""
    t = Timeline()
    for at in (0.0, 0.5, 2.5, 4.0):           # readings half into the first copy and the third
        t.mark(at)
    for start in (0.0, 1.0, 2.0, 3.0):        # four 1 s copies back to back, 1 GiB each
        _copy(t, start, 1.0)
    t.kernel("matmul", 0.0, 4.0, [], 8e12, 0.0)
    summary = t.summary()
    assert summary["copy_span_fastest"] == GIB / 1.0
    assert summary["matmul_span_fastest"] == 2e12
    assert summary["copy_span_rates"][-1] == GIB / 1.5          # whole copies only, as before
